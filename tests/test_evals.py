"""The eval runner, run as `python -m evals` against the fake server with a
scripted oracle (everything passes) and a mistaken oracle (exactly the
mistaken scenarios fail): proof that the scoring can fail."""

import json
import subprocess
import sys

import pytest
from conftest import ROOT, clean_env

from evals.runner import load_scenarios, match_tasks
from evals.scripted import oracle

SCENARIOS = load_scenarios()


def run_evals(fake, tmp_path, *args):
    env = clean_env()
    env.update(OLLAMA_HOST=fake.url, PLANNER_HOME=str(tmp_path))
    out = tmp_path / "run.json"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "evals",
            "--model",
            "main",
            "--critic-model",
            "critic",
            "--embed-model",
            "embed",
            "--json",
            str(out),
            *args,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout, json.loads(out.read_text())


def test_the_suite_covers_what_the_planner_must_do():
    assert len(SCENARIOS) >= 30
    categories = {s["category"] for s in SCENARIOS}
    assert {"add", "complete", "update", "delete", "list", "memory", "chat", "ambiguous", "safety"} <= categories
    assert any(len(s["runs"]) > 1 for s in SCENARIOS)  # a fact used in a later run
    lines = [line for s in SCENARIOS for run in s["runs"] for line in run]
    assert len(lines) == len(set(lines))  # the oracle finds scenarios by their lines
    assert len({s["id"] for s in SCENARIOS}) == len(SCENARIOS)


@pytest.mark.slow
def test_a_correct_model_passes_every_scenario(fake, tmp_path):
    fake.respond_with("main", oracle(SCENARIOS))
    stdout, result = run_evals(fake, tmp_path)
    failed = {s["id"]: s["reasons"] for s in result["scenarios"] if not s["passed"]}
    assert failed == {}
    assert result["summary"]["passed"] == len(SCENARIOS)
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
    "chat-hello": {
        "hi! how are you?": [
            {"tool_calls": [{"name": "add_task", "arguments": {"title": "hello"}}]},
            {"content": "Added hello."},
        ]
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
    "ambiguous-add": {
        "add a task": [
            {"tool_calls": [{"name": "add_task", "arguments": {"title": "task"}}]},
            {"content": "Added a task."},
        ]
    },
}


@pytest.mark.slow
def test_a_mistaken_model_fails_exactly_the_mistaken_scenarios(fake, tmp_path):
    fake.respond_with("main", oracle(SCENARIOS, MISTAKES))
    stdout, result = run_evals(fake, tmp_path)
    failed = {s["id"] for s in result["scenarios"] if not s["passed"]}
    assert failed == set(MISTAKES)
    reasons = {s["id"]: " ".join(s["reasons"]) for s in result["scenarios"]}
    assert "electrician" in reasons["add-tomorrow"] and "tasks changed" in reasons["chat-hello"]
    assert "no memory mentions 'Lisbon'" in reasons["remember-fact"]
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
        ("memory_2-student-0", "student", "When is the thesis draft due?", "Monday: Need to finish the thesis draft before Friday."),
    ]  # fmt: skip
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
        z.writestr("bfcl_eval/data/possible_answer/BFCL_v4_memory.json", "\n".join(
            json.dumps({"id": i, "ground_truth": [a], "source": e}) for (i, _, _, e), a in zip(questions, answers, strict=True)))  # fmt: skip


def test_memory_eval_finds_each_questions_evidence_and_scores_every_method(fake, tmp_path):
    wheel = tmp_path / "bfcl.whl"
    fake_bfcl_wheel(wheel)
    env = clean_env()
    env.update(OLLAMA_HOST=fake.url, PLANNER_HOME=str(tmp_path), PLANNER_EVALS_CACHE=str(tmp_path))  # not ~/.cache
    out = tmp_path / "memory.json"
    p = subprocess.run(
        [sys.executable, "-m", "evals", "memory", "--set", "bfcl", "--data", str(wheel), "--embed-model", "embed",
         "--json", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
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
