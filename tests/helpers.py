"""What several test modules use: the scripted-call shape, the planner's command line (run in this process, or
as a process of its own), an MCP client (over stdio, or in this process), the shape rules of a message history,
and waiting for an event.

Fixtures live in conftest.py; plain functions live here, so a test module imports them from one place
instead of from another test module.
"""

from __future__ import annotations

import datetime as dt
import gc
import io
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bytecode_cache import PYCACHE

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


# Left out of a child's environment unless a test sets them: the planner settings and the server of whoever
# runs the tests, and the terminal size. pytest-xdist's workers carry COLUMNS=80 LINES=24, which rich and
# prompt_toolkit believe before the terminal's own size: a child in a 40-column pseudo-terminal drew 80.
INHERITED = ("PLANNER_", "OLLAMA_", "NO_COLOR")
SIZE = ("COLUMNS", "LINES")


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without planner or Ollama settings and without a terminal size (a child
    reads its own from its terminal), plus extra ones; a program started with it keeps its bytecode in the
    tests' cache outside the tree (bytecode_cache.py)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(INHERITED) and k not in SIZE}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
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


# ---------------------------------------------------------------- the planner's command line


def run_cli(args, env, input=None, *, process=False, timeout=60, text=True, **popen) -> subprocess.CompletedProcess:
    """`python agent.py ARGS` with this environment and standard input (text, bytes or None); what it printed and
    its exit status, as subprocess.run gives them.

    Run in this process (see in_process) unless `process` is true or a Popen option (cwd, preexec_fn) asks
    for a real one: for what only a process shows (start-up, a pty, a signal, file descriptors, several
    programs on one file), and so each kind of run keeps one test on the real path. `timeout` bounds a
    process only.
    """
    if process or popen:
        return subprocess.run(
            [sys.executable, str(ROOT / "agent.py"), *args],
            input=input,
            capture_output=True,
            text=text,
            env=env,
            timeout=timeout,
            **popen,
        )
    return in_process(args, env, input, text=text)


def run_agent(fake, home, lines, *args, env=None, timeout=60, process=False):
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
    return run_cli(args, e, "".join(line + "\n" for line in lines), process=process, timeout=timeout)


def in_process(
    args, env, input=None, *, text=True, main=None, program=ROOT / "agent.py"
) -> subprocess.CompletedProcess:
    """`planner.ui.cli.main(args)` (or another `main`, the program's) called here, as `python agent.py ARGS` (or
    `python PROGRAM ARGS`) would run it in a process of its own.

    Everything process-wide the run sees or changes is set up as a fresh process has it and put back after:
    the environment (exactly `env`), sys.argv, standard input (a pipe: these bytes, not a terminal), standard
    output and error (captured; a pipe has no terminal size), the umask, the SIGXFSZ handler, the `planner`
    logger. SystemExit and an uncaught exception end the run as they end a process (the traceback on stderr,
    status 1). Every thread the run started must be over once it returns: a process would have waited for
    it or ended it. One the planner never stops (the memory keeper's idle worker, a pool nobody shut down)
    is ended here as the process's exit would end it; one still busy fails the test by name.
    """
    if main is None:
        from planner.ui.cli import main

    assert threading.current_thread() is threading.main_thread(), "a run in this process needs the main thread"
    data = input.encode() if isinstance(input, str) else (input or b"")
    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape")
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", errors="surrogateescape")
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", line_buffering=True)
    names = ("stdin", "stdout", "stderr", "__stdin__", "__stdout__", "__stderr__", "argv")
    saved = {name: getattr(sys, name) for name in names}
    saved_env = dict(os.environ)
    logger = logging.getLogger("planner")
    saved_log = (list(logger.handlers), logger.level, logger.propagate, logging.raiseExceptions)
    saved_xfsz = signal.getsignal(signal.SIGXFSZ) if hasattr(signal, "SIGXFSZ") else None
    saved_umask = os.umask(0o077)  # reading the umask sets it: put straight back
    os.umask(saved_umask)
    threads = _Started()
    try:
        os.environ.clear()
        os.environ.update(env)
        sys.stdin = sys.__stdin__ = stdin
        sys.stdout = sys.__stdout__ = stdout
        sys.stderr = sys.__stderr__ = stderr
        sys.argv = [str(program), *args]
        with threads:
            try:
                returncode = main(list(args))
            except SystemExit as e:
                returncode = _exit_status(e.code)
            except Exception:  # as the interpreter ends a process on an uncaught exception
                traceback.print_exc()
                returncode = 1
        stdout.flush()
        stderr.flush()
    finally:
        for name, value in saved.items():
            setattr(sys, name, value)
        os.environ.clear()
        os.environ.update(saved_env)
        os.umask(saved_umask)
        if saved_xfsz is not None:
            signal.signal(signal.SIGXFSZ, saved_xfsz)
        for handler in logger.handlers:
            if handler not in saved_log[0]:
                handler.close()
        logger.handlers[:], logger.level, logger.propagate, logging.raiseExceptions = saved_log
    threads.finish()
    if text:  # as subprocess.run(text=True) reads a pipe: the locale's encoding, universal newlines
        decoded = (b.getvalue().decode().replace("\r\n", "\n").replace("\r", "\n") for b in (out, err))
        return subprocess.CompletedProcess([program.name, *args], returncode, *decoded)
    return subprocess.CompletedProcess([program.name, *args], returncode, out.getvalue(), err.getvalue())


def _exit_status(code) -> int:
    """The exit status of `raise SystemExit(code)`, as the interpreter makes it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


class _Started:
    """What a run starts that a process's exit would end: its threads (started from this thread, or from one it
    started) and its HTTP clients (their open connections)."""

    def __enter__(self) -> _Started:
        import httpx

        self.threads: list[threading.Thread] = []
        self.clients: list[httpx.Client] = []
        caller, threads, clients = threading.current_thread(), self.threads, self.clients
        self.start, self.init = threading.Thread.start, httpx.Client.__init__
        start, init = self.start, self.init

        def starting(thread: threading.Thread) -> None:
            me = threading.current_thread()
            if me is caller or me in threads:
                threads.append(thread)
            start(thread)

        def made(client: httpx.Client, *args, **kwargs) -> None:
            init(client, *args, **kwargs)
            clients.append(client)

        threading.Thread.start = starting  # type: ignore[method-assign]
        httpx.Client.__init__ = made  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc) -> None:
        import httpx

        threading.Thread.start = self.start  # type: ignore[method-assign]
        httpx.Client.__init__ = self.init  # type: ignore[method-assign]

    def finish(self, timeout: float = 30.0) -> None:
        """Wait for the run's threads, ending those a process's exit would end, then close its connections;
        fail on a thread still running."""
        from planner.memory.keeper import Worker

        deadline = time.monotonic() + timeout
        for thread in self.threads:
            target = getattr(getattr(thread, "_target", None), "__self__", None)
            if isinstance(target, Worker):  # a daemon, idle once drained: a process's exit ends it
                target.close(max(0.0, deadline - time.monotonic()))
        if any(t.is_alive() for t in self.threads):
            gc.collect()  # a thread pool no one shut down ends once it is collected, as at exit
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        left = [t.name for t in self.threads if t.is_alive()]
        unclosed = [c for c in self.clients if not c.is_closed]
        for client in unclosed:
            client.close()
        assert not left, f"the run left threads running: {left}"
        assert not unclosed, f"the run left {len(unclosed)} HTTP client(s) open"


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
    params = StdioServerParameters(
        command=sys.executable, args=[str(ROOT / "agent.py"), *mcp_args(db, *flags)], env=env
    )
    async with Client(params, mode=mode, read_timeout_seconds=20, **client) as c:
        yield c


@asynccontextmanager
async def serve_here(
    db,
    *flags: str,
    host: str = OFFLINE,
    mode: str = "auto",
    env: dict | None = None,
    clock: Callable[[], dt.datetime] | None = None,
    **client,
):
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


def mcp_error(result) -> str:
    """The message of an MCP error result: `isError`, the message as text, and no structured content, so a client
    that validates structured content against the tool's output schema (the TypeScript SDK's) still shows it."""
    assert result.is_error and result.structured_content is None, result
    return "\n".join(c.text for c in result.content if c.type == "text")


def mcp_checked(result, output_schema: dict | None) -> dict | str:
    """An MCP tool result read as every client reads it: an error's message (isError, text, no structured
    content), or the structured content of a success, first validated against the tool's declared output schema
    (jsonschema: an oracle other than the server's code)."""
    import jsonschema

    if result.is_error:
        return mcp_error(result)
    assert output_schema is not None and result.structured_content is not None, result
    jsonschema.validate(result.structured_content, output_schema)
    assert json.loads(result.content[0].text) == result.structured_content  # the same JSON for older clients
    return result.structured_content


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


# ---------------------------------------------------------------- the TypeScript SDK's client

TS_CLIENT = ROOT / "tests" / "mcp_ts"  # package.json pins @modelcontextprotocol/sdk; client.mjs drives it


def typescript_client() -> Path:
    """The folder of the TypeScript SDK client, its pinned packages installed (`npm ci`, as .ci/run does, once
    per machine); the test is skipped only when there is no Node to run it."""
    import fcntl
    import shutil

    import pytest

    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are not installed: the TypeScript SDK's MCP client runs on Node (apt install nodejs)")
    if not (TS_CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        with open(TS_CLIENT / ".install.lock", "w") as lock:  # pytest-xdist workers install it once
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (TS_CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
                p = subprocess.run(
                    [npm, "ci", "--no-audit", "--no-fund", "--prefer-offline"],
                    cwd=TS_CLIENT,
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
                assert p.returncode == 0, f"`npm ci` in {TS_CLIENT} failed:\n{p.stderr[-2000:]}"
    return TS_CLIENT


def typescript_session(db, steps: list[dict], *flags: str, env: dict | None = None) -> list[dict]:
    """`python agent.py mcp` on this database driven by the TypeScript SDK's client through `steps` (client.mjs
    says which); each step's outcome: {"ok": result} or {"thrown": message}. The first is the connection's."""
    folder = typescript_client()
    env = clean_env(OLLAMA_HOST=OFFLINE, PLANNER_HOME=str(db.parent), **(env or {}))
    command = [sys.executable, str(ROOT / "agent.py"), *mcp_args(db, *flags)]
    p = subprocess.run(
        ["node", str(folder / "client.mjs"), json.dumps(steps), *command],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    outcomes = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(outcomes) == len(steps) + 1, p.stdout
    return outcomes[1:]
