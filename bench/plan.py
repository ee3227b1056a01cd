"""The scheduler against an exact optimum on random weeks: `python -m bench plan`.

Each instance (fixed seeds) is a week or two of Monday-Friday 09:00-17:00 from
Monday 09:00, with 0-40 events, and tasks of 15 minutes to 4 hours: about 40%
due inside the horizon (at 17:00 or at a time of day), some past due, some due
later, the rest without a due date; one in ten may not start before a given
day; priorities mixed; urgency as Taskwarrior computes it (due and priority).
Everything is on a 15-minute grid, the minimum block is 15 minutes and there
is no break, so splitting a task into 15-minute parts is exactly what the
scheduler may do, and the optimum below is the true one for those rules.

Measured for the scheduler (planner/schedule.py) and the optimum side by side:
- missed: tasks with a due date (not already past) finishing after it or not
  placed at all;
- weighted lateness: the sum over those of (finish - due) in hours, times the
  priority weight (high 3, medium 2, low or none 1); a task not placed counts
  as finishing at the horizon's end plus its own length;
- ms/plan: the scheduler's time per plan (median, and the slowest instance).

The optimum is a mixed-integer program solved by HiGHS (highspy, a dev-only
dependency): for each task with a due date and each possible finish f (its due
date, or the end of a later free slot) a 0/1 variable D[i, f] = "done by f",
monotone in f; a set of finish times is feasible exactly when, for every
start date r and every moment t, the tasks that may not start before r and
are done by t fit in the free time between r and t (Horn's condition for
splittable work; here splits are 15-minute slots). Tasks without a due date
cost nothing, so the optimum leaves them out; the scheduler places them too,
which only makes its numbers worse. An instance the solver does not prove
optimal within the time limit is left out of the comparison and counted.
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

from planner.schedule import PRIORITY_WEIGHT as WEIGHT
from planner.schedule import Event, Horizon, Plan, Task, plan

MONDAY = dt.datetime(2026, 11, 30, 9, 0)
SLOT = 15
TARGET_MS = 50.0  # for 200 tasks over two weeks
TARGET_RATIO = 1.10  # the scheduler's weighted lateness over the optimum's


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


def lateness(tasks: list[Task], horizon: Horizon, finish: dict[int, dt.datetime]) -> tuple[int, float]:
    """Deadlines missed and priority-weighted lateness in hours, given each placed task's finish."""
    missed, weighted = 0, 0.0
    for t in tasks:
        if t.due is None or t.due <= horizon.start:
            continue
        done = finish.get(t.task_id, horizon.end + dt.timedelta(minutes=t.minutes))
        if done > t.due:
            missed += 1
            weighted += WEIGHT[t.priority] * (done - t.due).total_seconds() / 3600
    return missed, weighted


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


def optimum(tasks: list[Task], events: list[Event], horizon: Horizon, limit: float) -> dict[str, Any] | None:
    """The least weighted lateness possible, by HiGHS; None if not proven within `limit` seconds."""
    import highspy
    import numpy as np

    slots = free_slots(events, horizon)
    ends = [s + dt.timedelta(minutes=SLOT) for s in slots]
    due, points, first = [], [], []  # the tasks that can be late, their possible finishes, their first column
    cost, const = [], 0.0
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
        const += w * sum(steps)
    h = _highs()
    h.setOptionValue("time_limit", float(limit))
    h.setOptionValue("threads", 1)
    n = len(cost)
    none = np.array([], dtype=np.int32)
    h.addCols(n, np.array(cost), np.zeros(n), np.ones(n), 0, none, none, np.array([]))
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
    if rows:
        starts = np.cumsum([0] + [len(r[0]) for r in rows[:-1]], dtype=np.int32)
        index = np.array([j for r in rows for j in r[0]], dtype=np.int32)
        value = np.array([v for r in rows for v in r[1]])
        upper = np.array([r[2] for r in rows])
        h.addRows(len(rows), np.full(len(rows), -highspy.kHighsInf), upper, len(index), starts, index, value)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    x = h.getSolution().col_value
    finish: dict[int, dt.datetime] = {}
    for i, t in enumerate(due):
        done = [f for k, f in enumerate(points[i]) if x[first[i] + k] > 0.5]
        if done:
            finish[t.task_id] = done[0]
    missed, weighted = lateness(due, horizon, finish)
    assert abs(weighted - (const + h.getInfo().objective_function_value)) < 1e-6, "the model's cost is the bench's"
    return {"missed": missed, "weighted": weighted, "finish": finish}


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
        row: dict[str, Any] = {"n": n, "weeks": weeks, "instances": seeds, "solved": 0, "ms": []}
        row |= {"g_missed": 0, "g_weighted": 0.0, "o_missed": 0, "o_weighted": 0.0, "worst": 1.0, "all_missed": 0}
        for seed in range(seeds):
            tasks, events, horizon = instance(1000 * n + seed, n, weeks)
            times = []
            for _ in range(3 if quick else 7):
                t0 = time.perf_counter()
                p = plan(tasks, events, horizon)
                times.append((time.perf_counter() - t0) * 1000)
            row["ms"].append(statistics.median(times))
            missed, weighted = lateness(tasks, horizon, finishes(p))
            row["all_missed"] += missed
            best = optimum(tasks, events, horizon, limit) if limit else None
            if best is None:
                continue
            row["solved"] += 1
            row["g_missed"] += missed
            row["g_weighted"] += weighted
            row["o_missed"] += best["missed"]
            row["o_weighted"] += best["weighted"]
            assert weighted >= best["weighted"] - 1e-6, f"seed {seed}: the scheduler beat the optimum"
            if weighted > 1e-9:
                row["worst"] = max(row["worst"], weighted / max(best["weighted"], 1e-9))
        rows.append(row)
    return rows


def table(rows: list[dict[str, Any]]) -> bool:
    """Print the plan table; False if a target was missed."""
    print(
        f"{'scheduler vs optimum':<22} {'solved':>7} {'missed':>11} {'weighted lateness h':>21} {'ratio':>6} {'worst':>6}"
        f" {'ms/plan':>8} {'max ms':>7} {'target':>24}"
    )
    held = True
    for r in rows:
        ratio = r["g_weighted"] / r["o_weighted"] if r["o_weighted"] else (1.0 if not r["g_weighted"] else float("inf"))
        marks = []
        if r["solved"]:
            marks.append(f"<={TARGET_RATIO:.2f}x " + ("ok" if ratio <= TARGET_RATIO else "MISSED"))
            held = held and ratio <= TARGET_RATIO
        if r["n"] == 200 and r["weeks"] == 2:
            ok = max(r["ms"]) <= TARGET_MS
            marks.append(f"<={TARGET_MS:.0f} ms " + ("ok" if ok else "MISSED"))
        what = f"{r['n']} tasks, {r['weeks']} week{'s' if r['weeks'] > 1 else ''}"
        solved = f"{r['solved']}/{r['instances']}"
        if r["solved"]:
            missed = f"{r['g_missed']:>4} / {r['o_missed']:<4}"
            weighted = f"{r['g_weighted']:>9.1f} / {r['o_weighted']:<9.1f}"
            shown = f"{ratio:>6.3f} {r['worst']:>6.2f}"
        else:
            missed, weighted, shown = f"{r['all_missed']:>4} / -   ", f"{'-':>9} / -        ", f"{'-':>6} {'-':>6}"
        ms = statistics.median(r["ms"])
        print(
            f"{what:<22} {solved:>7} {missed:>11} {weighted:>21} {shown} {ms:>8.2f} {max(r['ms']):>7.2f} {', '.join(marks):>24}"
        )
    print("missed and weighted lateness: the scheduler / the optimum, over the instances the optimum solved")
    return held
