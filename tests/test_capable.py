"""Requests as people word them, answered the way a capable (4-14B) model answers them.

Each scenario scripts exactly the calls a capable model makes and asserts the
end state of the database, that every call ran as the model sent it (no guard
changed, dropped, refused or skipped anything), and that the reply is the
model's own. Every scenario runs twice: with the `standard` guard profile, and
with `auto` on a main model that Ollama reports as 9B (which must pick
`standard`). Today is Tuesday 2026-12-01.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import capable_dates
import capable_plans
import capable_scenarios
import pytest
from capable_scenarios import Scenario

from planner.prompts import CLAIM_PROMPT
from planner.tools import dispatch

# Dates, times and repeats first: SCENARIOS[0] is the date move it always was.
SCENARIOS = capable_dates.SCENARIOS + capable_scenarios.SCENARIOS + capable_plans.SCENARIOS


def seed(ctx, store, s: Scenario) -> None:
    for args in s.tasks:
        out, ok = dispatch(ctx, "add_task", args)
        assert ok, out
    for fact in s.memories:
        ctx.memory.remember(fact)


def row(store, title: str) -> dict[str, Any] | None:
    r = store.conn().execute("SELECT * FROM tasks WHERE title = ?", (title,)).fetchone()
    if r is None:
        return None
    out = dict(r)
    out["tags"] = [t[0] for t in store.conn().execute("SELECT tag FROM task_tags WHERE task_id = ?", (r["id"],))]
    return out


@pytest.mark.parametrize("profile", ["standard", "auto-9B"])
@pytest.mark.parametrize("s", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_a_capable_model_gets_what_it_asked_for(s, profile, model, make_agent, ctx, store):
    seed(ctx, store, s)
    asked: list[str] = []
    ctx.confirm = None if s.confirm is None else (lambda q: asked.append(q) or s.confirm)
    model.sizes["main"] = "9.0B"
    model.respond_with("critic", lambda body: {"content": '{"done": true, "critique": ""}'})
    agent = make_agent(guards="standard" if profile == "standard" else "auto")
    for text, replies in s.turns:
        model.script("main", *replies)
        r = agent.run_turn(text)
        assert r.error is None and not r.critiques
        # the claim check never fires on a correct turn: no "what did change" line, no second ask
        assert r.correction is None and not r.reasked, (text, r.correction)
        assert r.reply == replies[-1]["content"], "the reply is the model's own"
        for c in r.tool_calls:
            # ran exactly as sent, and nothing in the result contradicts the reply
            assert c["arguments"] == c["sent"], c
            assert c["ok"] and not ({"error", "note", "repeat"} & set(c["result"])), c
    assert agent.guards.profile == "standard"
    assert not model.scripts["main"], "the model was asked for every scripted reply"
    claim_note = CLAIM_PROMPT.split("{")[0]
    assert not any(claim_note in str(m.get("content")) for b in model.chats("main") for m in b["messages"])
    for title, columns in s.expect.items():
        got = row(store, title)
        assert got is not None, f"{title!r} missing"
        assert {k: got[k] for k in columns} == columns
    for title in s.gone:
        assert row(store, title) is None
    stored = [m[0] for m in store.conn().execute("SELECT text FROM memories")]
    assert set(s.memories) <= set(stored)
    if s.reply_has:
        assert s.reply_has in r.reply
    if s.asked is not None:
        assert len(asked) == s.asked


def test_the_suite_is_large_enough_and_covers_multi_turn_requests():
    assert len(SCENARIOS) >= 30
    assert sum(len(s.turns) > 1 for s in SCENARIOS) >= 4


SMALL = json.loads((Path(__file__).parent / "data" / "small_profile_notes.json").read_text())


def test_the_recorded_run_of_the_small_profile_covers_every_scenario():
    assert SMALL["scenarios"] == len(SCENARIOS) and set(SMALL["noted"]) <= {s.id for s in SCENARIOS}


@pytest.mark.parametrize("s", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_the_same_requests_on_a_small_model_are_changed_only_with_a_note(s, model, make_agent, ctx, store):
    """The small profile may change a capable model's call, but never silently; which scenarios it touches is
    the recorded run in tests/data/small_profile_notes.json, so a guard that starts or stops changing one shows."""
    model.sizes["main"] = "1.5B"  # auto picks small
    seed(ctx, store, s)
    ctx.confirm = None if s.confirm is None else (lambda q: s.confirm)
    agent = make_agent(reflect=False)
    calls = []
    for text, replies in s.turns:
        model.script("main", *replies)
        model.respond_with("main", lambda body: {"content": "ok"})  # a recovery may cost the model another call
        r = agent.run_turn(text)
        json.dumps(r.tool_calls)  # serialisable for the UI and the evals
        calls += r.tool_calls
    assert agent.guards.profile == "small"
    noted = [c for c in calls if "note" in (c["result"] or {})]
    assert all(c in noted for c in calls if c["arguments"] != c["sent"])  # changed: said so in its result
    assert bool(noted) == (s.id in SMALL["noted"]), [c["result"].get("note") for c in noted]
