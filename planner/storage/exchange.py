"""Export and import of tasks: JSON (everything), todo.txt, and ICS for calendar apps.

    python agent.py export [--format json|todotxt|ics] [--events] [-o FILE]
    python agent.py import FILE [--format json|todotxt|ics] [--events]

Every task has a uid, written in all three formats. Import skips a task whose
uid is already in the database, so importing a file twice adds nothing; a
todo.txt line from another program has no uid, so it gets one from a hash of
the line and the same line imports once. Rows are checked as the tools check
them; a bad row is reported by its line (or index) and not written. One
import is one transaction and one undoable turn (`/undo`).

Trade-offs: todo.txt has no place for notes, so they are not exported there, and
no escapes, so a title word it would read as metadata (+tag, @context, due:...)
is written with a backslash in front, which our import removes;
ICS writes every task as a to-do (VTODO, ical.py), which task apps read but not
every calendar shows; `--events` adds dated tasks as events for those.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from typing import Any

import icalendar

from planner.dates import DateError, check_time, check_year, parse_repeat
from planner.storage import ical
from planner.storage.db import Store
from planner.storage.tasks import PRIORITIES, TaskError, check_notes, check_title, clean_tags, insert, new_turn, tags_of

FORMATS = ("json", "todotxt", "ics")
FIELDS = ("uid", "title", "status", "due_date", "due_time", "priority", "tags", "notes", "repeat")
FIELDS += ("created_at", "completed_at", "remind_at")
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


def to_json(
    tasks: list[dict[str, Any]],
    memories: list[dict[str, Any]] | None = None,
    scenes: list[dict[str, Any]] | None = None,
) -> str:
    """All fields of every task (and, when given, the memories and their scenes); "contains" says which."""
    doc: dict[str, Any] = {"format": "planner-tasks", "version": 1, "contains": ["tasks"], "tasks": tasks}
    if memories is not None:
        doc["contains"].append("memories")
        doc["memories"] = memories
    if scenes is not None:
        doc["contains"].append("scenes")
        doc["scenes"] = scenes
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def export_memories(store: Store) -> str:
    """The json export with the long-term memories added: their text, kind, topic and dates (no vectors),
    and the scenes that group them (name, summary, member ids)."""
    conn = store.conn()
    rows = conn.execute(
        "SELECT id, text, kind, topic, said_on, happened_on, happened_to, created_at, updated_at FROM memories "
        "ORDER BY id"
    )
    scenes = conn.execute(
        "SELECT s.id, s.name, s.summary, json_group_array(c.memory_id) AS memories FROM scenes s "
        "JOIN scene_cells c ON c.scene_id = s.id GROUP BY s.id HAVING COUNT(*) >= 2 ORDER BY s.name"  # as scenes.MIN_CELLS
    )
    return to_json(
        all_tasks(store), [dict(r) for r in rows], [dict(r) | {"memories": json.loads(r["memories"])} for r in scenes]
    )


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
        parts.append(_todo_title(t["title"]))
        parts += [f"+{tag}" for tag in t["tags"]]
        if t["due_date"]:
            parts.append(f"due:{t['due_date']}")
        if t["due_time"]:
            parts.append(f"time:{t['due_time']}")
        if t["repeat"]:
            parts.append(f"rec:{to_rec(t['repeat'])}")
        if t["status"] == "done" and pri:
            parts.append(f"pri:{pri}")  # the spec drops (A) from done tasks; keep it as a key
        parts.append(f"uid:{t['uid']}")
        lines.append(" ".join(p for p in parts if p))
    return "".join(line + "\n" for line in lines)


TODO_KEYS = ("due", "time", "rec", "uid", "pri")
_TODO_META = re.compile(rf"[+@]\S|(?:{'|'.join(TODO_KEYS)}):\S|\\")  # a title word todo.txt would misread
_TODO_LEAD = re.compile(r"x|\([A-Z]\)|\d{4}-\d{2}-\d{2}")  # a first word read as done, priority or date


_REC_UNITS = {"d": "DAILY", "w": "WEEKLY", "m": "MONTHLY", "y": "YEARLY"}


def to_rec(rule: str) -> str:
    """A repeat rule in todo.txt's common rec: form (1w, 2m, 1b) where it has one, else the RRULE itself."""
    parts = dict(p.partition("=")[::2] for p in rule.split(";"))
    n = parts.pop("INTERVAL", "1")
    freq = parts.pop("FREQ", "")
    if parts == {"BYDAY": "MO,TU,WE,TH,FR"} and freq == "WEEKLY" and n == "1":
        return "1b"  # business days
    unit = {v: k for k, v in _REC_UNITS.items()}.get(freq)
    return f"{n}{unit}" if unit and not parts else rule


def from_rec(value: str) -> str:
    """todo.txt's rec: value (1w, +2m, 1b, or an RRULE) as an RRULE."""
    m = re.fullmatch(r"\+?(\d{1,3})([dwmyb])", value.strip().lower())
    if not m:
        return value  # an RRULE, or something parse_repeat will explain
    n, unit = int(m[1]), m[2]
    if unit == "b":
        return "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR" if n == 1 else f"FREQ=DAILY;INTERVAL={n}"
    return f"FREQ={_REC_UNITS[unit]}" + (f";INTERVAL={n}" if n > 1 else "")


def _todo_title(title: str) -> str:
    """A title on one line, with each word todo.txt would read as metadata escaped by a backslash.

    todo.txt has no escapes of its own; our import strips the backslash, other programs show it.
    """
    words = title.split()
    return " ".join(
        "\\" + w if _TODO_META.match(w) or (i == 0 and _TODO_LEAD.fullmatch(w)) else w for i, w in enumerate(words)
    )


def to_ics(tasks: list[dict[str, Any]], now: dt.datetime | None = None, events: bool = False) -> str:
    """A calendar of to-dos, one per task (ical.py); with `events`, dated tasks as events as well.

    Written with the icalendar library, which escapes and folds every text value: a title holding
    a bare CR or "END:VTODO" stays one SUMMARY.
    """
    cal = icalendar.Calendar()
    cal.add("prodid", "-//planner//tasks//EN")
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    stamp = now or dt.datetime.now(dt.UTC)
    for t in tasks:
        cal.add_component(ical.to_vtodo(t, stamp))
        event = ical.to_vevent(t, stamp) if events else None
        if event is not None:
            cal.add_component(event)
    return cal.to_ical().decode("utf-8")


def export(store: Store, fmt: str, events: bool = False) -> str:
    """All tasks in one of FORMATS (`events`: ics only, dated tasks as events too)."""
    tasks = all_tasks(store)
    if fmt == "ics":
        return to_ics(tasks, events=events)
    return {"json": to_json, "todotxt": to_todotxt}[fmt](tasks)


# ---------------------------------------------------------------- import


def check_row(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Task columns and tags from an imported row, checked; raises TaskError or DateError."""
    if not isinstance(raw, dict):
        raise TaskError("each task must be an object")
    title = raw.get("title")
    if not isinstance(title, str):
        raise TaskError(f"title must be text, not {type(title).__name__}")
    fields: dict[str, Any] = {"title": check_title(title)}
    status = raw.get("status") or "open"
    if status not in ("open", "done"):
        raise TaskError(f"status must be open or done, not {status!r}")
    fields["status"] = status
    if raw.get("due_date"):
        try:
            fields["due_date"] = check_year(dt.date.fromisoformat(str(raw["due_date"]))).isoformat()
        except DateError:
            raise
        except ValueError as e:
            raise TaskError(f"due_date {str(raw['due_date'])[:40]!r} is not a date like 2026-12-04") from e
    if raw.get("due_time"):
        fields["due_time"] = check_time(str(raw["due_time"]))
    if raw.get("priority"):
        if raw["priority"] not in PRIORITIES:
            raise TaskError(f"priority must be high, medium or low, not {raw['priority']!r}")
        fields["priority"] = raw["priority"]
    if raw.get("notes"):
        fields["notes"] = check_notes(str(raw["notes"]))
    if raw.get("repeat"):
        fields["recurrence"] = parse_repeat(str(raw["repeat"]))
    for key in ("created_at", "completed_at"):
        if raw.get(key):
            try:
                when = dt.datetime.fromisoformat(str(raw[key]))
            except ValueError:
                raise TaskError(f"{key} {str(raw[key])[:40]!r} is not a date and time like 2026-12-01T09:30") from None
            if when.tzinfo is not None:  # stored as local time, like the planner's own
                when = when.astimezone().replace(tzinfo=None)
            fields[key] = when.isoformat(timespec="seconds")
    if raw.get("remind_at"):
        try:
            when = dt.datetime.fromisoformat(str(raw["remind_at"]))
        except ValueError:
            raise TaskError(
                f"remind_at {str(raw['remind_at'])[:40]!r} is not a date and time like 2026-12-04T14:00"
            ) from None
        check_year(when.date())
        fields["remind_at"] = when.replace(tzinfo=None).isoformat(timespec="minutes")
    uid = str(raw.get("uid") or "").strip()
    if not uid:
        # Written by another program: the same task gets the same uid, so it imports once.
        key = json.dumps([fields["title"], fields.get("due_date"), fields.get("due_time")], ensure_ascii=False)
        uid = "import-" + hashlib.sha256(key.encode()).hexdigest()[:20]
    if not re.fullmatch(r"[\w.@-]{1,100}", uid):
        raise TaskError(f"uid {uid[:40]!r} is not a plain word (letters, digits, . @ - _)")
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
        if w.startswith("\\"):  # escaped by _todo_title: part of the title as written
            title.append(w[1:])
        elif w[:1] in "+@" and len(w) > 1:
            row["tags"].append(w[1:])
        elif sep and value and key in TODO_KEYS:
            name = {"due": "due_date", "time": "due_time", "rec": "repeat", "uid": "uid", "pri": "priority"}[key]
            row[name] = {"A": "high", "B": "medium"}.get(value, "low") if key == "pri" else value
            if key == "rec":
                row[name] = from_rec(value)
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
    """json, ics or todotxt, from the file name or how it starts."""
    if name.endswith(".json") or text.lstrip()[:1] in "[{":
        return "json"
    if name.lower().endswith(".ics") or text.lstrip()[:15].upper() == "BEGIN:VCALENDAR":
        return "ics"
    return "todotxt"


def import_text(store: Store, text: str, fmt: str, events: bool = False) -> dict[str, Any]:
    """Add the tasks of a json, todotxt or ics file that are not there yet (`events`: ics events too);
    returns counts and problems."""
    try:
        if fmt == "ics":
            rows = ical.parse(text, events)
        else:
            rows = parse_json(text) if fmt == "json" else parse_todotxt(text)
    except ValueError as e:  # json.JSONDecodeError is a ValueError
        return {"added": 0, "skipped": 0, "problems": [f"not a task file: {e}"]}
    except RecursionError:
        return {"added": 0, "skipped": 0, "problems": ["not a task file: it is nested too deeply to read"]}
    turn = new_turn()  # the whole import is one /undo
    added, skipped, problems = 0, 0, []
    with store.write() as conn:
        for where, raw in rows:
            try:
                fields, tags = check_row(raw)
            except (TaskError, DateError, ValueError, TypeError) as e:
                problems.append(f"{where}: {e}")
                continue
            if conn.execute("SELECT 1 FROM tasks WHERE uid = ?", (fields["uid"],)).fetchone():
                skipped += 1
                continue
            insert(conn, turn, fields, tags, "import")
            added += 1
    return {"added": added, "skipped": skipped, "problems": problems}
