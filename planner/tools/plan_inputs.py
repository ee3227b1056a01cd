"""What the scheduler reads, from what is stored: the open tasks (with learned estimates, tracked time and the
one running), the calendar's busy time, the preferences, and the last plan; and the clock a plan starts at.

    now_of(ctx)               the local moment planning starts: --now / PLANNER_NOW, else now
    inputs(ctx, horizon)      Inputs: scheduler tasks, events, rules, and what was corrected or tracked
    last_plan(ctx, horizon)   the plan remembered for that time (storage/planstate.py)
    remember(ctx, ...)        keep a plan made, so the next one is stable

A task without an estimate counts as DEFAULT_MINUTES, marked guessed. A task with tracked time is
planned for what is left of it (at least MIN_LEFT minutes); the one running is pinned at now for its
minutes left. Working hours come from PLANNER_WORK_HOURS.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from planner.schedule import DEFAULT_MINUTES, Block, Event, Horizon, Hours, Note, Plan, Reason, Rule, Task
from planner.storage import calendar, planstate, preferences, worklog
from planner.storage.db import DatabaseError
from planner.storage.listing import search
from planner.storage.urgency import urgency
from planner.tools import estimates
from planner.tools.registry import ToolContext

MIN_LEFT = 15  # minutes a task with tracked time is still planned for, however much was spent


def hours_of(config: Any) -> Hours:
    """The working hours of the settings, as the scheduler reads them."""
    from planner.settings import parse_hours

    week = tuple(tuple(w) for w in parse_hours(config.work_hours))
    return Hours(week=week, min_block=config.min_block, break_minutes=config.break_minutes)


def plan_from(config: Any) -> dt.datetime | None:
    """Where a plan starts when the settings fix the clock: --now / PLANNER_NOW, else the start of a pretended
    day (--today, PLANNER_TODAY); None: the real now."""
    if getattr(config, "now", None):
        return config.now
    return dt.datetime.combine(config.today, dt.time()) if config.today else None


def now_of(ctx: ToolContext) -> dt.datetime:
    """The moment planning (and the clock of tracked time) starts: the fixed one, or now on today."""
    if ctx.plan_from is not None:
        return ctx.plan_from
    now = ctx.clock().astimezone().replace(tzinfo=None, second=0, microsecond=0)
    return now if now.date() == ctx.today() else dt.datetime.combine(ctx.today(), dt.time())


def working_minutes(hours: Hours, start: dt.datetime, end: dt.datetime) -> int:
    """Minutes of working hours between start and end (events not taken out)."""
    total, day = 0, start.date()
    while dt.datetime.combine(day, dt.time()) < end:
        midnight = dt.datetime.combine(day, dt.time())
        for a, b in hours.week[day.weekday()]:
            lo = midnight + dt.timedelta(hours=a.hour, minutes=a.minute)
            hi = midnight + (dt.timedelta(days=1) if b == dt.time(0) else dt.timedelta(hours=b.hour, minutes=b.minute))
            total += max(0, int((min(hi, end) - max(lo, start)).total_seconds() // 60))
        day += dt.timedelta(days=1)
    return total


def due_of(task: dict[str, Any]) -> dt.datetime | None:
    """A task's due moment: its date at its time, or at 23:59."""
    if not task.get("due_date"):
        return None
    day = dt.date.fromisoformat(task["due_date"])
    at = dt.time.fromisoformat(task["due_time"]) if task.get("due_time") else dt.time(23, 59)
    return dt.datetime.combine(day, at)


@dataclass
class Inputs:
    """The scheduler's inputs, and what the plan must say about them."""

    tasks: list[Task]
    events: list[Event]
    rules: list[Rule]
    busy: list[calendar.Busy]
    corrected: dict[int, str] = field(default_factory=dict)  # task id -> the sentence that says so
    spent: dict[int, int] = field(default_factory=dict)  # task id -> minutes tracked
    running: int | None = None  # the task the clock runs on


def inputs(ctx: ToolContext, horizon: Horizon) -> Inputs:
    """What the scheduler reads: the open tasks, the calendar's busy time, the preferences."""
    conn = ctx.store.conn()
    today, now = ctx.today(), now_of(ctx)
    found, _ = search(conn, today, limit=100_000)
    open_children: dict[str, int] = {}
    for t in found:
        if t.get("parent_uid"):
            open_children[t["parent_uid"]] = open_children.get(t["parent_uid"], 0) + 1
    learned = estimates.ratios(worklog.finished(conn)) if ctx.learn_estimates else {}
    clock = worklog.running(conn)
    spent = worklog.spent(conn, [t["id"] for t in found], now)
    out = Inputs([], [], [], [], spent=spent)
    for t in found:
        minutes, guessed = t.get("estimate_minutes") or DEFAULT_MINUTES, not t.get("estimate_minutes")
        r = None if guessed else estimates.correction(t.get("tags") or (), t.get("list"), learned)
        if r is not None:
            planned = estimates.corrected(minutes, r)
            out.corrected[t["id"]] = estimates.say(r, minutes, planned)
            minutes = planned
        pinned = dt.datetime.fromisoformat(t["scheduled_at"]) if t.get("scheduled_at") else None
        running = clock is not None and clock.task_id == t["id"]
        if t["id"] in spent:
            minutes = max(MIN_LEFT, minutes - spent[t["id"]])
        if running:
            pinned, out.running = now, t["id"]
        out.tasks.append(
            Task(
                task_id=t["id"],
                title=t["title"],
                minutes=minutes,
                guessed=guessed,
                due=due_of(t),
                not_before=dt.datetime.combine(dt.date.fromisoformat(t["start_date"]), dt.time())
                if t.get("start_date")
                else None,
                priority=t.get("priority"),
                urgency=urgency(t, today, open_children.get(t["uid"], 0)),
                tags=tuple(t.get("tags") or ()),
                list_name=t.get("list"),
                pinned=pinned,
                running=running,
            )
        )
    out.busy = calendar.between(conn, horizon.start, horizon.end)
    out.events = [Event(b.start, b.end, b.title, f"{b.event_id}", all_day=b.all_day) for b in out.busy]
    out.rules = [
        Rule(
            p["kind"],
            dt.time.fromisoformat(p["start"]),
            dt.time.fromisoformat(p["end"]),
            tuple(int(d) for d in p["weekdays"].split(",") if d),
            tuple(x for x in p["tags"].split(",") if x),
            said=p.get("said") or "",
        )
        for p in preferences.preferences(conn)
    ]
    return out


def last_plan(ctx: ToolContext, horizon: Horizon) -> Plan:
    """The plan remembered for this time: its task blocks (and those earlier the same day), and what it left out."""
    blocks, left = [], []
    for r in planstate.recall(ctx.store.conn(), horizon.start, horizon.end):
        if r.start is None:
            left.append(Note(r.task_id, "", Reason.NO_FREE_TIME))
        else:
            blocks.append(Block(r.start, r.end, "task", "", r.task_id, late=r.late))  # type: ignore[arg-type]
    late = [Note(b.task_id, "", Reason.NO_ROOM_BEFORE_DUE) for b in blocks if b.late]  # type: ignore[arg-type]
    return Plan(tuple(blocks), tuple(left), tuple(late))


def remember(ctx: ToolContext, horizon: Horizon, made: Plan) -> None:
    """Keep the plan for the next one (its own blocks, not the pinned or running ones, and what it left out);
    a file that cannot be written keeps nothing, and the plan is shown all the same."""
    rows = [
        planstate.Remembered(b.task_id, b.start, b.end, b.late)  # type: ignore[arg-type]
        for b in made.blocks
        if b.kind == "task" and not b.pinned
    ]
    rows += [planstate.Remembered(n.task_id, None, None) for n in made.unscheduled]
    try:
        with ctx.store.write() as conn:
            planstate.remember(conn, horizon.start, horizon.end, rows)
    except DatabaseError:
        pass  # read-only, busy or full: the plan is still right, only the next one starts afresh
