"""The shell's notation as docs/usage.md documents it, as properties: every phrase of the page's notation table
is read as the table says in every position of the line; a word that only looks like notation stays in the
title, with a note; `edit` changes only the part written; `tasks overdue|today|week|waiting` are filters
wherever they stand; a repeat done late comes back from today when its rule allows today.

The expected values are written here, by hand, against Tuesday 2026-12-01 (the oracle); the phrases come
from the page, and a phrase the page shows that this file does not know fails, so the two cannot drift."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from helpers import ROOT, TODAY, clean_env, run_cli
from hypothesis import given
from hypothesis import strategies as st

from planner.repeats import next_due, parse_repeat
from planner.tools import dispatch
from planner.ui.quickadd import read

TITLE = ["call", "the", "dentist"]
FRIDAY = {"due_date": "2026-12-04"}
# What each phrase of the table means: the task's fields after `add`, and words it leaves in the title.
MEANS: dict[str, dict] = {
    "friday 3pm": {"due_date": "2026-12-04", "due_time": "15:00"},
    "in 3 weeks": {"due_date": "2026-12-22"},
    "end of month": {"due_date": "2026-12-31"},
    "due:friday": FRIDAY,
    "+tag": {"tags": ["tag"]},
    "+1 555 ...": {"title": "+1 555 ..."},
    "tag:NAME": {"tags": ["name"]},
    "#list": {"list": "list"},
    "C# meetup": {"title": "C# meetup"},
    "#1": {"title": "#1"},
    "list:NAME": {"list": "NAME"},
    "!high": {"priority": "high"},
    "!medium": {"priority": "medium"},
    "!low": {"priority": "low"},
    "!h": {"priority": "high"},
    "!m": {"priority": "medium"},
    "!l": {"priority": "low"},
    "!important": {"title": "!important"},
    "pri:high": {"priority": "high"},
    "~30m": {"estimate_minutes": 30},
    "~2h": {"estimate_minutes": 120},
    "~1h30m": {"estimate_minutes": 90},
    "est:30m": {"estimate_minutes": 30},
    "every monday": {"repeat": "every week on Mon", "due_date": "2026-12-07"},
    "every 2 weeks": {"repeat": "every 2 weeks", "due_date": "2026-12-01"},
    "every weekday": {"repeat": "every week on weekdays", "due_date": "2026-12-01"},
    "monthly on the 1st": {"repeat": "every month on day 1", "due_date": "2026-12-01"},
    "remind:at-due": {"with": "friday 3pm", "remind_at": "2026-12-04 15:00", "due_date": "2026-12-04"},
    "rec:every-2-weeks": {"repeat": "every 2 weeks", "due_date": "2026-12-01"},
    "rec:2w": {"repeat": "every 2 weeks", "due_date": "2026-12-01"},
    "start:monday": {"start_date": "2026-12-07"},
    "remind:1-hour-before": {"with": "due:friday", "remind_at": "2026-12-04 08:00", **FRIDAY},
    "remind:friday-8am": {"remind_at": "2026-12-04 08:00"},
    "\\word": {"title": "word"},
}


def table_phrases() -> list[str]:
    """Every `phrase` in the first and last columns of docs/usage.md's table of the notation."""
    text = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    table = text.split("**The notation of `add` and `edit`.**", 1)[1].split("\n\n", 2)[1]
    phrases = []
    for row in table.splitlines()[2:]:
        cells = row.strip("|").split("|")
        for cell in (cells[0], cells[1], cells[-1]):
            phrases += [p.replace("\\\\", "\\") for p in re.findall(r"`([^`]+)`", cell)]
    return [p for p in dict.fromkeys(phrases) if p not in ("waiting", "tasks waiting")]  # what a start date shows


PHRASES = table_phrases()


def test_the_table_on_the_page_is_the_table_tested_here():
    assert len(PHRASES) > 25
    assert set(PHRASES) == set(MEANS), "a phrase on docs/usage.md without its meaning here, or one gone from the page"


@pytest.mark.parametrize("phrase", PHRASES)
def test_every_phrase_of_the_table_is_read_as_documented_in_every_position(ctx, phrase):
    meant = dict(MEANS[phrase])
    context = meant.pop("with", "").split()
    kept = meant.pop("title", None)
    for at in range(len(TITLE) + 1):
        words = [*TITLE[:at], *phrase.split(), *TITLE[at:], *context]
        reading = read(words, TODAY)
        title = " ".join([*TITLE[:at], *kept.split(), *TITLE[at:]]) if kept else " ".join(TITLE)
        assert reading.title == title, (words, reading)
        out, ok = dispatch(ctx, "add_task", {"title": reading.title, **reading.args})
        assert ok, (words, out)
        assert {k: out["added"].get(k) for k in meant} == meant, words


@pytest.mark.parametrize(
    "line, title, due, note",
    [
        ("delete every task now", "delete every task now", None, "'every' stays in the title"),
        ("the weekly report friday", "the weekly report", "2026-12-04", "for a repeat write every week"),
        ("bake cake yearly", "bake cake yearly", None, "for a repeat write every year"),
        ("read the noon paper tomorrow", "read the noon paper", "2026-12-02", None),  # a time apart from the day
        ("lunch noon tomorrow", "lunch", "2026-12-02 12:00", None),  # a time beside it is its time
        ("lunch tomorrow noon", "lunch", "2026-12-02 12:00", None),
        ("sunday roast on sat", "sunday roast", "2026-12-05", None),
        ("pay rent \\every month", "pay rent every month", None, None),
    ],
)
def test_a_word_that_only_looks_like_notation_stays_in_the_title_with_a_note(ctx, line, title, due, note):
    reading = read(line.split(), TODAY)
    out, ok = dispatch(ctx, "add_task", {"title": reading.title, **reading.args})
    assert ok and out["added"]["title"] == title
    shown = " ".join(x for x in (out["added"]["due_date"], out["added"].get("due_time")) if x) or None
    assert shown == due
    assert (note is None and not reading.notes) or any(note in n for n in reading.notes), reading.notes


def test_the_rules_the_notation_reads_and_where_it_stops():
    monthly = read("pay rent monthly on the 1st".split(), TODAY)
    assert monthly.title == "pay rent" and parse_repeat(monthly.args["repeat"]) == "FREQ=MONTHLY;BYMONTHDAY=1"
    reminded = read(
        "renew passport remind:at-due friday 3pm".split(), TODAY
    )  # the date is the line's, not the reminder's
    assert reminded.title == "renew passport"
    assert reminded.args == {"remind": "at due", "due_date": "friday 3pm"}


def shell(home, *args, env=None):
    e = clean_env(OLLAMA_HOST="http://127.0.0.1:9", PLANNER_HOME=str(home), PLANNER_TODAY=TODAY.isoformat())
    return run_cli(list(args), {**e, **(env or {})})


def task(home, task_id: int) -> dict:
    p = shell(home, "tasks", "all", "--json")
    return next(t for t in json.loads(p.stdout)["tasks"] if t["id"] == task_id)


@pytest.mark.parametrize(
    "edit, due, time, title",
    [
        ("saturday", "2026-12-05", "15:00", "call the dentist"),  # a new day keeps the time
        ("4pm", "2026-12-04", "16:00", "call the dentist"),  # a time keeps the day
        ("saturday 9am", "2026-12-05", "09:00", "call the dentist"),  # both, when both are written
        ("call the dentist back", "2026-12-04", "15:00", "call the dentist back"),  # a title keeps the date
        ("!low", "2026-12-04", "15:00", "call the dentist"),
    ],
)
def test_edit_changes_only_the_part_written(tmp_path, edit, due, time, title):
    assert shell(tmp_path, "add", "call", "the", "dentist", "friday", "3pm", "+health").returncode == 0
    p = shell(tmp_path, "edit", "1", *edit.split())
    assert p.returncode == 0, p.stderr
    t = task(tmp_path, 1)
    assert (t["due_date"], t.get("due_time"), t["title"], t["tags"]) == (due, time, title, ["health"])


def test_the_words_of_tasks_are_filters_wherever_they_stand(tmp_path):
    for line in (
        "pay the bill 2026-11-20",  # 1 overdue
        "call mum today",  # 2
        "buy milk thursday",  # 3 this week
        "book flights 2026-12-20",  # 4 later
        "write the report start:friday",  # 5 waiting
        "plan the week +work start:monday",  # 6 waiting
    ):
        assert shell(tmp_path, "add", *line.split()).returncode == 0

    def ids(*words: str) -> list[int]:
        p = shell(tmp_path, "tasks", *words, "--json")
        assert p.returncode == 0, p.stderr
        return sorted(t["id"] for t in json.loads(p.stdout)["tasks"])

    assert ids("overdue") == ids("due:overdue") == [1]
    assert ids("today") == ids("due:today") == [2]
    assert ids("week") == ids("due:week") == [2, 3]
    assert ids("waiting") == [5, 6] and ids("+work", "waiting") == ids("waiting", "+work") == [6]
    assert ids("\\today") == []  # the word itself, searched in titles
    assert shell(tmp_path, "tasks", "done", "waiting").returncode == 2  # one status


RULES = st.sampled_from(
    [parse_repeat(p) for p in ("every weekday", "every monday", "daily", "every 2 weeks", "monthly on the 30th")]
)


@given(rule=RULES, due=st.dates(dt.date(2024, 1, 1), dt.date(2030, 1, 1)), late=st.integers(1, 60))
def test_a_repeat_done_late_comes_back_from_today_when_its_rule_allows_today(rule, due, late):
    from dateutil import rrule

    today = due + dt.timedelta(days=late)
    nxt = next_due(rule, due, today)
    start = dt.datetime.combine(due, dt.time())
    dates = {d.date() for d in rrule.rrulestr(rule, dtstart=start).between(start, start + dt.timedelta(days=400))}
    assert nxt in dates and nxt >= today  # a date of the series, and not one already gone
    assert not [d for d in dates if today <= d < nxt]  # the first one from today: today itself when it is one
