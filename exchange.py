"""Export and import of tasks: JSON (everything), todo.txt, and ICS for calendar apps.

    python agent.py export [--format json|todotxt|ics] [-o FILE]
    python agent.py import FILE [--format json|todotxt]

Every task has a uid, written in all three formats. Import skips a task whose
uid is already in the database, so importing a file twice adds nothing; a
todo.txt line from another program has no uid, so it gets one from a hash of
the line and the same line imports once. Rows are checked as the tools check
them; a bad row is reported by its line (or index) and not written. One
import is one transaction and one undoable turn (`/undo`).

Trade-offs: todo.txt has no place for notes, so they are not exported there;
ICS shows dated tasks as all-day (or timed) events and undated open tasks as
VTODO items, which not every calendar app displays.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from typing import Any

from dates import DateError, check_time, parse_repeat
from db import Store
from registry import ToolContext, ToolError
from tasks import PRIORITIES, clean_tags, insert, new_turn, tags_of
from tools import check_notes, check_title

FORMATS = ("json", "todotxt", "ics")
FIELDS = ("uid", "title", "status", "due_date", "due_time", "priority", "tags", "notes", "repeat")
FIELDS += ("created_at", "completed_at")
TODO_PRIORITY = {"high": "A", "medium": "B", "low": "C"}


def all_tasks(store: Store) -> list[dict[str, Any]]:
    """Every task, oldest first, with its tags and its repeat rule as `repeat`."""
    conn = store.conn()
    out = []
    for row in conn.execute("SELECT * FROM tasks ORDER BY id"):
        task = dict(row)
        task["tags"] = tags_of(conn, task["id"])
        task["repeat"] = task.pop("recurrence", None)
        out.append({k: task.get(k) for k in FIELDS})
    return out


# ---------------------------------------------------------------- export


def to_json(tasks: list[dict[str, Any]]) -> str:
    """All fields of every task."""
    doc = {"format": "planner-tasks", "version": 1, "tasks": tasks}
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def to_todotxt(tasks: list[dict[str, Any]]) -> str:
    """One todo.txt line per task: x, (A), dates, title, +tags, due:, time:, rec:, uid:."""
    lines = []
    for t in tasks:
        parts = []
        pri = TODO_PRIORITY.get(t["priority"] or "")
        if t["status"] == "done":
            parts.append("x")
            parts.append((t["completed_at"] or t["created_at"] or "")[:10])
        elif pri:
            parts.append(f"({pri})")
        if t["created_at"]:
            parts.append(t["created_at"][:10])
        parts.append(" ".join(t["title"].split()))  # todo.txt is one line per task
        parts += [f"+{tag}" for tag in t["tags"]]
        if t["due_date"]:
            parts.append(f"due:{t['due_date']}")
        if t["due_time"]:
            parts.append(f"time:{t['due_time']}")
        if t["repeat"]:
            parts.append(f"rec:{t['repeat']}")
        if t["status"] == "done" and pri:
            parts.append(f"pri:{pri}")  # the spec drops (A) from done tasks; keep it as a key
        parts.append(f"uid:{t['uid']}")
        lines.append(" ".join(p for p in parts if p))
    return "".join(line + "\n" for line in lines)


def _ics_text(value: str) -> str:
    return value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def _fold(line: str) -> str:
    """RFC 5545: lines longer than 75 octets continue on the next line after a space."""
    data = line.encode()
    if len(data) <= 75:
        return line
    parts, start = [], 0
    while start < len(data):
        end = min(start + (75 if not parts else 74), len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:  # never split a UTF-8 character
            end -= 1
        parts.append(data[start:end].decode())
        start = end
    return "\r\n ".join(parts)


def to_ics(tasks: list[dict[str, Any]], now: dt.datetime | None = None) -> str:
    """A calendar: dated tasks as events on their day (or time), undated open tasks as to-dos."""
    stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%dT%H%M%SZ")
    out = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//planner//tasks//EN", "CALSCALE:GREGORIAN"]
    for t in tasks:
        if not t["due_date"] and t["status"] == "done":
            continue  # nothing for a calendar to show
        kind = "VEVENT" if t["due_date"] else "VTODO"
        item = [f"BEGIN:{kind}", f"UID:{t['uid']}@planner", f"DTSTAMP:{stamp}", f"SUMMARY:{_ics_text(t['title'])}"]
        if t["due_date"]:
            day = t["due_date"].replace("-", "")
            if t["due_time"]:
                start = f"{day}T{t['due_time'].replace(':', '')}00"  # floating local time, as stored
                item.append(f"DTSTART:{start}")
            else:
                end = (dt.date.fromisoformat(t["due_date"]) + dt.timedelta(days=1)).strftime("%Y%m%d")
                item += [f"DTSTART;VALUE=DATE:{day}", f"DTEND;VALUE=DATE:{end}"]
        if t["repeat"]:
            item.append(f"RRULE:{t['repeat']}")
        if t["priority"]:
            item.append(f"PRIORITY:{ {'high': 1, 'medium': 5, 'low': 9}[t['priority']] }")
        if t["tags"]:
            item.append("CATEGORIES:" + ",".join(_ics_text(x) for x in t["tags"]))
        if t["notes"]:
            item.append(f"DESCRIPTION:{_ics_text(t['notes'])}")
        if kind == "VTODO":
            item.append("STATUS:NEEDS-ACTION")
        item.append(f"END:{kind}")
        out += item
    out.append("END:VCALENDAR")
    return "".join(_fold(line) + "\r\n" for line in out)


def export(store: Store, fmt: str) -> str:
    """All tasks in one of FORMATS."""
    tasks = all_tasks(store)
    return {"json": to_json, "todotxt": to_todotxt, "ics": to_ics}[fmt](tasks)


# ---------------------------------------------------------------- import


def _clean(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Task columns and tags from an imported row, checked; raises ToolError or DateError."""
    if not isinstance(raw, dict):
        raise ToolError("each task must be an object")
    fields: dict[str, Any] = {"title": check_title(str(raw.get("title") or ""))}
    status = raw.get("status") or "open"
    if status not in ("open", "done"):
        raise ToolError(f"status must be open or done, not {status!r}")
    fields["status"] = status
    if raw.get("due_date"):
        fields["due_date"] = dt.date.fromisoformat(str(raw["due_date"])).isoformat()
    if raw.get("due_time"):
        fields["due_time"] = check_time(str(raw["due_time"]))
    if raw.get("priority"):
        if raw["priority"] not in PRIORITIES:
            raise ToolError(f"priority must be high, medium or low, not {raw['priority']!r}")
        fields["priority"] = raw["priority"]
    if raw.get("notes"):
        fields["notes"] = check_notes(str(raw["notes"]))
    if raw.get("repeat"):
        fields["recurrence"] = parse_repeat(str(raw["repeat"]))
    for key in ("created_at", "completed_at"):
        if raw.get(key):
            fields[key] = dt.datetime.fromisoformat(str(raw[key])).isoformat(timespec="seconds")
    uid = str(raw.get("uid") or "").strip()
    if not re.fullmatch(r"[\w.@-]{1,100}", uid):
        raise ToolError("uid is missing or not a plain word")
    fields["uid"] = uid
    return fields, clean_tags(raw.get("tags") or [])


def parse_json(text: str) -> list[tuple[str, Any]]:
    """(where, row) pairs from an export file (or a plain list of task objects)."""
    data = json.loads(text)
    rows = data.get("tasks") if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise ValueError('expected {"tasks": [...]} or a list of tasks')
    return [(f"task {i + 1}", row) for i, row in enumerate(rows)]


def parse_todotxt_line(line: str) -> dict[str, Any]:
    """One todo.txt line as an import row."""
    words = line.split()
    row: dict[str, Any] = {"status": "open", "tags": []}
    if words and words[0] == "x":
        row["status"] = "done"
        words.pop(0)
        if words and re.fullmatch(r"\d{4}-\d{2}-\d{2}", words[0]):
            row["completed_at"] = words.pop(0)
    if words and re.fullmatch(r"\([A-Z]\)", words[0]):
        row["priority"] = {"A": "high", "B": "medium"}.get(words.pop(0)[1], "low")
    if words and re.fullmatch(r"\d{4}-\d{2}-\d{2}", words[0]):
        row["created_at"] = words.pop(0)
    title = []
    for w in words:
        key, sep, value = w.partition(":")
        if w[:1] in "+@" and len(w) > 1:
            row["tags"].append(w[1:])
        elif sep and value and key in ("due", "time", "rec", "uid", "pri"):
            name = {"due": "due_date", "time": "due_time", "rec": "repeat", "uid": "uid", "pri": "priority"}[key]
            row[name] = {"A": "high", "B": "medium"}.get(value, "low") if key == "pri" else value
        else:
            title.append(w)
    row["title"] = " ".join(title)
    if not row.get("uid"):
        # A line from another program: the same line gets the same uid, so it imports once.
        row["uid"] = "todotxt-" + hashlib.sha256(" ".join(line.split()).encode()).hexdigest()[:20]
    return row


def parse_todotxt(text: str) -> list[tuple[str, Any]]:
    """(where, row) pairs, one per non-empty line."""
    return [(f"line {n}", parse_todotxt_line(line)) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def guess_format(name: str, text: str) -> str:
    """json or todotxt, from the file name or its first character."""
    if name.endswith(".json") or text.lstrip()[:1] in "[{":
        return "json"
    return "todotxt"


def import_text(store: Store, text: str, fmt: str) -> dict[str, Any]:
    """Add the tasks of a json or todotxt file that are not there yet; returns counts and problems."""
    try:
        rows = parse_json(text) if fmt == "json" else parse_todotxt(text)
    except ValueError as e:  # json.JSONDecodeError is a ValueError
        return {"added": 0, "skipped": 0, "problems": [f"not a task file: {e}"]}
    ctx = ToolContext(store=store, turn=new_turn())  # the whole import is one /undo
    added, skipped, problems = 0, 0, []
    with store.write() as conn:
        for where, raw in rows:
            try:
                fields, tags = _clean(raw)
            except (ToolError, DateError, ValueError, TypeError) as e:
                problems.append(f"{where}: {e}")
                continue
            if conn.execute("SELECT 1 FROM tasks WHERE uid = ?", (fields["uid"],)).fetchone():
                skipped += 1
                continue
            insert(conn, ctx, fields, tags, "import")
            added += 1
    return {"added": added, "skipped": skipped, "problems": problems}
