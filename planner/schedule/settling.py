"""Steps 4 and 5 of a plan: settling what placing one by one could not see (`settle`: a task that now fits, a
split a gap now holds, a lower-priority task ahead of a higher one due the same day), and the plan as it comes
out (`assemble`: blocks with why they are there, what was not placed, what was planned and is not done)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import replace

from planner.freetime import Span, clip, fewest, split
from planner.schedule.day import Day, Work, gaps_of, limit, move
from planner.schedule.types import MINUTE, PRIORITY_RANK, Block, Event, Horizon, Note, Plan, Reason, Task, matches


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
        move(w, parts, how, self.day)
        self.version += 1

    def fit(self, w: Work, hi: int) -> list[Span] | None:
        """The fewest parts by `hi`, remembering what did not fit since the last move."""
        key = (id(w.base[0]), w.lo, hi)
        seen = self.failed.get(key)
        if seen and seen[0] == self.version and w.minutes >= seen[1]:
            return None
        parts = fewest(gaps_of(self.day, w, hi), w.minutes, self.day.mb)
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
                earliest = split(gaps_of(self.day, w, self.day.h1), w.minutes, self.day.mb) or parts
                parts = fewest(clip(gaps_of(self.day, w, self.day.h1), earliest[-1][1]), w.minutes, self.day.mb)
                self.move(w, parts or earliest, "late: no room before its due date")
                changed = True
        return changed

    def needless_splits(self, placed: list[Work]) -> bool:
        """Split tasks that a gap now holds whole (or in fewer parts), by their deadline (their end when late)."""
        changed = False
        for w in placed:
            if len(w.parts) > 1:
                parts = fewest(gaps_of(self.day, w, limit(w, self.day, w.end)), w.minutes, self.day.mb)
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
        move(high, [(s, s + m)], "before a lower-priority task due the same day", day)
        if day.board.holds(low.base, was[1][1], (low.tid,)):
            move(low, was[1][1], was[1][2], day)
            return True
        parts = fewest(gaps_of(day, low, limit(low, day, was[1][1][-1][1])), low.minutes, day.mb)
        if parts:
            move(low, parts, "after a higher-priority task due the same day", day)
            return True
    for w, parts, how, stayed in was:
        move(w, parts, how, day)
        w.stayed = stayed
    return False


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
        said = [r.said for r in day.rules if r.kind == "prefer" and r.said and matches(r, w.task)]
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
