"""One-shot requests, subcommands and `-q`/`-v` from the command line: `python agent.py "add milk"`,
`python agent.py doctor`, exit codes; driven as a script would, against the fake Ollama server."""

import json
import sqlite3

from conftest import call
from helpers import db_tasks, run_agent

from planner.storage.db import SCHEMA_VERSION


def test_one_shot_request_from_the_command_line_and_from_stdin(fake, tmp_path):
    fake.script(
        "main", {"tool_calls": [call("add_task", title="milk", due_date="2026-12-02")]}, {"content": "Added milk."}
    )
    p = run_agent(fake, tmp_path, [], "--no-reflect", "add milk for tomorrow", process=True)
    assert p.returncode == 0 and p.stdout == "Added milk.\n" and p.stderr == ""
    assert db_tasks(tmp_path) == ["milk"]
    fake.script("main", {"content": "You have milk."})
    p = run_agent(fake, tmp_path, ["what do I have?"], "-", process=True)
    assert p.returncode == 0 and p.stdout == "You have milk.\n"
    assert fake.chats("main")[-1]["messages"][-1]["content"].startswith("what do I have?")
    fake.script("main", {"status": 500, "error": "boom"})
    p = run_agent(fake, tmp_path, [], "hello")
    assert p.returncode == 1 and p.stderr.startswith("error: Ollama answered with an error: boom")
    p = run_agent(fake, tmp_path, [], "-")
    assert p.returncode == 2 and p.stderr.strip() == "error: no request on stdin"


def test_one_shot_commands_run_locally_and_exit_codes_say_how_it_went(fake, tmp_path):
    fake.script("main", {"tool_calls": [call("add_task", title="x")]}, {"content": "Added x."})
    assert run_agent(fake, tmp_path, [], "--no-reflect", "add x").returncode == 0
    p = run_agent(fake, tmp_path, [], "/tasks")  # a command: no model call
    assert p.returncode == 0 and "x" in p.stdout and len(fake.chats("main")) == 2
    assert run_agent(fake, tmp_path, [], "/bogus").returncode == 2  # a /command that cannot be read: usage
    fake.script("main", {"tool_calls": [call("delete_task", id=1)]}, {"content": "I could not delete it."})
    p = run_agent(fake, tmp_path, [], "--no-reflect", "delete x")  # no terminal, no --yes: refused
    assert p.returncode == 4 and p.stdout.strip() == "I could not delete it."
    fake.respond_with("main", lambda body: {"tool_calls": [call("list_tasks", limit=len(body["messages"]))]})
    p = run_agent(fake, tmp_path, [], "--no-reflect", "loop", env={"PLANNER_MAX_TURNS": "2"})
    assert p.returncode == 3 and "stopped after 2 steps" in p.stdout
    fake.responders.pop("main")
    fake.script("main", {"status": 500, "error": "boom"})
    assert run_agent(fake, tmp_path, [], "--no-reflect", "hi").returncode == 1


def test_subcommands_work_without_ollama_and_take_global_options_on_either_side(fake, tmp_path):
    fake.script("main", {"tool_calls": [call("add_task", title="milk", due_date="2026-12-02")]}, {"content": "ok"})
    run_agent(fake, tmp_path, ["add milk"], "--no-reflect")
    db = str(tmp_path / "planner.db")
    for args in (["--db", db, "tasks"], ["tasks", "--db", db], ["--today", "2026-12-01", "agenda", "--db", db]):
        p = run_agent(None, tmp_path, [], *args)  # Ollama unreachable: not needed
        assert p.returncode == 0 and "milk" in p.stdout, (args, p.stderr)
    backup = tmp_path / "copy.db"
    p = run_agent(None, tmp_path, [], "backup", str(backup))
    assert p.returncode == 0 and p.stderr == f"backed up 1 task and 0 memories to {backup}\n"

    assert sqlite3.connect(backup).execute("SELECT title FROM tasks").fetchall() == [("milk",)]
    p = run_agent(None, tmp_path, [], "export", "--memories")
    doc = json.loads(p.stdout)
    assert doc["contains"] == ["tasks", "memories", "scenes"] and doc["memories"] == [] and doc["scenes"] == []
    assert json.loads(run_agent(None, tmp_path, [], "export").stdout)["contains"] == ["tasks"]


def test_words_without_quotes_are_one_request_and_help_says_what_there_is(fake, tmp_path):
    fake.script("main", {"content": "Added."})
    p = run_agent(fake, tmp_path, [], "--no-reflect", "buy", "milk", "tomorrow")
    assert p.returncode == 0 and fake.chats("main")[0]["messages"][-1]["content"].startswith("buy milk tomorrow")
    p = run_agent(None, tmp_path, [], "--help")
    for word in ("backup FILE", "export", "import FILE", "PLANNER_GUARDS", "planner.db", "examples:"):
        assert word in p.stdout
    p = run_agent(None, tmp_path, [], "--version")
    assert p.returncode == 0 and p.stdout.startswith("planner ")


def test_a_run_that_said_nothing_leaves_no_session_and_one_shots_share_one(fake, tmp_path):

    run_agent(fake, tmp_path, ["/tasks", "exit"])
    conn = sqlite3.connect(tmp_path / "planner.db")
    assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0
    fake.script("main", {"content": "One."}, {"content": "Two."})
    run_agent(fake, tmp_path, [], "--no-reflect", "first")
    run_agent(fake, tmp_path, [], "--no-reflect", "second")
    assert conn.execute("SELECT name FROM sessions").fetchall() == [("oneshot",)]
    assert [m["content"] for m in fake.chats("main")[1]["messages"] if m["role"] == "user"] == ["first", "second"]


def test_doctor_says_what_is_there_and_exits_0_only_when_everything_needed_is(fake, tmp_path):
    fake.sizes["main"] = "9.0B"
    fake.script("main", {"content": "Hi."})
    run_agent(fake, tmp_path, ["hello"], "--no-reflect")
    p = run_agent(fake, tmp_path, [], "doctor")
    assert p.returncode == 0, p.stdout
    for words in (
        "ok ollama",
        "version",
        "ok main",
        "main (9.0B; completion, tools)",
        "auto -> standard",
        "planner.db 600",
        f"schema {SCHEMA_VERSION}",
        "1 sessions",
        "everything the planner needs is here",
    ):
        assert words in " ".join(p.stdout.split()), (words, p.stdout)
    p = run_agent(fake, tmp_path, [], "doctor", "--model", "missing-model")
    assert p.returncode == 1 and "ollama pull missing-model" in p.stdout
    p = run_agent(None, tmp_path, [], "doctor")
    assert p.returncode == 1 and "Cannot reach Ollama" in p.stdout and "Traceback" not in p.stderr


def test_verbose_shows_every_model_call_and_quiet_hides_the_trace_in_one_shot_mode(fake, tmp_path):
    def script():
        fake.script(
            "main",
            {"tool_calls": [call("add_task", title="visit Ana"), call("remember", fact="Ana lives in Lisbon.")]},
            {"content": "Noted."},
        )

    script()
    p = run_agent(fake, tmp_path, [], "-v", "my sister Ana lives in Lisbon, add a visit")
    assert p.returncode == 0 and p.stdout == "Noted.\n"  # stdout stays the reply alone
    err = p.stderr.splitlines()
    assert any(line.startswith('  ↳ add_task(title="visit Ana") ✓') for line in err)
    assert sum(line.startswith("  · main ") and line.endswith("eval tokens") for line in err) == 2
    assert any(line.startswith("  · embedding: embed ") and line.endswith(" 1 texts") for line in err)
    assert any(line.startswith("  · critic: critic ") for line in err)
    assert err[-2].startswith("  · memory extraction: critic ")  # the background call, after the reply
    assert err[-1] == "  · memory extraction: nothing stored (already remembered: Ana lives in Lisbon.)"
    script()
    p = run_agent(fake, tmp_path, [], "-q", "-v", "my sister Ana lives in Lisbon, add a visit")
    assert p.returncode == 0 and "↳" not in p.stderr and "· critic: critic" in p.stderr
    script()
    p = run_agent(fake, tmp_path, [], "my sister Ana lives in Lisbon, add a visit")
    assert p.returncode == 0 and p.stderr == ""  # no one watches stderr: no trace unless -v
