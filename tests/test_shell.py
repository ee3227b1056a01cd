"""The everyday commands from the shell, with Ollama stopped: the notation, each command through the real
CLI, tables that fit the terminal (read back through a VT100 screen), the help, and urgency."""

from __future__ import annotations

import datetime as dt
import json

import pyte
import pytest
from helpers import ROOT, TODAY, clean_env, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.storage.urgency import urgency
from planner.tools import dispatch
from planner.ui.quickadd import NotationError, filters, read

TABLE = json.loads((ROOT / "tests" / "data" / "quickadd.json").read_text())["rows"]
CLOSED = "http://127.0.0.1:9"  # nothing listens there: Ollama is down


def shell(tmp_path, *args, env=None, input=None, process=False):
    e = clean_env(
        **{"OLLAMA_HOST": CLOSED, "PLANNER_HOME": str(tmp_path), "PLANNER_TODAY": TODAY.isoformat(), **(env or {})}
    )
    return run_cli(args, e, input, process=process)


@pytest.mark.parametrize("line, expected", TABLE, ids=[r[0][:40] for r in TABLE])
def test_a_line_of_the_notation_becomes_the_task_it_says(ctx, line, expected):
    if "error" in expected:
        with pytest.raises(NotationError, match=expected["error"].replace("(", r"\(").replace(")", r"\)")):
            read(line.split(), TODAY)
        return
    reading = read(line.split(), TODAY)
    out, ok = dispatch(ctx, "add_task", {"title": reading.title, **reading.args})
    assert ok, out
    assert {k: out["added"].get(k) for k in expected} == expected
    shown = set(out["added"]) - {"id", "status", "due_date", *expected}
    assert not shown, f"unexpected fields {shown}"


def test_a_day_of_use_from_the_shell_with_ollama_stopped(tmp_path):
    p = shell(tmp_path, "add", "call", "the", "dentist", "friday", "3pm", "+health", "!high", "~30m", "#personal")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == "added 1  call the dentist  2026-12-04 15:00  !high +health #personal ~30m"
    assert "'friday 3pm' -> Friday 2026-12-04 15:00" in p.stdout and "'~30m' -> 30 minutes" in p.stdout
    shell(tmp_path, "add", "buy", "milk", "tomorrow", "+shopping")
    shell(tmp_path, "add", "water", "the", "plants", "every", "monday")
    listed = shell(tmp_path, "tasks").stdout.splitlines()
    assert listed[0].split() == ["id", "title", "due", "status", "more"]
    assert [line.split()[0] for line in listed[1:]] == ["1", "2", "3"]  # most urgent first
    assert shell(tmp_path, "tasks", "+shopping").stdout.count("\n") == 2  # the header and milk
    assert "call the dentist" in shell(tmp_path, "tasks", "dentist").stdout
    assert "buy milk" in shell(tmp_path, "tasks", "due:tomorrow").stdout
    assert json.loads(shell(tmp_path, "tasks", "--json", "#personal").stdout)["tasks"][0]["id"] == 1
    done = shell(tmp_path, "done", "2", "3")
    assert done.returncode == 0 and "done 2  buy milk" in done.stdout and "next 4  water the plants" in done.stdout
    assert "undone:" in shell(tmp_path, "undo").stdout
    assert shell(tmp_path, "tasks", "done").stdout.startswith("no done tasks")
    assert "redone:" in shell(tmp_path, "redo").stdout
    agenda = shell(tmp_path, "agenda", "14").stdout
    assert "call the dentist" in agenda and "water the plants" in agenda
    edited = shell(tmp_path, "edit", "1", "saturday", "!low", "call", "the", "dentist", "back")
    assert edited.returncode == 0 and "changed 1  call the dentist back  2026-12-05" in edited.stdout
    assert shell(tmp_path, "note", "1", "bring", "the", "card").returncode == 0
    assert shell(tmp_path, "cancel", "1").stdout.startswith("cancelled 1")
    assert shell(tmp_path, "reopen", "1").stdout.startswith("reopened 1")
    assert "personal" in shell(tmp_path, "lists").stdout


def test_delete_asks_and_needs_yes_where_no_one_can_answer(tmp_path):
    shell(tmp_path, "add", "old", "chore")
    p = shell(tmp_path, "delete", "1")
    assert (
        p.returncode == 4
        and p.stderr == "error: task 1 was not deleted: that asks for your yes; run it in a terminal, or add --yes\n"
    )
    assert shell(tmp_path, "delete", "1", "--yes").stdout.startswith("deleted 1")
    assert shell(tmp_path, "tasks").stdout.startswith("no open tasks")


def test_bad_notation_and_ids_are_one_line_each(tmp_path):
    p = shell(tmp_path, "add", "+tag", "!high")
    assert p.returncode == 2 and p.stderr.startswith("error: the task needs a title")
    p = shell(tmp_path, "done", "99")
    assert p.returncode == 1 and p.stderr.startswith("error: there is no task 99; `python agent.py tasks all`")
    p = shell(tmp_path, "tasks", "due:someday")
    assert p.returncode == 2 and "cannot read due:'someday'" in p.stderr


def test_one_shot_slash_commands_run_with_ollama_down_and_create_nothing_else(tmp_path):
    for command in ("/agenda", "/tasks", "/help", "/undo", "/lists"):
        p = shell(tmp_path, command)
        assert p.returncode == 0 and "Cannot reach Ollama" not in p.stderr, (command, p.stderr)
    p = shell(tmp_path / "other", "what is due?")  # a conversation needs Ollama: one line, and no database made
    assert p.returncode == 1 and "Cannot reach Ollama" in p.stderr and not (tmp_path / "other" / "planner.db").exists()


def test_a_conversation_starts_without_the_embedding_model_and_says_memory_is_off(fake, tmp_path):
    del fake.models["embed"]
    fake.script("main", {"content": "Hello."})
    env = {"OLLAMA_HOST": fake.url}
    args = ["--model", "main", "--critic-model", "critic", "--embed-model", "embed", "--no-reflect", "hello"]
    p = shell(tmp_path, *args, env=env)
    assert p.returncode == 0 and "long-term memory is off this run" in p.stderr and "Hello." in p.stdout
    fake.script("main", {"content": "Hi again."})
    p = shell(tmp_path, *args, "--no-memory", env=env)
    assert p.returncode == 0 and "memory is off" not in p.stderr


@pytest.mark.parametrize("cols", [40, 80, 200])
def test_the_task_table_fits_the_terminal(tmp_path, cols):
    shell(tmp_path, "add", "x" * 90, "friday", "+tag", "!high")
    shell(tmp_path, "add", "pay", "rent", "tomorrow")
    out = shell(tmp_path, "tasks", env={"COLUMNS": str(cols)}).stdout
    screen = pyte.Screen(cols, 20)
    pyte.Stream(screen).feed(out.replace("\n", "\r\n"))
    shown = [row.rstrip() for row in screen.display if row.strip()]
    assert len(shown) == 3  # no line wrapped onto a second row
    long = next(row for row in shown if row.lstrip().startswith("1"))
    title = long.split("  ")[1].strip() if cols < 200 else long
    if cols < 200:
        assert title.endswith("…") and len(title) >= 12
    else:
        assert "x" * 90 in long
    assert "pay rent" in shown[-1] or "pay rent" in shown[1]


def test_every_help_line_fits_80_columns_and_each_subcommand_has_its_own_help(tmp_path):
    from planner.ui.subcommands import SUBS

    main = shell(tmp_path, "--help").stdout
    assert all(len(line) < 80 for line in main.splitlines() if str(tmp_path) not in line)  # the user's own path
    for sub in SUBS:
        p = shell(tmp_path, sub.name, "--help")
        assert p.returncode == 0 and p.stdout.startswith(f"usage: python agent.py {sub.name}")
        assert all(len(line) < 80 for line in p.stdout.splitlines()), sub.name
        assert sub.about.split()[0] in p.stdout
    assert "PLANNER_CALDAV_URL" in shell(tmp_path, "sync", "--help").stdout
    assert shell(tmp_path, "-V").stdout.startswith("planner ")


# ---------------------------------------------------------------- urgency

DAY = dt.date(2026, 12, 1)


def task(due_days: int | None = None, priority: str | None = None, age: int = 0, start_in: int | None = None):
    return {
        "status": "open",
        "priority": priority,
        "created_at": (DAY - dt.timedelta(days=age)).isoformat(),
        "due_date": (DAY + dt.timedelta(days=due_days)).isoformat() if due_days is not None else None,
        "start_date": (DAY + dt.timedelta(days=start_in)).isoformat() if start_in is not None else None,
    }


@settings(max_examples=100)
@given(st.integers(1, 400), st.integers(0, 400), st.integers(0, 3000), st.integers(0, 3000))
def test_an_overdue_high_task_never_sorts_after_a_later_low_one(late, ahead, age_a, age_b):
    assert urgency(task(-late, "high", age_a), DAY) > urgency(task(ahead, "low", age_b), DAY)


@settings(max_examples=100)
@given(
    st.integers(-400, 400), st.integers(0, 30), st.sampled_from([None, "low", "medium", "high"]), st.integers(0, 2000)
)
def test_urgency_rises_as_the_due_date_nears_and_with_priority(due, sooner, priority, age):
    assert urgency(task(due - sooner, priority, age), DAY) >= urgency(task(due, priority, age), DAY)
    order = [None, "low", "medium", "high"]
    higher = order[min(order.index(priority) + 1, 3)]
    assert urgency(task(due, higher, age), DAY) >= urgency(task(due, priority, age), DAY)


@settings(max_examples=100)
@given(st.integers(-30, 30), st.sampled_from([None, "low", "high"]), st.integers(1, 60))
def test_a_task_waiting_for_its_start_or_for_its_steps_comes_after_the_same_task_ready(due, priority, start):
    ready = urgency(task(due, priority), DAY)
    assert urgency(task(due, priority, start_in=start), DAY) < ready
    assert urgency(task(due, priority), DAY, open_children=2) < ready
    assert urgency({**task(due, priority), "status": "done"}, DAY) == 0


@pytest.mark.parametrize(
    ("symbol", "word"),
    [("+home", "tag:home"), ("#work", "list:work"), ("#work", "project:work"), ("!high", "pri:high")],
)
def test_each_filter_has_a_spelling_bash_leaves_alone_and_it_reads_the_same(symbol, word):
    today = dt.date(2026, 12, 1)
    assert filters([word, "report"], today) == filters([symbol, "report"], today) != filters(["report"], today)


def test_a_priority_filter_that_is_not_one_says_which_words_are():
    with pytest.raises(NotationError, match="write pri:high, pri:medium or pri:low"):
        filters(["pri:urgent"], dt.date(2026, 12, 1))


def test_import_dash_reads_standard_input_so_a_task_export_can_be_piped_in(tmp_path):
    exported = json.dumps(
        [
            {
                "uuid": "6f1c2a4e-1111-4c3b-9a55-0123456789ab",
                "description": "fix the bike",
                "status": "pending",
                "project": "home",
                "entry": "20261120T080000Z",
            }
        ]
    )
    p = shell(tmp_path, "import", "-", input=exported, process=True)  # a real pipe
    assert p.returncode == 0 and p.stderr == "imported 1 task, skipped 0 already there\n", p.stderr
    assert json.loads(shell(tmp_path, "tasks", "--json").stdout)["tasks"][0]["list"] == "home"
    again = shell(tmp_path, "import", "-", input=exported)
    assert again.stderr == "imported 0 tasks, skipped 1 already there\n"


def test_import_of_text_that_is_not_utf8_says_so_in_one_line_and_writes_nothing(tmp_path):
    e = clean_env(OLLAMA_HOST=CLOSED, PLANNER_HOME=str(tmp_path), PLANNER_TODAY=TODAY.isoformat())
    p = run_cli(["import", "-"], e, b"\xff\xfebuy milk", text=False)
    assert p.returncode == 1
    assert (
        p.stderr.decode()
        == "error: cannot read standard input: it is not UTF-8 text; save it as UTF-8 and import again\n"
    )
    assert shell(tmp_path, "tasks").stdout.startswith("no open tasks")


@pytest.mark.parametrize(
    "argv",
    [["edit", "1"], ["export", "--format", "nope"], ["--bogus"], ["done"], ["tasks", "--limit", "many"]],
)
def test_a_mistake_on_the_command_line_is_one_line_that_names_the_help(tmp_path, argv):
    p = run_cli(argv, clean_env(PLANNER_HOME=str(tmp_path)))
    assert p.returncode == 2 and p.stdout == "", p.stdout
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and "error:" in lines[0] and "--help`)" in lines[0], p.stderr
