"""Which tool groups a message needs, and which changes it asks for (planner/agent/request.py): over the
corpus in tests/data/request_phrases.json (each phrasing with the groups it must and must not get, written
by hand as the oracle), and over generated requests and questions in both directions: a request that
needs a group gets it, and a plain question never gets the tools that change tasks."""

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.agent.request import groups_for, wants
from planner.tools import GROUPS, TOOLS

CORPUS = json.loads((Path(__file__).parent / "data" / "request_phrases.json").read_text())["phrases"]


@pytest.mark.parametrize("case", CORPUS, ids=[c["text"][:40] for c in CORPUS])
def test_each_phrasing_gets_the_groups_it_needs_and_not_those_it_does_not(case):
    recent = [case["recent"]] if "recent" in case else []
    chosen = groups_for(case["text"], recent)
    assert chosen.groups[0] == "read" and set(chosen.groups) <= set(GROUPS)
    assert set(case.get("need", [])) <= set(chosen.groups), chosen.line()
    assert not set(case.get("not", [])) & set(chosen.groups), chosen.line()
    if "wants" in case:
        assert sorted(wants(case["text"], recent)) == sorted(case["wants"])
    assert all(chosen.why[g] for g in chosen.groups)  # each group says why, for /trace


TITLES = st.sampled_from(["buy milk", "the quarterly report", "water the plants", "the gym signup", "call Ana"])
DATES = st.sampled_from(["", " tomorrow", " on friday", " by 2026-12-15", " next monday", " at 3pm on thursday"])
ASK = st.sampled_from(["add", "Add", "remind me to", "put", "please add", "create a task to", "add a task:"])


@given(ASK, TITLES, DATES)
def test_a_request_to_add_gets_the_adding_tool_alone_and_is_read_as_asking_to_add(verb, title, date):
    text = f"{verb} {title}{date}"
    assert groups_for(text).groups[:2] == ("read", "add") and "change" not in groups_for(text).groups
    assert "add" in wants(text)
    fields = groups_for(f"{text}, it will take about 2 hours, due friday, urgent").groups
    assert fields[:2] == ("read", "add") and not {"change", "plan"} - set(groups_for(text).groups) & set(fields)
    # (the new task's fields: no change, and no time tracking; "at 3pm" may be an event, so plan may come)


CHANGE = st.sampled_from(["move", "rename", "delete", "mark", "push", "reschedule", "cancel", "finish"])


@given(CHANGE, TITLES, DATES)
def test_a_request_to_change_gets_the_change_tools_and_is_read_as_asking_to_change(verb, title, date):
    text = f"{verb} {title}{date}"
    assert "change" in groups_for(text).groups
    assert "change" in wants(text)


QUESTION = st.sampled_from(
    [
        "what's on my list{}?",
        "what is due{}?",
        "is anything overdue{}?",
        "do I have anything to do{}?",
        "which tasks are open{}?",
        "when is {} due?",
        "what have I finished{}?",
        "are there tasks{}?",
        "what's coming up{}?",
    ]
)
WHEN = st.sampled_from(["", " tomorrow", " this week", " on friday", " today", " for the quarterly report"])


@given(QUESTION, WHEN, st.sampled_from(["", "and ", "so ", "ok "]))
def test_a_plain_question_never_gets_the_tools_that_change_tasks(question, when, lead):
    text = lead + question.format(when)
    assert not {"add", "change"} & set(groups_for(text).groups)
    assert wants(text) == ()


@given(st.sampled_from(["hello!", "hi there", "thanks!", "thank you", "ok", "great, thanks", "bye"]))
def test_small_talk_gets_only_the_reading_tools(text):
    assert groups_for(text).groups == ("read",) and wants(text) == ()


def test_a_tool_the_model_reached_for_brings_its_group():
    assert "plan" in groups_for("hello", called=["plan"]).groups
    assert groups_for("hello", called=["plan"]).why["plan"] == "the model asked for a tool of it"


def test_every_tool_has_one_of_the_groups_and_the_reading_group_only_reads():
    assert {t.group for t in TOOLS.values()} <= set(GROUPS)
    assert all(t.read_only for t in TOOLS.values() if t.group == "read")
    assert {t.group for t in TOOLS.values() if not t.read_only} <= {"add", "change", "plan", "memory"}
    assert [n for n, t in TOOLS.items() if t.group == "add"] == ["add_task"]


# ---------------------------------------------------------------- a new name, read in code

NAME_WORDS = st.sampled_from(
    ["oat", "milk", "report", "Q4", "slides", "mum's", "call", "birthday", "or", "not", "done"]
)
ASK = st.sampled_from(
    ["rename {t} to {n}", "now rename it to {n}", "change the name of {t} to {n}", "Rename {t} to {n}."]
)
TAKE_BACK = st.sampled_from(["never mind, ", "delete the milk or ", "so do not "])
AFTER = st.sampled_from(
    [". no wait, leave it", "... actually never mind", "? Actually no.", ", or not", " and then delete it"]
)


@given(ASK, st.lists(NAME_WORDS, min_size=1, max_size=5).map(" ".join))
def test_a_new_name_for_the_one_task_named_is_asked_for_whatever_it_says(ask, new):
    """The new name is the user's words, whatever they are ("or", "done", "to"), fixed in code."""
    from planner.agent.request import one_tool, renamed

    said = ask.format(t="the milk task", n=new)
    assert renamed(said)[1] == new
    tool = one_tool("change", said, 3, "buy milk")
    assert tool is not None and tool.name == "update_task" and tool.fixed == (("id", 3), ("title", new))
    assert tool.fields == ("id", "title") == tool.must  # no other field is asked of the model
    assert one_tool("change", said, None, None) is None  # no one task named: never


@given(TAKE_BACK, ASK, st.lists(NAME_WORDS, min_size=1, max_size=3).map(" ".join))
def test_a_rename_taken_back_or_beside_another_change_is_never_one_tool(back, ask, new):
    from planner.agent.request import one_tool

    assert one_tool("change", back + ask.format(t="the milk task", n=new), 3, "buy milk") is None
    assert one_tool("change", ask.format(t="the milk task", n=new + " and delete the report"), 3, "buy milk") is None


@given(ASK, st.lists(NAME_WORDS, min_size=1, max_size=3).map(" ".join), AFTER)
def test_a_rename_taken_back_after_the_new_name_is_never_one_tool(ask, new, after):
    from planner.agent.request import one_tool

    assert one_tool("change", ask.format(t="the milk task", n=new).rstrip(".") + after, 3, "buy milk") is None


@pytest.mark.parametrize(
    "said",
    [
        "move the rename files task to friday",
        "change the date of the title deed task to friday",
        "push the report to monday and call it a day",
        "call it Q4 report",
    ],
)
def test_words_of_renaming_inside_another_order_are_no_rename(said):
    from planner.agent.request import renamed

    assert renamed(said) is None


# ---------------------------------------------------------------- a word of small talk before a request

OPENERS = st.sampled_from(["ok ", "okay, ", "Ok. ", "great, ", "sure, ", "yes ", "no, ", "thanks, ", "cool! ", "hi, "])
ASKING = [c for c in CORPUS if c.get("wants") and "recent" not in c and not c["text"][0].isupper()]


@given(OPENERS, st.sampled_from(ASKING))
def test_a_word_of_small_talk_before_a_request_asks_what_the_request_asks(opener, case):
    """ "ok add milk", "great, plan my day", "no, move it to monday": the opener takes nothing away (the corpus's
    own wants are the oracle)."""
    assert sorted(wants(opener + case["text"])) == sorted(case["wants"])


@pytest.mark.parametrize(
    "said", ["ok thanks", "thank you so much!", "nice, thanks", "yes please", "no thanks", "great!", "ok cool"]
)
def test_small_talk_alone_asks_for_nothing(said):
    assert wants(said) == ()


def test_telling_something_done_after_a_word_of_small_talk_asks_for_a_change():
    assert wants("okay I called dad") == ("change",)


@given(OPENERS, st.sampled_from(ASKING))
def test_a_word_of_small_talk_before_a_request_keeps_the_groups_it_needs(opener, case):
    chosen = groups_for(opener + case["text"])
    assert set(case.get("need", [])) <= set(chosen.groups), chosen.line()


# ---------------------------------------------------------------- add_task beside a change: only for a new task

CHANGES = st.sampled_from(
    ["push the car service to tomorrow", "move the report to friday", "mark the call as done", "delete the gym task",
     "rename the milk task to buy oat milk", "I bought the milk", "set the report to high priority"]
)  # fmt: skip
NEW_TASKS = st.sampled_from(["dentist friday 3pm", "water the plants", "call the bank on monday", "add eggs"])
JOINS = st.sampled_from([", then ", " and ", ". Then ", "; "])


@given(CHANGES)
def test_a_change_alone_does_not_get_the_tool_that_adds(said):
    """A small model reached for add_task with the very task it was asked to move (move-relative, real 1.5B)."""
    assert "add" not in groups_for(said).groups and "change" in groups_for(said).groups


@given(NEW_TASKS, JOINS, CHANGES.filter(lambda c: not c.startswith("I ")))
def test_a_change_beside_a_new_task_gets_both(new, join, said):
    chosen = groups_for(new + join + said)
    assert {"add", "change"} <= set(chosen.groups), chosen.line()
