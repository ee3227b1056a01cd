"""The scheduler (planner/schedule.py): each rule and refusal as an example; its invariants are
test_schedule_properties.py."""

import datetime as dt
import math
import random

import pytest
from schedule_cases import MINUTE, at, every_day, reasons, task_blocks, week

from planner.schedule import (
    DEFAULT_MINUTES,
    Event,
    Horizon,
    Hours,
    Reason,
    Rule,
    ScheduleError,
    Task,
    plan,
    round_up,
)

# ---------------------------------------------------------------- each reason, as an example


def test_a_task_without_an_estimate_is_unscheduled_as_no_estimate():
    p = plan([Task(1, "call the bank", None)], [], week())
    assert reasons(p) == {1: Reason.NO_ESTIMATE} and not p.blocks


def test_a_task_due_today_at_ten_is_past_due_at_eleven():
    now = at(0, "11:00")
    p = plan([Task(1, "send the invoice", 30, due=at(0, "10:00"))], [], Horizon.day(now))
    assert reasons(p) == {1: Reason.PAST_DUE}
    assert str(Reason.PAST_DUE) == "past due"


def test_a_task_with_no_room_before_its_due_date_is_placed_after_it_as_late():
    meeting = Event(at(0, "09:00"), at(0, "12:00"), "workshop", "w1")
    p = plan([Task(1, "slides", 60, due=at(0, "11:00"))], [meeting], week())
    [b] = task_blocks(p, 1)
    assert (b.start, b.end, b.late) == (at(0, "12:00"), at(0, "13:00"), True)
    assert [(n.task_id, n.reason) for n in p.late] == [(1, Reason.NO_ROOM_BEFORE_DUE)]
    assert not p.unscheduled


def test_a_task_with_no_room_before_nor_after_its_due_date_is_unscheduled_as_no_room_before_the_due_date():
    day = Horizon(at(0, "09:00"), at(1, "00:00"))
    offsite = Event(at(0, "10:00"), at(0, "17:00"), "offsite", "o1")
    tasks = [
        Task(1, "expenses", 60, due=at(0, "12:00"), priority="low"),
        Task(2, "budget", 60, due=at(0, "12:00"), priority="high"),
    ]
    p = plan(tasks, [offsite], day)
    assert reasons(p) == {1: Reason.NO_ROOM_BEFORE_DUE}
    assert [(b.task_id, b.start) for b in p.blocks if b.kind == "task"] == [(2, at(0, "09:00"))]


def test_a_task_longer_than_all_the_free_time_of_the_week_is_longer_than_the_horizon():
    p = plan([Task(1, "thesis", 41 * 60)], [], week())
    assert reasons(p) == {1: Reason.LONGER_THAN_HORIZON}
    assert "longer than" in Reason.LONGER_THAN_HORIZON


def test_a_task_whose_time_other_tasks_took_has_no_free_time_left():
    day = Horizon(at(0, "09:00"), at(1, "00:00"))
    p = plan([Task(1, "big", 7 * 60, urgency=5), Task(2, "second", 90, urgency=1)], [], day)
    assert reasons(p) == {2: Reason.NO_FREE_TIME}


# ---------------------------------------------------------------- placing


def test_a_task_longer_than_the_largest_gap_is_split_into_parts_that_say_k_of_n():
    events = [
        Event(at(0, "10:00"), at(0, "11:00"), "standup", "s"),
        Event(at(0, "12:00"), at(0, "13:00"), "lunch", "l"),
    ]
    day = Horizon(at(0, "09:00"), at(0, "14:00"))
    p = plan([Task(1, "report", 150)], events, day)
    got = [(b.start.strftime("%H:%M"), b.end.strftime("%H:%M"), b.part, b.parts) for b in task_blocks(p, 1)]
    assert got == [("09:00", "10:00", 1, 3), ("11:00", "12:00", 2, 3), ("13:00", "13:30", 3, 3)]


def test_a_split_never_leaves_a_part_shorter_than_the_minimum_block():
    events = [Event(at(0, "09:50"), at(0, "11:00"), "call", "c")]
    day = Horizon(at(0, "09:00"), at(0, "12:00"))
    p = plan([Task(1, "review", 100)], events, day, Hours(min_block=45))
    assert [(b.end - b.start) // MINUTE for b in task_blocks(p, 1)] == [50, 50]


def test_a_task_that_fits_one_gap_goes_there_whole_even_when_splitting_would_start_earlier():
    events = [Event(at(0, "09:30"), at(0, "10:00"), "call", "c")]
    p = plan([Task(1, "write", 60)], events, week(at(0, "09:00")))
    assert [(b.start, b.parts) for b in task_blocks(p, 1)] == [(at(0, "10:00"), 1)]


def test_higher_urgency_gets_the_earlier_time():
    tasks = [Task(1, "low", 60, urgency=1.0), Task(2, "high", 60, urgency=7.5)]
    p = plan(tasks, [], week(at(0, "09:00")))
    assert task_blocks(p, 2)[0].start == at(0, "09:00") and task_blocks(p, 1)[0].start == at(0, "10:00")


def test_equal_urgency_goes_by_due_date_then_priority_then_id():
    tasks = [
        Task(4, "d", 30, urgency=2, priority="low"),
        Task(3, "c", 30, urgency=2, priority="high"),
        Task(2, "b", 30, urgency=2, due=at(4, "17:00")),
        Task(1, "a", 30, urgency=2, priority="low"),
    ]
    p = plan(tasks, [], week(at(0, "09:00")))
    assert [b.task_id for b in p.blocks] == [2, 3, 1, 4]


def test_a_due_task_keeps_time_before_its_due_date_against_more_urgent_work():
    day = Horizon(at(0, "09:00"), at(1, "00:00"))
    tasks = [Task(1, "urgent but open", 6 * 60, urgency=20), Task(2, "due at noon", 3 * 60, due=at(0, "12:00"))]
    p = plan(tasks, [], day)
    assert task_blocks(p, 2)[0].end <= at(0, "12:00") and not p.late
    assert reasons(p) == {1: Reason.NO_FREE_TIME}


def test_guessed_estimates_are_marked_on_their_blocks():
    p = plan([Task(1, "tidy up", DEFAULT_MINUTES, guessed=True)], [], week())
    assert [(b.guessed, (b.end - b.start) // MINUTE) for b in p.blocks] == [(True, 30)]


def test_a_pinned_block_stays_where_it_is_even_over_an_event_and_others_move_around_it():
    ev = Event(at(0, "09:00"), at(0, "10:00"), "standup", "s")
    tasks = [Task(1, "pinned", 60, pinned=at(0, "09:30")), Task(2, "free", 60, urgency=9)]
    p = plan(tasks, [ev], week(at(0, "09:00")))
    [pinned] = task_blocks(p, 1)
    assert (pinned.start, pinned.end, pinned.pinned) == (at(0, "09:30"), at(0, "10:30"), True)
    assert task_blocks(p, 2)[0].start == at(0, "10:30")


def test_a_break_leaves_free_minutes_between_blocks_and_after_events():
    ev = Event(at(0, "09:00"), at(0, "10:00"), "standup", "s")
    tasks = [Task(1, "a", 30, urgency=2), Task(2, "b", 30, urgency=1)]
    p = plan(tasks, [ev], week(at(0, "09:00")), Hours(break_minutes=10))
    assert [(b.start.strftime("%H:%M"), b.task_id) for b in p.blocks] == [("09:00", None), ("10:10", 1), ("10:50", 2)]


def test_events_outside_the_horizon_are_left_out_and_inside_kept_with_their_own_times():
    evs = [Event(at(0, "08:00"), at(0, "08:30"), "before", "b"), Event(at(0, "09:45"), at(0, "10:15"), "call", "c")]
    p = plan([], evs, Horizon(at(0, "10:00"), at(1, "00:00")))
    assert [(b.kind, b.event_id, b.start) for b in p.blocks] == [("event", "c", at(0, "09:45"))]


def test_local_time_has_no_daylight_saving_gap_the_day_the_clocks_change():
    sunday = dt.datetime(2026, 3, 29)  # clocks change in Europe
    hours = Hours(every_day(dt.time(9), dt.time(17)))
    p = plan([Task(1, "long", 8 * 60)], [], Horizon(sunday, sunday + dt.timedelta(days=1)), hours)
    [b] = task_blocks(p, 1)
    assert (b.start, b.end) == (sunday.replace(hour=9), sunday.replace(hour=17))


def test_horizons_start_at_now_rounded_up_to_five_minutes_and_end_at_midnight():
    now = dt.datetime(2026, 12, 2, 10, 2, 30)  # a Wednesday
    assert Horizon.day(now) == Horizon(dt.datetime(2026, 12, 2, 10, 5), dt.datetime(2026, 12, 3))
    assert Horizon.week(now).end == dt.datetime(2026, 12, 7)
    assert round_up(dt.datetime(2026, 12, 2, 10, 5)) == dt.datetime(2026, 12, 2, 10, 5)
    assert Horizon.day(dt.datetime(2026, 12, 2, 23, 58)).start == dt.datetime(2026, 12, 3)


# ---------------------------------------------------------------- preferences


def test_avoid_fridays_keeps_every_task_off_fridays():
    friday_only = Horizon(at(4, "09:00"), at(5, "00:00"))
    no_fridays = Rule("avoid", dt.time(0), dt.time(0), weekdays=(4,))
    p = plan([Task(1, "write", 60)], [], friday_only, rules=[no_fridays])
    assert reasons(p) == {1: Reason.PREFERENCE}  # the true reason: the preference keeps Friday free


def test_an_avoid_rule_with_a_tag_keeps_only_those_tasks_out():
    rule = Rule("avoid", dt.time(9), dt.time(12), tags=("errand",))
    tasks = [Task(1, "post office", 30, tags=("errand",), urgency=5), Task(2, "write", 30)]
    p = plan(tasks, [], week(at(0, "09:00")), rules=[rule])
    assert task_blocks(p, 1)[0].start == at(0, "12:00") and task_blocks(p, 2)[0].start == at(0, "09:00")


def test_a_free_rule_opens_wednesday_afternoon_outside_working_hours():
    mornings = Hours((((dt.time(9), dt.time(12)),),) * 5 + ((), ()))
    wednesday = Horizon(at(2, "09:00"), at(3, "00:00"))
    free = Rule("free", dt.time(13), dt.time(17), weekdays=(2,))
    p = plan([Task(1, "dentist", 4 * 60 + 60)], [], wednesday, mornings, [free])
    assert [(b.start, b.end) for b in task_blocks(p, 1)] == [
        (at(2, "09:00"), at(2, "12:00")),
        (at(2, "13:00"), at(2, "15:00")),
    ]


def test_deep_work_prefers_mornings_and_other_tasks_do_not():
    mornings = Rule("prefer", dt.time(9), dt.time(12), tags=("deep work",))
    busy = Event(at(0, "09:00"), at(0, "12:00"), "workshop", "w")
    tasks = [Task(1, "design", 120, list_name="Deep Work"), Task(2, "email", 30)]
    p = plan(tasks, [busy], week(at(0, "09:00")), rules=[mornings])
    assert task_blocks(p, 1)[0].start == at(1, "09:00")  # Tuesday morning, not Monday afternoon
    assert task_blocks(p, 2)[0].start == at(0, "12:00")


def test_a_preferred_window_gives_way_to_the_due_date():
    mornings = Rule("prefer", dt.time(9), dt.time(12), tags=("deep work",))
    busy = Event(at(0, "09:00"), at(0, "12:00"), "workshop", "w")
    t = Task(1, "design", 120, tags=("deep work",), due=at(0, "17:00"))
    p = plan([t], [busy], week(at(0, "09:00")), rules=[mornings])
    assert task_blocks(p, 1)[0].start == at(0, "12:00")


# ---------------------------------------------------------------- bad input

BAD = [
    ("the horizon ends", [], [], Horizon(at(1, "09:00"), at(0, "09:00")), Hours(), []),
    ("ends", [], [Event(at(0, "10:00"), at(0, "09:00"), "x", "e")], week(), Hours(), []),
    ("minutes must be a positive", [Task(1, "x", -30)], [], week(), Hours(), []),
    ("minutes must be a positive", [Task(1, "x", 0)], [], week(), Hours(), []),
    ("overlap", [], [], week(), Hours((((dt.time(9), dt.time(13)), (dt.time(12), dt.time(17))),) * 7), []),
    ("ends before it starts", [], [], week(), Hours(every_day(dt.time(17), dt.time(9))), []),
    ("7 days", [], [], week(), Hours(every_day(dt.time(9), dt.time(17))[:5]), []),
    ("pairs of times", [], [], week(), Hours(((dt.time(9), dt.time(17)),) * 7), []),
    ("minimum block", [], [], week(), Hours(min_block=0), []),
    ("without a zone", [Task(1, "x", 30, due=at(1, "09:00").replace(tzinfo=dt.UTC))], [], week(), Hours(), []),
    ("given twice", [Task(1, "x", 30), Task(1, "y", 30)], [], week(), Hours(), []),
    ("priority", [Task(1, "x", 30, priority="urgent")], [], week(), Hours(), []),
    ("urgency", [Task(1, "x", 30, urgency=math.nan)], [], week(), Hours(), []),
    ("tags", [Task(1, "x", 30, tags="deep work")], [], week(), Hours(), []),
    ("weekdays 0-6", [], [], week(), Hours(), [Rule("avoid", dt.time(9), dt.time(10), weekdays=(7,))]),
    ("kind avoid, free or prefer", [], [], week(), Hours(), [Rule("never", dt.time(9), dt.time(10))]),
    ("ends before it starts", [], [], week(), Hours(), [Rule("free", dt.time(14), dt.time(13))]),
]


@pytest.mark.parametrize(("words", "tasks", "events", "horizon", "hours", "rules"), BAD)
def test_bad_input_is_refused_with_one_clear_schedule_error(words, tasks, events, horizon, hours, rules):
    with pytest.raises(ScheduleError, match=words) as e:
        plan(tasks, events, horizon, hours, rules)
    assert isinstance(e.value, ValueError) and "\n" not in str(e.value)


def test_a_zero_length_event_takes_no_time():
    p = plan([Task(1, "x", 30)], [Event(at(0, "09:00"), at(0, "09:00"), "ping", "p")], week(at(0, "09:00")))
    assert [(b.kind, b.start) for b in p.blocks] == [("task", at(0, "09:00"))]


def test_an_empty_horizon_places_nothing_and_says_why():
    now = at(0, "10:00")
    p = plan([Task(1, "x", 30)], [], Horizon(now, now))
    assert reasons(p) == {1: Reason.NO_TIME_LEFT}  # from the day's start it would fit


def test_random_inputs_never_fail_inside_the_scheduler():
    rng = random.Random(7)
    for _ in range(200):
        tasks = [
            Task(
                i,
                "t",
                rng.choice([None, -5, 0, 1, 7, 30, 10_000]),
                due=rng.choice([None, at(rng.randint(-2, 8), "10:00")]),
                not_before=rng.choice([None, at(rng.randint(-2, 8), "13:00")]),
            )
            for i in range(rng.randint(0, 6))
        ]
        try:
            plan(tasks, [], week(at(0, rng.choice(["00:00", "09:05", "16:55"]))))
        except ScheduleError:
            pass
