"""The scheduler against the optimum of the same ordered objective, on random weeks: `python -m bench plan`.

Each instance (fixed seeds) is a week or two of Monday-Friday 09:00-17:00 from
Monday 09:00, with 0-40 events, and tasks of 15 minutes to 4 hours: about 40%
due inside the horizon (at 17:00 or at a time of day), some past due, some due
later, the rest without a due date; one in ten may not start before a given
day; priorities mixed; urgency as Taskwarrior computes it (due and priority).
Everything is on a 15-minute grid, the minimum block is 15 minutes and there
is no break, so splitting a task into 15-minute parts is exactly what the
scheduler may do, and the optimum below is the true one for those rules.

The objective, in order (docs/plan.md): (a) deadlines, (b) priority among
tasks due the same day, (c) whole blocks, (d) stability. Measured per
instance, for the scheduler (planner/schedule.py) and the optimum side by side:
- missed: tasks with a due date (not already past) finishing after it or not
  placed; "w" weighs each by its priority (high 3, medium 2, low or none 1);
- weighted lateness: the sum over those of (finish - due) in hours, times the
  priority weight; a task not placed counts as finishing at the horizon's end
  plus its own length;
- inversions (b): a lower-priority task due the same day starting before a
  higher one that could start, whole, no later than it, with the lower one
  still fitting by its deadline; needless splits (c): tasks in more parts
  than the free time needs (a gap would have held them whole, or fewer parts
  would do); parts per task placed; each found slot by slot here, without the
  scheduler's code. The optimum of (b) and (c) is 0: a plan with none exists;
- moved: one 60-minute event inserted at a random working time, the plan made
  again with the first as its memory; the task blocks of the first not in the
  second where they were. Against the fewest any plan could move;
- ms/plan: the scheduler's CPU time per plan (median of each instance's runs;
  CPU time, since this machine is shared and wall time moves with its load).

The optimum is a mixed-integer program solved by HiGHS (highspy, a dev-only
dependency): for each task with a due date and each possible finish f (its due
date, or the end of a later free slot) a 0/1 variable "done by f", monotone
in f; a set of finish times is feasible exactly when, for every start date r
and every moment t, the tasks that may not start before r and are done by t fit
in the free time between r and t (Horn's condition for work split into slots).
It is solved twice, in the objective's order: the fewest priority-weighted
missed deadlines, then, with that many, the least weighted lateness. The fewest
moves is another: a 0/1 "kept" per block of the first plan (0 where the new
event lands), the moved work of each task fitting by Horn's condition in the
time the kept blocks and events leave (by its due date if it was on time),
most blocks kept. Both relax rules (b) and (c) and let moved work split into
slots, so they bound every plan from below. An instance the solver does not
prove optimal within the time limit is left out of the comparison, and counted.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import statistics
import sys
import time
from bisect import bisect_right
from typing import Any

from planner.schedule import PRIORITY_RANK, Block, Event, Horizon, Plan, Task, plan
from planner.schedule import PRIORITY_WEIGHT as WEIGHT

MONDAY = dt.datetime(2026, 11, 30, 9, 0)
SLOT = 15
TARGET_MS = 50.0  # for 200 tasks over two weeks
TARGET_RATIO = 1.05  # the scheduler's weighted lateness over the optimum's (with the optimum's misses or fewer)
TARGET_MOVES = 1  # moved blocks over the fewest possible, in every instance


def urgency(priority: str | None, due: dt.datetime | None, now: dt.datetime) -> float:
    """Taskwarrior's urgency from priority and due date (its default coefficients)."""
    score = {"high": 6.0, "medium": 3.9, "low": 1.8, None: 0.0}[priority]
    if due is not None:
        overdue = (now - due).total_seconds() / 86400
        factor = 1.0 if overdue >= 7 else 0.2 if overdue < -14 else (overdue + 14) * 0.8 / 21 + 0.2
        score += 12.0 * factor
    return round(score, 4)


def instance(seed: int, n: int, weeks: int) -> tuple[list[Task], list[Event], Horizon]:
    """A random week (or weeks) of tasks and events, the same for the same seed."""
    rng = random.Random(seed)
    start = MONDAY
    end = dt.datetime.combine(start.date() + dt.timedelta(days=7 * weeks), dt.time())
    workdays = [start.date() + dt.timedelta(days=7 * w + d) for w in range(weeks) for d in range(5)]

    def at(day: dt.date, lo: int = 9 * 4, hi: int = 17 * 4) -> dt.datetime:
        return dt.datetime.combine(day, dt.time()) + dt.timedelta(minutes=SLOT * rng.randrange(lo, hi + 1))

    events = []
    for k in range(rng.randint(0, 40)):
        s = at(rng.choice(workdays), 8 * 4, 17 * 4)
        events.append(Event(s, s + dt.timedelta(minutes=rng.choice([30, 30, 60, 60, 90, 120])), f"event {k}", f"e{k}"))
    tasks = []
    for i in range(1, n + 1):
        priority = rng.choice(["high", "medium", "medium", "low", "low", None])
        kind = rng.random()
        due = None
        if kind < 0.4:
            day = rng.choice(workdays)
            due = at(day, 9 * 4 + 2, 17 * 4) if rng.random() < 0.5 else dt.datetime.combine(day, dt.time(17))
        elif kind < 0.45:
            due = start - dt.timedelta(days=rng.randint(1, 5))
        elif kind < 0.55:
            due = end + dt.timedelta(days=rng.randint(1, 10))
        not_before = None
        if rng.random() < 0.1:
            not_before = dt.datetime.combine(rng.choice(workdays), dt.time())
        minutes = rng.choice([15, 15, 30, 30, 30, 45, 60, 60, 90, 120, 180, 240])
        tasks.append(
            Task(
                i,
                f"task {i}",
                minutes,
                due=due,
                not_before=not_before,
                priority=priority,
                urgency=urgency(priority, due, start),
            )
        )
    return tasks, events, Horizon(start, end)


def insertion(seed: int, horizon: Horizon) -> Event:
    """The event that arrives after the first plan: an hour at a random working time of the horizon."""
    rng = random.Random(seed * 7919 + 1)
    days = [d for d in range((horizon.end - horizon.start).days + 1) if (horizon.start.weekday() + d) % 7 < 5]
    day = dt.datetime.combine(horizon.start.date() + dt.timedelta(days=rng.choice(days)), dt.time())
    start = day + dt.timedelta(minutes=SLOT * rng.randrange(9 * 4, 16 * 4 + 1))
    return Event(start, start + dt.timedelta(minutes=60), "arrived", "new")


def lateness(tasks: list[Task], horizon: Horizon, finish: dict[int, dt.datetime]) -> tuple[int, int, float]:
    """Deadlines missed, missed weighted by priority, and priority-weighted lateness in hours."""
    missed, heavy, weighted = 0, 0, 0.0
    for t in tasks:
        if t.due is None or t.due <= horizon.start:
            continue
        done = finish.get(t.task_id, horizon.end + dt.timedelta(minutes=t.minutes))
        if done > t.due:
            missed += 1
            heavy += WEIGHT[t.priority]
            weighted += WEIGHT[t.priority] * (done - t.due).total_seconds() / 3600
    return missed, heavy, weighted


def finishes(p: Plan) -> dict[int, dt.datetime]:
    """Each placed task's end."""
    out: dict[int, dt.datetime] = {}
    for b in p.blocks:
        if b.kind == "task":
            out[b.task_id] = max(out.get(b.task_id, b.end), b.end)
    return out


def free_slots(events: list[Event], horizon: Horizon) -> list[dt.datetime]:
    """Start of every free 15-minute slot of working time, found without the scheduler's code."""
    out, day = [], horizon.start.date()
    while day < horizon.end.date():
        if day.weekday() < 5:
            for k in range(9 * 4, 17 * 4):
                s = dt.datetime.combine(day, dt.time()) + dt.timedelta(minutes=SLOT * k)
                e = s + dt.timedelta(minutes=SLOT)
                if s >= horizon.start and e <= horizon.end and not any(v.start < e and v.end > s for v in events):
                    out.append(s)
        day += dt.timedelta(days=1)
    return out


# ---------------------------------------------------------------- what a person sees, slot by slot


def seen(tasks: list[Task], events: list[Event], horizon: Horizon, p: Plan) -> dict[str, int]:
    """Inversions, needless splits, parts and tasks placed, checked slot by slot on the plan."""
    free = set(free_slots(events, horizon))
    blocks: dict[int, list[Block]] = {}
    for b in p.blocks:
        if b.kind == "task":
            blocks.setdefault(b.task_id, []).append(b)
    taken = {
        t: {b.start + SLOT * k * dt.timedelta(minutes=1) for b in bs for k in range(_slots(b))}
        for t, bs in blocks.items()
    }
    by_id = {t.task_id: t for t in tasks}

    def open_slots(*skip: int) -> set[dt.datetime]:
        out = set(free)
        for t, s in taken.items():
            if t not in skip:
                out -= s
        return out

    def start_of(t: Task) -> dt.datetime:
        return max(horizon.start, t.not_before or horizon.start)

    def limit(t: Task) -> dt.datetime:
        end = max(b.end for b in blocks[t.task_id])
        deadline = min(t.due, horizon.end) if t.due is not None else horizon.end
        return end if end > deadline else deadline

    def runs(slots: set[dt.datetime], lo: dt.datetime, hi: dt.datetime) -> list[int]:
        out, n, s = [], 0, lo
        while s < hi:
            if s in slots and s + dt.timedelta(minutes=SLOT) <= hi:
                n += 1
            elif n:
                out.append(n)
                n = 0
            s += dt.timedelta(minutes=SLOT)
        return out + ([n] if n else [])

    def fewest(rs: list[int], need: int) -> int | None:
        got = 0
        for k, r in enumerate(sorted(rs, reverse=True), 1):
            got += r
            if got >= need:
                return k
        return None

    needless = 0
    for tid, bs in blocks.items():
        if len(bs) > 1:
            best = fewest(runs(open_slots(tid), start_of(by_id[tid]), limit(by_id[tid])), by_id[tid].minutes // SLOT)
            needless += best is not None and best < len(bs)
    inversions = 0
    for high in tasks:
        for low in tasks:
            if high.task_id not in blocks or low.task_id not in blocks or not (high.due and low.due):
                continue
            if high.due.date() != low.due.date() or PRIORITY_RANK[high.priority] >= PRIORITY_RANK[low.priority]:
                continue
            ls, hs = min(b.start for b in blocks[low.task_id]), min(b.start for b in blocks[high.task_id])
            if hs > ls and _swaps(high, low, ls, open_slots(high.task_id, low.task_id), start_of, limit, runs):
                inversions += 1
    return {
        "inversions": inversions,
        "needless": needless,
        "parts": sum(len(bs) for bs in blocks.values()),
        "placed": len(blocks),
    }


def _slots(b: Block) -> int:
    return int((b.end - b.start).total_seconds() // (SLOT * 60))


def _swaps(high: Task, low: Task, ls: dt.datetime, open_: set, start_of, limit, runs) -> bool:
    """Whether the higher one fits whole starting no later than `ls` with the lower one fitting after."""
    n, step = high.minutes // SLOT, dt.timedelta(minutes=SLOT)
    on_time = high.due is None or limit(high) <= min(high.due, limit(high))
    s = start_of(high)
    while s <= ls:
        span = [s + k * step for k in range(n)]
        if all(x in open_ for x in span) and not (on_time and high.due and span[-1] + step > high.due):
            rest = open_ - set(span)
            if sum(runs(rest, start_of(low), limit(low))) >= low.minutes // SLOT:
                return True
        s += step
    return False


def moved(first: Plan, second: Plan) -> int:
    """Task blocks of the first plan that are not in the second where they were."""
    now = {(b.task_id, b.start, b.end) for b in second.blocks if b.kind == "task"}
    return sum((b.task_id, b.start, b.end) not in now for b in first.blocks if b.kind == "task")


# ---------------------------------------------------------------- the optimum, by HiGHS


def optimum(tasks: list[Task], events: list[Event], horizon: Horizon, limit: float) -> dict[str, Any] | None:
    """The fewest priority-weighted missed deadlines, then the least weighted lateness with that many, by HiGHS;
    None if not proven within `limit` seconds."""
    import highspy
    import numpy as np

    slots = free_slots(events, horizon)
    ends = [s + dt.timedelta(minutes=SLOT) for s in slots]
    due, points, first = [], [], []  # the tasks that can be late, their possible finishes, their first column
    cost, const, miss = [], 0.0, []
    for t in tasks:
        if t.due is None or t.due <= horizon.start:
            continue
        w, at = WEIGHT[t.priority], [t.due] + [e for e in ends if e > t.due]
        tail = max(0.0, (horizon.end - at[-1]).total_seconds() / 3600 + t.minutes / 60)
        if len(at) == 1 and not tail:
            continue  # due after the horizon and its end: never late here
        steps = [(b - a).total_seconds() / 3600 for a, b in zip(at, at[1:], strict=False)] + [tail]
        due.append(t), points.append(at), first.append(len(cost))
        cost += [-w * step for step in steps]  # each "done by f" saves the lateness from f to the next finish
        miss += [-w] + [0.0] * (len(at) - 1)  # done by the due date saves one missed deadline, weighted
        const += w * sum(steps)
    h = _highs()
    h.setOptionValue("time_limit", float(limit))
    h.setOptionValue("threads", 1)
    n = len(cost)
    none = np.array([], dtype=np.int32)
    h.addCols(n, np.array(miss), np.zeros(n), np.ones(n), 0, none, none, np.array([]))
    h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.array([highspy.HighsVarType.kInteger] * n))
    rows: list[tuple[list[int], list[float], float]] = []
    for i in range(len(due)):  # done by f implies done by every later f
        rows += [([c, c + 1], [1.0, -1.0], 0.0) for c in range(first[i], first[i] + len(points[i]) - 1)]
    moments = sorted({f for at in points for f in at})
    release = [max(horizon.start, t.not_before or horizon.start) for t in due]
    for r in sorted(set(release)):
        before_r = bisect_right(slots, r - dt.timedelta(microseconds=1))  # slots starting before r
        for moment in moments:
            cap = SLOT * max(0, bisect_right(ends, moment) - before_r)
            idx, val = [], []
            for i, t in enumerate(due):
                k = bisect_right(points[i], moment) - 1
                if release[i] >= r and k >= 0:
                    idx.append(first[i] + k)
                    val.append(float(t.minutes))
            if sum(val) > cap:
                rows.append((idx, val, float(cap)))
    _rows(h, rows)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    fewest = h.getInfo().objective_function_value  # minus the weighted deadlines met
    h.addRow(-highspy.kHighsInf, fewest + 1e-6, n, np.arange(n, dtype=np.int32), np.array(miss))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.array(cost))
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    x = h.getSolution().col_value
    finish: dict[int, dt.datetime] = {}
    for i, t in enumerate(due):
        done = [f for k, f in enumerate(points[i]) if x[first[i] + k] > 0.5]
        if done:
            finish[t.task_id] = done[0]
    missed, heavy, weighted = lateness(due, horizon, finish)
    assert abs(weighted - (const + h.getInfo().objective_function_value)) < 1e-6, "the model's cost is the bench's"
    return {"missed": missed, "heavy": heavy, "weighted": weighted, "finish": finish}


def fewest_moves(
    tasks: list[Task],
    events: list[Event],
    horizon: Horizon,
    first: Plan,
    new: Event,
    placed_again: set[int],
    limit: float,
) -> int | None:
    """The fewest blocks of the first plan any plan must move once `new` arrives, by HiGHS, among the plans that
    place again what the scheduler's second plan places (`placed_again`): those tasks placed, on time if they
    were; another may be left out, its blocks then counting as moved. None if not proven within `limit`."""
    import highspy
    import numpy as np

    by_id = {t.task_id: t for t in tasks}
    blocks = [b for b in first.blocks if b.kind == "task"]
    ends = finishes(first)
    slots = free_slots([*events, new], horizon)
    step = dt.timedelta(minutes=SLOT)

    def on_time(t: Task) -> bool:
        return t.due is not None and ends[t.task_id] <= t.due and t.task_id in placed_again

    def deadline(t: Task) -> dt.datetime:
        return min(t.due, horizon.end) if on_time(t) else horizon.end  # type: ignore[type-var]

    def inside(b: Block, r: dt.datetime, d: dt.datetime) -> float:
        return max(0.0, (min(b.end, d) - max(b.start, r)).total_seconds() / 60)

    h = _highs()
    h.setOptionValue("time_limit", float(limit))
    h.setOptionValue("threads", 1)
    n = len(blocks)
    placed = sorted({b.task_id for b in blocks})
    k = len(placed)  # a "left out" column per task, after the block columns
    hit = [b.start < new.end and new.start < b.end for b in blocks]
    upper = [0.0 if x else 1.0 for x in hit] + [0.0 if t in placed_again else 1.0 for t in placed]
    cost = [-1.0] * n + [0.0] * k
    none = np.array([], dtype=np.int32)
    h.addCols(n + k, np.array(cost), np.zeros(n + k), np.array(upper), 0, none, none, np.array([]))
    h.changeColsIntegrality(
        n + k, np.arange(n + k, dtype=np.int32), np.array([highspy.HighsVarType.kInteger] * (n + k))
    )
    column = {t: n + i for i, t in enumerate(placed)}
    rows = [([i, column[b.task_id]], [1.0, 1.0], 1.0) for i, b in enumerate(blocks)]  # left out: none kept
    starts = sorted({max(horizon.start, by_id[t].not_before or horizon.start) for t in placed})
    dues = sorted({deadline(by_id[t]) for t in placed})
    for r in starts:
        for d in dues:
            cap = SLOT * sum(r <= s and s + step <= d for s in slots)
            group = {t for t in placed if max(horizon.start, by_id[t].not_before or horizon.start) >= r}
            group = {t for t in group if deadline(by_id[t]) <= d}
            need = sum(by_id[t].minutes for t in group)
            coef = [
                inside(b, r, d) - ((b.end - b.start).total_seconds() / 60 if b.task_id in group else 0) for b in blocks
            ]
            coef += [-float(by_id[t].minutes) if t in group else 0.0 for t in placed]
            idx = [i for i, c in enumerate(coef) if c]
            if not idx and cap < need:
                return None  # cannot be: the tasks on time no longer fit (the scheduler makes one late)
            rows.append((idx, [coef[i] for i in idx], float(cap - need)))
    _rows(h, rows)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    x = h.getSolution().col_value
    return sum(1 for i in range(n) if x[i] < 0.5)


def _rows(h: Any, rows: list[tuple[list[int], list[float], float]]) -> None:
    import highspy
    import numpy as np

    rows = [r for r in rows if r[0]]
    if not rows:
        return
    starts = np.cumsum([0] + [len(r[0]) for r in rows[:-1]], dtype=np.int32)
    index = np.array([j for r in rows for j in r[0]], dtype=np.int32)
    value = np.array([v for r in rows for v in r[1]])
    upper = np.array([r[2] for r in rows])
    h.addRows(len(rows), np.full(len(rows), -highspy.kHighsInf), upper, len(index), starts, index, value)


def _highs() -> Any:
    """A HiGHS solver that prints nothing (it announces itself on stdout once per process)."""
    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            h = highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    h.setOptionValue("output_flag", False)
    return h


# ---------------------------------------------------------------- the table


def run(quick: bool = False) -> list[dict[str, Any]]:
    """One row per size: the scheduler and the optimum over the same seeds."""
    sizes = (
        [(10, 1, 3, 2.0), (200, 2, 2, 0.0)]
        if quick
        else [(10, 1, 20, 30.0), (25, 1, 20, 30.0), (50, 1, 20, 30.0), (100, 2, 10, 60.0), (200, 2, 10, 60.0)]
    )
    try:
        import highspy  # noqa: F401
    except ImportError:  # a dev dependency: without it, the scheduler's side alone
        print("(highspy is not installed: no optimum; pip install -r requirements-dev.txt)")
        sizes = [(n, weeks, seeds, 0.0) for n, weeks, seeds, _ in sizes]
    rows = []
    for n, weeks, seeds, limit in sizes:
        row: dict[str, Any] = {"n": n, "weeks": weeks, "instances": seeds, "solved": 0, "ms": [], "moves_solved": 0}
        for key in ("g_missed", "g_heavy", "g_weighted", "o_missed", "o_heavy", "o_weighted", "all_missed"):
            row[key] = 0
        row |= {"inversions": 0, "needless": 0, "parts": 0, "placed": 0, "moved": 0, "o_moved": 0, "excess": 0}
        row["all_moved"] = 0
        for seed in range(seeds):
            tasks, events, horizon = instance(1000 * n + seed, n, weeks)
            times = []
            for _ in range(3 if quick else 7):
                t0 = time.process_time()
                p = plan(tasks, events, horizon)
                times.append((time.process_time() - t0) * 1000)
            row["ms"].append(statistics.median(times))
            for key, value in seen(tasks, events, horizon, p).items():
                row[key] += value
            new = insertion(1000 * n + seed, horizon)
            again = plan(tasks, [*events, new], horizon, previous=p)
            row["all_moved"] += moved(p, again)
            missed, heavy, weighted = lateness(tasks, horizon, finishes(p))
            row["all_missed"] += missed
            if not limit:
                continue
            fewest = fewest_moves(tasks, events, horizon, p, new, set(finishes(again)), limit)
            if fewest is not None:  # compared where the fewest is known, as lateness is
                row["moves_solved"] += 1
                row["moved"] += moved(p, again)
                row["o_moved"] += fewest
                row["excess"] = max(row["excess"], moved(p, again) - fewest)
            best = optimum(tasks, events, horizon, limit)
            if best is None:
                continue
            row["solved"] += 1
            for key, value in (("missed", missed), ("heavy", heavy), ("weighted", weighted)):
                row[f"g_{key}"] += value
                row[f"o_{key}"] += best[key]
            assert heavy >= best["heavy"], f"seed {seed}: the scheduler missed fewer deadlines than the optimum"
        rows.append(row)
    return rows


def table(rows: list[dict[str, Any]]) -> bool:
    """Print the plan table; False if a target was missed."""
    print(
        f"{'scheduler / optimum':<19} {'solved':>6} {'missed (w)':>14} {'weighted lateness h':>21} {'ratio':>6}"
        f" {'inv':>5} {'split':>5} {'parts':>5} {'moved':>11} {'ms':>6} {'max ms':>7}  targets"
    )
    held = True
    for r in rows:
        marks = []
        ratio = r["g_weighted"] / r["o_weighted"] if r["o_weighted"] else (1.0 if not r["g_weighted"] else float("inf"))
        fewer = r["g_heavy"] <= r["o_heavy"]
        if r["solved"]:
            ok = ratio <= TARGET_RATIO or r["g_heavy"] < r["o_heavy"]
            marks.append(f"lateness {'ok' if ok else 'MISSED'}")
            held = held and ok
        ok = not r["inversions"] and not r["needless"]
        marks.append(f"b,c {'ok' if ok else 'MISSED'}")
        held = held and ok
        if r["moves_solved"]:
            ok = r["excess"] <= TARGET_MOVES
            marks.append(f"moved {'ok' if ok else 'MISSED'}")
            held = held and ok
        if r["n"] == 200 and r["weeks"] == 2:
            ok = max(r["ms"]) <= TARGET_MS
            marks.append(f"{TARGET_MS:.0f} ms {'ok' if ok else 'MISSED'}")
            held = held and ok
        what = f"{r['n']} tasks, {r['weeks']} week{'s' if r['weeks'] > 1 else ''}"
        if r["solved"]:
            missed = f"{r['g_heavy']:>5} / {r['o_heavy']:<5}" + ("" if fewer else "!")
            weighted = f"{r['g_weighted']:>9.1f} / {r['o_weighted']:<9.1f}"
            shown = f"{ratio:>6.3f}"
        else:
            missed, weighted, shown = f"{r['all_missed']:>5} / -    ", f"{'-':>9} / -        ", f"{'-':>6}"
        moves = f"{r['moved']:>4} / {r['o_moved']:<4}" if r["moves_solved"] else f"{r['all_moved']:>4} / -   "
        parts = r["parts"] / max(r["placed"], 1)
        ms = statistics.median(r["ms"])
        print(
            f"{what:<19} {r['solved']:>2}/{r['instances']:<3} {missed:>14} {weighted:>21} {shown}"
            f" {r['inversions']:>5} {r['needless']:>5} {parts:>5.2f} {moves:>11} {ms:>6.1f} {max(r['ms']):>7.1f}  "
            + ", ".join(marks)
        )
    print(
        "missed (w): deadlines missed, weighted by priority; lateness: hours late times the priority weight; both the\n"
        "scheduler's / the optimum's over the instances it solved. inv, split: inversions (b) and needless splits (c),\n"
        "whose optimum is 0; parts: per task placed; moved: blocks moved when an event arrives / the fewest possible.\n"
        f"Targets: lateness <= {TARGET_RATIO:.2f}x the optimum's (or fewer deadlines missed), 0 inversions and needless\n"
        f"splits, moved <= the fewest + {TARGET_MOVES} in every instance, <= {TARGET_MS:.0f} ms CPU for 200 tasks over two weeks."
    )
    return held
