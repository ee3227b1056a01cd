"""A run you can replay: each turn of an agent as JSON, what it was asked, what it did and why.

    record(agent, "run.json")          # every later agent.run_turn is added to run.json
    python agent.py --trajectory run.json "add milk tomorrow"

Built from what the loop already reports, so the loop needs no change for it: the events of
`run_turn(text, on_event)` (turn.py's EventKind), the TurnResult, the messages the turn stored and
the questions the user was asked (the confirm callback, wrapped). A turn is a list of steps in the
order they happened:

    {"model": {"said": "...", "prompt_tokens": 812, "eval_tokens": 31, "seconds": 1.2}}   one model call
    {"calls": [{"name", "sent", "arguments", "ok", "result", "refused"}, ...]}        the calls it asked for
    {"asked": {"question": "Delete task 2 ...?", "answer": true}}                    the user's y/N
    {"critic": {"done": false, "critique": "..."}}                                   the critic's verdict
    {"warning": "..."}

then the reply as the user saw it, the correction and re-ask of the claim check, and the messages
stored. "sent" is the call as the model wrote it, "arguments" as it ran (a guard's change says so
in the result's "note"); "refused" is why a yes was missing. The file is rewritten after every turn,
through a temporary file, so a run that is killed leaves the turns before it readable.

`comparable()` leaves out what changes from run to run (seconds, the session's name, the tool
pool's order), so two runs of the same script compare equal unless the agent did something else:
tests/test_trajectory.py keeps a few of the scripted eval suite's runs as golden files.

Trade-off: the calls of one step come from the TurnResult (call order), not from the tool_end
events, which arrive in the order the thread pool finishes them; a step's events say how many
calls it had. A question is put before the calls step of the model call that led to it (a read of
the same reply may finish before it is asked). A turn interrupted mid-step puts its cancelled
calls in a step of their own.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from planner.agent.loop import Agent
from planner.agent.turn import Event, TurnResult
from planner.settings import VERSION

log = logging.getLogger("planner")

TIMINGS = frozenset({"seconds", "load_seconds", "model_seconds", "tool_seconds", "ms"})


class Recorder:
    """Keeps the turns an agent runs, and writes them to `path` (if given) after each one."""

    def __init__(self, agent: Agent, path: Path | str | None = None):
        self.agent = agent
        self._run = agent.run_turn  # the agent's own, before record() puts this one in its place
        self.path = Path(path) if path else None
        self.turns: list[dict[str, Any]] = []
        self._steps: list[dict[str, Any]] | None = None  # the running turn's steps, for its questions
        self._lock = threading.Lock()  # events and questions come from the tool threads too

    def document(self) -> dict[str, Any]:
        """The whole run: the settings that shape it, and its turns."""
        c = self.agent.config
        return {
            "planner": VERSION,
            "model": c.model,
            "critic_model": c.critic_model if c.reflect else None,
            "guards": c.guards,
            "today": self.agent.today().isoformat(),
            "turns": self.turns,
        }

    def run_turn(self, text: str, on_event: Event | None = None) -> TurnResult:
        """Agent.run_turn, recorded: the events pass through to `on_event` unchanged."""
        session = self.agent.session
        before = len(self.agent.transcript())
        steps: list[dict[str, Any]] = []
        ends: dict[int, int] = {}  # a "calls" step's index -> the tool_end events it had
        batch: int | None = None  # the "calls" step of the current model call

        def step(kind: str, data: dict[str, Any]) -> None:
            nonlocal batch
            if kind == "status" and data.get("text") == "thinking…":  # a main-model call starts
                steps.append({"model": {"said": ""}})
                batch = None
            elif kind == "token" and steps and "model" in steps[-1]:
                steps[-1]["model"]["said"] += data["text"]
            elif kind == "model" and steps and "model" in steps[-1]:
                steps[-1]["model"].update({k: v for k, v in data.items() if k != "model"})
            elif kind == "tool_end":
                if batch is None:
                    steps.append({"calls": []})
                    batch = len(steps) - 1
                ends[batch] = ends.get(batch, 0) + 1
            elif kind == "critic":
                steps.append({"critic": {"done": data["done"], "critique": data["critique"]}})
            elif kind == "warning":
                steps.append({"warning": data["text"]})

        def on(kind: Any, data: dict[str, Any]) -> None:
            with self._lock:
                step(kind, data)
            if on_event:
                on_event(kind, data)

        with self._lock:
            self._steps = steps
        try:
            result = self._run(text, on)
        finally:
            with self._lock:
                self._steps = None
        calls = list(result.tool_calls)  # in call order
        for i in sorted(ends):
            steps[i]["calls"], calls = calls[: ends[i]], calls[ends[i] :]
        if calls:  # cancelled by Ctrl-C before their tool_end
            steps.append({"calls": calls})
        self.turns.append(
            {
                "request": text,
                "session": session,
                "steps": _questions_first(steps),
                "reply": result.reply,
                "correction": result.correction,
                "reasked": result.reasked,
                "gave_up": result.gave_up,
                "error": result.error,
                "interrupted": result.interrupted,
                "figures": {
                    "model_calls": result.model_calls,
                    "prompt_tokens": result.prompt_tokens,
                    "eval_tokens": result.eval_tokens,
                    "model_seconds": round(result.model_seconds, 3),
                    "tool_seconds": round(result.tool_seconds, 3),
                },
                "messages": self.agent.transcript()[before:] if self.agent.session == session else [],
            }
        )
        try:
            self.write()
        except OSError as e:  # the turn happened; its record is what is lost, and the log says so
            log.warning("trajectory not written to %s: %s", self.path, e)
        return result

    def confirm(self, ask: Callable[[str], bool]) -> Callable[[str], bool]:
        """`ask`, with each question and its answer kept as a step of the turn that asked it."""

        def asking(question: str) -> bool:
            answer = ask(question)
            with self._lock:
                if self._steps is not None:
                    self._steps.append({"asked": {"question": question, "answer": answer}})
            return answer

        return asking

    def write(self) -> None:
        """The run so far to `path`, whole or not at all."""
        if self.path is None:
            return
        part = self.path.with_name(f".{self.path.name}.part")
        part.write_text(json.dumps(self.document(), ensure_ascii=False, indent=1, default=str) + "\n", "utf-8")
        os.replace(part, self.path)


def _questions_first(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each question before the calls step of its model call: it was asked before those calls were all done,
    and a read of the same reply that finished first must not change the order from run to run."""
    out: list[dict[str, Any]] = []
    for s in steps:
        at = len(out)
        while "asked" in s and at > 0 and "model" not in out[at - 1]:
            at -= 1
            if "calls" in out[at]:
                break
        else:
            at = len(out)
        out.insert(at, s)
    return out


def record(agent: Agent, path: Path | str | None = None) -> Recorder:
    """Record every later turn of `agent` (to `path`, if given); the agent's own run_turn is replaced by the
    recording one, and its confirm callback by one that keeps the questions. OSError if `path` cannot be
    written."""
    recorder = Recorder(agent, path)
    if agent.context.confirm is not None:
        agent.context.confirm = recorder.confirm(agent.context.confirm)
    agent.run_turn = recorder.run_turn  # type: ignore[method-assign]
    recorder.write()  # an empty run: a path that cannot be written fails here, before the first turn
    return recorder


def comparable(document: dict[str, Any]) -> dict[str, Any]:
    """The run without what differs between two runs of the same script: timings, the session's name and
    the planner's version. What is left is what the agent did."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in TIMINGS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    out = strip({k: v for k, v in document.items() if k != "planner"})
    for turn in out["turns"]:
        turn.pop("session", None)
    return out
