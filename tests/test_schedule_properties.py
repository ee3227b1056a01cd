"""The scheduler's invariants as property tests, checked against plain minute-by-minute oracles and a
brute-force search (schedule_cases.py); each rule and refusal as an example is test_schedule.py."""

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st
from schedule_cases import (
    MINUTE,
    PROPERTY,
    _minutes,
    all_on_time_possible,
    at,
    available,
    could_fit,
    free_runs,
    instances,
    mornings,
    reasons,
    spans,
    task_blocks,
)

from planner.schedule import (
    Horizon,
    Hours,
    Reason,
    plan,
)


@PROPERTY
@given(instances())
def test_no_task_block_overlaps_an_event_or_another_block_or_their_break(case):
    tasks, events, horizon, hours, rules = case
    p = plan(tasks, events, horizon, hours, rules)
    brk = hours.break_minutes
    for b in p.blocks:
        if b.kind != "task" or b.pinned:
            continue
        for x in p.blocks:
            if x is not b and x.end > x.start:
                assert b.start >= x.end + brk * MINUTE or x.start >= b.end + brk * MINUTE, (b, x)


@PROPERTY
@given(instances())
def test_task_blocks_lie_in_working_hours_or_free_rules_never_avoided_never_before_the_start_date(case):
    tasks, events, horizon, hours, rules = case
    p = plan(tasks, events, horizon, hours, rules)
    by_id = {t.task_id: t for t in tasks}
    for b in p.blocks:
        if b.kind == "task" and not b.pinned:
            t = by_id[b.task_id]
            allowed = available(t, hours, rules, horizon)
            assert all(m in allowed for m in range(_minutes(b.start), _minutes(b.end))), b
            assert t.not_before is None or b.start >= t.not_before


@PROPERTY
@given(instances())
def test_every_task_is_placed_with_its_whole_estimate_or_listed_once_with_a_reason(case):
    tasks, events, horizon, hours, rules = case
    p = plan(tasks, events, horizon, hours, rules)
    listed = [n.task_id for n in p.unscheduled]
    assert len(listed) == len(set(listed))
    for t in tasks:
        blocks = task_blocks(p, t.task_id)
        if t.pinned is not None and t.minutes is not None:
            inside = t.pinned + t.minutes * MINUTE > horizon.start and t.pinned < horizon.end
            assert [(b.start, b.end, b.pinned) for b in blocks] == (
                [(t.pinned, t.pinned + t.minutes * MINUTE, True)] if inside else []
            )
            assert t.task_id not in listed
            continue
        assert bool(blocks) != (t.task_id in listed), t
        if blocks:
            assert sum((b.end - b.start) // MINUTE for b in blocks) == t.minutes
            assert [(b.part, b.parts) for b in blocks] == [(k, len(blocks)) for k in range(1, len(blocks) + 1)]
            assert all(b.guessed == t.guessed for b in blocks)
            if len(blocks) > 1:
                assert all(b.end - b.start >= hours.min_block * MINUTE for b in blocks)
        if t.minutes is None:
            assert reasons(p)[t.task_id] == Reason.NO_ESTIMATE


@PROPERTY
@given(instances())
def test_a_task_is_late_only_when_no_free_time_before_its_due_date_could_hold_it(case):
    tasks, events, horizon, hours, rules = case
    p = plan(tasks, events, horizon, hours, rules)
    late = {n.task_id for n in p.late}
    for t in tasks:
        blocks = task_blocks(p, t.task_id)
        if not blocks or blocks[0].pinned:
            continue
        ends_late = t.due is not None and blocks[-1].end > t.due
        assert all(b.late == ends_late for b in blocks)
        assert (t.task_id in late) == ends_late
        if ends_late:
            lo = max(_minutes(horizon.start), _minutes(t.not_before or horizon.start))
            runs = free_runs(
                available(t, hours, rules, horizon),
                spans(p, t.task_id),
                hours.break_minutes,
                lo,
                min(_minutes(t.due), _minutes(horizon.end)),
            )
            assert not could_fit(runs, t.minutes, hours.min_block), t
    for n in p.unscheduled:
        if n.reason == Reason.NO_FREE_TIME:  # and nothing left in the plan could hold it either
            t = next(t for t in tasks if t.task_id == n.task_id)
            lo = max(_minutes(horizon.start), _minutes(t.not_before or horizon.start))
            runs = free_runs(
                available(t, hours, rules, horizon), spans(p), hours.break_minutes, lo, _minutes(horizon.end)
            )
            assert not could_fit(runs, t.minutes, hours.min_block), t


@PROPERTY
@given(mornings())
def test_when_every_due_date_can_be_met_none_is_missed(case):
    tasks, events = case
    tasks = [t for t in tasks if t.due is None or t.due > at(0, "09:00")]
    morning = Hours((((dt.time(9), dt.time(13)),),) * 7)
    p = plan(tasks, events, Horizon(at(0, "09:00"), at(1, "00:00")), morning)
    free = [_minutes(at(0, "09:00")) + 15 * k for k in range(16)]
    free = [m for m in free if all(m + 15 <= _minutes(e.start) or m >= _minutes(e.end) for e in events)]
    if all_on_time_possible(tasks, free, 15):
        assert not p.late and Reason.NO_ROOM_BEFORE_DUE not in reasons(p).values(), p
    else:  # and the search is not vacuous: when it says no, the plan misses one too
        assert p.late or Reason.NO_ROOM_BEFORE_DUE in reasons(p).values(), p


@PROPERTY
@given(instances(), st.randoms(use_true_random=False))
def test_the_same_input_in_any_order_gives_the_same_plan(case, rng):
    tasks, events, horizon, hours, rules = case
    first = plan(tasks, events, horizon, hours, rules)
    assert plan(tasks, events, horizon, hours, rules) == first
    shuffled = [list(x) for x in (tasks, events, rules)]
    for x in shuffled:
        rng.shuffle(x)
    assert plan(shuffled[0], shuffled[1], horizon, hours, shuffled[2]) == first
