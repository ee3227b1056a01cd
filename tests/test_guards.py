"""Guard profiles and the turn: who picks the profile, what each may change (never
silently), the retry that sees its own results, and reflection only on real change."""

import json

import pytest
from helpers import call, tasks
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.agent import intent
from planner.agent.guards import Guards, parameter_billions, pick_profile
from planner.agent.intent import Intent
from planner.agent.turn import ToolCall, Turn
from planner.settings import Config, ConfigError
from planner.tools import TOOLS, dispatch
from planner.ui.cli import load_config

# ---------------------------------------------------------------- picking a profile


def test_model_sizes_are_read_as_ollama_reports_them():
    assert parameter_billions("9.0B") == 9.0 and parameter_billions("494.03M") == pytest.approx(0.49403)
    assert parameter_billions("1.5B") == 1.5 and parameter_billions("") is None and parameter_billions("big") is None
    assert pick_profile("auto", "494.03M") == "small" and pick_profile("auto", "3.8B") == "small"
    assert pick_profile("auto", "4.0B") == "standard" and pick_profile("auto", "14.8B") == "standard"
    assert pick_profile("auto", None) == "standard"  # unknown size: nothing changes the model's calls
    assert pick_profile("off", "0.5B") == "off" and pick_profile("small", "70B") == "small"


def test_auto_asks_ollama_for_the_size_and_model_switches_pick_again(model, make_agent):
    from planner.ui.commands import Stats, run_command

    model.sizes["main"] = "9.0B"
    model.sizes["tiny"] = "494.03M"
    model.models["tiny"] = ["completion", "tools"]
    agent = make_agent()
    assert agent.guards.profile == "standard"
    assert run_command(agent, "/model main tiny", Stats()) == "main model is now tiny (guards: small)"
    assert agent.config.model == "tiny" and agent.guards.profile == "small"


def test_building_an_agent_asks_ollama_nothing(model, make_agent):
    make_agent()
    assert model.count("/api/show") == 0  # the profile is picked at the first turn


def test_the_profile_comes_from_the_flag_or_the_environment_and_bad_values_are_one_line():
    assert Config().guards == "auto"
    assert load_config(["--guards", "small"], env={}).guards == "small"
    assert load_config([], env={"PLANNER_GUARDS": "Off"}).guards == "off"
    with pytest.raises(ConfigError, match="PLANNER_GUARDS must be one of auto, small, standard, off"):
        Config.from_env({"PLANNER_GUARDS": "paranoid"})
    with pytest.raises(ValueError):
        Guards("auto")  # auto is resolved before guards are built


# ---------------------------------------------------------------- never silent

FIELDS = st.sampled_from(["title", "due_date", "due_time", "priority", "tags", "notes", "repeat", "text", "tag", "id"])
VALUES = st.one_of(
    st.text(max_size=12), st.sampled_from(["2026-12-11", "friday", "every monday", "high", ""]), st.integers(0, 5)
)
WORDS = st.sampled_from(
    [
        "add",
        "the",
        "dentist",
        "friday",
        "back",
        "a",
        "week",
        "what",
        "is",
        "due",
        "?",
        "every",
        "delete",
        "don't",
        "yes",
        "remind",
        "me",
        "how",
        "about",
        "moving",
        "it",
        "#home",
        "urgent",
        "3pm",
        "2026-12-04",
        "done",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    profile=st.sampled_from(["small", "standard", "off"]),
    name=st.sampled_from(sorted(TOOLS)),
    sent=st.dictionaries(FIELDS, VALUES, max_size=5),
    said=st.lists(st.lists(WORDS, min_size=1, max_size=8).map(" ".join), min_size=1, max_size=3),
)
def test_a_guard_never_changes_a_call_without_saying_so(profile, name, sent, said):
    import datetime as dt

    turn = Turn(text=said[-1], recent=said[:-1], today=dt.date(2026, 12, 1))
    c = ToolCall(name=name, sent=sent)
    Guards(profile).screen(c, turn)
    assert c.sent == sent  # what the model sent is kept as sent, for history
    if c.args != sent:
        assert c.notes, (name, sent, said, c.args)
    if profile == "off":
        assert c.args == sent and c.refusal is None and c.result is None


def test_negated_and_earlier_delete_words_do_not_authorise_a_deletion():
    asked = lambda text: intent.deletion(text) is Intent.ASKED  # noqa: E731
    assert asked("delete the gym task") and asked("please remove it, not the other one")
    assert not asked("don't delete anything") and not asked("do not remove my tasks")
    g = Guards("standard")
    for recent, text, allowed in [
        (["delete task 1"], "add bread", False),  # the previous request does not carry over
        (["delete the gym one"], "yes", True),  # a short yes to the deletion just asked about
        (["delete the gym one"], "yes, and delete the rest too", True),
        (["what's on my list?"], "yes", False),
        ([], "don't delete anything", False),
    ]:
        c = ToolCall(name="delete_task", sent={"id": 1})
        g.screen(c, Turn(text=text, recent=recent))
        assert (c.refusal is None) == allowed, (recent, text)


# ---------------------------------------------------------------- the turn


def test_after_a_critique_the_retry_sees_its_own_results_in_order(model, make_agent, store):
    model.sizes["main"] = "9.0B"
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="milk")]},
        {"content": "Added milk."},
        {"tool_calls": [call("add_task", title="eggs")]},
        {"content": "Added eggs too."},
    )
    model.script("critic", {"content": '{"done": false, "critique": "eggs were not added"}'})
    r = make_agent().run_turn("add milk and eggs")
    assert r.reply == "Added eggs too." and [t["title"] for t in tasks(store)] == ["milk", "eggs"]
    last = model.chats("main")[-1]["messages"]
    shape = [
        (m["role"], m.get("content", "")[:20] or json.dumps(m.get("tool_calls", ""))[:40]) for m in last[1:]
    ]  # after the system prompt
    assert [role for role, _ in shape] == ["user", "assistant", "tool", "assistant", "user", "assistant", "tool"]
    assert shape[3] == ("assistant", "Added milk.") and "reviewer" in last[5]["content"]
    assert "eggs" in last[6]["tool_calls"][0]["function"]["arguments"]["title"]
    assert json.loads(last[7]["content"])["added"]["title"] == "eggs"
    assert len(model.chats("main")) == 4  # no blind calls after the retry


def test_a_declined_deletion_is_no_change_and_is_asked_once(model, make_agent, ctx, store):
    model.sizes["main"] = "9.0B"
    dispatch(ctx, "add_task", {"title": "gym"})
    asked = []
    ctx.confirm = lambda q: asked.append(q) or False
    model.script(
        "main",
        {"tool_calls": [call("delete_task", id=1)]},
        {"tool_calls": [call("delete_task", id=1)]},  # the model tries again
        {"content": "I did not delete it."},
    )
    r = make_agent().run_turn("delete the gym task")
    assert len(asked) == 1 and model.chats("critic") == []  # nothing changed: no critic, no second question
    assert "already said no" in r.tool_calls[1]["result"]["error"]
    assert [t["title"] for t in tasks(store)] == ["gym"]


def test_the_large_change_count_is_by_distinct_tasks(model, make_agent, ctx, store):
    for t in ("a", "b", "c"):
        dispatch(ctx, "add_task", {"title": t})
    asked = []
    ctx.confirm = lambda q: asked.append(q) or False
    model.script(
        "main",
        {"tool_calls": [call("update_task", id=i, priority="high") for i in (1, 2, 3)]},
        {"tool_calls": [call("update_task", id=i, notes="x") for i in (1, 2, 3)]},
        {"content": "Done."},
    )
    r = make_agent(reflect=False).run_turn("make a, b and c urgent and note x on them")
    assert asked == [] and all(c["ok"] for c in r.tool_calls)  # three tasks, changed twice each


def test_one_yes_approves_exactly_the_changes_listed(model, make_agent, ctx, store):
    for i in range(10):
        dispatch(ctx, "add_task", {"title": f"t{i}"})
    asked = []
    answers = iter([True, False])
    ctx.confirm = lambda q: asked.append(q) or next(answers)
    model.script(
        "main",
        {"tool_calls": [call("delete_task", id=i) for i in (1, 2, 3, 4)]},
        {"tool_calls": [call("delete_task", id=i) for i in (5, 6)]},  # not in the list the user saw
        {"content": "Deleted."},
    )
    make_agent(reflect=False).run_turn("delete t0 to t3")
    assert len(asked) == 2 and "DELETE task 5" in asked[1]
    assert [t["title"] for t in tasks(store)] == [f"t{i}" for i in range(4, 10)]


def test_a_read_after_a_write_is_not_a_repeat_and_repeats_answer_from_the_latest_results(model, make_agent, ctx):
    model.sizes["main"] = "494.03M"  # the repeat screen is a small-model recovery
    dispatch(ctx, "add_task", {"title": "dentist"})
    dispatch(ctx, "add_task", {"title": "stamps"})
    model.script(
        "main",
        {"tool_calls": [call("list_tasks")]},
        {"tool_calls": [call("complete_task", id=1)]},
        {"tool_calls": [call("list_tasks")]},  # new information after the write: it runs
        {"tool_calls": [call("list_tasks")]},  # a repeat: the turn ends with the latest results
    )
    r = make_agent(reflect=False).run_turn("mark the dentist done, then show me what's left")
    assert [c["name"] for c in r.tool_calls] == ["list_tasks", "complete_task", "list_tasks"]
    assert r.tool_calls[2]["result"]["tasks"][0]["title"] == "stamps"
    assert "stamps" in r.reply and '"dentist" (id 1) as done' in r.reply
    assert "dentist" not in r.reply.split("as done.")[1]  # never the stale list with the dentist open


def test_a_json_reply_stands_for_a_capable_model_and_is_replaced_for_a_small_one(model, make_agent):
    model.models["tiny"] = ["completion", "tools"]
    model.sizes.update(main="9.0B", tiny="494.03M")
    for name, kept in (("main", True), ("tiny", False)):
        model.script(name, {"tool_calls": [call("list_tasks")]}, {"content": '{"tasks": []}'})
        r = make_agent(reflect=False, model=name).run_turn("give me my open tasks as JSON")
        assert (r.reply == '{"tasks": []}') == kept


# ---------------------------------------------------------------- words that fit several tasks alike

TITLE_WORD = st.text(alphabet="bcdfghklmnprtvwz" + "aeiou", min_size=3, max_size=8).filter(
    lambda w: (
        w not in intent._STOP
        and not w.endswith("s")
        and not any(p.search(w) for p in (intent._CHANGE, intent._PRONOUN, intent._EVERYTHING, intent._DELETE))
        and len(list(intent._clauses(f"mark {w} done"))) == 1  # "then", "just": words that end a clause
    )
)


@settings(max_examples=80)
@given(
    TITLE_WORD,
    TITLE_WORD,
    TITLE_WORD,
    st.sampled_from(["mark the {} as done", "delete the {}", "move the {} to friday"]),
)
def test_words_shared_by_two_titles_name_both_alike_and_a_title_word_of_one_names_it(shared, a, b, said):
    """The property over generated titles: "the call" with "call mom" and "call dad" fits both alike (a write
    to either is a guess); "the call dad" names one; "the calls" means both; two equal titles are no choice."""
    from hypothesis import assume

    assume(len({shared, a, b}) == 3)
    titles = {1: f"{shared} {a}", 2: f"{shared} {b}"}
    both = intent.mandate(said.format(shared), titles)
    named = both.remove if said.startswith("delete") else both.change
    assert named.ids == {1, 2} and named.alike == {1, 2}
    one = intent.mandate(said.format(f"{shared} {b}"), titles)
    named = one.remove if said.startswith("delete") else one.change
    assert named.ids == {2} and not named.alike
    plural = intent.mandate(said.format(shared + "s"), titles)
    assert not (plural.remove.alike or plural.change.alike)
    same = intent.mandate(said.format(shared), {1: titles[1], 2: titles[1].upper()})
    assert not (same.remove.alike or same.change.alike)


def test_a_write_to_a_task_the_words_fit_alike_is_refused_by_the_guard_and_names_them_all():
    titles = {1: "call mom", 2: "call dad", 3: "buy milk"}
    turn = Turn(text="mark the call as done", open_titles=titles)
    turn.mandate = intent.mandate(turn.text, titles)
    c = ToolCall("complete_task", {"id": 2})
    Guards("standard").screen(c, turn)
    assert c.refusal and 'task 1 "call mom"' in c.refusal and 'task 2 "call dad"' in c.refusal
    assert "milk" not in c.refusal and c.which == ("call mom", "call dad")
