"""The gate at each door: a yes binds to the rows it was asked about, the large-change count is atomic, the
shell asks like every door, and the advice a refusal gives works as written (issue 31's findings)."""

from __future__ import annotations

import sqlite3
import sys

import anyio
import mcp_types as types
import pytest
from helpers import ROOT, TODAY, answering, clean_env, connect, mcp_error, rows, run_cli, serve_here

from planner.policy import Door
from planner.storage.db import Store
from planner.storage.undoing import undo_last_turn
from planner.tools import ToolContext, dispatch
from planner.ui.mcp_answers import said_yes


def write(db, sql: str, *args) -> None:
    """Another process's write to the file (a second connection, as the terminal or an import would)."""
    conn = sqlite3.connect(db)
    try:
        conn.execute(sql, args)
        conn.commit()
    finally:
        conn.close()


def other_process(db):
    """The tools of another planner on the same file (its own Store and connections)."""
    store = Store(db)
    return store, ToolContext(store=store, today=lambda: TODAY, yes=True)


# ---------------------------------------------------------------- MCP: a yes covers the rows as they were


def test_a_yes_to_delete_a_task_does_not_delete_it_after_it_was_rewritten(tmp_path):
    db, asked = tmp_path / "p.db", []

    async def rewritten_meanwhile(context, params):
        asked.append(params.message)
        if len(asked) == 1:  # while the user reads the question, another window rewrites the task
            store, ctx = other_process(db)
            dispatch(ctx, "update_task", {"id": 1, "title": "final report", "notes": "the real one"})
            store.close()
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="accept", content={"confirm": False})

    async def scenario():
        async with serve_here(db, mode="legacy", elicitation_callback=rewritten_meanwhile) as c:
            await c.call_tool("add_task", {"title": "old draft"})
            out = await c.call_tool("delete_task", {"id": 1})
            assert out.is_error and "declined" in mcp_error(out)

    anyio.run(scenario)
    assert asked == ['Delete task 1 "old draft"?', 'Delete task 1 "final report"?']  # asked again, as it is now
    assert [r["title"] for r in rows(db)] == ["final report"]


def test_an_answer_in_a_later_round_is_bound_to_the_rows_shown(tmp_path):
    db = tmp_path / "p.db"
    yes = {"confirm": types.ElicitResult(action="accept", content={"confirm": True})}

    async def scenario():
        async with serve_here(db, elicitation_callback=answering()) as c:
            await c.call_tool("add_task", {"title": "old draft"})
            first = await c.session.call_tool("delete_task", {"id": 1}, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult)
            write(db, "UPDATE tasks SET title = 'final report' WHERE id = 1")  # rewritten before the answer
            second = await c.session.call_tool(
                "delete_task",
                {"id": 1},
                input_responses=yes,
                request_state=first.request_state,
                allow_input_required=True,
            )
            assert isinstance(second, types.InputRequiredResult)  # asked again, about the task as it is now
            assert "final report" in second.input_requests["confirm"].params.message
            assert rows(db)[0]["title"] == "final report"
            third = await c.session.call_tool(  # the user says yes to what they see now
                "delete_task",
                {"id": 1},
                input_responses=yes,
                request_state=second.request_state,
                allow_input_required=True,
            )
            assert not third.is_error and rows(db) == []
            undo_last_turn(Store(db))  # the deletion is undone from the terminal
            replay = await c.session.call_tool(  # the accepted state again: used once, so it asks again
                "delete_task",
                {"id": 1},
                input_responses=yes,
                request_state=second.request_state,
                allow_input_required=True,
            )
            assert isinstance(replay, types.InputRequiredResult) and len(rows(db)) == 1
            forged = await c.session.call_tool(
                "delete_task", {"id": 1}, input_responses=yes, request_state="e30.abc", allow_input_required=True
            )
            assert isinstance(forged, types.InputRequiredResult) and len(rows(db)) == 1
            other = await c.session.call_tool(  # a state for task 1 does not delete task 2
                "delete_task", {"id": 2}, input_responses=yes, request_state=replay.request_state
            )
            assert other.is_error and len(rows(db)) == 1

    anyio.run(scenario)


@pytest.mark.parametrize(
    "content",
    [{"confirm": "no"}, {"confirm": "yes"}, {"confirm": 1}, {"confirm": "true"}, {}, {"ok": True}, None],
)
def test_only_the_boolean_true_is_a_yes(content):
    assert not said_yes(types.ElicitResult(action="accept", content=content))
    assert not said_yes(types.ElicitResult(action="decline", content={"confirm": True}))
    assert said_yes(types.ElicitResult(action="accept", content={"confirm": True}))


def test_a_text_no_in_a_later_round_deletes_nothing(tmp_path):
    db = tmp_path / "p.db"
    no = {"confirm": types.ElicitResult(action="accept", content={"confirm": "no"})}

    async def scenario():
        async with serve_here(db, elicitation_callback=answering()) as c:
            await c.call_tool("add_task", {"title": "keep me"})
            first = await c.session.call_tool("delete_task", {"id": 1}, allow_input_required=True)
            out = await c.session.call_tool(
                "delete_task", {"id": 1}, input_responses=no, request_state=first.request_state
            )
            assert out.is_error

    anyio.run(scenario)
    assert [r["title"] for r in rows(db)] == ["keep me"]


def test_an_undo_asked_about_one_task_does_not_undo_an_import_that_landed_meanwhile(tmp_path):
    db, asked = tmp_path / "p.db", []
    data = tmp_path / "thirty.txt"
    data.write_text("".join(f"chore {i}\n" for i in range(30)))
    env = clean_env(PLANNER_HOME=str(tmp_path))

    async def import_meanwhile(context, params):
        asked.append(params.message)
        if len(asked) == 1:
            assert run_cli(["--db", str(db), "import", str(data)], env).returncode == 0
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="accept", content={"confirm": False})

    async def scenario():
        async with serve_here(db, mode="legacy", elicitation_callback=import_meanwhile) as c:
            await c.call_tool("add_task", {"title": "typo task"})
            out = await c.call_tool("undo_last_change", {})
            assert out.is_error

    anyio.run(scenario)
    assert 'DELETE task 1 "typo task"' in asked[0] or 'Delete task 1 "typo task"' in asked[0]
    assert "import of 30" in asked[1]  # asked again, about what the undo would now do
    assert len(rows(db)) == 31
    assert all(q.count('chore 1"') <= 1 for q in asked)  # each line once


# ---------------------------------------------------------------- MCP: the bulk window, counted atomically


def test_twelve_changes_sent_at_once_on_one_connection_make_three(tmp_path):
    db = tmp_path / "p.db"

    async def scenario():
        async with serve_here(db) as c:  # a client that cannot ask its user
            for i in range(12):
                await c.call_tool("add_task", {"title": f"task {i}"})
            async with anyio.create_task_group() as group:
                for i in range(1, 13):
                    group.start_soon(c.call_tool, "complete_task", {"id": i})

    anyio.run(scenario)
    assert sum(r["status"] == "done" for r in rows(db)) == 3


@pytest.mark.slow
def test_four_servers_on_one_file_three_calls_each_at_once_make_three(tmp_path):
    db = tmp_path / "p.db"
    store, ctx = other_process(db)
    for i in range(12):
        dispatch(ctx, "add_task", {"title": f"task {i}"})
    store.close()

    async def server(ids):
        async with connect(db) as c:
            async with anyio.create_task_group() as group:
                for i in ids:
                    group.start_soon(c.call_tool, "complete_task", {"id": i})

    async def scenario():
        async with anyio.create_task_group() as group:
            for k in range(4):
                group.start_soon(server, [3 * k + 1, 3 * k + 2, 3 * k + 3])

    anyio.run(scenario)
    assert sum(r["status"] == "done" for r in rows(db)) == 3


# ---------------------------------------------------------------- the shell asks like every door


def shell(tmp_path, *args, input=None):
    env = clean_env(PLANNER_HOME=str(tmp_path), PLANNER_TODAY=TODAY.isoformat())
    return run_cli(list(args), env, input=input)


def five(tmp_path):
    for i in range(5):
        assert shell(tmp_path, "add", f"chore {i}").returncode == 0


def statuses(tmp_path):
    return [r["status"] for r in rows(tmp_path / "planner.db")]


@pytest.mark.parametrize("verb", ["done", "cancel"])
def test_many_tasks_piped_are_refused_with_advice_that_works(tmp_path, verb):
    five(tmp_path)
    out = shell(tmp_path, verb, "1", "2", "3", "4", "5")
    assert out.returncode == 4 and statuses(tmp_path) == ["open"] * 5
    assert out.stderr.count("\n") == 1 and "add --yes" in out.stderr  # one line, naming what works
    assert shell(tmp_path, verb, "--yes", "1", "2", "3", "4", "5").returncode == 0  # the advice, as written
    assert set(statuses(tmp_path)) == {"done" if verb == "done" else "cancelled"}


def test_reopen_and_undo_and_redo_take_yes_before_or_after_their_name(tmp_path):
    five(tmp_path)
    assert shell(tmp_path, "--yes", "done", "1", "2", "3", "4", "5").returncode == 0
    refused = shell(tmp_path, "undo")  # five tasks at once: piped, it needs --yes
    assert refused.returncode == 4 and "add --yes" in refused.stderr and set(statuses(tmp_path)) == {"done"}
    assert shell(tmp_path, "undo", "--yes").returncode == 0 and set(statuses(tmp_path)) == {"open"}
    assert shell(tmp_path, "redo", "--yes").returncode == 0 and set(statuses(tmp_path)) == {"done"}
    assert shell(tmp_path, "--yes", "undo").returncode == 0 and set(statuses(tmp_path)) == {"open"}
    assert shell(tmp_path, "--yes", "done", "1", "2", "3", "4", "5").returncode == 0
    assert shell(tmp_path, "reopen", "1", "2", "3", "4").returncode == 4
    assert shell(tmp_path, "reopen", "1", "2", "3", "4", "--yes").returncode == 0
    assert statuses(tmp_path) == ["open"] * 4 + ["done"]


def test_three_tasks_need_no_question(tmp_path):
    five(tmp_path)
    assert shell(tmp_path, "done", "1", "2", "3").returncode == 0
    assert statuses(tmp_path) == ["done"] * 3 + ["open"] * 2


@pytest.mark.slow
def test_in_a_terminal_many_tasks_are_asked_about_once_with_the_list(tmp_path):
    import pexpect

    five(tmp_path)
    env = clean_env(PLANNER_HOME=str(tmp_path), PLANNER_TODAY=TODAY.isoformat(), TERM="dumb")
    child = pexpect.spawn(
        sys.executable, [str(ROOT / "agent.py"), "done", "1", "2", "3", "4", "5"], env=env, encoding="utf-8"
    )
    child.expect("This would change 5 tasks in one request:")
    for i in range(5):
        child.expect(f'complete task {i + 1} "chore {i}"')
    child.expect(r"Go ahead\? \[y/N\] ")
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and set(statuses(tmp_path)) == {"done"}
    assert child.before.count("Go ahead?") == 0  # asked once, not once a task


# ---------------------------------------------------------------- forget, while another window forgets


def test_a_memory_forgotten_elsewhere_while_asking_is_said_in_one_line(ctx, store, memory):
    memory.remember("The user's cat is named Pixel.", said_on="2026-12-01")

    def meanwhile(question):
        other = Store(store.path)
        other.conn().execute("DELETE FROM memories WHERE id = 1")  # another window forgot it
        other.close()
        return True

    ctx.confirm = meanwhile
    result, ok = dispatch(ctx, "forget", {"query_or_id": "1"})
    assert not ok and "inside the planner" not in result["error"] and "\n" not in result["error"]
    assert "memory" in result["error"] and "1" in result["error"]


def test_the_undo_question_lists_each_task_once(ctx, store):
    for i in range(4):
        dispatch(ctx, "add_task", {"title": f"t{i}"})
    ctx.turn, ctx.yes = "batch", True
    for i in range(1, 5):
        dispatch(ctx, "complete_task", {"id": i})
    ctx.yes = False
    asked: list[str] = []
    from planner.tools.undo import undo_newest

    door = Door("undo", ask=lambda q: asked.append(q) or False)
    undo_newest(ctx, door)
    lines = asked[0].splitlines()[1:-1]
    assert len(lines) == 4 and len(set(lines)) == 4
