"""The scheduler's values: what goes in (Task, Event, Hours, Rule, Horizon), what comes out (Block, Note, Plan,
Reason), and the check of what goes in (`check`, one clear ScheduleError per wrong value). See planner/schedule
for what a plan promises."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

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


def check(
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
            if clock(e, end=True) <= clock(s):
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
        ordered = sorted((clock(s), clock(e, end=True)) for s, e in spans)
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


def clock(t: dt.time, end: bool = False) -> int:
    """Minutes since midnight; an end of 00:00 is midnight after the day (1440)."""
    m = t.hour * 60 + t.minute
    return 1440 if end and m == 0 else m


def matches(rule: Rule, task: Task) -> bool:
    """Whether a rule is about a task: one of its tags among the task's tags or its list (no tags: every task)."""
    wanted = {x.casefold() for x in rule.tags}
    have = {x.casefold() for x in (*task.tags, task.list_name or "")}
    return not wanted or bool(wanted & have)
