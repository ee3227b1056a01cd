"""A reply never claims what the tool results do not show: the claim check (agent/claims.py) over
paraphrases, replies that mention earlier turns, the one more ask in `small`, and the line the user
sees in every profile when a claimed change did not happen."""

import io

import pytest
from conftest import call, tasks
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from planner.agent.claims import CLAIM_VERBS, claims, unbacked, what_changed
from planner.agent.turn import ToolCall
from planner.memory.history import session_messages
from planner.prompts import CLAIM_PROMPT
from planner.tools import TOOLS
from planner.ui.repl import Printer
from planner.ui.tui import TurnView

FALSE_CLAIMS = [
    # what 0.5-1.5B models said in turns that called no tool, and paraphrases of it
    ("I added a task to your list: 1. what's on my list this week?", "added"),
    ("I added a fact about Ana's location: Ana lives in Lisbon.", "added"),
    ("I've added 'buy milk' for tomorrow.", "added"),
    ("I’ve added it.", "added"),
    ("Added buy milk.", "added"),
    ("Okay, added!", "added"),
    ("**Added** buy milk for tomorrow.", "added"),
    ("Task added.", "added"),
    ("The task has been added to your list.", "added"),
    ("Sure, I've just created a reminder for Friday.", "created"),
    ("Got it, I'll remember that.", "remember"),
    ("I will keep that in mind.", "remember"),
    ("I have saved this fact: your sister lives in Lisbon.", "saved"),
    ("Noted: your sister Ana lives in Lisbon.", "noted"),
    ("I marked the dentist as done.", "marked"),
    ("Your task is now completed.", "completed"),
    ("Moved the dentist to Friday.", "moved"),
    ("Done! The dentist has been moved to Friday.", "moved"),
    ("I went ahead and rescheduled it.", "rescheduled"),
    ("I renamed it to 'call mom'.", "renamed"),
    ("Deleted the gym task.", "deleted"),
    ("No problem, I deleted it.", "deleted"),
    ("I couldn't find the old one, but I added a new one.", "added"),
    ("I cancelled the gym task.", "cancelled"),
    ("I've booked 3pm for the report.", "booked"),
    ("Pinned the report at 3pm.", "pinned"),
    ("I planed the day for tomorrow.", "planed"),  # the real 1.5B's spelling, no plan_day called
    ("I've planned your day.", "planned"),
]

NOT_CLAIMS = [
    "I haven't added anything yet.",
    "Nothing was changed.",
    "I added nothing.",
    "I have not moved it.",
    "I couldn't add the task: the date is unclear.",
    "No task was deleted.",
    "Should I add it?",
    "Do you want me to delete the gym task?",
    "I can move it to Friday if you like.",
    "If you want, I can add it.",
    "I will add it once you tell me the date.",
    "You completed 3 tasks last month.",
    "Here are your completed tasks: file taxes.",
    "The dentist is scheduled for Friday.",
    "I found 2 tasks.",
    "Your list: 'Deleted scenes review' and \"call mom\".",
    "Hi! How can I help?",
]

EARLIER = [
    # a later turn speaking correctly of what an earlier turn did: no call this turn, and no claim about it
    "You have 2 tasks: buy milk (added earlier) and call the dentist.",
    "buy milk, which I added earlier, is due tomorrow.",
    "I already added that one.",
    "As you asked me to, I moved the dentist to Friday yesterday.",
    "I remembered that before: your sister Ana lives in Lisbon.",
]


def ran(*names: str, ok: bool = True) -> list[ToolCall]:
    return [ToolCall(name=n, sent={}, ok=ok, ran=True, result={} if ok else {"error": "no"}) for n in names]


@pytest.mark.parametrize("reply, verb", FALSE_CLAIMS)
def test_a_claimed_change_in_many_words_is_found_and_unbacked_without_its_call(reply, verb):
    assert [c.verb for c in unbacked(reply, [])] == [verb]
    assert unbacked(reply, ran("list_tasks", "recall", "get_today")) != []  # reads back no change
    assert unbacked(reply, ran("add_task", "remember", "update_task", "complete_task", "delete_task", ok=False))


@pytest.mark.parametrize("reply", NOT_CLAIMS + EARLIER)
def test_negations_questions_offers_states_and_earlier_turns_claim_nothing(reply):
    assert claims(reply) == []


@pytest.mark.parametrize(
    "reply, calls",
    [
        ("Added buy milk.", ["add_task"]),
        ("I've added the task and saved your note.", ["add_task"]),
        ("Noted: you're allergic to peanuts.", ["remember"]),
        ("I'll remember Ana.", ["remember"]),
        ("Marked the dentist as done.", ["list_tasks", "complete_task"]),
        ("Taxes are marked urgent now; I changed it.", ["update_task"]),
        ("Removed the report's date.", ["update_task"]),
        ("Deleted.", ["delete_task"]),
        ("I forgot that.", ["forget"]),
        ("Undone.", ["undo_last_change"]),
        ("Noted: a meeting tomorrow 2-3pm.", ["add_event"]),
        ("I've added the meeting to your calendar.", ["add_event"]),
        ("Noted, mornings are for deep work.", ["add_preference"]),
        ("I cancelled the gym task.", ["cancel_task"]),
        ("Reopened the report.", ["reopen_task"]),
        ("I pinned the report at 3pm.", ["schedule_task"]),
        ("I planned your day: the report from 9:00.", ["plan_day"]),
        ("Renamed the list Home to House.", ["rename_list"]),
    ],
)
def test_a_claim_its_calls_back_is_not_flagged(reply, calls):
    assert claims(reply) and unbacked(reply, ran(*calls)) == []


def test_every_claim_verb_names_real_tools_and_says_what_is_true_without_them():
    for verb, (tools, none) in CLAIM_VERBS.items():
        assert tools <= set(TOOLS) | {"undo_last_change"}, verb
        assert none.startswith(("nothing", "no task")), verb


@given(st.text(max_size=300))
def test_any_text_is_read_without_error_and_fully_backed_when_every_tool_succeeded(text):
    everything = ran(*TOOLS, "undo_last_change")
    assert unbacked(text, everything) == []
    assert unbacked(text, []) == claims(text)


@given(st.sampled_from([r for r, _ in FALSE_CLAIMS]), st.sampled_from(["I haven't", "I did not", "I could not"]))
def test_a_claim_said_as_not_done_is_no_claim(reply, negation):
    verb = claims(reply)[0].verb
    assert claims(f"{negation} {verb} it.") == [] or verb in ("remember",)


def test_the_line_for_the_user_says_what_did_change():
    assert what_changed([], unbacked("I added it.", [])) == "Nothing was changed."
    read = ran("list_tasks")
    assert what_changed(read, unbacked("Saved.", read)) == "Nothing was changed."
    add = [ToolCall(name="add_task", sent={}, ok=True, ran=True, result={"added": {"id": 1, "title": "milk"}})]
    line = what_changed(add, unbacked("Added milk and deleted the gym task.", add))
    assert line == 'Nothing was deleted. What did change: Added "milk" (id 1).'


def test_the_line_says_in_words_what_an_event_a_pin_or_a_cancel_changed():
    def one(name, result):
        return [ToolCall(name=name, sent={}, ok=True, ran=True, result=result)]

    event = one("add_event", {"event": {"title": "meeting", "start": "2026-12-02 14:00", "end": "2026-12-02 15:00"}})
    assert what_changed(event, unbacked("I deleted the gym task.", event)) == (
        'Nothing was deleted. What did change: Added "meeting" to the calendar: 2026-12-02 14:00-15:00.'
    )
    pin = one(
        "schedule_task",
        {"pinned": {"id": 3, "title": "report", "start": "2026-12-02 15:00", "end": "2026-12-02 16:00"}},
    )
    assert what_changed(pin, unbacked("I cancelled it.", pin)).endswith('Pinned "report" at 2026-12-02 15:00-16:00.')
    cancel = one("cancel_task", {"cancelled": {"id": 4, "title": "gym"}})
    assert what_changed(cancel, unbacked("Deleted it.", cancel)).endswith('Cancelled "gym" (id 4).')
    for calls in (event, pin, cancel):
        assert "{" not in what_changed(calls, unbacked("I forgot that.", calls))


# ---------------------------------------------------------------- in the loop


def test_in_small_a_false_claim_is_asked_again_once_and_the_call_it_then_makes_runs(model, small, make_agent, store):
    model.script(
        "main",
        {"content": "I added buy milk to your list."},
        {"tool_calls": [call("add_task", title="buy milk")]},
        {"content": "Added buy milk."},
    )
    r = make_agent(reflect=False).run_turn("buy milk was bought")  # asks for no add: the claim check asks again
    assert [t["title"] for t in tasks(store)] == ["buy milk"]
    assert r.reply == "Added buy milk." and r.reasked and r.correction is None
    note = model.chats("main")[1]["messages"][-1]
    assert note["role"] == "user" and note["content"] == CLAIM_PROMPT.format(
        claim="I added buy milk to your list.", none="nothing was added"
    )
    # the note is said once, for this turn only: the stored history has the request, the call and the reply
    stored = [m["role"] for m in session_messages(store, "s1")]
    assert stored == ["user", "assistant", "tool", "assistant"]


def test_in_small_a_claim_made_again_is_shown_with_what_did_change(model, small, make_agent, store):
    model.script("main", {"content": "I saved that."}, {"content": "I saved that, yes."}, {"content": "Hi."})
    agent = make_agent(reflect=False)
    r = agent.run_turn("my sister Ana lives in Lisbon")
    assert r.reply == "I saved that, yes." and r.correction == "Nothing was changed." and r.reasked
    assert len(model.chats("main")) == 2  # asked once more, not again and again
    # the next turn's model reads what the user read: the claim, and that nothing changed
    agent.run_turn("hello")
    assert model.chats("main")[-1]["messages"][-2] == {
        "role": "assistant",
        "content": "I saved that, yes.\n\n(Nothing was changed.)",
    }


def test_in_small_a_parroted_note_becomes_what_ran(model, small, make_agent, store):
    # "are you sure?" asks for no change, so the claim check is what asks once more
    parrot = CLAIM_PROMPT.format(claim="Added it.", none="nothing was added")
    model.script("main", {"content": "Added it."}, {"content": parrot})
    r = make_agent(reflect=False).run_turn("hi, are you sure")
    assert r.reasked and r.reply == "Sorry, I have no answer to that." and r.correction is None


def test_a_request_for_a_change_asks_once_and_a_false_claim_is_never_shown_as_true(model, small, make_agent, store):
    # The nudge (the request asked to add, nothing was added) is the one more ask; the claim check asks no more.
    # (The small profile's last ask for add_task's arguments follows; here it comes back cut short.)
    model.script(
        "main",
        {"content": "Added buy milk to your list."},
        {"content": "Sorry, I could not do that."},
        {"content": '{"title": "bu', "done_reason": "length"},
    )
    r = make_agent(reflect=False).run_turn("add buy milk")
    assert r.nudged and not r.reasked and len(model.chats("main")) == 3 and tasks(store) == []
    assert r.forced == "add_task" and r.correction == "Nothing was added."


def test_in_standard_a_false_claim_is_not_asked_again_but_never_shown_as_true(model, make_agent, store):
    model.script("main", {"content": "Added buy milk to your list."})
    r = make_agent(reflect=False).run_turn("buy milk was bought, I think")
    assert r.reply == "Added buy milk to your list." and r.correction == "Nothing was changed."
    assert not r.reasked and len(model.chats("main")) == 1 and tasks(store) == []


def test_a_true_claim_costs_no_extra_call(model, small, make_agent, store):
    model.script("main", {"tool_calls": [call("add_task", title="milk")]}, {"content": "Added milk."})
    r = make_agent(reflect=False).run_turn("add milk")
    assert r.correction is None and not r.reasked and len(model.chats("main")) == 2


def test_a_claim_about_an_earlier_turn_is_trusted(model, small, make_agent, store):
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="milk")]},
        {"content": "Added milk."},
        {"tool_calls": [call("list_tasks")]},
        {"content": "You have milk, which I added earlier."},
    )
    agent = make_agent(reflect=False)
    agent.run_turn("add milk")
    r = agent.run_turn("what's on my list?")
    assert r.correction is None and not r.reasked


def test_a_failed_call_backs_no_claim(model, small, make_agent, store):
    model.script(
        "main",
        {"tool_calls": [call("complete_task", id=9)]},
        {"content": "Marked it as done."},
        {"content": "Marked it as done."},
    )
    r = make_agent(reflect=False).run_turn("I finished the report")
    assert r.correction == "Nothing was changed."


# ---------------------------------------------------------------- on screen


def test_the_full_terminal_shows_the_line_dimmed_under_the_reply():
    view = TurnView(quiet=False, verbose=False)
    view.reply, view.correction = "I added milk.", "Nothing was changed."
    parts = list(view.render(final=True).renderables)
    assert parts[-1].plain == "  (Nothing was changed.)" and parts[-1].style == "dim"
    console = Console(record=True, width=80, color_system=None)
    console.print(view.render(final=True))
    assert [line.rstrip() for line in console.export_text().splitlines()[-2:]] == [
        "I added milk.",
        "  (Nothing was changed.)",
    ]


def test_the_plain_lines_show_it_after_the_reply():
    out = io.StringIO()
    printer = Printer(out, stream=False)
    printer.start()
    printer.finish("I added milk.", "Nothing was changed.")
    assert out.getvalue() == "bot> I added milk.\n     (Nothing was changed.)\n"


@pytest.mark.parametrize(
    ("reply", "flagged"),
    [
        ('I added "Call the bank tomorrow" with a due date of Wednesday, and set its priority to "high".', True),
        ("Added the report as a high-priority task.", True),
        ("Added the report with high priority.", False),  # the result shows it
        ("I did not set a high priority.", False),
        ("Should it have high priority?", False),
        ("I added the report. I can make it high priority if you like.", False),  # an offer
        ("Next up is the report, your high priority task.", False),  # no change claimed
        ("I've set the report's priority: high.", True),
    ],
)
def test_a_priority_no_result_shows_is_a_claim_not_backed(reply, flagged):
    from planner.agent.claims import unbacked
    from planner.agent.turn import ToolCall

    shows_high = "with high priority" in reply
    result = {"added": {"id": 1, "title": "report", "priority": "high" if shows_high else None}}
    c = ToolCall(name="add_task", args={}, sent={}, result=result, ok=True)
    assert bool(unbacked(reply, [c])) is flagged


def test_a_priority_the_guards_left_out_is_not_claimed_to_the_user(model, small, make_agent, store):
    """session-week on the real 1.5B: the guards added the task without the priority nobody asked for, and the
    reply said "and set its priority to high"; the line under it says what is true."""
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="Call the bank", due_date="tomorrow", priority="high")]},
        {"content": 'I added "Call the bank" with a due date of tomorrow, and set its priority to "high".'},
    )
    r = make_agent(reflect=False).run_turn("add call the bank tomorrow")
    assert r.correction.startswith("No result shows a high priority. What did change: Added") and not r.reasked
    assert store.conn().execute("SELECT priority FROM tasks").fetchone()[0] is None
