"""`show ID`: one task whole, without the model: every field in words, its notes with their dates, its
reminder, its steps, the time tracked on it, and its history from the change log.

    $ planner show 1
    task 1  call the dentist
      due       2026-12-04 15:00 (Friday)
      ...
    notes
      bring the insurance card
      2026-12-02 09:20  ask about the crown
    history
      2026-12-01 09:15  added
      2026-12-02 09:20  note added "ask about the crown"

The history is the change log `undo` reads (storage/tasks.history), said with the same words as undo;
times are local.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from planner.storage.db import Store
from planner.storage.fields import annotations_of, brief, describe_changes
from planner.storage.tasks import children, history
from planner.ui.views import status_cell


def show_text(store: Store, task: dict[str, Any], today: dt.date) -> str:
    """The task's page, as lines."""
    conn = store.conn()
    shown = brief(task)
    due = " ".join(x for x in (task.get("due_date"), task.get("due_time")) if x)
    if task.get("due_date"):
        due += f" ({dt.date.fromisoformat(task['due_date']):%A})"
    rows = [
        ("due", due),
        ("status", status_cell(shown, today.isoformat())),
        ("priority", task.get("priority")),
        ("tags", " ".join(f"+{t}" for t in task.get("tags") or [])),
        ("list", task.get("list")),
        ("estimate", shown.get("estimate_minutes") and _minutes(shown["estimate_minutes"])),
        ("start", task.get("start_date")),
        ("repeat", shown.get("repeat")),
        ("reminder", shown.get("remind_at")),
        ("pinned at", (task.get("scheduled_at") or "").replace("T", " ")),
        ("step of", task.get("parent") and _named(store, task["parent"])),
        ("done at", (task.get("completed_at") or "").replace("T", " ")[:16] if task["status"] != "open" else ""),
        ("tracked", tracked(store, task["id"])),
    ]
    out = [f"task {task['id']}  {task['title']}"]
    out += [f"  {name:<9} {value}" for name, value in rows if value]
    steps = children(conn, task["uid"], status=None) if task.get("uid") else []
    if steps:
        out.append("steps")
        out += [f"  {s['id']:>4}  {s['title']} ({s['status']})" for s in steps]
    notes = ([task["notes"]] if task.get("notes") else []) + [
        f"{a['at'].replace('T', ' ')}  {a['text']}" if a.get("at") else a["text"] for a in annotations_of(task)
    ]
    if notes:
        out.append("notes")
        out += [f"  {n}" for n in notes]
    lines = [_event_line(e) for e in history(conn, task["id"])]
    if lines:
        out.append("history")
        out += [f"  {x}" for x in lines]
    return "\n".join(out)


def tracked(store: Store, task_id: int) -> str:
    """The time tracked on the task, once the planner tracks time (`start`/`stop`); "" until then."""
    return ""


def _minutes(n: int) -> str:
    from planner.durations import short

    return short(n)


def _named(store: Store, task_id: int) -> str:
    from planner.storage.tasks import snapshot

    parent = snapshot(store.conn(), task_id)
    return f'{task_id} "{parent["title"]}"' if parent else str(task_id)


def _event_line(event: dict[str, Any]) -> str:
    """One change from the log, when (local time) and what, in words."""
    at = dt.datetime.fromisoformat(event["at"]).replace(tzinfo=dt.UTC).astimezone()  # SQLite writes UTC
    before, after = event["before"], event["after"]
    if before is None:
        what = "added"
    elif after is None:
        what = "deleted"
    else:
        what = "; ".join(describe_changes(before, after)) or "saved unchanged"
    return f"{at:%Y-%m-%d %H:%M}  {what}" + ("  (undone)" if event["undone"] else "")
