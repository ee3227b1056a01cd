"""Import and export keep what other tools wrote and read what they read: one test per finding.

iCalendar from other apps, todo.txt as todo.txt tools write it, and Taskwarrior's own JSON, read by the
real `task` program when it is installed (.ci/run installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess

import icalendar
import pytest
from helpers import clean_env, run, run_cli
from hostile_dav import vtodo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.storage import exchange, exporting
from planner.storage.db import Store


def everything(store):
    return exchange.all_tasks(store, with_copies=False)


def calendar(*todos: str) -> str:
    bodies = [t.split("BEGIN:VTODO\r\n", 1)[1].split("END:VCALENDAR", 1)[0] for t in todos]
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//EN\r\n"
        + "".join("BEGIN:VTODO\r\n" + b for b in bodies)
        + "END:VCALENDAR\r\n"
    )


# ---------------------------------------------------------------- iCalendar


def test_odd_todos_in_a_file_are_one_line_each_and_the_good_ones_are_imported(store):
    text = calendar(
        vtodo("a@x", "rule twice", "RRULE:FREQ=WEEKLY", "RRULE:FREQ=DAILY"),
        vtodo("b@x", "done twice", "STATUS:COMPLETED", "COMPLETED:20261101T100000Z", "COMPLETED:20261102T100000Z"),
        vtodo(
            "c@x",
            "far alarm",
            "BEGIN:VALARM",
            "ACTION:DISPLAY",
            "TRIGGER;VALUE=DATE-TIME:99991231T235959Z",
            "END:VALARM",
        ),
        vtodo("d@x", "fine"),
    )
    r = exchange.import_text(store, text, "ics")
    assert r["added"] == 3 and r["problems"] == ["VTODO 1 ('rule twice'): it has 2 different RRULE values"]
    assert {t["title"] for t in everything(store)} == {"done twice", "far alarm", "fine"}
    out = exchange.export(store, "ics").replace("\r\n ", "")
    assert "TRIGGER;VALUE=DATE-TIME:99991231T235959Z" in out  # kept as it was written


def test_a_cancelled_todo_imports_cancelled_and_a_start_is_not_a_due_date(store):
    text = calendar(vtodo("a@x", "trip", "STATUS:CANCELLED"), vtodo("b@x", "later", "DTSTART;VALUE=DATE:20261210"))
    exchange.import_text(store, text, "ics")
    got = {t["title"]: t for t in everything(store)}
    assert got["trip"]["status"] == "cancelled"
    assert (got["later"]["start_date"], got["later"]["due_date"]) == ("2026-12-10", None)
    out = exchange.export(store, "ics")
    assert "STATUS:CANCELLED" in out and "DTSTART;VALUE=DATE:20261210" in out and "DUE" not in out


def test_nested_components_are_reported_not_walked(store):
    inner = "BEGIN:VTODO\r\nUID:inner\r\nSUMMARY:inner\r\n" * 2000 + "END:VTODO\r\n" * 2000
    text = (
        f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VTODO\r\nUID:outer\r\nSUMMARY:outer\r\n{inner}END:VTODO\r\n"
        "END:VCALENDAR\r\n"
    )
    r = exchange.import_text(store, text, "ics")
    assert r["added"] == 0 and r["problems"] == ["VTODO 1 ('outer'): it has a VTODO inside it"]


def test_a_file_past_the_size_cap_is_refused_in_one_line(store, monkeypatch):
    monkeypatch.setattr(exchange, "MAX_BYTES", 1000)
    r = exchange.import_text(store, "x\n" * 600, "todotxt")
    assert r == {"added": 0, "skipped": 0, "problems": ["the file is over the 0.001 MB an import reads; split it"]}


# ---------------------------------------------------------------- todo.txt


def test_todotxt_contexts_and_projects_stay_apart_and_threshold_is_a_start_date(store):
    text = "(A) call the bank +money @phone @home t:2026-12-03 due:2026-12-04 est:30m\n"
    exchange.import_text(store, text, "todotxt")
    (task,) = everything(store)
    assert (task["list"], task["tags"], task["start_date"], task["estimate_minutes"]) == (
        "money",
        ["home", "phone"],
        "2026-12-03",
        30,
    )
    line = exchange.export(store, "todotxt")
    assert "+money @home @phone due:2026-12-04 t:2026-12-03 est:30m" in line


def test_todotxt_lines_starting_with_a_bracket_bom_and_empty_files(store):
    assert exchange.guess_format("todo.txt", "[work] call bob\n") == "todotxt"
    r = exchange.import_text(store, "\ufeffx 2026-11-30 done already\n", "todotxt")
    assert r["added"] == 1 and everything(store)[0]["status"] == "done"
    assert exchange.import_text(store, "", "todotxt") == {"added": 0, "skipped": 0, "problems": []}


def test_two_identical_lines_are_two_tasks_and_the_file_still_imports_once(store):
    text = "buy milk\nbuy milk\n"
    assert exchange.import_text(store, text, "todotxt")["added"] == 2
    assert exchange.import_text(store, text, "todotxt") == {"added": 0, "skipped": 2, "problems": []}
    rows = [{"title": "same", "notes": "one"}, {"title": "same", "notes": "two"}]
    assert exchange.import_text(store, json.dumps(rows), "json") == {"added": 2, "skipped": 0, "problems": []}
    assert sorted(t["notes"] or "" for t in everything(store) if t["title"] == "same") == ["one", "two"]


def test_rows_another_tool_wrote_badly_do_not_stop_any_export(store):
    with store.write() as conn:
        conn.execute("INSERT INTO tasks (title, uid, recurrence) VALUES (?, 'blob', NULL)", (b"\xffbinary",))
        conn.execute("INSERT INTO tasks (title, uid, recurrence) VALUES ('broken rule', 'rule', 'FREQ=SOMETIMES')")
        conn.execute("INSERT INTO tasks (title, uid) VALUES ('fine', 'fine')")
    for fmt in exchange.FORMATS:
        text = exchange.export(store, fmt)
        assert "fine" in text and "broken rule" in text, fmt


# ---------------------------------------------------------------- Taskwarrior

TASK_EXPORT = [
    {
        "id": 1,
        "description": "water the plants",
        "due": "20261205T000000Z",
        "entry": "20261201T131108Z",
        "mask": "-",
        "priority": "H",
        "project": "home",
        "recur": "weekly",
        "rtype": "periodic",
        "status": "recurring",
        "uuid": "4cebac86-3b22-41d2-a16b-f0aa24e5551b",
        "tags": ["garden"],
    },
    {
        "id": 2,
        "description": "write report",
        "due": "20261210T150000Z",
        "entry": "20261201T131108Z",
        "estimate": "PT2H",
        "project": "work",
        "scheduled": "20261203T000000Z",
        "status": "pending",
        "uuid": "5e629e91-84d8-4a06-8e38-da3c44d0a5b3",
        "depends": ["fe348f5e-2ea2-49f1-acc3-3dfd9ab41a4b"],
        "annotations": [
            {"entry": "20261201T131108Z", "description": "first note"},
            {"entry": "20261201T131109Z", "description": "second note"},
        ],
        "myuda": "kept",
    },
    {
        "id": 4,
        "description": "later",
        "entry": "20261201T131108Z",
        "status": "waiting",
        "uuid": "d8c02b84-4032-48d0-9841-e347446752ea",
        "wait": "20261220T000000Z",
    },
    {
        "id": 5,
        "description": "outline",
        "entry": "20261201T131108Z",
        "status": "pending",
        "uuid": "fe348f5e-2ea2-49f1-acc3-3dfd9ab41a4b",
    },
    {
        "id": 6,
        "description": "water the plants",
        "due": "20261205T000000Z",
        "entry": "20261201T131108Z",
        "imask": 0,
        "parent": "4cebac86-3b22-41d2-a16b-f0aa24e5551b",
        "priority": "H",
        "project": "home",
        "recur": "weekly",
        "status": "pending",
        "uuid": "768c48ab-abf7-4713-8e9f-369c729f80e5",
        "tags": ["garden"],
    },
    {
        "id": 0,
        "description": "old",
        "end": "20261201T131108Z",
        "entry": "20261201T131108Z",
        "status": "completed",
        "uuid": "65b363eb-f2e0-462e-955b-15b13940336e",
    },
    {
        "id": 0,
        "description": "dropped",
        "end": "20261201T131108Z",
        "entry": "20261201T131108Z",
        "status": "deleted",
        "uuid": "11b363eb-f2e0-462e-955b-15b13940336e",
    },
]  # fmt: skip  (as Taskwarrior 2.6 exports them, times in UTC)


def test_a_taskwarrior_export_imports_every_row_with_its_fields(store):
    text = json.dumps(TASK_EXPORT)
    assert exchange.guess_format("tasks.json", text) == "taskwarrior"
    r = exchange.import_text(store, text, "taskwarrior")
    assert r == {"added": 6, "skipped": 0, "problems": []}  # the series is one task, not template and instance
    got = {t["title"]: t for t in everything(store)}
    plants = got["water the plants"]
    assert (plants["repeat"], plants["priority"], plants["list"], plants["tags"]) == (
        "FREQ=WEEKLY",
        "high",
        "home",
        ["garden"],
    )
    report = got["write report"]
    assert (report["estimate_minutes"], report["notes"], report["annotations"][0]["text"]) == (
        120,
        "first note",
        "second note",
    )
    assert got["outline"]["parent"] == report["uid"]  # the task it depends on is its step
    assert got["later"]["start_date"] == "2026-12-20" and got["later"]["status"] == "open"
    assert got["old"]["status"] == "done" and got["dropped"]["status"] == "cancelled"
    assert exchange.import_text(store, text, "taskwarrior")["added"] == 0  # by uuid: once


def test_our_taskwarrior_export_keeps_their_attributes_and_reads_back(store, tmp_path):
    exchange.import_text(store, json.dumps(TASK_EXPORT), "taskwarrior")
    out = json.loads(exchange.export(store, "taskwarrior"))
    report = next(t for t in out if t["description"] == "write report")
    assert report["myuda"] == "kept" and report["scheduled"] == "20261203T000000Z" and report["estimate"] == "PT2H"
    later = next(t for t in out if t["description"] == "later")
    assert later["wait"] == "20261220T000000Z"
    fresh = Store(tmp_path / "fresh.db")
    try:
        exchange.import_text(fresh, json.dumps(out), "taskwarrior")
        keys = (
            "uid",
            "title",
            "status",
            "due_date",
            "due_time",
            "start_date",
            "priority",
            "tags",
            "list",
            "estimate_minutes",
            "notes",
            "repeat",
        )
        strip = lambda ts: sorted(({k: t[k] for k in keys} for t in ts), key=lambda t: t["uid"])  # noqa: E731
        assert strip(everything(fresh)) == strip(everything(store))
    finally:
        fresh.close()


@pytest.mark.skipif(shutil.which("task") is None, reason="Taskwarrior is not installed")
def test_the_real_taskwarrior_reads_our_export_and_we_read_its(store, tmp_path):
    rc = tmp_path / "taskrc"
    rc.write_text(f"data.location={tmp_path / 'tw'}\nconfirmation=off\nuda.estimate.type=duration\n")
    env = {**os.environ, "TASKRC": str(rc), "TASKDATA": str(tmp_path / "tw")}
    (tmp_path / "tw").mkdir()
    exchange.import_text(store, json.dumps(TASK_EXPORT), "taskwarrior")
    (tmp_path / "ours.json").write_text(exchange.export(store, "taskwarrior"))
    p = subprocess.run(
        ["task", "rc.verbose=nothing", "import", str(tmp_path / "ours.json")], env=env, capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr
    theirs = subprocess.run(["task", "rc.verbose=nothing", "export"], env=env, capture_output=True, text=True).stdout
    got = {t["description"]: t for t in json.loads(theirs)}
    assert got["write report"]["project"] == "work" and got["write report"]["estimate"] == "PT2H"
    assert got["old"]["status"] == "completed" and got["dropped"]["status"] == "deleted"
    back = Store(tmp_path / "back.db")
    try:
        r = exchange.import_text(back, theirs, exchange.guess_format("t.json", theirs))
        assert r["problems"] == [] and {t["title"] for t in everything(back)} == set(got)
    finally:
        back.close()


def test_taskwarrior_from_the_command_line(tmp_path):
    path = tmp_path / "tw.json"
    path.write_text("\n".join(json.dumps(t) for t in TASK_EXPORT))  # json.array=off: one object per line
    env = clean_env(PLANNER_HOME=str(tmp_path))
    p = run_cli(["import", str(path), "--format", "taskwarrior"], env)
    assert p.returncode == 0 and "imported 6 tasks" in p.stderr, p.stderr
    p = run_cli(["export", "--format", "taskwarrior"], env)
    assert p.returncode == 0 and len(json.loads(p.stdout)) == 6


# ---------------------------------------------------------------- round trips


FOREIGN = st.sampled_from(
    [
        "LOCATION:Rua Augusta 12\\, Lisboa",
        "URL:https://example.org/a?b=1",
        "GEO:38.7;-9.14",
        "CLASS:PRIVATE",
        "ATTENDEE;CN=Ana:mailto:ana@example.org",
        "X-APPLE-SORT-ORDER:7",
        "X-TASKS-ORG-THING;X-P=1:v",
        "RELATED-TO;RELTYPE=SIBLING:s@x",
        "ATTACH:https://example.org/f.pdf",
        "CONTACT:Ana",
    ]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(foreign=st.lists(FOREIGN, unique=True, max_size=6), title=st.text("abc xyz", min_size=1, max_size=20))
def test_any_foreign_property_survives_import_edit_and_export(tmp_path_factory, foreign, title):
    from planner.tools import ToolContext

    db = Store(tmp_path_factory.mktemp("rt") / "p.db")
    try:
        exchange.import_text(db, calendar(vtodo("u@other", "orig", *foreign)), "ics")
        run(ToolContext(store=db), "update_task", id=1, title=title.strip() or "t", priority="low")
        out = icalendar.Calendar.from_ical(exchange.export(db, "ics"))
        todo = next(c for c in out.subcomponents if c.name == "VTODO")
        text = todo.to_ical().decode().replace("\r\n ", "")
        for line in foreign:
            name = line.split(":")[0].split(";")[0]
            assert todo.get(name) is not None and line.split(":", 1)[1] in text, line
        assert str(todo["summary"]) == (title.strip() or "t") and todo["priority"] == 9
    finally:
        db.close()


def test_every_new_field_travels_through_every_format(ctx, store, tmp_path):
    run(
        ctx,
        "add_task",
        title="report",
        due_date="2026-12-10",
        start_date="2026-12-03",
        list="work",
        estimate="2 hours",
        notes="outline first",
        tags=["writing"],
        priority="high",
    )
    run(ctx, "add_task", title="outline", parent=1)
    run(ctx, "update_task", id=1, add_note="ask Ana for the figures")
    run(ctx, "cancel_task", id=2)
    keep = {
        "json": ("title", "status", "start_date", "list", "estimate_minutes", "parent", "notes", "annotations"),
        "ics": ("title", "status", "start_date", "list", "estimate_minutes", "parent", "notes", "annotations"),
        "taskwarrior": ("title", "status", "start_date", "list", "estimate_minutes", "notes"),
        "todotxt": ("title", "status", "start_date", "list", "estimate_minutes"),
    }
    for fmt, keys in keep.items():
        fresh = Store(tmp_path / f"{fmt}.db")
        try:
            r = exchange.import_text(fresh, exchange.export(store, fmt), fmt)
            assert r["problems"] == [], (fmt, r)
            strip = lambda ts: [{k: t[k] for k in keys} for t in ts]  # noqa: E731, B023
            assert strip(everything(fresh)) == strip(everything(store)), fmt
        finally:
            fresh.close()


def test_redo_of_an_undone_import_after_the_file_came_back_makes_the_rest_and_no_duplicate(tmp_path):
    """The same data imported again after an undo: redo says what is already there and makes the rest."""
    env = clean_env(PLANNER_HOME=str(tmp_path), PLANNER_TODAY="2026-12-03")
    a = vtodo("uid-a", "renew passport")
    b = vtodo("uid-b", "pay rent")
    event = (
        "BEGIN:VEVENT\r\nUID:ev-1\r\nDTSTAMP:20261201T000000Z\r\nDTSTART:20261204T100000Z\r\n"
        "DTEND:20261204T110000Z\r\nSUMMARY:dentist\r\nEND:VEVENT\r\n"
    )
    both = calendar(a, b).replace("END:VCALENDAR", event + "END:VCALENDAR")
    (tmp_path / "both.ics").write_text(both)
    (tmp_path / "one.ics").write_text(calendar(a))
    assert run_cli(["import", str(tmp_path / "both.ics")], env).returncode == 0
    assert run_cli(["undo", "--yes"], env).returncode == 0
    assert run_cli(["import", str(tmp_path / "one.ics")], env).returncode == 0  # one task came back

    redo = run_cli(["redo", "--yes"], env)
    assert redo.returncode == 0, redo.stderr
    assert "renew passport" in redo.stdout and "already there" in redo.stdout
    db = sqlite3.connect(tmp_path / "planner.db")
    titles = sorted(r[0] for r in db.execute("SELECT title FROM tasks"))
    events = [r[0] for r in db.execute("SELECT uid FROM events")]
    db.close()
    assert titles == ["pay rent", "renew passport"]  # each once: the rest was made again
    assert events == ["ev-1"]
    again = run_cli(["redo", "--yes"], env)  # and the next redo has nothing left, rather than the same error
    assert "UNIQUE" not in again.stdout + again.stderr and "nothing" in (again.stdout + again.stderr).lower()


def test_a_redo_that_finds_everything_already_there_says_so_and_a_later_undo_names_no_task_it_skipped(tmp_path):
    env = clean_env(PLANNER_HOME=str(tmp_path), PLANNER_TODAY="2026-12-03")
    (tmp_path / "a.ics").write_text(calendar(vtodo("uid-a", "renew passport"), vtodo("uid-b", "pay rent")))
    assert run_cli(["import", str(tmp_path / "a.ics")], env).returncode == 0
    assert run_cli(["undo", "--yes"], env).returncode == 0
    assert run_cli(["import", str(tmp_path / "a.ics")], env).returncode == 0  # all of it came back
    redo = run_cli(["redo", "--yes"], env)
    assert redo.returncode == 0 and redo.stdout.count("already there") == 2, redo.stdout + redo.stderr
    undo = run_cli(["undo", "--yes"], env)  # the newest request is the second import: its tasks go
    assert undo.returncode == 0 and "task 1 " not in undo.stdout and "task 2 " not in undo.stdout, undo.stdout
    db = sqlite3.connect(tmp_path / "planner.db")
    assert db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0] == 0
    db.close()
    again = run_cli(["redo", "--yes"], env)  # the second import made again; the first is done with
    assert again.returncode == 0 and "already there" not in again.stdout, again.stdout


def test_redo_does_not_bring_back_an_event_the_user_deleted_after_the_undo(tmp_path):
    env = clean_env(PLANNER_HOME=str(tmp_path), PLANNER_TODAY="2026-12-03")
    path = tmp_path / "week.ics"

    def write(title: str, event: str) -> None:
        text = calendar(vtodo("uid-a", title)).replace(
            "END:VCALENDAR",
            "BEGIN:VEVENT\r\nUID:ev-1\r\nDTSTAMP:20261201T000000Z\r\nDTSTART:20261204T100000\r\n"
            f"DTEND:20261204T110000\r\nSUMMARY:{event}\r\nEND:VEVENT\r\nEND:VCALENDAR",
        )
        path.write_text(text)

    write("renew passport", "dentist")
    assert run_cli(["import", str(path)], env).returncode == 0
    write("renew the passport", "dentist, moved")  # the file again, both changed
    assert run_cli(["import", str(path)], env).returncode == 0
    assert run_cli(["undo", "--yes"], env).returncode == 0
    assert run_cli(["event", "delete", "1", "--yes"], env).returncode == 0  # the user's newer change
    redo = run_cli(["redo", "--yes"], env)
    assert "changed after the undo" in redo.stdout + redo.stderr, redo.stdout + redo.stderr
    db = sqlite3.connect(tmp_path / "planner.db")
    assert db.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0
    assert [r[0] for r in db.execute("SELECT title FROM tasks")] == ["renew passport"]
    db.close()


def test_an_undone_import_of_events_alone_is_made_again_by_redo(tmp_path):
    env = clean_env(PLANNER_HOME=str(tmp_path), PLANNER_TODAY="2026-12-03")
    path = tmp_path / "week.ics"
    path.write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:ev-1\r\nDTSTAMP:20261201T000000Z\r\n"
        "DTSTART:20261204T100000\r\nDTEND:20261204T110000\r\nSUMMARY:dentist\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    assert run_cli(["import", str(path)], env).returncode == 0
    assert run_cli(["undo", "--yes"], env).returncode == 0
    assert "dentist" not in run_cli(["events"], env).stdout
    redo = run_cli(["redo", "--yes"], env)
    assert redo.returncode == 0 and "event 1 made again" in redo.stdout, redo.stdout + redo.stderr
    assert "dentist" in run_cli(["events"], env).stdout
    assert "nothing to redo" in run_cli(["redo", "--yes"], env).stdout


def test_what_another_app_wrote_comes_back_with_undo_of_a_deletion_and_redo_of_an_import(tmp_path):
    env = clean_env(PLANNER_HOME=str(tmp_path), PLANNER_TODAY="2026-12-03")
    path = tmp_path / "a.ics"
    path.write_text(calendar(vtodo("uid-a", "renew passport", "X-OTHER-APP-FIELD:keep me")))

    def exported() -> str:
        out = run_cli(["export", "--format", "ics"], env)
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert run_cli(["import", str(path)], env).returncode == 0
    assert "X-OTHER-APP-FIELD:keep me" in exported()
    assert run_cli(["delete", "1", "--yes"], env).returncode == 0
    assert run_cli(["undo", "--yes"], env).returncode == 0
    assert "X-OTHER-APP-FIELD:keep me" in exported()  # the task came back whole
    assert run_cli(["undo", "--yes"], env).returncode == 0  # the import itself
    assert "renew passport" not in exported()
    assert run_cli(["redo", "--yes"], env).returncode == 0
    assert "X-OTHER-APP-FIELD:keep me" in exported()


def test_a_json_row_keeps_the_fields_another_tool_wrote_and_our_own_export_adds_none(store):
    rows = [{"title": "water the plants", "uid": "w1", "habitica_id": "h-7", "checklist": [1, 2], "extra": {"a": 1}}]
    exchange.import_text(store, json.dumps(rows), "json")
    [task] = json.loads(exporting.export(store, "json"))["tasks"]
    assert task["extra"] == {"habitica_id": "h-7", "checklist": [1, 2], "a": 1}
    again = exchange.all_tasks(store)  # our own export read back: nothing of ours lands in `extra`
    exchange.import_text(store, exporting.export(store, "json").replace('"w1"', '"w2"'), "json")
    assert [t["extra"] for t in exchange.all_tasks(store)] == [again[0]["extra"]] * 2
