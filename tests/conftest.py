"""Shared fixtures: a model (the scripted one in this process, or the real client on a fake Ollama
server), a temporary database, and an agent wired to both exactly as cli.main wires the real one.
Plain helpers are in helpers.py.

The agent, the critic, the memory keeper and the embeddings run on `model`, a `ScriptedModel` in
this process (no HTTP, no threads serving it), unless the test asks for `fake`: then they go
through the real `ollama` client to the fake HTTP server, which is for the client's edge, the CLI
end to end and faults on the wire. Both take the same scripts and record the same requests
(tests/test_model_seam.py shows they answer alike); `chat_model` is whichever of the two the test
has, and `make_agent` and `memory` use it.

Hypothesis runs under the "ci" profile unless HYPOTHESIS_PROFILE says otherwise ("dev"): a fixed seed,
so a failure here is the same failure on every machine, printed with the blob that replays it; and no
deadline, since a test never asserts how long something took.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import sys

import pytest
from fake_ollama import FakeHub, FakeOllama, fake_embedding
from helpers import ROOT, TODAY, call, clean_env, run, tasks
from hypothesis import settings

from planner.agent.loop import Agent, history_budget
from planner.memory.history import Budget, History
from planner.memory.keeper import MemoryKeeper
from planner.memory.longterm import LongTermMemory
from planner.memory.vectors import Embedder
from planner.model.base import ChatModel
from planner.model.client import Ollama
from planner.model.scripted import ScriptedModel
from planner.settings import Config
from planner.storage.db import Store
from planner.tools import ToolContext

__all__ = ["ROOT", "TODAY", "call", "clean_env", "run", "tasks"]  # still importable from here

settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None)
settings.register_profile("dev", print_blob=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_addoption(parser):
    parser.addoption(
        "--record",
        action="store_true",
        help="write the recorded results under tests/data/ (golden trajectories, recall scores) from this run "
        "instead of comparing with them; review the diff before committing it",
    )


@pytest.fixture
def recorded(request):
    """`recorded(name, value)`: the value must equal tests/data/NAME (JSON), recorded by an earlier run; under
    `pytest --record` the file is written from this run instead. A change in behaviour shows as a diff of it."""
    import difflib
    import json

    def check(name: str, value) -> None:
        path = ROOT / "tests" / "data" / name
        text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
        if request.config.getoption("--record"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        assert path.exists(), f"no recorded {path.name}: run `pytest {request.node.nodeid} --record` once"
        old = path.read_text(encoding="utf-8")
        if old != text:
            diff = "".join(difflib.unified_diff(old.splitlines(True), text.splitlines(True), "recorded", "this run"))
            raise AssertionError(
                f"{path.name} differs from this run (pytest --record rewrites it, if the change is meant):\n{diff}"
            )

    return check


def pytest_collection_modifyitems(config, items):
    """Mark `terminal` every test that drives a pseudo-terminal (the pty_planner fixture, or pexpect itself), so
    CI can run them once more in one process, without pytest-xdist's environment (`pytest -n 0 -m terminal`)."""
    for item in items:
        module = getattr(item, "module", None)
        if "pty_planner" in getattr(item, "fixturenames", ()) or hasattr(module, "pexpect"):
            item.add_marker(pytest.mark.terminal)


@pytest.fixture(scope="session", autouse=True)
def schema_template(tmp_path_factory):
    """A new database in this process starts as a copy of one migrated at the start of the session.

    Running the migrations takes about 45 ms a file here (each ALTER TABLE re-reads the schema),
    and the suite makes some 900 new files: a fifth of its time. The template is made by the real
    migrations in this same run, so a broken migration still fails every test; a file that exists
    already (an old schema, an empty file, a damaged one) is opened and migrated as before, and
    where the copy cannot be made (a read-only folder) the Store meets the folder itself. Programs
    the tests start run every migration themselves.
    """
    template = tmp_path_factory.mktemp("schema") / "planner.db"
    Store(template).close()
    original = Store._open_and_migrate

    def open_from_template(self: Store) -> None:
        if not self.path.exists():
            part = self.path.with_name(f".{self.path.name}.template")
            try:
                shutil.copyfile(template, part)
                os.link(part, self.path)  # never over a file that appeared meanwhile
            except OSError:
                pass
            finally:
                part.unlink(missing_ok=True)
        original(self)

    Store._open_and_migrate = open_from_template
    yield template
    Store._open_and_migrate = original


@pytest.fixture(scope="session")
def hub():
    """One fake Ollama HTTP server for the whole session; each test's fake answers under its own prefix."""
    shared = FakeHub().start()
    yield shared
    shared.stop()


@pytest.fixture
def fake(request, hub):
    """A fake Ollama server on 127.0.0.1 with models main, critic and embed, fresh for each test.

    Served by the shared hub; a test marked `own_server` gets a server of its own, which
    fake.stop() really stops (connections refused), as when Ollama is not running. A test that
    scripted a reply real Ollama could not send (see fake_ollama.py) fails.
    """
    if request.node.get_closest_marker("own_server"):
        with FakeOllama() as server:
            yield server
    else:
        server = hub.attach(FakeOllama())
        yield server
        hub.detach(server)
    assert not server.violations, f"the test scripted replies Ollama could not send: {server.violations}"


@pytest.fixture
def model():
    """A scripted model in this process with models main, critic and embed, fresh for each test; the
    test fails if it scripted a JSON reply Ollama could not send (as with the fake server)."""
    scripted = ScriptedModel()
    yield scripted
    assert not scripted.violations, f"the test scripted replies Ollama could not send: {scripted.violations}"


@pytest.fixture
def small(model):
    """The scripted main model says it is 1.5B, so the auto profile picks the small guards."""
    model.sizes["main"] = "1.5B"


@pytest.fixture
def chat_model(request) -> ChatModel:
    """The model the test's agent, keeper and memory talk to: the real client on the fake server if the test
    asks for `fake` (directly or through another fixture), else the scripted model."""
    if "fake" in request.fixturenames:
        return request.getfixturevalue("llm")
    return request.getfixturevalue("model")


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


def local_embed(model: str, texts: list[str]) -> list[list[float]]:
    """The bag-of-words embedder of the scripted model and the fake server, called directly."""
    return [fake_embedding(text) for text in texts]


@pytest.fixture
def memory(store, chat_model):
    """Long-term memory embedding through the test's model (see chat_model), which records each call."""
    return LongTermMemory(store, Embedder(chat_model.embed, "embed"))


@pytest.fixture
def ctx(store, memory):
    """A tool context with a fixed today and no one to confirm."""
    return ToolContext(
        store=store, memory=memory, today=lambda: TODAY, confirm=None, plan_from=dt.datetime.combine(TODAY, dt.time(8))
    )  # plans start at 08:00 on TODAY


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
def make_agent(chat_model, store, ctx, config):
    """Build an agent (optionally with config changes) for a session, on the test's model (see chat_model)."""
    agents = []

    def make(session: str = "s1", budget: Budget | None = None, **changes) -> Agent:
        c = config.replace(**changes)
        keeper = MemoryKeeper(store, chat_model, c, ctx.memory) if c.auto_memory else None
        history = History(store, session, budget or history_budget(c, ctx))
        a = Agent(chat_model, c, history, ctx, keeper)  # as build_agent
        agents.append(a)
        return a

    yield make
    for a in agents:
        a.close()


@pytest.fixture(scope="session")
def radicale(tmp_path_factory):
    """A real CalDAV server (Radicale) with user ana, for the whole session; yields its base URL."""
    from phone import start_radicale

    server, url = start_radicale(tmp_path_factory.mktemp("radicale"))
    yield url
    server.terminate()
    server.wait(5)


@pytest.fixture
def tasklist(radicale):
    """A fresh task list for one test: (its URL, the phone's view of it)."""
    from phone import new_list

    return new_list(radicale)


@pytest.fixture
def pty_planner(fake, tmp_path):
    """Start `python agent.py` in a pseudo-terminal of `rows` x `cols` against the fake server; waits for the
    prompt. A COLUMNS or LINES passed in `extra` overrides the terminal's size, as it would in a shell."""
    import pexpect

    children = []

    def start(
        *args: str, term: str = "dumb", prompt: str = "you> ", cols: int = 120, rows: int = 40, **extra: str
    ) -> pexpect.spawn:
        # The size is the pseudo-terminal's (pexpect sets it before the child starts); clean_env passes on no
        # COLUMNS or LINES, so the child reads it from the terminal as it would in a real one.
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
            dimensions=(rows, cols),
        )
        children.append(child)
        child.expect(prompt)
        return child

    yield start
    for c in children:
        c.close(force=True)


@pytest.fixture
def planner(ctx):
    """A week of varied tasks."""
    run(ctx, "add_task", title="file taxes", due_date="2026-11-20", priority="high", tags=["money"])
    run(ctx, "add_task", title="buy milk", due_date="tomorrow", tags=["shopping", "#Home"])
    run(ctx, "add_task", title="call the bank", due_date="friday", priority="high", tags="money, phone")
    run(ctx, "add_task", title="read a book", notes="the one about bridges")
    run(ctx, "add_task", title="plan trip", due_date="dec 24", priority="low")
    done = run(ctx, "add_task", title="old chore", due_date="2026-11-25", tags=["home"])["added"]["id"]
    run(ctx, "complete_task", id=done)
    return ctx
