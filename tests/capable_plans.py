"""The capable-model scenarios about planning time (test_capable.py runs them with the others): the tool
calls a capable model makes for "plan my day", "when can I fit two hours for the report this week?",
"when should I schedule the dentist?", and tracked time: "I'm starting the report", "I'm done, that took
three hours", "replan my afternoon". Today is Tuesday 2026-12-01; plans start at 08:00."""

from __future__ import annotations

import datetime as dt

from capable_scenarios import Scenario, calls, says
from helpers import call

from planner.storage import worklog


def running_on(task_id: int):
    def check(store) -> None:
        on = worklog.running(store.conn())
        assert on is not None and on.task_id == task_id

    return check


def tracked(task_id: int, minutes: int):
    def check(store) -> None:
        assert worklog.running(store.conn()) is None
        assert worklog.spent(store.conn(), [task_id]) == {task_id: minutes}

    return check


def afternoon_only(store) -> None:
    from planner.storage import planstate

    kept = planstate.recall(store.conn(), dt.datetime(2026, 12, 1, 12), dt.datetime(2026, 12, 1, 17))
    assert kept and all(r.start is None or r.start.hour >= 12 for r in kept)


REPORT = {"title": "write the report", "estimate": "2 hours", "due_date": "2026-12-04"}

SCENARIOS = [
    Scenario(
        "plan my day",
        [("plan my day", [calls(call("plan_day")), says("Your day: the report from 9 to 11, then the bank.")])],
        tasks=[REPORT, {"title": "call the bank", "estimate": "15 minutes"}],
        reply_has="the report",
    ),
    Scenario(
        "two hours this week",
        [
            (
                "when can I fit two hours for the report this week?",
                [calls(call("find_time", minutes=120, before="this week")), says("Today from 9 to 11 is free.")],
            )
        ],
        tasks=[REPORT],
    ),
    Scenario(
        "the dentist from a remembered free afternoon",
        [
            (
                "when should I schedule the dentist?",
                [
                    calls(call("find_time", minutes=60, prefer="wednesday afternoons")),
                    says("Wednesday afternoon is free: how about 12:00 tomorrow?"),
                ],
            )
        ],
        memories=["The user has Wednesday afternoons free for appointments."],
    ),
    Scenario(
        "move the report to the afternoon",
        [
            (
                "move the report to the afternoon",
                [
                    calls(call("list_tasks", text="report")),
                    calls(call("schedule_task", id=1, when="the afternoon")),
                    says("The report is now planned for 12:00 today."),
                ],
            )
        ],
        {"write the report": {"scheduled_at": "2026-12-01T12:00"}},
        tasks=[REPORT],
    ),
    Scenario(
        "a meeting said in words",
        [
            (
                "I have a meeting 2-3pm tomorrow",
                [
                    calls(call("add_event", title="meeting", when="tomorrow 2-3pm")),
                    says("Noted: a meeting tomorrow 2-3pm."),
                ],
            )
        ],
    ),
    Scenario(
        "I'm starting the report",
        [
            (
                "I'm starting the report",
                [
                    calls(call("list_tasks", text="report")),
                    calls(call("start_task", id=1)),
                    says("The clock is running on the report."),
                ],
            )
        ],
        tasks=[REPORT],
        check=running_on(1),
    ),
    Scenario(
        "I'm done, that took three hours",
        [
            (
                "I'm done with the report, that took three hours",
                [
                    calls(call("list_tasks", text="report")),
                    calls(call("stop_task", id=1, took="three hours"), call("complete_task", id=1)),
                    says("Marked the report done: three hours, against the two you planned."),
                ],
            )
        ],
        {"write the report": {"status": "done"}},
        tasks=[REPORT],
        check=tracked(1, 180),
    ),
    Scenario(
        "replan my afternoon",
        [
            (
                "replan my afternoon",
                [
                    calls(call("plan_day", date="this afternoon")),
                    says("This afternoon: the report from 12:00 to 14:00, then the bank."),
                ],
            )
        ],
        tasks=[REPORT, {"title": "call the bank", "estimate": "15 minutes"}],
        reply_has="This afternoon",
        check=afternoon_only,
    ),
]
