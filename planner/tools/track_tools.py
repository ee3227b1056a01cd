"""Tracked time: the user says they are on a task, or how long one took (storage/worklog.py keeps it).

    start_task(id)              the clock runs on this task from now (one at a time: another running one stops)
    stop_task(id, took)         the clock stops; `took`, when the user said how long, is what counts

The clock is now_of (PLANNER_NOW when set). Tracked time makes the plan honest: a running task is
planned from now for what is left of it, and finished tasks teach the estimates (tools/estimates.py).
Completing a task is complete_task's, so "I'm done, that took three hours" is two calls. Each start
and stop belongs to its turn, so /undo takes it back.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from planner.durations import DurationError, minutes, short
from planner.storage import worklog
from planner.storage.gate import Change, ChangeSet, Op, one
from planner.storage.tasks import require
from planner.tools.plan_inputs import now_of
from planner.tools.registry import ToolContext, ToolError, tool

ID = {"type": "integer", "description": "The task's id, as shown by list_tasks."}


def _stretch(s: worklog.Stretch, title: str) -> dict[str, Any]:
    out = {"id": s.task_id, "title": title, "from": f"{s.start:%Y-%m-%d %H:%M}"}
    if s.end is not None:
        out |= {"to": f"{s.end:%Y-%m-%d %H:%M}", "spent": short(s.spent) if s.spent else "0m"}
    return out


@tool({"id": ID}, required=("id",), title="Start work on a task", group="plan")
def start_task(ctx: ToolContext, id: int) -> dict[str, Any]:  # noqa: A002
    """The user starts working on a task now: the clock runs until stop_task."""
    at = now_of(ctx)
    task: dict[str, Any] = {}
    already: list[worklog.Stretch] = []

    def plan(conn: Any) -> ChangeSet | None:
        nonlocal task
        task = require(conn, id)
        if task["status"] != "open":
            raise ToolError(f'task {id} "{task["title"]}" is {task["status"]}; reopen_task it first')
        was = worklog.running(conn)
        already[:] = [was] if was is not None and was.task_id == id else []
        if already:
            return None
        changes = []
        if was is not None:  # one clock at a time: the one running stops now
            end = worklog.stamp(max(at, was.start))
            changes.append(Change(Op.EDIT, was.id, {"end": end, "minutes": None}, tool="start_task", table="worklog"))
        start = {"task_id": id, "start": worklog.stamp(at)}
        changes.append(Change(Op.ADD, values=start, tool="start_task", table="worklog"))
        return ChangeSet(tuple(changes))

    applied = ctx.commit(plan)
    if already:
        return {"running": _stretch(already[0], task["title"]), "note": "the clock was already running on it"}
    out: dict[str, Any] = {"started": _stretch(worklog.stretch(applied.row(len(applied.changes) - 1)), task["title"])}
    if len(applied.changes) > 1:
        stopped = worklog.stretch(applied.row(0))
        out["stopped"] = _stretch(stopped, require(ctx.store.conn(), stopped.task_id)["title"])
    return out


@tool(
    {
        "id": {"type": "integer", "description": "The task's id; the running one if left out."},
        "took": {"type": "string", "description": "How long it took, only if the user said."},
    },
    title="Stop work on a task",
    group="plan",
)
def stop_task(ctx: ToolContext, id: int | None = None, took: str | None = None) -> dict[str, Any]:  # noqa: A002
    """Stop the clock on the task the user was working on, or note how long a task took. To finish the task too, also call complete_task."""
    said = None
    if took:
        try:
            said = minutes(took)
        except DurationError as e:
            raise ToolError(f"took: {e}") from None
    now = now_of(ctx)
    task: dict[str, Any] = {}

    def plan(conn: Any) -> ChangeSet:
        nonlocal task
        was = worklog.running(conn)
        if id is None and was is None:
            raise ToolError("no task is running; give the id of the task, and took if the user said how long")
        task_id = id if id is not None else was.task_id  # type: ignore[union-attr]
        task = require(conn, task_id)
        if was is not None and was.task_id == task_id:
            end = worklog.stamp(max(now, was.start))
            return one(Change(Op.EDIT, was.id, {"end": end, "minutes": said}, tool="stop_task", table="worklog"))
        if said is None:
            raise ToolError(f'task {task_id} "{task["title"]}" is not running; give took if the user said how long')
        start = worklog.stamp(now.replace(second=0, microsecond=0) - dt.timedelta(minutes=said))
        done = {"task_id": task_id, "start": start, "end": worklog.stamp(now), "minutes": said}
        return one(Change(Op.ADD, values=done, tool="stop_task", table="worklog"))

    applied = ctx.commit(plan)
    done = worklog.stretch(applied.row())
    total = worklog.spent(ctx.store.conn(), [task["id"]]).get(task["id"], 0)
    out: dict[str, Any] = {"stopped": _stretch(done, task["title"]), "spent_in_all": short(total) if total else "0m"}
    if task.get("estimate_minutes"):
        out["estimate"] = short(task["estimate_minutes"])
    return out
