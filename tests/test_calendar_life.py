"""Calendars have a life cycle: the events of an imported file are the set that file holds (importing it again
removes the ones it no longer has, more than 3 asking first), one /undo with the tasks of the import; `events`
lists them and `event delete ID` removes one; repeats are expanded only inside the window asked for, at most
MAX_OCCURRENCES per event, and a rule by the second or minute is busy as one span.
"""

from __future__ import annotations

import datetime as dt

import pytest
from helpers import clean_env, run_cli

from planner.policy import Door
from planner.storage import calendar, gate
from planner.storage.db import Store

DAY = dt.datetime(2026, 12, 1)


def event(uid: str, title: str, start: str, *lines: str, end: str | None = None) -> str:
    body = [f"UID:{uid}", f"SUMMARY:{title}", "DTSTAMP:20261130T100000Z", f"DTSTART:{start}"]
    body += [f"DTEND:{end}"] if end else [f"DTEND:{start[:9]}{int(start[9:11]) + 1:02d}{start[11:]}"]
    return "BEGIN:VEVENT\r\n" + "\r\n".join([*body, *lines]) + "\r\nEND:VEVENT\r\n"


def ics(*parts: str) -> str:
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\n" + "".join(parts) + "END:VCALENDAR\r\n"


SEVEN = [event(f"e{n}@cal", f"meeting {n}", f"2026120{n + 1}T100000") for n in range(7)]


def busy(store, days=10) -> list[str]:
    return [b.title for b in calendar.between(store.conn(), DAY, DAY + dt.timedelta(days=days))]


@pytest.fixture
def env(tmp_path):
    return clean_env(PLANNER_HOME=str(tmp_path))


def cli(env, *args, input=None):
    return run_cli(["--today", "2026-12-01", *args], env, input=input)


def test_an_event_deleted_from_the_file_is_forgotten_when_it_is_imported_again(tmp_path, env):
    path = tmp_path / "work.ics"
    path.write_text(ics(*SEVEN))
    p = cli(env, "import", str(path))
    assert p.returncode == 0 and "7 events added" in p.stderr, p.stderr
    p = cli(env, "import", str(path))  # the same file again: nothing to say
    assert "calendar:" not in p.stderr or "0 events added, 0 updated, 0 removed" in p.stderr, p.stderr
    path.write_text(ics(*SEVEN[:6]))  # meeting 6 was deleted in the calendar app
    p = cli(env, "import", str(path))
    assert p.returncode == 0 and "0 events added, 0 updated, 1 removed" in p.stderr, p.stderr
    store = Store(tmp_path / "planner.db")
    assert "meeting 6" not in busy(store) and "meeting 5" in busy(store)
    store.close()


def test_more_than_three_vanished_events_ask_and_yes_removes_them(tmp_path, env):
    path = tmp_path / "work.ics"
    path.write_text(ics(*SEVEN))
    cli(env, "import", str(path))
    path.write_text(ics(*SEVEN[:2]))
    p = cli(env, "import", str(path))  # no one to ask: kept, said, exit 4
    assert p.returncode == 4 and "kept 5 events the file no longer has" in p.stderr and "--yes" in p.stderr, p.stderr
    p = cli(env, "import", str(path), "--yes")
    assert p.returncode == 0 and "5 removed" in p.stderr, p.stderr


def test_more_than_three_changed_events_ask_and_without_a_yes_stay_as_they_were(tmp_path, env):
    path = tmp_path / "work.ics"
    todo = "BEGIN:VTODO\r\nUID:t1@x\r\nSUMMARY:prepare slides\r\nEND:VTODO\r\n"
    path.write_text(ics(*SEVEN))
    cli(env, "import", str(path))
    moved = (
        [e.replace("meeting", "dentist") for e in SEVEN[:4]] + SEVEN[4:] + [event("e9@cal", "new", "20261208T100000")]
    )
    path.write_text(ics(todo, *moved))
    p = cli(env, "import", str(path))  # no one to ask: one line, exit 4; what is new still goes in
    assert p.returncode == 4 and "Traceback" not in p.stderr and "went wrong" not in p.stderr, p.stderr
    assert "left 4 events as they were" in p.stderr and "--yes" in p.stderr, p.stderr
    store = Store(tmp_path / "planner.db")
    assert "meeting 0" in busy(store) and "dentist 0" not in busy(store) and "new" in busy(store)
    assert [r[0] for r in store.conn().execute("SELECT title FROM tasks")] == ["prepare slides"]
    store.close()
    p = cli(env, "import", str(path), "--yes")
    assert p.returncode == 0 and "4 updated" in p.stderr, p.stderr
    store = Store(tmp_path / "planner.db")
    assert "dentist 0" in busy(store) and "meeting 0" not in busy(store)
    store.close()


def test_an_ics_import_with_its_events_is_one_undo_and_a_second_file_can_be_undone(tmp_path, env):
    first, second = tmp_path / "a.ics", tmp_path / "b.ics"
    todo = "BEGIN:VTODO\r\nUID:t1@x\r\nSUMMARY:prepare slides\r\nEND:VTODO\r\n"
    first.write_text(ics(todo, SEVEN[0]))
    second.write_text(ics(event("e0@cal", "meeting 0, moved", "20261201T150000")))
    cli(env, "import", str(first))
    cli(env, "import", str(second))
    store = Store(tmp_path / "planner.db")
    assert sorted(busy(store)) == ["meeting 0", "meeting 0, moved"]
    p = cli(env, "undo")
    assert p.returncode == 0 and "removed event" in p.stdout and "meeting 0, moved" in p.stdout, p.stdout + p.stderr
    assert busy(store) == ["meeting 0"]
    p = cli(env, "undo")  # the import itself: its task and its event in one step, asked first
    assert p.returncode == 4 and "--yes" in p.stderr, p.stdout + p.stderr
    p = cli(env, "undo", "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    assert busy(store) == [] and store.conn().execute("SELECT COUNT(*) FROM tasks").fetchone()[0] == 0
    store.close()


def test_a_reimport_that_changed_and_removed_events_is_undone_whole(tmp_path, env):
    path = tmp_path / "work.ics"
    path.write_text(ics(*SEVEN[:3]))
    cli(env, "import", str(path))
    path.write_text(ics(SEVEN[0], event("e1@cal", "meeting 1, later", "20261202T160000")))
    cli(env, "import", str(path))
    store = Store(tmp_path / "planner.db")
    assert sorted(busy(store)) == ["meeting 0", "meeting 1, later"]
    assert cli(env, "undo").returncode == 0
    assert sorted(busy(store)) == ["meeting 0", "meeting 1", "meeting 2"]
    store.close()


def test_events_are_listed_and_one_is_deleted_after_a_yes_and_undo_brings_it_back(tmp_path, env):
    path = tmp_path / "work.ics"
    path.write_text(ics(*SEVEN[:2], event("r@cal", "standup", "20261201T090000", "RRULE:FREQ=DAILY")))
    cli(env, "import", str(path))
    p = cli(env, "events")
    assert p.returncode == 0 and "meeting 0" in p.stdout and "standup (repeats)" in p.stdout, p.stdout
    assert "work.ics" in p.stdout
    first_id = next(line.split()[0] for line in p.stdout.splitlines() if "meeting 0" in line)
    p = cli(env, "event", "delete", first_id)  # no terminal: refused, with what works
    assert p.returncode == 4 and "--yes" in p.stderr and "not deleted" in p.stderr, p.stderr
    p = cli(env, "event", "delete", first_id, "--yes")
    assert p.returncode == 0 and "deleted event" in p.stdout, p.stdout + p.stderr
    assert "meeting 0" not in cli(env, "events").stdout
    assert cli(env, "undo").returncode == 0
    assert "meeting 0" in cli(env, "events").stdout
    p = cli(env, "event", "delete", "999", "--yes")
    assert p.returncode == 2 and "no event with id 999" in p.stderr


# ---------------------------------------------------------------- repeats, inside the window only


def test_a_rule_by_the_second_is_one_span_and_plan_week_stays_small(tmp_path, env):
    path = tmp_path / "odd.ics"
    path.write_text(ics(event("s@cal", "ticker", "20261120T000000", "RRULE:FREQ=SECONDLY", end="20261120T000001")))
    p = cli(env, "import", str(path))
    assert "repeats by the second or minute: busy as one span" in p.stderr, p.stderr
    store = Store(tmp_path / "planner.db")
    (span,) = calendar.between(store.conn(), DAY, DAY + dt.timedelta(days=7))
    assert (span.start, span.end) == (DAY, DAY + dt.timedelta(days=7))
    store.close()
    p = cli(env, "plan", "week")
    assert p.returncode == 0 and len(p.stdout.splitlines()) < 200, len(p.stdout.splitlines())


def test_a_rule_by_the_minute_with_an_end_is_busy_only_while_it_runs(store):
    text = ics(event("m@cal", "pings", "20261201T100000", "RRULE:FREQ=MINUTELY;COUNT=30", end="20261201T100100"))
    store_events(store, text)
    (span,) = calendar.between(store.conn(), DAY, DAY + dt.timedelta(days=1))
    assert (span.start, span.end) == (dt.datetime(2026, 12, 1, 10, 0), dt.datetime(2026, 12, 1, 10, 30))


def test_a_dense_repeat_is_cut_at_the_cap_and_the_rest_of_the_window_is_busy(store):
    text = ics(event("h@cal", "hourly", "20261101T000000", "RRULE:FREQ=HOURLY", end="20261101T003000"))
    store_events(store, text)
    window = (DAY, DAY + dt.timedelta(days=60))  # 1,440 hours: more than MAX_OCCURRENCES
    found = calendar.between(store.conn(), *window)
    assert len(found) == calendar.MAX_OCCURRENCES + 1
    last = max(found, key=lambda b: b.end)
    assert last.end == window[1] and last.start == DAY + dt.timedelta(hours=calendar.MAX_OCCURRENCES)
    week = calendar.between(store.conn(), DAY, DAY + dt.timedelta(days=7))
    assert len(week) == 7 * 24  # inside the cap: every occurrence, exactly


def test_the_global_options_stand_before_or_after_event_delete(tmp_path, env):
    path = tmp_path / "work.ics"
    path.write_text(ics(*SEVEN[:2]))
    cli(env, "import", str(path))
    glob = ["--db", str(tmp_path / "planner.db"), "--yes"]
    assert run_cli([*glob, "event", "delete", "1"], env).returncode == 0
    assert run_cli(["event", "delete", "2", *glob], env).returncode == 0
    assert "no events" in cli(env, "events").stdout


def store_events(store, text):
    """A file's events stored through the gate, as an import stores them."""
    items = calendar.objects(text)
    plan = lambda conn: gate.ChangeSet(tuple(gate.event_changes(conn, "file:x", items)[0]), by_user=True)  # noqa: E731
    gate.commit(store, plan, Door("import", yes=True))


def test_redo_of_an_event_deletion_says_it_removed_it_again(tmp_path, env):
    path = tmp_path / "work.ics"
    path.write_text(ics(*SEVEN[:2]))
    cli(env, "import", str(path))
    assert cli(env, "event", "delete", "1", "--yes").returncode == 0
    assert "meeting 0" in cli(env, "undo", "--yes").stdout
    redo = cli(env, "redo", "--yes")
    assert redo.returncode == 0 and "event 1 removed again" in redo.stdout, redo.stdout + redo.stderr
    assert "meeting 0" not in cli(env, "events").stdout
