"""Due work on a fluid model, for the scheduler (planner/schedule): which due work can be on time and in what
order the rest follows (`sequence`, with `drop` choosing what cannot fit), and keeping the due work feasible while
other work takes time (`Deadlines`, Horn's condition). Minutes only, like freetime.py: no dates, no tasks.

A job is (minutes, due, weight, tie-break key, may not start before); work is a fluid here (it may stop at any
minute; rules, breaks and the minimum block left out), which is what makes these fast and only approximate.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from itertools import accumulate

Span = tuple[int, int]  # (start, end) minutes, end exclusive, as in freetime.py

Job = tuple[int, int, int, tuple, int]  # minutes, due, weight, tie-break key, may not start before


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


class Deadlines:
    """Due work kept feasible while other work takes time: Horn's condition on a fluid model.

    Work may stop at any minute here (rules, breaks and the minimum block are left out), so the check is
    necessary, not sufficient, for the real plan; it is what keeps a task placed early from taking the time
    a due task needs. For every start r among the jobs' starts and every job's due date d, the minutes of
    the jobs not yet placed that may not start before r and are due by d must fit in the free time between
    r and d (`free`, the common working time less events). Each such pair keeps its slack; a placement
    is allowed when no slack goes below zero, and the slacks are updated when it is made.
    """

    def __init__(self, jobs: dict[int, tuple[int, int, int]], free: list[Span], pad: int = 0):
        # pad: the break each block takes beyond its own minutes, counted against the time left
        self.pad = pad
        jobs = {i: (m + pad, start, d) for i, (m, start, d) in jobs.items()}
        self.jobs = jobs  # id -> (minutes, may not start before, due)
        self.edges, self.before = [a for a, _ in free], [0]  # before[i]: free minutes before free[i] starts
        self._seen: dict[int, int] = {}
        self.ends = [b for _, b in free]
        for a, b in free:
            self.before.append(self.before[-1] + b - a)
        self.chains: list[tuple[int, list[int], list[int], list[int]]] = []  # (r, dues, slack, suffix minimum)
        self.place: dict[int, list[tuple[int, int]]] = {}  # job -> (chain, entry) where it counts
        self.live: list[set[int]] = []  # per chain, the entries whose job is not placed yet
        for r in sorted({start for _, start, _ in jobs.values()}):
            members = sorted((d, i) for i, (_, start, d) in jobs.items() if start >= r)
            dues, slack, load = [], [], 0
            for k, (d, i) in enumerate(members):
                load += jobs[i][0]
                dues.append(d)
                slack.append(self.free(r, d) - load)
                self.place.setdefault(i, []).append((len(self.chains), k))
            self.chains.append((r, dues, slack, self._suffix(slack)))
            self.live.append(set(range(len(members))))

    def free(self, a: int, b: int) -> int:
        """Free minutes in [a, b)."""
        return max(0, self._upto(b) - self._upto(a))

    def _upto(self, x: int) -> int:
        """Free minutes before x (remembered: the same due dates are asked again and again)."""
        got = self._seen.get(x)
        if got is None:
            i = bisect_right(self.edges, x) - 1
            got = 0 if i < 0 else self.before[i] + min(x, self.ends[i]) - self.edges[i]
            self._seen[x] = got
        return got

    @staticmethod
    def _suffix(slack: list[int]) -> list[int]:
        return list(accumulate(reversed(slack), min))[::-1] + [math.inf]  # type: ignore[list-item]

    def feasible(self) -> bool:
        """Whether the due work not placed yet still fits (every slack at least zero)."""
        return all(s[0] >= 0 for _, _, _, s in self.chains if s[:-1])

    def room_for(self, minutes: int, start: int, due: int) -> bool:
        """Whether one more job might fit: a quick test that no (start, due date) pair the job would join goes
        short. Necessary, not sufficient, for a new start date: build the guard again to be sure."""
        need = minutes + self.pad
        for r, dues, slack, suffix in self.chains:
            if r > start:
                continue
            k = bisect_right(dues, due)
            load = self.free(r, dues[k - 1]) - slack[k - 1] if k and slack[k - 1] != math.inf else 0
            if self.free(r, due) - load < need or suffix[k] < need:
                return False
        return self.free(start, due) >= need

    def short(self) -> Span | None:
        """The first (start, due date) whose due work does not fit, if one does not: the time to free."""
        for r, dues, slack, _ in self.chains:
            for d, s in zip(dues, slack, strict=True):
                if s < 0:
                    return r, d
        return None

    def _taken(self, parts: list[Span], r: int, d: int) -> int:
        """The free minutes the parts (each with its break after it) take in [r, d)."""
        if self.pad:
            parts = [(a, b + self.pad) for a, b in parts]
        if len(parts) == 1:
            a, b = parts[0]
            return self._upto(min(b, d)) - self._upto(max(a, r)) if b > r and a < d else 0
        return sum(self._upto(min(b, d)) - self._upto(max(a, r)) for a, b in parts if b > r and a < d)

    def _affected(self, job: int | None, parts: list[Span]):
        """Per chain the placement reaches: its index, dues, slack, suffix minimum, the entries from which
        it counts (`start`) and counts whole (`full`), its whole take in that chain, and the job's own entry
        there (None if the job is not in it)."""
        own = dict(self.place.get(job, ())) if job is not None else {}
        first, last = parts[0][0], parts[-1][1]
        for c, (r, dues, slack, suffix) in enumerate(self.chains):
            if not dues or last <= r or (dues[-1] <= first and c not in own):
                continue
            start, full = bisect_right(dues, first), bisect_left(dues, last)
            yield c, r, dues, slack, suffix, start, full, self._taken(parts, r, last), own.get(c)

    def allows(self, job: int | None, parts: list[Span]) -> bool:
        """Whether placing `job` (None, or a job not due: work that is not protected) in these parts keeps
        the due work feasible."""
        parts = sorted(parts)
        minutes = self.jobs[job][0] if job in self.jobs else 0
        for _, r, dues, slack, suffix, start, full, total, mine in self._affected(job, parts):
            for k in range(start, min(full, len(dues))):
                back = minutes if mine is not None and k >= mine else 0
                if slack[k] - self._taken(parts, r, dues[k]) + back < 0:
                    return False
            if full >= len(dues):
                continue
            cut = len(dues) if mine is None else max(full, mine)
            if cut > full and (suffix[full] < total and min(slack[full:cut]) < total):
                return False
            if cut < len(dues) and suffix[cut] + minutes < total:
                return False
        return True

    def release(self, job: int) -> None:
        """Stop protecting a job (it cannot be on time after all): its minutes no longer count."""
        minutes = self.jobs.pop(job, (0,))[0]
        for c, k in self.place.pop(job, []):
            r, dues, slack, _ = self.chains[c]
            slack[k:] = [s + minutes for s in slack[k:]]
            self._done(c, k, slack)
            self.chains[c] = (r, dues, slack, self._suffix(slack))

    def _done(self, c: int, k: int, slack: list) -> None:
        """Entry k of chain c has no job waiting: a due date before every job still waiting binds nothing."""
        self.live[c].discard(k)
        first = min(self.live[c], default=len(slack))
        slack[:first] = [math.inf] * first

    def commit(self, job: int | None, parts: list[Span]) -> None:
        """Take the placement into account: its time is gone, and a due job placed no longer counts."""
        parts = sorted(parts)
        minutes = self.jobs[job][0] if job in self.jobs else 0
        for c, r, dues, slack, _, start, full, total, mine in list(self._affected(job, parts)):
            for k in range(start, min(full, len(dues))):
                slack[k] -= self._taken(parts, r, dues[k])
            if total:
                slack[full:] = [s - total for s in slack[full:]]
            if mine is not None:
                slack[mine:] = [s + minutes for s in slack[mine:]]
                self._done(c, mine, slack)
            self.chains[c] = (r, dues, slack, self._suffix(slack))
        if job is not None:
            self.place.pop(job, None)
            self.jobs.pop(job, None)
