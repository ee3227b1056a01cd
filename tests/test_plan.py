"""Plan my day: calendar events as busy time, working hours and preferences, the tools, `plan` from the shell
with Ollama stopped, /plan in a session, and the blocks on the user's calendar (Radicale)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import icalendar
import pytest
from helpers import TODAY, clean_env, run, run_cli
from phone import PASSWORD, USER, new_list

from planner.schedule import Hours
from planner.storage import calendar, exchange
from planner.tools.undo import undo_newest

AT = dt.datetime(2026, 12, 1, 8, 0)

EVENTS = """BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//work//EN\r
BEGIN:VTIMEZONE\r
TZID:Fixed/Plus2\r
BEGIN:STANDARD\r
DTSTART:19700101T000000\r
TZOFFSETFROM:+0200\r
TZOFFSETTO:+0200\r
END:STANDARD\r
END:VTIMEZONE\r
BEGIN:VEVENT\r
UID:standup@work\r
SUMMARY:stand-up\r
DTSTART:20261201T093000\r
DTEND:20261201T094500\r
RRULE:FREQ=DAILY;COUNT=10\r
EXDATE:20261202T093000\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:standup@work\r
RECURRENCE-ID:20261203T093000\r
SUMMARY:stand-up (late)\r
DTSTART:20261203T113000\r
DTEND:20261203T114500\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:offsite@work\r
SUMMARY:offsite\r
DTSTART;VALUE=DATE:20261204\r
DTEND;VALUE=DATE:20261205\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:reminder@work\r
SUMMARY:a note to self (free)\r
DTSTART:20261201T100000\r
DTEND:20261201T120000\r
TRANSP:TRANSPARENT\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:zoned@work\r
SUMMARY:call with Berlin\r
DTSTART;TZID=Fixed/Plus2:20261201T150000\r
DTEND;TZID=Fixed/Plus2:20261201T160000\r
END:VEVENT\r
END:VCALENDAR\r
"""


def busy(store, days=5):
    start = dt.datetime.combine(TODAY, dt.time())
    return calendar.between(store.conn(), start, start + dt.timedelta(days=days))


def test_an_ics_files_events_are_busy_time_with_repeats_exceptions_zones_and_all_day(store):
    r = exchange.import_text(store, EVENTS, "ics")
    assert r["added"] == 0 and r["events"] == {"added": 4, "updated": 0}
    got = [(b.title, b.start, b.end) for b in busy(store)]
    local = dt.datetime(2026, 12, 1, 13, 0, tzinfo=dt.UTC).astimezone().replace(tzinfo=None)  # 15:00 at +2
    assert ("stand-up", dt.datetime(2026, 12, 1, 9, 30), dt.datetime(2026, 12, 1, 9, 45)) in got
    assert not any(s.date() == dt.date(2026, 12, 2) and t == "stand-up" for t, s, _ in got)  # EXDATE
    assert ("stand-up (late)", dt.datetime(2026, 12, 3, 11, 30), dt.datetime(2026, 12, 3, 11, 45)) in got
    assert ("offsite", dt.datetime(2026, 12, 4), dt.datetime(2026, 12, 5)) in got
    assert ("call with Berlin", local, local + dt.timedelta(hours=1)) in got
    assert not any("free" in t for t, _, _ in got)  # TRANSP:TRANSPARENT is free time
    assert exchange.import_text(store, EVENTS, "ics")["events"] == {"added": 0, "updated": 4}  # once
    assert run_tasks(store) == []  # events are never tasks


def run_tasks(store):
    return exchange.all_tasks(store, with_copies=False)


def test_the_plan_goes_around_events_inside_working_hours_and_urgent_first(ctx, store):
    exchange.import_text(store, EVENTS, "ics")
    run(ctx, "add_task", title="write report", estimate="2 hours", due_date="friday", priority="high")
    run(ctx, "add_task", title="call the bank", estimate="15m")
    run(ctx, "add_task", title="tidy desk")  # no estimate: 30 minutes, marked guessed
    out = run(ctx, "plan_day", date="today")
    tasks = [b for b in out["blocks"] if b["kind"] == "task"]
    events = [b for b in out["blocks"] if b["kind"] == "event"]
    placed = {b["title"]: (b["start"][11:], b["end"][11:]) for b in tasks}
    # The most urgent task takes the earliest gap that holds it whole (after the stand-up); the small one
    # fits in before it; the guessed one after both.
    assert placed == {
        "call the bank": ("09:00", "09:15"),
        "write report": ("09:45", "11:45"),
        "tidy desk": ("11:45", "12:15"),
    }
    assert tasks[-1]["guessed"] and out["estimates"] == "1 task has no estimate and counts as 30 minutes"
    for t in tasks:
        assert "09:00" <= t["start"][11:] and t["end"][11:] <= "17:00"
        assert not any(t["start"] < e["end"] and e["start"] < t["end"] for e in events)


def test_hours_preferences_and_what_does_not_fit_say_why(ctx, store):
    ctx = dataclasses.replace(ctx, hours=Hours(week=(((dt.time(9), dt.time(12)),),) * 5 + ((), ())))
    run(ctx, "add_task", title="overdue thing", due_date="2026-11-20", estimate="30m")
    run(ctx, "add_task", title="marathon", estimate="2 days")
    run(ctx, "add_task", title="call the bank", estimate="30m")
    out = run(ctx, "plan_day", date="week")
    reasons = {n["title"]: n["reason"] for n in out["unscheduled"]}
    assert reasons == {"overdue thing": "past due", "marathon": "longer than the horizon"}
    assert "ask the user for a new date" in out["past_due"]  # the model is told what to do about it
    blocks = [b for d in out["days"] for b in d["blocks"]]
    assert [b["title"] for b in blocks] == ["call the bank"] and blocks[0]["end"][11:] <= "12:00"
    run(ctx, "add_preference", kind="avoid", when="fridays")
    run(ctx, "add_task", title="deep work", estimate="3h", tags=["focus"])
    run(ctx, "add_preference", kind="prefer", when="thursday mornings", tasks="focus")
    # 7 hours: with Friday's morning it would fit (2.5 h Tuesday, 3 Wednesday, 1.5 Friday); without, it cannot.
    run(ctx, "add_task", title="sort the archive", estimate="7h")
    week = run(ctx, "plan_day", date="week")
    placed = [b for d in week["days"] for b in d["blocks"] if b["title"] == "deep work"]
    assert placed and all(b["start"].startswith("2026-12-03") for b in placed)
    assert not any(b["start"].startswith("2026-12-04") for d in week["days"] for b in d["blocks"])
    assert {n["title"]: n["reason"] for n in week["unscheduled"]}["sort the archive"] == "no free time left"
    assert undo_newest(ctx).lines == ['removed task 5 "sort the archive" (it was added)']
    assert undo_newest(ctx).lines == ['removed preference 2 "prefer thursday mornings for focus" (it was added)']


def test_an_event_said_in_words_is_busy_time_resolved_in_code(ctx, store):
    out = run(ctx, "add_event", title="meeting with Ana", when="tomorrow 2-3pm")
    assert out["event"] == {
        "title": "meeting with Ana",
        "start": "2026-12-02 14:00",
        "end": "2026-12-02 15:00",
        "all_day": False,
    }
    assert [(b.title, b.start) for b in busy(store)] == [("meeting with Ana", dt.datetime(2026, 12, 2, 14))]
    agenda = run(ctx, "agenda")
    assert agenda["days"][0]["events"] == [{"title": "meeting with Ana", "when": "14:00-15:00"}]
    assert run(ctx, "list_tasks")["tasks"] == []  # tasks lists never show events
    one = run(ctx, "add_event", title="dentist", when="friday 10am")
    assert one["event"]["end"] == "2026-12-04 11:00" and "an hour" in one["assumed"]


def test_find_time_answers_the_dentist_question_from_a_preference(ctx, store):
    run(ctx, "add_event", title="busy", when="wednesday 12-14")
    out = run(ctx, "find_time", minutes=60, prefer="wednesday afternoons")
    first = out["slots"][0]
    assert first["weekday"] == "Wednesday" and first["start"] == "2026-12-02 14:00"
    two = run(ctx, "find_time", minutes=120, before="this week")
    assert two["slots"] and all(s["start"] < "2026-12-07" for s in two["slots"])
    none = run(ctx, "find_time", minutes=600)
    assert none["slots"] == [] and "none_found" in none


def test_a_pinned_task_stays_where_it_was_put_and_undo_unpins_it(ctx, store):
    run(ctx, "add_task", title="report", estimate="1h")
    run(ctx, "add_event", title="lunch", when="today 12-13")
    pinned = run(ctx, "schedule_task", id=1, when="the afternoon")
    assert pinned["pinned"]["start"] == "2026-12-01 13:00"  # the first free hour of the afternoon
    run(ctx, "add_task", title="urgent", estimate="4h", priority="high", due_date="today")
    blocks = {b["title"]: b for b in run(ctx, "plan_day")["blocks"]}
    assert blocks["report"]["start"] == "2026-12-01T13:00" and blocks["report"]["pinned"]
    exact = run(ctx, "schedule_task", id=1, when="3pm")
    assert exact["pinned"]["start"] == "2026-12-01 15:00"
    undo_newest(ctx)
    assert store.conn().execute("SELECT scheduled_at FROM tasks WHERE id = 1").fetchone()[0] == "2026-12-01T13:00"


def test_bad_planning_words_are_errors_the_model_can_act_on(ctx):
    from planner.tools import dispatch

    for name, args, words in [
        ("plan_day", {"date": "yesterday"}, "is past"),
        ("add_event", {"title": "x", "when": "whenever"}, "cannot read"),
        ("add_preference", {"kind": "prefer", "when": "mornings"}, "prefer needs tasks"),
        ("find_time", {"minutes": 30, "prefer": "blue moons"}, "cannot read"),
        ("schedule_task", {"id": 9, "when": "3pm"}, "no task with id=9"),
    ]:
        out, ok = dispatch(ctx, name, args)
        assert not ok and words in out["error"], (name, out)


# ---------------------------------------------------------------- from the shell, Ollama stopped


def shell(tmp_path, *args, env=None):
    e = clean_env(
        **{
            "OLLAMA_HOST": "http://127.0.0.1:9",
            "PLANNER_HOME": str(tmp_path),
            "PLANNER_TODAY": TODAY.isoformat(),
            **(env or {}),
        }
    )
    return run_cli(args, e)


def test_plan_json_from_the_shell_has_the_promised_shape_and_is_the_same_each_time(tmp_path):
    (tmp_path / "work.ics").write_text(EVENTS)
    shell(tmp_path, "import", str(tmp_path / "work.ics"))
    shell(tmp_path, "add", "write", "report", "friday", "~2h", "!high")
    shell(tmp_path, "add", "pay", "rent", "2026-11-20")
    p = shell(tmp_path, "plan", "--json")
    assert p.returncode == 0, p.stderr
    day = json.loads(p.stdout)
    assert set(day) == {"day", "blocks", "unscheduled"} and day["day"] == "2026-12-01"
    assert {"start", "end", "kind", "title"} <= set(day["blocks"][0])
    assert day["unscheduled"] == [{"task_id": 2, "title": "pay rent", "reason": "past due"}]
    assert shell(tmp_path, "plan", "--json").stdout == p.stdout  # deterministic
    week = json.loads(shell(tmp_path, "plan", "week", "--json").stdout)
    assert [d["day"] for d in week["days"]] == [f"2026-12-0{i}" for i in range(1, 7)]
    text = shell(tmp_path, "plan", env={"COLUMNS": "60"}).stdout
    assert text.startswith("Tuesday 2026-12-01\n") and "write report" in text and "past due" in text
    assert "past due: a new date plans it (`edit 2 today`)" in text
    assert all(len(line) <= 60 for line in text.splitlines())


def test_work_hours_come_from_the_settings_and_a_bad_setting_is_one_line(tmp_path):
    shell(tmp_path, "add", "task", "~1h")
    p = shell(tmp_path, "plan", "--json", env={"PLANNER_WORK_HOURS": "mon-sun 20:00-22:00"})
    assert json.loads(p.stdout)["blocks"][0]["start"] == "2026-12-01T20:00"
    p = shell(tmp_path, "plan", env={"PLANNER_WORK_HOURS": "nine to five"})
    assert p.returncode == 2 and p.stderr.startswith("error: PLANNER_WORK_HOURS takes days and times")


def test_export_plan_writes_the_blocks_as_events_linked_to_their_tasks(tmp_path):
    shell(tmp_path, "add", "write", "report", "~90m")
    p = shell(tmp_path, "export", "--plan", "today")
    cal = icalendar.Calendar.from_ical(p.stdout)
    (event,) = [c for c in cal.subcomponents if c.name == "VEVENT"]
    assert str(event["summary"]) == "write report" and event["dtstart"].dt == dt.datetime(2026, 12, 1, 9, 0)
    assert str(event["related-to"]).endswith("@planner") and str(event["uid"]).startswith("plan-")


def test_slash_plan_in_a_session_shows_the_plan_without_the_model(tmp_path, fake):
    env = {"OLLAMA_HOST": fake.url}
    shell(tmp_path, "add", "write", "report", "~1h")
    p = shell(tmp_path, "--model", "main", "--critic-model", "critic", "--embed-model", "embed", "/plan", env=env)
    assert p.returncode == 0 and "09:00-10:00  write report  task 1" in p.stdout
    assert not fake.chats("main")
    p = shell(
        tmp_path, "--model", "main", "--critic-model", "critic", "--embed-model", "embed", "/plan publish", env=env
    )
    assert "PLANNER_CALDAV_PLAN" in p.stdout  # no calendar named: nothing written, and it says how


# ---------------------------------------------------------------- the phone


def test_the_plan_reaches_a_calendar_of_its_own_and_moves_with_the_tasks(ctx, store, radicale):
    from planner.settings import Config
    from planner.sync.plan_publish import PublishError, publish, read_calendars

    plan_url, plan_cal = new_list(radicale, ("VEVENT",))
    busy_url, busy_cal = new_list(radicale, ("VEVENT",))
    theirs = icalendar.Event()
    theirs.add("uid", "theirs@phone")
    theirs.add("dtstamp", dt.datetime.now(dt.UTC))
    theirs.add("summary", "dinner")
    theirs.add("dtstart", dt.datetime(2026, 12, 1, 9, 0))
    theirs.add("dtend", dt.datetime(2026, 12, 1, 10, 0))
    wrap = icalendar.Calendar()
    wrap.add("prodid", "-//phone//EN")
    wrap.add("version", "2.0")
    wrap.add_component(theirs)
    busy_cal.save_event(wrap.to_ical().decode())
    plan_cal.save_event(wrap.to_ical().decode().replace("theirs@phone", "mine@phone"))
    config = Config(caldav_plan=plan_url, caldav_calendars=(busy_url,), caldav_user=USER, caldav_password=PASSWORD)
    assert "1 events" in read_calendars(ctx, config, TODAY)[0]
    run(ctx, "add_task", title="write report", estimate="1h")
    run(ctx, "add_task", title="call the bank", estimate="30m")
    assert "2 blocks written" in publish(ctx, config, "today")
    events = {str(e.icalendar_component["summary"]): e.icalendar_component for e in plan_cal.events()}
    assert set(events) == {"dinner", "write report", "call the bank"}  # theirs untouched
    assert events["write report"]["dtstart"].dt == dt.datetime(2026, 12, 1, 10, 0)  # after the busy dinner
    run(ctx, "complete_task", id=2)
    assert "1 removed" in publish(ctx, config, "today")
    assert {str(e.icalendar_component["summary"]) for e in plan_cal.events()} == {"dinner", "write report"}
    with pytest.raises(PublishError, match="calendar of its own"):
        publish(ctx, dataclasses.replace(config, caldav_plan=busy_url), "today")
