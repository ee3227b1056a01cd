"""Reminders: a task field resolved in code, shown once at start, while the planner runs, and from cron,
and carried as VALARM in calendar files."""

from __future__ import annotations

import datetime as dt
import sys

import icalendar
import pytest
from helpers import ROOT, TODAY, clean_env, run_cli, wait_for

from planner.dates import DateError, resolve_remind
from planner.storage import exchange
from planner.tools import dispatch
from planner.ui import reminders


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


def test_remind_check_shows_what_is_due_once_and_remind_lists_what_is_coming(ctx, store):
    at = dt.datetime(2026, 12, 4, 10, 0)  # the clock both are given
    dispatch(ctx, "add_task", {"title": "call the plumber", "due_date": "2026-12-04"})
    dispatch(ctx, "add_task", {"title": "later", "due_date": "2026-12-04"})
    with store.write() as conn:
        conn.execute("UPDATE tasks SET remind_at = '2026-12-04T09:55' WHERE id = 1")
        conn.execute("UPDATE tasks SET remind_at = '2026-12-06T10:00' WHERE id = 2")
    said: list[str] = []
    assert reminders.check(store, said.append, notify=None, clock=lambda: at) == 1
    assert said == ["reminder: call the plumber (due 2026-12-04) [task 1]"]
    assert reminders.check(store, said.append, notify=None, clock=lambda: at) == 0 and len(said) == 1  # once
    assert reminders.upcoming(store, clock=lambda: at) == ["2026-12-06 10:00  later [task 2]"]
    assert reminders.upcoming(store, days=1, clock=lambda: at) == []


def test_remind_check_exits_0_when_it_showed_one_so_a_timer_never_fails(store, tmp_path):
    with store.write() as conn:
        conn.execute("INSERT INTO tasks (title, uid, remind_at) VALUES ('call the plumber', 'u1', '2020-01-01T09:00')")
    env = clean_env(PLANNER_HOME=str(tmp_path), PATH="/usr/bin:/bin")  # no notify-send in the tests' PATH
    first = run_cli(["--db", str(store.path), "remind", "--check"], env)
    assert first.returncode == 0 and first.stdout == "reminder: call the plumber [task 1]\n"


def test_the_watcher_shows_a_reminder_once_when_its_minute_comes_by_the_clock_it_is_given(ctx, store):
    dispatch(ctx, "add_task", {"title": "stretch", "due_date": "2026-12-04"})
    with store.write() as conn:
        conn.execute("UPDATE tasks SET remind_at = '2026-12-04T10:00' WHERE id = 1")
    now, looks, said = [dt.datetime(2026, 12, 4, 9, 59)], [], []

    def clock() -> dt.datetime:
        looks.append(now[0])
        return now[0]

    watcher = reminders.Watcher(store, said.append, every=0.01, clock=clock).start()
    try:
        wait_for(lambda: len(looks) >= 3, "three looks at 09:59")
        assert said == []  # a minute early
        now[0] = dt.datetime(2026, 12, 4, 10, 0)
        wait_for(lambda: said, "the reminder at 10:00")
        seen = len(looks)
        wait_for(lambda: len(looks) >= seen + 3, "three more looks")
        assert said == ["reminder: stretch (due 2026-12-04) [task 1]"]  # shown once, marked shown
    finally:
        watcher.close()


@pytest.mark.slow
def test_the_plain_terminal_shows_what_fell_due_at_start_and_what_comes_due_while_it_runs(pty_planner, tmp_path):
    from planner.storage.db import Store

    store = Store(tmp_path / "planner.db")
    with store.write() as conn:  # due long ago, never shown: the planner shows it when it starts
        conn.execute("INSERT INTO tasks (title, uid, remind_at) VALUES ('pay rent', 'u1', '2020-01-01T09:00')")
    child = pty_planner("--plain", prompt="reminder: pay rent")
    child.expect("you> ")
    with store.write() as conn:  # due while it runs: its watcher shows it at its next look
        conn.execute("INSERT INTO tasks (title, uid, remind_at) VALUES ('stretch', 'u2', '2020-01-01T09:30')")
    child.expect("reminder: stretch", timeout=30)  # the line ends the wait; the timeout only bounds a failure
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
