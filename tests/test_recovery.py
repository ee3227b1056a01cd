"""Coping with small models: tool calls written as text, repeats, echoed
results, invented tools and dates, and calls the user did not ask for.

The main model here reports 0.5B parameters, so the guard profile `auto` picks
`small`: these are the recoveries that profile adds (guards.py).
"""

import json

import pytest
from conftest import call, tasks
from test_agent import events

from planner.agent.recovery import parse_text_tool_calls
from planner.memory.history import session_messages
from planner.prompts import REPHRASE
from planner.tools import TOOLS, dispatch


@pytest.fixture(autouse=True)
def small_main_model(model):
    """The main model reports 0.5B parameters."""
    model.sizes["main"] = "494.03M"


def test_tool_calls_written_as_text_are_run_not_shown(model, make_agent, store):
    text = '{"name": "add_task", "arguments": {"title": "call mom", "due_date": "2026-12-03"}}'
    model.script("main", {"content": text}, {"content": "Added."})
    seen = []
    r = make_agent(reflect=False).run_turn("remind me to call mom thursday", events(seen))
    assert tasks(store)[0]["title"] == "call mom"
    assert r.reply == "Added."
    assert "add_task" not in "".join(d["text"] for k, d in seen if k == "token")
    stored = session_messages(store, "s1")
    assert stored[1]["tool_calls"][0]["function"]["name"] == "add_task" and stored[1]["content"] == ""


def test_text_tool_call_formats_small_models_use():
    names = set(TOOLS)
    assert parse_text_tool_calls('<tool_call>\n{"name": "get_today", "arguments": {}}\n</tool_call>', names)
    fenced = 'Sure:\n```json\n[{"name": "add_task", "parameters": {"title": "a"}}, {"name": "add_task", "arguments": "{\\"title\\": \\"b\\"}"}]\n```'
    calls = parse_text_tool_calls(fenced, names)
    assert [c["function"]["arguments"]["title"] for c in calls] == ["a", "b"]
    assert parse_text_tool_calls('{"function": {"name": "list_tasks", "arguments": {"status": "all"}}}', names)
    # A call-shaped object with an invented name is parsed, so dispatch can say which tool is real...
    assert (
        parse_text_tool_calls('{"name": "move_dentist", "arguments": {"id": 1}}', names)[0]["function"]["name"]
        == "move_dentist"
    )
    # ...while JSON that is not shaped like a call is just text.
    assert parse_text_tool_calls('{"name": "Ana", "city": "Lisbon"}', names) == []
    assert parse_text_tool_calls('The JSON was {"added": {"id": 1}}', names) == []
    assert parse_text_tool_calls("no json here", names) == []


def test_a_call_with_a_wrong_or_missing_closing_bracket_is_repaired():
    names = set(TOOLS)
    # Verbatim from a 0.5B model: the outer object closed with "]}".
    seen = '{"name": "add_task", "arguments": {"notes": "a ]} in text", "title": "Buy a Birthday Card"}]}'
    assert parse_text_tool_calls(seen, names)[0]["function"] == {
        "name": "add_task",
        "arguments": {"notes": "a ]} in text", "title": "Buy a Birthday Card"},
    }
    assert parse_text_tool_calls('{"name": "list_tasks", "arguments": {"status": "all"', names)  # cut short
    assert parse_text_tool_calls('{"name": "Ana"]} and {"city": "Lisbon"}', names) == []


def test_text_that_only_looks_like_json_is_not_run_and_not_shown_as_it_is(model, make_agent, store):
    # Not a call, so nothing runs; a JSON document is no reply either: the model is asked once more.
    model.script("main", {"content": '{"note": "not a call"}'}, {"content": "Hello!"})
    r = make_agent().run_turn("hi")
    assert r.reply == "Hello!" and r.tool_calls == [] and tasks(store) == []
    assert model.chats("main")[1]["messages"][-1]["content"] == REPHRASE


def test_identical_calls_repeated_in_one_reply_run_once(model, make_agent, store):
    model.script("main", {"tool_calls": [call("add_task", title="milk")] * 26}, {"content": "Added milk."})
    make_agent(reflect=False).run_turn("add milk")
    assert [t["title"] for t in tasks(store)] == ["milk"]
    stored = session_messages(store, "s1")
    assert len(stored[1]["tool_calls"]) == 1 and [m["role"] for m in stored] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]


def test_an_echoed_json_result_becomes_a_reply_in_words(model, make_agent):
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="milk", due_date="2026-12-02")]},
        {"content": '{"added": {"id": 1}}'},
    )
    seen = []
    r = make_agent(reflect=False).run_turn("add milk for tomorrow", events(seen))
    assert r.reply == 'Added "milk" (id 1, due 2026-12-02).'
    assert "".join(d["text"] for k, d in seen if k == "token") == r.reply


def test_an_empty_final_reply_is_replaced_by_what_was_done(model, make_agent, store):
    model.script("main", {"tool_calls": [call("list_tasks")]}, {"content": ""})
    assert make_agent().run_turn("what's on my list?").reply == "You have no open tasks."
    model.script("main", {"content": "  "})
    assert make_agent().run_turn("hm").reply == "Sorry, I have no answer to that."
    assert all(
        m["content"] for m in session_messages(store, "s1") if m["role"] == "assistant" and not m.get("tool_calls")
    )


def test_fallback_describes_each_tool_result():
    from planner.agent.replies import fallback_reply

    calls = [
        {"name": "complete_task", "result": {"completed": {"id": 2, "title": "a", "due_date": None}}},
        {"name": "delete_task", "result": {"error": "the user declined; task 3 was not deleted"}},
        {"name": "remember", "result": {"remembered": {"id": 1, "text": "likes tea"}}},
        {"name": "get_today", "result": {"date": "2026-12-01", "weekday": "Tuesday"}},
    ]
    assert (
        fallback_reply(calls)
        == 'Marked "a" (id 2) as done. I\'ll remember that: likes tea. Today is Tuesday, 2026-12-01.'
    )
    # errors are told only when nothing succeeded
    assert fallback_reply(calls[1:2]) == "You said no, so nothing was changed."  # never the tool's error itself


def test_an_invented_tool_written_as_text_gets_an_error_that_names_the_real_one(model, make_agent, store):
    model.script(
        "main",
        {"content": '{"name": "rename_task", "arguments": {"id": 1, "title": "oat milk"}}'},
        {"tool_calls": [call("update_task", id=1, title="oat milk")]},
        {"content": "Renamed."},
    )
    model.script("main")
    store.conn().execute("INSERT INTO tasks (title) VALUES ('milk')")
    make_agent(reflect=False).run_turn("rename milk to oat milk")
    error = json.loads([m for m in model.chats("main")[1]["messages"] if m["role"] == "tool"][0]["content"])
    assert "Use update_task instead" in error["error"]
    assert tasks(store)[0]["title"] == "oat milk"


def test_a_call_repeating_one_that_succeeded_is_not_run_again(model, make_agent, store):
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="renew passport", due_date="2026-12-15")]},
        # a small model asks again, with an extra argument and the id as text
        {"tool_calls": [call("add_task", title="renew passport", due_date="2026-12-15", status="open")]},
    )
    r = make_agent(reflect=False).run_turn("add renew passport due 2026-12-15")
    assert [t["title"] for t in tasks(store)] == ["renew passport"]
    assert r.reply == 'Added "renew passport" (id 1, due 2026-12-15).'
    assert len(model.chats("main")) == 2  # answered from the results, no third call


def test_repeats_are_dropped_but_new_calls_in_the_same_reply_run(model, make_agent, store):
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="a")]},
        {"tool_calls": [call("add_task", title="a"), call("add_task", title="b")]},
        {"content": "Added a and b."},
    )
    make_agent(reflect=False).run_turn("add a and b")
    assert [t["title"] for t in tasks(store)] == ["a", "b"]


def test_a_failed_call_may_be_retried(model, make_agent, store):
    model.script(
        "main",
        {"tool_calls": [call("complete_task", id=1)]},
        {"tool_calls": [call("add_task", title="a")]},
        {"tool_calls": [call("complete_task", id=1)]},
        {"content": "Done."},
    )
    make_agent(reflect=False).run_turn("finish a, and add it first if it is not there")
    assert tasks(store)[0]["status"] == "done"


def test_a_question_never_changes_data(model, make_agent, store):
    store.conn().execute("INSERT INTO tasks (title, due_date) VALUES ('buy groceries', '2026-12-02')")
    model.script("main", {"tool_calls": [call("complete_task", id=1), call("list_tasks")]}, {"content": "Groceries."})
    make_agent(reflect=False).run_turn("what is due tomorrow?")
    assert tasks(store)[0]["status"] == "open"
    refusal = json.loads([m for m in model.chats("main")[1]["messages"] if m["role"] == "tool"][0]["content"])
    assert "asked a question" in refusal["error"]


def test_a_request_phrased_as_a_question_still_acts(model, make_agent, store):
    model.script("main", {"tool_calls": [call("add_task", title="milk", due_date="2026-12-02")]}, {"content": "Added."})
    make_agent(reflect=False).run_turn("can you add milk for tomorrow?")
    assert tasks(store)[0]["title"] == "milk"


def test_delete_is_refused_when_the_user_did_not_ask_to_delete(model, make_agent, store, ctx):
    ctx.confirm = lambda q: True
    store.conn().execute("INSERT INTO tasks (title) VALUES ('quarterly report')")
    model.script("main", {"tool_calls": [call("delete_task", id=1)]}, {"content": "Done."})
    make_agent(reflect=False).run_turn("I finished the quarterly report")
    assert len(tasks(store)) == 1
    model.script("main", {"tool_calls": [call("delete_task", id=1)]}, {"content": "Deleted."})
    make_agent(reflect=False).run_turn("please remove the report task")
    assert tasks(store) == []


def test_a_yes_after_a_delete_question_may_delete(model, make_agent, store, ctx):
    ctx.confirm = lambda q: True
    store.conn().execute("INSERT INTO tasks (title) VALUES ('gym')")
    model.script(
        "main",
        {"content": "Delete the gym task?"},
        {"tool_calls": [call("delete_task", id=1)]},
        {"content": "Deleted."},
    )
    agent = make_agent(reflect=False)
    agent.run_turn("delete the gym one")
    agent.run_turn("yes")
    assert tasks(store) == []


def test_an_invented_due_date_is_left_out_and_said_so(model, make_agent, store):
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="buy a birthday card", due_date="2026-12-02")]},
        {"content": "Added."},
    )
    make_agent(reflect=False).run_turn("add a task: buy a birthday card")
    assert tasks(store)[0]["due_date"] is None
    result = json.loads([m for m in model.chats("main")[1]["messages"] if m["role"] == "tool"][0]["content"])
    assert result["note"] == 'no date was set ("2026-12-02" was not used): the request gave none; say a date to set one'


def test_an_invented_due_date_on_an_update_is_left_out_unless_sent_again(model, make_agent, ctx, store):
    dispatch(ctx, "add_task", {"title": "dentist"})
    invented = call("update_task", id=1, due_date="2026-12-09")
    model.script("main", {"tool_calls": [invented]}, {"content": "Kept it."})
    make_agent(reflect=False).run_turn("don't delete the dentist task")
    assert tasks(store)[0]["due_date"] is None
    result = json.loads([m for m in model.chats("main")[1]["messages"] if m["role"] == "tool"][0]["content"])
    assert result["note"].startswith('no date was set ("2026-12-09" was not used): the request gave none')
    # the model sends it again in the same request: it means it, and it runs
    model.script("main", {"tool_calls": [invented]}, {"tool_calls": [invented]}, {"content": "Moved."})
    make_agent(reflect=False).run_turn("put the dentist where it belongs")
    assert tasks(store)[0]["due_date"] == "2026-12-09"


def test_a_task_put_in_notes_without_a_title_becomes_the_title(model, make_agent, store):
    # As a 0.5B model did on the evals: due_date right, the task in notes, no title; then the same call 6 times.
    sent = call("add_task", due_date="2026-12-15", notes="renew my passport")
    model.script("main", {"tool_calls": [sent]}, {"content": "Added."})
    make_agent(reflect=False).run_turn("add renew passport on 2026-12-15")
    assert [(t["title"], t["due_date"]) for t in tasks(store)] == [("renew my passport", "2026-12-15")]
    result = json.loads([m for m in model.chats("main")[1]["messages"] if m["role"] == "tool"][0]["content"])
    assert result["note"] == "the notes were used as the title: a task needs a title"
    assert store.conn().execute("SELECT notes FROM tasks").fetchone()[0] is None


def test_a_repeated_failing_call_with_an_extra_argument_runs_without_it(model, make_agent, store):
    bad = call("add_task", title="water plants", due_date="2026-12-04", status="open")
    model.script("main", {"tool_calls": [bad]}, {"tool_calls": [bad]}, {"content": "Added."})
    make_agent(reflect=False).run_turn("add water the plants on friday")
    assert [(t["title"], t["due_date"]) for t in tasks(store)] == [("water plants", "2026-12-04")]
    results = [json.loads(m["content"]) for m in model.chats("main")[2]["messages"] if m["role"] == "tool"]
    assert "no argument 'status'" in results[0]["error"]  # the first time, an error that says what to fix
    assert results[1]["note"] == "ignored arguments this tool does not take: status"


def test_question_and_date_detection():
    from planner.agent.guards import asks_only, mentions_date

    assert asks_only("what is due tomorrow?") and asks_only("Do I have anything to do?")
    assert not asks_only("can you add milk?") and not asks_only("what should I add? add milk")
    assert not asks_only("what is due tomorrow") and not asks_only("is the report done? mark it done?")
    assert mentions_date("on friday") and mentions_date("2026-12-05") and mentions_date("in 3 days")
    assert not mentions_date("buy a birthday card") and not mentions_date("call mom")


def test_a_call_repeating_one_whose_date_was_left_out_is_a_repeat(model, make_agent, store):
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="Buy a birthday card", due_date="2026-12-02")]},
        {"tool_calls": [call("add_task", title="Buy a birthday card", due_date=None)]},
    )
    make_agent(reflect=False).run_turn("add a task: buy a birthday card")
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="Buy a cake", due_date="2026-12-02")]},
        {"tool_calls": [call("add_task", title="Buy a cake", due_date="2026-12-02")]},
    )
    make_agent(reflect=False).run_turn("add a task: buy a cake")
    assert [(t["title"], t["due_date"]) for t in tasks(store)] == [("Buy a birthday card", None), ("Buy a cake", None)]


def test_invented_names_point_to_the_real_tool():
    from planner.tools import suggest_tool

    assert suggest_tool("submit_expense_report") == "add_task"
    assert suggest_tool("schedule_gym_signup") == "add_task"
    assert suggest_tool("move_dentist") == "update_task"
    assert suggest_tool("remove_due_date") == "update_task"
    assert suggest_tool("finish_report") == "complete_task"
    assert suggest_tool("zebra") is None


def test_a_reply_parroting_the_retry_instructions_is_replaced(model, make_agent):
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="milk")]},
        {"content": "Added."},
        {"content": "Fix it with the tools if needed, then reply in one short sentence."},
    )
    model.script("critic", {"content": '{"done": false, "critique": "check it"}'})
    assert make_agent().run_turn("add milk").reply == 'Added "milk" (id 1).'


def test_several_echoed_results_are_still_an_echo():
    from planner.agent.replies import is_json_echo

    assert is_json_echo('{"added": {"id": 1}}\n{"added": {"id": 2}}')
    assert not is_json_echo('{"added": 1} and more words')


def test_a_reminder_is_not_a_memory(model, make_agent, store):
    model.script(
        "main",
        {"tool_calls": [call("remember", fact="call the plumber tomorrow")]},
        {"tool_calls": [call("add_task", title="call the plumber", due_date="2026-12-02")]},
        {"content": "Added."},
    )
    make_agent(reflect=False).run_turn("remind me to call the plumber tomorrow")
    assert tasks(store)[0]["title"] == "call the plumber"
    assert store.conn().execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 0
