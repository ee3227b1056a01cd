"""The memory eval's own data and scoring: the generated life log, recall per kind, and the end-to-end
answers (--qa), run through the real CLI against the fake server."""

import collections
import datetime as dt
import json
import re
import subprocess
import sys

import pytest
from conftest import ROOT, clean_env
from helpers import in_process
from test_evals import fake_bfcl_wheel

from evals import lifelog
from evals.memory_qa import contained


def test_the_life_log_is_the_same_for_a_seed_and_another_for_another_seed():
    a, b, c = lifelog.generate(26), lifelog.generate(26), lifelog.generate(27)
    assert a == b
    assert [s.text for s in a.said] != [s.text for s in c.said]
    assert [s.day for s in a.said] == sorted(s.day for s in a.said)
    assert all(lifelog.START <= s.day <= lifelog.END for s in a.said)


def names_day(s: lifelog.Said, day: dt.date) -> bool:
    """Whether a sentence said on s.day tells of `day`: said that day, "yesterday", or by its weekday within two weeks."""
    gap = (day - s.day).days
    if "yesterday" in s.text.lower():
        return gap == -1
    return gap == 0 or (abs(gap) <= 14 and f"{day:%A}" in s.text)


def test_the_life_log_asks_every_kind_and_every_answer_was_said():
    log = lifelog.generate(26)
    kinds = {q.kind for q in log.questions}
    assert kinds == set(lifelog.KINDS)
    said = collections.defaultdict(list)  # a fact may be said twice ("I fly to Oslo on…", "Got back…")
    for s in log.said:
        if s.key:
            said[s.key].append(s)
    for q in log.questions:
        if q.kind == "abstention":
            assert not q.evidence and not q.answer
            continue
        assert q.evidence and q.answer
        evidence = [s for group in q.evidence for k in group for s in said[k]]
        iso = [dt.date.fromisoformat(a) for a in q.answer if re.fullmatch(r"\d{4}-\d\d-\d\d", a)]
        if iso:  # a day: some evidence names it, as the day it was said, "yesterday", or its weekday nearby
            assert q.kind == "when" and any(names_day(s, iso[0]) for s in evidence), q
        else:
            assert any(a.lower() in " ".join(s.text for s in evidence).lower() for a in q.answer), q
    assert all(q.context for q in log.questions if q.kind == "follow-up")
    assert len([q for q in log.questions if q.kind == "multi-hop"]) >= 10


def test_an_answer_is_contained_in_any_case_and_not_knowing_counts_only_for_abstentions():
    assert contained("Your dentist is Dr. OKAFOR.", ["Okafor"])
    assert not contained("I don't know your dentist.", ["Okafor"])
    assert contained("I don't have that in my notes.", [])
    assert contained("You never told me about a brother.", [])
    assert not contained("Your brother is Tom.", [])


def run_eval(fake, tmp_path, *args):
    """`python -m evals memory ARGS --json FILE`, run in this process (helpers.in_process): what it printed and
    the JSON it wrote. The test of an unreachable server below starts it as a process."""
    from evals.__main__ import main

    env = clean_env(OLLAMA_HOST=fake.url, PLANNER_HOME=str(tmp_path), PLANNER_EVALS_CACHE=str(tmp_path / "cache"))
    out = tmp_path / "out.json"
    p = in_process(["memory", *args, "--json", str(out)], env, main=main, program=ROOT / "evals" / "__main__.py")
    assert p.returncode == 0, p.stderr
    return p.stdout, json.loads(out.read_text())


@pytest.mark.slow
def test_the_life_log_is_scored_per_kind_for_the_search_before_and_now(fake, tmp_path):
    stdout, results = run_eval(fake, tmp_path, "--set", "lifelog", "--seeds", "26")
    (r,) = results
    assert r["dataset"] == "lifelog" and r["unmatched"] == 0 and r["questions"] == len(lifelog.generate(26).questions)
    assert set(r["by_kind"]["fused"]) == set(lifelog.KINDS)
    for method in ("vector", "keyword", "fused, before", "fused"):
        assert all(0 <= v <= 1 for kind in r["by_kind"][method].values() for v in kind.values())
    # what the new search adds is measured, not assumed: here the questions that refer back
    assert r["by_kind"]["fused"]["follow-up"]["1"] > r["by_kind"]["fused, before"]["follow-up"]["1"]
    assert "recall@1 @3 @5 by kind" in stdout and "follow-up" in stdout


@pytest.mark.slow
def test_the_retrieval_eval_asks_at_most_limit_questions_of_each_kind(fake, tmp_path):
    stdout, results = run_eval(fake, tmp_path, "--set", "lifelog", "--seeds", "26,27", "--limit", "3")
    (r,) = results
    assert r["kinds"] == dict.fromkeys(lifelog.KINDS, 3) and r["questions"] == 3 * len(lifelog.KINDS)


def answers_from_notes(body):
    """A main model that answers with the first note attached to the question, or says it does not know."""
    last = body["messages"][-1]["content"]
    notes = [line[2:] for line in last.splitlines() if line.startswith("- ")]
    return {"content": notes[0] if notes else "I don't know that."}


@pytest.mark.slow
def test_qa_asks_the_planner_each_question_and_scores_its_answer_two_ways(fake, tmp_path):
    wheel = tmp_path / "bfcl.whl"
    fake_bfcl_wheel(wheel, answers=["Michael", "Visa", "Friday"])
    fake.respond_with("main", answers_from_notes)
    judged = []

    def critic(body):
        judged.append(body["messages"][-1]["content"])
        return {"content": json.dumps({"correct": "Michael" in body["messages"][-1]["content"].split("Reply:")[1]})}

    fake.respond_with("critic", critic)
    stdout, result = run_eval(
        fake,
        tmp_path,
        "--qa",
        "--set",
        "bfcl",
        "--data",
        str(wheel),
        "--embed-model",
        "embed",
        "--model",
        "main",
        "--critic-model",
        "critic",
    )
    answers = result["answers"]
    assert len(answers) == 3 and len(judged) == 3
    by_question = {a["question"]: a for a in answers}
    assert by_question["What is my first name?"]["contained"] and by_question["What is my first name?"]["judged"]
    assert by_question["How should my refund be paid?"]["contained"]
    assert not by_question["How should my refund be paid?"]["judged"]  # the critic disagreed: both are shown
    assert "Right answer: Michael" in judged[0]
    totals = result["results"]["bfcl"]["single"]
    assert totals["n"] == 3 and totals["calls"] >= 6  # each question: the planner's call and the judgement
    assert "contained" in stdout and "judged" in stdout


@pytest.mark.slow
def test_qa_with_an_unreachable_server_fails_with_one_line(fake, tmp_path):
    wheel = tmp_path / "bfcl.whl"
    fake_bfcl_wheel(wheel)
    env = clean_env(OLLAMA_HOST="http://127.0.0.1:9", PLANNER_HOME=str(tmp_path), PLANNER_EVALS_CACHE=str(tmp_path))
    p = subprocess.run(
        [sys.executable, "-m", "evals", "memory", "--qa", "--set", "bfcl", "--data", str(wheel), "--embed-model", "e"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 1 and "Traceback" not in p.stderr + p.stdout
    assert "error:" in p.stdout + p.stderr


class StubCritic:
    """A chat_json that answers with a fixed content."""

    def __init__(self, content):
        self.content, self.asked = content, []

    def chat_json(self, model, messages, **kwargs):
        from planner.model.client import ChatResult

        self.asked.append(messages[-1]["content"])
        return ChatResult(content=self.content)


def test_the_critics_second_look_puts_its_picks_first_and_a_useless_answer_changes_nothing(memory):
    from evals.memory_variants import _critic_picks

    for fact in ("The user's dentist is Dr. Okafor.", "The user's cat is Pixel.", "The user likes tea."):
        memory.store_cell(fact)
    planner_order = [h["id"] for h in memory.search("who is my dentist?", 5)]
    critic = StubCritic('{"best": [3, 99, 3]}')  # a number out of range and a repeat are ignored
    got = _critic_picks(critic, "critic")(memory, "who is my dentist?")
    assert got[0] == planner_order[2] and sorted(got) == sorted(planner_order)
    assert "1. " in critic.asked[0] and "Question: who is my dentist?" in critic.asked[0]
    assert _critic_picks(StubCritic("not json"), "critic")(memory, "who is my dentist?") == planner_order


def test_the_answers_table_counts_every_kind_of_every_set():
    from evals.memory_qa import table

    row = {"n": 2, "contained": 1, "judged": 1, "calls": 6, "seconds": 10.0}
    out = table({"realtalk/tuning": {k: dict(row) for k in ("multi-hop", "temporal", "open-domain")}})
    lines = {line.split()[1]: line.split() for line in out.splitlines()[1:]}
    assert set(lines) == {"multi-hop", "temporal", "open-domain", "all"}
    assert lines["all"][2:4] == ["6", "0.50"]  # 6 questions, 3 of them contained
