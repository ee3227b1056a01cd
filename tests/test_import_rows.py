"""Imports keep the good rows: every reader reads row by row, an odd row is named (its line or index and what
is wrong) and skipped, and what was imported can be listed and exported in every format. Each reader is
fuzzed with hypothesis: wrong types, dates out of range and near its ends with offsets, lone surrogates,
huge values, zero intervals. The oracle: one known-good row among them must always come in whole.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from helpers import TODAY, clean_env, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.dates import DateError
from planner.repeats import parse_repeat
from planner.storage import exchange
from planner.storage.db import Store
from planner.tools import ToolContext
from planner.ui.views import tasks_text

GOOD = "the good row"
FUZZ = settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

ODD_TIMES = st.sampled_from(
    [
        "0001-01-01T00:00:00+05:00",
        "0001-01-01T00:00:00-05:00",
        "9999-12-31T23:59:59-05:00",
        "9999-12-31T23:59:59+14:00",
        "00010101T000000Z",
        "99991231T235959Z",
        "2026-02-30",
        "2026-12-01T25:00",
        "",
        "tomorrow",
        "2026-12-01T10:00:00",
        "20261201T100000Z",
    ]
)
ANY_TEXT = st.text(st.characters(), max_size=30)  # lone surrogates included
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | ANY_TEXT
    | ODD_TIMES
)
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3), max_leaves=8
)


def survives(fmt: str, text: str, rows: int) -> dict:
    """Import `text` into a fresh database; every row is imported or named; the good one is in; everything
    imported lists and exports in every format. Returns the import's result."""
    with tempfile.TemporaryDirectory() as d:
        store = Store(Path(d) / "p.db")
        try:
            result = exchange.import_text(store, text, fmt)
            assert result["added"] + result["skipped"] + len(result["problems"]) >= rows, result
            assert result["added"] >= 1 and GOOD in [t["title"] for t in exchange.all_tasks(store)], result
            for problem in result["problems"]:
                assert problem.split(":")[0].split(" ")[0] in ("line", "task", "VTODO", "VEVENT"), problem
            for out in exchange.FORMATS:
                exchange.export(store, out)
            ctx = ToolContext(store=store, today=lambda: TODAY)
            assert GOOD in tasks_text(ctx, ["all"], limit=10_000, where="tasks")
        finally:
            store.close()
    return result


# ---------------------------------------------------------------- Taskwarrior

TW_KEYS = ["description", "status", "uuid", "entry", "end", "due", "scheduled", "wait", "project", "tags"]
TW_KEYS += ["priority", "annotations", "recur", "estimate", "depends", "parent", "planner_uid", "until", "mask"]


@FUZZ
@given(rows=st.lists(st.dictionaries(st.sampled_from(TW_KEYS), VALUES | ODD_TIMES, max_size=8), max_size=5))
def test_any_taskwarrior_row_is_read_or_named_and_the_good_one_comes_in(rows):
    good = {"description": GOOD, "status": "pending", "uuid": "4cebac86-3b22-41d2-a16b-f0aa24e5551b"}
    survives("taskwarrior", json.dumps([good, *rows]), 1 + len(rows))


@pytest.mark.parametrize(
    "odd, why",
    [
        ({"description": "a", "status": ["pending"]}, "status"),
        ({"description": "b", "status": "pending", "depends": 7}, "depends"),
        ({"description": "c", "status": "pending", "annotations": 7}, "annotations"),
        ({"description": "d", "status": "pending", "due": "0001-01-01T00:00:00+05:00"}, "due"),
        ({"description": "e", "status": "pending", "due": "9999-12-31T23:59:59-05:00"}, "due"),
        ({"description": "f\ud800", "status": "pending"}, "not text"),
        ({"description": "g", "status": "pending", "recur": "0d"}, "0"),
    ],
)
def test_one_odd_taskwarrior_row_is_named_and_the_others_come_in(odd, why):
    good = {"description": GOOD, "status": "pending", "uuid": "4cebac86-3b22-41d2-a16b-f0aa24e5551b"}
    result = survives("taskwarrior", json.dumps([good, odd, {**good, "description": "another", "uuid": "x-2"}]), 3)
    assert result["added"] == 2 and len(result["problems"]) == 1, result
    assert result["problems"][0].startswith("task 2 ") and why in result["problems"][0], result


def test_a_taskwarrior_file_with_one_broken_line_keeps_the_rest(tmp_path):
    lines = [
        json.dumps({"description": GOOD, "status": "pending", "uuid": "u-1"}),
        '{"description": "broken", "status": ',
        json.dumps({"description": "after it", "status": "pending", "uuid": "u-3"}),
    ]
    for text in ("\n".join(lines), "[\n" + ",\n".join(lines) + "\n]"):
        result = survives("taskwarrior", text, 3)
        assert result["added"] == 2 and result["problems"][0].startswith("task 2"), result


# ---------------------------------------------------------------- the planner's JSON

FIELDS = list(exchange.FIELDS) + ["extra", "ical"]


@FUZZ
@given(rows=st.lists(st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=8), max_size=5))
def test_any_json_row_is_read_or_named_and_the_good_one_comes_in(rows):
    survives("json", json.dumps({"tasks": [{"title": GOOD}, *rows]}), 1 + len(rows))


def test_a_lone_surrogate_in_a_json_row_is_named_and_the_rest_imports():
    result = survives(
        "json", json.dumps([{"title": GOOD}, {"title": "bad \ud800"}, {"notes": "x\udfff", "title": "t"}]), 3
    )
    assert result["added"] == 1 and [p[:6] for p in result["problems"]] == ["task 2", "task 3"], result


# ---------------------------------------------------------------- todo.txt

WORDS = st.sampled_from(
    ["x", "(A)", "2026-12-01", "due:2026-02-30", "due:0001-01-01", "rec:0d", "rec:99999y", "rec:+1b", "t:9999-12-31"]
    + ["est:0m", "est:99999h", "pri:Z", "time:25:00", "uid:", "uid:a b", "title:%FF", "title:%", "+", "@", "+p", "@c"]
    + ["status:cancelled", "\\", "\\x", "\x00", "\ud800", "word"]
)


@FUZZ
@given(lines=st.lists(st.lists(WORDS | ANY_TEXT, max_size=6).map(" ".join), max_size=6))
def test_any_todotxt_line_is_read_or_named_and_the_good_one_comes_in(lines):
    text = "\n".join([GOOD, *(line.replace("\n", " ").replace("\r", " ") for line in lines)])
    survives("todotxt", text, 1)


# ---------------------------------------------------------------- iCalendar

PROPS = st.sampled_from(
    [
        "DUE:00010101T000000Z",
        "DUE;TZID=Asia/Tokyo:00010101T000000",
        "DUE:99991231T235959Z",
        "DUE;VALUE=DATE:20260230",
        "DTSTART:tomorrow",
        "RRULE:FREQ=DAILY;INTERVAL=0",
        "RRULE:FREQ=SECONDLY",
        "RRULE:FREQ=WEEKLY;COUNT=-1",
        "COMPLETED:00010101T000000Z",
        "CREATED:00010101T000000Z",
        "CREATED:99991231T235959Z",
        "ESTIMATED-DURATION:P99999999D",
        "ESTIMATED-DURATION:PT0S",
        "PRIORITY:high",
        "PRIORITY:99999999999999999999",
        "STATUS:WHATEVER",
        "CATEGORIES:" + ",".join(f"t{n}" for n in range(60)),
        "RELATED-TO:" + "x" * 300,
        "X-PLANNER-TITLE:%FF%FE",
        "X-PLANNER-LIST:" + "l" * 200,
        "SUMMARY:" + "s" * 600,
        "SUMMARY:",
        "BEGIN:VALARM\r\nTRIGGER:-P99999999D\r\nEND:VALARM",
        "BEGIN:VALARM\r\nTRIGGER;VALUE=DATE-TIME:00010101T000000Z\r\nEND:VALARM",
    ]
)


@FUZZ
@given(todos=st.lists(st.lists(PROPS, max_size=4), max_size=4))
def test_any_ics_todo_is_read_or_named_and_the_good_one_comes_in(todos):
    body = f"BEGIN:VTODO\r\nUID:good@x\r\nSUMMARY:{GOOD}\r\nEND:VTODO\r\n"
    for n, props in enumerate(todos):
        body += f"BEGIN:VTODO\r\nUID:odd{n}@x\r\nSUMMARY:odd {n}\r\n" + "".join(p + "\r\n" for p in props)
        body += "END:VTODO\r\n"
    survives("ics", f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\n{body}END:VCALENDAR\r\n", 1 + len(todos))


# ---------------------------------------------------------------- an interval of 0, and the exit status


@pytest.mark.parametrize(
    "phrase", ["every 0 days", "every 0 weeks", "FREQ=DAILY;INTERVAL=0", "RRULE:FREQ=WEEKLY;INTERVAL=0"]
)
def test_an_interval_of_0_is_refused(phrase):
    with pytest.raises(DateError, match="0"):
        parse_repeat(phrase)


@pytest.mark.parametrize(
    "fmt, text",
    [
        ("todotxt", "water the plants rec:0d\n"),
        ("taskwarrior", json.dumps([{"description": "water the plants", "status": "pending", "recur": "0d"}])),
        ("json", json.dumps([{"title": "water the plants", "repeat": "every 0 days"}])),
    ],
)
def test_an_import_never_stores_an_interval_of_0_as_every_day(fmt, text):
    with tempfile.TemporaryDirectory() as d:
        store = Store(Path(d) / "p.db")
        result = exchange.import_text(store, text, fmt)
        assert result["added"] == 0 and len(result["problems"]) == 1 and "0" in result["problems"][0], result
        store.close()


def test_an_import_with_odd_rows_exits_0_with_a_count_and_1_only_when_nothing_could_be_read(tmp_path):
    env = clean_env(PLANNER_HOME=str(tmp_path))
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([{"title": GOOD}, {"title": ["not", "text"]}, {"title": "fine too"}]))
    p = run_cli(["import", str(path)], env)
    assert p.returncode == 0, p.stderr
    assert "imported 2 tasks" in p.stderr and "1 row not imported" in p.stderr and "task 2" in p.stderr
    path.write_text(json.dumps([{"title": ["not", "text"]}]))
    p = run_cli(["import", str(path)], env)
    assert p.returncode == 1 and "task 1" in p.stderr
    path.write_text("{ not json")
    p = run_cli(["import", str(path), "--format", "json"], env)
    assert p.returncode == 1 and "not a task file" in p.stderr and "Traceback" not in p.stderr


# ---------------------------------------------------------------- rows another tool (or an older planner) wrote

COLUMN_VALUES = {
    "recurrence": st.sampled_from(["FREQ=SOMETIMES", "FREQ=DAILY;INTERVAL=x", "FREQ=WEEKLY;BYDAY=XX", "", "garbage"]),
    "annotations": st.sampled_from(["not json", "{}", "[1, 2]", '[{"at": 5, "text": 7}]', '[{"text": "ok"}]']),
    "extra": st.sampled_from(
        ['{"todotxt_projects": 5}', '{"todotxt_projects": [1, {"a": 2}]}', '{"scheduled": 5, "wait": []}', "[1]"]
        + ['{"uuid": 7, "parent": {}, "mask": null}', "not json", '{"estimate": {"x": 1}}']
    ),
    "created_at": ODD_TIMES,
    "completed_at": ODD_TIMES,
    "due_date": st.sampled_from(["0001-01-01", "9999-12-31", "2026-02-30", "soon", "2026-12-01T10:00"]),
    "due_time": st.sampled_from(["25:00", "noon", "", "7"]),
    "start_date": st.sampled_from(["0001-01-01", "9999-12-31", "later"]),
    "remind_at": ODD_TIMES,
    "estimate_minutes": st.sampled_from([0, -5, 10**12]),
    "priority": st.sampled_from(["urgent", "", "HIGH"]),
    "status": st.sampled_from(["open", "done", "cancelled", "waiting", ""]),
    "list": st.sampled_from(["", "a\nb", "x" * 300]),
    "parent_uid": st.sampled_from(["nobody", "", "u1"]),
    "ical": st.sampled_from(["BEGIN:VCALENDAR", "not ical", "BEGIN:VTODO\r\nDUE:tomorrow\r\nEND:VTODO\r\n"]),
}


@FUZZ
@given(odd=st.fixed_dictionaries({}, optional=COLUMN_VALUES))
def test_a_row_written_oddly_never_stops_an_export_or_the_listing(odd):
    with tempfile.TemporaryDirectory() as d:
        store = Store(Path(d) / "p.db")
        try:
            with store.write() as conn:
                conn.execute("INSERT INTO tasks (title, uid) VALUES (?, 'u1')", (GOOD,))
                cols = ["title", "uid", *odd]
                conn.execute(
                    f"INSERT INTO tasks ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
                    ["written oddly", "u2", *odd.values()],
                )
            for fmt in exchange.FORMATS:
                text = exchange.export(store, fmt)
                assert GOOD in text and "written oddly" in text, fmt
            ctx = ToolContext(store=store, today=lambda: TODAY)
            shown = tasks_text(ctx, ["all"], limit=10_000, where="tasks")
            assert GOOD in shown and "\n 2  written odd" in shown  # listed (its title may be cut to fit)
        finally:
            store.close()
