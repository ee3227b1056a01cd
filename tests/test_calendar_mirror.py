"""The user's own calendars mirrored here as busy time (PLANNER_CALDAV_CALENDARS, read by every `sync`:
planner/sync/plan_publish.py read_calendars), through the real command line (`sync`, `events`, `undo`).

The calendars live on the suite's real Radicale server; the `caldav` library writes, edits and deletes events
there as the user's phone would. The oracle is what the test put on the server: the titles and times it wrote,
and the ones it deleted. Where a server misbehaves in a way Radicale will not (it refuses to store an object its
own parser rejects, so it never hands one out), the suite's scripted server (tests/hostile_dav.py) stands in.

What must hold:
- an event on the server is busy time here; one deleted there goes at the next read; one edited there changes;
- an item the reader cannot take (unparseable, or named by the listing without its data) removes nothing here
  that round, and the line says how many; the next clean read removes what is gone;
- more than 3 events gone at once, where no one can answer: kept, and the line says so and why; with --yes
  they go (the user's yes reaches the calendars as it reaches the task lists);
- a sync's mirror is not an undo step: the server is the source, so `undo` leaves the busy time as it is there;
- a server that cannot be read removes nothing and says "not read" in one line.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import uuid

import caldav
import icalendar
import pytest
from helpers import TODAY, clean_env, run_cli
from hostile_dav import HostileDav
from phone import PASSWORD, USER, new_list, start_radicale

START = dt.datetime(2026, 12, 2, 9, 0)  # the day after TODAY, in the read window (a week back, 90 days ahead)


# ---------------------------------------------------------------- the phone's side


def event_text(uid: str, summary: str, start: dt.datetime, minutes: int = 60) -> str:
    """One event as a phone app writes it: floating local time, so the time shown here is the time written."""
    e = icalendar.Event()
    e.add("uid", uid)
    e.add("dtstamp", dt.datetime.now(dt.UTC))
    e.add("summary", summary)
    e.add("dtstart", start)
    e.add("dtend", start + dt.timedelta(minutes=minutes))
    cal = icalendar.Calendar()
    cal.add("prodid", "-//phone//EN")
    cal.add("version", "2.0")
    cal.add_component(e)
    return cal.to_ical().decode()


def put_event(cal: caldav.Calendar, summary: str, start: dt.datetime = START, uid: str | None = None) -> str:
    """Add (or, with the UID of one there, replace) an event on the phone; its UID."""
    uid = uid or f"{uuid.uuid4()}@phone.example"
    cal.save_event(event_text(uid, summary, start))
    return uid


def delete_event(cal: caldav.Calendar, uid: str) -> None:
    """Delete one event on the phone, as its calendar app does."""
    cal.event_by_uid(uid).delete()


# ---------------------------------------------------------------- the planner's side


def setup(tmp_path, url: str) -> tuple[dict[str, str], list[str]]:
    """The environment naming `url` as the only calendar read (no task list), and the options every call takes."""
    env = clean_env(
        PLANNER_HOME=str(tmp_path),
        PLANNER_CALDAV_CALENDARS=url,
        PLANNER_CALDAV_USER=USER,
        PLANNER_CALDAV_PASSWORD=PASSWORD,
    )
    return env, ["--db", str(tmp_path / "p.db"), "--today", TODAY.isoformat()]


def sync(env, common, *more: str):
    """`planner sync` with standard input a pipe (no one to answer y/N): the finished process."""
    p = run_cli([*common, "sync", *more], env)
    assert "Traceback" not in p.stderr, p.stderr
    return p


def calendar_line(p) -> str:
    """The one line the sync printed about the calendar."""
    lines = [x for x in p.stderr.splitlines() if x.startswith("calendar ")]
    assert len(lines) == 1, p.stderr
    return lines[0]


def busy_here(env, common) -> dict[str, str]:
    """`planner events`: title -> when, as the user sees them listed."""
    p = run_cli([*common, "events"], env)
    assert p.returncode == 0, p.stderr
    if p.stdout.startswith("no events"):
        return {}
    out = {}
    for line in p.stdout.splitlines():
        _, day, time, rest = line.split(maxsplit=3)
        out[rest.rsplit("  [", 1)[0]] = f"{day} {time}"
    return out


def at(when: dt.datetime) -> str:
    """A time as `events` shows it."""
    return when.strftime("%Y-%m-%d %H:%M")


# ---------------------------------------------------------------- 1. the server's events, here


def test_events_on_the_server_are_busy_time_here_and_follow_its_deletions_and_edits(tmp_path, radicale):
    url, phone = new_list(radicale, ("VEVENT",))
    env, common = setup(tmp_path, url)
    dentist = put_event(phone, "dentist", START)
    gym = put_event(phone, "gym", START + dt.timedelta(hours=3))
    put_event(phone, "lunch with Bo", START + dt.timedelta(days=1, hours=3))
    p = sync(env, common)
    assert p.returncode == 0 and calendar_line(p).endswith(": 3 events (3 new)"), p.stderr
    assert busy_here(env, common) == {
        "dentist": at(START),
        "gym": at(START + dt.timedelta(hours=3)),
        "lunch with Bo": at(START + dt.timedelta(days=1, hours=3)),
    }

    delete_event(phone, gym)
    put_event(phone, "dentist (moved)", START + dt.timedelta(days=2), uid=dentist)
    p = sync(env, common)
    assert p.returncode == 0 and "2 events (0 new, 1 gone)" in calendar_line(p), p.stderr
    assert busy_here(env, common) == {
        "dentist (moved)": at(START + dt.timedelta(days=2)),
        "lunch with Bo": at(START + dt.timedelta(days=1, hours=3)),
    }

    p = sync(env, common)  # nothing changed there: nothing changes here
    assert calendar_line(p).endswith(": 2 events (0 new)"), p.stderr
    assert len(busy_here(env, common)) == 2


def test_the_busy_time_read_keeps_the_plan_off_it(tmp_path, radicale):
    url, phone = new_list(radicale, ("VEVENT",))
    env, common = setup(tmp_path, url)
    put_event(phone, "standup", dt.datetime(2026, 12, 1, 9, 0))
    assert run_cli([*common, "add", "write", "report", "~1h"], env).returncode == 0
    sync(env, common)
    p = run_cli([*common, "plan", "--now", "2026-12-01 09:00"], env)
    assert "09:00-10:00  standup" in p.stdout and "10:00-11:00  write report" in p.stdout, p.stdout


# ---------------------------------------------------------------- 2. an item that cannot be read


# Objects a server hands out that give no event: one the parser rejects, one without a start, one cut short, one
# whose start is no date.
BROKEN = {
    "unparseable": "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    "no start": event_text("b@x", "second", START).replace("DTSTART:20261202T090000\r\n", ""),
    "cut short": event_text("b@x", "second", START).split("END:VEVENT")[0],
    "start not a date": event_text("b@x", "second", START).replace("DTSTART:20261202T090000", "DTSTART:nine-ish"),
}


@pytest.mark.parametrize("how", [*BROKEN, "propstat-404", "status-503", "no-data"])
def test_an_item_that_cannot_be_read_removes_nothing_that_round(tmp_path, how):
    with HostileDav() as server:
        env, common = setup(tmp_path, server.url)
        server.todos["/tasks/a.ics"] = event_text("a@x", "first", START)
        server.todos["/tasks/b.ics"] = event_text("b@x", "second", START + dt.timedelta(hours=2))
        p = sync(env, common)
        assert calendar_line(p).endswith(": 2 events (2 new)"), p.stderr
        del server.todos["/tasks/a.ics"]  # gone on the server, while the other one cannot be read:
        if how in BROKEN:  # its object as another app left it
            server.todos["/tasks/b.ics"] = BROKEN[how]
        else:  # the listing names it without giving it
            server.odd["/tasks/b.ics"] = how
        p = sync(env, common)
        line = calendar_line(p)
        assert "1 could not be read, so none was taken for removed" in line and "gone" not in line, p.stderr
        assert busy_here(env, common) == {"first": at(START), "second": at(START + dt.timedelta(hours=2))}

        server.todos["/tasks/b.ics"] = event_text("b@x", "second", START + dt.timedelta(hours=2))
        server.odd.clear()
        p = sync(env, common)  # a clean read: what is gone goes
        assert calendar_line(p).endswith(": 1 events (0 new, 1 gone)"), p.stderr
        assert set(busy_here(env, common)) == {"second"}


# ---------------------------------------------------------------- 3. many gone at once


def test_more_than_three_gone_at_once_are_kept_where_no_one_can_answer_and_go_with_yes(tmp_path, radicale):
    url, phone = new_list(radicale, ("VEVENT",))
    env, common = setup(tmp_path, url)
    uids = [put_event(phone, f"meeting {i}", START + dt.timedelta(hours=i)) for i in range(5)]
    sync(env, common)
    assert len(busy_here(env, common)) == 5
    for uid in uids[:4]:
        delete_event(phone, uid)

    p = sync(env, common)
    line = calendar_line(p)
    assert p.returncode == 4, p.stderr  # refused, as an import that keeps events is, and kept tasks are
    assert "kept 4 no longer listed" in line and "these 4 events need the user's yes" in line, p.stderr
    assert "sync --yes" in line  # what works, said in the same line
    assert len(busy_here(env, common)) == 5

    p = sync(env, common, "--yes")
    assert p.returncode == 0 and "4 gone" in calendar_line(p) and "kept" not in calendar_line(p), p.stderr
    assert busy_here(env, common) == {"meeting 4": at(START + dt.timedelta(hours=4))}


def test_more_than_three_changed_there_are_left_as_they_were_without_a_yes(tmp_path, radicale):
    url, phone = new_list(radicale, ("VEVENT",))
    env, common = setup(tmp_path, url)
    uids = [put_event(phone, f"meeting {i}", START + dt.timedelta(hours=i)) for i in range(5)]
    sync(env, common)
    for i, uid in enumerate(uids[:4]):
        put_event(phone, f"review {i}", START + dt.timedelta(hours=i), uid=uid)

    p = sync(env, common)  # piped: one line, exit 4, no internal error
    line = calendar_line(p)
    assert p.returncode == 4 and "left 4 changed there as they were" in line and "--yes" in line, p.stderr
    assert "meeting 0" in busy_here(env, common)
    p = sync(env, common, "--yes")
    assert p.returncode == 0 and "review 0" in busy_here(env, common), p.stderr


def test_in_a_terminal_the_sync_asks_about_many_gone_and_keeps_them_on_no(tmp_path, radicale, pty_planner):
    import pexpect  # here, not at the top: conftest marks a module that imports it as all terminal tests

    url, phone = new_list(radicale, ("VEVENT",))
    env, common = setup(tmp_path, url)
    uids = [put_event(phone, f"meeting {i}", START + dt.timedelta(hours=i)) for i in range(5)]
    sync(env, common)
    for uid in uids[:4]:
        delete_event(phone, uid)
    settings = {k: env[k] for k in ("PLANNER_CALDAV_CALENDARS", "PLANNER_CALDAV_USER", "PLANNER_CALDAV_PASSWORD")}

    child = pty_planner(*common, "sync", prompt=r"Go ahead\?", **settings)
    assert all(f'"meeting {i}"' in child.before for i in range(4)) and "meeting 4" not in child.before
    child.sendline("n")
    child.expect(r"kept 4 no longer listed \(the user said no\)")
    child.expect(pexpect.EOF)
    assert len(busy_here(env, common)) == 5

    child = pty_planner(*common, "sync", prompt=r"Go ahead\?", **settings)
    child.sendline("y")
    child.expect("4 gone")
    child.expect(pexpect.EOF)
    assert set(busy_here(env, common)) == {"meeting 4"}


def test_three_gone_at_once_go_without_a_question(tmp_path, radicale):
    url, phone = new_list(radicale, ("VEVENT",))
    env, common = setup(tmp_path, url)
    uids = [put_event(phone, f"call {i}", START + dt.timedelta(hours=i)) for i in range(4)]
    sync(env, common)
    for uid in uids[:3]:
        delete_event(phone, uid)
    p = sync(env, common)
    assert p.returncode == 0 and "3 gone" in calendar_line(p), p.stderr
    assert set(busy_here(env, common)) == {"call 3"}


# ---------------------------------------------------------------- 4. undo


def test_events_that_fell_out_of_the_window_read_are_not_taken_for_gone(tmp_path, radicale):
    """A calendar read for a window (a week back, 90 days on) says nothing of events outside it."""
    url, phone = new_list(radicale, ("VEVENT",))
    env, common = setup(tmp_path, url)
    for i in range(5):
        put_event(phone, f"meeting {i}", START + dt.timedelta(hours=i))
    assert calendar_line(sync(env, common)).endswith(": 5 events (5 new)")
    later = [*common[:-1], (TODAY + dt.timedelta(days=30)).isoformat()]  # a month on: they are weeks back
    p = sync(env, later)
    assert p.returncode == 0 and calendar_line(p).endswith(": 0 events (0 new)"), p.stderr
    db = sqlite3.connect(tmp_path / "p.db")
    assert db.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 5
    db.close()


def test_a_repeat_that_ended_before_the_window_is_not_taken_for_gone(tmp_path, radicale):
    """A weekly series is stored with no end (its rule is read whole); once its UNTIL is weeks behind the
    window read, the server lists it no more, and it is still not gone."""
    url, phone = new_list(radicale, ("VEVENT",))
    env, common = setup(tmp_path, url)
    for i in range(4):
        text = event_text(f"series-{i}@phone.example", f"class {i}", START + dt.timedelta(hours=i))
        until = (START + dt.timedelta(days=15)).strftime("%Y%m%dT%H%M%S")
        phone.save_event(text.replace("END:VEVENT", f"RRULE:FREQ=WEEKLY;UNTIL={until}\r\nEND:VEVENT"))
    assert calendar_line(sync(env, common)).endswith(": 4 events (4 new)")
    later = [*common[:-1], (TODAY + dt.timedelta(days=60)).isoformat()]
    p = sync(env, later)
    assert p.returncode == 0 and calendar_line(p).endswith(": 0 events (0 new)"), p.stderr
    db = sqlite3.connect(tmp_path / "p.db")
    assert db.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 4
    db.close()


def test_undo_after_a_sync_leaves_the_mirror_as_the_server_has_it(tmp_path, radicale):
    url, phone = new_list(radicale, ("VEVENT",))
    env, common = setup(tmp_path, url)
    gone = put_event(phone, "cancelled talk", START)
    put_event(phone, "review", START + dt.timedelta(hours=2))
    sync(env, common)
    assert run_cli([*common, "add", "buy stamps"], env).returncode == 0
    delete_event(phone, gone)
    put_event(phone, "offsite", START + dt.timedelta(days=3))
    assert "1 gone" in calendar_line(sync(env, common))
    mirrored = {"review": at(START + dt.timedelta(hours=2)), "offsite": at(START + dt.timedelta(days=3))}
    assert busy_here(env, common) == mirrored

    p = run_cli([*common, "undo", "--yes"], env)
    assert p.returncode == 0 and "buy stamps" in p.stdout, p.stdout + p.stderr  # the user's own last change
    assert busy_here(env, common) == mirrored  # the server's events stay as the server has them
    assert run_cli([*common, "undo", "--yes"], env).stdout.strip() == "nothing to undo"


# ---------------------------------------------------------------- 5. a server that cannot be read


@pytest.mark.parametrize("how", ["500", "gone", "wrong password"])
def test_a_server_that_cannot_be_read_removes_nothing_and_says_so_in_one_line(tmp_path, how):
    with HostileDav() as server:
        env, common = setup(tmp_path, server.url)
        server.todos["/tasks/a.ics"] = event_text("a@x", "dentist", START)
        server.todos["/tasks/b.ics"] = event_text("b@x", "gym", START + dt.timedelta(hours=3))
        sync(env, common)
        before = busy_here(env, common)
        assert set(before) == {"dentist", "gym"}
        server.todos.clear()  # were it read, both would be gone
        if how == "500":
            server.fail["REPORT"] = (500, "disk on fire \x1b[31m")
        elif how == "gone":
            server.exists = False
        else:
            server.fail["REPORT"] = (401, "who are you")
        p = sync(env, common)
        line = calendar_line(p)
        assert f"calendar {server.url} not read: " in line and "\x1b" not in p.stderr, p.stderr
        assert busy_here(env, common) == before


@pytest.mark.slow
def test_a_stopped_server_removes_nothing_and_says_so_in_one_line(tmp_path):
    (tmp_path / "radicale").mkdir()
    server, base = start_radicale(tmp_path / "radicale")
    try:
        url, phone = new_list(base, ("VEVENT",))
        env, common = setup(tmp_path, url)
        put_event(phone, "dentist", START)
        put_event(phone, "gym", START + dt.timedelta(hours=3))
        sync(env, common)
        before = busy_here(env, common)
        assert set(before) == {"dentist", "gym"}
    finally:
        server.terminate()
        server.wait(10)
    p = sync(env, common)
    line = calendar_line(p)
    assert line.startswith(f"calendar {url} not read: cannot reach the CalDAV server"), p.stderr
    assert PASSWORD not in p.stderr
    assert busy_here(env, common) == before
