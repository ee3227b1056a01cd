"""The task tools the model calls: add, list, complete, update, delete, agenda, today.

The machinery (registry, validation, dispatch) is in registry.py. Task writes
go through planner/storage/tasks.py, which checks every value and logs each
change for /undo in the same transaction.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from planner.dates import DateError, When, check_time, next_due, parse_repeat, resolve, resolve_remind
from planner.storage.tasks import (
    PRIORITIES,
    SORTS,
    Task,
    brief,
    check_notes,
    check_title,
    clean_tags,
    insert,
    now,
    record,
    require,
    search,
    set_tags,
)
from planner.storage.tasks import agenda as agenda_of
from planner.tools.registry import ToolContext, ToolError, ask, tool
from planner.tools.titles import cut_title

ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

# ---------------------------------------------------------------- checks


def read_date(ctx: ToolContext, value: str, name: str = "due_date") -> When:
    """A date phrase or YYYY-MM-DD resolved against today, or a ToolError listing the readings."""
    try:
        return resolve(value, ctx.today())
    except DateError as e:
        raise ToolError(f"{name}: {e}") from None


def read_due(ctx: ToolContext, due_date: str, due_time: str | None, notes: list[str]) -> tuple[str, str | None]:
    """(YYYY-MM-DD, HH:MM or None) from the model's due_date and due_time; notes gets the echo."""
    when = read_date(ctx, due_date)
    if not ISO_DATE.fullmatch(due_date.strip()):
        notes.append(when.describe(due_date))  # so the model and the user see what the phrase became
    time = when.time
    if due_time is not None:
        time = read_time(due_time)
    return when.date.isoformat(), time


def read_time(value: str) -> str | None:
    """A due time as HH:MM; an empty string clears it."""
    if not value.strip():
        return None
    try:
        return check_time(value)
    except DateError as e:
        raise ToolError(f"due_time: {e}") from None


def read_repeat(value: str) -> str | None:
    """A repeat phrase as an RRULE; an empty string clears it."""
    if not value.strip() or value.strip().lower() in ("none", "never", "no"):
        return None
    try:
        return parse_repeat(value)
    except DateError as e:
        raise ToolError(f"repeat: {e}") from None


def read_remind(ctx: ToolContext, value: str, due_date: str | None, due_time: str | None) -> str | None:
    """A reminder phrase as a local time (YYYY-MM-DDTHH:MM); "none" or an empty string clears it."""
    try:
        when = resolve_remind(value, ctx.today(), due_date, due_time)
    except DateError as e:
        raise ToolError(f"remind: {e}") from None
    return when.isoformat(timespec="minutes") if when else None


def _result(key: str, task: Task | None, notes: list[str], **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {key: brief(task), **extra}
    if notes:
        out["date_read_as"] = "; ".join(notes)
    return out


ID = {"type": "integer", "description": "The task's id, as shown by list_tasks."}
DUE = "When it is due, in the user's words (friday 3pm, the 15th) or YYYY-MM-DD."
FIELDS = {
    "due_time": {"type": "string", "description": "HH:MM, only if the user gave a time apart from the date."},
    "priority": {"type": "string", "enum": list(PRIORITIES), "description": "Only if the user said how important."},
    "tags": {"type": "array", "items": {"type": "string"}, "description": "Only labels the user gave."},
    "notes": {"type": "string", "description": "Only extra details the user asked to keep; never the task itself."},
    "repeat": {
        "type": "string",
        "description": "Only if it repeats, in the user's words (every monday, monthly on the 1st).",
    },
    "remind": {
        "type": "string",
        "description": "Only if the user asked to be reminded, in their words (an hour before, at 9 the day before).",
    },
}

# ---------------------------------------------------------------- task tools


@tool(
    {
        "title": {"type": "string", "description": "Required. The task itself in a few words, without its date."},
        "due_date": {"type": "string", "description": DUE + " Leave out if no date."},
        **FIELDS,
    },
    required=("title",),
)
def add_task(
    ctx: ToolContext,
    title: str,
    due_date: str | None = None,
    due_time: str | None = None,
    priority: str | None = None,
    tags: list[str] | None = None,
    notes: str | None = None,
    repeat: str | None = None,
    remind: str | None = None,
) -> dict[str, Any]:
    """Add one task (a to-do or a reminder) to the user's list. Call once per task."""
    title, cut = cut_title(title, due_date=due_date, repeat=repeat, remind=remind)
    said: list[str] = []
    fields: dict[str, Any] = {"title": check_title(title), "priority": priority}
    if due_date:
        fields["due_date"], fields["due_time"] = read_due(ctx, due_date, due_time, said)
    elif due_time:
        fields["due_date"], fields["due_time"] = ctx.today().isoformat(), read_time(due_time)
    fields["notes"] = check_notes(notes) if notes else None
    fields["recurrence"] = read_repeat(repeat) if repeat else None
    if fields["recurrence"] and not fields.get("due_date"):
        # A repeat needs a first date: its first occurrence from today on.
        first = next_due(fields["recurrence"], ctx.today() - dt.timedelta(days=1))
        if first is None:
            raise ToolError(f"repeat: the rule {fields['recurrence']} has no date from today on")
        fields["due_date"] = first.isoformat()
    if remind:
        fields["remind_at"] = read_remind(ctx, remind, fields.get("due_date"), fields.get("due_time"))
    with ctx.store.write() as conn:
        task = insert(conn, ctx.turn, fields, clean_tags(tags or []), "add_task")
    return {**_result("added", task, said), **cut}


@tool(
    {
        "status": {"type": "string", "enum": ["open", "done", "all"], "description": "Which tasks; open if left out."},
        "tag": {"type": "string", "description": "Only this tag."},
        "priority": {"type": "string", "enum": list(PRIORITIES), "description": "Only this priority."},
        "due_before": {"type": "string", "description": "Due on or before this date."},
        "due_after": {"type": "string", "description": "Due on or after this date."},
        "overdue": {"type": "boolean", "description": "true: only open tasks past their date."},
        "text": {"type": "string", "description": "Words in the title or notes."},
        "sort": {"type": "string", "enum": list(SORTS), "description": "Order; by due date if left out."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "At most this many; 20 if left out."},
    },
    read_only=True,
)
def list_tasks(
    ctx: ToolContext,
    status: str = "open",
    tag: str | None = None,
    priority: str | None = None,
    due_before: str | None = None,
    due_after: str | None = None,
    overdue: bool = False,
    text: str | None = None,
    sort: str = "due",
    limit: int = 20,
) -> dict[str, Any]:
    """List the user's tasks with their ids, titles, due dates and status; every filter given must match."""
    said: list[str] = []
    before = read_due(ctx, due_before, None, said)[0] if due_before else None
    after = read_due(ctx, due_after, None, said)[0] if due_after else None
    tags = clean_tags([tag]) if tag else []
    found, total = search(
        ctx.store.conn(),
        status=status,
        tag=tags[0] if tags else None,
        priority=priority,
        due_before=before,
        due_after=after,
        overdue_on=ctx.today().isoformat() if overdue else None,
        text=text.strip() if text and text.strip() else None,
        sort=sort,
        limit=limit,
    )
    out: dict[str, Any] = {"status": status, "count": total, "tasks": [brief(t) for t in found]}
    if said:
        out["date_read_as"] = "; ".join(said)
    if total > len(found):
        out["more"] = f"{total - len(found)} more not shown; narrow the filters or raise limit"
    return out


@tool({"id": ID}, required=("id",), changes_existing=True)
def complete_task(ctx: ToolContext, id: int) -> dict[str, Any]:
    """Mark a task as done. A repeating task then gets its next date as a new open task."""
    with ctx.store.write() as conn:
        before = require(conn, id)
        if before["status"] == "done":
            return {"already_done": brief(before)}
        conn.execute("UPDATE tasks SET status = 'done', completed_at = ? WHERE id = ?", (now(), id))
        task = record(conn, ctx.turn, "complete_task", id, before)
        if not before.get("recurrence"):
            return {"completed": brief(task)}
        due = dt.date.fromisoformat(before["due_date"]) if before.get("due_date") else ctx.today()
        following = next_due(before["recurrence"], due, ctx.today())
        if following is None:  # the last occurrence of a finished series: the task is simply done
            return {"completed": brief(task), "repeat": "that was the last date of its repeat rule"}
        keep = ("title", "due_time", "priority", "notes", "recurrence")
        fields = {k: before[k] for k in keep} | {"due_date": following.isoformat()}
        if before.get("remind_at"):  # the next one is reminded as long before its date as this one was
            ahead = dt.datetime.fromisoformat(before["remind_at"]) - dt.datetime.combine(due, dt.time())
            fields["remind_at"] = (dt.datetime.combine(following, dt.time()) + ahead).isoformat(timespec="minutes")
        nxt = insert(conn, ctx.turn, fields, before["tags"], "complete_task")
    return {"completed": brief(task), "next": brief(nxt)}


@tool(
    {
        "id": ID,
        "title": {"type": "string", "description": "The new title. Leave out to keep the current one."},
        "due_date": {"type": "string", "description": DUE + " An empty string removes the date."},
        **FIELDS,
        "priority": {"type": "string", "enum": [*PRIORITIES, "none"], "description": "New priority; none clears it."},
    },
    required=("id",),
    changes_existing=True,
)
def update_task(
    ctx: ToolContext,
    id: int,
    title: str | None = None,
    due_date: str | None = None,
    due_time: str | None = None,
    priority: str | None = None,
    tags: list[str] | None = None,
    notes: str | None = None,
    repeat: str | None = None,
    remind: str | None = None,
) -> dict[str, Any]:
    """Change a task: rename, reschedule, set priority, tags, notes or repeat. Only what is given changes; an empty string clears."""
    title, cut = cut_title(title, due_date=due_date, repeat=repeat, remind=remind)
    said: list[str] = []
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = check_title(title)
    if due_date is not None:
        if due_date.strip():
            changes["due_date"], changes["due_time"] = read_due(ctx, due_date, due_time, said)
        else:
            changes["due_date"] = changes["due_time"] = None
    elif due_time is not None:
        changes["due_time"] = read_time(due_time)
    if priority is not None:
        changes["priority"] = None if priority == "none" else priority
    if notes is not None:
        changes["notes"] = check_notes(notes)
    if repeat is not None:
        changes["recurrence"] = read_repeat(repeat)
    new_tags = clean_tags(tags) if tags is not None else None
    if not changes and new_tags is None:
        if remind is None:
            raise ToolError(
                "give at least one thing to change: title, due_date, due_time, priority, tags, notes, repeat or remind"
            )
    with ctx.store.write() as conn:
        before = require(conn, id)
        if changes.get("due_time") and not (changes.get("due_date") or before["due_date"]):
            changes["due_date"] = ctx.today().isoformat()
        if remind is not None:
            due = changes.get("due_date", before["due_date"])
            at = changes.get("due_time", before["due_time"])
            changes["remind_at"] = read_remind(ctx, remind, due, at) if remind.strip() else None
            changes["reminded_at"] = None
        elif before.get("remind_at") and ("due_date" in changes or "due_time" in changes):
            said.append(f"the reminder stays at {before['remind_at'].replace('T', ' ')}; set remind to move it")
        if changes:
            conn.execute(
                f"UPDATE tasks SET {', '.join(f'{k} = ?' for k in changes)} WHERE id = ?", [*changes.values(), id]
            )
        if new_tags is not None:
            set_tags(conn, id, new_tags)
        task = record(conn, ctx.turn, "update_task", id, before)
    return {**_result("updated", task, said, before=brief(before)), **cut}


@tool({"id": ID}, required=("id",), changes_existing=True, destructive=True)
def delete_task(ctx: ToolContext, id: int) -> dict[str, Any]:
    """Delete a task for good. Only when the user asked to delete or remove it; to finish a task use complete_task."""
    task = require(ctx.store.conn(), id)
    ask(ctx, f'Delete task {id} "{task["title"]}"?', "deleting", f"task {id} was not deleted")
    with ctx.store.write() as conn:
        before = require(conn, id)
        conn.execute("DELETE FROM tasks WHERE id = ?", (id,))
        record(conn, ctx.turn, "delete_task", id, before)
    return {"deleted": brief(before)}


@tool(
    {"days": {"type": "integer", "minimum": 1, "maximum": 60, "description": "How many days ahead; 7 if left out."}},
    read_only=True,
)
def agenda(ctx: ToolContext, days: int = 7) -> dict[str, Any]:
    """The user's agenda: overdue tasks, today's, and the next days', grouped by day."""
    return agenda_of(ctx.store.conn(), ctx.today(), days)


@tool(read_only=True)
def get_today(ctx: ToolContext) -> dict[str, Any]:
    """Today's date and weekday."""
    today = ctx.today()
    return {"date": today.isoformat(), "weekday": today.strftime("%A")}
