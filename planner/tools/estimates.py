"""Estimates that learn: per tag and per list, how long finished tasks took against their estimates.

    ratios(history)           {"+writing": Ratio(1.4, 6 tasks), "#work": ...} from the tracked time
    correction(task, ratios)  the ratio that applies to a task (None: none, or too close to 1 to say)
    corrected(minutes, r)     the minutes a plan gives it: the estimate times the ratio, up to 5 minutes

A ratio is the tracked minutes over the estimated minutes of the LAST most recently finished tasks
with that tag (or on that list), each with an estimate and some tracked time, once there are LEAST
of them. Sums, not a mean of ratios, so a long task weighs as much as its minutes. Where several
apply (two tags, a tag and a list), the one with the most tasks behind it wins (then the tag, then
the name), so one ratio, and one sentence, explains each corrected block. A ratio within 10% of 1
changes nothing; one is kept to 0.25-4, so a task logged by mistake cannot make a plan absurd.
The plan always says where it corrected (`say`), and PLANNER_LEARN_ESTIMATES=0 turns it off.
Trade-off: no model of the person, only their recent history; it learns within a few tasks and
forgets as fast, which is what a changing job needs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from planner.durations import short
from planner.storage.worklog import Finished

LAST = 10  # finished tasks per tag or list that a ratio is made from
LEAST = 3  # fewer finished tasks than this say nothing yet
NEAR = 0.1  # a ratio this close to 1 corrects nothing
BOUNDS = (0.25, 4.0)


@dataclass(frozen=True)
class Ratio:
    """Tracked over estimated minutes for the tasks with one tag ("+writing") or on one list ("#work")."""

    key: str
    ratio: float
    tasks: int


def _keys(tags: Iterable[str], list_name: str | None) -> list[str]:
    keys = [f"+{t.casefold()}" for t in tags]
    return keys + ([f"#{list_name.casefold()}"] if list_name else [])


def ratios(history: list[Finished]) -> dict[str, Ratio]:
    """Each tag's and list's ratio over its LAST most recent finished tasks (history newest first)."""
    seen: dict[str, list[Finished]] = {}
    for f in history:
        for key in _keys(f.tags, f.list_name):
            if len(seen.setdefault(key, [])) < LAST:
                seen[key].append(f)
    out = {}
    for key, done in seen.items():
        if len(done) >= LEAST:
            ratio = sum(f.tracked for f in done) / sum(f.estimate for f in done)
            out[key] = Ratio(key, min(max(ratio, BOUNDS[0]), BOUNDS[1]), len(done))
    return out


def correction(tags: Iterable[str], list_name: str | None, known: dict[str, Ratio]) -> Ratio | None:
    """The ratio that corrects a task with these tags and list, if one applies and says something."""
    found = [known[k] for k in _keys(tags, list_name) if k in known]
    found = [r for r in found if abs(r.ratio - 1) >= NEAR]
    if not found:
        return None
    return min(found, key=lambda r: (-r.tasks, not r.key.startswith("+"), r.key))


def corrected(minutes: int, r: Ratio) -> int:
    """The minutes a plan gives a task estimated at `minutes`: times the ratio, up to a multiple of 5."""
    return max(5, math.ceil(minutes * r.ratio / 5) * 5)


def say(r: Ratio, estimate: int, planned: int) -> str:
    """The sentence a corrected block carries."""
    return f"your {r.key} tasks run {r.ratio:.1f}× their estimate: planned {short(planned)} for ~{short(estimate)}"
