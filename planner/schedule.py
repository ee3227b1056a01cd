"""The scheduler: open tasks placed into the free time around the calendar, in code.

Pure: typed values in, a typed Plan out; no database, no model, no clock (the caller passes the
horizon, whose start is "now", and the last plan's blocks). Times are local wall-clock times without
a zone, so a day is always 24 hours and 09:00 stays 09:00 across a daylight-saving change.

A plan keeps these rules, in this order when they pull apart (docs/plan.md says why):
(a) deadlines: no due date is missed that could be met; what cannot be on time finishes as early as
    it can, the least priority-weighted lateness first (PRIORITY_WEIGHT per hour late);
(b) priority: of two tasks due the same day, the higher-priority one does not start after the lower
    one when it could start, whole, where the lower one starts, with the lower one still on time
    elsewhere;
(c) whole blocks: a task is never split when a free gap holds it, and otherwise goes into as few parts
    as the gaps allow (each at least `Hours.min_block` minutes), part k of n;
(d) stability: given the last plan, a re-plan moves only what (a)-(c) or the change force: a block
    whose time is still free stays, and a task that must move goes first where nobody stood;
(e) preferences (`Rule`) and breaks.
Always: no task block overlaps an event, another block or the break around them; blocks lie in working
hours or a `free` rule's window, never in an `avoid` rule's, never before the task's `not_before`,
never outside the horizon; pinned tasks keep their block exactly (even over an event: the user put it
there); the same input in any order gives the same plan.

The steps, each a function below: `screen` (what cannot go in at all, with its true reason);
`placing_order` (urgency, with tasks due the same day by priority, and what cannot be on time first);
`place_all` (each task where the last plan had it, else the earliest whole gap, else the fewest parts,
while `freetime.Deadlines` keeps the due work feasible); `settle` (what the order could not see: a
lower-priority task ahead, a split a gap now holds, a late task that now fits); `assemble`.

Not placed, in `Plan.unscheduled` with a `Reason` and a detail: no estimate; not started yet (its start
date); no working time left today; the day taken by an all-day event; kept free by a preference; the
calendar full; longer than the horizon ("longer than the week"); past due (placing it would hide that,
so the user picks a new date); no free time left (other tasks took it); no room before the due date.
Each is the true cause: remove it and the task goes in (tests/test_schedule_properties.py).

Preferences are `Rule`s: a daily window on some weekdays (all if none) about the tasks with one of
its `tags` among their tags or as their list (all tasks if none): avoid (no block of those tasks
there; avoid wins), free (time those tasks may use outside working hours), prefer (those tasks go to
the earliest such window that holds them whole before their due date, else as usual).

Trade-offs: least weighted lateness is NP-hard, and an exact solver is a large dependency taking
seconds; this is a greedy of milliseconds, measured against the exact optimum by bench/plan.py. It
chooses which due work can be on time on a fluid model (splitting at any minute, rules left out), so
it can miss the optimum when the minimum block, start dates or rules matter. (b) and (c) hold exactly
(a property test checks each against a brute-force oracle); (a) and (d) as close as the bench shows.
Events are busy time only: the caller expands repeats and converts zones.
"""

from __future__ import annotations

import copy
import datetime as dt
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Literal

from planner.freetime import Board, Deadlines, Span, clip, fewest, minus, sequence, split, union, within

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
    NOT_STARTED = "not started yet"
    NO_TIME_LEFT = "no working time left today"
    ALL_DAY = "the day is taken by an all-day event"
    PREFERENCE = "kept free by a preference"
    CALENDAR_FULL = "the calendar is full"
    LONGER_THAN_HORIZON = "longer than the horizon"
    NO_WORKING_TIME = "no working time"
    PAST_DUE = "past due"
    NO_FREE_TIME = "no free time left"
    NO_ROOM_BEFORE_DUE = "no room before the due date"
    NOT_DONE = "planned earlier and not done"


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
    running: bool = False  # the user is on it: the caller pins it at now for the minutes left


@dataclass(frozen=True)
class Event:
    """Busy time from the calendar, already expanded, in local time."""

    start: dt.datetime
    end: dt.datetime
    title: str
    event_id: str
    all_day: bool = False


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
    said: str = ""  # the user's words, for "why here"


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
    """One stretch of the plan: an event, or a task (or part `part` of `parts` of it), and why it is there."""

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
    all_day: bool = False
    running: bool = False
    stayed: bool = False  # where the last plan had it
    why: str = ""


@dataclass(frozen=True)
class Note:
    """A task the plan has to mention: not placed, placed late, or planned earlier and not done."""

    task_id: int
    title: str
    reason: Reason
    detail: str = ""


@dataclass(frozen=True)
class Plan:
    """Blocks by start time (events and tasks); tasks not placed; placed after their due date; planned before
    the horizon's start and not done (placed again, or listed as not placed)."""

    blocks: tuple[Block, ...]
    unscheduled: tuple[Note, ...]
    late: tuple[Note, ...]
    replanned: tuple[Note, ...] = ()


def round_up(now: dt.datetime, step: int = 5) -> dt.datetime:
    """`now` rounded up to the next multiple of `step` minutes (itself if already on one)."""
    floor = now.replace(second=0, microsecond=0)
    floor -= dt.timedelta(minutes=floor.minute % step)
    return floor if floor == now else floor + dt.timedelta(minutes=step)


def plan(
    tasks: Sequence[Task],
    events: Sequence[Event],
    horizon: Horizon,
    hours: Hours = Hours(),  # noqa: B008 (frozen, so one shared default is safe)
    rules: Sequence[Rule] = (),
    previous: Plan | None = None,
) -> Plan:
    """Place the tasks into the free time of the horizon; `previous`, the last plan (its task blocks, and the
    tasks it left out or placed late), keeps a re-plan stable. Raises ScheduleError on input it cannot use."""
    last = previous or Plan((), (), ())
    _check(tasks, events, horizon, hours, rules, last.blocks)
    tasks, going = in_progress(tasks, last, horizon)
    day = Day(horizon, hours, rules, events, tasks)
    day.going = going
    ready, notes = screen(tasks, day)
    order = placing_order(ready, day)
    placed = place_all(order, day, last)
    settle(placed, day)
    return assemble(tasks, events, placed, notes, day, last.blocks)


def in_progress(tasks: Sequence[Task], last: Plan, horizon: Horizon) -> tuple[list[Task], set[int]]:
    """The tasks whose whole block of the last plan is under way at the horizon's start (it began before and
    ends after): held there, as if pinned, so a re-plan in the middle of a block leaves it where it is. A
    task split into parts, or whose estimate changed, is placed again instead."""
    blocks: dict[int, list[Block]] = {}
    for b in last.blocks:
        if b.kind == "task" and b.task_id is not None:
            blocks.setdefault(b.task_id, []).append(b)
    out, going = [], set()
    for t in tasks:
        mine = blocks.get(t.task_id, [])
        if t.pinned is None and t.minutes is not None and len(mine) == 1:
            b = mine[0]
            if b.start < horizon.start < b.end and (b.end - b.start) == t.minutes * MINUTE:
                out.append(replace(t, pinned=b.start))
                going.add(t.task_id)
                continue
        out.append(t)
    return out, going


# ---------------------------------------------------------------- the horizon in minutes


@dataclass
class Work:
    """A task being placed: its minutes and bounds on the day's clock, and where it is."""

    task: Task
    minutes: int
    lo: int  # may not start before
    due: int | None  # its due date, when inside the horizon
    base: tuple[list[int], list[int]]  # the time it may use (working hours and rules)
    pref: list[Span]  # its preferred windows
    on_time: bool = False  # protected: the deadlines step found room before its due date
    parts: list[Span] = field(default_factory=list)
    how: str = ""  # how it came where it is, for "why here"
    stayed: bool = False

    @property
    def tid(self) -> int:
        return self.task.task_id

    @property
    def start(self) -> int:
        return self.parts[0][0]

    @property
    def end(self) -> int:
        return self.parts[-1][1]

    def deadline(self, h1: int) -> int:
        """Where an on-time placement must end: the due date inside the horizon, else its end."""
        return self.due if self.due is not None else h1


class Day:
    """The horizon as minutes from the midnight it starts on: working time per task, events, the board."""

    def __init__(
        self,
        horizon: Horizon,
        hours: Hours,
        rules: Sequence[Rule],
        events: Sequence[Event],
        tasks: Sequence[Task],
        skip_events: bool | str = False,
    ):
        self.horizon, self.hours, self.origin = horizon, hours, dt.datetime.combine(horizon.start.date(), dt.time())
        self.h0 = self.ceil(horizon.start)
        self.h1 = max(self.h0, self.floor(horizon.end))
        self.mb, self.brk = hours.min_block, hours.break_minutes
        self.days = range(-(-self.h1 // 1440) + 1)
        self.rules = sorted(rules, key=lambda r: (r.kind, r.start, r.end, sorted(r.weekdays), sorted(r.tags)))
        self.by_rule = [self.daily([(r.start, r.end)], r.weekdays or range(7)) for r in self.rules]
        self.work = [sp for wd in range(7) for sp in self.daily(hours.week[wd], [wd])]
        self.events = [e for e in events if not (skip_events is True or (skip_events == "all day" and e.all_day))]
        fixed = [(self.floor(e.start), self.ceil(e.end)) for e in self.events]
        self.pinned = [t for t in tasks if t.pinned is not None and t.minutes is not None]
        fixed += [(self.floor(t.pinned), self.ceil(t.pinned + t.minutes * MINUTE)) for t in self.pinned]
        self.board = Board(self.brk, fixed)
        self._bases: dict[tuple[int, ...], tuple[tuple[list[int], list[int]], list[Span]]] = {}
        self._room: dict[tuple[int, int, int], list[Span]] = {}
        self.going: set[int] = set()  # tasks held in the block the last plan gave them, under way now

    def floor(self, d: dt.datetime) -> int:
        return (d - self.origin) // MINUTE

    def ceil(self, d: dt.datetime) -> int:
        return -((self.origin - d) // MINUTE)

    def at(self, m: int) -> dt.datetime:
        return self.origin + m * MINUTE

    def daily(self, spans: Iterable[tuple[dt.time, dt.time]], weekdays: Iterable[int]) -> list[Span]:
        on = set(weekdays)
        days_on = [d for d in self.days if (self.origin.weekday() + d) % 7 in on]
        return [(d * 1440 + _clock(s), d * 1440 + _clock(e, end=True)) for d in days_on for s, e in spans]

    def base_of(self, t: Task, avoid: bool = True) -> tuple[tuple[list[int], list[int]], list[Span]]:
        """The time the task may use (working hours, free and avoid rules, the horizon) and its preferred windows."""
        sig = tuple(i for i, r in enumerate(self.rules) if _matches(r, t) and (avoid or r.kind != "avoid"))
        if sig not in self._bases:
            kind = {
                k: [sp for i in sig if self.rules[i].kind == k for sp in self.by_rule[i]]
                for k in ("avoid", "free", "prefer")
            }
            outside = [(self.h0 - 2880, self.h0), (self.h1, self.h1 + 2880)]
            spans = minus(union(self.work + kind["free"]), kind["avoid"] + outside)
            self._bases[sig] = (([a for a, _ in spans], [b for _, b in spans]), union(kind["prefer"]))
        return self._bases[sig]

    def generic(self) -> tuple[list[int], list[int]]:
        """The time a task with no tags and no list may use: the common working time."""
        return self.base_of(Task(0, "", 1))[0]

    def room(self, t: Task, lo: int | None = None, hi: int | None = None, avoid: bool = True) -> list[Span]:
        """The free gaps the task could use with no other task placed (asked before any is)."""
        start = max(self.h0, self.ceil(t.not_before)) if t.not_before is not None and lo is None else lo
        base = self.base_of(t, avoid)[0]
        key = (id(base), self.h0 if start is None else start, hi or self.h1)
        if key not in self._room:
            self._room[key] = list(self.board.gaps(base, *key[1:]))
        return self._room[key]

    def fits(self, t: Task, **kw) -> bool:
        """Whether the task fits, alone, in the free time (with the minimum block)."""
        assert t.minutes is not None
        return fewest(self.room(t, **kw), t.minutes, self.mb) is not None

    def work_of(self, t: Task) -> Work:
        assert t.minutes is not None
        lo = max(self.h0, self.ceil(t.not_before)) if t.not_before is not None else self.h0
        due = self.floor(t.due) if t.due is not None and self.floor(t.due) < self.h1 else None
        base, pref = self.base_of(t)
        return Work(t, t.minutes, lo, due, base, pref)


def _clock(t: dt.time, end: bool = False) -> int:
    m = t.hour * 60 + t.minute
    return 1440 if end and m == 0 else m


def _matches(rule: Rule, task: Task) -> bool:
    wanted = {x.casefold() for x in rule.tags}
    have = {x.casefold() for x in (*task.tags, task.list_name or "")}
    return not wanted or bool(wanted & have)


# ---------------------------------------------------------------- step 1: what cannot go in, and why


def screen(tasks: Sequence[Task], day: Day) -> tuple[list[Work], list[Note]]:
    """The tasks that can go in (not pinned, an estimate, room alone), and a true reason for each other one."""
    ready, notes = [], []
    for t in sorted(tasks, key=lambda t: t.task_id):
        if t.pinned is not None and t.minutes is not None:
            continue
        note = why_not(t, day)
        if note:
            notes.append(note)
        else:
            ready.append(day.work_of(t))
    return ready, notes


def why_not(t: Task, day: Day) -> Note | None:
    """Why the task cannot go in even alone (None: it can). Each cause is tested by taking it away alone:
    the first whose removal lets the task fit is the one said; a task that fits nowhere is longer than
    the horizon."""

    def note(reason: Reason, detail: str = "") -> Note:
        return Note(t.task_id, t.title, reason, detail)

    if t.minutes is None:
        return note(Reason.NO_ESTIMATE)
    hz = day.horizon
    if t.not_before is not None and t.not_before >= hz.end:
        return note(Reason.NOT_STARTED, f"starts {t.not_before:%a %Y-%m-%d}")
    if not day.fits(t):
        first_day = dt.datetime.combine(hz.start.date(), dt.time())
        if t.not_before is not None and t.not_before > hz.start and day.fits(t, lo=day.h0):
            return note(Reason.NOT_STARTED, f"starts {t.not_before:%a %Y-%m-%d}")
        if hz.start > first_day and _fits_from(t, day, first_day):
            ends = [e for s, e in day.hours.week[hz.start.weekday()] if _clock(s) < _clock(e, end=True)]
            over = max((_clock(e, end=True) for e in ends), default=0) <= hz.start.hour * 60 + hz.start.minute
            said = (
                f"working hours ended at {max(ends, key=lambda e: _clock(e, end=True)):%H:%M}" if over and ends else ""
            )
            return note(Reason.NO_TIME_LEFT, said or f"not enough working time left after {hz.start:%H:%M}")
        all_day = [e for e in day.events if e.all_day]
        if all_day and Day(hz, day.hours, day.rules, day.events, day.pinned, skip_events="all day").fits(t):
            return note(Reason.ALL_DAY, ", ".join(sorted({e.title for e in all_day})))
        avoided = [r for r in day.rules if r.kind == "avoid" and _matches(r, t)]
        if avoided and day.fits(t, avoid=False):
            return note(Reason.PREFERENCE, "; ".join(r.said for r in avoided if r.said))
        if (day.events or day.pinned) and Day(hz, day.hours, day.rules, [], [], skip_events=True).fits(t):
            return note(Reason.CALENDAR_FULL)
        total = sum(b - a for a, b in day.room(t))
        days = (hz.end - hz.start) / dt.timedelta(days=1)
        span = "the day" if days <= 1 else "the week" if days <= 7 else "the time planned"
        if not total:
            return note(Reason.NO_WORKING_TIME, f"none in {span} ({hz.start:%a %H:%M} to {hz.end:%a %H:%M})")
        return note(Reason.LONGER_THAN_HORIZON, f"longer than {span}: it has {_length(total)} free for it")
    if t.due is not None and t.due <= hz.start:
        return note(Reason.PAST_DUE, f"was due {t.due:%a %Y-%m-%d %H:%M}")
    return None


def _fits_from(t: Task, day: Day, start: dt.datetime) -> bool:
    """Whether the task would fit if the horizon began at `start` (the day's midnight), events and all."""
    earlier = Day(Horizon(start, day.horizon.end), day.hours, day.rules, day.events, day.pinned)
    return earlier.fits(t)


def _length(minutes: int) -> str:
    h, m = divmod(minutes, 60)
    return f"{h}h{m:02d}m" if h and m else f"{h}h" if h else f"{m}m"


# ---------------------------------------------------------------- step 2: the order


def placing_order(ready: list[Work], day: Day) -> list[Work]:
    """Deadlines first: due work that cannot be on time, in the order of least weighted lateness; then the
    tasks due inside the horizon; then the others. Inside each, urgency (ties: due date, priority, id), with
    the tasks due the same day put in the places they hold by priority."""
    key = {
        w.tid: (-w.task.urgency, w.task.due or dt.datetime.max, PRIORITY_RANK[w.task.priority], w.tid) for w in ready
    }
    order = sorted(ready, key=lambda w: key[w.tid])
    by_day: dict[dt.date, list[int]] = {}
    for i, w in enumerate(order):
        if w.task.due is not None:
            by_day.setdefault(w.task.due.date(), []).append(i)
    for places in by_day.values():
        group = sorted((order[i] for i in places), key=lambda w: (PRIORITY_RANK[w.task.priority], key[w.tid]))
        for i, w in zip(places, group, strict=True):
            order[i] = w
    late = deadlines(ready, day)
    first = {w.tid for w in late}
    due = [w for w in order if w.due is not None and w.tid not in first]
    return late + due + [w for w in order if w.due is None]


def deadlines(ready: list[Work], day: Day) -> list[Work]:
    """Mark the due work that can be on time (it is protected while others are placed); the rest of the due
    work, in the order of least priority-weighted lateness (freetime.sequence, on a fluid model)."""
    due = [w for w in ready if w.due is not None]
    gaps = list(day.board.gaps(day.generic(), day.h0, day.h1))
    jobs = [(w.minutes, w.due, PRIORITY_WEIGHT[w.task.priority], (w.task.due, w.tid), w.lo) for w in due]
    finish = sequence(jobs, gaps, day.h1)  # type: ignore[arg-type]
    late = []
    for w, (_, f) in sorted(zip(due, finish, strict=True), key=lambda x: x[1]):
        if f <= w.due and w.lo + w.minutes <= w.due:  # type: ignore[operator]
            w.on_time = True
        else:
            late.append(w)
    # The fluid order can give up work that still fits: add back what keeps all of it feasible (Horn's test),
    # the costliest hour late first.
    jobs_on = {w.tid: (w.minutes, w.lo, w.due) for w in due if w.on_time}
    guard = Deadlines(dict(jobs_on), gaps, day.brk)  # type: ignore[arg-type]
    for w in sorted(late, key=lambda w: (-PRIORITY_WEIGHT[w.task.priority], w.minutes, w.tid)):
        if w.lo + w.minutes > w.due or not guard.room_for(w.minutes, w.lo, w.due):  # type: ignore[operator]
            continue
        more = Deadlines({**jobs_on, w.tid: (w.minutes, w.lo, w.due)}, gaps, day.brk)  # type: ignore[dict-item]
        if more.feasible():
            jobs_on[w.tid] = (w.minutes, w.lo, w.due)  # type: ignore[assignment]
            guard, w.on_time = more, True
    return [w for w in late if not w.on_time]


# ---------------------------------------------------------------- step 3: placing


class Placer:
    """The board while tasks go in one by one: the due work kept feasible (freetime.Deadlines), and the last
    plan's blocks of the tasks not placed yet held as taken on a second board (`soft`), so that a task that
    must move goes first where nobody stood."""

    def __init__(self, day: Day, previous: dict[int, list[Span]], protected: list[Work]):
        self.day, self.previous = day, previous
        # (the time it may use, start, end) -> the fewest minutes that found no room there
        self.failed: dict[tuple[int, int, int], int] = {}
        self.rank: dict[int, int] = {}  # task id -> its place in the placing order
        self.soft = Board(day.brk, [])
        self.soft.starts, self.soft.ends = list(day.board.starts), list(day.board.ends)
        self.soft.owners = list(day.board.owners)
        for tid, spans in previous.items():
            for a, b in spans:
                self.soft.add(a, b, -tid)
        gaps = list(day.board.gaps(day.generic(), day.h0, day.h1))
        while True:
            jobs = {w.tid: (w.minutes, w.lo, w.due) for w in protected}
            self.guard = Deadlines(jobs, gaps, day.brk)  # type: ignore[arg-type]
            if self.guard.feasible():
                break
            # The fluid order and Horn's test can disagree at the edge: give up the latest due, lightest one.
            worst = max(protected, key=lambda w: (w.due, -PRIORITY_WEIGHT[w.task.priority], w.tid))
            worst.on_time = False
            protected.remove(worst)

    def boards(self) -> Iterator[Board]:
        """Where to look in a re-plan, softest first: free time only; then also the last blocks of the least urgent
        tasks not placed yet, one, two, four... of them; then everything not placed (the hard board). So a task
        that must take someone's time takes it from the least urgent, and from as few as it can."""
        if not self.previous:
            yield self.day.board
            return
        yield self.soft
        waiting = sorted({-o for o in self.soft.owners if o is not None and o < 0}, key=lambda t: -self.rank.get(t, 0))
        k = 1
        while k < len(waiting):
            board = Board(self.day.brk, [])
            board.starts, board.ends, board.owners = (
                list(self.soft.starts),
                list(self.soft.ends),
                list(self.soft.owners),
            )
            for tid in waiting[:k]:
                board.release(-tid)
            yield board
            k *= 2
        yield self.day.board

    def put(self, w: Work, parts: list[Span], how: str, stayed: bool = False) -> None:
        """Place the task: its time is taken on both boards, and the due work knows it."""
        self.guard.commit(w.tid if w.on_time else None, parts)
        for board in (self.day.board, self.soft):
            for a, b in parts:
                board.add(a, b, w.tid)
        self.soft.release(-w.tid)
        w.parts, w.how, w.stayed = parts, how, stayed

    def allowed(self, w: Work, parts: list[Span] | None) -> bool:
        """Whether these parts keep the due work feasible."""
        return bool(parts) and self.guard.allows(w.tid if w.on_time else None, parts)  # type: ignore[arg-type]

    def full(self, w: Work, hi: int) -> list[Span] | None:
        """The free gaps the task may use by `hi`, or None when they cannot hold it at all; a None is remembered
        (the board only fills while placing; `forget` when it frees), so the many tasks of an overloaded week
        do not each search it again."""
        key = (id(w.base[0]), w.lo, hi)
        if w.minutes >= self.failed.get(key, math.inf):
            return None
        gaps = _gaps(self.day, w, hi)
        if fewest(gaps, w.minutes, self.day.mb) is None:
            self.failed[key] = w.minutes
            return None
        return gaps

    def give_up(self, w: Work) -> None:
        """The task cannot be on time after all (the minimum block, rules): it stops holding time."""
        if w.on_time:
            self.guard.release(w.tid)
            w.on_time = False


def place_all(order: list[Work], day: Day, previous: Plan) -> list[Work]:
    """The last plan's blocks that still hold, all at once (`keep`); then each other task in order where
    `spot` finds room. A task for which neither works stays out (`assemble` says why)."""
    was: dict[int, list[Span]] = {}  # of the tasks still to place: a task done since frees its blocks
    ids = {w.tid for w in order}
    for b in sorted(previous.blocks, key=lambda b: (b.start, b.end)):
        if b.kind == "task" and b.task_id in ids and b.start >= day.horizon.start:
            was.setdefault(b.task_id, []).append((day.floor(b.start), day.ceil(b.end)))
    placer = Placer(day, was, [w for w in order if w.on_time])
    placer.rank = {w.tid: i for i, w in enumerate(order)}
    if was:
        late = {n.task_id for n in (*previous.unscheduled, *previous.late)}
        keep(order, was, late, placer)
    due = [w for w in order if w.due is not None]
    for w in due:
        if not w.parts and (found := partly(w, was.get(w.tid), placer) or spot(w, placer)):
            placer.put(w, *found)
    for w in due:  # with the due work placed, what is left out or late may finish earlier, or on time
        if not w.parts or w.end > w.due:  # type: ignore[operator]
            was_end = w.end if w.parts else math.inf
            placer.day.board.release(w.tid)
            found = _on_time(w, _gaps(placer.day, w, w.due), placer) or late_spot(w, placer)  # type: ignore[arg-type]
            if found and found[0][-1][1] < was_end:
                placer.put(w, *found)
                placer.failed.clear()  # its old time is free again
            elif w.parts:
                placer.put(w, w.parts, w.how, w.stayed)
    for w in order:
        if w.due is None and not w.parts and (found := partly(w, was.get(w.tid), placer) or spot(w, placer)):
            placer.put(w, *found)
    return order


def partly(w: Work, was: list[Span] | None, placer: Placer) -> tuple[list[Span], str] | None:
    """A task some of whose blocks of the last plan still hold: those stay, and the minutes they miss go in
    the fewest parts where nobody stood (else anywhere), if that makes no more parts than the task needs and
    keeps it on time; None otherwise (it is placed afresh)."""
    day, low = placer.day, min(placer.day.mb, w.minutes)
    stay: list[Span] = []
    for a, b in was or ():
        if a >= w.lo and b - a >= low and day.board.holds(w.base, [*stay, (a, b)]):
            stay.append((a, b))
    rest = w.minutes - sum(b - a for a, b in stay)
    if not stay or rest <= 0:
        return None
    hi = w.deadline(day.h1) if w.due is None or w.on_time else day.h1
    for board in placer.boards():  # judged on the board it is placed on, as `spot` does
        gaps = [g for g in _gaps(day, w, hi, board) if not any(a < g[1] and g[0] < b for a, b in stay)]
        more = fewest(gaps, rest, day.mb)
        parts = _joined(sorted(stay + (more or [])))
        need = more and fewest(_gaps(day, w, _limit(w, day, parts[-1][1]), board), w.minutes, day.mb)
        if more and need and len(parts) <= len(need) and all(b - a >= low for a, b in parts):
            if placer.allowed(w, parts):
                return parts, f"keeps {len(stay)} of its blocks where the last plan put them"
    return None


def _joined(parts: list[Span]) -> list[Span]:
    """Parts that touch, as one."""
    out: list[Span] = []
    for a, b in parts:
        if out and out[-1][1] == a:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def keep(order: list[Work], was: dict[int, list[Span]], late: set[int], placer: Placer) -> None:
    """Keep the last plan's blocks that still hold: free of events and pins, allowed, the whole estimate; on
    time when the task can be; split only where no gap holds the task, in no more parts than needed (with
    the others kept); and with the due work not kept still feasible (else the least urgent give way). A due
    task the last plan left out or placed late, and that still has no room before its due date with the
    others kept, does not take their time again: only a task new to being late does."""
    day = placer.day
    ranked = {w.tid: i for i, w in enumerate(order)}
    kept = []
    for w in order:
        parts = was.get(w.tid)
        if parts and sum(b - a for a, b in parts) == w.minutes and parts[0][0] >= w.lo:
            if all(b - a >= min(day.mb, w.minutes) for a, b in parts) and day.board.holds(w.base, parts):
                kept.append(w)
                _move(w, parts, "stays where the last plan put it", day)
    changed = True
    while changed:  # what no longer holds with the others kept gives its time back, which may undo another
        changed = False
        for w in list(kept):
            if not _holds(w, day):
                day.board.release(w.tid)
                w.parts = []
                kept.remove(w)
                changed = True
    for w in order:
        if w.due is not None and (w.end > w.due if w.parts else w.tid in late):
            if not fewest(_gaps(day, w, w.due), w.minutes, day.mb):
                placer.give_up(w)  # late as before, and no room before its due date: not protected any more
    while kept and (short := _short(kept, placer)):  # give way: the least urgent with time where it is short
        r, d = short
        inside = [w for w in kept if any(a < d and b > r for a, b in w.parts)] or kept
        last = max(inside, key=lambda w: ranked[w.tid])
        day.board.release(last.tid)
        last.parts = []
        kept.remove(last)
    for w in kept:
        parts = w.parts
        day.board.release(w.tid)
        placer.put(w, parts, "stays where the last plan put it", stayed=True)


def _holds(w: Work, day: Day) -> bool:
    """Whether kept blocks still keep rules (a) and (c) with everything else kept."""
    if w.due is not None and w.end > w.due and fewest(_gaps(day, w, w.due), w.minutes, day.mb):
        return False  # it can be on time now
    if len(w.parts) > 1:
        best = fewest(_gaps(day, w, _limit(w, day, w.end)), w.minutes, day.mb)
        return best is not None and len(best) >= len(w.parts)
    return True


def _short(kept: list[Work], placer: Placer) -> Span | None:
    """Where the due work not kept no longer fits once the kept blocks are taken (None: it fits)."""
    guard = copy.deepcopy(placer.guard)
    for w in kept:
        guard.commit(w.tid if w.on_time else None, w.parts)
    return guard.short()


def _limit(w: Work, day: Day, end: int) -> int:
    """How far a task's parts may reach for rule (c): its deadline, or its own end when it is late."""
    deadline = w.deadline(day.h1)
    return deadline if end <= deadline else end


def _gaps(day: Day, w: Work, hi: int, board: Board | None = None, skip: tuple[int, ...] = ()) -> list[Span]:
    """The free gaps the task may use from its start to `hi` (its own blocks counting as free)."""
    return list((board or day.board).gaps(w.base, w.lo, hi, (w.tid, -w.tid, *skip)))  # -id: its last blocks


def _mirror(spans: Iterable[Span]) -> list[Span]:
    return [(-b, -a) for a, b in reversed(list(spans))]


def spot(w: Work, placer: Placer) -> tuple[list[Span], str] | None:
    """Where a task goes. On time if it can be: a preferred window that holds it whole, else the earliest
    whole gap, else the fewest parts; if the due work needs that time, a later whole gap, the fewest parts
    as late as they go, or more parts. All of it first where no task of the last plan stood (the task may be
    split there though a gap it would take from another holds it whole: `settle` joins it if that gap frees
    up), then anywhere. A task that cannot be on time: `late_spot`."""
    day = placer.day
    if w.due is None or w.on_time:
        hi = w.deadline(day.h1)
        hard = placer.full(w, hi)
        if hard is not None:
            for board in placer.boards():
                found = _on_time(w, hard if board is day.board else _gaps(day, w, hi, board), placer)
                if found:
                    return found
        if w.due is None:
            return None
        placer.give_up(w)
    return late_spot(w, placer)


def _on_time(w: Work, gaps: list[Span], placer: Placer) -> tuple[list[Span], str] | None:
    m, mb = w.minutes, placer.day.mb
    for a, b in within(gaps, w.pref) if w.pref else ():
        if b - a >= m and placer.allowed(w, [(a, a + m)]):
            return [(a, a + m)], "a preferred time"
    for a, b in gaps:
        for s in (a, b - m) if b - a >= m else ():
            if placer.allowed(w, [(s, s + m)]):
                return [(s, s + m)], "the earliest free time that holds it whole"
    least = fewest(gaps, m, mb)
    if not least:
        return None
    latest = _mirror(fewest(_mirror(gaps), m, mb) or [])  # the same number of parts, as late as they go
    for parts in (least, latest):
        if len(parts) == len(least) and placer.allowed(w, parts):
            return parts, f"no free gap holds it whole: in {len(parts)} parts"
    parts = split(gaps, m, mb, backward=True)  # more parts: the due work needs the rest
    if placer.allowed(w, parts):
        return parts, f"in {len(parts)} parts around time other due tasks need"  # type: ignore[return-value]
    return None


def late_spot(w: Work, placer: Placer) -> tuple[list[Span], str] | None:
    """A task that cannot be on time: the earliest finish the due work leaves (a later first gap, found by
    halving, while the due work needs the earlier ones), in as few parts as that finish allows. In a re-plan,
    first where no task of the last plan stood: a task late either way does not push others out."""
    day = placer.day
    for board in placer.boards():
        found = _earliest_finish(w, _gaps(day, w, day.h1, board), placer)
        if found:
            return found, "late: no room before its due date"
    return None


def _earliest_finish(w: Work, gaps: list[Span], placer: Placer) -> list[Span] | None:
    mb, m = placer.day.mb, w.minutes

    def at(first: int) -> list[Span] | None:
        earliest = split(gaps[first:], m, mb)
        return earliest and (fewest(clip(gaps[first:], earliest[-1][1]), m, mb) or earliest)

    lo, hi = 0, len(gaps)
    if not at(0):
        return None
    while lo < hi:  # the first start from which a placement keeps the due work feasible
        mid = (lo + hi) // 2
        parts = at(mid)
        if parts and placer.allowed(w, parts):
            hi = mid
        else:
            lo = mid + 1
    parts = at(lo) if lo < len(gaps) else None
    return parts if parts and placer.allowed(w, parts) else None


# ---------------------------------------------------------------- step 4: settling


def settle(placed: list[Work], day: Day) -> None:
    """Fix what placing one by one could not see, pass after pass until one changes nothing (bounded): a task
    left out or late that now fits; a split task a gap now holds whole, or in fewer parts; a lower-priority
    task ahead of a higher one due the same day, where the higher one fits whole (they change places)."""
    fixes = Fixes(day)
    for _ in range(2 * len(placed) + 4):
        if not (fixes.now_fits(placed) | fixes.needless_splits(placed) | fixes.inversions(placed)):
            return


class Fixes:
    """The board as settling changes it: each move frees time, so what was found not to fit is asked again
    only after a move (`version`)."""

    def __init__(self, day: Day):
        self.day, self.version = day, 0
        self.failed: dict[tuple[int, int, int], tuple[int, int]] = {}  # key -> (version, fewest minutes not fitting)
        self.no_swap: set[tuple[int, int, int]] = set()  # (high, low, version) found not to swap

    def move(self, w: Work, parts: list[Span], how: str) -> None:
        _move(w, parts, how, self.day)
        self.version += 1

    def fit(self, w: Work, hi: int) -> list[Span] | None:
        """The fewest parts by `hi`, remembering what did not fit since the last move."""
        key = (id(w.base[0]), w.lo, hi)
        seen = self.failed.get(key)
        if seen and seen[0] == self.version and w.minutes >= seen[1]:
            return None
        parts = fewest(_gaps(self.day, w, hi), w.minutes, self.day.mb)
        if parts is None and not w.parts:  # its own blocks count as free, so only tasks left out share the key
            self.failed[key] = (
                self.version,
                min(w.minutes, seen[1] if seen and seen[0] == self.version else w.minutes),
            )
        return parts

    def now_fits(self, placed: list[Work]) -> bool:
        """Tasks left out, or late, that fit before their deadline now; tasks left out that fit late."""
        changed = False
        for w in placed:
            if w.parts and (w.due is None or w.end <= w.due):
                continue
            parts = self.fit(w, w.deadline(self.day.h1))
            if parts:
                self.move(w, parts, "the earliest free time before its due date")
                changed = True
            elif not w.parts and w.due is not None and (parts := self.fit(w, self.day.h1)):
                earliest = split(_gaps(self.day, w, self.day.h1), w.minutes, self.day.mb) or parts
                parts = fewest(clip(_gaps(self.day, w, self.day.h1), earliest[-1][1]), w.minutes, self.day.mb)
                self.move(w, parts or earliest, "late: no room before its due date")
                changed = True
        return changed

    def needless_splits(self, placed: list[Work]) -> bool:
        """Split tasks that a gap now holds whole (or in fewer parts), by their deadline (their end when late)."""
        changed = False
        for w in placed:
            if len(w.parts) > 1:
                parts = fewest(_gaps(self.day, w, _limit(w, self.day, w.end)), w.minutes, self.day.mb)
                if parts and len(parts) < len(w.parts):
                    how = "the earliest free time that holds it whole" if len(parts) == 1 else f"in {len(parts)} parts"
                    self.move(w, parts, how)
                    changed = True
        return changed

    def inversions(self, placed: list[Work]) -> bool:
        """Lower-priority tasks due the same day starting before a higher one that could take their place."""
        changed = False
        by_day: dict[dt.date, list[Work]] = {}
        for w in placed:
            if w.parts and w.task.due is not None:
                by_day.setdefault(w.task.due.date(), []).append(w)
        for group in by_day.values():
            for low in group:
                for high in group:
                    if PRIORITY_RANK[high.task.priority] >= PRIORITY_RANK[low.task.priority] or high.start <= low.start:
                        continue
                    key = (high.tid, low.tid, self.version)
                    if key not in self.no_swap:
                        if _swap(high, low, self.day):
                            self.version += 1
                            changed = True
                        else:
                            self.no_swap.add((high.tid, low.tid, self.version))
        return changed


def _move(w: Work, parts: list[Span], how: str, day: Day) -> None:
    day.board.release(w.tid)
    for a, b in parts:
        day.board.add(a, b, w.tid)
    w.parts, w.how, w.stayed = parts, how, False


def _swap(high: Work, low: Work, day: Day) -> bool:
    """The higher-priority task whole, starting no later than the lower one does; the lower one where it
    was if that is still free, else in the fewest parts by its deadline. False, and nothing changed, if no
    start works."""
    was = [(w, w.parts, w.how, w.stayed) for w in (high, low)]
    on_time = high.due is None or high.end <= high.due
    gaps = list(day.board.gaps(high.base, high.lo, low.start + high.minutes, (high.tid, low.tid)))
    m = high.minutes
    for s in sorted({s for a, b in gaps if a <= low.start and b - a >= m for s in (a, min(low.start, b - m))}):
        if on_time and high.due is not None and s + m > high.due:
            continue
        day.board.release(low.tid)
        _move(high, [(s, s + m)], "before a lower-priority task due the same day", day)
        if day.board.holds(low.base, was[1][1], (low.tid,)):
            _move(low, was[1][1], was[1][2], day)
            return True
        parts = fewest(_gaps(day, low, _limit(low, day, was[1][1][-1][1])), low.minutes, day.mb)
        if parts:
            _move(low, parts, "after a higher-priority task due the same day", day)
            return True
    for w, parts, how, stayed in was:
        _move(w, parts, how, day)
        w.stayed = stayed
    return False


# ---------------------------------------------------------------- step 5: the plan


def assemble(
    tasks: Sequence[Task],
    events: Sequence[Event],
    placed: list[Work],
    notes: list[Note],
    day: Day,
    previous: Sequence[Block],
) -> Plan:
    """The blocks by start time, each with why it is there; what was not placed, what is late, and what was
    planned before now and is not done."""
    hz = day.horizon
    shown = [e for e in events if e.end > e.start and e.end > hz.start and e.start < hz.end]
    blocks = [Block(e.start, e.end, "event", e.title, event_id=e.event_id, all_day=e.all_day) for e in shown]
    for t in day.pinned:
        start, end = t.pinned, t.pinned + t.minutes * MINUTE  # type: ignore[operator]
        if end > hz.start and start < hz.end:  # type: ignore[operator]
            late = t.due is not None and end > t.due and not t.running
            going = t.task_id in day.going
            why = "running now" if t.running else f"under way since {start:%H:%M}, as planned" if going else "pinned"
            blocks.append(
                Block(start, end, "task", t.title, t.task_id, guessed=t.guessed, pinned=not going, late=late)  # type: ignore[arg-type]
            )
            blocks[-1] = replace(blocks[-1], running=t.running, stayed=going, why=why)
    late_notes, unplaced = [], []
    for w in sorted(placed, key=lambda w: w.tid):
        if not w.parts:
            reason = Reason.NO_ROOM_BEFORE_DUE if w.due is not None else Reason.NO_FREE_TIME
            unplaced.append(Note(w.tid, w.task.title, reason, "other tasks took the time"))
            continue
        late = w.due is not None and w.end > w.due
        why = _why(w, late, day)
        for k, (a, b) in enumerate(w.parts, 1):
            blocks.append(
                Block(
                    day.at(a),
                    day.at(b),
                    "task",
                    w.task.title,
                    w.tid,
                    part=k,
                    parts=len(w.parts),
                    guessed=w.task.guessed,
                    late=late,
                    stayed=w.stayed,
                    why=why,
                )
            )
        if late:
            late_notes.append(Note(w.tid, w.task.title, Reason.NO_ROOM_BEFORE_DUE, f"due {w.task.due:%a %H:%M}"))
    blocks.sort(key=lambda b: (b.start, b.end, b.kind, b.task_id or 0, b.event_id or "", b.title))
    unscheduled = tuple(sorted(notes + unplaced, key=lambda n: n.task_id))
    return Plan(tuple(blocks), unscheduled, tuple(late_notes), _replanned(tasks, previous, blocks, hz))


def _why(w: Work, late: bool, day: Day) -> str:
    """Why a task's blocks are where they are, in a line: its due date, its priority, how it came there."""
    bits = [f"due {w.task.due:%a %H:%M}"] if w.task.due is not None else []
    bits += [f"{w.task.priority} priority"] if w.task.priority else []
    how = w.how
    if how == "a preferred time":
        said = [r.said for r in day.rules if r.kind == "prefer" and r.said and _matches(r, w.task)]
        how += f" ({'; '.join(said)})" if said else ""
    bits.append("late: no room before its due date" if late and "late" not in how else how)
    return "; ".join(bits)


def _replanned(tasks: Sequence[Task], previous: Sequence[Block], blocks: list[Block], hz: Horizon) -> tuple[Note, ...]:
    """Tasks the last plan had earlier the same day, ended before the horizon's start, and still open and not
    running: never dropped, placed again (or listed with their reason), and said."""
    open_ids = {t.task_id: t for t in tasks if not t.running}
    day_start = dt.datetime.combine(hz.start.date(), dt.time())
    out: dict[int, Note] = {}
    for b in sorted(previous, key=lambda b: (b.start, b.end)):
        if b.kind != "task" or b.task_id not in open_ids or not (day_start <= b.start and b.end <= hz.start):
            continue
        t = open_ids[b.task_id]
        now = next((x for x in blocks if x.kind == "task" and x.task_id == b.task_id), None)
        where = f"planned again at {now.start:%H:%M}" if now else "not planned again"
        if now and now.start.date() != hz.start.date():
            where = f"planned again {now.start:%a %H:%M}"
        out[b.task_id] = Note(b.task_id, t.title, Reason.NOT_DONE, f"was {b.start:%H:%M}-{b.end:%H:%M}; {where}")
    return tuple(out[k] for k in sorted(out))


# ---------------------------------------------------------------- input checks


def _check(
    tasks: Sequence[Task],
    events: Sequence[Event],
    horizon: Horizon,
    hours: Hours,
    rules: Sequence[Rule],
    previous: Sequence[Block] = (),
) -> None:
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
    for b in previous:
        when(b.start, "a block of the last plan"), when(b.end, "a block of the last plan")
        if b.end < b.start:
            raise ScheduleError(f"a block of the last plan ends ({b.end}) before it starts ({b.start})")
