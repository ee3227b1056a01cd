"""What the scheduler's tests share: times in a fixed week, plans read back, random small
instances (hypothesis) and the plain minute-by-minute oracles the properties are checked against."""

from __future__ import annotations

import datetime as dt
import math
from functools import cache

from hypothesis import settings
from hypothesis import strategies as st

from planner.schedule import (
    Event,
    Horizon,
    Hours,
    Plan,
    Reason,
    Rule,
    Task,
)

# Derandomized: the same examples on every run and every machine, so a failure reproduces. 60 each: drawing an
# instance and the minute-by-minute oracles cost ~15 ms an example, and 150 made these six a tenth of the suite.

PROPERTY = settings(max_examples=60, deadline=None, derandomize=True)

MON = dt.datetime(2026, 11, 30)  # a Monday
MINUTE = dt.timedelta(minutes=1)


def at(day: int, hhmm: str) -> dt.datetime:
    """A moment `day` days after Monday 2026-11-30."""
    h, m = map(int, hhmm.split(":"))
    return MON + dt.timedelta(days=day, hours=h, minutes=m)


def every_day(start: dt.time, end: dt.time) -> tuple:
    """Working hours with one window, the same on all seven days."""
    return (((start, end),),) * 7


def week(now: dt.datetime = MON) -> Horizon:
    return Horizon(now, MON + dt.timedelta(days=7))


def task_blocks(p: Plan, task_id: int):
    return [b for b in p.blocks if b.kind == "task" and b.task_id == task_id]


def reasons(p: Plan) -> dict[int, Reason]:
    return {n.task_id: n.reason for n in p.unscheduled}


# ---------------------------------------------------------------- random small instances

GRID = 5


@st.composite
def instances(draw, grid: int = GRID, rules_too: bool = True, pins: bool = True, starts: bool = True):
    """A small random planning problem on a grid of minutes."""
    days = draw(st.integers(1, 3))
    start = MON + dt.timedelta(minutes=grid * draw(st.integers(0, 24 * 60 // grid * 2)))
    horizon = Horizon(start, start + dt.timedelta(days=days))
    span = int((horizon.end - MON).total_seconds() // 60) // grid

    def moment() -> dt.datetime:
        return MON + dt.timedelta(minutes=grid * draw(st.integers(0, span)))

    min_block = draw(st.sampled_from([grid, 15, 30])) if grid == GRID else grid
    brk = draw(st.sampled_from([0, 0, 5, 10])) if grid == GRID else 0
    short_day = ((dt.time(9), dt.time(12)), (dt.time(13), dt.time(17)))
    days_hours = draw(st.sampled_from([Hours().week, (short_day,) * 5 + ((), ()), every_day(dt.time(8), dt.time(18))]))
    hours = Hours(days_hours, min_block, brk)
    events = []
    for k in range(draw(st.integers(0, 5))):
        s = moment()
        events.append(Event(s, s + dt.timedelta(minutes=grid * draw(st.integers(0, 30))), f"event {k}", f"e{k}"))
    rules = []
    for _ in range(draw(st.integers(0, 2)) if rules_too else 0):
        kind = draw(st.sampled_from(["avoid", "free", "prefer"]))
        a = draw(st.integers(0, 22))
        b = draw(st.integers(a + 1, 24))
        wd = tuple(draw(st.sets(st.integers(0, 6), max_size=3)))
        tags = tuple(draw(st.sets(st.sampled_from(["deep work", "home"]), max_size=1)))
        rules.append(Rule(kind, dt.time(a), dt.time(b % 24), wd, tags))
    tasks = []
    for i in range(1, draw(st.integers(1, 7)) + 1):
        minutes = grid * draw(st.integers(1, 240 // grid))
        tasks.append(
            Task(
                task_id=i,
                title=f"task {i}",
                minutes=draw(st.sampled_from([minutes] * 9 + [None])),
                guessed=draw(st.booleans()),
                due=draw(st.sampled_from([None, moment()])),
                not_before=draw(st.sampled_from([None, moment()])) if starts else None,
                priority=draw(st.sampled_from(["high", "medium", "low", None])),
                urgency=draw(st.sampled_from([0.0, 1.0, 2.5, 9.0])),
                tags=tuple(draw(st.sets(st.sampled_from(["deep work", "home", "errand"]), max_size=2))),
                list_name=draw(st.sampled_from([None, "home", "work"])),
                pinned=draw(st.sampled_from([None] * 6 + [moment()])) if pins else None,
            )
        )
    return tasks, events, horizon, hours, rules


def _minutes(d: dt.datetime) -> int:
    return int((d - MON).total_seconds() // 60)


def available(t: Task, hours: Hours, rules: list[Rule], horizon: Horizon) -> set[int]:
    """Every minute (since Monday 00:00) the task may use, read straight from the rules."""

    def inside(r_start: dt.time, r_end: dt.time, minute: int) -> bool:
        m = minute % 1440
        lo, hi = r_start.hour * 60 + r_start.minute, r_end.hour * 60 + r_end.minute or 1440
        return lo <= m < hi

    have = {x.casefold() for x in (*t.tags, t.list_name or "")}
    mine = [r for r in rules if not r.tags or {x.casefold() for x in r.tags} & have]
    out = set()
    for minute in range(_minutes(horizon.start), _minutes(horizon.end)):
        wd = (minute // 1440) % 7
        on = [r for r in mine if not r.weekdays or wd in r.weekdays]
        ok = any(inside(s, e, minute) for s, e in hours.week[wd]) or any(
            r.kind == "free" and inside(r.start, r.end, minute) for r in on
        )
        if ok and not any(r.kind == "avoid" and inside(r.start, r.end, minute) for r in on):
            out.add(minute)
    return out


def free_runs(allowed: set[int], others: list[tuple[int, int]], brk: int, lo: int, hi: int) -> list[int]:
    """Lengths of the runs of minutes in [lo, hi) a part could take, a break away from `others`."""
    banned = {m for a, b in others for m in range(a - brk, b + brk)}
    runs, n = [], 0
    for m in range(lo, hi + 1):
        if m < hi and m in allowed and m not in banned:
            n += 1
        elif n:
            runs.append(n)
            n = 0
    return runs


def could_fit(runs: list[int], minutes: int, min_block: int) -> bool:
    """Whether parts of at least min_block (or one whole block) in these runs can hold `minutes`."""
    low = min(min_block, minutes)
    usable = sorted((r for r in runs if r >= low), reverse=True)
    return any(sum(usable[:k]) >= minutes and k * low <= minutes for k in range(1, len(usable) + 1))


def spans(p: Plan, skip: int | None = None) -> list[tuple[int, int]]:
    return [(_minutes(b.start), _minutes(b.end)) for b in p.blocks if not (b.kind == "task" and b.task_id == skip)]


def all_on_time_possible(tasks: list[Task], free: list[int], slot: int) -> bool:
    """Exhaustive search: can every task with a due date get its slots before it (and after its start)?"""
    due = [t for t in tasks if t.due is not None]
    need0 = tuple(t.minutes // slot for t in due)
    ends = [(_minutes(t.due), _minutes(t.not_before) if t.not_before else -math.inf) for t in due]

    @cache
    def search(k: int, need: tuple[int, ...]) -> bool:
        if not any(need):
            return True
        if k == len(free):
            return False
        if any(n and free[k] + slot > ends[i][0] for i, n in enumerate(need)):
            return False  # a task still needing time is past its due date
        options = [i for i, n in enumerate(need) if n and free[k] >= ends[i][1]]
        return search(k + 1, need) or any(search(k + 1, need[:i] + (need[i] - 1,) + need[i + 1 :]) for i in options)

    return search(0, need0)


@st.composite
def mornings(draw):
    """A Monday morning of 16 quarter hours, a few events and up to five tasks: small enough to search."""
    quarter = st.integers(0, 16).map(lambda k: at(0, "09:00") + k * 15 * MINUTE)
    events = [
        Event(s, s + draw(st.integers(1, 4)) * 15 * MINUTE, "event", f"e{k}")
        for k, s in enumerate(draw(st.lists(quarter, max_size=3)))
    ]
    tasks = [
        Task(
            i,
            f"task {i}",
            15 * draw(st.integers(1, 4)),
            due=draw(st.none() | quarter),
            not_before=draw(st.none() | quarter),
            priority=draw(st.sampled_from(["high", "low", None])),
            urgency=draw(st.sampled_from([0.0, 3.0, 8.0])),
        )
        for i in range(1, draw(st.integers(1, 5)) + 1)
    ]
    return tasks, events


# ---------------------------------------------------------------- oracles for the ordered objective, minute by minute


def fewest_parts(runs: list[int], minutes: int, min_block: int) -> int | None:
    """The fewest parts (each at least min_block, or one whole block) these runs can hold `minutes` in."""
    low = min(min_block, minutes)
    usable = sorted((r for r in runs if r >= low), reverse=True)
    for k in range(1, len(usable) + 1):
        if sum(usable[:k]) >= minutes and k * low <= minutes:
            return k
    return None


def task_parts(p: Plan, task_id: int) -> list[tuple[int, int]]:
    return [(_minutes(b.start), _minutes(b.end)) for b in task_blocks(p, task_id)]


def others(p: Plan, *skip: int) -> list[tuple[int, int]]:
    """Every taken span of the plan but those of the tasks in `skip`."""
    return [(_minutes(b.start), _minutes(b.end)) for b in p.blocks if not (b.kind == "task" and b.task_id in skip)]


def deadline_of(t: Task, horizon: Horizon) -> int:
    end = _minutes(horizon.end)
    return min(_minutes(t.due), end) if t.due is not None else end


def start_of(t: Task, horizon: Horizon) -> int:
    return max(_minutes(horizon.start), _minutes(t.not_before) if t.not_before else -math.inf)


def needless_split(p: Plan, t: Task, hours: Hours, rules: list[Rule], horizon: Horizon) -> str | None:
    """Rule (c) for one task: split only when no free gap holds it whole, and then in as few parts as the
    free time allows, by its deadline (by its own end when it is late); what breaks it, or None."""
    parts = task_parts(p, t.task_id)
    if len(parts) < 2 or any(b.pinned for b in task_blocks(p, t.task_id)):
        return None
    limit = max(deadline_of(t, horizon), parts[-1][1]) if t.due is not None else deadline_of(t, horizon)
    runs = free_runs(
        available(t, hours, rules, horizon), others(p, t.task_id), hours.break_minutes, start_of(t, horizon), limit
    )
    need = fewest_parts(runs, t.minutes, hours.min_block)
    if need is not None and need < len(parts):
        return f"task {t.task_id} is in {len(parts)} parts where {need} would do ({runs})"
    return None


def inversion(p: Plan, high: Task, low: Task, hours: Hours, rules: list[Rule], horizon: Horizon) -> bool:
    """Rule (b) for two tasks due the same day: the higher-priority one starts after the lower one though it
    could start, whole, no later than the lower one does, with the lower one still fitting by its deadline (by
    its own end when it is late). Searched minute by minute."""
    hi_parts, lo_parts = task_parts(p, high.task_id), task_parts(p, low.task_id)
    if not hi_parts or not lo_parts or hi_parts[0][0] <= lo_parts[0][0]:
        return False
    brk = hours.break_minutes
    rest = others(p, high.task_id, low.task_id)
    banned = {m for a, b in rest for m in range(a - brk, b + brk)}
    allowed_h = available(high, hours, rules, horizon) - banned
    on_time = high.due is None or hi_parts[-1][1] <= _minutes(high.due)
    lo_limit = deadline_of(low, horizon)
    lo_limit = lo_parts[-1][1] if lo_parts[-1][1] > lo_limit else lo_limit
    for s in range(start_of(high, horizon), lo_parts[0][0] + 1):
        e = s + high.minutes
        if on_time and e > deadline_of(high, horizon) or e > _minutes(horizon.end):
            continue
        if all(m in allowed_h for m in range(s, e)):
            runs = free_runs(
                available(low, hours, rules, horizon), rest + [(s, e)], brk, start_of(low, horizon), lo_limit
            )
            if could_fit(runs, low.minutes, hours.min_block):
                return True
    return False


def same_day_pairs(tasks: list[Task]):
    """(higher, lower) priority pairs of tasks due the same day."""
    rank = {"high": 0, "medium": 1, "low": 2, None: 3}
    for h in tasks:
        for lo in tasks:
            if h.due and lo.due and h.due.date() == lo.due.date() and rank[h.priority] < rank[lo.priority]:
                yield h, lo
