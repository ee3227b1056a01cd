"""The ReAct loop on the scripted model: tools, planning prompt, text tool calls, reflection, faults
and prompt-cache stability; the faults' lines and an unreachable server through the fake Ollama server."""

import json

import pytest
from helpers import TODAY, call, events, tasks

from planner.agent.loop import INTERRUPTED, TOO_MANY_STEPS, system_prompt
from planner.memory.history import session_messages
from planner.model import base as llm_mod
from planner.tools import TOOLS


def test_a_tool_call_runs_and_the_model_answers(model, make_agent, store):
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="buy milk", due_date="2026-12-02")]},
        {"content": "Added buy milk for tomorrow."},
    )
    r = make_agent().run_turn("add milk for tomorrow")
    assert r.reply == "Added buy milk for tomorrow." and r.error is None
    assert tasks(store)[0]["title"] == "buy milk"
    # The second call carried the tool result, in order, with tool_name.
    second = model.chats("main")[1]["messages"]
    assert second[-2]["tool_calls"][0]["function"]["name"] == "add_task"
    assert second[-1]["role"] == "tool" and second[-1]["tool_name"] == "add_task"
    assert json.loads(second[-1]["content"])["added"]["id"] == 1


def test_all_tool_calls_of_a_reply_run_and_results_keep_call_order(model, make_agent, store):
    titles = [f"task {i}" for i in range(6)]
    model.script("main", {"tool_calls": [call("add_task", title=t) for t in titles]}, {"content": "Added six tasks."})
    make_agent(reflect=False).run_turn("add six tasks")
    assert sorted(t["title"] for t in tasks(store)) == sorted(titles)
    results = [m for m in model.chats("main")[1]["messages"] if m["role"] == "tool"]
    assert [json.loads(m["content"])["added"]["title"] for m in results] == titles


def test_the_request_sends_tools_options_think_and_a_dated_system_prompt(model, make_agent):
    model.script("main", {"content": "Hi!"})
    make_agent().run_turn("hello")
    req = model.chats("main")[0]
    assert req["messages"][0] == {"role": "system", "content": system_prompt(TODAY, ("read",))}
    assert "Tuesday, 2026-12-01" in req["messages"][0]["content"]
    # "hello" needs no change: the tools that read tasks (agent/request.py), and every tool with PLANNER_TOOL_GROUPS=all
    assert {t["function"]["name"] for t in req["tools"]} == {n for n, t in TOOLS.items() if t.group == "read"}
    model.script("main", {"content": "Hi!"})
    make_agent(tool_groups="all").run_turn("hello")
    sent = {t["function"]["name"] for t in model.chats("main")[1]["tools"]}
    assert sent == set(TOOLS) - {"lookup"}  # off without --web
    assert req["options"] == {"num_ctx": 8192, "num_predict": 1024}
    assert "think" not in req  # main cannot think: some Ollama versions reject the field for such a model
    assert req["stream"] is True


def test_a_thinking_model_is_told_not_to_think_unless_asked(model, make_agent):
    model.models["main"] = ["completion", "tools", "thinking"]
    model.script("main", {"content": "Hi."}, {"content": "Hi."})
    make_agent().run_turn("hello")
    make_agent(think=True).run_turn("hello")
    assert [c["think"] for c in model.chats("main")] == [False, True]


def test_think_flag_is_sent_and_thinking_never_reaches_reply_or_history(model, make_agent, store):
    model.models["main"] = ["completion", "tools", "thinking"]
    model.script("main", {"content": "Done.", "thinking": "secret reasoning"})
    r = make_agent(think=True).run_turn("hello")
    assert model.chats("main")[0]["think"] is True
    assert r.reply == "Done."
    assert "secret" not in json.dumps(session_messages(store, "s1"))


def test_chit_chat_calls_no_tool_and_no_critic(model, make_agent):
    model.script("main", {"content": "Hello! How can I help?"})
    r = make_agent().run_turn("hi there")
    assert r.tool_calls == [] and model.chats("critic") == []


def test_read_only_turns_skip_the_critic(model, make_agent):
    model.script("main", {"tool_calls": [call("list_tasks")]}, {"content": "You have no tasks."})
    make_agent().run_turn("what do I have?")
    assert model.chats("critic") == []


def test_max_steps_stops_the_loop_and_says_so(model, make_agent):
    model.respond_with("main", lambda body: {"tool_calls": [call("recall", query=f"q{len(body['messages'])}")]})
    r = make_agent(max_steps=3).run_turn("loop forever")
    assert r.reply == TOO_MANY_STEPS.format(n=3) and r.gave_up
    assert len(model.chats("main")) == 3  # steps are model calls


def test_the_step_limit_is_read_under_its_name_and_its_old_one():
    from planner.settings import Config

    assert Config.from_env({"PLANNER_MAX_STEPS": "3"}).max_steps == 3
    assert Config.from_env({"PLANNER_MAX_TURNS": "4"}).max_steps == 4  # the old name still works
    assert Config.from_env({"PLANNER_MAX_TURNS": "4", "PLANNER_MAX_STEPS": "5"}).max_steps == 5


def test_reply_tokens_stream_as_events(model, make_agent):
    model.script("main", {"content": "A fairly long reply that arrives in pieces."})
    seen = []
    make_agent().run_turn("hi", events(seen))
    tokens = [d["text"] for k, d in seen if k == "token"]
    assert len(tokens) > 2 and "".join(tokens) == "A fairly long reply that arrives in pieces."


def test_critic_not_done_sends_the_agent_back_once_and_history_keeps_both_attempts(model, make_agent, store):
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="milk")]},
        {"content": "Added milk."},
        {"tool_calls": [call("add_task", title="eggs")]},
        {"content": "Added milk and eggs."},
    )
    model.script("critic", {"content": '{"done": false, "critique": "eggs were not added"}'})
    r = make_agent().run_turn("add milk and eggs")
    assert r.reply == "Added milk and eggs." and r.critiques == ["eggs were not added"]
    assert [t["title"] for t in tasks(store)] == ["milk", "eggs"]
    critic_req = model.chats("critic")[0]
    assert critic_req["format"]["required"] == ["critique", "done"]  # the reason first, then the verdict
    assert critic_req["think"] is False and critic_req["stream"] is False
    assert (
        "add milk and eggs" in critic_req["messages"][1]["content"] and "milk" in critic_req["messages"][1]["content"]
    )
    # The retry saw the critique...
    assert "eggs were not added" in model.chats("main")[2]["messages"][-1]["content"]
    # ...but history keeps both attempts' tool calls and the final reply, not the critique.
    stored = session_messages(store, "s1")
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert stored[-1]["content"] == "Added milk and eggs."
    assert "eggs were not added" not in json.dumps(stored)
    assert len(model.chats("critic")) == 1  # at most MAX_REFLECTIONS retries


def test_malformed_critic_output_fails_open(model, make_agent):
    # Ollama keeps a reply to its schema; what can still come back unreadable is one cut short by num_predict.
    for bad in ['{"done": fal', '{"done": false, "critique": "Say the da', '{"', ""]:
        model.script("main", {"tool_calls": [call("add_task", title="x")]}, {"content": "Added."})
        model.script("critic", {"content": bad, "done_reason": "length"})
        r = make_agent().run_turn("add x")
        assert r.reply == "Added." and r.critiques == []


def test_critic_server_error_fails_open(model, make_agent):
    model.script("main", {"tool_calls": [call("add_task", title="x")]}, {"content": "Added."})
    model.script("critic", {"status": 500, "error": "boom"})
    assert make_agent().run_turn("add x").reply == "Added."


def test_no_reflect_skips_the_critic(model, make_agent):
    model.script("main", {"tool_calls": [call("add_task", title="x")]}, {"content": "Added."})
    make_agent(reflect=False).run_turn("add x")
    assert model.chats("critic") == []


def test_a_server_error_fails_the_turn_with_one_line_and_the_next_turn_works(model, make_agent, store):
    agent = make_agent()
    model.script("main", {"status": 500, "error": "llama runner process has terminated"})
    r = agent.run_turn("hello")
    assert r.error and "\n" not in r.error and "HTTP 500" in r.error
    model.script("main", {"content": "Hi again."})
    assert agent.run_turn("hello?").reply == "Hi again."
    sent = model.chats("main")[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]


def test_each_stream_fault_gives_its_line_and_history_stays_valid(fake, make_agent):
    agent = make_agent()
    cases = [
        ({"content": "partial reply", "cut": True}, llm_mod.CUT_SHORT),
        ({"content": "partial reply here", "drop": True}, llm_mod.BROKEN),
        ({"content": "x", "garbage": True}, llm_mod.UNREADABLE),
        ({"status": 503, "error": "server busy, please try again.  maximum pending requests exceeded"}, llm_mod.BUSY),
        (
            {"status": 404, "error": 'model "main" not found, try pulling it first'},
            llm_mod.NOT_FOUND.format(model="main"),
        ),
        (
            {"content": "x", "stream_error": "an error was encountered while running the model"},
            "an error was encountered",
        ),
    ]
    for reply, message in cases:
        fake.script("main", reply)
        r = agent.run_turn("hello")
        assert message in r.error
    fake.script("main", {"content": "fine"})
    assert agent.run_turn("again").reply == "fine"
    roles = [m["role"] for m in fake.chats("main")[-1]["messages"][1:]]
    assert roles == ["user", "assistant"] * len(cases) + ["user"]


def test_a_tool_call_parse_error_is_retried_once(model, make_agent):
    model.script("main", {"status": 500, "error": "error parsing tool call: raw='{bad'"}, {"content": "OK."})
    assert make_agent().run_turn("hi").reply == "OK."
    model.script(
        "main", {"status": 500, "error": "error parsing tool call"}, {"status": 500, "error": "error parsing tool call"}
    )
    assert make_agent().run_turn("hi").error == llm_mod.TOOL_PARSE


def test_a_failure_after_tools_ran_keeps_them_in_history(model, make_agent, store):
    agent = make_agent()
    model.script("main", {"tool_calls": [call("add_task", title="kept")]}, {"status": 500, "error": "boom"})
    r = agent.run_turn("add kept")
    assert r.error and tasks(store)[0]["title"] == "kept"
    stored = session_messages(store, "s1")
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"]


@pytest.mark.own_server
def test_unreachable_server_is_one_clear_line(make_agent, fake):
    agent = make_agent()
    fake.stop()
    r = agent.run_turn("hello")
    assert r.error.startswith("Cannot reach Ollama at http://127.0.0.1:") and "ollama serve" in r.error


def test_length_and_full_context_warnings(model, make_agent):
    model.script("main", {"content": "cut", "done_reason": "length", "prompt_eval_count": 8192})
    seen = []
    make_agent().run_turn("hi", events(seen))
    warnings = [d["text"] for k, d in seen if k == "warning"]
    assert any("length limit" in w for w in warnings) and any("whole context" in w for w in warnings)


def test_ctrl_c_mid_stream_keeps_the_partial_reply_marked_and_history_valid(model, make_agent, store):
    agent = make_agent()
    model.script("main", {"content": "Here is a long answer that the user stops"})

    def on_event(kind, data):
        if kind == "token" and "long" in data["text"]:
            raise KeyboardInterrupt

    r = agent.run_turn("tell me", on_event)
    assert r.interrupted and r.reply.endswith(INTERRUPTED) and r.reply.startswith("Here is a")
    model.script("main", {"content": "ok"})
    assert agent.run_turn("next").reply == "ok"
    assert [m["role"] for m in session_messages(store, "s1")] == ["user", "assistant", "user", "assistant"]


def test_history_prefix_is_byte_identical_across_turns(model, make_agent):
    agent = make_agent()
    model.respond_with("main", lambda body: {"content": "noted"})
    for i in range(5):
        agent.run_turn(f"message {i}")
    bodies = [json.dumps(b["messages"]) for b in model.chats("main")]
    for earlier, later in zip(bodies, bodies[1:], strict=False):
        assert later.startswith(earlier[:-1])  # the whole earlier request is a prefix
    assert len({json.dumps(b["tools"]) for b in model.chats("main")}) == 1
    assert len({json.dumps(b["options"]) for b in model.chats("main")}) == 1


def test_prefix_reuse_is_measured_per_model_call(model, make_agent):
    from bench.agent import shared_prefix
    from planner.memory.history import prefix_share

    assert shared_prefix("abcdef", "abcxyz") == 3 and shared_prefix("", "abc") == 0 and shared_prefix("ab", "ab") == 2
    a, b = {"role": "user", "content": "x" * 84}, {"role": "assistant", "content": "y" * 84}
    assert prefix_share([a], [a, b]) == 0.5 and prefix_share([b], [a, b]) == 0 and prefix_share([a, b], [a, b]) == 1
    model.respond_with("main", lambda body: {"content": "noted"})
    agent = make_agent()
    first = agent.run_turn("one")
    second = agent.run_turn("two")
    assert first.prefix_reuse == [0.0]
    assert 0.8 < second.prefix_reuse[0] < 1.0


def test_every_event_the_agent_sends_is_one_of_the_declared_kinds(model, make_agent):
    from planner.agent.turn import EVENT_KINDS

    model.script(
        "main",
        {"tool_calls": [call("add_task", title="buy milk", due_date="2026-12-02")]},
        {"content": "Added.", "done_reason": "length", "prompt_eval_count": 8192},
        {"content": "Added buy milk."},
    )
    model.script("critic", {"content": '{"done": false, "critique": "Say the date."}'})
    seen = []
    make_agent(reflect=True).run_turn("add milk for tomorrow", events(seen))
    kinds = {k for k, _ in seen}
    assert kinds <= set(EVENT_KINDS)
    assert {"status", "token", "tool_start", "tool_end", "critic", "warning"} <= kinds


def test_the_interface_changes_only_what_may_change_mid_session(make_agent, store):
    agent = make_agent()
    agent.configure(reflect=False, think=True, critic_model="other")
    assert (agent.config.reflect, agent.config.think, agent.config.critic_model) == (False, True, "other")
    with pytest.raises(ValueError, match="cannot change db_path, num_ctx mid-session"):
        agent.configure(num_ctx=2, db_path="elsewhere.db")
    assert agent.config.num_ctx == 8192
    assert agent.session == "s1" and agent.switch_session("s2") == 0 and agent.session == "s2"
