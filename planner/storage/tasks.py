"""Tasks in the database: how they are shown, filtered and written, the change log, and undo.

Every task write saves the task as it was and as it became in `task_events`,
in the same transaction as the write, tagged with the user turn that made it:

    task_events(turn, tool, task_id, before JSON|NULL, after JSON|NULL, undone_at)
      before NULL: the turn created the task; after NULL: it deleted it

`undo_last_turn()` walks the newest turn's events backwards and puts each task
back as it was. Because the log is in the file, undo works after a restart and
across processes; the price is one small row per change. Undo is one level per
turn (a second /undo reverts the turn before), with no redo.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import sqlite3
from typing import Any

from planner.dates import describe_repeat
from planner.storage.db import Store

MAX_TITLE = 500
MAX_NOTES = 4000


class TaskError(ValueError):
    """A task value storage will not write, or a task that is not there; the message says what to fix."""


BULK_LIMIT = 3  # a turn that would change more tasks than this asks the user first

Task = dict[str, Any]  # a tasks row as a dict, plus "tags" once tasks have tags


def new_turn() -> str:
    """A fresh id for the changes one user turn (or one command) makes."""
    return secrets.token_hex(8)


def now() -> str:
    """The local time as stored in created_at and completed_at."""
    return dt.datetime.now().isoformat(timespec="seconds")


def snapshot(conn: sqlite3.Connection, task_id: int) -> Task | None:
    """Everything stored about one task (its tags too), or None if there is no such task."""
    row = conn.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
    if row is None:
        return None
    task = dict(row)
    task["tags"] = tags_of(conn, task_id)
    return task


def tags_of(conn: sqlite3.Connection, task_id: int) -> list[str]:
    """A task's tags, sorted."""
    return [r[0] for r in conn.execute("SELECT tag FROM task_tags WHERE task_id = ? ORDER BY tag", (task_id,))]


def set_tags(conn: sqlite3.Connection, task_id: int, tags: list[str]) -> None:
    """Replace a task's tags."""
    conn.execute("DELETE FROM task_tags WHERE task_id = ?", (task_id,))
    conn.executemany("INSERT OR IGNORE INTO task_tags (task_id, tag) VALUES (?, ?)", [(task_id, t) for t in tags])


def require(conn: sqlite3.Connection, task_id: int) -> Task:
    """One task by id, or a TaskError that says how to find the right id."""
    task = snapshot(conn, task_id)
    if task is None:
        raise TaskError(f'no task with id={task_id}; call list_tasks with status "all" to see the ids')
    return task


def record(conn: sqlite3.Connection, turn: str | None, tool: str, task_id: int, before: Task | None) -> Task | None:
    """Log one change to a task (call inside the write transaction, after the write); returns the task now."""
    after = snapshot(conn, task_id)
    conn.execute(
        "INSERT INTO task_events (turn, tool, task_id, before, after) VALUES (?, ?, ?, ?, ?)",
        (turn or new_turn(), tool, task_id, _dump(before), _dump(after)),
    )
    return after


def _dump(task: Task | None) -> str | None:
    return None if task is None else json.dumps(task, ensure_ascii=False)


def restore(conn: sqlite3.Connection, task_id: int, task: Task | None) -> None:
    """Put a task back exactly as snapshotted (None: remove it)."""
    if task is None:
        conn.execute("DELETE FROM tasks WHERE id = ?", (task_id,))
        return
    have = {r[1] for r in conn.execute("PRAGMA table_info(tasks)")}
    values = {k: v for k, v in task.items() if k in have}
    cols = list(values)
    if conn.execute("SELECT 1 FROM tasks WHERE id = ?", (task_id,)).fetchone():
        sets = ", ".join(f"{c} = ?" for c in cols if c != "id")
        conn.execute(f"UPDATE tasks SET {sets} WHERE id = ?", [values[c] for c in cols if c != "id"] + [task_id])
    else:
        marks = ", ".join("?" for _ in cols)
        conn.execute(f"INSERT INTO tasks ({', '.join(cols)}) VALUES ({marks})", [values[c] for c in cols])
    set_tags(conn, task_id, task.get("tags") or [])


def newest_turn(store: Store) -> tuple[str | None, bool, bool]:
    """The newest turn with something to undo: (its id, it changed tasks, it forgot memories).

    A forget is newer than every task change up to the change-log id it recorded (after_event);
    a turn that did both is undone whole.
    """
    conn = store.conn()
    task = conn.execute("SELECT turn, id FROM task_events WHERE undone_at IS NULL ORDER BY id DESC LIMIT 1").fetchone()
    forgot = conn.execute(
        "SELECT turn, after_event FROM memory_history "
        "WHERE reason = 'forget' AND turn IS NOT NULL AND undone_at IS NULL ORDER BY id DESC LIMIT 1"
    ).fetchone()
    newest = forgot if forgot and (task is None or forgot["after_event"] >= task["id"]) else task
    if newest is None:
        return None, False, False
    turn = newest["turn"]
    return turn, bool(task and task["turn"] == turn), bool(forgot and forgot["turn"] == turn)


def undo_last_turn(store: Store) -> list[str]:
    """Revert the newest turn that changed tasks; returns one line per task put back (empty: nothing to undo)."""
    lines: list[str] = []
    with store.write() as conn:
        row = conn.execute("SELECT turn FROM task_events WHERE undone_at IS NULL ORDER BY id DESC LIMIT 1").fetchone()
        if row is None:
            return []
        events = conn.execute(
            "SELECT id, task_id, before, after FROM task_events WHERE turn = ? AND undone_at IS NULL ORDER BY id DESC",
            (row["turn"],),
        ).fetchall()
        for e in events:
            before = json.loads(e["before"]) if e["before"] else None
            after = json.loads(e["after"]) if e["after"] else None
            restore(conn, e["task_id"], before)
            lines.append(describe_undo(e["task_id"], before, after))
        conn.execute(
            f"UPDATE task_events SET undone_at = ? WHERE id IN ({', '.join('?' for _ in events)})",
            [now(), *(e["id"] for e in events)],
        )
    return lines[::-1]  # in the order the turn made them


def describe_undo(task_id: int, before: Task | None, after: Task | None) -> str:
    """What putting one task back did, in a line for the user."""
    if before is None:
        return f'removed task {task_id} "{(after or {}).get("title", "")}" (it was added)'
    if after is None:
        return f'restored task {task_id} "{before["title"]}" (it was deleted)'
    changes = [
        f"{k} {_show(after.get(k))} → {_show(before.get(k))}"
        for k in before
        if k not in ("id", "completed_at", "uid") and before.get(k) != after.get(k)
    ]
    return f'task {task_id} "{before["title"]}": ' + ("; ".join(changes) or "unchanged")


def _show(value: Any) -> str:
    if value is None or value == [] or value == "":
        return "none"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def describe_call(conn: sqlite3.Connection, name: str, args: Any) -> str:
    """A pending task change, in a line for a confirmation prompt."""
    args = args if isinstance(args, dict) else {}
    if name == "add_task":
        due = f" (due {args['due_date']})" if args.get("due_date") else ""
        return f'add "{args.get("title", "")}"{due}'
    try:
        task = snapshot(conn, int(args.get("id")))
    except (TypeError, ValueError):
        task = None
    what = f'task {task["id"]} "{task["title"]}"' if task else f"task {args.get('id')}"
    verb = {"complete_task": "complete", "delete_task": "DELETE", "update_task": "change"}.get(name, name)
    extra = ", ".join(f"{k}={v}" for k, v in args.items() if k != "id")
    return f"{verb} {what}" + (f" ({extra})" if extra and name == "update_task" else "")


# ---------------------------------------------------------------- fields, listing and the agenda

PRIORITIES = ("high", "medium", "low")
MAX_TAGS = 10
SORTS = {
    "due": "t.due_date IS NULL, t.due_date, t.due_time IS NULL, t.due_time, t.id",
    "priority": "CASE t.priority WHEN 'high' THEN 0 WHEN 'medium' THEN 1 WHEN 'low' THEN 2 ELSE 3 END, "
    "t.due_date IS NULL, t.due_date, t.id",
    "created": "t.created_at, t.id",
    "title": "t.title COLLATE NOCASE, t.id",
}


def brief(task: Task | None) -> dict[str, Any]:
    """A task as the model sees it: always id, title, due_date and status; the rest only when set."""
    task = task or {}
    out = {k: task.get(k) for k in ("id", "title", "due_date", "status")}
    for key in ("due_time", "priority", "tags", "notes"):
        if task.get(key):
            out[key] = task[key]
    if task.get("recurrence"):
        out["repeat"] = describe_repeat(task["recurrence"])
    if task.get("remind_at"):
        out["remind_at"] = task["remind_at"].replace("T", " ")
    return out


def due_reminders(conn: sqlite3.Connection, now: dt.datetime) -> list[Task]:
    """Open tasks whose reminder time has come and that were not shown yet, soonest first."""
    rows = conn.execute(
        "SELECT * FROM tasks WHERE status = 'open' AND remind_at IS NOT NULL AND remind_at <= ? "
        "AND reminded_at IS NULL ORDER BY remind_at, id",
        (now.isoformat(timespec="minutes"),),
    )
    return [dict(r) for r in rows]


def upcoming_reminders(conn: sqlite3.Connection, start: dt.datetime, end: dt.datetime) -> list[Task]:
    """Open tasks with a reminder still to show between start and end, soonest first."""
    rows = conn.execute(
        "SELECT * FROM tasks WHERE status = 'open' AND reminded_at IS NULL AND remind_at > ? AND remind_at <= ? "
        "ORDER BY remind_at, id",
        (start.isoformat(timespec="minutes"), end.isoformat(timespec="minutes")),
    )
    return [dict(r) for r in rows]


def mark_reminded(conn: sqlite3.Connection, ids: list[int], now: dt.datetime) -> None:
    """Note that these reminders were shown (call inside a write transaction)."""
    conn.executemany(
        "UPDATE tasks SET reminded_at = ? WHERE id = ?", [(now.isoformat(timespec="seconds"), i) for i in ids]
    )


def clean_tags(value: Any) -> list[str]:
    """Tags from a list or a comma/space separated string: lower case, no '#' or '+', deduplicated."""
    if isinstance(value, str):
        if len(value) > MAX_TAGS * 50:
            raise TaskError(f"give at most {MAX_TAGS} tags")
        value = value.replace(",", " ").split()
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise TaskError("tags must be a list of words")
    if len(value) > MAX_TAGS * 5:  # checked before any work: an import may carry 100,000 tags
        raise TaskError(f"give at most {MAX_TAGS} tags, not {len(value)}")
    tags: dict[str, None] = {}  # ordered and linear to dedupe
    for t in value:
        tag = "-".join(t.strip().lstrip("#+@").lower().split())
        if not tag:
            continue
        if len(tag) > 40:
            raise TaskError(f"the tag {tag[:40]!r}... is too long; keep tags to one or two words")
        tags[tag] = None
    if len(tags) > MAX_TAGS:
        raise TaskError(f"give at most {MAX_TAGS} tags")
    return sorted(tags)


def insert(conn: sqlite3.Connection, turn: str | None, fields: dict[str, Any], tags: list[str], tool: str) -> Task:
    """Add a task (fields: tasks columns) with its tags, logged; returns it as stored."""
    row = {"status": "open", "created_at": now(), "uid": secrets.token_hex(16), **fields}
    cols = list(row)
    cur = conn.execute(
        f"INSERT INTO tasks ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})", [row[c] for c in cols]
    )
    set_tags(conn, cur.lastrowid, tags)
    return record(conn, turn, tool, cur.lastrowid, None)  # type: ignore[return-value]


def search(
    conn: sqlite3.Connection,
    status: str = "open",
    tag: str | None = None,
    priority: str | None = None,
    due_before: str | None = None,
    due_after: str | None = None,
    overdue_on: str | None = None,
    text: str | None = None,
    sort: str = "due",
    limit: int = 20,
) -> tuple[list[Task], int]:
    """Tasks matching every filter given, sorted, at most `limit`; and how many matched in all."""
    # (value, condition): a condition applies when its value is given.
    filters = [
        (None if status == "all" else status, "t.status = ?"),
        (tag, "EXISTS (SELECT 1 FROM task_tags g WHERE g.task_id = t.id AND g.tag = ?)"),
        (priority, "t.priority = ?"),
        (due_before, "t.due_date <= ?"),
        (due_after, "t.due_date >= ?"),
        (overdue_on, "t.status = 'open' AND t.due_date < ?"),
    ]
    where = [cond for value, cond in filters if value]
    params: list[Any] = [value for value, _ in filters if value]
    if text:
        like = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        where.append("(t.title LIKE ? ESCAPE '\\' OR COALESCE(t.notes, '') LIKE ? ESCAPE '\\')")
        params += [like, like]
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    total = conn.execute(f"SELECT COUNT(*) FROM tasks t {clause}", params).fetchone()[0]
    rows = conn.execute(f"SELECT t.* FROM tasks t {clause} ORDER BY {SORTS[sort]} LIMIT ?", [*params, limit])
    found = []
    for r in rows:
        task = dict(r)
        task["tags"] = tags_of(conn, task["id"])
        found.append(task)
    return found, total


def agenda(conn: sqlite3.Connection, today: dt.date, days: int, cap: int = 30) -> dict[str, Any]:
    """Open tasks that are overdue, due today, and due in the next `days` days, grouped by day."""
    end = today + dt.timedelta(days=days)
    overdue, n_overdue = search(conn, due_before=(today - dt.timedelta(days=1)).isoformat(), limit=cap)
    coming, n_coming = search(conn, due_after=today.isoformat(), due_before=end.isoformat(), limit=cap * 3)
    groups: dict[str, list[dict[str, Any]]] = {}
    for task in coming:
        groups.setdefault(task["due_date"], []).append(brief(task))
    out_days = []
    for date, items in groups.items():
        d = dt.date.fromisoformat(date)
        label = "today" if d == today else "tomorrow" if d == today + dt.timedelta(days=1) else f"{d:%A}"
        out_days.append({"date": date, "label": label, "tasks": items})
    undated = conn.execute("SELECT COUNT(*) FROM tasks WHERE status = 'open' AND due_date IS NULL").fetchone()[0]
    result: dict[str, Any] = {
        "today": f"{today:%A} {today.isoformat()}",
        "overdue": [brief(t) for t in overdue],
        "days": out_days,
        "without_date": undated,
    }
    if n_overdue > len(overdue) or n_coming > len(coming):
        result["more"] = n_overdue - len(overdue) + n_coming - len(coming)
    return result


def check_title(value: str) -> str:
    """A task title that is not empty and not absurdly long."""
    title = value.strip()
    if not title:
        raise TaskError("title must not be empty")
    if len(title) > MAX_TITLE:
        raise TaskError(f"title is {len(title)} characters; keep it under {MAX_TITLE}")
    return title


def check_notes(value: str) -> str | None:
    """Notes on a task; an empty string clears them."""
    if len(value) > MAX_NOTES:
        raise TaskError(f"notes are {len(value)} characters; keep them under {MAX_NOTES}")
    return value.strip() or None
