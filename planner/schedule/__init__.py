"""The scheduler: open tasks placed into the free time around the calendar, in code.

Pure: typed values in, a typed Plan out; no database, no model, no clock (the caller passes the
horizon, whose start is "now", and the last plan's blocks). Times are local wall-clock times without
a zone, so a day is always 24 hours and 09:00 stays 09:00 across a daylight-saving change.

A plan keeps these rules, in this order when they pull apart (docs/plan.md says why):
(a) deadlines: no due date is missed that could be met; what cannot be on time finishes as early as
    it can, the least priority-weighted lateness first (PRIORITY_WEIGHT per hour late);
(b) priority: of two tasks due the same day, the higher-priority one does not start after the lower
    one when it could start, whole, where the lower one starts, with the lower one still on time
    elsewhere;
(c) whole blocks: a task is never split when a free gap holds it, and otherwise goes into as few parts
    as the gaps allow (each at least `Hours.min_block` minutes), part k of n;
(d) stability: given the last plan, a re-plan moves only what (a)-(c) or the change force: a block
    whose time is still free stays, and a task that must move goes first where nobody stood;
(e) preferences (`Rule`) and breaks.
Always: no task block overlaps an event, another block or the break around them; blocks lie in working
hours or a `free` rule's window, never in an `avoid` rule's, never before the task's `not_before`,
never outside the horizon; pinned tasks keep their block exactly (even over an event: the user put it
there); the same input in any order gives the same plan.

The steps, in `plan` below, each in the module that holds it: `in_progress` and `screen` (day.py: a block
of the last plan under way is held; what cannot go in at all, with its true reason); `placing_order` and
`place_all` (placing.py: urgency, with tasks due the same day by priority and what cannot be on time first;
each task where the last plan had it, else the earliest whole gap, else the fewest parts, while
duework.Deadlines keeps the due work feasible); `settle` and `assemble` (settling.py: what the order could not
see, a lower-priority task ahead, a split a gap now holds, a late task that now fits; then the blocks with why
each is there). The values in and out, and the check of what goes in, are types.py.

Not placed, in `Plan.unscheduled` with a `Reason` and a detail: no estimate; not started yet (its start
date); no working time left today; the day taken by an all-day event; kept free by a preference; the
calendar full; longer than the horizon ("longer than the week"); past due (placing it would hide that,
so the user picks a new date); no free time left (other tasks took it); no room before the due date.
Each is the true cause: remove it and the task goes in (tests/test_schedule_objective.py).

Preferences are `Rule`s: a daily window on some weekdays (all if none) about the tasks with one of
its `tags` among their tags or as their list (all tasks if none): avoid (no block of those tasks
there; avoid wins), free (time those tasks may use outside working hours), prefer (those tasks go to
the earliest such window that holds them whole before their due date, else as usual).

Trade-offs: least weighted lateness is NP-hard, and an exact solver is a large dependency taking
seconds; this is a greedy of milliseconds, measured against the exact optimum by bench/plan.py. It
chooses which due work can be on time on a fluid model (splitting at any minute, rules left out), so
it can miss the optimum when the minimum block, start dates or rules matter. (b) and (c) hold exactly
(a property test checks each against a brute-force oracle); (a) and (d) as close as the bench shows.
Events are busy time only: the caller expands repeats and converts zones.
"""

from __future__ import annotations

from collections.abc import Sequence

from planner.schedule.day import Day, in_progress, screen
from planner.schedule.placing import place_all, placing_order
from planner.schedule.settling import assemble, settle
from planner.schedule.types import (
    DEFAULT_MINUTES,
    MINUTE,
    PRIORITY_RANK,
    PRIORITY_WEIGHT,
    Block,
    Event,
    Horizon,
    Hours,
    Note,
    Plan,
    Reason,
    Rule,
    ScheduleError,
    Task,
    check,
    round_up,
)

__all__ = [
    "DEFAULT_MINUTES",
    "MINUTE",
    "PRIORITY_RANK",
    "PRIORITY_WEIGHT",
    "Block",
    "Event",
    "Horizon",
    "Hours",
    "Note",
    "Plan",
    "Reason",
    "Rule",
    "ScheduleError",
    "Task",
    "plan",
    "round_up",
]


def plan(
    tasks: Sequence[Task],
    events: Sequence[Event],
    horizon: Horizon,
    hours: Hours = Hours(),  # noqa: B008 (frozen, so one shared default is safe)
    rules: Sequence[Rule] = (),
    previous: Plan | None = None,
) -> Plan:
    """Place the tasks into the free time of the horizon; `previous`, the last plan (its task blocks, and the
    tasks it left out or placed late), keeps a re-plan stable. Raises ScheduleError on input it cannot use."""
    last = previous or Plan((), (), ())
    check(tasks, events, horizon, hours, rules, last.blocks)
    tasks, going = in_progress(tasks, last, horizon)
    day = Day(horizon, hours, rules, events, tasks)
    day.going = going
    ready, notes = screen(tasks, day)
    order = placing_order(ready, day)
    placed = place_all(order, day, last)
    settle(placed, day)
    return assemble(tasks, events, placed, notes, day, last.blocks)
