"""The interactive REPL in a real pseudo-terminal (pexpect): prompt,
streaming, confirmation, Ctrl-C and Ctrl-D."""

import sys

import pexpect
import pytest
from helpers import ROOT, call, clean_env, tasks

from planner.storage.db import Store


@pytest.fixture
def spawn(pty_planner):
    """The plain REPL in a terminal (TERM=dumb keeps the line-per-turn mode)."""
    return pty_planner


def test_banner_prompt_and_a_streamed_reply(fake, spawn):
    fake.script("main", {"content": "Hello there, how can I help today?"})
    child = spawn()
    assert "session" in child.before and "planner.db" in child.before
    child.sendline("hi")
    child.expect("bot> Hello there, how can I help today\\?")
    child.expect("you> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.wait()
    assert child.exitstatus == 0


def test_delete_asks_y_n_in_a_terminal(fake, spawn, tmp_path):
    fake.script("main", {"tool_calls": [call("add_task", title="dentist")]}, {"content": "Added."})
    fake.script("main", {"tool_calls": [call("delete_task", id=1)]}, {"content": "Not deleted."})
    fake.script("main", {"tool_calls": [call("delete_task", id=1)]}, {"content": "Deleted."})
    child = spawn("--no-reflect")
    child.sendline("add dentist")
    child.expect("you> ")
    child.sendline("delete dentist")
    child.expect(r'Delete task 1 "dentist"\? \[y/N\] ')
    child.sendline("n")
    child.expect("Not deleted.")
    child.expect("you> ")
    child.sendline("delete dentist")
    child.expect(r"\[y/N\] ")
    child.sendline("y")
    child.expect("Deleted.")
    child.expect("you> ")
    store = Store(tmp_path / "planner.db")
    assert tasks(store) == []
    store.close()


def test_ctrl_c_stops_a_turn_and_the_session_goes_on(fake, spawn):
    fake.script("main", {"content": "This answer is long and slow " * 20, "slow": 0.05}, {"content": "Next answer."})
    child = spawn()
    child.sendline("tell me a story")
    child.expect("long and slow")
    child.sendintr()
    child.expect(r"\[interrupted\]")
    child.expect("you> ")
    child.sendline("and now?")
    child.expect("Next answer.")
    child.expect("you> ")
    # The next request carried a valid history with the partial, marked reply.
    sent = fake.chats("main")[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[2]["content"].endswith("[interrupted]")


def test_ctrl_c_twice_at_the_prompt_exits(spawn):
    child = spawn()
    child.sendintr()
    child.expect("Ctrl-C again")
    child.expect("you> ")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.wait()
    assert child.exitstatus == 0


# A Ctrl-C whose handler has already run when the read starts: the main thread masks SIGINT, so the
# kernel hands it to the waiting thread. That is the case input() loses (about 4 in 10 under load,
# when the key lands between the prompt and the read), made certain here instead of timed.
CTRL_C_ELSEWHERE = """
import signal, threading
from planner.ui.text import prompted_line
threading.Thread(target=threading.Event().wait, daemon=True).start()
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
try:
    prompted_line("you> ")
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_ctrl_c_at_the_prompt_is_seen_even_when_its_handler_ran_before_the_read():
    child = pexpect.spawn(
        sys.executable, ["-c", CTRL_C_ELSEWHERE], env=clean_env(), cwd=str(ROOT), encoding="utf-8", timeout=20
    )
    child.expect("you> ")
    child.sendintr()
    child.expect("interrupted")
    child.expect(pexpect.EOF)
    child.close()


def test_a_line_typed_at_the_prompt_comes_back_whole_and_ctrl_d_ends_it():
    code = "from planner.ui.text import prompted_line\nprint(repr(prompted_line('you> ')))\ntry:\n    prompted_line('you> ')\nexcept EOFError:\n    print('eof')"
    child = pexpect.spawn(sys.executable, ["-c", code], env=clean_env(), cwd=str(ROOT), encoding="utf-8", timeout=20)
    child.expect("you> ")
    child.sendline("café au lait")
    child.expect("'café au lait'")
    child.expect("you> ")
    child.sendeof()
    child.expect("eof")
    child.expect(pexpect.EOF)
    child.close()


def test_a_large_change_shows_the_list_and_asks_then_undo_reverts_it(fake, spawn, tmp_path):
    fake.script("main", {"tool_calls": [call("add_task", title=f"chore {i}") for i in range(4)]}, {"content": "Added."})
    fake.script("main", {"tool_calls": [call("complete_task", id=i) for i in range(1, 5)]}, {"content": "All done."})
    child = spawn("--no-reflect")
    child.sendline("add four chores")
    child.expect("you> ")
    child.sendline("mark all chores done")
    child.expect("This would change 4 tasks in one request:")
    child.expect(r'complete task 4 "chore 3"\r?\nGo ahead\? \[y/N\] ')
    child.sendline("y")
    child.expect("bot> All done.")
    child.expect("you> ")
    store = Store(tmp_path / "planner.db")
    assert {t["status"] for t in tasks(store)} == {"done"}
    child.sendline("/undo")  # undo is a change like any other: 4 tasks at once asks first
    child.expect("Undo would change 4 tasks:")
    child.expect(r"reopen task 1 \"chore 0\"\r?\nGo ahead\? \[y/N\] ")
    child.sendline("y")
    child.expect(r'undone:\s+task 1 "chore 0": status done → open')
    child.expect("you> ")
    assert {t["status"] for t in tasks(store)} == {"open"}
    store.close()


def test_plain_mode_keeps_each_attempt_on_its_own_line_and_always_shows_the_final_reply(fake, spawn):
    fake.script(
        "main",
        {"tool_calls": [call("add_task", title="x")]},
        {"content": "Added **x**."},
        {"content": "Hello! I can also add y."},
    )
    fake.script("critic", {"content": '{"done": false, "critique": "y was not added"}'})
    child = spawn()
    child.sendline("add x and y")
    child.expect("you> ")
    lines = [line.strip() for line in child.before.splitlines() if line.strip()]
    assert "bot> Added **x**." in lines and "bot> Hello! I can also add y." in lines
    fake.respond_with("main", lambda body: {"tool_calls": [call("list_tasks", limit=len(body["messages"]))]})
    child.sendline("loop for ever")
    child.expect("bot> I stopped after 8 steps")  # never streamed: printed whole
    child.expect("you> ")


@pytest.mark.parametrize("flag", ["", "-q", "-v"])
def test_plain_mode_shows_the_trace_in_a_terminal_q_hides_it_and_v_adds_every_model_call(fake, spawn, flag):
    fake.script("main", {"content": "Sure, adding it.", "tool_calls": [call("add_task", title="x")]})
    fake.script("main", {"content": "Added x."})
    fake.script("critic", {"content": '{"done": true, "critique": ""}'})
    child = spawn(*[f for f in (flag,) if f])
    child.sendline("add x")
    child.expect("you> ")
    lines = [line.rstrip() for line in child.before.splitlines() if line.strip()]
    trace = [line for line in lines if line.startswith('  ↳ add_task(title="x") ✓')]
    models = [line for line in lines if line.startswith("  · ")]
    assert len(trace) == (0 if flag == "-q" else 1)
    if flag == "-v":
        assert [m.split()[1] for m in models] == ["tools:", "main", "main", "critic:"]  # the tool groups, once
    else:
        assert models == []
    assert "bot> Sure, adding it." in lines and "bot> Added x." in lines  # the trace never joins a reply line
