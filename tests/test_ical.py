"""Tasks as iCalendar: to-dos both ways, events for calendars, files from other apps (planner/storage/ical.py)."""

import datetime as dt

import icalendar
from helpers import clean_env, run, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.storage import exchange, ical
from planner.storage.db import Store


def test_ics_has_events_for_dated_tasks_that_a_calendar_can_read(planner, store):
    run(
        planner,
        "add_task",
        title="a meeting with a very long title " * 4,
        due_date="2026-12-09",
        due_time="14:30",
        repeat="every 2 weeks",
        notes="room 4; bring notes, please",
    )
    text = exchange.to_ics(exchange.all_tasks(store), now=dt.datetime(2026, 12, 1, tzinfo=dt.UTC), events=True)
    assert text.startswith("BEGIN:VCALENDAR\r\n") and text.endswith("END:VCALENDAR\r\n")
    assert all(len(line.encode()) <= 75 for line in text.split("\r\n"))
    unfolded = text.replace("\r\n ", "")
    items = {str(c["summary"]): c for c in icalendar.Calendar.from_ical(text).walk() if c.name == "VEVENT"}
    taxes = items["file taxes"]
    assert (taxes["dtstart"].dt, taxes["dtend"].dt, taxes["priority"]) == (
        dt.date(2026, 11, 20),
        dt.date(2026, 11, 21),
        1,
    )
    meeting = items[("a meeting with a very long title " * 4).strip()]
    assert (
        meeting["dtstart"].dt == dt.datetime(2026, 12, 9, 14, 30)
        and meeting["rrule"].to_ical() == b"FREQ=WEEKLY;INTERVAL=2"
    )
    assert "DESCRIPTION:room 4\\; bring notes\\, please" in unfolded
    assert unfolded.count("BEGIN:VEVENT") == 6 and unfolded.count("BEGIN:VTODO") == 7  # events: not the undated book


# ---------------------------------------------------------------- iCalendar to-dos

OTHER_APP_ICS = """BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//Another App//EN\r
BEGIN:VTODO\r
UID:{5C1E-42}\r
SUMMARY:Renew passport\r
DUE;TZID=Europe/Lisbon:20261210T090000\r
PRIORITY:2\r
CATEGORIES:admin,travel\r
DESCRIPTION:bring two photos\r
STATUS:NEEDS-ACTION\r
END:VTODO\r
BEGIN:VTODO\r
UID:done-1@example.org\r
SUMMARY:Book flights\r
DUE;VALUE=DATE:20261130\r
STATUS:COMPLETED\r
COMPLETED:20261129T180000Z\r
END:VTODO\r
BEGIN:VTODO\r
UID:no-title@example.org\r
DUE;VALUE=DATE:20261201\r
END:VTODO\r
BEGIN:VEVENT\r
UID:party@example.org\r
SUMMARY:Ana's birthday party\r
DTSTART;VALUE=DATE:20261212\r
RRULE:FREQ=YEARLY\r
END:VEVENT\r
END:VCALENDAR\r
"""


def test_ics_export_is_to_dos_that_import_back_as_the_same_tasks(planner, store, tmp_path):
    run(
        planner,
        "add_task",
        title="stand-up",
        due_date="2026-12-02",
        due_time="09:15",
        repeat="every weekday",
        notes="line one\nline two; with, punctuation",
    )
    text = exchange.to_ics(exchange.all_tasks(store))
    todos = [c for c in icalendar.Calendar.from_ical(text).walk() if c.name == "VTODO"]
    assert len(todos) == 7 and "BEGIN:VEVENT" not in text  # every task, done ones too; events only when asked
    taxes = next(c for c in todos if str(c["summary"]) == "file taxes")
    assert (taxes["due"].dt, taxes["priority"], str(taxes["status"])) == (dt.date(2026, 11, 20), 1, "NEEDS-ACTION")
    chore = next(c for c in todos if str(c["summary"]) == "old chore")
    assert str(chore["status"]) == "COMPLETED" and chore["completed"].dt.tzinfo is not None
    fresh = Store(tmp_path / "fresh.db")
    try:
        result = exchange.import_text(fresh, text, exchange.guess_format("tasks.ics", text))
        assert result == {"added": 7, "skipped": 0, "problems": []}
        keys = ("uid", "title", "status", "due_date", "due_time", "priority", "tags", "notes", "repeat")
        strip = lambda tasks: [{k: t[k] for k in keys} for t in tasks]  # noqa: E731
        assert strip(exchange.all_tasks(fresh)) == strip(exchange.all_tasks(store))
        again = exchange.import_text(fresh, text, "ics")
        assert again == {"added": 0, "skipped": 7, "problems": []}  # the same uids: nothing twice
    finally:
        fresh.close()


def test_ics_from_another_app_imports_its_to_dos_and_events_only_when_asked(store):
    result = exchange.import_text(store, OTHER_APP_ICS, exchange.guess_format("calendar.txt", OTHER_APP_ICS))
    assert result["added"] == 2 and result["skipped"] == 0
    assert len(result["problems"]) == 1 and "title must not be empty" in result["problems"][0]  # reported, not written
    tasks = {t["title"]: t for t in exchange.all_tasks(store)}
    passport = tasks["Renew passport"]
    local = dt.datetime(2026, 12, 10, 9, 0, tzinfo=dt.timezone(dt.timedelta(0))).astimezone()  # Lisbon is UTC+0 then
    assert passport["due_date"] == local.date().isoformat() and passport["due_time"] == f"{local:%H:%M}"
    assert (passport["priority"], passport["tags"], passport["notes"]) == (
        "high",
        ["admin", "travel"],
        "bring two photos",
    )
    assert passport["uid"].startswith("ics-")  # {5C1E-42} is not a plain word; the same UID maps to the same uid
    assert tasks["Book flights"]["status"] == "done" and tasks["Book flights"]["uid"] == "done-1@example.org"
    assert "Ana's birthday party" not in tasks
    with_events = exchange.import_text(store, OTHER_APP_ICS, "ics", events=True)
    assert with_events["added"] == 1 and with_events["skipped"] == 2
    party = next(t for t in exchange.all_tasks(store) if t["title"] == "Ana's birthday party")
    assert (party["due_date"], party["repeat"]) == ("2026-12-12", "FREQ=YEARLY")


def test_an_ics_file_that_is_not_a_calendar_is_one_problem_and_writes_nothing(store):
    result = exchange.import_text(store, "BEGIN:VCALENDAR\r\nthis is not ical\r\n", "ics")
    assert result["added"] == 0 and result["problems"][0].startswith("not a task file: not an iCalendar file")
    assert exchange.all_tasks(store) == []


def test_ics_import_and_export_from_the_command_line(store, tmp_path):
    env = clean_env(PLANNER_HOME=str(tmp_path))
    cal = tmp_path / "calendar.ics"
    cal.write_text(OTHER_APP_ICS)
    p = run_cli(["import", str(cal), "--events"], env)
    assert p.returncode == 0 and "imported 3 tasks" in p.stderr and "1 row not imported" in p.stderr
    assert "not imported: VTODO 3" in p.stderr  # the good rows are in; the odd one is named, not a failure
    p = run_cli(["export", "--format", "ics", "--events"], env)
    assert p.returncode == 0 and p.stdout.count("BEGIN:VTODO") == 3 and p.stdout.count("BEGIN:VEVENT") == 3
    p = run_cli(["export", "--events"], env)
    assert p.returncode == 2 and p.stderr == "error: --events needs --format ics\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    title=st.text(min_size=1, max_size=60).filter(lambda s: s.strip() and ical.safe_text(s).strip() == s.strip()),
    notes=st.none() | st.text(min_size=1, max_size=60).filter(lambda s: ical.safe_text(s).strip() == s),
    due=st.none() | st.dates(dt.date(1990, 1, 1), dt.date(2100, 12, 31)),
    time=st.none() | st.times().map(lambda t: f"{t:%H:%M}"),
    priority=st.sampled_from([None, "high", "medium", "low"]),
    repeat=st.sampled_from([None, "FREQ=DAILY", "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE", "FREQ=MONTHLY;BYMONTHDAY=31,-1"]),
    done=st.booleans(),
)
def test_any_task_survives_ics_export_and_import(tmp_path_factory, title, notes, due, time, priority, repeat, done):
    task = {
        "uid": "u1",
        "title": title.strip(),
        "status": "done" if done else "open",
        "priority": priority,
        "due_date": due.isoformat() if due else None,
        "due_time": time if due else None,
        "tags": ["a", "b"],
        "notes": notes,
        "repeat": repeat if due else None,
        "created_at": None,
        "completed_at": "2026-11-30T18:00:00" if done else None,
    }
    fresh = Store(tmp_path_factory.mktemp("ics") / "p.db")
    try:
        assert exchange.import_text(fresh, exchange.to_ics([task]), "ics")["problems"] == []
        (back,) = exchange.all_tasks(fresh)
    finally:
        fresh.close()
    keys = ("uid", "title", "status", "due_date", "due_time", "priority", "tags", "notes", "repeat", "completed_at")
    assert {k: back[k] for k in keys} == {k: task[k] for k in keys}
