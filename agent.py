"""The planner: run `python agent.py` (or `planner`, after `pip install .`).

This file is the way in. The agent itself, a hand-written ReAct loop, is
`planner/agent/loop.py`; one request travels through these files, top to
bottom, and no file imports one above it:

    planner/ui/cli.py          flags and settings, builds the agent, picks the interface
    planner/ui/tui.py|repl.py  reads your message, shows the trace and the reply
    planner/agent/loop.py      Agent.ask: system prompt + history + notes -> model -> tools -> ... -> reply
    planner/agent/toolrun.py   runs the turn's tool calls (guards.py first, then dispatch, in a thread pool)
    planner/tools/registry.py  dispatch: validates arguments, runs the @tool function, errors as {"error": ...}
    planner/tools/*.py         the tools: task_tools, memory_tools, query_tool, web
    planner/storage/*.py       SQLite: tasks, the change log for /undo, import/export
    planner/memory/*.py        session history (history.py), long-term memories (longterm.py, vectors.py)
    planner/model/client.py    the Ollama edge: every model call, errors translated once
    planner/agent/critic.py    after a turn that changed data, the critic checks the work

The top-level `tools.py`, `memory.py` and `embeddings.py` open the other
parts the same way.
"""

from __future__ import annotations

from typing import Any

from planner.ui.cli import entry, main

__all__ = ["Agent", "TurnResult", "build_agent", "main"]  # noqa: F822  (the first three load on use)


def __getattr__(name: str) -> Any:
    # The agent loads when it is asked for, so `python agent.py export` and the cron check start fast.
    if name in ("Agent", "TurnResult"):
        from planner.agent import loop

        return getattr(loop, name)
    if name == "build_agent":
        from planner.agent.build import build_agent

        return build_agent
    raise AttributeError(name)


if __name__ == "__main__":
    entry()  # main(), then the process ends with its status, whatever it left running
