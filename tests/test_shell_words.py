"""What a person reads from the shell: their own words back (every phrase read, `show ID`, undo in words), and
for what went wrong one line for a person, never for the model: no tool names, no "tell the user", no raw
JSON; the program named as it was called; a missing password asked for in a terminal and named elsewhere;
a file of an unknown kind refused; plurals right; global options before or after any subcommand.

Statuses are outcomes.py's classes, read here as the numbers a script sees (an outside view)."""

from __future__ import annotations

import json
import re
import sys

import pexpect
import pytest
from helpers import ROOT, TODAY, clean_env, in_process, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.tools import TOOLS
from planner.ui.subcommands import SUBS

CLOSED = "http://127.0.0.1:9"
# The tools' names as a model calls them (verb_noun); "agenda", "forget" and the like are also people's commands.
TOOL_NAMES = [name for name in [*TOOLS, "undo_last_change", "redo_last_change"] if "_" in name]


def env(home, **extra) -> dict:
    return clean_env(OLLAMA_HOST=CLOSED, PLANNER_HOME=str(home), PLANNER_TODAY=TODAY.isoformat(), **extra)


def shell(home, *args, **extra):
    return run_cli(list(args), env(home, **extra))


def for_people(text: str) -> bool:
    """No tool name, nothing addressed to a model, no traceback, no raw JSON."""
    low = text.lower()
    return not (
        any(re.search(rf"\b{name}\b", text) for name in TOOL_NAMES)
        or "tell the user" in low
        or "the user" in low
        or "traceback" in low
        or re.search(r"[\[{]\s*\"", text)
    )


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A database with a few tasks: 1 open with a time and a note, 2 done, 3 with a reminder."""
    home = tmp_path_factory.mktemp("words")
    for line in ("call the dentist friday 3pm +health", "buy milk", "renew passport due:friday remind:1-hour-before"):
        assert shell(home, "add", *line.split()).returncode == 0
    assert shell(home, "note", "1", "bring", "the", "card").returncode == 0
    assert shell(home, "done", "2").returncode == 0
    return home


FAILING = st.one_of(
    st.tuples(
        st.sampled_from(["done", "cancel", "reopen", "delete", "show"]),
        st.sampled_from(["99", "abc", "-1", "0", "1" * 30]),
    ),
    st.tuples(st.sampled_from(["edit", "note"]), st.sampled_from(["99", "x", "1e3"]), st.just("new words")),
    st.tuples(st.just("delete"), st.sampled_from(["1", "3"])),  # refused: no terminal, no --yes
    st.tuples(st.just("tasks"), st.sampled_from(["due:someday", "pri:urgent", "done waiting", "start:whenever"])),
    st.tuples(
        st.just("add"), st.sampled_from(["+tag !high", "x next friday", "x rec:zz", "x est:lots", "x remind:zz"])
    ),
    st.tuples(st.just("agenda"), st.sampled_from(["0", "999"])),
    st.tuples(st.just("plan"), st.sampled_from(["someday", "2026-11-01"])),
    st.tuples(st.just("import"), st.sampled_from(["/nonexistent.json", str(ROOT / "pyproject.toml")])),
    st.tuples(st.sampled_from(["/tasks due:someday", "/agenda soon", "/nope", "/history x", "/forget"])),
)


@settings(max_examples=40, suppress_health_check=list(HealthCheck))
@given(command=FAILING)
def test_what_went_wrong_is_said_for_a_person_with_a_status_a_script_can_read(home, command):
    args = [w for part in command for w in part.split()]
    p = shell(home, *args)
    said = p.stderr + (p.stdout if args[0].startswith("/") else "")  # a one-shot /command answers on stdout
    assert p.returncode in (1, 2, 4), (args, p.returncode, said)
    assert said.strip() and for_people(said), (args, said)
    assert re.match(r"(error|usage): ", said), said  # the first thing said is what went wrong


@pytest.mark.parametrize("called, shown", [("planner", "planner"), ("agent.py", "python agent.py")])
def test_the_program_is_named_as_it_was_called(tmp_path, called, shown):
    program = ROOT / "agent.py" if called == "agent.py" else tmp_path / "bin" / "planner"
    p = in_process(["done", "99"], env(tmp_path), program=program)
    assert p.returncode == 1 and f"`{shown} tasks all`" in p.stderr
    p = in_process(["add", "--help"], env(tmp_path), program=program)
    assert p.stdout.startswith(f"usage: {shown} add")
    extra = {"PLANNER_CALDAV_URL": "http://127.0.0.1:9/tasks/", "PLANNER_CALDAV_USER": "ana"}
    p = in_process(["sync"], env(tmp_path, **extra), program=program)
    assert p.returncode == 1 and "PLANNER_CALDAV_PASSWORD" in p.stderr and "python" not in p.stderr


def test_add_echoes_every_phrase_and_tasks_show_and_undo_say_it_in_words(tmp_path):
    p = shell(tmp_path, "add", *"renew passport friday 3pm remind:1-hour-before every year ~30m start:monday".split())
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "added 1  renew passport  2026-12-04 15:00  ~30m start:2026-12-07 (every year) remind:2026-12-04T14:00",
        "  'friday 3pm' -> Friday 2026-12-04 15:00; 'monday' -> Monday 2026-12-07; '~30m' -> 30 minutes; "
        "remind '1 hour before' -> Friday 2026-12-04 14:00",
    ]
    assert shell(tmp_path, "note", "1", "bring", "the", "old", "one").returncode == 0
    assert shell(tmp_path, "edit", "1", "saturday").returncode == 0
    listed = shell(tmp_path, "tasks", COLUMNS="120").stdout
    assert "renew passport [1]" in listed and "remind:2026-12-04T14:00" in listed  # the notes count, the reminder
    undone = shell(tmp_path, "undo")
    assert undone.stdout == 'undone:\n  task 1 "renew passport": due 2026-12-05 15:00 → 2026-12-04 15:00\n'
    undone = shell(tmp_path, "undo")
    assert undone.stdout == 'undone:\n  task 1 "renew passport": note removed "bring the old one"\n'
    redone = shell(tmp_path, "redo")
    assert redone.stdout == 'redone:\n  task 1 "renew passport": note added "bring the old one"\n'
    show = shell(tmp_path, "show", "1")
    assert show.returncode == 0 and for_people(show.stdout)
    lines = show.stdout.splitlines()
    assert lines[:2] == ["task 1  renew passport", "  due       2026-12-04 15:00 (Friday)"]
    assert "  reminder  2026-12-04 14:00" in lines and "  repeat    every year" in lines
    assert re.search(r"^notes\n  2026-12-01 \d\d:\d\d  bring the old one$", show.stdout, re.M)
    history = show.stdout.split("history\n", 1)[1].splitlines()
    assert [re.sub(r"^  \S+ \S+  ", "", h) for h in history] == [
        "added",
        'note added "bring the old one"',  # undone, then redone
        "due 2026-12-04 15:00 → 2026-12-05 15:00  (undone)",
    ]


def test_a_file_of_an_unknown_kind_is_refused_unless_format_says_what_it_is_and_counts_take_plurals(tmp_path):
    (tmp_path / "list.csv").write_text("buy milk\n")
    p = shell(tmp_path, "import", str(tmp_path / "list.csv"))
    assert p.returncode == 2 and "cannot tell what kind of file list.csv is" in p.stderr and "--format" in p.stderr
    assert shell(tmp_path, "tasks").stdout.startswith("no open tasks")
    p = shell(tmp_path, "import", str(tmp_path / "list.csv"), "--format", "todotxt")
    assert p.returncode == 0 and p.stderr == "imported 1 task, skipped 0 already there\n"
    (tmp_path / "cal.ics").write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:e1\r\nDTSTAMP:20261201T000000Z\r\n"
        "DTSTART:20261203T100000\r\nDTEND:20261203T110000\r\nSUMMARY:meeting\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    p = shell(tmp_path, "import", str(tmp_path / "cal.ics"))
    assert p.returncode == 0 and "calendar: 1 event added" in p.stderr
    p = shell(tmp_path, "backup", str(tmp_path / "copy.db"))
    assert p.stderr.startswith("backed up 1 task and 0 memories to ")
    p = shell(tmp_path, "export", "--plan", "week", "-o", str(tmp_path / "plan.ics"))
    assert p.returncode == 0 and p.stderr.startswith("exported the plan's blocks to ")


def test_a_missing_caldav_password_is_named_where_no_one_can_type_it(tmp_path, tasklist):
    url, _ = tasklist
    p = shell(tmp_path, "sync", PLANNER_CALDAV_URL=url, PLANNER_CALDAV_USER="ana")
    assert p.returncode == 1
    assert p.stderr.startswith("error: no CalDAV password is set for ana at ") and "refused" not in p.stderr
    p = shell(tmp_path, "sync", PLANNER_CALDAV_URL=url, PLANNER_CALDAV_USER="ana", PLANNER_CALDAV_PASSWORD="wrong")
    assert p.returncode == 1 and "refused the user name or password" in p.stderr  # a wrong one is said as wrong


def test_a_missing_caldav_password_is_asked_for_in_a_terminal_and_never_shown(tmp_path, tasklist):
    from phone import PASSWORD

    url, _ = tasklist
    assert shell(tmp_path, "add", "buy", "milk").returncode == 0
    child = pexpect.spawn(
        sys.executable,
        [str(ROOT / "agent.py"), "sync"],
        env=env(tmp_path, PLANNER_CALDAV_URL=url, PLANNER_CALDAV_USER="ana", TERM="dumb"),
        encoding="utf-8",
        timeout=30,
        dimensions=(24, 100),
    )
    child.expect("CalDAV password for ana at ")
    child.sendline(PASSWORD)
    child.expect("synced with .*: sent 1")
    child.expect(pexpect.EOF)
    child.wait()
    assert child.exitstatus == 0 and PASSWORD not in child.before


@pytest.mark.parametrize("sub", [s.name for s in SUBS if s.name not in ("doctor", "mcp", "sync")])
def test_global_options_stand_before_or_after_any_subcommand(tmp_path, sub):
    needs = {
        "add": ["tea"],
        "done": ["1"],
        "reopen": ["1"],
        "cancel": ["1"],
        "edit": ["1", "friday"],
        "note": ["1", "soon"],
        "delete": ["1"],
        "show": ["1"],
        "export": ["--format", "json"],
        "import": [str(tmp_path / "t.txt")],
        "backup": [str(tmp_path / "b.db")],
    }
    (tmp_path / "t.txt").write_text("tea\n")
    glob = ["--model", "m", "--no-reflect", "--think", "--guards", "small", "--yes", "-v"]
    for n, before in enumerate((True, False), start=1):
        assert shell(tmp_path, "add", f"task {n}").returncode == 0  # task n for this round's id
        (tmp_path / "b.db").unlink(missing_ok=True)
        words = [str(n) if w == "1" else w for w in needs.get(sub, [])]
        args = [*glob, sub, *words] if before else [sub, *words, *glob]
        p = shell(tmp_path, *args)
        assert p.returncode == 0, (args, p.stderr)


def test_yes_before_or_after_the_subcommand_is_the_users_yes(tmp_path):
    for i in range(4):
        assert shell(tmp_path, "add", f"chore {i}").returncode == 0
    assert shell(tmp_path, "delete", "1").returncode == 4
    assert shell(tmp_path, "--yes", "delete", "1").returncode == 0
    assert shell(tmp_path, "delete", "2", "--yes").returncode == 0
    assert shell(tmp_path, "delete", "--yes", "3").returncode == 0
    left = json.loads(shell(tmp_path, "tasks", "all", "--json").stdout)["tasks"]
    assert [t["title"] for t in left] == ["chore 3"]
