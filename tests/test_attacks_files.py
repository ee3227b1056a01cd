"""The attack findings about files: hostile export and import files, and a database file
its neighbours lock, damage, make read-only or fill. Numbered like test_attacks.py."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from helpers import adder, call, run_agent, tasks
from hypothesis import example, given, settings
from hypothesis import strategies as st

from planner.memory.history import session_messages
from planner.storage.exchange import export, import_text
from planner.tools import dispatch

# ---------------------------------------------------------------- 10, 11, 20, 21, 22: files


@settings(max_examples=200, deadline=None)
@given(title=st.text(min_size=1, max_size=80).filter(lambda t: t.strip()), notes=st.text(max_size=80))
@example(title="\\N", notes="C:\\Notes\\new")  # icalendar writes a backslash before N as a line break
def test_10_any_title_and_notes_stay_one_value_in_ics(title, notes):
    import icalendar

    from planner.storage.exchange import to_ics

    task = {
        "uid": "u1",
        "title": title,
        "status": "open",
        "due_date": "2026-12-04",
        "due_time": None,
        "priority": None,
        "tags": [],
        "notes": notes or None,
        "repeat": None,
    }
    items = [c for c in icalendar.Calendar.from_ical(to_ics([task])).walk() if c.name in ("VEVENT", "VTODO")]
    assert len(items) == 1 and str(items[0]["uid"]) == "u1@planner"
    assert str(items[0]["summary"]) == ics_text(title)
    if notes:
        assert str(items[0]["description"]) == ics_text(notes)


# Unicode's mandatory line breaks (UAX #14: BK, CR, LF, NL; CR LF is one), and RFC 5545's CONTROL characters
# (%x00-08 / %x0A-1F / %x7F), which an iCalendar TEXT value may not hold: the oracle for what a title becomes.
BREAKS = "\n\x0b\x0c\x85\u2028\u2029"
CONTROLS = {chr(c) for c in [*range(0x00, 0x09), *range(0x0A, 0x20), 0x7F]}


def ics_text(text: str) -> str:
    """A text as an iCalendar value must read back: each line break one newline, other controls gone.

    One loss is the library's, not the format's: icalendar (7.3) writes a value that starts with U+FEFF
    without it, taking it for a byte-order mark (a title pasted from a file with one). Noted, not hidden:
    the planner would have to escape or refuse it to keep it.
    """
    text = text.removeprefix("\ufeff")
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\r":
            out.append("\n")
            i += 2 if text[i + 1 : i + 2] == "\n" else 1
            continue
        if ch in BREAKS:
            out.append("\n")
        elif ch not in CONTROLS:
            out.append(ch)
        i += 1
    return "".join(out)


def test_10_a_title_cannot_add_an_event_of_its_own():
    from planner.storage.exchange import to_ics

    evil = "x\rEND:VTODO\rBEGIN:VTODO\rUID:evil\rSUMMARY:pwned\rURL:http://x\u2028END:VEVENT"
    task = {
        "uid": "u1",
        "title": evil,
        "status": "open",
        "due_date": None,
        "due_time": None,
        "priority": None,
        "tags": [],
        "notes": None,
        "repeat": None,
    }
    text = to_ics([task])
    lines = text.replace("\r\n ", "").split("\r\n")  # unfolded content lines
    assert lines.count("BEGIN:VTODO") == 1 and not any(line.startswith(("UID:evil", "URL")) for line in lines)
    assert "\r" not in "".join(lines)
    import icalendar

    items = [c for c in icalendar.Calendar.from_ical(text).walk() if c.name in ("VEVENT", "VTODO")]
    assert [str(c["uid"]) for c in items] == ["u1@planner"]


def test_11_export_never_crashes_on_a_date_stored_by_an_older_planner(store):

    with store.write() as conn:
        conn.execute(
            "INSERT INTO tasks (title, due_date, uid, recurrence) VALUES ('far', '9999-12-31', 'u', 'FREQ=DAILY')"
        )
    for fmt in ("json", "todotxt", "ics"):
        assert "far" in export(store, fmt)


@pytest.mark.parametrize(
    "title",
    ["+groceries", "buy milk @home", "call due:friday people", "x marks the spot", "(A) team", "a \\ b", "pri:A"],
)
def test_20_todotxt_round_trips_titles_that_look_like_metadata(ctx, store, tmp_path, title):
    from planner.storage.db import Store

    dispatch(ctx, "add_task", {"title": title, "tags": ["home"], "due_date": "2026-12-04"})
    fresh = Store(tmp_path / "fresh.db")
    report = import_text(fresh, export(store, "todotxt"), "todotxt")
    assert not report["problems"], report
    assert [r[0] for r in fresh.conn().execute("SELECT title FROM tasks")] == [title]
    fresh.close()


def test_21_imported_rows_keep_their_titles_and_bad_files_are_one_line(store):
    r = import_text(store, json.dumps([{"uid": "a", "title": {"a": 1}}, {"uid": "b", "title": "ok"}]), "json")
    assert r["added"] == 1 and "title must be text" in r["problems"][0]
    r = import_text(store, "[" * 100_000, "json")
    assert r["added"] == 0 and r["problems"] == ["not a task file: it is nested too deeply to read"]
    r = import_text(store, json.dumps([{"uid": "c", "title": "t", "created_at": "2026-12-01T10:00:00+23:59"}]), "json")
    stored = store.conn().execute("SELECT created_at FROM tasks WHERE uid = 'c'").fetchone()[0]
    assert "+" not in stored and dt.datetime.fromisoformat(stored).tzinfo is None


def test_22_export_never_writes_through_a_symlink_and_refuses_a_folder(tmp_path):
    from helpers import clean_env, run_cli

    env = clean_env(PLANNER_HOME=str(tmp_path))
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    p = run_cli(["export", "-o", str(link)], env)
    # A link in a shared folder may be another user's, pointing anywhere: refused, the target untouched.
    assert p.returncode == 1 and "is a symbolic link" in p.stderr and real.read_text() == "old"
    p = run_cli(["export", "-o", str(real), "--force"], env)
    assert p.returncode == 0 and json.loads(real.read_text())["version"] == 1
    folder = tmp_path / "out"
    folder.mkdir()
    p = run_cli(["export", "-o", str(folder)], env)
    assert p.returncode == 1 and "it is a folder" in p.stderr and "Traceback" not in p.stderr
    assert list(tmp_path.glob(".*.part")) == [] and list(folder.iterdir()) == []


# ---------------------------------------------------------------- 8, 15, 26: the file and its neighbours


@pytest.fixture
def short_busy_timeout(monkeypatch, store):
    from planner.storage import db

    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 200)
    store.close()  # reopened with the short timeout on next use


def hold_write_lock(path):
    import sqlite3

    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    return other


def test_8_another_program_holding_the_write_lock_is_a_sentence_and_the_session_goes_on(
    fake, make_agent, ctx, store, short_busy_timeout
):
    from planner.storage.db import Fault

    BUSY = Fault.BUSY.value

    agent = make_agent(reflect=False)
    other = hold_write_lock(store.path)
    out, ok = dispatch(ctx, "add_task", {"title": "milk"})
    assert not ok and out["error"] == BUSY
    r = agent.run_turn("add milk")  # cannot even store the request
    assert r.error == BUSY
    other.execute("ROLLBACK")
    other.close()
    fake.script("main", {"tool_calls": [call("add_task", title="milk")]}, {"content": "Added."})
    assert agent.run_turn("add milk").reply == "Added." and [t["title"] for t in tasks(store)] == ["milk"]


def test_8_a_lock_taken_mid_turn_fails_the_write_and_keeps_the_history_valid(
    fake, make_agent, store, short_busy_timeout
):
    from planner.storage.db import Fault

    BUSY = Fault.BUSY.value

    holder = {}

    def lock_then_add(body):
        holder["c"] = hold_write_lock(store.path)
        return {"tool_calls": [call("add_task", title="milk")]}

    fake.respond_with("main", lock_then_add)
    agent = make_agent(reflect=False)
    r = agent.run_turn("add milk")
    assert r.error == BUSY and tasks(store) == []
    holder["c"].execute("ROLLBACK")
    fake.responders.pop("main")
    fake.script("main", {"content": "Hi."})
    assert agent.run_turn("hello").reply == "Hi."
    json.dumps(session_messages(store, "s1"))


def test_15_a_damaged_file_is_one_line_at_start_up_and_in_import(tmp_path, fake, ctx, store):
    for i in range(300):
        dispatch(ctx, "add_task", {"title": f"task {i} " + "x" * 200})
    store.close()
    import sqlite3

    conn = sqlite3.connect(store.path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(store.path.read_bytes())
    data[4096 * 3 : 4096 * 4] = b"\xff" * 4096  # one page of the tasks table overwritten
    store.path.write_bytes(bytes(data))
    env = {"PLANNER_DB": str(store.path)}
    p = run_agent(fake, tmp_path, ["/tasks", "hello"], "--no-reflect", env=env)
    assert "Traceback" not in p.stderr and p.stderr.count("\n") <= 3, p.stderr
    (tmp_path / "in.json").write_text(json.dumps([{"uid": "z", "title": "new"}]))
    p = run_agent(None, tmp_path, [], "import", str(tmp_path / "in.json"), env=env)
    assert "Traceback" not in p.stderr and p.stderr.count("\n") <= 3
    p = run_agent(None, tmp_path, [], "export", env=env)
    assert "Traceback" not in p.stderr and p.stderr.count("\n") <= 3


def test_15_a_read_only_file_is_explained(tmp_path, monkeypatch):
    import sqlite3

    from planner.storage import db

    path = tmp_path / "ro.db"
    sqlite3.connect(path).close()  # an empty file that needs its schema: a write
    real = db._open
    monkeypatch.setattr(db, "_open", lambda p: real_ro(p, real))
    with pytest.raises(db.DatabaseError, match="read-only"):
        db.Store(path)


def real_ro(path, real):
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


def test_26_a_full_disk_is_one_line_and_the_session_goes_on(fake, tmp_path):
    import resource
    import subprocess
    import sys

    from helpers import ROOT, clean_env, run_cli

    fake.respond_with("main", adder)
    env = clean_env(OLLAMA_HOST=fake.url, PLANNER_HOME=str(tmp_path), PLANNER_TODAY="2026-12-01")
    args = [sys.executable, str(ROOT / "agent.py"), "--model", "main", "--embed-model", "embed"]
    args += ["--no-reflect", "--no-auto-memory", "--session", "s"]
    run_cli(args[2:], env, "first\n")  # the schema
    limit = (tmp_path / "planner.db").stat().st_size + 64 * 1024

    def small_disk():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    lines = "".join(f"task {i} {'y' * 380}\n" for i in range(400))
    p = subprocess.run(args, input=lines, capture_output=True, text=True, env=env, timeout=120, preexec_fn=small_disk)
    assert p.returncode == 0, p.stderr[-500:]
    assert "disk is full" in p.stderr and "Traceback" not in p.stderr and "Logging error" not in p.stderr
    import sqlite3

    conn = sqlite3.connect(tmp_path / "planner.db")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
