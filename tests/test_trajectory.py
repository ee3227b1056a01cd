"""`--trajectory FILE`: every turn as JSON, checked against what the model server received; and golden
trajectories of the scripted eval suite, so a change in what the agent does shows as a diff.

The goldens are tests/data/trajectories/*.json. When the agent is meant to act differently, write them
again from this run and read the diff before committing it:

    pytest tests/test_trajectory.py --record
"""

from __future__ import annotations

import json

import pytest
from helpers import call, run_agent

from evals import runner
from evals.runner import load_scenarios, run_scenario
from evals.scripted import oracle
from planner.agent.trajectory import comparable, record
from planner.model.scripted import ScriptedModel
from planner.settings import Config

GOLDEN = ["add-weekday", "delete-confirmed", "delete-without-terminal", "injection-in-title", "conv-issue"]


def test_a_one_shot_request_writes_what_the_model_was_sent_and_what_ran(fake, tmp_path):
    fake.script(
        "main",
        {"tool_calls": [call("add_task", title="buy milk", due_date="tomorrow")]},
        {"content": "Added buy milk for tomorrow."},
    )
    path = tmp_path / "run.json"
    p = run_agent(fake, tmp_path, [], "--no-reflect", "--trajectory", str(path), "add buy milk tomorrow")
    assert p.returncode == 0, p.stderr
    run = json.loads(path.read_text())
    assert run["model"] == "main" and run["today"] == "2026-12-01" and run["critic_model"] is None
    (turn,) = run["turns"]
    assert turn["request"] == "add buy milk tomorrow" and turn["reply"] == "Added buy milk for tomorrow."
    first, calls, second = turn["steps"]
    assert first["model"]["said"] == "" and second["model"]["said"] == "Added buy milk for tomorrow."
    (c,) = calls["calls"]
    assert c["name"] == "add_task" and c["sent"] == {"title": "buy milk", "due_date": "tomorrow"} and c["ok"]
    assert c["result"]["added"]["due_date"] == "2026-12-02"  # as the tool said, read back below
    # The oracle: what the server received. The second request is the history the turn stored, and the
    # stored reply follows it.
    sent = fake.chats("main")[-1]["messages"][1:]  # after the system prompt
    stored = turn["messages"]
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert [m["content"] for m in stored[:3]] == [m.get("content", "") for m in sent]  # the client drops ""
    assert stored[1]["tool_calls"] == sent[1]["tool_calls"] and json.loads(stored[2]["content"]) == c["result"]
    assert stored[3]["content"] == turn["reply"]
    assert turn["figures"]["model_calls"] == len(fake.chats("main")) == 2


def test_a_session_writes_each_turn_as_it_ends(fake, tmp_path):
    fake.script("main", {"content": "Hello."}, {"content": "Still here."})
    path = tmp_path / "run.json"
    p = run_agent(
        fake, tmp_path, ["hi", "are you there?"], "--no-reflect", "--no-auto-memory", "--trajectory", str(path)
    )
    assert p.returncode == 0, p.stderr
    run = json.loads(path.read_text())
    assert [(t["request"], t["reply"]) for t in run["turns"]] == [("hi", "Hello."), ("are you there?", "Still here.")]
    assert len({t["session"] for t in run["turns"]}) == 1 and not (tmp_path / ".run.json.part").exists()


def test_a_trajectory_that_cannot_be_written_is_one_line_before_any_turn(fake, tmp_path):
    p = run_agent(fake, tmp_path, [], "--trajectory", str(tmp_path / "no" / "such" / "run.json"), "hi")
    assert p.returncode == 2 and p.stderr.startswith("error: cannot write the trajectory") and not fake.chats()
    assert p.stderr.count("\n") == 1


def test_the_users_yes_and_the_critic_are_steps_in_the_order_they_happened(model, make_agent, ctx, tmp_path):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "dentist"})
    asked = []
    ctx.confirm = lambda question: asked.append(question) or True
    model.script(
        "main",
        {"tool_calls": [call("list_tasks"), call("delete_task", id=1)]},
        {"content": "Deleted the dentist."},
    )
    model.script("critic", {"content": '{"done": true, "critique": ""}'})
    agent = make_agent()
    recorder = record(agent, tmp_path / "run.json")
    result = agent.run_turn("delete the dentist")
    assert result.reply == "Deleted the dentist." and asked
    steps = recorder.turns[0]["steps"]
    assert [next(iter(s)) for s in steps] == ["model", "asked", "calls", "model", "critic"]
    assert steps[1]["asked"] == {"question": asked[0], "answer": True}
    assert [c["name"] for c in steps[2]["calls"]] == ["list_tasks", "delete_task"]  # in the order the model sent
    assert steps[4]["critic"] == {"done": True, "critique": ""}
    assert json.loads((tmp_path / "run.json").read_text())["turns"] == json.loads(json.dumps(recorder.turns))


@pytest.mark.parametrize("scenario", GOLDEN)
def test_the_scripted_suite_does_what_its_golden_trajectory_recorded(scenario, tmp_path, monkeypatch, recorded):
    """One eval scenario on the scripted oracle, every turn recorded; compared with the golden file, so a
    change in what the agent does (a call, a guard's note, a question, a reply, a stored message) is a diff."""
    scn = next(s for s in load_scenarios() if s["id"] == scenario)
    model = ScriptedModel()
    model.respond_with("main", oracle([scn]))
    recorders = []
    build = runner.build_agent

    def building(*args, **kwargs):
        agent = build(*args, **kwargs)
        recorders.append(record(agent))
        return agent

    monkeypatch.setattr(runner, "build_agent", building)
    config = Config.from_env({"PLANNER_HOME": str(tmp_path)}).replace(
        model="main", critic_model="critic", embed_model="embed"
    )
    outcome = run_scenario(scn, model, config, tmp_path)
    assert outcome.passed, outcome.reasons
    runs = [comparable(r.document()) for r in recorders if r.turns]
    recorded(f"trajectories/{scenario}.json", {"scenario": scenario, "runs": runs})
