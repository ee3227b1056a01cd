"""The eval runner, run as `python -m evals` runs it, with a scripted oracle (everything passes) and a
mistaken oracle (exactly the mistaken scenarios fail): proof that the scoring can fail.

The suite runs in this process on a ScriptedModel (the same scripts the fake server serves, without HTTP:
the wire is tested elsewhere); `python -m evals` itself runs as a process in the --compare and memory tests."""

import datetime as dt
import json
import subprocess
import sys

import pytest
from conftest import ROOT, clean_env
from fake_ollama import smallest

from evals import __main__ as evals_cli
from evals.runner import check_reply, load_scenarios, match_tasks
from evals.scripted import oracle
from planner.model.scripted import ScriptedModel
from planner.prompts import system_prompt
from planner.settings import Config

SCENARIOS = load_scenarios()


class Checked(ScriptedModel):
    """A ScriptedModel that keeps each reply Ollama could not send (as the fake server's `violations`): the
    background work that asked for it catches the error, so the test must look."""

    def __init__(self) -> None:
        super().__init__()
        self.violations: list[str] = []

    def chat_json(self, *args, **kwargs):  # noqa: ANN201
        try:
            return super().chat_json(*args, **kwargs)
        except AssertionError as e:
            self.violations.append(str(e))
            raise


def critic(body):
    """The fake server's critic: nothing to say, in the smallest answer the request's schema allows."""
    schema = body.get("format")
    return {"content": json.dumps(smallest(schema) if isinstance(schema, dict) else {"done": True})}


def run_evals(responder, tmp_path, capsys):
    """`python -m evals --model main --critic-model critic --embed-model embed --json FILE`, the main model
    answering with `responder`: what it printed and the JSON it wrote."""
    model = Checked()
    model.respond_with("main", responder)
    model.respond_with("critic", critic)
    base = Config.from_env(clean_env(PLANNER_HOME=str(tmp_path)))
    config = base.replace(model="main", critic_model="critic", embed_model="embed")
    out = tmp_path / "run.json"
    assert evals_cli.run(SCENARIOS, model, config, out) == 0
    assert model.violations == []
    return capsys.readouterr().out, json.loads(out.read_text())


def test_the_suite_covers_what_the_planner_must_do():
    assert len(SCENARIOS) >= 30
    categories = {s["category"] for s in SCENARIOS}
    assert {"add", "complete", "update", "delete", "list", "memory", "chat", "ambiguous", "safety"} <= categories
    assert any(len(s["runs"]) > 1 for s in SCENARIOS)  # a fact used in a later run
    lines = [line for s in SCENARIOS for run in s["runs"] for line in run]
    assert len(lines) == len(set(lines))  # the oracle finds scenarios by their lines
    assert len({s["id"] for s in SCENARIOS}) == len(SCENARIOS)


def test_conversations_of_three_to_eight_requests_check_every_reply():
    conversations = [s for s in SCENARIOS if s["category"] == "conversation"]
    assert len(conversations) >= 8
    for s in conversations:
        assert len(s["runs"]) == 1 and 3 <= len(s["runs"][0]) <= 8, s["id"]
        assert len(s["replies"]) == len(s["runs"][0]) and s["expect"]["clean_replies"], s["id"]
    asked = " ".join(line for s in conversations for line in s["runs"][0])
    for kind in ("add", "rename", "move", "what", "my brother", "mark"):  # adds, lists, facts, moves, questions
        assert kind in asked


def test_a_reply_is_scored_as_the_user_saw_it():
    assert check_reply({"contains_any": ["milk"], "not_contains": ["added"]}, "Milk, tomorrow.") == []
    assert check_reply({"not_contains": ["added"]}, "I added it.\n(Nothing was changed.)")
    assert check_reply({}, 'Use update_task with the "priority" field.', clean=True)
    assert check_reply({}, '<tools><function name="list_tasks"/></tools>', clean=True)
    assert check_reply({}, '{"added": {"id": 1}}', clean=True)
    assert check_reply({}, "Added buy milk for tomorrow.", clean=True) == []


@pytest.mark.slow
def test_a_correct_model_passes_every_scenario(tmp_path, capsys):
    stdout, result = run_evals(oracle(SCENARIOS), tmp_path, capsys)
    failed = {s["id"]: s["reasons"] for s in result["scenarios"] if not s["passed"]}
    assert failed == {}
    assert result["summary"]["passed"] == len(SCENARIOS)
    assert result["summary"]["replies_passed"] == result["summary"]["replies_checked"] >= 31
    assert result["summary"]["corrections"] == 0 == result["summary"]["reasks"]
    assert f"passed {len(SCENARIOS)}/{len(SCENARIOS)} (100%)" in stdout.splitlines()[-1]
    assert all(s["model_calls"] >= 1 and s["prompt_tokens"] > 0 for s in result["scenarios"])


MISTAKES = {
    "add-tomorrow": {
        "remind me to call the plumber tomorrow": [
            {
                "tool_calls": [
                    {"name": "add_task", "arguments": {"title": "Call the electrician", "due_date": "tomorrow"}}
                ]
            },
            {"content": "Added."},
        ]
    },
    "chat-hello": {  # (an add_task here is no longer a mistake that lands: small talk gets no write tools)
        "hi! how are you?": [{"content": "Hi! Tell me what to add_task for you."}]
    },
    "list-open": {
        "what's on my list?": [
            {"tool_calls": [{"name": "list_tasks", "arguments": {}}]},
            {"content": "You have nothing to do."},
        ]
    },
    "complete-not-delete": {
        "I finished the quarterly report": [
            {"tool_calls": [{"name": "complete_task", "arguments": {"id": 2}}]},
            {"content": "Done."},
        ]
    },
    "remember-fact": {"my sister Ana lives in Lisbon": [{"content": "Nice!"}]},
    # a conversation's third reply claims an add that never ran, and lists nothing (issue 27)
    "conv-issue": {"what's on my list this week?": [{"content": "I added a task to your list: 1. what's on my list?"}]},
    # the move also renamed the task to the word the user used for it
    "conv-move-then-rename": {
        "move the milk task to 2026-12-24": [
            {"tool_calls": [{"name": "list_tasks", "arguments": {"text": "milk"}}]},
            {
                "tool_calls": [
                    {"name": "update_task", "arguments": {"id": 1, "title": "milk", "due_date": "2026-12-24"}}
                ]
            },
            {"content": "Moved it."},
        ]
    },
    "ambiguous-add": {
        "add a task": [
            {"tool_calls": [{"name": "add_task", "arguments": {"title": "task"}}]},
            {"content": "Added a task."},
        ]
    },
}


@pytest.mark.slow
def test_a_mistaken_model_fails_exactly_the_mistaken_scenarios(tmp_path, capsys):
    stdout, result = run_evals(oracle(SCENARIOS, MISTAKES), tmp_path, capsys)
    failed = {s["id"] for s in result["scenarios"] if not s["passed"]}
    assert failed == set(MISTAKES)
    reasons = {s["id"]: " ".join(s["reasons"]) for s in result["scenarios"]}
    assert "electrician" in reasons["add-tomorrow"] and "reply contains 'add_task'" in reasons["chat-hello"]
    assert "no memory mentions 'Lisbon'" in reasons["remember-fact"]
    assert "reply 3: reply has none of ['milk', 'dentist']" in reasons["conv-issue"]
    assert "reply 3: reply contains 'added'" in reasons["conv-issue"]
    assert "reply 1: missing task" in reasons["conv-move-then-rename"]
    convs = {s["id"]: s for s in result["scenarios"]}
    assert convs["conv-issue"]["replies_passed"] == 2 and convs["conv-issue"]["corrections"] == 1
    assert "FAIL" in stdout


def test_compare_prints_runs_side_by_side(tmp_path):
    a = {
        "model": "small",
        "summary": {"passed": 1, "total": 2, "rate": 0.5, "model_calls": 3, "seconds": 1},
        "scenarios": [{"id": "x", "passed": True}, {"id": "y", "passed": False}],
    }
    b = {
        "model": "big",
        "summary": {"passed": 2, "total": 2, "rate": 1.0, "model_calls": 4, "seconds": 2},
        "scenarios": [{"id": "x", "passed": True}, {"id": "y", "passed": True}],
    }
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    p = subprocess.run(
        [sys.executable, "-m", "evals", "--compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")],
        cwd=ROOT,
        env=clean_env(),
        capture_output=True,
        text=True,
    )
    lines = p.stdout.splitlines()
    assert "small (a)" in lines[0] and "big (b)" in lines[0]
    assert lines[2].split() == ["y", "FAIL", "pass"]
    assert "1/2 (50%)" in p.stdout and "2/2 (100%)" in p.stdout


def test_task_matching_is_strict_about_dates_status_and_extras():
    actual = [{"title": "Buy oat milk", "due_date": "2026-12-02", "status": "open"}]
    assert match_tasks([{"title": "oat milk", "due_date": "2026-12-02"}], actual) == []
    assert match_tasks([{"title": "oat milk", "due_date": "2026-12-03"}], actual)
    assert match_tasks([{"title": "oat milk", "due_date": "2026-12-02", "status": "done"}], actual)
    assert match_tasks([], actual) == ["unexpected task " + str(actual[0])]
    assert match_tasks([{"title": "soy milk", "due_date": "2026-12-02"}], actual)


def fake_bfcl_wheel(path, answers=("x", "x", "x")):
    """A wheel laid out like bfcl-eval's, with two users and three questions (and their answers)."""
    import zipfile

    from evals.bfcl import SCENARIOS

    talk = {
        "customer": [
            "My name is Michael, and this is my first time here. I bought a blender last week.",
            "The blender arrived broken. I would like a refund to my Visa card.",
        ],
        "student": [
            "Monday: Team meeting ran long. Need to finish the thesis draft before Friday. Call the bursar.",
            "I play chess on weekends to relax. My roommate Tony taught me.",
        ],
    }
    questions = [
        ("memory_0-customer-0", "customer", "What is my first name?", "My name is Michael"),
        ("memory_1-customer-1", "customer", "How should my refund be paid?", "...a refund to my Visa card."),
        (
            "memory_2-student-0",
            "student",
            "When is the thesis draft due?",
            "Monday: Need to finish the thesis draft before Friday.",
        ),
    ]
    with zipfile.ZipFile(path, "w") as z:
        for s in SCENARIOS:
            rows = [
                {
                    "id": f"p-{s}",
                    "topic": "life",
                    "question": [[{"role": "user", "content": t}] for t in talk.get(s, [])],
                }
            ]
            z.writestr(f"bfcl_eval/data/memory_prereq_conversation/memory_{s}.json", "\n".join(map(json.dumps, rows)))
        z.writestr(
            "bfcl_eval/data/BFCL_v4_memory.json",
            "\n".join(
                json.dumps({"id": i, "scenario": s, "question": [[{"role": "user", "content": q}]]})
                for i, s, q, _ in questions
            ),
        )
        z.writestr(
            "bfcl_eval/data/possible_answer/BFCL_v4_memory.json",
            "\n".join(
                json.dumps({"id": i, "ground_truth": [a], "source": e})
                for (i, _, _, e), a in zip(questions, answers, strict=True)
            ),
        )


def test_memory_eval_finds_each_questions_evidence_and_scores_every_method(fake, tmp_path):
    wheel = tmp_path / "bfcl.whl"
    fake_bfcl_wheel(wheel)
    env = clean_env()
    env.update(OLLAMA_HOST=fake.url, PLANNER_HOME=str(tmp_path), PLANNER_EVALS_CACHE=str(tmp_path))  # not ~/.cache
    out = tmp_path / "memory.json"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "evals",
            "memory",
            "--set",
            "bfcl",
            "--data",
            str(wheel),
            "--embed-model",
            "embed",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    results = json.loads(out.read_text())
    assert [r["embedder"] for r in results] == ["test embedder", "embed"]
    assert all(r["questions"] == 3 and r["unmatched"] == 0 and r["memories"] == 9 for r in results)
    for r in results:
        assert set(r["recall"]) == {"vector", "keyword", "fused, before", "fused"}
        assert r["recall"]["keyword"]["5"] == 1.0  # every question shares a rare word with its evidence
    assert "recall@1" in p.stdout and "3 questions with their evidence still stored (0 lost)" in p.stdout


def test_evidence_is_the_turn_holding_the_excerpt_and_the_sentences_that_are_mostly_it():
    from evals.bfcl import evidence_ids, evidence_sentences, sentences

    turns = {0: "Monday: Team meeting ran long. Need to finish the thesis draft before Friday.", 1: "Tuesday: thesis."}
    assert evidence_ids("Monday: Need to finish the thesis draft before Friday.", turns) == {0}
    assert evidence_ids("...something never said...", turns) == set()
    assert sentences(turns[0]) == ["Monday: Team meeting ran long.", "Need to finish the thesis draft before Friday."]
    assert evidence_sentences("Monday: Need to finish the thesis draft before Friday.", turns[0]) == {
        "Need to finish the thesis draft before Friday."
    }


def test_tokens_counts_each_tool_and_the_prompt_by_what_adding_it_adds():
    # The oracle: a server whose prompt count is 7 a tool, 50 for the tools header, and a token a character
    # of the system prompt; evals/tokens.py must recover exactly those from differences alone.
    from evals.tokens import measure, table

    model = ScriptedModel()

    def server(body):
        tools = body.get("tools") or []
        return {
            "content": "x",
            "prompt_eval_count": len(body["messages"][0]["content"]) + 7 * len(tools) + 50 * bool(tools),
        }

    model.respond_with("main", server)
    m = measure(model, "main")
    assert set(m["tools"].values()) == {7} and m["tools_header"] == 50
    assert m["system_full"] == len(system_prompt(dt.date(2026, 12, 1))) - len(".")
    assert sum(m["groups"].values()) == 7 * len(m["tools"]) and "| **all tools** |" in table(m)
