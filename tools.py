"""The tools the model calls: tasks, today's date and long-term memory.

The machinery (registry, validation, dispatch) is in registry.py and is
re-exported here; `import tools` also registers query_planner (query.py) and
lookup (web.py), so this module is the whole tool set. Task writes go through
tasks.py, which logs each change for /undo in the same transaction.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any

import query
import web
from registry import (  # noqa: F401  (re-exported: the rest of the program imports tools)
    ALIASES,
    TOOLS,
    Tool,
    ToolContext,
    ToolError,
    dispatch,
    suggest_tool,
    to_json,
    tool,
    tool_specs,
    validate,
)
from tasks import now, record, require

if TYPE_CHECKING:
    from longterm import LongTermMemory

MAX_TITLE = 500
MAX_FACT = 2000

# ---------------------------------------------------------------- helpers

ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def check_date(ctx: ToolContext, value: str) -> str:
    """A due date as YYYY-MM-DD, or a ToolError that tells the model how to fix it."""
    value = value.strip()
    if ISO_DATE.fullmatch(value):
        try:
            return dt.date.fromisoformat(value).isoformat()
        except ValueError:
            raise ToolError(f"due_date {value!r} is not a real calendar date") from None
    today = ctx.today()
    raise ToolError(
        f"due_date must be a date written YYYY-MM-DD, not {value[:40]!r}. "
        f"Today is {today.isoformat()} ({today:%A}): work out the date and call again."
    )


def check_title(value: str) -> str:
    """A task title that is not empty and not absurdly long."""
    title = value.strip()
    if not title:
        raise ToolError("title must not be empty")
    if len(title) > MAX_TITLE:
        raise ToolError(f"title is {len(title)} characters; keep it under {MAX_TITLE}")
    return title


def brief(task: dict[str, Any] | None) -> dict[str, Any]:
    """A task as the model sees it: the fields it acts on, nothing more."""
    task = task or {}
    return {k: task.get(k) for k in ("id", "title", "due_date", "status")}


ID = {"type": "integer", "description": "The task's id, as shown by list_tasks."}
DUE = "Due date as YYYY-MM-DD, taken from the calendar in your instructions."

# ---------------------------------------------------------------- task tools


@tool(
    {
        "title": {"type": "string", "description": "The task itself in a few words, without its date."},
        "due_date": {"type": "string", "description": DUE + " Leave out when the user gave no date."},
    },
    required=("title",),
)
def add_task(ctx: ToolContext, title: str, due_date: str | None = None) -> dict[str, Any]:
    """Add one task (a to-do or a reminder) to the user's list. Call once per task."""
    title = check_title(title)
    due = check_date(ctx, due_date) if due_date else None
    with ctx.store.write() as conn:
        cur = conn.execute(
            "INSERT INTO tasks (title, due_date, status, created_at) VALUES (?, ?, 'open', ?)",
            (title, due, now()),
        )
        task = record(conn, ctx, "add_task", cur.lastrowid, None)
    return {"added": brief(task)}


@tool(
    {
        "status": {
            "type": "string",
            "enum": ["open", "done", "all"],
            "description": "Which tasks to list; open if left out.",
        }
    }
)
def list_tasks(ctx: ToolContext, status: str = "open") -> dict[str, Any]:
    """List the user's tasks with their ids, titles, due dates and status."""
    where, params = ("", ()) if status == "all" else ("WHERE status = ?", (status,))
    rows = ctx.store.conn().execute(
        f"SELECT id, title, due_date, status FROM tasks {where} ORDER BY due_date IS NULL, due_date, id",
        params,
    )
    tasks = [brief(dict(r)) for r in rows]
    return {"status": status, "count": len(tasks), "tasks": tasks}


@tool({"id": ID}, required=("id",))
def complete_task(ctx: ToolContext, id: int) -> dict[str, Any]:
    """Mark a task as done."""
    with ctx.store.write() as conn:
        before = require(conn, id)
        if before["status"] == "done":
            return {"already_done": brief(before)}
        conn.execute("UPDATE tasks SET status = 'done' WHERE id = ?", (id,))
        task = record(conn, ctx, "complete_task", id, before)
    return {"completed": brief(task)}


@tool(
    {
        "id": ID,
        "title": {"type": "string", "description": "The new title. Leave out to keep the current one."},
        "due_date": {"type": "string", "description": DUE + " An empty string removes the date. Leave out to keep it."},
    },
    required=("id",),
)
def update_task(ctx: ToolContext, id: int, title: str | None = None, due_date: str | None = None) -> dict[str, Any]:
    """Change a task's title and/or due date (rename, reschedule, or clear its date)."""
    if title is None and due_date is None:
        raise ToolError("give a new title or due_date (an empty due_date clears it)")
    new_title = check_title(title) if title is not None else None
    new_due = (check_date(ctx, due_date) if due_date.strip() else None) if due_date is not None else None
    with ctx.store.write() as conn:
        before = require(conn, id)
        conn.execute(
            "UPDATE tasks SET title = ?, due_date = ? WHERE id = ?",
            (new_title or before["title"], new_due if due_date is not None else before["due_date"], id),
        )
        task = record(conn, ctx, "update_task", id, before)
    return {"updated": brief(task), "before": brief(before)}


@tool({"id": ID}, required=("id",), destructive=True)
def delete_task(ctx: ToolContext, id: int) -> dict[str, Any]:
    """Delete a task for good. Only when the user asked to delete or remove it; to finish a task use complete_task."""
    task = require(ctx.store.conn(), id)
    if ctx.confirm is None:
        raise ToolError(
            "deleting needs the user's confirmation, and no one can confirm here. "
            "Tell the user it was not deleted; they can run the planner in a terminal or with --yes."
        )
    if not ctx.confirm(f'Delete task {id} "{task["title"]}"?'):
        raise ToolError(f"the user declined; task {id} was not deleted")
    with ctx.store.write() as conn:
        before = require(conn, id)
        conn.execute("DELETE FROM tasks WHERE id = ?", (id,))
        record(conn, ctx, "delete_task", id, before)
    return {"deleted": brief(before)}


@tool()
def get_today(ctx: ToolContext) -> dict[str, Any]:
    """Today's date and weekday."""
    today = ctx.today()
    return {"date": today.isoformat(), "weekday": today.strftime("%A")}


# ---------------------------------------------------------------- memory tools


def _memory(ctx: ToolContext) -> LongTermMemory:
    if ctx.memory is None:
        raise ToolError("long-term memory is not available in this run")
    return ctx.memory


@tool(
    {"fact": {"type": "string", "description": "One self-contained sentence about the user, with dates written out."}},
    required=("fact",),
)
def remember(ctx: ToolContext, fact: str) -> dict[str, Any]:
    """Save a lasting fact about the user (a preference, a person, a place, a routine) for later conversations. Not for tasks or reminders: use add_task for those."""
    fact = fact.strip()
    if not fact:
        raise ToolError("fact must not be empty")
    if len(fact) > MAX_FACT:
        raise ToolError(f"fact is {len(fact)} characters; keep it under {MAX_FACT}")
    return _memory(ctx).remember(fact)


@tool(
    {
        "query": {"type": "string", "description": "What you want to know about the user."},
        "k": {
            "type": "integer",
            "minimum": 1,
            "maximum": 20,
            "description": "How many memories to return; 3 if left out.",
        },
    },
    required=("query",),
)
def recall(ctx: ToolContext, query: str, k: int = 3) -> dict[str, Any]:
    """Search saved facts about the user from earlier conversations."""
    if not query.strip():
        raise ToolError("query must not be empty")
    return {"memories": _memory(ctx).recall(query.strip(), k)}


@tool(
    {"query_or_id": {"type": "string", "description": "The memory's id, or words that describe it."}},
    required=("query_or_id",),
)
def forget(ctx: ToolContext, query_or_id: str) -> dict[str, Any]:
    """Delete a saved fact about the user when they ask you to forget it."""
    if not query_or_id.strip():
        raise ToolError("query_or_id must not be empty")
    return _memory(ctx).forget(query_or_id)


# ---------------------------------------------------------------- beyond the planner's own data

# Registered here rather than in their modules so the model reads the tools in this order.
tool(query.PROPERTIES, required=("sql",), describe=query.describe)(query.query_planner)
tool(web.PROPERTIES, required=("topic",), enabled=lambda ctx: ctx.web is not None)(web.lookup)

READ_ONLY_TOOLS = frozenset({"list_tasks", "get_today", "recall", "query_planner", "lookup"})
# Calls that change a task the user already has; more than BULK_LIMIT in one turn asks first.
# Additions do not count: they alter nothing the user had, and /undo removes them.
CHANGES_EXISTING = frozenset({"update_task", "complete_task", "delete_task"})
