"""Scripted models for the eval suite, served by a fake Ollama server.

The oracle answers every scenario correctly from the scenario's own `oracle`
steps: it finds the scenario line in the latest user message and replays the
step matching how many assistant messages already followed it. A mistaken
oracle swaps in wrong steps for chosen scenarios, so a test can check that
the scoring fails exactly those.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from planner.agent.loop import MEMORY_NOTES

Responder = Callable[[dict[str, Any]], dict[str, Any]]


def oracle(
    scenarios: list[dict[str, Any]], mistakes: dict[str, dict[str, list[dict[str, Any]]]] | None = None
) -> Responder:
    """A responder that plays each scenario's oracle steps (or the given mistakes)."""
    steps: dict[str, list[dict[str, Any]]] = {}
    for s in scenarios:
        steps.update(s["oracle"])
        steps.update((mistakes or {}).get(s["id"], {}))

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        if body.get("format"):  # background work asked of the main model (memory extraction): nothing found
            return {"content": '{"memories": []}'}
        messages = body["messages"]
        said = [m["content"].split("\n\n" + MEMORY_NOTES)[0] if m["role"] == "user" else None for m in messages]
        i = max(j for j, line in enumerate(said) if line in steps)
        line = said[i]
        done = sum(1 for m in messages[i + 1 :] if m["role"] == "assistant")
        script = steps[line]
        return script[min(done, len(script) - 1)]

    return respond
