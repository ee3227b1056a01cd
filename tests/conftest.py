"""Shared fixtures: a fake Ollama server, a temporary database, and an agent
wired to both exactly as cli.main wires the real one."""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

from fake_ollama import FakeOllama  # noqa: E402

from planner.agent.loop import Agent  # noqa: E402
from planner.memory.history import Budget, History  # noqa: E402
from planner.memory.keeper import MemoryKeeper  # noqa: E402
from planner.memory.longterm import LongTermMemory  # noqa: E402
from planner.memory.vectors import Embedder  # noqa: E402
from planner.model.client import Ollama  # noqa: E402
from planner.settings import Config  # noqa: E402
from planner.storage.db import Store  # noqa: E402
from planner.tools import ToolContext  # noqa: E402

TODAY = dt.date(2026, 12, 1)  # a Tuesday


@pytest.fixture
def fake():
    """A fake Ollama server on 127.0.0.1 with models main, critic and embed."""
    with FakeOllama() as server:
        yield server


@pytest.fixture
def store(tmp_path):
    """A fresh planner database."""
    s = Store(tmp_path / "planner.db")
    yield s
    s.close()


@pytest.fixture
def llm(fake):
    """The Ollama edge pointed at the fake server."""
    return Ollama(fake.url, timeout=5)


@pytest.fixture
def memory(store, llm):
    """Long-term memory using the fake embedder."""
    return LongTermMemory(store, Embedder(llm.embed, "embed"))


@pytest.fixture
def ctx(store, memory):
    """A tool context with a fixed today and no one to confirm."""
    return ToolContext(store=store, memory=memory, today=lambda: TODAY, confirm=None)


@pytest.fixture
def config(tmp_path):
    """A config for the fake models."""
    # auto_memory off by default: its background critic calls would take scripted replies.
    return Config(
        model="main",
        critic_model="critic",
        embed_model="embed",
        db_path=tmp_path / "planner.db",
        today=TODAY,
        auto_memory=False,
    )


@pytest.fixture
def make_agent(llm, store, ctx, config):
    """Build an agent (optionally with config changes) for a session."""
    agents = []

    def make(session: str = "s1", budget: Budget | None = None, **changes) -> Agent:
        c = config.replace(**changes)
        keeper = MemoryKeeper(store, llm, c, ctx.memory) if c.auto_memory else None
        a = Agent(llm, c, History(store, session, budget or Budget()), ctx, keeper)
        agents.append(a)
        return a

    yield make
    for a in agents:
        a.close()


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


@pytest.fixture
def pty_planner(fake, tmp_path):
    """Start `python agent.py` in a pseudo-terminal against the fake server; waits for the prompt."""
    import pexpect

    children = []

    def start(*args: str, term: str = "dumb", prompt: str = "you> ", cols: int = 120, **extra: str) -> pexpect.spawn:
        env = clean_env(
            OLLAMA_HOST=fake.url,
            PLANNER_HOME=str(tmp_path),
            PLANNER_TODAY="2026-12-01",
            TERM=term,
            PROMPT_TOOLKIT_NO_CPR="1",
            **extra,
        )
        models = ["--model", "main", "--critic-model", "critic", "--embed-model", "embed"]
        child = pexpect.spawn(
            sys.executable,
            [str(ROOT / "agent.py"), *models, *args],
            env=env,
            encoding="utf-8",
            timeout=20,
            dimensions=(40, cols),
        )
        children.append(child)
        child.expect(prompt)
        return child

    yield start
    for c in children:
        c.close(force=True)
