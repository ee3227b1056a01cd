"""The heavier fault runs, more rounds than the test suite affords: `python -m bench faults`.

- kill -9: start `python agent.py` on a stream of "add a task" lines, kill it
  at a random moment mid-turn, repeat; then check the file (integrity_check),
  that no title is duplicated or half-written, that every task has the
  change-log row that created it and its last logged state is the row itself
  (undo would put back what was there), and that the session history loads.
- writers: N agent processes add tasks to one file at once; every write must
  land, and no "locked" may reach the user.
- the file and its neighbours (`process_faults`): another program holding the
  write lock past the busy timeout, a damaged page, a model stream that never
  ends, a full disk. (A read-only file cannot be made here: root writes through
  chmod 444; tests/test_attacks.py opens one with mode=ro instead.) Each must end in one line for the user,
  no traceback, the session going on (exit 0), and a file that passes
  integrity_check.

Each row of the table is one scenario; "ok" means every check held.
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

from planner.memory.history import Budget, History, sanitize  # noqa: E402
from planner.storage.db import Store  # noqa: E402
from planner.storage.tasks import snapshot  # noqa: E402
from tests.fake_ollama import FakeOllama  # noqa: E402


def _adder(body: dict[str, Any]) -> dict[str, Any]:
    """A model that adds a task named after each user line, then says ok."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"content": "ok " * 20, "slow": 0.002}
    return {"tool_calls": [{"name": "add_task", "arguments": {"title": last["content"].split("\n")[0]}}]}


def _env(url: str, home: Path) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANNER_", "OLLAMA_"))}
    env.update(
        OLLAMA_HOST=url,
        PLANNER_HOME=str(home),
        PLANNER_MODEL="main",
        PLANNER_CRITIC_MODEL="critic",
        PLANNER_EMBED_MODEL="embed",
    )
    return env


ARGS = ["--no-reflect", "--no-auto-memory", "--session", "s"]


def check(home: Path, sessions: list[str], expected: set[str] | None = None) -> dict[str, Any]:
    """What the fault left behind: integrity, duplicates, change-log agreement, history.

    With `expected` None (kill -9 at random moments) a file with no schema yet,
    or a session with no messages, is a valid outcome: every kill may land
    before the first write.
    """
    conn = sqlite3.connect(home / "planner.db")
    conn.row_factory = sqlite3.Row
    integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    has_schema = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tasks'").fetchone()
    rows = [dict(r) for r in conn.execute("SELECT * FROM tasks")] if has_schema else []
    titles = [r["title"] for r in rows]
    log_ok = True
    for r in rows:  # the change log's newest copy of each task is the task as stored (as `snapshot` reads it)
        last = conn.execute(
            "SELECT before, after FROM task_events WHERE task_id = ? ORDER BY id DESC LIMIT 1", (r["id"],)
        ).fetchone()
        first = conn.execute(
            "SELECT before FROM task_events WHERE task_id = ? ORDER BY id LIMIT 1", (r["id"],)
        ).fetchone()
        log_ok &= last is not None and json.loads(last["after"]) == snapshot(conn, r["id"]) and first["before"] is None
    conn.close()
    store = Store(home / "planner.db")
    histories = [History(store, s, Budget(messages=10**6, tokens=10**12)).messages for s in sessions]
    store.close()
    return {
        "integrity": integrity,
        "tasks": len(titles),
        "duplicates": len(titles) - len(set(titles)),
        "lost": len(expected - set(titles)) if expected is not None else 0,
        "log_ok": log_ok,
        "history_ok": all((h[0]["role"] == "user" and sanitize(h) == h) if h else expected is None for h in histories),
    }


def kill_rounds(rounds: int, seed: int = 7) -> dict[str, Any]:
    """kill -9 the agent mid-turn `rounds` times on one file."""
    rng = random.Random(seed)
    with FakeOllama() as fake, tempfile.TemporaryDirectory() as tmp:
        fake.respond_with("main", _adder)
        home = Path(tmp)
        t0 = time.perf_counter()
        for r in range(rounds):
            p = subprocess.Popen(
                [sys.executable, str(ROOT / "agent.py"), *ARGS],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=_env(fake.url, home),
                text=True,
            )
            assert p.stdin is not None
            p.stdin.write("".join(f"task {r}-{i}\n" for i in range(60)))
            p.stdin.flush()
            time.sleep(rng.uniform(0.3, 0.8))
            p.send_signal(signal.SIGKILL)
            p.wait()
        out = check(home, ["s"])
        out["seconds"] = time.perf_counter() - t0
        return out


def writers(processes: int, turns: int) -> dict[str, Any]:
    """`processes` agents adding `turns` tasks each to one file at once."""
    with FakeOllama() as fake, tempfile.TemporaryDirectory() as tmp:
        fake.respond_with("main", _adder)
        home = Path(tmp)
        results: dict[int, subprocess.CompletedProcess] = {}

        def work(n: int) -> None:
            results[n] = subprocess.run(
                [sys.executable, str(ROOT / "agent.py"), *ARGS[:2], "--session", f"w{n}"],
                input="".join(f"writer {n} task {i}\n" for i in range(turns)),
                capture_output=True,
                text=True,
                env=_env(fake.url, home),
                timeout=600,
            )

        t0 = time.perf_counter()
        threads = [threading.Thread(target=work, args=(n,)) for n in range(processes)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        expected = {f"writer {n} task {i}" for n in range(processes) for i in range(turns)}
        out = check(home, [f"w{n}" for n in range(processes)], expected)
        out["seconds"] = time.perf_counter() - t0
        out["locked"] = sum("locked" in p.stdout + p.stderr for p in results.values())
        out["failed"] = sum(p.returncode != 0 for p in results.values())
        return out


# ---------------------------------------------------------------- the file and its neighbours


def _agent(home: Path, url: str, lines: str, *extra: str, timeout: float = 120, **popen: Any) -> dict[str, Any]:
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, str(ROOT / "agent.py"), *ARGS, *extra],
        input=lines,
        capture_output=True,
        text=True,
        env=_env(url, home) | popen.pop("env", {}),
        timeout=timeout,
        **popen,
    )
    # in a session a /command's error is part of the conversation (stdout); a turn's or start-up's goes to stderr
    said = [line for line in (p.stderr + p.stdout).splitlines() if line.startswith(("error:", "warning:"))]
    return {
        "exit": p.returncode,
        "said": said[0] if said else "",
        "traceback": "Traceback" in p.stderr,
        "junk": len([x for x in p.stderr.splitlines() if x.strip() and not x.startswith(("error:", "warning:"))]),
        "seconds": time.perf_counter() - t0,
    }


def _integrity(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    except sqlite3.DatabaseError as e:
        return f"damaged ({e})"
    finally:
        conn.close()


def lock_held(fake: FakeOllama, home: Path, seconds: float) -> dict[str, Any]:
    """Another program holds the write lock for `seconds` (past the 15 s busy timeout) while we add a task."""
    _agent(home, fake.url, "first\n")
    other = sqlite3.connect(home / "planner.db", isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    threading.Timer(seconds, lambda: other.execute("ROLLBACK")).start()
    out = _agent(home, fake.url, "during the lock\n")  # the turn says the database is busy; the session goes on
    time.sleep(max(0.0, seconds - out["seconds"]) + 0.2)
    after = _agent(home, fake.url, "after the lock\n")
    other.close()
    out["data"] = _integrity(home / "planner.db") == "ok" and after["exit"] == 0 and not after["said"]
    return out


def damaged_page(fake: FakeOllama, home: Path) -> dict[str, Any]:
    """A page in the middle of the file overwritten, then a session that lists and adds."""
    _agent(home, fake.url, "".join(f"task {i} {'x' * 300}\n" for i in range(60)))
    path = home / "planner.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    # the tasks table's root page, so /tasks meets it whatever else the schema holds
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'tasks'").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    data[size * (root - 1) : size * root] = b"\xff" * size
    path.write_bytes(bytes(data))
    out = _agent(home, fake.url, "/tasks\nanother task\n")
    out["data"] = True  # damaged by design: the check is that it is said, not hidden
    out["expect_exit"] = (0, 1)  # said at start-up (exit 1) or when a turn meets the page
    return out


def endless_stream(fake: FakeOllama, home: Path) -> dict[str, Any]:
    """The model's stream never ends: the call is stopped at PLANNER_REPLY_TIMEOUT and the session goes on."""
    fake.script("main", {"endless": True})
    out = _agent(home, fake.url, "hello\nadd after the stream\n", env={"PLANNER_REPLY_TIMEOUT": "2"})
    out["data"] = _integrity(home / "planner.db") == "ok"
    return out


def disk_full(fake: FakeOllama, home: Path) -> dict[str, Any]:
    """A file size limit a little above the database: writes fail as on a full disk."""
    import resource

    _agent(home, fake.url, "first\n")
    limit = (home / "planner.db").stat().st_size + 64 * 1024

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    out = _agent(home, fake.url, "".join(f"task {i} {'y' * 380}\n" for i in range(300)), preexec_fn=small_disk)
    out["data"] = _integrity(home / "planner.db") == "ok"
    return out


def process_faults(quick: bool) -> list[dict[str, Any]]:
    """Each neighbour fault in a fresh folder."""
    rows = []
    scenarios = [
        (f"write lock held {25 if quick else 30} s", lambda f, h: lock_held(f, h, 25 if quick else 30)),
        ("damaged page", damaged_page),
        ("endless model stream", endless_stream),
        ("disk full", disk_full),
    ]
    for what, fn in scenarios:
        with FakeOllama() as fake, tempfile.TemporaryDirectory() as tmp:
            fake.respond_with("main", _adder)  # scripted replies (the endless one) come first
            rows.append({"what": what, **fn(fake, Path(tmp))})
    return rows


def process_table(rows: list[dict[str, Any]]) -> bool:
    """Print the neighbour-fault table; whether every scenario held."""
    print(f"{'neighbour fault':<28} {'exit':>4} {'trace':>6} {'data':>5} {'s':>6}  what the user saw")
    good_all = True
    for r in rows:
        good = r["exit"] in r.get("expect_exit", (0,)) and not r["traceback"] and r["data"] and not r["junk"]
        good = good and bool(r["said"])
        print(
            f"{r['what']:<28} {r['exit']:>4} {'yes' if r['traceback'] else 'no':>6} {'ok' if r['data'] else 'BAD':>5} "
            f"{r['seconds']:>6.1f}  {r['said'][:90]}{'' if good else '  FAILED'}"
        )
        good_all &= good
    return good_all


def run(quick: bool) -> list[dict[str, Any]]:
    """Every fault scenario, as table rows."""
    rows = [{"what": f"kill -9 mid-turn x{3 if quick else 50}", **kill_rounds(3 if quick else 50)}]
    for n in (2, 4):
        turns = 5 if quick else 40
        rows.append({"what": f"{n} writers x {turns} turns", **writers(n, turns)})
    return rows


def table(rows: list[dict[str, Any]]) -> bool:
    """Print the fault table; whether every scenario held."""
    print(
        f"{'fault scenario':<28} {'tasks':>6} {'lost':>5} {'dup':>4} {'locked':>7} {'integrity':>10} {'log':>4} "
        f"{'history':>8} {'s':>6}  result"
    )
    all_good = True
    for r in rows:
        good = (
            r["integrity"] == "ok"
            and not r["lost"]
            and not r["duplicates"]
            and not r.get("locked")
            and not r.get("failed")
            and r["log_ok"]
            and r["history_ok"]
        )
        print(
            f"{r['what']:<28} {r['tasks']:>6} {r['lost']:>5} {r['duplicates']:>4} {r.get('locked', 0):>7} "
            f"{r['integrity']:>10} {'ok' if r['log_ok'] else 'BAD':>4} {'ok' if r['history_ok'] else 'BAD':>8} "
            f"{r['seconds']:>6.1f}  {'ok' if good else 'FAILED'}"
        )
        all_good &= good
    return all_good
