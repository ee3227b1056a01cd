"""The horizon on a clock of minutes (`Day`: working time per task, events and pins on the board), each task as
it is being placed (`Work`), the blocks of the last plan under way now (`in_progress`), and step 1 of a plan:
what cannot go in at all, each with its true reason (`screen`, `why_not`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from planner.freetime import Board, Span, fewest, minus, union
from planner.schedule.types import MINUTE, Block, Event, Horizon, Hours, Note, Plan, Reason, Rule, Task, clock, matches


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
        return [(d * 1440 + clock(s), d * 1440 + clock(e, end=True)) for d in days_on for s, e in spans]

    def base_of(self, t: Task, avoid: bool = True) -> tuple[tuple[list[int], list[int]], list[Span]]:
        """The time the task may use (working hours, free and avoid rules, the horizon) and its preferred windows."""
        sig = tuple(i for i, r in enumerate(self.rules) if matches(r, t) and (avoid or r.kind != "avoid"))
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


def limit(w: Work, day: Day, end: int) -> int:
    """How far a task's parts may reach for rule (c): its deadline, or its own end when it is late."""
    deadline = w.deadline(day.h1)
    return deadline if end <= deadline else end


def gaps_of(day: Day, w: Work, hi: int, board: Board | None = None, skip: tuple[int, ...] = ()) -> list[Span]:
    """The free gaps the task may use from its start to `hi` (its own blocks counting as free)."""
    return list((board or day.board).gaps(w.base, w.lo, hi, (w.tid, -w.tid, *skip)))  # -id: its last blocks


def move(w: Work, parts: list[Span], how: str, day: Day) -> None:
    """Put a task's blocks somewhere else on the board (keeping and settling)."""
    day.board.release(w.tid)
    for a, b in parts:
        day.board.add(a, b, w.tid)
    w.parts, w.how, w.stayed = parts, how, False


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
            ends = [e for s, e in day.hours.week[hz.start.weekday()] if clock(s) < clock(e, end=True)]
            over = max((clock(e, end=True) for e in ends), default=0) <= hz.start.hour * 60 + hz.start.minute
            said = (
                f"working hours ended at {max(ends, key=lambda e: clock(e, end=True)):%H:%M}" if over and ends else ""
            )
            return note(Reason.NO_TIME_LEFT, said or f"not enough working time left after {hz.start:%H:%M}")
        all_day = [e for e in day.events if e.all_day]
        if all_day and Day(hz, day.hours, day.rules, day.events, day.pinned, skip_events="all day").fits(t):
            return note(Reason.ALL_DAY, ", ".join(sorted({e.title for e in all_day})))
        avoided = [r for r in day.rules if r.kind == "avoid" and matches(r, t)]
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
