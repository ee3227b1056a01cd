"""What each tool gives back when it works, as JSON schemas (MCP's outputSchema, from the registry).

Loose on purpose: every key a result may hold is described, only the keys
every result holds are required, and more are allowed, so a new field never
breaks a client that validates. An error result ({"error": ...}) is not
described here: over MCP it is `isError` with its message as text and no
structured content, since a client (the TypeScript SDK's) validates any
structured content against these, errors included (tests/test_mcp_clients.py).
"""

from __future__ import annotations

from typing import Any

TEXT: dict[str, Any] = {"type": "string"}
NULLABLE_TEXT: dict[str, Any] = {"type": ["string", "null"]}
TASK: dict[str, Any] = {
    "type": "object",
    "description": "A task: always id, title, due_date, status; the other fields only when set.",
    "properties": {
        "id": {"type": "integer"},
        "title": TEXT,
        "due_date": NULLABLE_TEXT,
        "status": {"type": "string", "enum": ["open", "done", "cancelled"]},
        "due_time": TEXT,
        "start_date": TEXT,
        "priority": TEXT,
        "tags": {"type": "array", "items": TEXT},
        "list": TEXT,
        "estimate_minutes": {"type": "integer"},
        "parent": {"type": "integer"},
        "notes": TEXT,
        "more_notes": {"type": "array", "items": TEXT},
        "repeat": TEXT,
        "remind_at": TEXT,
    },
    "required": ["id", "title", "due_date", "status"],
}
SAID = {"date_read_as": {"type": "string", "description": "What each phrase was read as."}}


def obj(required: tuple[str, ...] = (), **properties: Any) -> dict[str, Any]:
    """An object schema with these properties, of which `required` always are there."""
    return {"type": "object", "properties": properties, "required": list(required)}


MEMORY = obj(id={"type": "integer"}, text=TEXT, kind=TEXT, said=TEXT)
BLOCKS = {
    "type": "array",
    "items": obj(
        ("start", "end", "kind", "title"),
        start=TEXT,
        end=TEXT,
        kind={"type": "string", "enum": ["task", "event"]},
        title=TEXT,
    ),
}
NOTES = {
    "type": "array",
    "items": obj(("task_id", "title", "reason"), task_id={"type": "integer"}, title=TEXT, reason=TEXT),
}
OUTPUT: dict[str, dict[str, Any]] = {
    "add_task": obj(("added",), added=TASK, **SAID),
    "list_tasks": obj(
        ("status", "count", "tasks"),
        status=TEXT,
        count={"type": "integer"},
        tasks={"type": "array", "items": TASK},
        more=TEXT,
        waiting=TEXT,
        **SAID,
    ),
    "update_task": obj(("updated", "before"), updated=TASK, before=TASK, **SAID),
    "complete_task": obj(completed=TASK, next=TASK, already_done=TASK, repeat=TEXT),
    "cancel_task": obj(cancelled=TASK, already_cancelled=TASK, repeat=TEXT),
    "reopen_task": obj(reopened=TASK, already_open=TASK),
    "delete_task": obj(("deleted",), deleted=TASK),
    "list_lists": obj(
        ("lists",),
        lists={
            "type": "array",
            "items": obj(("list", "open", "tasks"), list=TEXT, open={"type": "integer"}, tasks={"type": "integer"}),
        },
    ),
    "rename_list": obj(("renamed", "to", "tasks"), renamed=TEXT, to=NULLABLE_TEXT, tasks={"type": "integer"}),
    "agenda": obj(
        ("today", "overdue", "days", "without_date"),
        today=TEXT,
        overdue={"type": "array", "items": TASK},
        days={
            "type": "array",
            "items": obj(("date", "label", "tasks"), date=TEXT, label=TEXT, tasks={"type": "array", "items": TASK}),
        },
        without_date={"type": "integer"},
        more={"type": "integer"},
    ),
    "get_today": obj(("date", "weekday"), date=TEXT, weekday=TEXT),
    "remember": obj(remembered=MEMORY, updated=MEMORY, superseded=MEMORY, note=TEXT),
    "recall": obj(("memories",), memories={"type": "array", "items": MEMORY}),
    "forget": obj(("forgotten",), forgotten=MEMORY),
    "query_planner": obj(
        ("columns", "rows", "row_count"),
        columns={"type": "array", "items": TEXT},
        rows={"type": "array"},
        row_count={"type": "integer"},
    ),
    "lookup": obj(
        title=TEXT, summary=TEXT, url=TEXT, note=TEXT, ambiguous=TEXT, options={"type": "array", "items": TEXT}
    ),
    "plan_day": obj(
        day=TEXT,
        days={"type": "array", "items": obj(("day", "blocks"), day=TEXT, blocks=BLOCKS)},
        blocks=BLOCKS,
        unscheduled=NOTES,
        late=NOTES,
        estimates=TEXT,
        past_due=TEXT,
    ),
    "find_time": obj(
        ("minutes", "slots"),
        minutes={"type": "integer"},
        slots={"type": "array", "items": obj(("start", "end"), start=TEXT, end=TEXT, weekday=TEXT)},
        searched=TEXT,
        none_found=TEXT,
    ),
    "schedule_task": obj(
        pinned=obj(id={"type": "integer"}, title=TEXT, start=TEXT, end=TEXT),
        unpinned=obj(id={"type": "integer"}, title=TEXT),
        date_read_as=TEXT,
    ),
    "add_event": obj(
        ("event",),
        event=obj(title=TEXT, start=TEXT, end=TEXT, all_day={"type": "boolean"}),
        date_read_as=TEXT,
        assumed=TEXT,
    ),
    "add_preference": obj(
        ("preference",), preference=obj(id={"type": "integer"}, kind=TEXT, days=TEXT), date_read_as=TEXT
    ),
}
CHANGES = {
    "undo_last_change": obj(("undone",), undone={"type": "array", "items": TEXT}, note=TEXT),
    "redo_last_change": obj(("redone",), redone={"type": "array", "items": TEXT}, note=TEXT),
}
