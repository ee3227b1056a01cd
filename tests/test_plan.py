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
    assert r["added"] == 0 and r["events"] == {"added": 4, "updated": 0, "removed": 0, "kept": 0}
    got = [(b.title, b.start, b.end) for b in busy(store)]
    local = dt.datetime(2026, 12, 1, 13, 0, tzinfo=dt.UTC).astimezone().replace(tzinfo=None)  # 15:00 at +2
    assert ("stand-up", dt.datetime(2026, 12, 1, 9, 30), dt.datetime(2026, 12, 1, 9, 45)) in got
    assert not any(s.date() == dt.date(2026, 12, 2) and t == "stand-up" for t, s, _ in got)  # EXDATE
    assert ("stand-up (late)", dt.datetime(2026, 12, 3, 11, 30), dt.datetime(2026, 12, 3, 11, 45)) in got
    assert ("offsite", dt.datetime(2026, 12, 4), dt.datetime(2026, 12, 5)) in got
    assert ("call with Berlin", local, local + dt.timedelta(hours=1)) in got
    assert not any("free" in t for t, _, _ in got)  # TRANSP:TRANSPARENT is free time
    assert "events" not in exchange.import_text(store, EVENTS, "ics")  # once: the same file again changes nothing
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
    assert day["unscheduled"] == [
        {"task_id": 2, "title": "pay rent", "reason": "past due", "detail": "was due Fri 2026-11-20 23:59"}
    ]
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
    assert "1 events" in read_calendars(ctx, config, TODAY)[0].line
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


# ---------------------------------------------------------------- the clock: --now, after hours, weekends, all day


def test_the_plan_starts_at_now_on_the_grid_and_after_hours_shows_the_next_working_day(tmp_path):
    shell(tmp_path, "add", "write", "report", "~1h")
    morning = json.loads(shell(tmp_path, "plan", "--json", "--now", "2026-12-01 10:32").stdout)
    assert morning["now"] == "2026-12-01T10:32" and morning["blocks"][0]["start"] == "2026-12-01T10:35"
    evening = shell(tmp_path, "plan", "--now", "2026-12-01 18:27")  # the issue: "longer than the horizon" at 18:27
    assert evening.returncode == 0, evening.stderr
    assert evening.stdout.startswith("working hours ended at 17:00: the next working day, Wednesday 2026-12-02\n")
    assert "Wednesday 2026-12-02\n  09:00-10:00  write report" in evening.stdout
    env_now = shell(tmp_path, "plan", "--json", env={"PLANNER_NOW": "2026-12-01 16:50"})
    assert json.loads(env_now.stdout)["unscheduled"] == [
        {
            "task_id": 1,
            "title": "write report",
            "reason": "no working time left today",
            "detail": "not enough working time left after 16:50",
        }
    ]
    bad = shell(tmp_path, "plan", "--now", "tomorrow-ish")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --now must be a local date and time")


def test_plan_week_on_a_weekend_plans_the_coming_working_week(tmp_path):
    shell(tmp_path, "add", "write", "report", "~2h")
    p = json.loads(shell(tmp_path, "plan", "week", "--json", "--now", "2026-12-05 11:00").stdout)  # a Saturday
    assert p["note"] == "no working time is left this week: the week of Mon 2026-12-07"
    assert p["days"][0]["day"] == "2026-12-07" and p["days"][0]["blocks"][0]["start"] == "2026-12-07T09:00"
    assert p["unscheduled"] == []  # before: "longer than the horizon"


def test_an_all_day_event_is_shown_as_all_day_and_is_the_reason_said(ctx, store, tmp_path):
    exchange.import_text(store, EVENTS, "ics")  # the offsite is all day on Friday 2026-12-04
    run(ctx, "add_task", title="call the bank", estimate="15m")
    friday = run(ctx, "plan_day", date="friday")
    assert friday["blocks"][0] == {
        "start": "2026-12-04T00:00",
        "end": "2026-12-05T00:00",
        "kind": "event",
        "title": "offsite",
        "event_id": friday["blocks"][0]["event_id"],
        "all_day": True,
    }
    assert friday["unscheduled"] == [
        {"task_id": 1, "title": "call the bank", "reason": "the day is taken by an all-day event", "detail": "offsite"}
    ]
    from planner.ui.views import plan_text

    assert "  all day      offsite" in plan_text(ctx, "friday", room=80)
    assert "00:00-00:00" not in plan_text(ctx, "week", room=80)


# ---------------------------------------------------------------- why here


def test_plan_why_and_the_json_say_why_each_block_is_there_and_why_not_for_the_rest(tmp_path):
    shell(tmp_path, "add", "write", "report", "friday", "~2h", "!high")
    shell(tmp_path, "add", "slides", "~1h", "start:friday")
    shell(tmp_path, "add", "pay", "rent", "2026-11-20")
    shell(tmp_path, "edit", "1", "+deep")
    text = shell(tmp_path, "plan", "--why", "--now", "2026-12-01 09:00", env={"COLUMNS": "120"}).stdout
    assert "why: due Fri 23:59; high priority; the earliest free time that holds it whole" in text
    assert "2  slides (not started yet: starts Fri 2026-12-04)" in text  # not "no free time left"
    assert "3  pay rent (past due: was due Fri 2026-11-20 23:59)" in text
    data = json.loads(shell(tmp_path, "plan", "--json", "--now", "2026-12-01 09:00").stdout)
    assert [b["why"] for b in data["blocks"] if b["kind"] == "task"] == [
        "due Fri 23:59; high priority; the earliest free time that holds it whole"
    ]
    assert {n["task_id"]: n["reason"] for n in data["unscheduled"]} == {2: "not started yet", 3: "past due"}
    pinned = shell(tmp_path, "plan", "--why", "--now", "2026-12-01 09:00").stdout
    assert "why:" in pinned and "why:" not in shell(tmp_path, "plan", "--now", "2026-12-01 09:00").stdout


def test_a_preference_and_a_pin_are_the_why_of_their_blocks(ctx, store):
    run(ctx, "add_task", title="design", estimate="2h", tags=["focus"])
    run(ctx, "add_task", title="report", estimate="1h")
    run(ctx, "add_preference", kind="prefer", when="afternoons", tasks="focus")
    run(ctx, "schedule_task", id=2, when="4pm")
    blocks = {b["title"]: b for b in run(ctx, "plan_day")["blocks"]}
    assert blocks["design"]["why"] == "a preferred time (prefer afternoons for focus)"
    assert blocks["report"]["why"] == "pinned" and blocks["report"]["pinned"]


# ---------------------------------------------------------------- the day as it goes


def test_the_day_as_it_goes_past_blocks_not_done_are_planned_again_and_said_done_early_frees_and_pins_stay(tmp_path):
    shell(tmp_path, "add", "write", "report", "today", "~2h", "!high")
    shell(tmp_path, "add", "call", "the", "bank", "~30m")
    shell(tmp_path, "add", "review", "slides", "~1h")
    first = json.loads(shell(tmp_path, "plan", "--json", "--now", "2026-12-01 09:00").stdout)
    at = {b["title"]: (b["start"][11:], b["end"][11:]) for b in first["blocks"]}
    assert at == {
        "write report": ("09:00", "11:00"),
        "call the bank": ("11:00", "11:30"),
        "review slides": ("11:30", "12:30"),
    }
    from planner.storage.db import Store

    store = Store(tmp_path / "planner.db")
    try:
        from planner.tools import ToolContext

        ctx = ToolContext(store=store, today=lambda: TODAY, plan_from=dt.datetime(2026, 12, 1, 11, 40), turn="pin")
        run(ctx, "schedule_task", id=3, when="4pm")
    finally:
        store.close()
    shell(tmp_path, "done", "2", "--now", "2026-12-01 11:40")  # the bank, done early
    later = shell(tmp_path, "plan", "--json", "--now", "2026-12-01 11:40")
    data = json.loads(later.stdout)
    blocks = {b["title"]: b for b in data["blocks"]}
    assert "call the bank" not in blocks  # done: its block is free again
    assert (blocks["review slides"]["start"][11:], blocks["review slides"]["pinned"]) == ("16:00", True)
    assert blocks["write report"]["start"][11:] == "11:40"  # its block passed and it is not done: planned again
    assert data["replanned"] == [
        {
            "task_id": 1,
            "title": "write report",
            "reason": "planned earlier and not done",
            "detail": "was 09:00-11:00; planned again at 11:40",
        }
    ]
    text = shell(tmp_path, "plan", "--now", "2026-12-01 11:40", env={"COLUMNS": "100"}).stdout
    assert "planned earlier and not done:\n     1  write report (was 09:00-11:00; planned again at 11:40)" in text


def test_a_re_plan_in_a_new_process_after_an_event_arrives_keeps_the_blocks_that_hold(tmp_path):
    shell(tmp_path, "add", "draft", "~2h")
    shell(tmp_path, "add", "email", "~30m")
    shell(tmp_path, "add", "read", "~1h")
    before = json.loads(shell(tmp_path, "plan", "--json", "--now", "2026-12-03 09:00").stdout)
    (tmp_path / "late.ics").write_text(
        EVENTS.split("BEGIN:VEVENT")[0]
        + "BEGIN:VEVENT\r\nUID:late@work\r\nSUMMARY:late meeting\r\n"
        + "DTSTART:20261203T163000\r\nDTEND:20261203T170000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    shell(tmp_path, "import", str(tmp_path / "late.ics"))
    after = json.loads(shell(tmp_path, "plan", "--json", "--now", "2026-12-03 09:00").stdout)
    spans = lambda p: {(b["task_id"], b["start"], b["end"]) for b in p["blocks"] if b["kind"] == "task"}  # noqa: E731
    assert spans(after) == spans(before)  # nothing was in the way of the meeting: nothing moved
    assert all(b.get("part") is None for b in after["blocks"])  # and nothing was split


# ---------------------------------------------------------------- the phone follows


def test_the_phone_follows_a_re_plan_moving_only_what_moved_and_keeping_the_mornings_past(ctx, store, radicale):
    from planner.settings import Config
    from planner.sync.plan_publish import publish

    plan_url, plan_cal = new_list(radicale, ("VEVENT",))
    config = Config(caldav_plan=plan_url, caldav_user=USER, caldav_password=PASSWORD)
    run(ctx, "add_task", title="write report", estimate="2h")
    run(ctx, "add_task", title="call the bank", estimate="30m")
    run(ctx, "add_task", title="read paper", estimate="1h")
    nine = dataclasses.replace(ctx, plan_from=dt.datetime(2026, 12, 1, 9, 0))
    assert "3 blocks written, 0 removed, 0 unchanged" in publish(nine, config, "today")
    run(ctx, "add_event", title="dentist", when="today 11:00-11:30")  # lands on the bank call
    five_past = dataclasses.replace(ctx, plan_from=dt.datetime(2026, 12, 1, 9, 5))
    said = publish(five_past, config, "today")
    assert "1 blocks written, 0 removed, 2 unchanged" in said, said
    phone = {str(e.icalendar_component["summary"]): e.icalendar_component for e in plan_cal.events()}
    assert phone["call the bank"]["dtstart"].dt == dt.datetime(2026, 12, 1, 12, 30)
    assert phone["write report"]["dtstart"].dt == dt.datetime(2026, 12, 1, 9, 0)  # under way: where it was
    run(ctx, "complete_task", id=2)  # the bank, done early
    noon = dataclasses.replace(ctx, plan_from=dt.datetime(2026, 12, 1, 12, 10))
    # the bank's block goes; the report, whose block passed and is not done, moves to the afternoon (planned
    # again, never dropped); the paper, under way, stays
    assert "1 blocks written, 1 removed, 1 unchanged" in publish(noon, config, "today")
    phone = {str(e.icalendar_component["summary"]): e.icalendar_component for e in plan_cal.events()}
    assert set(phone) == {"write report", "read paper"}
    assert phone["write report"]["dtstart"].dt == dt.datetime(2026, 12, 1, 12, 30)
    assert phone["read paper"]["dtstart"].dt == dt.datetime(2026, 12, 1, 11, 30)


def test_slash_plan_in_the_full_terminal_marks_now(fake, pty_planner, tmp_path):
    shell(tmp_path, "add", "write", "report", "~1h")
    shell(tmp_path, "add", "call", "the", "bank", "~30m")
    child = pty_planner("--no-auto-memory", term="xterm", prompt="you>", PLANNER_NOW="2026-12-01 10:32")
    child.sendline("/plan")
    child.expect("Tuesday 2026-12-01")
    child.expect("── now 10:32 ──")  # a line at now, before what comes after it
    child.expect("10:35-11:35")  # the plan starts at now, on the five-minute grid
    child.expect("11:35-12:05")
    child.sendline("/plan why")
    child.expect("why: the earliest free time that holds it whole")
    assert not fake.chats("main")


def test_an_undone_preference_is_made_again_by_redo(ctx):
    from planner.storage.preferences import preferences
    from planner.tools.undo import redo_newest, undo_newest

    run(dataclasses.replace(ctx, turn="t1"), "add_preference", kind="avoid", when="fridays")
    assert len(preferences(ctx.store.conn())) == 1
    assert undo_newest(ctx).lines and preferences(ctx.store.conn()) == []
    redone = redo_newest(ctx)
    assert redone.lines and "made again" in redone.lines[0], redone
    assert [p["said"] for p in preferences(ctx.store.conn())] == ["avoid fridays"]
    assert undo_newest(ctx).lines and preferences(ctx.store.conn()) == []  # and it can be undone again
