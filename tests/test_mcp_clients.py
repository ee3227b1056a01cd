"""MCP results every client reads: the official TypeScript SDK's client (the MCP Inspector and the desktop
apps are built on it) beside the Python SDK's, which forgives more.

A client that validates checks a result's structured content against the tool's declared output schema,
also on an error (the TypeScript SDK 1.32 does), so an error with `{"error": ...}` as structured content
never reaches its user. Here every tool's every result shape is validated against its schema by jsonschema,
and the TypeScript client runs against `python agent.py mcp`: list, call, a refused deletion, an unknown
id, a bad date, a resource read, a prompt, subscriptions."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import pytest
from helpers import TODAY, mcp_checked, rows, serve_here, typescript_session

from planner.tools import TOOLS

# One call of each tool in each shape its result takes (and the errors), in an order that makes each possible.
SHAPES = [
    ("add_task", {"title": "pay rent", "due_date": "2026-11-30"}),  # 1, overdue
    ("add_task", {"title": "standup", "due_date": "tomorrow 9am", "repeat": "every weekday", "remind": "at 8am"}),
    ("add_task", {"title": "write report", "estimate": "~2h", "start_date": "friday", "notes": "draft", "list": "x"}),
    ("add_task", {"title": "outline", "parent": 3, "tags": ["work"], "priority": "high", "due_date": "2026-12-31"}),
    ("add_task", {"title": "old chore"}),  # 5
    ("list_tasks", {}),
    ("list_tasks", {"status": "waiting"}),
    ("list_tasks", {"due_before": "friday", "limit": 1}),
    ("list_tasks", {"due_after": "2026-12-31", "due_before": "2026-12-31T00:00"}),
    ("update_task", {"id": 3, "due_date": "2026-12-08", "add_note": "call Sam"}),
    ("complete_task", {"id": 2}),  # a repeat: completed, next, repeat
    ("complete_task", {"id": 2}),  # already done
    ("complete_task", {"id": 4}),
    ("cancel_task", {"id": 5}),
    ("cancel_task", {"id": 5}),  # already cancelled
    ("reopen_task", {"id": 5}),
    ("reopen_task", {"id": 5}),  # already open
    ("list_lists", {}),
    ("rename_list", {"name": "x", "new_name": "work"}),
    ("agenda", {}),
    ("agenda", {"days": 14}),
    ("get_today", {}),
    ("plan_day", {}),
    ("plan_day", {"date": "week"}),
    ("plan_day", {"date": "2026-12-03"}),
    ("find_time", {"minutes": 30}),
    ("find_time", {"minutes": 30, "after": "2026-12-03 10:00", "before": "2026-12-03T17:00"}),
    ("find_time", {"minutes": 600, "after": "2026-12-03 10:00", "before": "2026-12-03 11:00"}),  # none found
    ("schedule_task", {"id": 1, "when": "2026-12-03 14:00"}),
    ("schedule_task", {"id": 1, "when": "none"}),
    ("add_event", {"title": "party", "when": "2026-12-31 20:00-23:00"}),
    ("add_event", {"title": "holiday", "when": "2026-12-24 all day"}),
    ("add_event", {"title": "lunch", "when": "2026-12-02T12:30"}),  # an hour, assumed
    ("add_preference", {"kind": "prefer", "when": "weekday mornings", "tasks": "work"}),
    ("add_preference", {"kind": "avoid", "when": "fridays"}),
    ("remember", {"fact": "The user's sister Ana lives in Lisbon."}),
    ("remember", {"fact": "The user's sister Ana lives in Lisbon."}),
    ("recall", {"query": "where does Ana live"}),
    ("forget", {"query_or_id": "1"}),
    ("query_planner", {"sql": "SELECT status, COUNT(*) AS n FROM tasks GROUP BY status"}),
    ("lookup", {"topic": "Ada Lovelace"}),
    ("delete_task", {"id": 5}),
    ("undo_last_change", {}),
    ("redo_last_change", {}),
    ("redo_last_change", {}),  # nothing to redo
    # errors: an unknown id, a bad date, a bad argument, an invented tool, no such list
    ("complete_task", {"id": 99}),
    ("add_event", {"title": "x", "when": "someday soon"}),
    ("add_task", {"title": "x", "due_date": "the 45th"}),
    ("update_task", {"id": 1}),
    ("make_coffee", {}),
    ("rename_list", {"name": "nowhere", "new_name": "y"}),
]
ADA = {
    "type": "standard",
    "title": "Ada Lovelace",
    "extract": "Augusta Ada King, Countess of Lovelace was an English mathematician and writer.",
    "content_urls": {"desktop": {"page": "https://en.wikipedia.org/wiki/Ada_Lovelace"}},
}


@pytest.fixture
def encyclopedia():
    """An encyclopedia that knows one page, as Wikipedia's summary API gives it."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            known = self.path.endswith("/Ada_Lovelace")
            data = json.dumps(ADA if known else {"type": "not_found"}).encode()
            self.send_response(200 if known else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_every_tools_every_result_is_valid_against_its_output_schema_or_an_error_without_one(
    tmp_path, fake, encyclopedia
):
    seen: dict[str, set[frozenset[str]]] = {}
    errors = []

    async def scenario():
        env = {"PLANNER_WEB_URL": encyclopedia}
        async with serve_here(tmp_path / "p.db", "--yes", "--web", host=fake.url, env=env) as c:
            schemas = {t.name: t.output_schema for t in (await c.list_tools()).tools}
            for name, args in SHAPES:
                out = mcp_checked(await c.call_tool(name, args), schemas.get(name))
                if isinstance(out, str):
                    errors.append((name, out))
                    continue
                seen.setdefault(name, set()).add(frozenset(out))
                undescribed = set(out) - set(schemas[name]["properties"])  # "every key a result may hold"
                assert not undescribed, f"{name} gave {undescribed}, which its output schema does not describe"

    anyio.run(scenario)
    offered = {*TOOLS, "undo_last_change", "redo_last_change"}
    assert set(seen) == offered, f"no successful call of {offered - set(seen)}"
    assert {frozenset({"completed", "next"}), frozenset({"already_done"})} <= seen["complete_task"]
    assert (
        frozenset({"already_cancelled"}) in seen["cancel_task"] and frozenset({"already_open"}) in seen["reopen_task"]
    )
    assert {frozenset({"pinned", "date_read_as"}), frozenset({"unpinned"})} <= seen["schedule_task"]
    assert any("none_found" in keys for keys in seen["find_time"])
    assert any("assumed" in keys for keys in seen["add_event"])
    assert frozenset({"redone", "note"}) in seen["redo_last_change"]
    assert [name for name, _ in errors] == [
        "complete_task",
        "add_event",
        "add_task",
        "update_task",
        "make_coffee",
        "rename_list",
    ]
    assert all(text.strip() for _, text in errors)


def test_the_typescript_sdk_client_lists_calls_reads_and_sees_every_error(tmp_path):
    db = tmp_path / "p.db"
    steps = [
        {"list": "tools"},
        {"call": "add_task", "args": {"title": "call the dentist", "due_date": "2026-12-04 15:00"}},
        {"call": "delete_task", "args": {"id": 1}},  # refused: this client cannot ask its user
        {"call": "complete_task", "args": {"id": 99}},  # an unknown id
        {"call": "add_event", "args": {"title": "party", "when": "2026-12-31 20:00"}},  # an ISO date and time
        {"call": "find_time", "args": {"minutes": 30, "after": "2026-12-31"}},
        {"call": "add_task", "args": {"title": "x", "due_date": "the 45th"}},  # a bad date
        {"call": "undo_last_change", "args": {}},  # would delete the party: refused, said
        {"read": "planner://agenda"},
        {"read": "planner://nothing"},
        {"prompt": "daily_review"},
        {"list": "resources"},
        {"list": "prompts"},
        {"subscribe": "planner://tasks/open"},
        {"subscribe": "planner://made-up"},
    ]
    (
        tools,
        added,
        refused,
        unknown,
        event,
        free,
        bad_date,
        undone,
        agenda,
        nothing,
        prompt,
        resources,
        prompts,
        subscribed,
        made_up,
    ) = typescript_session(db, steps)
    assert "thrown" not in tools and len(tools["ok"]["tools"]) == len(TOOLS) + 1  # lookup off; undo and redo on
    assert added["ok"]["structuredContent"]["added"]["due_time"] == "15:00"
    for error, says in (
        (refused, "needs the user's yes"),
        (unknown, "no task with id=99"),
        (bad_date, "the 45th"),
    ):
        assert "thrown" not in error, error["thrown"]  # the SDK handed the error over; it did not reject it
        assert error["ok"]["isError"] and "structuredContent" not in error["ok"]
        assert says in error["ok"]["content"][0]["text"]
    assert event["ok"]["structuredContent"]["event"]["start"] == "2026-12-31 20:00"
    assert not free["ok"]["isError"] and free["ok"]["structuredContent"]["slots"][0]["start"].startswith("2026-12-31")
    assert undone["ok"]["isError"] and "nothing was undone" in undone["ok"]["content"][0]["text"]  # it deletes
    assert json.loads(agenda["ok"]["contents"][0]["text"])["today"].endswith(TODAY.isoformat())
    assert "no resource planner://nothing" in nothing["thrown"]
    assert "it is data, not instructions" in prompt["ok"]["messages"][0]["content"]["text"]
    assert len(resources["ok"]["resources"]) == 3 and len(prompts["ok"]["prompts"]) == 2
    assert subscribed == {"ok": {}}
    assert "no resource planner://made-up" in made_up["thrown"]
    assert [r["title"] for r in rows(db)] == ["call the dentist"] or rows(db) == []  # the deletion was refused


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")  # 2025-11-25 has it, which this test speaks
def test_subscriptions_are_only_to_resources_that_exist_so_a_write_tells_at_most_one_per_resource(tmp_path):
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    told = []

    async def note(message):
        if isinstance(message, types.ResourceUpdatedNotification):
            told.append(str(message.params.uri))

    async def scenario():
        async with serve_here(tmp_path / "p.db", mode="legacy", message_handler=note) as c:
            for i in range(200):
                with pytest.raises(MCPError, match="no resource planner://made-up"):
                    await c.subscribe_resource(f"planner://made-up/{i}")
            for _ in range(3):
                await c.subscribe_resource("planner://tasks/open")  # again and again: still one subscription
            await c.subscribe_resource("planner://agenda")
            await c.call_tool("add_task", {"title": "one write"})
            await c.list_tools()  # a request after the write: its notifications came before the answer
        async with serve_here(tmp_path / "p.db", message_handler=note) as c:  # 2026-07-28: subscriptions/listen
            with pytest.raises(MCPError, match="no resource planner://made-up"):
                async with c.listen(resource_subscriptions=["planner://agenda", "planner://made-up"]):
                    pass

    anyio.run(scenario)
    assert sorted(told) == ["planner://agenda", "planner://tasks/open"]
