"""What several test modules use: the scripted-call shape, the planner run as a subprocess, an MCP client
(over stdio, or in this process), the shape rules of a message history, and waiting for an event.

Fixtures live in conftest.py; plain functions live here, so a test module imports them from one place
instead of from another test module.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from planner.tools import dispatch

ROOT = Path(__file__).resolve().parent.parent
TODAY = dt.date(2026, 12, 1)  # a Tuesday
OFFLINE = "http://127.0.0.1:9"  # nothing listens there: Ollama is down


def call(name: str, **arguments) -> dict:
    """A scripted tool call."""
    return {"name": name, "arguments": arguments}


def tasks(store) -> list[dict]:
    """Every task row, as dicts."""
    return [dict(r) for r in store.conn().execute("SELECT id, title, due_date, status FROM tasks ORDER BY id")]


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without planner or Ollama settings, plus extra ones."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANNER_", "OLLAMA_", "NO_COLOR"))}
    env.update(extra)
    return env


def run(ctx, name, **args):
    """Dispatch a tool call that must succeed (and give JSON); its result."""
    result, ok = dispatch(ctx, name, args)
    json.dumps(result)
    assert ok, result
    return result


def events(sink: list) -> Callable[[str, Any], None]:
    """An agent event callback that keeps (kind, data) in `sink`."""
    return lambda kind, data: sink.append((kind, data))


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    """Wait until condition() is true, checking every 20 ms; its value. If it never happens, fail loudly,
    naming `what`: the timeout only bounds a failure (a slow machine waits longer; nothing passes early)."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what}; it never happened")
        time.sleep(0.02)
    return value


# ---------------------------------------------------------------- the planner as a subprocess


def run_agent(fake, home, lines, *args, env=None, timeout=60):
    """`python agent.py ARGS` against the fake server (None: Ollama down), fed `lines` on stdin."""
    e = clean_env()
    e.update(
        {
            "OLLAMA_HOST": fake.url if fake else OFFLINE,
            "PLANNER_HOME": str(home),
            "PLANNER_MODEL": "main",
            "PLANNER_CRITIC_MODEL": "critic",
            "PLANNER_EMBED_MODEL": "embed",
            "PLANNER_TODAY": "2026-12-01",
        }
    )
    e.update(env or {})
    return subprocess.run(
        [sys.executable, str(ROOT / "agent.py"), *args],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        env=e,
        timeout=timeout,
    )


def db_tasks(home) -> list[str]:
    """The titles in home/planner.db, in id order."""
    conn = sqlite3.connect(home / "planner.db")
    try:
        return [r[0] for r in conn.execute("SELECT title FROM tasks ORDER BY id")]
    finally:
        conn.close()


def adder(body):
    """A model that adds a task named after each line, then says ok."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"content": "ok"}
    return {"tool_calls": [call("add_task", title=last["content"].split("\n")[0])]}


def valid(messages) -> bool:
    """The rules a tool-calling API enforces on a history."""
    if messages and messages[0]["role"] != "user":
        return False
    i = 0
    while i < len(messages):
        m = messages[i]
        if m["role"] == "tool":
            return False  # only reachable as an orphan
        if m["role"] == "assistant" and m.get("tool_calls"):
            k = len(m["tool_calls"])
            following = messages[i + 1 : i + 1 + k]
            if len(following) != k or any(f["role"] != "tool" for f in following):
                return False
            if i + 1 + k < len(messages) and messages[i + 1 + k]["role"] == "tool":
                return False
            i += 1 + k
            continue
        i += 1
    return True


# ---------------------------------------------------------------- MCP clients


def mcp_args(db, *flags: str) -> list[str]:
    """`agent.py mcp`'s arguments (after the program) for this database."""
    return ["mcp", "--db", str(db), "--today", TODAY.isoformat(), "--embed-model", "embed", *flags]


@asynccontextmanager
async def connect(db, *flags: str, host: str = OFFLINE, mode: str = "auto", env: dict | None = None, **client):
    """A client connected to `python agent.py mcp` on this database, over stdio: the wire, the process,
    the flags and settings as a real client starts it."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    env = clean_env(OLLAMA_HOST=host, PLANNER_HOME=str(db.parent), **(env or {}))
    params = StdioServerParameters(command=sys.executable, args=[str(ROOT / "agent.py"), *mcp_args(db, *flags)],
                                   env=env)  # fmt: skip
    async with Client(params, mode=mode, read_timeout_seconds=20, **client) as c:
        yield c


@asynccontextmanager
async def serve_here(db, *flags: str, host: str = OFFLINE, mode: str = "auto", env: dict | None = None,
                     clock: Callable[[], dt.datetime] | None = None, **client):  # fmt: skip
    """A client connected to the same MCP server built in this process (settings read by the same code as
    `agent.py mcp`), over the SDK's in-memory transport: for what the server decides, not for the wire.
    Starting no process costs nothing, and `clock` is the time the server's bulk window counts from."""
    from mcp import Client

    from planner.model.client import Ollama
    from planner.storage.db import Store
    from planner.ui.cli import load_config
    from planner.ui.mcp_server import PlannerServer

    env = clean_env(OLLAMA_HOST=host, PLANNER_HOME=str(db.parent), **(env or {}))
    config = load_config(mcp_args(db, *flags)[1:], env)
    store = Store(config.db_path)
    try:
        server = PlannerServer(config, store, Ollama(config.host, timeout=5), clock=clock)
        async with Client(server.server, mode=mode, read_timeout_seconds=20, **client) as c:
            yield c
    finally:
        store.close()


def answering(*answers: bool, asked: list[str] | None = None):
    """An elicitation callback that says yes or no, in order, and keeps the questions."""
    import mcp_types as types

    queue = list(answers)

    async def elicit(context, params):
        if asked is not None:
            asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": queue.pop(0)})

    return elicit


def rows(db) -> list[dict]:
    """The tasks table as dicts."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT id, title, due_date, status FROM tasks ORDER BY id")]
    finally:
        conn.close()
