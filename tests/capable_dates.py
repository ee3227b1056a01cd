"""The capable-model scenarios about dates, times and repeats: moves, postponements, dates given a
turn apart, repeats in plain words. The data types and the other requests are in capable_scenarios.py.
Today is Tuesday 2026-12-01.
"""

from __future__ import annotations

from capable_scenarios import DENTIST, Scenario, calls, says
from helpers import call

SCENARIOS = [
    Scenario(
        "a move relative to a stated date",
        [
            (
                "push the dentist on friday back a week",
                [
                    calls(call("list_tasks", text="dentist")),
                    calls(call("update_task", id=1, due_date="2026-12-11")),
                    says("Moved the dentist to Friday 11 December."),
                ],
            )
        ],
        {"dentist": {"due_date": "2026-12-11"}},
        tasks=[DENTIST],
    ),
    Scenario(
        "a date worked out from another",
        [
            (
                "add pay the deposit 2 days before the 20th",
                [
                    calls(call("add_task", title="pay the deposit", due_date="2026-12-18")),
                    says("Added: pay the deposit, due Friday 18 December."),
                ],
            )
        ],
        {"pay the deposit": {"due_date": "2026-12-18"}},
    ),
    Scenario(
        "a date given a turn earlier",
        [
            ("I have a dentist appointment on friday", [says("Shall I add it to your list for Friday?")]),
            (
                "yes please add it",
                [
                    calls(call("add_task", title="dentist appointment", due_date="2026-12-04")),
                    says("Added the dentist appointment for Friday."),
                ],
            ),
        ],
        {"dentist appointment": {"due_date": "2026-12-04"}},
    ),
    Scenario(
        "a time given a turn later",
        [
            (
                "add call the bank on thursday",
                [
                    calls(call("add_task", title="call the bank", due_date="2026-12-03")),
                    says("Added for Thursday."),
                ],
            ),
            ("make it 3pm", [calls(call("update_task", id=1, due_time="15:00")), says("It's at 3pm now.")]),
        ],
        {"call the bank": {"due_date": "2026-12-03", "due_time": "15:00"}},
    ),
    Scenario(
        "a repeat without 'every'",
        [
            (
                "gym on mondays and thursdays, add it",
                [
                    calls(call("add_task", title="gym", repeat="every monday and thursday")),
                    says("Added gym, twice a week."),
                ],
            )
        ],
        {"gym": {"recurrence": "FREQ=WEEKLY;BYDAY=MO,TH", "due_date": "2026-12-03"}},
    ),
    Scenario(
        "a monthly repeat in plain words",
        [
            (
                "rent is due on the 1st of each month, put it on my list",
                [
                    calls(call("add_task", title="pay rent", due_date="2027-01-01", repeat="monthly on the 1st")),
                    says("Added rent, monthly from 1 January."),
                ],
            )
        ],
        {"pay rent": {"due_date": "2027-01-01", "recurrence": "FREQ=MONTHLY;BYMONTHDAY=1"}},
    ),
    Scenario(
        "a time in words",
        [
            (
                "add standup tomorrow at half past nine",
                [
                    calls(call("add_task", title="standup", due_date="2026-12-02", due_time="09:30")),
                    says("Added standup tomorrow at 9:30."),
                ],
            )
        ],
        {"standup": {"due_date": "2026-12-02", "due_time": "09:30"}},
    ),
    Scenario(
        "a move to a weekday",
        [
            (
                "move the report to next monday",
                [
                    calls(call("update_task", id=1, due_date="2026-12-07")),
                    says("The report is due Monday the 7th."),
                ],
            )
        ],
        {"report": {"due_date": "2026-12-07"}},
        tasks=[{"title": "report", "due_date": "2026-12-04"}],
    ),
    Scenario(
        "a postponement by days",
        [
            (
                "postpone the report by two days",
                [
                    calls(call("update_task", id=1, due_date="2026-12-06")),
                    says("The report is now due Sunday."),
                ],
            )
        ],
        {"report": {"due_date": "2026-12-06"}},
        tasks=[{"title": "report", "due_date": "2026-12-04"}],
    ),
    Scenario(
        "a deadline dropped",
        [
            (
                "the report doesn't have a deadline anymore",
                [
                    calls(call("update_task", id=1, due_date="")),
                    says("Removed the report's date."),
                ],
            )
        ],
        {"report": {"due_date": None}},
        tasks=[{"title": "report", "due_date": "2026-12-04"}],
    ),
    Scenario(
        "a date phrase passed through",
        [
            (
                "add renew passport friday 3pm",
                [
                    calls(call("add_task", title="renew passport", due_date="friday 3pm")),
                    says("Added for Friday at 3pm."),
                ],
            )
        ],
        {"renew passport": {"due_date": "2026-12-04", "due_time": "15:00"}},
    ),
]
