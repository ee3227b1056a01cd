"""Reminders: a task field resolved in code, shown once at start, while the planner runs, and from cron,
and carried as VALARM in calendar files."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import icalendar
import pytest
from helpers import ROOT, TODAY, clean_env

from planner.dates import DateError, resolve_remind
from planner.storage import exchange
from planner.tools import dispatch


@pytest.mark.parametrize(
    "phrase, due_date, due_time, expected",
    [
        ("an hour before", "2026-12-04", "15:00", "2026-12-04 14:00"),
        ("remind me 30 minutes before", "2026-12-04", "15:00", "2026-12-04 14:30"),
        ("2 days before", "2026-12-04", None, "2026-12-02 09:00"),  # a day without a time: as if due at 9
        ("at 9 the day before", "2026-12-04", "15:00", "2026-12-03 09:00"),
        ("the day before at 6pm", "2026-12-04", None, "2026-12-03 18:00"),
        ("the evening before", "2026-12-04", None, "2026-12-03 18:00"),
        ("on the day", "2026-12-04", "15:00", "2026-12-04 09:00"),
        ("at 7am on the day", "2026-12-04", None, "2026-12-04 07:00"),
        ("friday 8am", None, None, "2026-12-04 08:00"),
        ("tomorrow", None, None, "2026-12-02 09:00"),
        ("none", "2026-12-04", None, None),
    ],
)
def test_reminder_phrases_are_resolved_in_code(phrase, due_date, due_time, expected):
    when = resolve_remind(phrase, TODAY, due_date, due_time)
    assert (when.strftime("%Y-%m-%d %H:%M") if when else None) == expected


def test_a_reminder_before_a_task_without_a_date_says_what_it_needs():
    with pytest.raises(DateError, match="needs the task's due date"):
        resolve_remind("an hour before", TODAY, None, None)
    with pytest.raises(DateError):
        resolve_remind("at 25 the day before", TODAY, "2026-12-04", None)


def test_the_tools_set_move_clear_and_roll_reminders_forward(ctx):
    added, ok = dispatch(ctx, "add_task", {"title": "dentist", "due_date": "friday 3pm", "remind": "an hour before"})
    assert ok and added["added"]["remind_at"] == "2026-12-04 14:00"
    moved, ok = dispatch(ctx, "update_task", {"id": 1, "due_date": "saturday 3pm"})
    assert ok and "the reminder stays at 2026-12-04 14:00" in moved["date_read_as"]  # said, never moved silently
    again, ok = dispatch(ctx, "update_task", {"id": 1, "remind": "at 9 the day before"})
    assert ok and again["updated"]["remind_at"] == "2026-12-04 09:00"
    cleared, ok = dispatch(ctx, "update_task", {"id": 1, "remind": "none"})
    assert ok and "remind_at" not in cleared["updated"]
    bins, ok = dispatch(
        ctx,
        "add_task",
        {"title": "bins", "due_date": "2026-12-03", "repeat": "every week", "remind": "the evening before"},
    )
    rolled, ok = dispatch(ctx, "complete_task", {"id": bins["added"]["id"]})
    assert ok and rolled["next"]["remind_at"] == "2026-12-09 18:00"
    bad, ok = dispatch(ctx, "add_task", {"title": "x", "remind": "an hour before"})
    assert not ok and bad["error"].startswith("remind: 'an hour before' needs the task's due date")


def planner_cmd(tmp_path, *args):
    return [sys.executable, str(ROOT / "agent.py"), "--db", str(tmp_path / "p.db"), *args]


def test_remind_check_prints_what_is_due_once_and_exits_0_so_a_timer_never_fails(ctx, store, tmp_path):
    now = dt.datetime.now()
    dispatch(ctx, "add_task", {"title": "call the plumber", "due_date": "2026-12-04"})
    dispatch(ctx, "add_task", {"title": "later", "due_date": "2026-12-04"})
    with store.write() as conn:
        conn.execute(
            "UPDATE tasks SET remind_at = ? WHERE id = 1",
            ((now - dt.timedelta(minutes=5)).isoformat(timespec="minutes"),),
        )
        conn.execute(
            "UPDATE tasks SET remind_at = ? WHERE id = 2", ((now + dt.timedelta(days=2)).isoformat(timespec="minutes"),)
        )
    env = clean_env(PLANNER_HOME=str(tmp_path), PATH="/usr/bin:/bin")  # no notify-send in the tests' PATH
    cmd = [sys.executable, str(ROOT / "agent.py"), "--db", str(store.path), "remind"]
    first = subprocess.run([*cmd, "--check"], env=env, capture_output=True, text=True)
    assert first.returncode == 0 and first.stdout == "reminder: call the plumber (due 2026-12-04) [task 1]\n"
    second = subprocess.run([*cmd, "--check"], env=env, capture_output=True, text=True)
    assert second.returncode == 0 and second.stdout == ""  # shown once
    coming = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert coming.returncode == 0 and "later [task 2]" in coming.stdout and "plumber" not in coming.stdout


@pytest.mark.slow
def test_the_plain_terminal_shows_what_fell_due_at_start_and_what_comes_due_while_it_runs(pty_planner, tmp_path):
    from planner.storage.db import Store

    db = tmp_path / "planner.db"
    store = Store(db)
    now = dt.datetime.now()
    with store.write() as conn:
        conn.execute(
            "INSERT INTO tasks (title, uid, remind_at) VALUES ('pay rent', 'u1', ?)",
            ((now - dt.timedelta(hours=1)).isoformat(timespec="minutes"),),
        )
    child = pty_planner("--plain", prompt="reminder: pay rent")
    child.expect("you> ")
    with store.write() as conn:
        conn.execute(
            "INSERT INTO tasks (title, uid, remind_at) VALUES ('stretch', 'u2', ?)",
            (dt.datetime.now().isoformat(timespec="minutes"),),
        )
    child.expect("reminder: stretch", timeout=15)
    store.close()


def test_reminders_travel_as_valarm_both_ways(ctx, store, tmp_path):
    dispatch(ctx, "add_task", {"title": "dentist", "due_date": "friday 3pm", "remind": "an hour before"})
    text = exchange.to_ics(exchange.all_tasks(store))
    (alarm,) = icalendar.Calendar.from_ical(text).walk("VALARM")
    assert str(alarm["action"]) == "DISPLAY"
    assert alarm["trigger"].dt == dt.datetime(2026, 12, 4, 14, 0).astimezone(dt.UTC)
    other_app = text.replace(alarm["trigger"].to_ical().decode(), "-PT2H").replace("TRIGGER:", "TRIGGER;RELATED=START:")
    other_app = other_app.replace("@planner", "@elsewhere")  # another app's to-do, a relative alarm
    from planner.storage.db import Store

    fresh = Store(tmp_path / "fresh.db")
    try:
        assert exchange.import_text(fresh, text, "ics")["problems"] == []
        assert exchange.import_text(fresh, other_app, "ics")["problems"] == []
        reminders = sorted(t["remind_at"] for t in exchange.all_tasks(fresh))
    finally:
        fresh.close()
    assert reminders == ["2026-12-04T13:00", "2026-12-04T14:00"]  # 2 hours before 15:00, and as written
