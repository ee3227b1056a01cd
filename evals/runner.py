"""Run planner scenarios against a model and score the end state.

A scenario (evals/scenarios.json) gives a starting state (tasks, memories), one
or more runs of user lines (each run is a new session, as if the user started
the planner again), and what must hold afterwards:

    expect.tasks               the exact task list (title words, due date, status)
    expect.unchanged           the task list must be as it started
    expect.memories_contain    words some stored memory must contain
    expect.reply_contains_any  the last reply contains at least one of these
    expect.reply_not_contains  the last reply contains none of these
    expect.clean_replies       no reply shows a tool name, tool-call markup or JSON

A conversation (category "conversation") is 3-8 requests in one session, and
is scored by each reply as well as by the end state: `replies` gives, for each
user line in order, what must hold after it:

    tasks            the exact task list after this request
    unchanged        this request changed no task
    contains_any     the reply contains at least one of these
    not_contains     the reply contains none of these
    events_contain   words some calendar event's title must contain after it
    memories_contain words some stored memory must contain after it

The sessions (category "session", the conversation eval of issue 34) are six
conversations of three to five everyday requests: adding with dates, a fact, a
question about the week, a plan, a correction; `python -m evals --only session`.

A reply is scored as the user saw it: with the line saying what did change,
when the planner added one (agent/claims.py). Between requests the background
memory work is waited for, as a user typing the next message would give it
time to finish; its model calls are counted apart (background_calls).

"Today" is fixed per scenario (default 2026-12-01, a Tuesday), so relative
dates are reproducible. The agent is built exactly as `python agent.py`
builds it (agent.build_agent), so what is scored is what a user runs.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from planner.agent.build import build_agent
from planner.memory.history import new_session_name
from planner.model.base import ChatModel
from planner.model.client import ModelError
from planner.settings import Config
from planner.storage.db import Store

SCENARIOS = Path(__file__).with_name("scenarios.json")
DEFAULT_TODAY = "2026-12-01"


@dataclass
class Outcome:
    """How one scenario went."""

    id: str
    category: str
    passed: bool = False
    reasons: list[str] = field(default_factory=list)
    model_calls: int = 0
    prompt_tokens: int = 0
    eval_tokens: int = 0
    seconds: float = 0.0
    replies: list[str] = field(default_factory=list)
    replies_passed: int = 0  # replies that met their `replies` checks (conversations)
    replies_checked: int = 0
    corrections: int = 0  # replies shown with the line saying what did change
    reasks: int = 0  # replies the model was asked to redo because they claimed a change that did not happen
    background_calls: int = 0  # memory extraction, summaries: model calls after the replies
    background_prompt_tokens: int = 0


def load_scenarios(path: Path = SCENARIOS) -> list[dict[str, Any]]:
    """The scenario list from a JSON file."""
    return json.loads(Path(path).read_text())


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _tasks(store: Store) -> list[dict[str, Any]]:
    rows = store.conn().execute("SELECT title, due_date, status FROM tasks ORDER BY id")
    return [dict(r) for r in rows]


def match_tasks(expected: list[dict[str, Any]], actual: list[dict[str, Any]]) -> list[str]:
    """Why the actual task list differs from the expected one ([] if it matches).

    A title matches when it contains every word of the expected title; each
    expected task must match a different actual task, with the same due date
    and status, and there must be no extra tasks.
    """
    reasons = []
    left = list(actual)
    for want in expected:
        hit = next(
            (
                t
                for t in left
                if _words(want["title"]) <= _words(t["title"])
                and t["due_date"] == want.get("due_date")
                and t["status"] == want.get("status", "open")
            ),
            None,
        )
        if hit is None:
            near = [t for t in left if _words(want["title"]) <= _words(t["title"])]
            got = f"; found {near[0]}" if near else ""
            reasons.append(f"missing task {want}{got}")
        else:
            left.remove(hit)
    reasons += [f"unexpected task {t}" for t in left]
    return reasons


def check(
    scn: dict[str, Any], before: list[dict[str, Any]], after: list[dict[str, Any]], store: Store, reply: str
) -> list[str]:
    """Every way the end state misses the scenario's expectations."""
    exp = scn["expect"]
    reasons: list[str] = []
    if "tasks" in exp:
        reasons += match_tasks(exp["tasks"], after)
    if exp.get("unchanged") and after != before:
        reasons.append(f"tasks changed: {after}")
    memories = [r[0] for r in store.conn().execute("SELECT text FROM memories")]
    for word in exp.get("memories_contain", []):
        if not any(word.lower() in m.lower() for m in memories):
            reasons.append(f"no memory mentions {word!r}")
    reasons += check_reply(
        {"contains_any": exp.get("reply_contains_any", []), "not_contains": exp.get("reply_not_contains", [])}, reply
    )
    return reasons


_TOOL_NAMES = re.compile(
    r"\b(?:add|list|complete|update|delete)_tasks?\b|\bget_today\b|\bquery_planner\b|\bundo_last_change\b"
)
_MARKUP = re.compile(r"<\s*/?\s*(?:tools?|tool_call|function|invoke|parameter)\b|^\s*[\[{]", re.I)


def check_reply(want: dict[str, Any], reply: str, clean: bool = False) -> list[str]:
    """Every way one reply misses what it must say (contains_any, not_contains) or shows what it must not."""
    low, reasons = reply.lower(), []
    options = want.get("contains_any", [])
    if options and not any(o.lower() in low for o in options):
        reasons.append(f"reply has none of {options}: {reply[:80]!r}")
    for bad in want.get("not_contains", []):
        if bad.lower() in low:
            reasons.append(f"reply contains {bad!r}: {reply[:80]!r}")
    if clean and (_TOOL_NAMES.search(reply) or _MARKUP.search(reply)):
        reasons.append(f"reply shows tool names or markup: {reply[:80]!r}")
    return reasons


CONFIRM: dict[str | None, Callable[[str], bool] | None] = {
    "yes": lambda question: True,
    "no": lambda question: False,
    None: None,  # no terminal: destructive tools are refused
}


def run_scenario(scn: dict[str, Any], llm: ChatModel, base: Config, workdir: Path) -> Outcome:
    """Run one scenario in a fresh database and score it."""
    out = Outcome(scn["id"], scn.get("category", ""))
    store = Store(workdir / f"{scn['id']}.db")
    config = base.replace(db_path=store.path, today=dt.date.fromisoformat(scn.get("today", DEFAULT_TODAY)))
    t0 = time.perf_counter()
    observer = llm.observer

    def count(call: dict[str, Any]) -> None:
        if observer:
            observer(call)
        if call.get("purpose") not in ("reply", "critic", "embedding"):
            out.background_calls += 1
            out.background_prompt_tokens += call.get("prompt_tokens", 0)

    llm.observer = count
    checks = list(scn.get("replies", []))
    try:
        with store.write() as conn:
            conn.executemany(
                "INSERT INTO tasks (title, due_date, status) VALUES (?, ?, ?)",
                [(t["title"], t.get("due_date"), t.get("status", "open")) for t in scn.get("tasks", [])],
            )
        seeder = build_agent(config, store, llm, "seed", None)
        for fact in scn.get("memories", []):
            seeder.memory.remember(fact)
        seeder.close()
        before = _tasks(store)
        reply = ""
        for run in scn["runs"]:
            agent = build_agent(config, store, llm, new_session_name(), CONFIRM[scn.get("confirm")])
            try:
                for line in run:
                    was = _tasks(store)
                    r = agent.run_turn(line)
                    if agent.keeper:  # the background memory work of this request, before the next
                        agent.keeper.worker.drain(300)
                    out.model_calls += r.model_calls
                    out.prompt_tokens += r.prompt_tokens
                    out.eval_tokens += r.eval_tokens
                    # as the user saw it; getattr: the runner also scores agents from before the claim check
                    correction = getattr(r, "correction", None)
                    reply = r.reply + (f"\n({correction})" if correction else "")
                    out.corrections += bool(correction)
                    out.reasks += bool(getattr(r, "reasked", False))
                    out.replies.append(reply)
                    if r.error:
                        out.reasons.append(f"model error: {r.error}")
                    if checks:
                        n = len(out.replies)
                        want = checks.pop(0)
                        why = _check_turn(want, was, _tasks(store), reply, scn["expect"].get("clean_replies"))
                        why += _check_stored(want, store)
                        out.replies_checked += 1
                        out.replies_passed += not why
                        out.reasons += [f"reply {n}: {w}" for w in why]
                    elif scn["expect"].get("clean_replies"):
                        out.reasons += check_reply({}, reply, clean=True)
            finally:
                agent.close(drain_seconds=300)  # later runs must see what this one remembered
        out.reasons += check(scn, before, _tasks(store), store, reply)
    except ModelError as e:
        out.reasons.append(f"model error: {e}")
    finally:
        llm.observer = observer
        store.close()
    out.seconds = time.perf_counter() - t0
    out.passed = not out.reasons
    return out


def _check_turn(
    want: dict[str, Any], before: list[dict[str, Any]], after: list[dict[str, Any]], reply: str, clean: bool
) -> list[str]:
    """Every way one request of a conversation misses its checks: the tasks after it, and its reply."""
    reasons = match_tasks(want["tasks"], after) if "tasks" in want else []
    if want.get("unchanged") and after != before:
        reasons.append(f"tasks changed: {after}")
    return reasons + check_reply(want, reply, clean)


def _check_stored(want: dict[str, Any], store: Store) -> list[str]:
    """Every event title and memory one request of a conversation should have left, and did not."""
    reasons = []
    for table, words in (("events", want.get("events_contain", [])), ("memories", want.get("memories_contain", []))):
        column = "title" if table == "events" else "text"
        stored = [r[0] for r in store.conn().execute(f"SELECT {column} FROM {table}")]  # noqa: S608  (two fixed names)
        reasons += [f"no {table[:-1]} mentions {w!r}" for w in words if not any(w.lower() in x.lower() for x in stored)]
    return reasons


def run_suite(
    scenarios: list[dict[str, Any]],
    llm: ChatModel,
    base: Config,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Run scenarios one after another, each in its own database."""
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="planner-evals-") as d:
        for scn in scenarios:
            o = run_scenario(scn, llm, base, Path(d))
            outcomes.append(o)
            if on_outcome:
                on_outcome(o)
    return outcomes


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    """Totals over a run."""
    n = len(outcomes)
    passed = sum(o.passed for o in outcomes)
    return {
        "passed": passed,
        "total": n,
        "rate": passed / n if n else 0.0,
        "model_calls": sum(o.model_calls for o in outcomes),
        "prompt_tokens": sum(o.prompt_tokens for o in outcomes),
        "eval_tokens": sum(o.eval_tokens for o in outcomes),
        "seconds": sum(o.seconds for o in outcomes),
        "replies_passed": sum(o.replies_passed for o in outcomes),
        "replies_checked": sum(o.replies_checked for o in outcomes),
        "corrections": sum(o.corrections for o in outcomes),
        "reasks": sum(o.reasks for o in outcomes),
        "background_calls": sum(o.background_calls for o in outcomes),
        "background_prompt_tokens": sum(o.background_prompt_tokens for o in outcomes),
    }


def report(outcomes: list[Outcome], config: Config) -> dict[str, Any]:
    """The JSON document `--json` writes."""
    return {
        "model": config.model,
        "critic_model": config.critic_model,
        "embed_model": config.embed_model,
        "reflect": config.reflect,
        "guards": config.guards,
        "tool_groups": getattr(config, "tool_groups", "all"),  # (runs from before tool groups sent all)
        "when": dt.datetime.now().isoformat(timespec="seconds"),
        "summary": summary(outcomes),
        "scenarios": [asdict(o) for o in outcomes],
    }
