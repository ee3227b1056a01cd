"""Free time in whole minutes, for the scheduler (planner/schedule): no dates, no tasks, only spans.

- Board: the time taken (events, pinned blocks, placed blocks, the last plan's blocks), and the free
  gaps it leaves in the time a task may use, a break away from everything else;
- whole, fewest, split, within: placing some minutes into gaps (whole; in as few parts of a minimum
  length as the gaps allow; in the earliest parts; inside preferred windows);
- clip: gaps cut at a moment.
Which due work can be on time, and keeping it feasible, is duework.py.

Spans are (start, end) minutes since some midnight, end exclusive. What it leaves out: calendars,
rules and reasons, which the scheduler reads and reports.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Container, Iterable, Iterator

Span = tuple[int, int]


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
        """Free the spans of one owner."""
        if owner not in self.owners:
            return
        keep = [i for i, o in enumerate(self.owners) if o != owner]
        self.starts, self.ends = [self.starts[i] for i in keep], [self.ends[i] for i in keep]
        self.owners = [self.owners[i] for i in keep]

    def gaps(self, base: tuple[list[int], list[int]], lo: int, hi: int, skip: Container = ()) -> Iterator[Span]:
        """Free spans of `base` in [lo, hi), a break away from all taken time except that of the owners in `skip`."""
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
                if owners[k] is None or owners[k] not in skip:
                    if starts[k] - brk > cur:
                        yield cur, starts[k] - brk
                    if ends[k] + brk > cur:
                        cur = ends[k] + brk
                k += 1
            if cur < b:
                yield cur, b

    def holds(self, base: tuple[list[int], list[int]], parts: Iterable[Span], skip: Container = ()) -> bool:
        """Whether every part lies in free time of `base` (a break away from the rest)."""
        return all(next(self.gaps(base, a, b, skip), None) == (a, b) for a, b in parts)

    def owned(self) -> set[int]:
        """The owners of placed spans (task ids and the like), not events."""
        return {o for o in self.owners if o is not None}


def union(spans: Iterable[Span]) -> list[Span]:
    """The spans merged into sorted, disjoint ones."""
    out: list[Span] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        elif a < b:
            out.append((a, b))
    return out


def minus(spans: list[Span], cut: list[Span]) -> list[Span]:
    """The sorted, disjoint spans with the cut taken out."""
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
    """The first gap that holds m minutes in one block, m minutes from its start; None if none does."""
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


def fewest(gaps: Iterable[Span], m: int, min_block: int) -> list[Span] | None:
    """m minutes in as few parts as the gaps allow (each at least min_block, or one block of its own length),
    finishing as early as that number of parts can; None if the gaps cannot hold m.

    The fewest parts k is the smallest k whose k largest usable gaps hold m; among the placements with k
    parts the earliest finish uses the k largest gaps of the shortest run of gaps, from the first, that
    holds m in k. Each gap is filled from its start; a part shortened leaves the last one long enough.
    """
    gaps = list(gaps)
    one = whole(gaps, m)
    if one:
        return one
    low = min(min_block, m)
    usable = [(b - a, i) for i, (a, b) in enumerate(gaps) if b - a >= low]
    sizes = sorted((size for size, _ in usable), reverse=True)
    k, total = 0, 0
    while total < m and k < len(sizes):
        total += sizes[k]
        k += 1
    if total < m or k * low > m:
        return None
    chosen: list[tuple[int, int]] = []  # the k largest (size, index) of the usable gaps seen so far
    for size, i in usable:
        chosen.append((size, i))
        chosen.sort(key=lambda x: (-x[0], x[1]))
        del chosen[k:]
        if len(chosen) == k and sum(s for s, _ in chosen) >= m:
            break
    parts, rest = [], m
    for n, (_, i) in enumerate(sorted(chosen, key=lambda x: x[1])):
        a, b = gaps[i]
        take = min(b - a, rest - low * (k - n - 1))
        parts.append((a, a + take))
        rest -= take
    return parts


def clip(gaps: Iterable[Span], hi: int) -> Iterator[Span]:
    """The gaps cut at `hi`."""
    for a, b in gaps:
        if a >= hi:
            return
        yield a, min(b, hi)


def within(gaps: Iterable[Span], pref: list[Span]) -> Iterator[Span]:
    """The parts of the gaps inside the preferred windows (sorted, disjoint)."""
    ends = [q for _, q in pref]
    for a, b in gaps:
        for p, q in pref[bisect_right(ends, a) :]:
            if p >= b:
                break
            yield max(a, p), min(b, q)
