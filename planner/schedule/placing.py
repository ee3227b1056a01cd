"""Steps 2 and 3 of a plan: the order tasks go in (`placing_order`, with `deadlines` choosing the due work that
can be on time), and placing them (`place_all`): the last plan's blocks that still hold kept (`keep`, `partly`),
each other task where `spot` (or `late_spot`) finds room, the due work kept feasible meanwhile (`Placer`)."""

from __future__ import annotations

import copy
import datetime as dt
import math
from collections.abc import Iterable, Iterator

from planner.duework import Deadlines, sequence
from planner.freetime import Board, Span, clip, fewest, split, within
from planner.schedule.day import Day, Work, gaps_of, limit, move
from planner.schedule.types import PRIORITY_RANK, PRIORITY_WEIGHT, Plan


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
    """Mark the due work that can be on time (it is protected while others are placed): duework.sequence on a
    fluid model, then Horn's test adding back what still fits and exchanging lighter work for heavier. Returns
    the rest of the due work, in the order of least priority-weighted lateness."""
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
    late = [w for w in late if not w.on_time]
    _exchange(late, due, jobs_on, gaps, day)
    return [w for w in late if not w.on_time]


def _exchange(late: list[Work], due: list[Work], jobs_on: dict, gaps: list[Span], day: Day, tries: int = 6) -> None:
    """Fewer deadlines missed, weighed by priority: a late task of more weight goes on time in place of lighter
    ones (the lightest per minute first, as few as will do, found by halving) when they weigh less in all; what
    fits again after all comes back. Moved tasks are appended to `late`."""
    weight = {w.tid: PRIORITY_WEIGHT[w.task.priority] for w in due}
    by_id = {w.tid: w for w in due}

    def fits(jobs: dict) -> bool:
        return Deadlines(dict(jobs), gaps, day.brk).feasible()

    for w in sorted(late, key=lambda w: (-weight[w.tid], w.minutes, w.tid))[:tries]:
        if weight[w.tid] < 2 or w.on_time or w.lo + w.minutes > w.due:  # type: ignore[operator]
            continue
        lighter = sorted(
            (t for t in jobs_on if weight[t] < weight[w.tid] and jobs_on[t][2] > w.lo and jobs_on[t][1] < w.due),
            key=lambda t: (weight[t] / jobs_on[t][0], -jobs_on[t][2], t),
        )
        mine = {w.tid: (w.minutes, w.lo, w.due)}
        if not lighter or not fits({k: v for k, v in jobs_on.items() if k not in lighter} | mine):
            continue
        lo, hi = 1, len(lighter)  # the fewest of the lightest to give way
        while lo < hi:
            mid = (lo + hi) // 2
            if fits({k: v for k, v in jobs_on.items() if k not in lighter[:mid]} | mine):
                hi = mid
            else:
                lo = mid + 1
        out = lighter[:lo]
        if sum(weight[t] for t in out) >= weight[w.tid]:
            continue
        trial = {k: v for k, v in jobs_on.items() if k not in out} | mine
        for t in list(out)[:4]:  # what fits again after all comes back
            if fits({**trial, t: jobs_on[t]}):
                trial[t] = jobs_on[t]
                out.remove(t)
        jobs_on.clear()
        jobs_on.update(trial)
        w.on_time = True
        for t in out:
            by_id[t].on_time = False
            late.append(by_id[t])


class Placer:
    """The board while tasks go in one by one: the due work kept feasible (duework.Deadlines), and the last
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
        gaps = gaps_of(self.day, w, hi)
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
            found = _on_time(w, gaps_of(placer.day, w, w.due), placer) or late_spot(w, placer)  # type: ignore[arg-type]
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
        gaps = [g for g in gaps_of(day, w, hi, board) if not any(a < g[1] and g[0] < b for a, b in stay)]
        more = fewest(gaps, rest, day.mb)
        parts = _joined(sorted(stay + (more or [])))
        need = more and fewest(gaps_of(day, w, limit(w, day, parts[-1][1]), board), w.minutes, day.mb)
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
                move(w, parts, "stays where the last plan put it", day)
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
            if not fewest(gaps_of(day, w, w.due), w.minutes, day.mb):
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
    if w.due is not None and w.end > w.due and fewest(gaps_of(day, w, w.due), w.minutes, day.mb):
        return False  # it can be on time now
    if len(w.parts) > 1:
        best = fewest(gaps_of(day, w, limit(w, day, w.end)), w.minutes, day.mb)
        return best is not None and len(best) >= len(w.parts)
    return True


def _short(kept: list[Work], placer: Placer) -> Span | None:
    """Where the due work not kept no longer fits once the kept blocks are taken (None: it fits)."""
    guard = copy.deepcopy(placer.guard)
    for w in kept:
        guard.commit(w.tid if w.on_time else None, w.parts)
    return guard.short()


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
                found = _on_time(w, hard if board is day.board else gaps_of(day, w, hi, board), placer)
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
        found = _earliest_finish(w, gaps_of(day, w, day.h1, board), placer)
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
