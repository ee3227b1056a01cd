"""The full terminal interface (prompt_toolkit + rich) driven in a real
pseudo-terminal, and its pieces unit-tested with a recorded console."""

import itertools

import pexpect
import pytest
from helpers import call, wait_for
from rich.console import Console

from planner.memory.keeper import EXTRACT_PROMPT
from planner.ui.outcomes import Failure
from planner.ui.tui import SlashCompleter, TurnView, safe


@pytest.fixture
def spawn(pty_planner):
    """The full terminal interface: a terminal that wants colour."""
    return lambda *args: pty_planner("--no-auto-memory", *args, term="xterm", prompt="you>")


def test_a_request_shows_the_tool_trace_and_the_reply(fake, spawn):
    fake.script(
        "main",
        {"tool_calls": [call("add_task", title="buy milk", due_date="2026-12-02"), call("complete_task", id=9)]},
        {"content": "Added **buy milk** for tomorrow."},
    )
    child = spawn("--no-reflect")
    assert "0 open tasks, 0 overdue" in child.before and "Try:" in child.before
    child.sendline("add buy milk for tomorrow, and mark task 9 done")
    child.expect('add_task\\(title="buy milk", due_date="2026-12-02"\\) ✓')
    child.expect("complete_task\\(id=9\\) ✗ no task with id=9")
    child.expect("for tomorrow")  # rendered as Markdown: "buy milk" is bold
    child.expect("you>")


def test_tasks_table_and_tab_completion(fake, spawn, tmp_path):
    fake.script(
        "main", {"tool_calls": [call("add_task", title="file taxes", due_date="2026-11-20")]}, {"content": "Added."}
    )
    child = spawn("--no-reflect")
    child.sendline("add file taxes, it was due 2026-11-20")
    child.expect("Added")  # the turn is over: "you>" alone also matches the prompt redrawn as the line is typed
    child.expect("you>")
    child.send("/tas\t")
    # The completion shows as /tasks on screen; the bytes may draw "ks" apart, after cursor codes, when Tab's
    # redraw comes separately from the typed letters' (a loaded machine).
    child.expect(r"/tas(?:\x1b\[[0-9;?]*[A-Za-z])*ks")
    child.send("\r")
    child.expect("file taxes.*2026-11-20.*OVERDUE")
    child.expect("you>")


def test_ctrl_c_stops_the_stream_and_the_next_request_works(fake, spawn):
    fake.script("main", {"content": "A slow answer " * 30, "slow": 0.05}, {"content": "Next answer."})
    child = spawn()
    child.sendline("tell me something")
    child.expect("slow answer")
    child.sendintr()
    child.expect("\\[interrupted\\]")
    child.expect("you>")
    child.sendline("and now?")
    child.expect("Next answer.")


def test_input_history_survives_a_restart_and_ctrl_d_exits_0(fake, spawn):
    fake.respond_with("main", lambda body: {"content": "ok"})
    child = spawn()
    child.sendline("remember the milk")
    child.expect("ok")
    child.expect("you>")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.wait()
    assert child.exitstatus == 0
    again = spawn()
    again.send("\x1b[A")  # Up arrow
    again.expect("remember the milk")


def test_esc_enter_makes_one_multi_line_turn(fake, spawn):
    fake.respond_with("main", lambda body: {"content": "got it"})
    child = spawn()
    child.send("first line")
    child.send("\x1b\r")  # Esc-Enter
    child.send("second line\r")
    child.expect("got it")
    assert fake.chats("main")[-1]["messages"][-1]["content"] == "first line\nsecond line"


def test_turn_view_renders_trace_critic_and_markdown():
    view = TurnView(quiet=False, verbose=True)
    view.event("tool_start", {"name": "add_task", "arguments": {"title": "milk"}})
    view.event("tool_end", {"name": "add_task", "arguments": {"title": "milk"}, "ok": True, "result": {}})
    view.event("critic", {"done": False, "critique": "eggs are missing"})
    view.event("model", {"model": "main", "seconds": 1.5, "prompt_tokens": 900, "eval_tokens": 40, "load_seconds": 0})
    view.event("token", {"text": "Added **milk**.\n\n- one"})
    console = Console(record=True, width=100, color_system=None)
    console.print(view.render(final=True))
    text = console.export_text()
    assert '↳ add_task(title="milk") ✓' in text and "critic: eggs are missing — trying again" in text
    assert "main 1.50 s, 900 prompt + 40 eval tokens" in text
    assert "Added milk." in text and "• one" in text


def test_the_time_a_question_waits_for_the_user_is_not_tool_time():
    now = [100.0]
    view = TurnView(quiet=False, verbose=False, clock=lambda: now[0])
    call_ = {"name": "delete_task", "arguments": {"id": 1}}
    view.event("tool_start", call_)
    now[0] += 0.05
    with view.trace.waiting():  # the user thinks for a minute
        now[0] += 60
    now[0] += 0.15
    view.event("tool_end", {**call_, "ok": True, "result": {}})
    assert [line.plain for line in view.lines] == ["  ↳ delete_task(id=1) ✓ 200 ms"]


def test_quiet_hides_the_trace():
    view = TurnView(quiet=True, verbose=False)
    view.event("tool_end", {"name": "add_task", "arguments": {}, "ok": True, "result": {}})
    view.event("model", {"model": "main", "seconds": 1, "prompt_tokens": 1, "eval_tokens": 1, "load_seconds": 0})
    assert view.lines == []


def test_control_characters_in_data_are_shown_not_obeyed():
    assert safe("evil\x1b[2Jtitle\x07") == "evil\\x1b[2Jtitle\\x07"
    assert safe("café ☕\nnext") == "café ☕\nnext"


def test_completion_of_commands_and_arguments():
    from prompt_toolkit.document import Document

    complete = lambda text: [c.text for c in SlashCompleter().get_completions(Document(text), None)]  # noqa: E731
    assert complete("/ta") == ["/tasks"]
    assert complete("/tasks d") == ["done"]
    assert complete("/reflect o") == ["on", "off"]
    assert complete("hello") == []


def test_each_command_output_in_a_recorded_console(fake, make_agent, store, memory):
    from planner.ui.commands import COMMANDS, Stats, run_command

    fake.pullable.add("newmodel")
    fake.models["plain"] = ["completion"]
    agent = make_agent()
    from planner.tools import dispatch

    dispatch(agent.context, "add_task", {"title": "file taxes", "due_date": "2026-11-20"})
    memory.store_cell("The user's cat is named Pixel.", kind="fact", topic="pets", said_on="2026-11-03")
    console = Console(record=True, width=120, color_system=None)
    lines = [
        "/help",
        "/tasks",
        "/tasks all",
        "/memories",
        "/memories cat",
        "/sessions",
        "/session",
        "/history",
        "/reflect off",
        "/think on",
        "/stats",
        "/model",
        "/model main plain",
        "/model critic nope",
        "/pull newmodel",
        "/model main newmodel",
        "/forget Pixel",
        "/new",
        "/bogus",
        "/agenda",
        "/undo",
        "/undo",
    ]
    for line in lines:
        try:
            console.print(run_command(agent, line, Stats()), markup=False)
        except Failure as e:  # what the terminal shows for a command that did not go
            console.print(e.line(), markup=False)
    text = console.export_text()
    for name in COMMANDS:
        assert f"/{name}" in text  # /help lists every command
    assert "file taxes" in text and "OVERDUE" in text
    assert "[1] The user's cat is named Pixel.  (fact, pets, said 2026-11-03)" in text
    assert "reflect is off" in text and "think is on" in text and agent.config.reflect is False
    assert "main main · critic critic · embed embed" in text
    assert "plain cannot call tools" in text and "nope is not pulled; /pull nope first" in text
    assert "pulled newmodel" in text and "main model is now newmodel" in text and agent.config.model == "newmodel"
    assert "forgot [1] The user's cat is named Pixel. (/undo brings it back)" in text
    assert "unknown command /bogus; type /help for the list" in text
    assert "overdue\n     1  file taxes  (was due 2026-11-20)" in text
    # the newest first: the forgotten memory, then the task added before it
    assert 'restored memory 1 "The user\'s cat is named Pixel." (it was forgotten)\nundone:\n  removed task 1' in text


def test_a_pasted_block_of_lines_is_one_turn(fake, spawn):
    fake.respond_with("main", lambda body: {"content": "got the list"})
    child = spawn()
    child.send("\x1b[200~buy milk\nbuy eggs\nbuy bread\x1b[201~")  # a bracketed paste
    child.send("\r")
    child.expect("got the list")
    assert fake.chats("main")[-1]["messages"][-1]["content"] == "buy milk\nbuy eggs\nbuy bread"


def test_no_color_keeps_the_full_interface_without_colour_and_plain_is_the_line_mode(fake, pty_planner):
    import re

    fake.script("main", {"content": "Hello **there**."}, {"content": "Plain hello."})
    child = pty_planner("--no-auto-memory", "--no-reflect", term="xterm", prompt="you>", NO_COLOR="1")
    assert "Try:" in child.before  # the full interface's banner
    child.sendline("hi")
    child.expect("Hello")
    child.expect("you>")
    colours = re.findall(r"\x1b\[[0-9;]*3[0-7]m|\x1b\[[0-9;]*38;", child.before)
    assert colours == []  # no foreground colours at all
    child = pty_planner("--no-auto-memory", "--no-reflect", "--plain", term="xterm", prompt="you> ")
    child.sendline("hi")
    child.expect("bot> Plain hello.")


def screen_of(child, rows=40, cols=120):
    """What a VT100 terminal shows after everything the child wrote so far."""
    import pyte

    screen = pyte.Screen(cols, rows)
    stream = pyte.Stream(screen)
    stream.feed(child.seen)
    return [line.rstrip() for line in screen.display]


def say(child, line, *shown):
    """Send a line, then wait for each pattern in turn, keeping all the terminal was sent in child.seen."""
    child.sendline(line)
    for pattern in shown:
        child.expect(pattern)
        child.seen += child.before + child.after


def test_the_trace_and_the_y_n_question_stay_on_screen_and_waiting_is_not_tool_time(fake, pty_planner, ctx):

    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "dentist"})
    fake.script(
        "main",
        {"tool_calls": [call("list_tasks")]},
        {"tool_calls": [call("delete_task", id=1)]},
        {"content": "Kept it."},
        {"tool_calls": [call("list_tasks")]},
        {"tool_calls": [call("delete_task", id=1)]},
        {"content": "Deleted the dentist."},
    )
    child = pty_planner("--no-auto-memory", "--no-reflect", term="xterm", prompt="you>")
    child.seen = child.before + child.after
    for answer, request in (("\x03", "remove the dentist now"), ("y", "delete the dentist")):
        child.sendline(request)
        child.expect(r"\[y/N\]")
        child.seen += child.before + child.after
        child.send(answer if answer == "\x03" else answer + "\r")
        child.expect("you>")
        child.seen += child.before + child.after
    shown = "\n".join(screen_of(child))
    assert shown.count("↳ list_tasks() ✓") == 2  # the trace before each question stays
    assert 'Delete task 1 "dentist"? [y/N] y' in shown  # the question and the answer stay
    assert "you> remove the dentist now" in shown  # Ctrl-C at the question erased nothing above it
    assert any("delete_task(id=1) ✓" in line for line in shown.splitlines())  # (its time: the test above)


def test_loading_shows_until_the_model_answers_then_thinking(fake, pty_planner):
    fake.script("main", {"content": "Ready.", "stall": 1.5}, {"content": "Again.", "stall": 1.0})
    child = pty_planner("--no-auto-memory", "--no-reflect", term="xterm", prompt="you>")
    child.sendline("hello")
    child.expect("loading main…")  # not in memory yet: Ollama is loading it
    child.expect("Ready.")
    child.expect("you>")
    child.sendline("hello again")
    child.expect("thinking…")  # loaded now
    child.expect("Again.")
    assert "loading" not in child.before


WIDE = 200  # columns of the screen the output is read back on: wider than anything asked for


def drawn(child, rows=200):
    """What the child drew, read back on a screen far wider than its terminal, so a line it drew too wide
    shows at its full width instead of being wrapped by the emulator at the terminal's edge."""
    return screen_of(child, rows=rows, cols=WIDE)


def forty_columns(fake, pty_planner, ctx, **extra):
    """A 40-column terminal after /tasks, a request, /agenda and /stats; the screen as drawn."""
    from planner.tools import dispatch

    dispatch(
        ctx, "add_task", {"title": "renew the passport before the trip to Lisbon in spring", "due_date": "2026-11-20"}
    )
    dispatch(ctx, "add_task", {"title": "line one\nline two", "tags": ["home"]})
    fake.script("main", {"tool_calls": [call("add_task", title="dentist", due_date="friday")]}, {"content": "Added."})
    child = pty_planner("--no-auto-memory", "--no-reflect", term="xterm", prompt="you>", cols=40, **extra)
    child.seen = child.before + child.after
    for line, shown in (
        ("/tasks", "OVERDUE"),
        ("add dentist friday", "Added."),
        ("/agenda", "without a date"),
        ("/stats", "today:"),
    ):
        say(child, line, shown, "you>")
    return drawn(child)


def test_tasks_fit_forty_columns_and_a_newline_in_a_title_never_breaks_a_row(fake, pty_planner, ctx):
    shown = forty_columns(fake, pty_planner, ctx)
    assert max(len(line) for line in shown) <= 40  # can fail: see the test below
    assert "\\n" in "".join(shown)  # the line break is shown escaped...
    assert not any(line.startswith("line two") for line in shown)  # ...and never starts a line of its own
    assert any("OVERDUE" in line for line in shown)
    table = shown[[i for i, line in enumerate(shown) if line.startswith("you> /tasks")][-1] + 1 :]
    header, first = table[0], table[1]
    left, right = header.index("title"), header.index("due")
    assert right - left >= 12  # the title keeps at least 12 columns at 40
    rows = [first] + list(itertools.takewhile(lambda line: line[:4].strip() == "", table[2:]))
    assert (
        " ".join(line[left:right].strip() for line in rows) == "renew the passport before the trip to Lisbon in spring"
    )
    assert first.split()[0] == "1" and "2026-11-20" in first[right:] and "OVERDUE" in first
    agenda = shown[[i for i, line in enumerate(shown) if line.startswith("you> /agenda")][-1] :]
    assert agenda[1] == "agenda from Tuesday 2026-12-01" and agenda[2] == "overdue"
    assert agenda[3].split()[:3] == ["1", "renew", "the"] and "(was due" in "".join(agenda[3:6])
    assert any(line.split() == ["3", "dentist"] for line in agenda)  # friday's, under its own heading
    assert any(line.startswith("Friday 2026-12-04") for line in agenda)
    stats = shown[[i for i, line in enumerate(shown) if line.startswith("you> /stats")][-1] :]
    assert stats[1].split() == ["last", "turn", "this", "run"]
    assert stats[2].split() == ["model", "calls", "2", "2"] and stats[3].split() == ["prompt", "tokens", "20", "20"]
    assert stats[9].split() == ["tool", "calls", "failed", "0", "0"] and "this run: 1 requests" in stats
    assert "'friday' -> Friday 2026-12-04" in " ".join(" ".join(shown).split())  # what the words became


def test_the_forty_column_check_fails_for_a_program_that_draws_eighty(fake, pty_planner, ctx):
    """The check above sees the width drawn: told COLUMNS=80 (as pytest-xdist's workers were), the same
    program in the same 40-column terminal draws lines the check rejects."""
    shown = forty_columns(fake, pty_planner, ctx, COLUMNS="80")
    assert max(len(line) for line in shown) > 40


def test_verbose_shows_the_critic_and_the_background_calls_in_the_full_terminal(fake, pty_planner):
    fake.script("main", {"tool_calls": [call("add_task", title="x")]}, {"content": "Added x."})
    fake.script("main", {"content": "You have x."})
    child = pty_planner("-v", term="xterm", prompt="you>")  # auto memory on: extraction runs in the background
    child.seen = child.before + child.after
    say(child, "add x", "Added x.", "you>")
    wait_for(
        lambda: any(EXTRACT_PROMPT in b["messages"][0]["content"] for b in fake.chats("critic")),
        "the background extraction",
    )
    say(child, "what do I have?", "You have x.", "you>")
    shown = screen_of(child)
    first = shown.index("you> add x")
    second = shown.index("you> what do I have?")
    assert any(line.startswith("  · critic: critic ") for line in shown[first:second])
    # shown when it finishes: with the first reply or, if it ended later, under the next request
    assert sum(line.startswith("  · memory extraction: critic ") for line in shown[first:]) >= 1
    assert sum(line.startswith("  · main ") for line in shown) == 3


@pytest.mark.slow
def test_reminders_show_at_start_and_above_the_waiting_prompt(spawn, tmp_path):
    from planner.storage.db import Store

    store = Store(tmp_path / "planner.db")
    with store.write() as conn:  # due long ago, never shown
        conn.execute("INSERT INTO tasks (title, uid, remind_at) VALUES ('pay rent', 'u1', '2020-01-01T09:00')")
    child = spawn()
    assert "reminder: pay rent" in child.before  # what fell due since last time, under the banner
    with store.write() as conn:  # due while the prompt waits: the watcher's next look shows it
        conn.execute("INSERT INTO tasks (title, uid, remind_at) VALUES ('stretch', 'u2', '2020-01-01T09:30')")
    child.expect("reminder: stretch", timeout=30)  # the line ends the wait; the timeout only bounds a failure
    child.sendline("/tasks")
    child.expect("stretch")
    store.close()
