"""Free time in whole minutes, for the scheduler (planner/schedule.py): no dates, no tasks, only spans.

- Board: the time taken (events, pinned blocks, placed blocks, reservations), and the free gaps it
  leaves in the time a task may use, a break away from everything else;
- whole, split, fit, within: placing some minutes into gaps (whole, in parts of a minimum length,
  inside preferred windows);
- drop, sequence: the order of due work for the least priority-weighted lateness, on a fluid model.

Spans are (start, end) minutes since some midnight, end exclusive. What it leaves out: calendars,
rules and reasons, which schedule.py reads and reports.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from itertools import accumulate

Span = tuple[int, int]
Job = tuple[int, int, int, tuple, int]  # minutes, due, weight, tie-break key, may not start before


class Board:
    """Taken time: sorted, disjoint spans with an owner (a task id, or None for events and pinned blocks)."""

    def __init__(self, brk: int, fixed: list[Span]):
        self.brk, self.starts, self.ends, self.owners = brk, [], [], []
        for a, b in union(fixed):
            self.add(a, b, None)

    def add(self, a: int, b: int, owner: int | None) -> None:
        i = bisect_left(self.starts, a)
        self.starts.insert(i, a)
        self.ends.insert(i, b)
        self.owners.insert(i, owner)

    def release(self, owner: int) -> None:
        keep = [i for i, o in enumerate(self.owners) if o != owner]
        self.starts, self.ends = [self.starts[i] for i in keep], [self.ends[i] for i in keep]
        self.owners = [self.owners[i] for i in keep]

    def gaps(self, base: tuple[list[int], list[int]], lo: int, hi: int, skip: int | None = None) -> Iterator[Span]:
        """Free spans of `base` in [lo, hi), a break away from all taken time except `skip`'s."""
        bs, be = base
        starts, ends, owners, brk, n = self.starts, self.ends, self.owners, self.brk, len(self.starts)
        j = bisect_right(ends, lo - brk)
        for i in range(bisect_right(be, lo), len(bs)):
            a, b = max(bs[i], lo), min(be[i], hi)
            if bs[i] >= hi:
                return
            while j < n and ends[j] + brk <= a:
                j += 1
            k, cur = j, a
            while k < n and starts[k] - brk < b:
                if owners[k] is None or owners[k] != skip:
                    if starts[k] - brk > cur:
                        yield cur, starts[k] - brk
                    if ends[k] + brk > cur:
                        cur = ends[k] + brk
                k += 1
            if cur < b:
                yield cur, b


def union(spans: Iterable[Span]) -> list[Span]:
    out: list[Span] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        elif a < b:
            out.append((a, b))
    return out


def minus(spans: list[Span], cut: list[Span]) -> list[Span]:
    out, cut = [], union(cut)
    for a, b in spans:
        for c, d in cut:
            if c < b and d > a:
                if c > a:
                    out.append((a, c))
                a = max(a, d)
        if a < b:
            out.append((a, b))
    return out


def whole(gaps: Iterable[Span], m: int) -> list[Span] | None:
    return next(([(a, a + m)] for a, b in gaps if b - a >= m), None)


def split(gaps: Iterable[Span], m: int, min_block: int, backward: bool = False) -> list[Span] | None:
    """Parts of at least min_block filling the earliest (or latest) gaps; None if they cannot hold m."""
    low, rest, parts = min(min_block, m), m, []
    for a, b in reversed(list(gaps)) if backward else gaps:
        take = min(b - a, rest)
        if take < rest and rest - take < low:
            take = rest - low  # leave room for a last part that is long enough
        if take >= low:
            parts.append((b - take, b) if backward else (a, a + take))
            rest -= take
            if not rest:
                return sorted(parts)
    return None


def fit(gaps: Iterable[Span], m: int, min_block: int) -> list[Span] | None:
    """In one pass: the first gap that holds m whole, else parts as split finds them."""
    low, rest, parts = min(min_block, m), m, []
    for a, b in gaps:
        if b - a >= m:
            return [(a, a + m)]
        take = min(b - a, rest)
        if take < rest and rest - take < low:
            take = rest - low
        if rest and take >= low:
            parts.append((a, a + take))
            rest -= take
    return None if rest else parts


def within(gaps: Iterable[Span], pref: list[Span]) -> Iterator[Span]:
    ends = [q for _, q in pref]
    for a, b in gaps:
        for p, q in pref[bisect_right(ends, a) :]:
            if p >= b:
                break
            yield max(a, p), min(b, q)


def drop(jobs: list[Job], over: int, end: int) -> set[int]:
    """The jobs to leave out, least costly in all, whose minutes add up to at least `over` (a knapsack)."""
    unit = math.gcd(*(j[0] for j in jobs))
    unit = max(unit, -(-over * len(jobs) // 200_000))  # odd estimates (gcd 1) in a long overload: coarser, still fast
    need = -(-over // unit)
    best, took = [0] + [math.inf] * need, []  # best[c]: least cost of covering c units so far
    ids = sorted(range(len(jobs)), key=lambda i: jobs[i][3])
    for i in ids:
        minutes, due, weight = jobs[i][:3]
        price, size, row = weight * (end + minutes - due), minutes // unit, bytearray(need + 1)
        for c in range(need, 0, -1):
            cand = best[c - size if c > size else 0] + price
            if cand < best[c]:
                best[c], row[c] = cand, 1
        took.append(row)
    out, c = set(), need
    for i, row in zip(ids[::-1], took[::-1], strict=True):
        if c > 0 and row[c]:
            out.add(i)
            c = max(0, c - jobs[i][0] // unit)
    return out


def sequence(jobs: list[Job], gaps: list[Span], end: int) -> list[tuple[int, int]]:
    """An order of jobs for least weighted lateness: each one's (position, finish); past `end` if left out.

    Work is taken as a fluid in the free gaps (the n-th minute of work ends at the n-th free minute;
    a job cannot end before its start plus its length), so rules and the minimum block are left out.
    What cannot fit is chosen first (drop: a job left out costs as if it finished at `end` plus its
    own length). The rest starts in order of due date, then a late job moves earlier or out, and a
    job left out back in, while that lowers the cost (at most four rounds).
    """
    ends_at = [0]  # ends_at[n]: where the n-th minute of work ends
    for a, b in gaps:
        ends_at.extend(range(a + 1, b + 1))
    total = len(ends_at) - 1

    def finish(load: int) -> int:
        return ends_at[load] if load <= total else end + load - total

    weight, due = [j[2] for j in jobs], [j[1] for j in jobs]
    earliest = [finish(bisect_left(ends_at, j[4] + 1) - 1 + j[0]) for j in jobs]  # not before its start

    def cost(j: int, load: int) -> int:
        f = ends_at[load] if load <= total else end + load - total
        if f < earliest[j]:
            f = earliest[j]
        return weight[j] * (f - due[j]) if f > due[j] else 0

    def price(j: int) -> int:  # of leaving j out
        return jobs[j][2] * (end + jobs[j][0] - jobs[j][1])

    def improve(order: list[int], dropped: set[int]) -> None:
        """Moves while one lowers the cost: a late job to an earlier place or out; a job left out back in."""
        for _ in range(4):
            changed, i = False, 0
            cum = list(accumulate(jobs[j][0] for j in order))
            now = list(map(cost, order, cum))
            while i < len(order):
                j, p = order[i], jobs[order[i]][0]
                if now[i]:
                    best, at, shift = 0, i, 0
                    for k in range(i - 1, -1, -1):  # j before order[k]: k to i - 1 end p later
                        shift += cost(order[k], cum[k] + p) - now[k]
                        gain = now[i] - cost(j, cum[k] - jobs[order[k]][0] + p) - shift
                        if gain > best:
                            best, at = gain, k
                    late = [k for k in range(i + 1, len(order)) if now[k]]
                    out = now[i] - price(j) + sum(now[k] - cost(order[k], cum[k] - p) for k in late)
                    if out > best or at < i:
                        if out > best:
                            dropped.add(order.pop(i))
                        else:
                            order.insert(at, order.pop(i))
                        cum = list(accumulate(jobs[x][0] for x in order))
                        now, changed = list(map(cost, order, cum)), True
                        continue
                i += 1
            for j in sorted(dropped, key=lambda j: jobs[j][3]):
                p, room = jobs[j][0], total - (cum[-1] if cum else 0)
                best, at, shift = 0, -1, 0
                for k in range(len(order), -1, -1) if p <= room else ():  # j before order[k]
                    if k < len(order):
                        shift += cost(order[k], cum[k] + p) - cost(order[k], cum[k])
                    gain = price(j) - cost(j, (cum[k - 1] if k else 0) + p) - shift
                    if gain > best:
                        best, at = gain, k
                if at >= 0:
                    order.insert(at, j)
                    dropped.discard(j)
                    cum, changed = list(accumulate(jobs[x][0] for x in order)), True
            if not changed:
                break

    load = sum(j[0] for j in jobs)
    dropped = drop(jobs, load - total, end) if load > total else set()
    order = sorted(set(range(len(jobs))) - dropped, key=lambda j: (jobs[j][1], -jobs[j][2], jobs[j][3]))
    improve(order, dropped)
    cum = list(accumulate(jobs[j][0] for j in order))
    out = [(0, end + 1)] * len(jobs)
    for i, j in enumerate(order):
        out[j] = (i, finish(cum[i]))
    for i, j in enumerate(sorted(dropped, key=lambda j: jobs[j][3])):
        out[j] = (len(order) + i, end + 1)
    return out
