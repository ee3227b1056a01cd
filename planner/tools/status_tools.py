"""The task tools that end or bring back a task, and the lists: complete, cancel, reopen, delete, lists.

    complete_task   done; a repeating task gets its next date as a new open task
    cancel_task     will not be done (kept, shown as cancelled; a repeat ends with it)
    reopen_task     open again after done or cancelled
    delete_task     gone for good (asks the user first)
    list_lists      the lists (projects) with their counts
    rename_list     a list under a new name, every task on it moved

Completing or cancelling a task with open subtasks asks first, since the
steps would be left behind. Every write is logged for /undo (storage/tasks.py).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from planner.repeats import next_due
from planner.storage.fields import brief, check_list
from planner.storage.listing import list_ids, lists
from planner.storage.tasks import children, delete, insert, now, require, update
from planner.tools.registry import ToolContext, ToolError, ask, tool

ID = {"type": "integer", "description": "The task's id (list_tasks shows it)."}


def subtasks_question(conn: Any, task: dict[str, Any], doing: str) -> str | None:
    """The question before finishing a task whose steps are still open (None: it has none open)."""
    steps = children(conn, task["uid"])
    if not steps:
        return None
    names = ", ".join(f'{s["id"]} "{s["title"]}"' for s in steps[:5]) + (" …" if len(steps) > 5 else "")
    return (
        f'Task {task["id"]} "{task["title"]}" has {len(steps)} open subtasks ({names}). {doing.capitalize()} it anyway?'
    )


def _ask_for_children(ctx: ToolContext, conn: Any, task: dict[str, Any], doing: str) -> None:
    """A yes before finishing a task whose steps are still open."""
    question = subtasks_question(conn, task, doing)
    if question:
        ask(
            ctx,
            question,
            f"{doing} a task with open subtasks",
            f"task {task['id']} was not changed; its subtasks are still open",
        )


@tool({"id": ID}, required=("id",), changes_existing=True, title="Complete a task")
def complete_task(ctx: ToolContext, id: int) -> dict[str, Any]:  # noqa: A002
    """Mark a task as done."""
    task = require(ctx.store.conn(), id)
    if task["status"] == "done":
        return {"already_done": brief(task)}
    _ask_for_children(ctx, ctx.store.conn(), task, "completing")
    with ctx.store.write() as conn:
        before, done = update(conn, ctx.turn, "complete_task", id, {"status": "done", "completed_at": now()})
        if not before.get("recurrence") or before["status"] != "open":
            return {"completed": brief(done)}
        due = dt.date.fromisoformat(before["due_date"]) if before.get("due_date") else ctx.today()
        following = next_due(before["recurrence"], due, ctx.today())
        if following is None:  # the last occurrence of a finished series: the task is simply done
            return {"completed": brief(done), "repeat": "that was the last date of its repeat rule"}
        keep = ("title", "due_time", "priority", "notes", "recurrence", "list", "estimate_minutes", "parent_uid")
        fields = {k: before[k] for k in keep} | {"due_date": following.isoformat()}
        if before.get("start_date"):  # as long before its date as this one was
            lead = due - dt.date.fromisoformat(before["start_date"])
            fields["start_date"] = (following - lead).isoformat()
        if before.get("remind_at"):  # the next one is reminded as long before its date as this one was
            ahead = dt.datetime.fromisoformat(before["remind_at"]) - dt.datetime.combine(due, dt.time())
            fields["remind_at"] = (dt.datetime.combine(following, dt.time()) + ahead).isoformat(timespec="minutes")
        nxt = insert(conn, ctx.turn, fields, before["tags"], "complete_task")
    return {"completed": brief(done), "next": brief(nxt)}


@tool({"id": ID}, required=("id",), changes_existing=True, title="Cancel a task")
def cancel_task(ctx: ToolContext, id: int) -> dict[str, Any]:  # noqa: A002
    """Mark a task as cancelled: it will not be done, but it is kept."""
    task = require(ctx.store.conn(), id)
    if task["status"] == "cancelled":
        return {"already_cancelled": brief(task)}
    _ask_for_children(ctx, ctx.store.conn(), task, "cancelling")
    with ctx.store.write() as conn:
        _, after = update(conn, ctx.turn, "cancel_task", id, {"status": "cancelled", "completed_at": None})
    out: dict[str, Any] = {"cancelled": brief(after)}
    if task.get("recurrence"):
        out["repeat"] = "its repeat ends with it; to skip only this date, complete it instead"
    return out


@tool({"id": ID}, required=("id",), changes_existing=True, title="Reopen a task")
def reopen_task(ctx: ToolContext, id: int) -> dict[str, Any]:  # noqa: A002
    """Open a done or cancelled task again."""
    with ctx.store.write() as conn:
        task = require(conn, id)
        if task["status"] == "open":
            return {"already_open": brief(task)}
        _, after = update(conn, ctx.turn, "reopen_task", id, {"status": "open", "completed_at": None})
    return {"reopened": brief(after)}


@tool({"id": ID}, required=("id",), changes_existing=True, destructive=True, title="Delete a task")
def delete_task(ctx: ToolContext, id: int) -> dict[str, Any]:  # noqa: A002
    """Delete a task for good, only when the user asked to delete or remove it."""
    task = require(ctx.store.conn(), id)
    steps = children(ctx.store.conn(), task["uid"], status=None)
    also = f" Its {len(steps)} subtasks stay, without a parent." if steps else ""
    ask(ctx, f'Delete task {id} "{task["title"]}"?{also}', "deleting", f"task {id} was not deleted")
    with ctx.store.write() as conn:
        before = delete(conn, ctx.turn, "delete_task", id)
    return {"deleted": brief(before)}


@tool(read_only=True, title="The lists")
def list_lists(ctx: ToolContext) -> dict[str, Any]:
    """The user's lists (projects) and their open tasks."""
    return {"lists": lists(ctx.store.conn())}


@tool(
    {
        "name": {"type": "string"},
        "new_name": {"type": "string", "description": "none: off any list."},
    },
    required=("name", "new_name"),
    changes_existing=True,
    title="Rename a list",
)
def rename_list(ctx: ToolContext, name: str, new_name: str) -> dict[str, Any]:
    """Rename a list (project) and move its tasks."""
    old, new = check_list(name), check_list(new_name)
    if old is None:
        raise ToolError("name must be the name of a list; call list_lists to see them")
    with ctx.store.write() as conn:
        ids = list_ids(conn, old)
        if not ids:
            raise ToolError(f"there is no list {old!r}; call list_lists to see the lists")
        for task_id in ids:
            update(conn, ctx.turn, "rename_list", task_id, {"list": new})
    return {"renamed": old, "to": new, "tasks": len(ids)}
