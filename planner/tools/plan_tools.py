"""The plan: the day (or the week) laid out around the calendar by the scheduler (planner/schedule), read out
for the model (`plan_day`), `plan`, /plan and the phone (sync/plan_publish.py).

    horizon_of(ctx, when)     the time to plan and what to say about it: the rest of today (after working hours,
                              the next working day), a part of today, a day, the week (on a weekend, the
                              coming one), next week
    make_plan(ctx, horizon)   the plan from what is stored now, stable against the last one, remembered
    plan_json(made)           what `plan --json` prints and the model reads: per block why it is there

The other planning tools are beside this file: find_time and schedule_task (time_tools), add_event and
add_preference (calendar_tools), start_task and stop_task (track_tools). The scheduler is
deterministic, so the same tasks and calendar give the same plan; the clock is now_of (plan_inputs).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from typing import Any

from planner.dates import DateError, resolve
from planner.durations import short
from planner.schedule import DEFAULT_MINUTES, Block, Horizon, Plan, plan, round_up
from planner.timespans import PARTS, part_of_day
from planner.tools.plan_inputs import (
    Inputs,
    hours_of,
    inputs,
    last_plan,
    now_of,
    plan_from,
    remember,
    working_minutes,
)
from planner.tools.registry import ToolContext, ToolError, tool

# hours_of and plan_from are still importable from here, where they were before plan_inputs.py.
__all__ = ["Made", "Span", "block_json", "hours_of", "horizon_of", "make_plan", "plan_day", "plan_from", "plan_json"]
__all__ += ["span_of"]


@dataclass(frozen=True)
class Span:
    """The time to plan, and a sentence when it is not what was asked (after hours: the next working day)."""

    horizon: Horizon
    note: str = ""


def horizon_of(ctx: ToolContext, when: str | None) -> Horizon:
    """The time to plan for `when` (see `span_of`)."""
    return span_of(ctx, when).horizon


def span_of(ctx: ToolContext, when: str | None) -> Span:
    """The time to plan: the rest of today, or the next working day once today's working hours are over; a part
    of today ("the afternoon"); a day ("friday"); the week, or on a weekend the coming one; next week."""
    now = now_of(ctx)
    w = " ".join((when or "today").lower().split())
    w = {"this week": "week", "the week": "week", "my week": "week", "my day": "today", "the day": "today"}.get(w, w)
    if w == "week":
        week = Horizon.week(now)
        if working_minutes(ctx.hours, week.start, week.end):
            return Span(week)
        monday = now.date() + dt.timedelta(days=7 - now.weekday())
        return Span(_days(monday, 7), f"no working time is left this week: the week of {monday:%a %Y-%m-%d}")
    if w == "next week":
        return Span(_days(now.date() + dt.timedelta(days=7 - now.weekday()), 7))
    if w == "today":
        today = Horizon.day(now)
        if working_minutes(ctx.hours, today.start, today.end):
            return Span(today)
        nxt = _next_working_day(ctx, now.date())
        ended = max((b for _, b in ctx.hours.week[now.weekday()]), default=None, key=lambda b: b or dt.time.max)
        said = f"working hours ended at {ended:%H:%M}" if ended and ended != dt.time(0) else "no working hours today"
        return Span(_days(nxt, 1), f"{said}: the next working day, {nxt:%A %Y-%m-%d}") if nxt else Span(today)
    words = w.removeprefix("this ").removeprefix("my ")
    if any(words.endswith(p) or words.endswith(p + "s") for p in PARTS if p != "day"):
        try:
            window = part_of_day(words, ctx.today())
        except DateError as e:
            raise ToolError(f"date: {e}") from None
        if window.end <= now:
            raise ToolError(f"{words} is over ({window.end:%H:%M}); plan today or a day ahead")
        return Span(Horizon(max(round_up(now), window.start), window.end))
    try:
        day = resolve(w, ctx.today()).date
    except DateError as e:
        raise ToolError(f"date: {e}") from None
    if day < now.date():
        raise ToolError(f"{day.isoformat()} is past; plan today or a day ahead")
    if day == now.date():
        return Span(Horizon.day(now))
    return Span(_days(day, 1))


def _days(first: dt.date, n: int) -> Horizon:
    return Horizon(dt.datetime.combine(first, dt.time()), dt.datetime.combine(first + dt.timedelta(days=n), dt.time()))


def _next_working_day(ctx: ToolContext, day: dt.date) -> dt.date | None:
    for k in range(1, 8):
        d = day + dt.timedelta(days=k)
        if ctx.hours.week[d.weekday()]:
            return d
    return None


@dataclass
class Made:
    """A plan with what it was made from and what it must say."""

    plan: Plan
    horizon: Horizon
    inputs: Inputs
    now: dt.datetime
    note: str = ""


def make_plan(ctx: ToolContext, horizon: Horizon, note: str = "", keep: bool = True) -> Made:
    """The plan for a horizon from what is stored now, moving only what it must from the last one; with `keep`,
    remembered for the next."""
    got = inputs(ctx, horizon)
    last = last_plan(ctx, horizon)
    made = plan(got.tasks, got.events, horizon, ctx.hours, got.rules, last)
    if any(b.stayed for b in made.blocks):  # say "stays" only where a plan made afresh would differ
        fresh = plan(got.tasks, got.events, horizon, ctx.hours, got.rules)
        same = {(b.task_id, b.start, b.end, b.part, b.parts): b for b in fresh.blocks if b.kind == "task"}
        blocks = tuple(
            same.get((b.task_id, b.start, b.end, b.part, b.parts), b) if b.stayed else b for b in made.blocks
        )
        made = replace(made, blocks=blocks)
    if keep:
        remember(ctx, horizon, made)
    return Made(made, horizon, got, now_of(ctx), note)


def block_json(b: Block, made: Made | None = None, why: bool = True) -> dict[str, Any]:
    """One block as the model and `plan --json` see it."""
    out: dict[str, Any] = {
        "start": f"{b.start:%Y-%m-%dT%H:%M}",
        "end": f"{b.end:%Y-%m-%dT%H:%M}",
        "kind": b.kind,
        "title": b.title,
    }
    if b.kind == "task":
        out["task_id"] = b.task_id
        if b.parts > 1:
            out["part"] = f"{b.part} of {b.parts}"
        for flag in ("guessed", "pinned", "late", "running", "stayed"):
            if getattr(b, flag):
                out[flag] = True
        if made is not None:
            if b.task_id in made.inputs.spent:
                out["spent"] = short(made.inputs.spent[b.task_id]) if made.inputs.spent[b.task_id] else "0m"
            if b.task_id in made.inputs.corrected:
                out["estimate"] = made.inputs.corrected[b.task_id]
    else:
        out["event_id"] = int(b.event_id) if b.event_id and b.event_id.isdigit() else b.event_id
        if b.all_day:
            out["all_day"] = True
    if why and b.why:
        out["why"] = b.why
    return out


def _note(n: Any) -> dict[str, Any]:
    out = {"task_id": n.task_id, "title": n.title, "reason": str(n.reason)}
    return out | ({"detail": n.detail} if n.detail else {})


def plan_json(made: Made | Plan, horizon: Horizon | None = None, why: bool = True) -> dict[str, Any]:
    """A plan as `plan --json` prints it: a day, or one object per day under "days"; per block why it is there,
    per task left out its cause."""
    if isinstance(made, Plan):  # the old call, with a bare plan
        made = Made(made, horizon or Horizon(dt.datetime.min, dt.datetime.min), Inputs([], [], [], []), dt.datetime.min)
    p, horizon = made.plan, made.horizon
    days = []
    day = horizon.start.date()
    while dt.datetime.combine(day, dt.time()) < horizon.end:
        start, end = dt.datetime.combine(day, dt.time()), dt.datetime.combine(day + dt.timedelta(days=1), dt.time())
        blocks = [block_json(b, made, why) for b in p.blocks if b.start < end and b.end > start and _shown(b, day)]
        days.append({"day": day.isoformat(), "blocks": blocks})
        day += dt.timedelta(days=1)
    extra: dict[str, Any] = {"unscheduled": [_note(n) for n in p.unscheduled]}
    if p.late:
        extra["late"] = [_note(n) for n in p.late]
    if p.replanned:
        extra["replanned"] = [_note(n) for n in p.replanned]
    if made.note:
        extra["note"] = made.note
    first = dt.datetime.combine(horizon.start.date(), dt.time())
    if made.now.time() != dt.time(0) and first <= made.now < horizon.end:  # a pretended day (--today) has no now
        extra["now"] = f"{made.now:%Y-%m-%dT%H:%M}"
    if made.inputs.running is not None:
        extra["running"] = made.inputs.running
    if len(days) == 1:
        return {**days[0], **extra}
    return {"days": days, **extra}


def _shown(b: Block, day: dt.date) -> bool:
    """A block is shown on the day it starts on; an all-day event, on each day it covers."""
    return b.all_day or b.start.date() == day


@tool(
    {"date": {"type": "string", "description": "A day or part of today in the user's words, or week; default today."}},
    read_only=True,
    title="Plan the day",
    group="plan",
)
def plan_day(ctx: ToolContext, date: str | None = None) -> dict[str, Any]:
    """Plan a day (or the week): events and open tasks placed in free working time, and what did not fit. Writes nothing."""
    span = span_of(ctx, date)
    out = plan_json(make_plan(ctx, span.horizon, span.note))

    if any(n["reason"] == "past due" for n in out["unscheduled"]):
        out["past_due"] = "tasks past due are not placed: ask the user for a new date (update_task), then plan again"
    guessed = sorted({b["title"] for d in out.get("days", [out]) for b in d["blocks"] if b.get("guessed")})
    if guessed:
        n = len(guessed)
        out["estimates"] = (
            f"{n} task{'s have' if n > 1 else ' has'} no estimate and count{'' if n > 1 else 's'} "
            f"as {DEFAULT_MINUTES} minutes"
        )
    return out
