"""The plan's ordered objective as properties over generated days and weeks (docs/plan.md): (b) priority
order among tasks due the same day, (c) whole blocks and the fewest parts, (d) stable re-plans, and every
reason for a task left out being the true one. Each is checked against a minute-by-minute oracle in
schedule_cases.py, never against the scheduler's own search."""

from __future__ import annotations

import dataclasses
import datetime as dt

from hypothesis import given
from hypothesis import strategies as st
from schedule_cases import (
    MINUTE,
    MON,
    PROPERTY,
    _minutes,
    at,
    available,
    inversion,
    needless_split,
    same_day_pairs,
    task_blocks,
)

from planner.schedule import Event, Horizon, Hours, Plan, Reason, Rule, Task, plan


@st.composite
def crowded(draw, due_dates: bool = True, priorities: bool = True):
    """A day or a week of tasks around meetings: many due the same day with mixed priorities (or, without
    `due_dates` and `priorities`, none due and all alike), breaks and minimum blocks varied."""
    days = draw(st.sampled_from([1, 1, 3, 5]))
    start = at(0, draw(st.sampled_from(["09:00", "09:00", "10:35", "13:00"])))
    horizon = Horizon(start, MON + dt.timedelta(days=days))
    hours = Hours(min_block=draw(st.sampled_from([15, 30])), break_minutes=draw(st.sampled_from([0, 0, 5])))
    events = []
    for k in range(draw(st.integers(0, 6))):
        s = at(draw(st.integers(0, days - 1)), "09:00") + 15 * MINUTE * draw(st.integers(0, 31))
        events.append(Event(s, s + 15 * MINUTE * draw(st.integers(1, 8)), f"meeting {k}", f"e{k}"))
    tasks = []
    for i in range(1, draw(st.integers(2, 8)) + 1):
        day = draw(st.integers(0, days - 1))
        due = at(day, draw(st.sampled_from(["12:00", "17:00", "17:00"]))) if due_dates and draw(st.booleans()) else None
        tasks.append(
            Task(
                i,
                f"task {i}",
                15 * draw(st.integers(1, 12)),
                due=due,
                priority=draw(st.sampled_from(["high", "medium", "low", None])) if priorities else None,
                urgency=draw(st.sampled_from([0.0, 2.0, 8.8])) if priorities else 0.0,
            )
        )
    return tasks, events, horizon, hours, []


def mixed():
    from schedule_cases import instances

    return st.one_of(crowded(), instances())


# ---------------------------------------------------------------- (b) priority order


@PROPERTY
@given(mixed())
def test_no_lower_priority_task_due_the_same_day_starts_first_where_the_higher_one_fits_whole(case):
    tasks, events, horizon, hours, rules = case
    p = plan(tasks, events, horizon, hours, rules)
    for high, low in same_day_pairs([t for t in tasks if t.minutes and t.pinned is None]):
        assert not inversion(p, high, low, hours, rules, horizon), (high, low, p)


def test_the_high_priority_report_comes_first_on_a_wednesday_with_a_stand_up_and_the_dentist():
    # The issue's Wednesday: before, review slides went first and split, and the report went last.
    wed = at(2, "09:00")
    events = [
        Event(at(2, "10:00"), at(2, "10:15"), "stand-up", "s"),
        Event(at(2, "13:00"), at(2, "14:30"), "dentist", "d"),
    ]
    due = at(2, "17:00")
    tasks = [
        Task(1, "write the report", 120, due=due, priority="high", urgency=14.8),
        Task(2, "call the bank", 30, due=due, urgency=8.8),
        Task(3, "review slides", 90, due=due, priority="medium", urgency=12.7),
        Task(4, "prepare the workshop", 9 * 60, due=due, urgency=8.8),
    ]
    p = plan(tasks, events, Horizon(wed, at(3, "00:00")))
    got = {b.title: (f"{b.start:%H:%M}", f"{b.end:%H:%M}") for b in p.blocks if b.kind == "task"}
    assert got["write the report"] == ("10:15", "12:15")  # first, whole: 09:00-10:00 cannot hold two hours
    assert got["review slides"] == ("14:30", "16:00")  # whole, after the report
    assert all(len(task_blocks(p, i)) == 1 for i in (1, 2, 3))
    assert [n.task_id for n in p.unscheduled] == [4]


# ---------------------------------------------------------------- (c) whole blocks


@PROPERTY
@given(mixed())
def test_a_task_is_split_only_when_no_gap_holds_it_and_then_into_the_fewest_parts(case):
    tasks, events, horizon, hours, rules = case
    p = plan(tasks, events, horizon, hours, rules)
    for t in tasks:
        if t.minutes and t.pinned is None:
            assert needless_split(p, t, hours, rules, horizon) is None


def test_a_thursday_keeps_the_two_hour_task_whole_when_a_late_meeting_arrives():
    thu = at(3, "09:00")
    events = [Event(at(3, "09:30"), at(3, "10:00"), "call", "c"), Event(at(3, "12:00"), at(3, "13:00"), "lunch", "l")]
    tasks = [Task(1, "draft", 120, urgency=3), Task(2, "email", 30, urgency=2), Task(3, "read", 60, urgency=1)]
    hz = Horizon(thu, at(4, "00:00"))
    first = plan(tasks, events, hz)
    late = Event(at(3, "16:30"), at(3, "17:00"), "late meeting", "m")
    again = plan(tasks, [*events, late], hz, previous=first)
    assert [b.parts for b in again.blocks if b.task_id == 1] == [1]  # 10:00-12:00 was free: never two parts
    before = {(b.task_id, b.start, b.end) for b in first.blocks if b.kind == "task" and b.end <= late.start}
    assert before <= {(b.task_id, b.start, b.end) for b in again.blocks if b.kind == "task"}


# ---------------------------------------------------------------- (d) stability


def task_spans(p: Plan) -> dict[int, list[tuple[dt.datetime, dt.datetime]]]:
    out: dict[int, list] = {}
    for b in p.blocks:
        if b.kind == "task":
            out.setdefault(b.task_id, []).append((b.start, b.end))
    return out


@PROPERTY
@given(mixed())
def test_a_re_plan_with_nothing_changed_moves_nothing(case):
    tasks, events, horizon, hours, rules = case
    first = plan(tasks, events, horizon, hours, rules)
    again = plan(tasks, events, horizon, hours, rules, previous=first)
    assert task_spans(again) == task_spans(first)
    assert all(b.stayed for b in again.blocks if b.kind == "task" and not b.pinned)


@st.composite
def insertions(draw):
    tasks, events, horizon, hours, rules = draw(crowded(due_dates=False, priorities=False))
    days = max(1, (horizon.end - horizon.start).days)
    s = at(draw(st.integers(0, days - 1)), "09:00") + 15 * MINUTE * draw(st.integers(0, 31))
    return tasks, events, horizon, hours, rules, Event(s, s + 15 * MINUTE * draw(st.integers(1, 6)), "new", "new")


@PROPERTY
@given(insertions())
def test_an_event_arriving_moves_only_the_tasks_it_lands_on(case):
    # No due dates and one priority: nothing but the event can force a move, except rule (c) joining a task
    # that was split when the event frees up a gap (its part moved away).
    tasks, events, horizon, hours, rules, new = case
    first = plan(tasks, events, horizon, hours, rules)
    again = plan(tasks, [*events, new], horizon, hours, rules, previous=first)
    brk = hours.break_minutes * MINUTE
    before, after = task_spans(first), task_spans(again)
    for tid, spans in before.items():
        hit = any(a < new.end + brk and new.start - brk < b for a, b in spans)
        if not hit and after.get(tid) != spans:
            assert len(spans) > 1 and tid in after and len(after[tid]) < len(spans), (tid, spans, after.get(tid))


def test_a_block_done_early_frees_its_time_and_the_others_stay():
    mon = at(0, "09:00")
    tasks = [Task(1, "a", 60, urgency=3), Task(2, "b", 60, urgency=2), Task(3, "c", 60, urgency=1)]
    first = plan(tasks, [], Horizon(mon, at(1, "00:00")))
    later = Horizon(at(0, "09:40"), at(1, "00:00"))  # task 1 done at 09:40
    again = plan(tasks[1:], [], later, previous=first)
    assert task_spans(again) == {2: task_spans(first)[2], 3: task_spans(first)[3]}
    assert all(b.stayed and "last plan" in b.why for b in again.blocks)


def test_a_past_block_not_done_is_planned_again_and_said():
    tasks = [Task(1, "report", 60, urgency=3), Task(2, "email", 30, urgency=1)]
    first = plan(tasks, [], Horizon(at(0, "09:00"), at(1, "00:00")))
    assert task_spans(first)[1] == [(at(0, "09:00"), at(0, "10:00"))]
    again = plan(tasks, [], Horizon(at(0, "11:00"), at(1, "00:00")), previous=first)
    assert task_spans(again)[1] == [(at(0, "11:00"), at(0, "12:00"))]  # never dropped
    assert [(n.task_id, n.reason, n.detail) for n in again.replanned] == [
        (1, Reason.NOT_DONE, "was 09:00-10:00; planned again at 11:00"),
        (2, Reason.NOT_DONE, "was 10:00-10:30; planned again at 12:00"),
    ]


# ---------------------------------------------------------------- the true reason


def remedy(reason: Reason, t: Task, events: list, horizon: Horizon, rules: list, pins: list):
    """What takes the stated cause away, and only it."""
    if reason == Reason.NO_ESTIMATE:
        return dataclasses.replace(t, minutes=30), events, horizon, rules, pins
    if reason == Reason.NOT_STARTED:
        return dataclasses.replace(t, not_before=None), events, horizon, rules, pins
    if reason == Reason.NO_TIME_LEFT:
        return t, events, Horizon(dt.datetime.combine(horizon.start.date(), dt.time()), horizon.end), rules, pins
    if reason == Reason.ALL_DAY:
        return t, [e for e in events if not e.all_day], horizon, rules, pins
    if reason == Reason.PREFERENCE:
        return t, events, horizon, [r for r in rules if r.kind != "avoid"], pins
    if reason == Reason.CALENDAR_FULL:
        return t, [], horizon, rules, []
    if reason == Reason.PAST_DUE:
        return dataclasses.replace(t, due=None), events, horizon, rules, pins
    raise AssertionError(reason)


@st.composite
def awkward(draw):
    """Instances where reasons happen: late starts, after hours, all-day events, avoided time, start dates."""
    from schedule_cases import instances

    tasks, events, horizon, hours, rules = draw(instances())
    if draw(st.booleans()):
        d = draw(st.integers(0, 3))
        events = [*events, Event(at(d, "00:00"), at(d + 1, "00:00"), "offsite", "all", all_day=True)]
    if draw(st.booleans()):
        late = at(0, draw(st.sampled_from(["17:30", "18:27", "16:50", "23:55"])))
        horizon = Horizon(late, max(late, horizon.end))
    return tasks, events, horizon, hours, rules


@PROPERTY
@given(st.one_of(awkward(), mixed()))
def test_every_reason_is_the_true_one_taking_it_away_lets_the_task_in(case):
    tasks, events, horizon, hours, rules = case
    p = plan(tasks, events, horizon, hours, rules)
    pins = [t for t in tasks if t.pinned is not None and t.minutes is not None]
    for note in p.unscheduled:
        t = next(x for x in tasks if x.task_id == note.task_id)
        alone = plan([t, *pins] if t not in pins else pins, events, horizon, hours, rules)
        competition = note.reason in (Reason.NO_FREE_TIME, Reason.NO_ROOM_BEFORE_DUE)
        if competition:  # other tasks took the time: alone it goes in
            assert task_blocks(alone, t.task_id), (note, alone)
            continue
        assert [(n.task_id, n.reason) for n in alone.unscheduled if n.task_id == t.task_id] == [
            (t.task_id, note.reason)
        ]
        seen, state = [], (t, list(events), horizon, list(rules), pins)
        for _ in range(len(Reason)):
            cur, evs, hz, rls, pns = state
            got = plan([cur, *pns], evs, hz, hours, rls)
            if task_blocks(got, t.task_id):
                break
            [n] = [n for n in got.unscheduled if n.task_id == t.task_id]
            assert n.reason not in seen, (n, seen)  # taking a cause away never leaves the same cause
            seen.append(n.reason)
            if n.reason == Reason.LONGER_THAN_HORIZON:  # shorter, it goes in: as long as its longest free run
                runs = _runs(cur, evs, hz, hours, rls, pns)
                assert runs and max(runs) < cur.minutes
                state = (dataclasses.replace(cur, minutes=max(runs)), evs, hz, rls, pns)
                continue
            if n.reason == Reason.NO_WORKING_TIME:  # no minute of working time it may use is free
                assert not _runs(cur, evs, hz, hours, rls, pns, events_too=False)
                break
            state = remedy(n.reason, cur, evs, hz, rls, pns)
        else:
            raise AssertionError(f"task {t.task_id} never went in: {seen}")


def _runs(t, events, horizon, hours, rules, pins, events_too=True):
    from schedule_cases import free_runs

    taken = [(_minutes(e.start), _minutes(e.end)) for e in events] if events_too else []
    taken += [(_minutes(x.pinned), _minutes(x.pinned) + x.minutes) for x in pins] if events_too else []
    lo = max(_minutes(horizon.start), _minutes(t.not_before) if t.not_before else -(10**9))
    return free_runs(available(t, hours, rules, horizon), taken, hours.break_minutes, lo, _minutes(horizon.end))


def test_the_issues_wrong_reasons_are_right_now():
    wed = at(2, "00:00")
    evening = plan([Task(1, "quick call", 15)], [], Horizon.day(at(2, "18:27")))
    assert [(n.reason, n.detail) for n in evening.unscheduled] == [
        (Reason.NO_TIME_LEFT, "working hours ended at 17:00")
    ]
    offsite = Event(wed, wed + dt.timedelta(days=1), "offsite", "o", all_day=True)
    taken = plan([Task(1, "quick call", 15)], [offsite], Horizon.day(at(2, "08:00")))
    assert [(n.reason, n.detail) for n in taken.unscheduled] == [(Reason.ALL_DAY, "offsite")]
    friday = plan([Task(1, "slides", 60, not_before=at(4, "00:00"))], [], Horizon.day(at(2, "08:00")))
    assert [(n.reason, n.detail) for n in friday.unscheduled] == [(Reason.NOT_STARTED, "starts Fri 2026-12-04")]
    avoided = plan(
        [Task(1, "write", 60)],
        [],
        Horizon(at(4, "09:00"), at(5, "00:00")),
        rules=[Rule("avoid", dt.time(0), dt.time(0), (4,), said="no tasks on Fridays")],
    )
    assert [(n.reason, n.detail) for n in avoided.unscheduled] == [(Reason.PREFERENCE, "no tasks on Fridays")]
