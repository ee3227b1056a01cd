"""The capable-model scenarios of test_capable.py: requests as people word them, each with
exactly the calls and replies a capable (4-14B) model gives, and the state it must leave.

Data, not tests; this file has the requests about wording, memory, lists and changes, and
capable_dates.py those about dates, times and repeats. `Scenario` holds the turns (the user's words, then the scripted
model replies), the seeded tasks and memories, and what must hold afterwards.
Today is Tuesday 2026-12-01.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from helpers import call


@dataclass
class Scenario:
    id: str
    turns: list[tuple[str, list[dict[str, Any]]]]  # (what the user says, the model's replies in order)
    expect: dict[str, Any] = field(default_factory=dict)  # {"title": {column: value}} after the last turn
    tasks: list[dict[str, Any]] = field(default_factory=list)  # add_task arguments, ids 1.. in order
    memories: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)  # titles that must no longer exist
    confirm: bool | None = None  # the user's y/N answer; None: nobody can answer (no terminal)
    reply_has: str | None = None  # the final reply must contain this
    asked: int | None = None  # how many y/N questions the user saw
    check: Any = None  # a function of the store that asserts what tasks' columns cannot show (tracked time)


def says(text: str) -> dict[str, Any]:
    return {"content": text}


def calls(*c: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": list(c)}


DENTIST = {"title": "dentist", "due_date": "2026-12-04"}
ERRANDS = [{"title": t} for t in ("post the parcel", "pick up dry cleaning", "return library books", "buy stamps")]
LONG_LIST = [{"title": f"errand {i}", "due_date": "2026-12-02"} for i in range(24)] + [DENTIST]

# Dates, times and repeats are in capable_dates.py; test_capable.py runs both lists.
SCENARIOS = [
    Scenario(
        "a question that is a request",
        [
            (
                "how about moving the dentist to the 10th?",
                [
                    calls(call("update_task", id=1, due_date="2026-12-10")),
                    says("Done: the dentist is on the 10th."),
                ],
            )
        ],
        {"dentist": {"due_date": "2026-12-10"}},
        tasks=[DENTIST],
    ),
    Scenario(
        "a could-you request",
        [
            (
                "could you make the taxes one urgent?",
                [
                    calls(call("update_task", id=1, priority="high")),
                    says("Taxes are now high priority."),
                ],
            )
        ],
        {"file taxes": {"priority": "high"}},
        tasks=[{"title": "file taxes"}],
    ),
    Scenario(
        "a filter on a long list",
        [
            (
                "mark the dentist task done",
                [
                    calls(call("list_tasks", text="dentist")),
                    calls(call("complete_task", id=25)),
                    says("Marked the dentist as done."),
                ],
            )
        ],
        {"dentist": {"status": "done"}},
        tasks=LONG_LIST,
    ),
    Scenario(
        "a list after a change",
        [
            (
                "mark the dentist done, then show me what's left",
                [
                    calls(call("list_tasks")),
                    calls(call("complete_task", id=1)),
                    calls(call("list_tasks")),
                    says("Done. Left: buy stamps."),
                ],
            )
        ],
        {"dentist": {"status": "done"}, "buy stamps": {"status": "open"}},
        tasks=[DENTIST, {"title": "buy stamps"}],
        reply_has="Left: buy stamps",
    ),
    Scenario(
        "JSON asked for",
        [
            (
                "give me my open tasks as JSON",
                [
                    calls(call("list_tasks")),
                    says('[{"id": 1, "title": "dentist", "due_date": "2026-12-04"}]'),
                ],
            )
        ],
        tasks=[DENTIST],
        reply_has='[{"id": 1, "title": "dentist"',
    ),
    Scenario(
        "notes with symbols",
        [
            (
                "add buy paint - note: colour #ff8800 & 2x 5L tins (50% off!)",
                [
                    calls(call("add_task", title="buy paint", notes="colour #ff8800 & 2x 5L tins (50% off!)")),
                    says("Added buy paint with your note."),
                ],
            )
        ],
        {"buy paint": {"notes": "colour #ff8800 & 2x 5L tins (50% off!)"}},
    ),
    Scenario(
        "a memory request that says add",
        [
            (
                "add to what you know about me: I'm allergic to peanuts",
                [
                    calls(call("remember", fact="The user is allergic to peanuts.")),
                    says("Noted: you're allergic to peanuts."),
                ],
            )
        ],
        memories=["The user is allergic to peanuts."],
    ),
    Scenario(
        "a memory request that says remind",
        [
            (
                "remind yourself that my sister is called Ana",
                [
                    calls(call("remember", fact="The user's sister is called Ana.")),
                    says("I'll remember Ana."),
                ],
            )
        ],
        memories=["The user's sister is called Ana."],
    ),
    Scenario(
        "a habit with 'add' in it is a memory",
        [
            (
                "remember that I always add oat milk to my coffee",
                [
                    calls(call("remember", fact="The user always adds oat milk to their coffee.")),
                    says("Got it."),
                ],
            )
        ],
        memories=["The user always adds oat milk to their coffee."],
    ),
    Scenario(
        "importance in other words",
        [
            (
                "add file taxes, it's pretty pressing",
                [
                    calls(call("add_task", title="file taxes", priority="high")),
                    says("Added file taxes as high priority."),
                ],
            )
        ],
        {"file taxes": {"priority": "high"}},
    ),
    Scenario(
        "a label the user implied",
        [
            (
                "add buy a drill for the house project",
                [
                    calls(call("add_task", title="buy a drill", tags=["house"])),
                    says("Added buy a drill, tagged house."),
                ],
            )
        ],
        {"buy a drill": {"tags": ["house"]}},
    ),
    Scenario(
        "overdue in other words",
        [
            (
                "anything I've let slip?",
                [
                    calls(call("list_tasks", overdue=True)),
                    says("One thing: the parcel, due 25 November."),
                ],
            )
        ],
        tasks=[{"title": "post the parcel", "due_date": "2026-11-25"}, DENTIST],
        reply_has="the parcel",
    ),
    Scenario(
        "a list before a date",
        [
            (
                "what have I got before the weekend",
                [
                    calls(call("list_tasks", due_before="2026-12-04")),
                    says("Just the dentist on Friday."),
                ],
            )
        ],
        tasks=[DENTIST, {"title": "plan holiday", "due_date": "2026-12-20"}],
    ),
    Scenario(
        "a deletion the user asked for",
        [("delete the gym task", [calls(call("delete_task", id=1)), says("Deleted the gym task.")])],
        tasks=[{"title": "gym"}],
        gone=["gym"],
        confirm=True,
        asked=1,
    ),
    Scenario(
        "a yes to a deletion the model asked about",
        [
            ("remove the old gym task", [says("Task 1 'gym'. Shall I delete it?")]),
            ("yes", [calls(call("delete_task", id=1)), says("Deleted.")]),
        ],
        tasks=[{"title": "gym"}],
        gone=["gym"],
        confirm=True,
        asked=1,
    ),
    Scenario(
        "four errands done at once, approved once",
        [
            (
                "I did all four errands",
                [
                    calls(*(call("complete_task", id=i) for i in range(1, 5))),
                    says("All four marked done."),
                ],
            )
        ],
        {t["title"]: {"status": "done"} for t in ERRANDS},
        tasks=ERRANDS,
        confirm=True,
        asked=1,
    ),
    Scenario(
        "a rename",
        [("rename milk to oat milk", [calls(call("update_task", id=1, title="oat milk")), says("Renamed.")])],
        {"oat milk": {"status": "open"}},
        tasks=[{"title": "milk"}],
        gone=["milk"],
    ),
    Scenario(
        "several adds in one reply",
        [
            (
                "add eggs, bread and butter",
                [
                    calls(
                        call("add_task", title="eggs"),
                        call("add_task", title="bread"),
                        call("add_task", title="butter"),
                    ),
                    says("Added eggs, bread and butter."),
                ],
            )
        ],
        {"eggs": {"status": "open"}, "bread": {"status": "open"}, "butter": {"status": "open"}},
    ),
    Scenario(
        "done with one, add the next",
        [
            (
                "done with laundry; add ironing for tomorrow",
                [
                    calls(call("complete_task", id=1), call("add_task", title="ironing", due_date="2026-12-02")),
                    says("Laundry done, ironing added for tomorrow."),
                ],
            )
        ],
        {"laundry": {"status": "done"}, "ironing": {"due_date": "2026-12-02"}},
        tasks=[{"title": "laundry"}],
    ),
    Scenario(
        "a question answered from the agenda",
        [("what does my week look like?", [calls(call("agenda", days=7)), says("Just the dentist on Friday.")])],
        tasks=[DENTIST],
    ),
    Scenario(
        "a question answered from memory",
        [("what's my sister called?", [calls(call("recall", query="sister name")), says("Your sister is Ana.")])],
        memories=["The user's sister is called Ana."],
    ),
    Scenario(
        "a count answered by a query",
        [
            (
                "how many tasks do I have open?",
                [
                    calls(call("query_planner", sql="SELECT COUNT(*) FROM tasks WHERE status = 'open'")),
                    says("You have 2 open tasks."),
                ],
            )
        ],
        tasks=[DENTIST, {"title": "buy stamps"}],
        reply_has="2 open",
    ),
    Scenario(
        "a conditional request",
        [
            (
                "did I mark the dentist done? if not, do it",
                [
                    calls(call("list_tasks", text="dentist", status="all")),
                    calls(call("complete_task", id=1)),
                    says("It was still open; it's done now."),
                ],
            )
        ],
        {"dentist": {"status": "done"}},
        tasks=[DENTIST],
    ),
    Scenario(
        "a follow-up that narrows a list",
        [
            ("show my work tasks", [calls(call("list_tasks", tag="work")), says("Report and slides.")]),
            (
                "and which of them are urgent",
                [
                    calls(call("list_tasks", tag="work", priority="high")),
                    says("Only the report."),
                ],
            ),
        ],
        tasks=[{"title": "report", "tags": ["work"], "priority": "high"}, {"title": "slides", "tags": ["work"]}],
    ),
]
