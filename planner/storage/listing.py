"""Reading tasks: filtered and ordered listings, the agenda, and the lists (projects) with their counts.

    search(conn, today, status="open", tag=..., list=..., due_before=..., text=..., sort="urgency")

Every filter given must match. The default order is urgency (urgency.py); the
others are due date, priority, created and title. Filtering happens in SQL;
urgency is computed in Python over what matched, because it needs today and
the subtasks: fine for a personal list (thousands of tasks), not for millions.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from typing import Any

from planner.storage.fields import Task, brief
from planner.storage.tasks import parent_id, tags_of
from planner.storage.urgency import order_key

SORTS = {
    "urgency": None,  # computed: urgency.py
    "due": "t.due_date IS NULL, t.due_date, t.due_time IS NULL, t.due_time, t.id",
    "priority": "CASE t.priority WHEN 'high' THEN 0 WHEN 'medium' THEN 1 WHEN 'low' THEN 2 ELSE 3 END, "
    "t.due_date IS NULL, t.due_date, t.id",
    "created": "t.created_at, t.id",
    "title": "t.title COLLATE NOCASE, t.id",
}
STATUS_FILTERS = ("open", "waiting", "done", "cancelled", "all")  # waiting: open, with a start date still ahead


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def search(
    conn: sqlite3.Connection,
    today: dt.date,
    status: str = "open",
    tag: str | None = None,
    list_name: str | None = None,
    priority: str | None = None,
    due_before: str | None = None,
    due_after: str | None = None,
    overdue: bool = False,
    start_before: str | None = None,
    start_after: str | None = None,
    parent_uid: str | None = None,
    text: str | None = None,
    hide_waiting: bool = False,
    sort: str = "urgency",
    limit: int = 20,
) -> tuple[list[Task], int]:
    """Tasks matching every filter given, ordered, at most `limit`; and how many matched in all."""
    day = today.isoformat()
    # (value, condition): a condition applies when its value is given.
    filters: list[tuple[Any, str]] = [
        ("open" if status == "waiting" else None if status == "all" else status, "t.status = ?"),
        (day if status == "waiting" else None, "t.start_date > ?"),
        (day if hide_waiting and status == "open" else None, "(t.start_date IS NULL OR t.start_date <= ?)"),
        (tag, "EXISTS (SELECT 1 FROM task_tags g WHERE g.task_id = t.id AND g.tag = ?)"),
        (list_name, "t.list = ? COLLATE NOCASE"),
        (priority, "t.priority = ?"),
        (due_before, "t.due_date <= ?"),
        (due_after, "t.due_date >= ?"),
        (day if overdue else None, "t.status = 'open' AND t.due_date < ?"),
        (start_before, "t.start_date <= ?"),
        (start_after, "t.start_date >= ?"),
        (parent_uid, "t.parent_uid = ?"),
    ]
    where = [cond for value, cond in filters if value]
    params: list[Any] = [value for value, _ in filters if value]
    if text:
        where.append(
            "(t.title LIKE ? ESCAPE '\\' OR COALESCE(t.notes, '') LIKE ? ESCAPE '\\' "
            "OR COALESCE(t.annotations, '') LIKE ? ESCAPE '\\')"
        )
        params += [_like(text)] * 3
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    total = conn.execute(f"SELECT COUNT(*) FROM tasks t {clause}", params).fetchone()[0]
    if SORTS.get(sort) is None:  # urgency: every match, ordered here
        rows = [dict(r) for r in conn.execute(f"SELECT t.* FROM tasks t {clause}", params)]
        busy = _open_children(conn)
        rows.sort(key=lambda t: (t["status"] != "open", *order_key(t, today, busy.get(t["uid"], 0))))
        rows = rows[:limit]
    else:
        rows = [
            dict(r)
            for r in conn.execute(f"SELECT t.* FROM tasks t {clause} ORDER BY {SORTS[sort]} LIMIT ?", [*params, limit])
        ]
    for task in rows:
        task["tags"] = tags_of(conn, task["id"])
        task["parent"] = parent_id(conn, task.get("parent_uid"))
    return rows, total


def _open_children(conn: sqlite3.Connection) -> dict[str, int]:
    """uid -> how many open subtasks it has."""
    rows = conn.execute(
        "SELECT parent_uid, COUNT(*) FROM tasks WHERE status = 'open' AND parent_uid IS NOT NULL GROUP BY parent_uid"
    )
    return dict(rows.fetchall())


def waiting_count(conn: sqlite3.Connection, today: dt.date) -> int:
    """Open tasks whose start date is still ahead."""
    return conn.execute(
        "SELECT COUNT(*) FROM tasks WHERE status = 'open' AND start_date > ?", (today.isoformat(),)
    ).fetchone()[0]


def agenda(conn: sqlite3.Connection, today: dt.date, days: int, cap: int = 30) -> dict[str, Any]:
    """Open tasks that are overdue, due today, and due in the next `days` days, grouped by day (urgent first)."""
    end = today + dt.timedelta(days=days)
    overdue, n_overdue = search(conn, today, overdue=True, limit=cap)
    coming, n_coming = search(conn, today, due_after=today.isoformat(), due_before=end.isoformat(), limit=cap * 3)
    coming.sort(key=lambda t: (t["due_date"], t.get("due_time") or "99:99"))  # stable: urgency within a day
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


def lists(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every list with its open and total counts, by name; tasks without a list are not a list."""
    rows = conn.execute(
        "SELECT list, SUM(status = 'open'), COUNT(*) FROM tasks WHERE list IS NOT NULL "
        "GROUP BY list COLLATE NOCASE ORDER BY list COLLATE NOCASE"
    )
    return [{"list": name, "open": n_open, "tasks": n} for name, n_open, n in rows]


def list_ids(conn: sqlite3.Connection, name: str) -> list[int]:
    """The ids of the tasks on one list (any status)."""
    return [r[0] for r in conn.execute("SELECT id FROM tasks WHERE list = ? COLLATE NOCASE ORDER BY id", (name,))]


def tag_names(conn: sqlite3.Connection) -> list[str]:
    """Every tag some task has, by name."""
    return [r[0] for r in conn.execute("SELECT DISTINCT tag FROM task_tags ORDER BY tag")]
