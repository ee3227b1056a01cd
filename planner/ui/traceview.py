"""The trace under a request, the same in every interface (full terminal, plain, one-shot).

    ↳ add_task(title="dentist", due_date="friday") ✓ ('friday' -> Friday 2026-12-04) 2 ms
    ↳ critic: the dentist is on friday, not thursday — trying again
    · tools: read (always), change (the words ask: "add")   (--verbose: the tool groups sent, and why)
    · main 1.52 s, 900 prompt + 40 eval tokens              (--verbose)
    · critic: critic 0.40 s, 350 prompt + 12 eval tokens    (--verbose: calls that are not the reply)

`Trace` turns the agent's events into these lines; tui.py styles them and the
plain modes print them to stderr. `SideCalls` collects the model calls that
are no turn's reply (the critic, memory extraction, summaries, embeddings),
reported by the Ollama edge from whichever thread made them: the background
worker's calls finish between requests, so they show under the next one. With
them comes what each memory extraction stored, or why it stored nothing:

    · memory extraction: stored "The user's sister Ana lives in Lisbon." (critic, then main)
    · memory extraction: nothing stored (critic found nothing worth keeping; ...)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from planner.ui.text import safe

if TYPE_CHECKING:
    from planner.agent.turn import TurnResult
    from planner.memory.keeper import Extraction


def call_text(name: Any, arguments: Any) -> str:
    """A tool call as the model wrote it, cut to 100 characters."""
    args = arguments if isinstance(arguments, dict) else {}
    inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    text = f"{name}({inner})"
    return text if len(text) <= 100 else text[:99] + "…"


def model_line(call: dict[str, Any]) -> str:
    """One model call's figures: '· critic: qwen3.5:4b 0.40 s, 350 prompt + 12 eval tokens'."""
    purpose = f"{call['purpose']}: " if call.get("purpose") else ""
    if "texts" in call:  # an embedding call has no eval tokens
        return f"  · {purpose}{safe(call['model'])} {call['seconds']:.2f} s, {call['texts']} texts"
    return (
        f"  · {purpose}{safe(call['model'])} {call['seconds']:.2f} s, {call['prompt_tokens']} prompt + "
        f"{call['eval_tokens']} eval tokens"
    )


class SideCalls:
    """Model calls other than the turn's replies, for --verbose; filled from any thread, taken by the UI."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: list[str] = []

    def add(self, call: dict[str, Any]) -> None:
        """Take one finished call from the Ollama edge (the reply itself is shown by its own event)."""
        if call.get("purpose") != "reply":
            with self._lock:
                self._lines.append(model_line(call))

    def extraction(self, outcome: Extraction) -> None:
        """Take what one memory extraction did (from the background worker)."""
        asked = ", then ".join(outcome.models)
        if outcome.stored:
            line = "stored " + "; ".join(f'"{t}"' for t in outcome.stored) + f" ({asked})"
        else:
            line = f"nothing stored ({outcome.why})"
        with self._lock:
            self._lines.append(safe(f"  · memory extraction: {line}"))

    def take(self) -> list[str]:
        """The lines collected since the last take."""
        with self._lock:
            lines, self._lines = self._lines, []
        return lines


class Trace:
    """Lines for one turn's events: tool calls (unless quiet), critiques, and with verbose each model call."""

    def __init__(
        self, quiet: bool, verbose: bool, side: SideCalls | None = None, clock: Callable[[], float] = time.perf_counter
    ):
        self.quiet = quiet
        self.verbose = verbose
        self.side = side if verbose else None
        self.clock = clock  # seconds, for tool times; a test passes one that moves when it says
        self.started: dict[Any, tuple[float, float]] = {}  # call -> (when it started, self.waited then)
        self.waited = 0.0  # seconds spent waiting for the user's y/N, left out of tool times

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """Around a question to the user: the time it takes is no tool's."""
        t0 = self.clock()
        try:
            yield
        finally:
            self.waited += self.clock() - t0

    def lines(self, kind: str, data: dict[str, Any]) -> list[str]:
        """The lines one event adds (side calls made since the last event come first)."""
        out = self.side.take() if self.side else []
        if kind == "tool_start":
            self.started[_key(data)] = (self.clock(), self.waited)
        elif kind == "tool_end":
            t0, waited = self.started.pop(_key(data), (self.clock(), self.waited))
            if self.quiet:
                return out
            ms = (self.clock() - t0 - (self.waited - waited)) * 1000
            mark = "✓" if data["ok"] else "✗ " + str(data["result"].get("error", ""))[:80]
            if data["ok"] and data["result"].get("date_read_as"):  # the words, and the date they became
                mark += f" ({data['result']['date_read_as']})"
            out.append(safe(f"  ↳ {call_text(data['name'], data['arguments'])} {mark} {ms:.0f} ms"))
        elif kind == "critic" and not data["done"] and not self.quiet:
            out.append(f"  ↳ critic: {safe(data['critique'])} — trying again")
        elif kind == "model" and self.verbose:
            out.append(model_line(data))
        elif kind == "tools" and self.verbose:
            out.append(safe(f"  · tools: {data['why']} ({data['tools']} tools)"))
        return out

    def rest(self) -> list[str]:
        """Side calls still waiting to be shown (at the end of a turn)."""
        return self.side.take() if self.side else []


def turn_trace(result: TurnResult) -> list[str]:
    """The last request as /trace shows it: each model call with the tool groups it was sent and why, its
    prompt tokens, and the tool calls with how they ended."""
    if not result.steps and not result.tool_calls:
        return ["no request yet in this run"]
    lines = []
    for n, step in enumerate(result.steps, 1):
        tokens = f", {step['prompt_tokens']:,} prompt tokens" if step.get("prompt_tokens") else ""
        lines.append(safe(f"model call {n}: {step['tools']} tools{tokens}"))
        lines.append(safe(f"  groups: {step['why']}"))
    for c in result.tool_calls:
        mark = "✓" if c["ok"] else "✗ " + str((c["result"] or {}).get("error", ""))[:80]
        lines.append(safe(f"  ↳ {call_text(c['name'], c['arguments'])} {mark}"))
    extra = [
        ("asked once more: the request asked for a change none was made", result.nudged),
        ("asked once more: the reply claimed a change that did not happen", result.reasked),
        ("ended before the model's context was full", result.context_full),
    ]
    lines += [f"  {text}" for text, happened in extra if happened]
    return lines


def _key(data: dict[str, Any]) -> tuple[Any, str]:
    # A tool call's identity between its start and end events (several may run at once).
    return data["name"], json.dumps(data["arguments"], sort_keys=True, default=str)
