"""Planning in time: the day laid out around the calendar, free time found, a task pinned, an event or a
preference said. The scheduler (planner/schedule.py) decides; these tools feed it and read it out.

    plan_day(date)                       the day's blocks (events and tasks) and what did not fit, with why
    find_time(minutes, after, before, prefer)   free slots of that length (the model proposes one)
    schedule_task(id, when)              pin a task: "3pm", "tomorrow 9:30", "the afternoon" (first free slot)
    add_event(title, when)               busy time the user tells of: "tomorrow 2-3pm"
    add_preference(kind, when, tasks)    avoid / free / prefer, in words: "fridays", "wednesday afternoons"

Every time, window and length is read from the user's words in code
(timespans.py, durations.py); the scheduler is deterministic, so the same
tasks and calendar give the same plan. A task without an estimate counts as
30 minutes, marked guessed. Working hours come from PLANNER_WORK_HOURS.
"""

from __future__ import annotations

import datetime as dt
import secrets
from typing import Any

import icalendar

from planner.dates import DateError, resolve
from planner.schedule import DEFAULT_MINUTES, Block, Event, Horizon, Hours, Plan, Rule, Task, plan, round_up
from planner.storage import calendar
from planner.storage.gate import Change, Op, one
from planner.storage.listing import search
from planner.storage.tasks import require
from planner.storage.urgency import urgency
from planner.timespans import part_of_day, span, weekly
from planner.tools.registry import ToolContext, ToolError, tool

KINDS = ("avoid", "free", "prefer")


def hours_of(config: Any) -> Hours:
    """The working hours of the settings, as the scheduler reads them."""
    from planner.settings import parse_hours

    week = tuple(tuple(w) for w in parse_hours(config.work_hours))
    return Hours(week=week, min_block=config.min_block, break_minutes=config.break_minutes)


def now_of(ctx: ToolContext) -> dt.datetime:
    """The moment planning starts: now, or (when today is pretended) the start of that day."""
    if ctx.plan_from is not None:
        return ctx.plan_from
    now = ctx.clock().astimezone().replace(tzinfo=None, second=0, microsecond=0)
    return now if now.date() == ctx.today() else dt.datetime.combine(ctx.today(), dt.time())


def plan_from(config: Any) -> dt.datetime | None:
    """Where a plan starts when the settings pretend a day (--today, PLANNER_TODAY): that day's start."""
    return dt.datetime.combine(config.today, dt.time()) if config.today else None


def horizon_of(ctx: ToolContext, when: str | None) -> Horizon:
    """The time to plan: the rest of today, a day ("friday"), or the week ("week", "next week")."""
    now = now_of(ctx)
    w = " ".join((when or "today").lower().split())
    if w in ("week", "this week", "the week"):
        return Horizon.week(now)
    if w == "next week":
        monday = now.date() + dt.timedelta(days=7 - now.weekday())
        return Horizon(dt.datetime.combine(monday, dt.time()), dt.datetime.combine(monday + dt.timedelta(7), dt.time()))
    try:
        day = resolve(w, ctx.today()).date
    except DateError as e:
        raise ToolError(f"date: {e}") from None
    if day < now.date():
        raise ToolError(f"{day.isoformat()} is past; plan today or a day ahead")
    if day == now.date():
        return Horizon.day(now)
    return Horizon(dt.datetime.combine(day, dt.time()), dt.datetime.combine(day + dt.timedelta(days=1), dt.time()))


def _due(task: dict[str, Any]) -> dt.datetime | None:
    if not task.get("due_date"):
        return None
    day = dt.date.fromisoformat(task["due_date"])
    at = dt.time.fromisoformat(task["due_time"]) if task.get("due_time") else dt.time(23, 59)
    return dt.datetime.combine(day, at)


def inputs(ctx: ToolContext, horizon: Horizon) -> tuple[list[Task], list[Event], list[Rule], list[calendar.Busy]]:
    """What the scheduler reads: the open tasks, the calendar's busy time, the preferences."""
    conn = ctx.store.conn()
    today = ctx.today()
    found, _ = search(conn, today, limit=100_000)
    open_children: dict[str, int] = {}
    for t in found:
        if t.get("parent_uid"):
            open_children[t["parent_uid"]] = open_children.get(t["parent_uid"], 0) + 1
    tasks = [
        Task(
            task_id=t["id"],
            title=t["title"],
            minutes=t.get("estimate_minutes") or DEFAULT_MINUTES,
            guessed=not t.get("estimate_minutes"),
            due=_due(t),
            not_before=dt.datetime.combine(dt.date.fromisoformat(t["start_date"]), dt.time())
            if t.get("start_date")
            else None,
            priority=t.get("priority"),
            urgency=urgency(t, today, open_children.get(t["uid"], 0)),
            tags=tuple(t.get("tags") or ()),
            list_name=t.get("list"),
            pinned=dt.datetime.fromisoformat(t["scheduled_at"]) if t.get("scheduled_at") else None,
        )
        for t in found
    ]
    busy = calendar.between(conn, horizon.start, horizon.end)
    events = [Event(b.start, b.end, b.title, f"{b.event_id}") for b in busy]
    rules = [
        Rule(
            p["kind"],
            dt.time.fromisoformat(p["start"]),
            dt.time.fromisoformat(p["end"]),
            tuple(int(d) for d in p["weekdays"].split(",") if d),
            tuple(x for x in p["tags"].split(",") if x),
        )
        for p in calendar.preferences(conn)
    ]
    return tasks, events, rules, busy


def make_plan(ctx: ToolContext, horizon: Horizon) -> Plan:
    """The plan for a horizon, from what is stored now."""
    tasks, events, rules, _ = inputs(ctx, horizon)
    return plan(tasks, events, horizon, ctx.hours, rules)


def block_json(b: Block) -> dict[str, Any]:
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
        for flag in ("guessed", "pinned", "late"):
            if getattr(b, flag):
                out[flag] = True
    else:
        out["event_id"] = int(b.event_id) if b.event_id and b.event_id.isdigit() else b.event_id
    return out


def day_json(p: Plan, day: dt.date) -> dict[str, Any]:
    """One day of a plan: {"day", "blocks", "unscheduled", ...}."""
    blocks = [block_json(b) for b in p.blocks if b.start.date() == day]
    return {"day": day.isoformat(), "blocks": blocks}


def plan_json(p: Plan, horizon: Horizon) -> dict[str, Any]:
    """A plan as `plan --json` prints it: a day, or one object per day under "days"."""
    days = []
    day = horizon.start.date()
    while dt.datetime.combine(day, dt.time()) < horizon.end:
        days.append(day_json(p, day))
        day += dt.timedelta(days=1)
    notes = [{"task_id": n.task_id, "title": n.title, "reason": str(n.reason)} for n in p.unscheduled]
    late = [{"task_id": n.task_id, "title": n.title, "reason": str(n.reason)} for n in p.late]
    if len(days) == 1:
        return {**days[0], "unscheduled": notes, **({"late": late} if late else {})}
    return {"days": days, "unscheduled": notes, **({"late": late} if late else {})}


@tool(
    {"date": {"type": "string", "description": "A day in the user's words, or week; default today."}},
    read_only=True,
    title="Plan the day",
    group="plan",
)
def plan_day(ctx: ToolContext, date: str | None = None) -> dict[str, Any]:
    """Plan a day (or the week): events and open tasks placed in free working time, and what did not fit. Writes nothing."""
    horizon = horizon_of(ctx, date)
    out = plan_json(make_plan(ctx, horizon), horizon)
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


def _free(ctx: ToolContext, start: dt.datetime, end: dt.datetime) -> list[tuple[dt.datetime, dt.datetime]]:
    """Free working time (and free preferences) between start and end: no event, no pinned task, no avoid."""
    tasks, events, rules, _ = inputs(ctx, Horizon(start, end))
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


@tool(
    {
        "title": {"type": "string"},
        "when": {"type": "string", "description": "In the user's words."},
    },
    required=("title", "when"),
    title="Add a calendar event",
    group="plan",
)
def add_event(ctx: ToolContext, title: str, when: str) -> dict[str, Any]:
    """Add an appointment or meeting to the calendar. Not for to-dos: use add_task."""
    if not title.strip():
        raise ToolError("title must not be empty")
    try:
        s = span(when, ctx.today())
    except DateError as e:
        raise ToolError(f"when: {e}") from None
    event = icalendar.Event()
    uid = f"said-{secrets.token_hex(8)}@planner"
    event.add("uid", uid)
    event.add("dtstamp", dt.datetime.now(dt.UTC))
    event.add("summary", title.strip()[:200])
    event.add("dtstart", s.start.date() if s.all_day else s.start)
    event.add("dtend", s.end.date() if s.all_day else s.end)
    cal = icalendar.Calendar()
    cal.add("prodid", "-//planner//said//EN")
    cal.add("version", "2.0")
    cal.add_component(event)
    with ctx.store.write() as conn:
        calendar.put(conn, "said", [(uid, title.strip()[:200], cal)])
    read = f"{when.strip()!r} -> {s.start:%A %Y-%m-%d}" + ("" if s.all_day else f" {s.start:%H:%M}-{s.end:%H:%M}")
    out = {
        "event": {
            "title": title.strip(),
            "start": f"{s.start:%Y-%m-%d %H:%M}",
            "end": f"{s.end:%Y-%m-%d %H:%M}",
            "all_day": s.all_day,
        },
        "date_read_as": read,
    }
    if s.guessed:
        out["assumed"] = s.guessed
    return out


@tool(
    {
        "kind": {
            "type": "string",
            "enum": list(KINDS),
            "description": "avoid: no tasks then; free: extra time; prefer: the named tasks there.",
        },
        "when": {
            "type": "string",
            "description": "A time of week, in the user's words.",
        },
        "tasks": {"type": "string", "description": "A tag or list, for prefer."},
    },
    required=("kind", "when"),
    title="Keep a planning preference",
    group="plan",
)
def add_preference(ctx: ToolContext, kind: str, when: str, tasks: str | None = None) -> dict[str, Any]:
    """Keep a planning preference: a time to avoid, free time, or a time for some tasks."""
    try:
        w = weekly(when)
    except DateError as e:
        raise ToolError(f"when: {e}") from None
    tags = tuple(t.strip().lstrip("#+").lower() for t in (tasks or "").replace(",", " ").split() if t.strip())
    if kind == "prefer" and not tags:
        raise ToolError("prefer needs tasks: the tag or list of the tasks to put there")
    end = "00:00" if w.end == dt.time(23, 59) else f"{w.end:%H:%M}"
    said = f"{kind} {when.strip()}" + (f" for {' '.join(tags)}" if tags else "")
    with ctx.store.write() as conn:
        pref_id = calendar.add_preference(
            conn, ctx.turn or secrets.token_hex(8), kind, w.weekdays, f"{w.start:%H:%M}", end, tags, said
        )
    days = ", ".join(("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[d] for d in w.weekdays) or "every day"
    return {
        "preference": {
            "id": pref_id,
            "kind": kind,
            "days": days,
            "from": f"{w.start:%H:%M}",
            "to": end,
            "tasks": list(tags),
        },
        "date_read_as": f"{when.strip()!r} -> {days} {w.start:%H:%M}-{end}",
    }
