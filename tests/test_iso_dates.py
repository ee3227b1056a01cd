"""Every place a date is read accepts an ISO 8601 date, and a date with its time, as programs write them.

A time-range pattern once matched "26-12" inside "2026-12-31", so add_event, find_time and schedule_task
refused a plain ISO date; and "2026-12-31T10:00:00" lost its time. The property: for any moment and any
of the ISO forms (date; date and time with a space or a T; seconds, fractions; a zone after the T), every
reader gives the moment Python's own `datetime.fromisoformat` reads (the oracle), to the minute, in local
time: the date readers, the span readers, reminders, the shell's notation, and the tools that take them.
"""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.dates import resolve, resolve_remind
from planner.storage.db import Store
from planner.timespans import part_of_day, span
from planner.tools import ToolContext, dispatch
from planner.ui.quickadd import filters, read

TODAY = dt.date(1999, 12, 31)  # before every moment drawn, so each is ahead, as a due date is
FORMS = {
    "date": lambda m: f"{m:%Y-%m-%d}",
    "space": lambda m: f"{m:%Y-%m-%d %H:%M}",
    "T": lambda m: f"{m:%Y-%m-%dT%H:%M}",
    "seconds": lambda m: f"{m:%Y-%m-%dT%H:%M:%S}",
    "space seconds": lambda m: f"{m:%Y-%m-%d %H:%M:%S}",
    "fraction": lambda m: m.isoformat(timespec="microseconds"),
    "Z": lambda m: f"{m:%Y-%m-%dT%H:%M:%S}Z",
    "offset": lambda m: f"{m:%Y-%m-%dT%H:%M}+05:30",
}
MOMENTS = st.datetimes(min_value=dt.datetime(2000, 1, 2), max_value=dt.datetime(2099, 12, 30))
# Inside the default working hours (Monday to Friday, 09:00-17:00, whatever the zone), where a task can be pinned.
WORKING = st.builds(
    lambda day, minute: dt.datetime.combine(day, dt.time(12)) + dt.timedelta(minutes=minute),
    st.dates(dt.date(2000, 1, 3), dt.date(2099, 12, 30)).filter(lambda d: d.weekday() < 5),
    st.integers(-120, 120),
)


def oracle(text: str) -> tuple[dt.date, str | None]:
    """The moment Python reads in the text, as local wall-clock time to the minute; no time for a date alone."""
    if len(text) == 10:
        return dt.date.fromisoformat(text), None
    moment = dt.datetime.fromisoformat(text)
    if moment.tzinfo is not None:
        moment = moment.astimezone().replace(tzinfo=None)
    return moment.date(), f"{moment:%H:%M}"


@settings(max_examples=300)
@given(moment=MOMENTS, form=st.sampled_from(sorted(FORMS)))
def test_the_date_and_span_readers_read_every_iso_form(moment, form):
    text = FORMS[form](moment)
    day, clock = oracle(text)
    when = resolve(text, TODAY)
    assert (when.date, when.time) == (day, clock)
    start = dt.datetime.combine(day, dt.time.fromisoformat(clock or "00:00"))
    for reader in (span, part_of_day):
        got = reader(text, TODAY)
        assert got.start == start and got.all_day == (clock is None)
    assert resolve_remind(text, TODAY, None, None) == dt.datetime.combine(day, dt.time.fromisoformat(clock or "09:00"))
    if clock is not None:  # a range after the date: its times, not a piece of the date
        both = span(f"{day.isoformat()} 10:00-11:30", TODAY)
        assert (both.start.time(), both.end.time()) == (dt.time(10), dt.time(11, 30))
        assert part_of_day(f"after {text}", TODAY).start == start


@settings(max_examples=40, suppress_health_check=list(HealthCheck))
@given(moment=WORKING, form=st.sampled_from(sorted(f for f in FORMS if f != "offset")))
def test_the_shell_notation_and_every_tool_that_takes_a_date_read_every_iso_form(tmp_path_factory, moment, form):
    text = FORMS[form](moment)
    day, clock = oracle(text)
    store = Store(tmp_path_factory.mktemp("iso") / "p.db")
    try:
        ctx = ToolContext(store=store, today=lambda: TODAY, plan_from=dt.datetime.combine(TODAY, dt.time()))

        def ok(name: str, **args) -> dict:
            out, worked = dispatch(ctx, name, args)
            assert worked, (name, args, out)
            return out

        added = ok("add_task", title="x", due_date=text)["added"]
        assert (added["due_date"], added.get("due_time")) == (day.isoformat(), clock)
        for line in (["pay", "rent", text], [f"due:{text}", "pay", "rent"], ["pay", text, "rent"]):
            reading = read(line, TODAY)
            assert reading.title == "pay rent", line
            shown = ok("add_task", title=reading.title, **reading.args)["added"]
            assert (shown["due_date"], shown.get("due_time")) == (day.isoformat(), clock), line
        reminded = ok("add_task", **{"title": "y", **read(["y", f"remind:{text}"], TODAY).args})["added"]
        assert reminded["remind_at"] == f"{day.isoformat()} {clock or '09:00'}"
        assert filters([f"due:{text[:10]}"], TODAY)["due_before"] == day.isoformat()
        pinned = ok("schedule_task", id=added["id"], when=text)["pinned"]
        assert pinned["start"].startswith(day.isoformat()) and (clock is None or pinned["start"].endswith(clock))
        event = ok("add_event", title="party", when=text)["event"]
        assert event["start"].startswith(day.isoformat()) and (clock is None or event["start"].endswith(clock))
        assert ok("list_tasks", due_before=text, due_after=text, status="all")["count"] >= 1
        assert ok("plan_day", date=text[:10]).get("day", day.isoformat()) == day.isoformat()
        assert ok("find_time", minutes=15, after=text)["slots"][0]["start"] >= f"{day.isoformat()} {clock or '00:00'}"
    finally:
        store.close()


@pytest.mark.parametrize(
    "phrase, start, end",
    [
        ("2026-12-31 10:00-11:30", "2026-12-31T10:00", "2026-12-31T11:30"),
        ("2026-12-31 10-11am", "2026-12-31T10:00", "2026-12-31T11:00"),
        ("2026-12-31 10:00 for 2 hours", "2026-12-31T10:00", "2026-12-31T12:00"),
        ("2026-12-24 all day", "2026-12-24T00:00", "2026-12-25T00:00"),
        ("12/24 2-3pm", "2026-12-24T14:00", "2026-12-24T15:00"),
        ("tomorrow 2-3pm", "2026-12-02T14:00", "2026-12-02T15:00"),
    ],
)
def test_a_range_of_times_after_an_iso_date_is_the_range(phrase, start, end):
    got = span(phrase, dt.date(2026, 12, 1))
    assert (got.start.isoformat(timespec="minutes"), got.end.isoformat(timespec="minutes")) == (start, end)
