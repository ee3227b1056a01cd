"""The capable-model scenarios about planning time (test_capable.py runs them with the others): the tool
calls a capable model makes for "plan my day", "when can I fit two hours for the report this week?" and
"when should I schedule the dentist?". Today is Tuesday 2026-12-01; plans start at 08:00."""

from __future__ import annotations

from capable_scenarios import Scenario, calls, says
from helpers import call

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
]
