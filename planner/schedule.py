"""The scheduler: open tasks placed into the free time around the calendar, in code.

Pure: typed values in, a typed Plan out; no database, no model, no clock (the caller passes the
horizon, whose start is "now"). Times are local wall-clock times without a zone, so a day is always
24 hours and 09:00 stays 09:00 across a daylight-saving change; converting is the caller's job.

A plan keeps these rules:
- A task block never overlaps an event, another block, or the break around them (`Hours`).
- Task blocks lie in working hours (default 09:00-17:00 Monday-Friday) or a `free` rule's window,
  never in an `avoid` rule's, never before the task's `not_before`, never outside the horizon.
- Pinned tasks keep their block exactly (even over an event: the user put it there).
- Deadlines first: the tasks due inside the horizon are put in the order of least priority-weighted
  lateness (PRIORITY_WEIGHT per hour late; freetime.sequence) and reserve time, those on time as
  late as they fit before their due dates, the others as soon as they can finish. Then urgency:
  every task, highest urgency first (ties by due, priority, task id), takes the earliest free time
  nobody else reserved, a due task before its due date (its reservation is its fallback).
- A task goes whole into one gap if one holds it, else into parts of at least `min_block` minutes
  (part k of n). A task shorter than the minimum block is one block of its own length.
- Deterministic: inputs are sorted on full keys, so any order of the same input gives the same plan.

Not placed, in `Plan.unscheduled` with a `Reason`: no estimate (minutes=None); past due (due at or
before the horizon's start: placing it would hide that, so the user picks a new date); longer than
the horizon (more minutes than all the free time it has); no free time left (others took it); no
room before the due date (nor after it). With no room before its due date but room after, a task
is placed as soon as it can finish, its blocks marked `late` and the task named in `Plan.late`.

Preferences are `Rule`s: a daily window on some weekdays (all if none) about the tasks with one of
its `tags` among their tags or as their list (all tasks if none):
- avoid: no block of those tasks there. "No meetings on Fridays" is avoid, Fridays, 00:00-00:00
  (an end of 00:00 is midnight); with tags, only those tasks are kept out. Avoid wins.
- free: time those tasks may use even outside working hours ("Wednesday afternoons are free").
- prefer: those tasks go to the earliest such window that holds them whole before their due date,
  else anywhere ("mornings for deep work"). Other tasks may still use the window.

Trade-offs: least weighted lateness is NP-hard (it contains single-machine weighted tardiness), and an
exact solver is a large dependency taking seconds; this is a greedy of a few milliseconds for 200
tasks, measured against the exact optimum by bench/plan.py (docs/plan.md). It orders due work on a
fluid model (splitting at any minute, rules ignored) with local moves, so it can miss the optimum
when the minimum block, start dates or rules matter; reservations are made one task at a time.
Events are busy time only: the caller expands repeats and converts zones.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from planner.freetime import Board, Span, fit, minus, sequence, split, union, whole, within

DEFAULT_MINUTES = 30  # what the caller gives a task without an estimate (marking it guessed)
MINUTE = dt.timedelta(minutes=1)
PRIORITY_RANK = {"high": 0, "medium": 1, "low": 2, None: 3}
PRIORITY_WEIGHT = {"high": 3, "medium": 2, "low": 1, None: 1}  # what an hour late costs, when not all can be on time
_NINE_TO_FIVE = ((dt.time(9), dt.time(17)),)


class ScheduleError(ValueError):
    """Input the scheduler cannot plan with; the message says which value and why."""


class Reason(StrEnum):
    """Why a task is not in the plan (or, for NO_ROOM_BEFORE_DUE in Plan.late, why it is late)."""

    NO_ESTIMATE = "no estimate"
    PAST_DUE = "past due"
    NO_ROOM_BEFORE_DUE = "no room before the due date"
    LONGER_THAN_HORIZON = "longer than the horizon"
    NO_FREE_TIME = "no free time left"


@dataclass(frozen=True)
class Task:
    """An open task to place; `urgency` is the caller's (higher goes first)."""

    task_id: int
    title: str
    minutes: int | None
    guessed: bool = False
    due: dt.datetime | None = None
    not_before: dt.datetime | None = None
    priority: Literal["high", "medium", "low"] | None = None
    urgency: float = 0.0
    tags: tuple[str, ...] = ()
    list_name: str | None = None
    pinned: dt.datetime | None = None


@dataclass(frozen=True)
class Event:
    """Busy time from the calendar, already expanded, in local time."""

    start: dt.datetime
    end: dt.datetime
    title: str
    event_id: str


@dataclass(frozen=True)
class Hours:
    """Working hours: `week[0]` is Monday's windows, `week[6]` Sunday's; an end of 00:00 is midnight."""

    week: tuple[tuple[tuple[dt.time, dt.time], ...], ...] = (_NINE_TO_FIVE,) * 5 + ((), ())
    min_block: int = 15
    break_minutes: int = 0


@dataclass(frozen=True)
class Rule:
    """A preference the scheduler reads: kind "avoid", "free" or "prefer" (see the module docstring)."""

    kind: Literal["avoid", "free", "prefer"]
    start: dt.time
    end: dt.time
    weekdays: tuple[int, ...] = ()  # 0 is Monday; none means every day
    tags: tuple[str, ...] = ()  # matched against a task's tags and list name; none means every task


@dataclass(frozen=True)
class Horizon:
    """The time to plan: from `start` (now, rounded up) to `end`."""

    start: dt.datetime
    end: dt.datetime

    @classmethod
    def day(cls, now: dt.datetime) -> Horizon:
        """The rest of today."""
        start = round_up(now)
        return cls(start, max(start, dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time())))

    @classmethod
    def week(cls, now: dt.datetime) -> Horizon:
        """The rest of this week, to midnight after Sunday."""
        start = round_up(now)
        end = dt.datetime.combine(now.date() + dt.timedelta(days=7 - now.weekday()), dt.time())
        return cls(start, max(start, end))


@dataclass(frozen=True)
class Block:
    """One stretch of the plan: an event, or a task (or part `part` of `parts` of it)."""

    start: dt.datetime
    end: dt.datetime
    kind: Literal["task", "event"]
    title: str
    task_id: int | None = None
    event_id: str | None = None
    part: int = 1
    parts: int = 1
    guessed: bool = False
    pinned: bool = False
    late: bool = False


@dataclass(frozen=True)
class Note:
    """A task the plan has to mention: not placed, or placed late."""

    task_id: int
    title: str
    reason: Reason


@dataclass(frozen=True)
class Plan:
    """Blocks by start time (events and tasks); tasks not placed; tasks placed after their due date."""

    blocks: tuple[Block, ...]
    unscheduled: tuple[Note, ...]
    late: tuple[Note, ...]


def round_up(now: dt.datetime, step: int = 5) -> dt.datetime:
    """`now` rounded up to the next multiple of `step` minutes (itself if already on one)."""
    floor = now.replace(second=0, microsecond=0)
    floor -= dt.timedelta(minutes=floor.minute % step)
    return floor if floor == now else floor + dt.timedelta(minutes=step)


def _check(tasks: Sequence[Task], events: Sequence[Event], horizon: Horizon, hours: Hours, rules: Sequence[Rule]):
    def when(value: dt.datetime | None, what: str) -> None:
        if value is not None and (not isinstance(value, dt.datetime) or value.tzinfo is not None):
            raise ScheduleError(f"{what} must be a local date and time without a zone, not {value!r}")

    def windows(spans: Iterable[tuple[dt.time, dt.time]], what: str) -> None:
        for s, e in spans:
            if _clock(e, end=True) <= _clock(s):
                raise ScheduleError(f"{what}: the window {s:%H:%M}-{e:%H:%M} ends before it starts")

    when(horizon.start, "the horizon's start"), when(horizon.end, "the horizon's end")
    if horizon.end < horizon.start:
        raise ScheduleError(f"the horizon ends ({horizon.end}) before it starts ({horizon.start})")
    if hours.min_block < 1 or hours.break_minutes < 0:
        raise ScheduleError("the minimum block must be at least 1 minute and the break not negative")
    if len(hours.week) != 7:
        raise ScheduleError(f"working hours need 7 days (Monday first), not {len(hours.week)}")
    for day, spans in enumerate(hours.week):
        if not all(isinstance(w, tuple) and len(w) == 2 and all(isinstance(x, dt.time) for x in w) for w in spans):
            raise ScheduleError(f"working hours of day {day} must be pairs of times (start, end), not {spans!r}")
        windows(spans, f"working hours of day {day}")
        ordered = sorted((_clock(s), _clock(e, end=True)) for s, e in spans)
        if any(b[0] < a[1] for a, b in zip(ordered, ordered[1:], strict=False)):
            raise ScheduleError(f"working hours of day {day} have windows that overlap")
    for r in rules:
        if r.kind not in ("avoid", "free", "prefer") or any(not 0 <= d <= 6 for d in r.weekdays):
            raise ScheduleError(f"a rule needs kind avoid, free or prefer and weekdays 0-6, not {r!r}")
        windows([(r.start, r.end)], f"the {r.kind} rule")
    seen: set[int] = set()
    for t in tasks:
        if t.task_id in seen:
            raise ScheduleError(f"task {t.task_id} is given twice")
        seen.add(t.task_id)
        if t.minutes is not None and (not isinstance(t.minutes, int) or t.minutes <= 0):
            raise ScheduleError(f"task {t.task_id}: minutes must be a positive whole number, not {t.minutes!r}")
        if t.priority not in PRIORITY_RANK or not math.isfinite(t.urgency) or isinstance(t.tags, str):
            raise ScheduleError(f"task {t.task_id}: priority, urgency (a finite number) or tags (a tuple) is wrong")
        for name in ("due", "not_before", "pinned"):
            when(getattr(t, name), f"task {t.task_id}'s {name}")
    for e in events:
        when(e.start, f"event {e.event_id!r}'s start"), when(e.end, f"event {e.event_id!r}'s end")
        if e.end < e.start:
            raise ScheduleError(f"event {e.event_id!r} ends ({e.end}) before it starts ({e.start})")


def _clock(t: dt.time, end: bool = False) -> int:
    m = t.hour * 60 + t.minute
    return 1440 if end and m == 0 else m


def _matches(rule: Rule, task: Task) -> bool:
    wanted = {x.casefold() for x in rule.tags}
    have = {x.casefold() for x in (*task.tags, task.list_name or "")}
    return not wanted or bool(wanted & have)


def plan(
    tasks: Sequence[Task],
    events: Sequence[Event],
    horizon: Horizon,
    hours: Hours = Hours(),  # noqa: B008 (frozen, so one shared default is safe)
    rules: Sequence[Rule] = (),
) -> Plan:
    """Place the tasks into the free time of the horizon; raises ScheduleError on input it cannot use."""
    _check(tasks, events, horizon, hours, rules)
    origin = dt.datetime.combine(horizon.start.date(), dt.time())

    def floor(d: dt.datetime) -> int:
        return (d - origin) // MINUTE

    def ceil(d: dt.datetime) -> int:
        return -((origin - d) // MINUTE)

    h0, h1, mb = ceil(horizon.start), max(ceil(horizon.start), floor(horizon.end)), hours.min_block
    days = range(-(-h1 // 1440) + 1)
    key = {t.task_id: (-t.urgency, t.due or dt.datetime.max, PRIORITY_RANK[t.priority], t.task_id) for t in tasks}
    order = sorted(tasks, key=lambda t: key[t.task_id])

    def daily(spans: Iterable[tuple[dt.time, dt.time]], weekdays: Iterable[int]) -> list[Span]:
        on = set(weekdays)
        days_on = [d for d in days if (origin.weekday() + d) % 7 in on]
        return [(d * 1440 + _clock(s), d * 1440 + _clock(e, end=True)) for d in days_on for s, e in spans]

    work = [sp for wd in range(7) for sp in daily(hours.week[wd], [wd])]
    rules = sorted(rules, key=lambda r: (r.kind, r.start, r.end, sorted(r.weekdays), sorted(r.tags)))
    by_rule = [daily([(r.start, r.end)], r.weekdays or range(7)) for r in rules]
    fixed = [(floor(e.start), ceil(e.end)) for e in events]
    pinned = [t for t in order if t.pinned is not None and t.minutes is not None]
    fixed += [(floor(t.pinned), ceil(t.pinned + t.minutes * MINUTE)) for t in pinned]
    board = Board(hours.break_minutes, fixed)
    bases: dict[tuple[int, ...], tuple[tuple[list[int], list[int]], list[Span], int]] = {}

    def base_of(t: Task) -> tuple[tuple[list[int], list[int]], list[Span], int]:
        """The task's available time (working hours and rules), its preferred windows, and its free minutes."""
        sig = tuple(i for i, r in enumerate(rules) if _matches(r, t))
        if sig not in bases:
            kind = {
                k: [sp for i in sig if rules[i].kind == k for sp in by_rule[i]] for k in ("avoid", "free", "prefer")
            }
            spans = minus(union(work + kind["free"]), kind["avoid"] + [(h0 - 2880, h0), (h1, h1 + 2880)])
            base = ([a for a, _ in spans], [b for _, b in spans])
            total = sum(b - a for a, b in board.gaps(base, h0, h1))  # before any task is placed
            bases[sig] = (base, union(kind["prefer"]), total)
        return bases[sig]

    unscheduled: list[Note] = []
    todo: list[Task] = []
    due_at: dict[int, int] = {}  # where on-time placement must end: the due date, or the horizon's end
    lo_of: dict[int, int] = {}
    for t in order:
        if t.minutes is None:
            unscheduled.append(Note(t.task_id, t.title, Reason.NO_ESTIMATE))
        elif t.pinned is not None:
            continue
        elif t.due is not None and t.due <= horizon.start:
            unscheduled.append(Note(t.task_id, t.title, Reason.PAST_DUE))
        elif t.minutes > base_of(t)[2]:
            unscheduled.append(Note(t.task_id, t.title, Reason.LONGER_THAN_HORIZON))
        else:
            todo.append(t)
            due_at[t.task_id] = min(floor(t.due), h1) if t.due is not None else h1
            lo_of[t.task_id] = max(h0, ceil(t.not_before)) if t.not_before is not None else h0

    # Which tasks due inside the horizon can be on time, and in what order the others follow (sequence).
    due_inside = [t for t in todo if t.due is not None and floor(t.due) <= h1]
    generic = base_of(Task(0, "", 1))[0]
    jobs = [
        (t.minutes, due_at[t.task_id], PRIORITY_WEIGHT[t.priority], key[t.task_id], lo_of[t.task_id])
        for t in due_inside
    ]
    finish = sequence(jobs, list(board.gaps(generic, h0, h1)), h1)

    # Reservations, so that no task of higher urgency takes the time a due task needs: in the order found,
    # each as soon as it can finish; then those on time move as late as they fit before their due dates
    # (latest start date first, which keeps all of them fitting), to leave the early time to urgency.
    reserved: dict[int, list[Span]] = {}

    def reserve(t: Task, backward: bool) -> bool:
        hi = due_at[t.task_id] if backward else h1
        parts = split(board.gaps(base_of(t)[0], lo_of[t.task_id], hi), t.minutes, mb, backward=backward)
        for a, b in parts or ():
            board.add(a, b, t.task_id)
        reserved[t.task_id] = parts or []
        return bool(parts)

    placing = [t for t, (_, f) in sorted(zip(due_inside, finish, strict=True), key=lambda x: x[1]) if f <= h1]
    on_time = [t for t in placing if reserve(t, backward=False) and reserved[t.task_id][-1][1] <= due_at[t.task_id]]
    for t in on_time:
        board.release(t.task_id)
    for t in sorted(on_time, key=lambda t: (-lo_of[t.task_id], -due_at[t.task_id], key[t.task_id][2:])):
        reserve(t, backward=True) or reserve(t, backward=False)

    placed: dict[int, tuple[list[Span], bool]] = {}

    def place(t: Task, on_time_only: bool = False) -> tuple[list[Span], bool] | None:
        """Where the task goes now, and whether that is after its due date."""
        (base, pref, _), tid, lo, hi, m = base_of(t), t.task_id, lo_of[t.task_id], due_at[t.task_id], t.minutes

        own, known = reserved.get(tid), (id(base), lo) if hi >= h1 and not reserved.get(tid) else None
        if known in failed and m >= failed[known]:
            return None  # a shorter task found no room here, and no time was freed since
        found = pref and whole(within(board.gaps(base, lo, hi, tid), pref), m)
        found = found or fit(board.gaps(base, lo, hi, tid), m, mb)
        if found or (own and own[-1][1] <= hi):
            return found or own, False
        if known:
            failed[known] = min(m, failed.get(known, m))
        if on_time_only or hi >= h1:
            return None
        gaps = list(board.gaps(base, lo, h1, tid))
        options = [p for p in (whole(gaps, m), split(gaps, m, mb), own) if p]
        return (min(options, key=lambda p: p[-1][1]), True) if options else None  # the earliest finish

    failed: dict[tuple[int, int] | None, int] = {}  # (available time, start) -> the fewest minutes that found no room

    def put(t: Task, parts: list[Span], late: bool) -> None:
        if (reserved.get(t.task_id) or placed.get(t.task_id, ([],))[0]) not in ([], parts):
            failed.clear()
        board.release(t.task_id)
        reserved.pop(t.task_id, None)
        for a, b in parts:
            board.add(a, b, t.task_id)
        placed[t.task_id] = (parts, late)

    def place_all(waiting: list[Task]) -> list[Task]:
        """Place what it can of `waiting`, in order; returns the rest."""
        rest = []
        for t in waiting:
            got = place(t)
            if got:
                put(t, *got)
            else:
                rest.append(t)
        return rest

    left: list[Task] = []
    for t in todo:
        own = reserved.get(t.task_id)
        left += place_all([t])
        if own and placed.get(t.task_id, (own,))[0] != own:  # its reservation is free again: first for due
            waiting = [x for x in left if x.task_id in reserved]  # tasks ahead of it that found no room
            if waiting:
                placed_now = {x.task_id for x in waiting} - {x.task_id for x in place_all(waiting)}
                left = [x for x in left if x.task_id not in placed_now]
    moved = True
    while moved:  # reservations released after a late task was placed may have freed time before its due date
        moved = False
        for t in todo:
            if t.task_id in placed and placed[t.task_id][1] and (got := place(t, on_time_only=True)):
                put(t, *got)
                moved = True
    for t in place_all(left):  # what late tasks left behind may hold what did not fit
        late_kind = t.due is not None and floor(t.due) <= h1
        unscheduled.append(Note(t.task_id, t.title, Reason.NO_ROOM_BEFORE_DUE if late_kind else Reason.NO_FREE_TIME))

    at = lambda m: origin + m * MINUTE  # noqa: E731
    shown = [e for e in events if e.end > e.start and e.end > horizon.start and e.start < horizon.end]
    blocks = [Block(e.start, e.end, "event", e.title, event_id=e.event_id) for e in shown]
    for t in pinned:
        end = t.pinned + t.minutes * MINUTE
        if end > horizon.start and t.pinned < horizon.end:
            late = t.due is not None and end > t.due
            blocks.append(Block(t.pinned, end, "task", t.title, t.task_id, guessed=t.guessed, pinned=True, late=late))
    late_notes = []
    for t in todo:
        if t.task_id in placed:
            parts, late = placed[t.task_id]
            for k, (a, b) in enumerate(parts, 1):
                blocks.append(
                    Block(
                        at(a), at(b), "task", t.title, t.task_id, part=k, parts=len(parts), guessed=t.guessed, late=late
                    )
                )
            if late:
                late_notes.append(Note(t.task_id, t.title, Reason.NO_ROOM_BEFORE_DUE))
    blocks.sort(key=lambda b: (b.start, b.end, b.kind, b.task_id or 0, b.event_id or "", b.title))
    return Plan(tuple(blocks), tuple(unscheduled), tuple(late_notes))
