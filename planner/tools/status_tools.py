"""The task tools that end or bring back a task, and the lists: complete, cancel, reopen, delete, lists.

    complete_task   done; a repeating task gets its next date as a new open task
    cancel_task     will not be done (kept, shown as cancelled; a repeat ends with it)
    reopen_task     open again after done or cancelled
    delete_task     gone for good (asks the user first)
    list_lists      the lists (projects) with their counts
    rename_list     a list under a new name, every task on it moved

Completing or cancelling a task with open subtasks asks first, since the
steps would be left behind. Each tool plans its change set and writes it
through the one gate (planner/storage/gate.py), which asks as the policy
says and logs every change for /undo.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from planner.repeats import next_due
from planner.storage.fields import Task, brief, check_list
from planner.storage.gate import Change, ChangeSet, Op, one
from planner.storage.listing import list_ids, lists
from planner.storage.tasks import children, now, open_titles, require
from planner.tools.registry import ToolContext, ToolError, tool

ID = {"type": "integer", "description": "The task's id (list_tasks shows it)."}


def subtasks_question(conn: Any, task: dict[str, Any], doing: str) -> str | None:
    """Why finishing a task asks first: its steps are still open (None: it has none open)."""
    steps = children(conn, task["uid"])
    if not steps:
        return None
    names = ", ".join(f'{s["id"]} "{s["title"]}"' for s in steps[:5]) + (" …" if len(steps) > 5 else "")
    return f'task {task["id"]} "{task["title"]}" has {len(steps)} open subtasks ({names}); {doing} leaves them open'


def next_occurrence(before: Task, today: dt.date) -> tuple[dict[str, Any] | None, str]:
    """The next open copy of a repeating task just completed (its columns), or None and why there is none."""
    due = dt.date.fromisoformat(before["due_date"]) if before.get("due_date") else today
    following = next_due(before["recurrence"], due, today)
    if following is None:  # the last occurrence of a finished series: the task is simply done
        return None, "that was the last date of its repeat rule"
    keep = ("title", "due_time", "priority", "notes", "recurrence", "list", "estimate_minutes", "parent_uid")
    fields = {k: before[k] for k in keep} | {"due_date": following.isoformat()}
    if before.get("start_date"):  # as long before its date as this one was
        lead = due - dt.date.fromisoformat(before["start_date"])
        fields["start_date"] = (following - lead).isoformat()
    if before.get("remind_at"):  # the next one is reminded as long before its date as this one was
        ahead = dt.datetime.fromisoformat(before["remind_at"]) - dt.datetime.combine(due, dt.time())
        fields["remind_at"] = (dt.datetime.combine(following, dt.time()) + ahead).isoformat(timespec="minutes")
    return fields, ""


@tool({"id": ID}, required=("id",), changes_existing=True, title="Complete a task")
def complete_task(ctx: ToolContext, id: int) -> dict[str, Any]:  # noqa: A002
    """Mark a task as done."""
    why = ""

    def plan(conn: Any) -> ChangeSet | None:
        nonlocal why
        task = require(conn, id)
        if task["status"] == "done":
            return None
        done = Change(Op.EDIT, id, {"status": "done", "completed_at": now()}, tool="complete_task")
        changes = [done]
        if task.get("recurrence") and task["status"] == "open":
            fields, why = next_occurrence(task, ctx.today())
            if fields is not None:
                changes.append(Change(Op.ADD, values=fields, tags=tuple(task["tags"]), tool="complete_task"))
        return ChangeSet(tuple(changes), asks=subtasks_question(conn, task, "completing it") or "")

    applied = ctx.commit(plan)
    if not applied.changes:
        return {"already_done": brief(require(ctx.store.conn(), id))}
    out: dict[str, Any] = {"completed": brief(applied.row(0))}
    if len(applied.changes) > 1:
        out["next"] = brief(applied.row(1))
    elif why:
        out["repeat"] = why
    return out


@tool({"id": ID}, required=("id",), changes_existing=True, title="Cancel a task")
def cancel_task(ctx: ToolContext, id: int) -> dict[str, Any]:  # noqa: A002
    """Mark a task as cancelled: it will not be done, but it is kept."""

    def plan(conn: Any) -> ChangeSet | None:
        task = require(conn, id)
        if task["status"] == "cancelled":
            return None
        change = Change(Op.EDIT, id, {"status": "cancelled", "completed_at": None}, tool="cancel_task")
        return one(change, asks=subtasks_question(conn, task, "cancelling it") or "")

    applied = ctx.commit(plan)
    if not applied.changes:
        return {"already_cancelled": brief(require(ctx.store.conn(), id))}
    out: dict[str, Any] = {"cancelled": brief(applied.row())}
    if applied.before[0] and applied.before[0].get("recurrence"):
        out["repeat"] = "its repeat ends with it; to skip only this date, complete it instead"
    return out


@tool({"id": ID}, required=("id",), changes_existing=True, title="Reopen a task")
def reopen_task(ctx: ToolContext, id: int) -> dict[str, Any]:  # noqa: A002
    """Open a done or cancelled task again."""

    def plan(conn: Any) -> ChangeSet | None:
        if require(conn, id)["status"] == "open":
            return None
        return one(Change(Op.EDIT, id, {"status": "open", "completed_at": None}, tool="reopen_task"))

    applied = ctx.commit(plan)
    if not applied.changes:
        return {"already_open": brief(require(ctx.store.conn(), id))}
    return {"reopened": brief(applied.row())}


@tool({"id": ID}, required=("id",), changes_existing=True, destructive=True, title="Delete a task")
def delete_task(ctx: ToolContext, id: int) -> dict[str, Any]:  # noqa: A002
    """Delete a task for good, only when the user asked to delete or remove it."""

    def plan(conn: Any) -> ChangeSet:
        task = require(conn, id)
        steps = children(conn, task["uid"], status=None)
        also = (f"Its {len(steps)} subtasks stay, without a parent.",) if steps else ()
        return one(Change(Op.DELETE, id, tool="delete_task"), notes=also)

    applied = ctx.commit(plan)
    return {"deleted": brief(applied.before[0])}


@tool(read_only=True, title="The lists")
def list_lists(ctx: ToolContext) -> dict[str, Any]:
    """The user's lists (projects) and their open tasks."""
    return {"lists": lists(ctx.store.conn())}


def _a_task_instead(conn: Any, name: str) -> str:
    """What to call instead of renaming a list that does not exist: the open tasks its words name (the real
    1.5B renamed "the milk task" with rename_list), else the lists."""
    words = {w for w in name.lower().split() if len(w) > 2}
    fits = [(i, t) for i, t in open_titles(conn).items() if words and words <= set(t.lower().split())][:3]
    if not fits:
        return "call list_lists to see the lists"
    said = ", ".join(f'task {i} "{t}"' for i, t in fits)
    return f"{said} has those words: to rename a task call update_task with its id and the new title"


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

    def plan(conn: Any) -> ChangeSet:
        ids = list_ids(conn, old)
        if not ids:
            raise ToolError(f"there is no list {old!r}; " + _a_task_instead(conn, old))
        return ChangeSet(tuple(Change(Op.EDIT, i, {"list": new}, tool="rename_list") for i in ids))

    applied = ctx.commit(plan)
    return {"renamed": old, "to": new, "tasks": len(applied.changes)}
