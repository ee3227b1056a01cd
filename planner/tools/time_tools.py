"""Finding and holding time: free slots of a length (`find_time`), and a task pinned at a time (`schedule_task`).

    find_time(minutes, after, before, prefer)   free slots of that length (the model proposes one)
    schedule_task(id, when)                     pin a task: "3pm", "tomorrow 9:30", "the afternoon" (first free slot)

Every time and window is read from the user's words in code (timespans.py); free time is working time (and
the untagged free preferences) less events, pinned tasks and untagged avoid preferences. A pinned task
stays where it is put: re-planning moves only tasks that are not pinned.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from planner.dates import DateError
from planner.schedule import DEFAULT_MINUTES, Horizon, round_up
from planner.storage import calendar
from planner.storage.gate import Change, Op, one
from planner.storage.tasks import require
from planner.timespans import part_of_day, weekly
from planner.tools.plan_inputs import inputs, now_of
from planner.tools.registry import ToolContext, ToolError, tool


def _free(ctx: ToolContext, start: dt.datetime, end: dt.datetime) -> list[tuple[dt.datetime, dt.datetime]]:
    """Free working time (and free preferences) between start and end: no event, no pinned task, no avoid."""
    got = inputs(ctx, Horizon(start, end))
    tasks, events, rules = got.tasks, got.events, got.rules
    busy = sorted(
        [(e.start, e.end) for e in events]
        + [(t.pinned, t.pinned + dt.timedelta(minutes=t.minutes or DEFAULT_MINUTES)) for t in tasks if t.pinned]
    )
    out = []
    day = start.date()
    while dt.datetime.combine(day, dt.time()) < end:
        windows = list(ctx.hours.week[day.weekday()])
        windows += [
            (r.start, r.end)
            for r in rules
            if r.kind == "free" and not r.tags and (not r.weekdays or day.weekday() in r.weekdays)
        ]
        avoid = [
            (r.start, r.end)
            for r in rules
            if r.kind == "avoid" and not r.tags and (not r.weekdays or day.weekday() in r.weekdays)
        ]
        for a, b in windows:
            lo = max(start, dt.datetime.combine(day, a))
            hi = min(
                end,
                dt.datetime.combine(day, b)
                if b != dt.time(0)
                else dt.datetime.combine(day, dt.time()) + dt.timedelta(days=1),
            )
            cut = busy + [
                (
                    dt.datetime.combine(day, x),
                    dt.datetime.combine(day, y)
                    if y != dt.time(0)
                    else dt.datetime.combine(day + dt.timedelta(days=1), dt.time()),
                )
                for x, y in avoid
            ]
            out += _minus(lo, hi, cut)
        day += dt.timedelta(days=1)
    merged: list[tuple[dt.datetime, dt.datetime]] = []
    for a, b in sorted(out):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        elif b > a:
            merged.append((a, b))
    return merged


def _minus(lo: dt.datetime, hi: dt.datetime, cut: list[tuple[dt.datetime, dt.datetime]]) -> list[tuple]:
    spans = [(lo, hi)] if hi > lo else []
    for a, b in cut:
        spans = [part for s, e in spans for part in ((s, min(e, a)), (max(s, b), e)) if part[1] > part[0]]
    return spans


@tool(
    {
        "minutes": {"type": "integer", "minimum": 5, "maximum": 1440},
        "after": {"type": "string", "description": "User's words; default now."},
        "before": {"type": "string", "description": "User's words; default a week ahead."},
        "prefer": {"type": "string", "description": "Only if the user named a time of week."},
    },
    required=("minutes",),
    read_only=True,
    title="Find free time",
    group="plan",
)
def find_time(
    ctx: ToolContext, minutes: int, after: str | None = None, before: str | None = None, prefer: str | None = None
) -> dict[str, Any]:
    """Find free slots of this many minutes in working time, around the calendar. Writes nothing."""
    start = round_up(now_of(ctx))
    if after:
        start = max(start, _moment(ctx, after, "after"))
    end = _moment(ctx, before, "before", end=True) if before else start + dt.timedelta(days=7)
    if end <= start:
        raise ToolError("before must come after after (and after now)")
    free = _free(ctx, start, end)
    if prefer:
        try:
            w = weekly(prefer)
        except DateError as e:
            raise ToolError(f"prefer: {e}") from None
        free = [
            (max(a, dt.datetime.combine(a.date(), w.start)), min(b, dt.datetime.combine(a.date(), w.end)))
            for a, b in free
            if not w.weekdays or a.weekday() in w.weekdays
        ]
    slots = [(a, b) for a, b in free if (b - a) >= dt.timedelta(minutes=minutes)]
    shown = [{"start": f"{a:%Y-%m-%d %H:%M}", "end": f"{b:%Y-%m-%d %H:%M}", "weekday": f"{a:%A}"} for a, b in slots[:8]]
    out: dict[str, Any] = {
        "minutes": minutes,
        "slots": shown,
        "searched": f"{start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M}",
    }
    if not shown:
        out["none_found"] = "no free slot that long in that time; ask the user for a later date or a shorter time"
    return out


def _moment(ctx: ToolContext, words: str, name: str, end: bool = False) -> dt.datetime:
    """The start of the window the words name, or with `end` its end ("before friday": by the end of Friday)."""
    w = " ".join(words.lower().split())
    w = {"this week": "end of week", "the week": "end of week", "week": "end of week"}.get(w, w)
    try:
        window = part_of_day(w, ctx.today())
    except DateError as e:
        raise ToolError(f"{name}: {e}") from None
    return window.end if end else window.start


@tool(
    {
        "id": {"type": "integer", "description": "The task's id."},
        "when": {"type": "string", "description": "User's words; none unpins."},
    },
    required=("id", "when"),
    changes_existing=True,
    title="Pin a task in the plan",
    group="plan",
)
def schedule_task(ctx: ToolContext, id: int, when: str) -> dict[str, Any]:  # noqa: A002
    """Pin a task at a time in the user's plan."""
    task = require(ctx.store.conn(), id)
    if when.strip().lower() in ("none", "unpin", ""):
        ctx.commit(lambda conn: one(Change(Op.EDIT, id, {"scheduled_at": None}, tool="schedule_task")))
        return {"unpinned": {"id": id, "title": task["title"]}}
    length = task.get("estimate_minutes") or DEFAULT_MINUTES
    try:
        window = part_of_day(when, _day_of(task, ctx))
    except DateError as e:
        raise ToolError(f"when: {e}") from None
    said = []
    if window.end - window.start > dt.timedelta(minutes=length) or window.all_day:
        lo = max(window.start, round_up(now_of(ctx)))
        slot = next(((a, b) for a, b in _free(ctx, lo, window.end) if b - a >= dt.timedelta(minutes=length)), None)
        if slot is None:
            raise ToolError(f"no free {length} minutes in {when!r}; call find_time to see when there is room")
        start = slot[0]
        said.append(f"{when.strip()!r} -> the first free {length} minutes there: {start:%A %Y-%m-%d %H:%M}")
    else:
        start = window.start
        said.append(f"{when.strip()!r} -> {start:%A %Y-%m-%d %H:%M}")
        clash = [b for b in calendar.between(ctx.store.conn(), start, start + dt.timedelta(minutes=length))]
        if clash:
            said.append(f"it overlaps {clash[0].title!r} ({clash[0].start:%H:%M}-{clash[0].end:%H:%M}) in the calendar")
    pin = {"scheduled_at": start.isoformat(timespec="minutes")}
    ctx.commit(lambda conn: one(Change(Op.EDIT, id, pin, tool="schedule_task")))
    return {
        "pinned": {
            "id": id,
            "title": task["title"],
            "start": f"{start:%Y-%m-%d %H:%M}",
            "end": f"{start + dt.timedelta(minutes=length):%Y-%m-%d %H:%M}",
        },
        "date_read_as": "; ".join(said),
    }


def _day_of(task: dict[str, Any], ctx: ToolContext) -> dt.date:
    """The day a window without a date means for this task: its pinned day, else today."""
    if task.get("scheduled_at"):
        return max(dt.date.fromisoformat(task["scheduled_at"][:10]), ctx.today())
    return ctx.today()
