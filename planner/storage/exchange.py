"""Export and import of tasks: JSON (everything), todo.txt, iCalendar and Taskwarrior.

    python agent.py export [--format json|todotxt|ics|taskwarrior] [--events] [-o FILE]
    python agent.py import FILE [--format json|todotxt|ics|taskwarrior] [--events]
        an .ics file's to-dos become tasks and its events the calendar's busy time (storage/calendar.py);
        --events makes them dated tasks instead

Every task has a uid, written in every format. Import skips a task whose uid
is already in the database, so importing a file twice adds nothing; a row
from another program without a uid gets one from a hash of its content and
its place among identical rows, so two same-title lines stay two tasks and
the same file still imports once. Rows are checked as the tools check them
(check_row); a bad row is reported by its line (or index) and not written,
and the others are. One import is one transaction and one undoable turn.

Formats: todotxt.py, ical.py (with ical_write.py) and taskwarrior.py read and write their own;
this module holds the driver, the planner's JSON, and the one row check.
Parsing is linear in the file's size, and a file over MAX_BYTES is refused.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

import icalendar

from planner.dates import DateError, check_time, check_year
from planner.repeats import parse_repeat
from planner.storage import ical, ical_write, taskwarrior, todotxt, worklog
from planner.storage.db import Store
from planner.storage.fields import (
    PRIORITIES,
    TaskError,
    annotations_of,
    check_annotations,
    check_list,
    check_notes,
    check_status,
    check_title,
    clean_tags,
)
from planner.storage.tasks import insert, new_turn, tags_of

FORMATS = ("json", "todotxt", "ics", "taskwarrior")
FIELDS = ("uid", "title", "status", "due_date", "due_time", "start_date", "priority", "tags", "list")
FIELDS += ("estimate_minutes", "parent", "notes", "annotations", "repeat", "created_at", "completed_at", "remind_at")
MAX_BYTES = 20_000_000  # of one file to import: a year of a busy planner is well under 1 MB


def all_tasks(store: Store, with_copies: bool = True) -> list[dict[str, Any]]:
    """Every task, oldest first, as the formats write it: `repeat` for the rule, `parent` as the parent's uid,
    annotations as a list; `ical` and `extra` (other apps' data) kept aside for the writers that use them."""
    conn = store.conn()
    out = []
    for row in conn.execute("SELECT * FROM tasks ORDER BY id"):
        task = {k: v.decode("utf-8", "replace") if isinstance(v, bytes) else v for k, v in dict(row).items()}
        task["tags"] = tags_of(conn, task["id"])
        task["repeat"] = task.pop("recurrence", None)
        task["parent"] = task.pop("parent_uid", None)
        task["annotations"] = annotations_of(task)
        shown = {k: task.get(k) for k in FIELDS}
        if with_copies:
            shown["ical"], shown["extra"] = task.get("ical"), _extra(task)
        out.append(shown)
    return out


def _extra(task: dict[str, Any]) -> dict[str, Any]:
    try:
        value = json.loads(task.get("extra") or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# ---------------------------------------------------------------- export


def to_json(
    tasks: list[dict[str, Any]],
    memories: list[dict[str, Any]] | None = None,
    scenes: list[dict[str, Any]] | None = None,
) -> str:
    """All fields of every task (and, when given, the memories and their scenes); "contains" says which."""
    rows = []
    for t in tasks:
        row = {k: t.get(k) for k in FIELDS}
        if t.get("worklog"):
            row["worklog"] = t["worklog"]  # tracked time: [{"start", "end" (None while it runs), "minutes"}]
        if t.get("extra"):
            row["extra"] = t["extra"]  # other tools' fields, so a JSON backup keeps them too
        rows.append(row)
    doc: dict[str, Any] = {"format": "planner-tasks", "version": 1, "contains": ["tasks"], "tasks": rows}
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


def to_ics(tasks: list[dict[str, Any]], now: dt.datetime | None = None, events: bool = False) -> str:
    """A calendar of to-dos, one per task (ical.py); with `events`, dated tasks as events as well.

    Each to-do is written over the copy another app wrote, when there is one, so its other
    properties come back as they were.
    """
    cal = icalendar.Calendar()
    cal.add("prodid", "-//planner//tasks//EN")
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    stamp = now or dt.datetime.now(dt.UTC)
    zones: dict[str, Any] = {}
    for t in tasks:
        if t.get("ical") and "TZID" in t["ical"]:
            zones.update(ical.zones_in(t["ical"]))  # the time zones other apps' to-dos name, once each
    for zone in zones.values():
        cal.add_component(zone)
    for t in tasks:
        cal.add_component(ical_write.with_worklog(ical_write.to_vtodo(t, stamp), t.get("worklog")))
        event = ical_write.to_vevent(t, stamp) if events else None
        if event is not None:
            cal.add_component(event)
    return cal.to_ical().decode("utf-8")


def export(store: Store, fmt: str, events: bool = False) -> str:
    """All tasks in one of FORMATS (`events`: ics only, dated tasks as events too), with their tracked time."""
    tasks = all_tasks(store)
    tracked = worklog.by_uid(store.conn())
    for t in tasks:
        if t.get("uid") in tracked:
            t["worklog"] = tracked[t["uid"]]
    if fmt == "ics":
        return to_ics(tasks, events=events)
    writer: dict[str, Callable[[list[dict[str, Any]]], str]] = {
        "json": to_json,
        "todotxt": todotxt.write,
        "taskwarrior": taskwarrior.write,
    }
    return writer[fmt](tasks)


# ---------------------------------------------------------------- import


def _date(raw: dict[str, Any], key: str) -> str | None:
    if not raw.get(key):
        return None
    try:
        return check_year(dt.date.fromisoformat(str(raw[key])[:10])).isoformat()
    except DateError:
        raise
    except ValueError as e:
        raise TaskError(f"{key} {str(raw[key])[:40]!r} is not a date like 2026-12-04") from e


def _moment(raw: dict[str, Any], key: str, spec: str = "seconds") -> str | None:
    if not raw.get(key):
        return None
    try:
        when = dt.datetime.fromisoformat(str(raw[key]))
    except ValueError:
        raise TaskError(f"{key} {str(raw[key])[:40]!r} is not a date and time like 2026-12-01T09:30") from None
    if when.tzinfo is not None:  # stored as local time, like the planner's own
        when = when.astimezone().replace(tzinfo=None)
    check_year(when.date())
    return when.isoformat(timespec=spec)


def check_row(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Task columns and tags from an imported row, checked; raises TaskError or DateError."""
    if not isinstance(raw, dict):
        raise TaskError("each task must be an object")
    title = raw.get("title")
    if not isinstance(title, str):
        raise TaskError(f"title must be text, not {type(title).__name__}")
    fields: dict[str, Any] = {"title": check_title(title), "status": check_status(raw.get("status") or "open")}
    fields["due_date"], fields["start_date"] = _date(raw, "due_date"), _date(raw, "start_date")
    if raw.get("due_time"):
        fields["due_time"] = check_time(str(raw["due_time"]))
    if raw.get("priority"):
        if raw["priority"] not in PRIORITIES:
            raise TaskError(f"priority must be high, medium or low, not {raw['priority']!r}")
        fields["priority"] = raw["priority"]
    if raw.get("notes"):
        fields["notes"] = check_notes(str(raw["notes"]))
    fields["annotations"] = check_annotations(raw.get("annotations"))
    fields["list"] = check_list(raw["list"]) if isinstance(raw.get("list"), str) else None
    if raw.get("estimate_minutes") is not None:
        n = raw["estimate_minutes"]
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 43200:
            raise TaskError(f"estimate_minutes must be a whole number of minutes from 1 to 43200, not {n!r}")
        fields["estimate_minutes"] = n
    if raw.get("repeat"):
        fields["recurrence"] = parse_repeat(str(raw["repeat"]))
    for key in ("created_at", "completed_at"):
        fields[key] = _moment(raw, key)
    fields["remind_at"] = _moment(raw, "remind_at", "minutes")
    uid = str(raw.get("uid") or "").strip()
    if not re.fullmatch(r"[\w.@-]{1,100}", uid):
        raise TaskError(f"uid {uid[:40]!r} is not a plain word (letters, digits, . @ - _)")
    fields["uid"] = uid
    if raw.get("parent"):
        parent = str(raw["parent"])
        if not re.fullmatch(r"[\w.@-]{1,100}", parent):
            raise TaskError(f"parent {parent[:40]!r} is not a uid")
        fields["parent_uid"] = parent
    if isinstance(raw.get("ical"), str):
        fields["ical"] = raw["ical"]
    if isinstance(raw.get("extra"), dict) and raw["extra"]:
        fields["extra"] = json.dumps(raw["extra"], ensure_ascii=False)
    return {k: v for k, v in fields.items() if v is not None}, clean_tags(raw.get("tags") or [])


def give_uids(rows: list[tuple[str, Any]]) -> None:
    """A uid for each row written by another program without one: a hash of its title and due date and
    time (as earlier planners made it), and for the 2nd, 3rd ... identical row that count after it."""
    seen: dict[str, int] = {}
    for _, raw in rows:
        if not isinstance(raw, dict) or str(raw.get("uid") or "").strip() or not isinstance(raw.get("title"), str):
            continue
        key = json.dumps([raw["title"].strip(), raw.get("due_date"), raw.get("due_time")], ensure_ascii=False)
        digest = hashlib.sha256(key.encode()).hexdigest()[:20]
        seen[digest] = seen.get(digest, 0) + 1
        raw["uid"] = f"import-{digest}" + (f"-{seen[digest]}" if seen[digest] > 1 else "")


def parse_json(text: str) -> list[tuple[str, Any]]:
    """(where, row) pairs from an export file (or a plain list of task objects)."""
    data = json.loads(text)
    rows = data.get("tasks") if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise ValueError('expected {"tasks": [...]} or a list of tasks')
    return [(f"task {i + 1}", row) for i, row in enumerate(rows)]


def guess_format(name: str, text: str) -> str:
    """json, ics, taskwarrior or todotxt, from the file name or how it starts."""
    head = text.lstrip()[:200]
    if name.lower().endswith(".ics") or head[:15].upper() == "BEGIN:VCALENDAR":
        return "ics"
    if name.lower().endswith(".json") or head[:1] == "{" or re.match(r"\[\s*(\{|\])", head):
        return "taskwarrior" if taskwarrior.looks_like(head) else "json"
    return "todotxt"


def import_text(
    store: Store, text: str, fmt: str, events: bool = False, progress: Callable[[int, int], None] | None = None
) -> dict[str, Any]:
    """Add the tasks of a file that are not there yet; returns counts and problems (`progress(done, total)`)."""
    text = text.removeprefix("\ufeff")  # a byte-order mark from an editor on Windows
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        return {
            "added": 0,
            "skipped": 0,
            "problems": [f"the file is over the {MAX_BYTES / 1e6:g} MB an import reads; split it"],
        }
    try:
        if fmt == "ics":
            rows = ical.parse(text, events)
        elif fmt == "taskwarrior":
            rows = taskwarrior.parse(text)
        else:
            rows = parse_json(text) if fmt == "json" else todotxt.parse(text)
    except ValueError as e:  # json.JSONDecodeError is a ValueError
        return {"added": 0, "skipped": 0, "problems": [f"not a task file: {e}"]}
    except RecursionError:
        return {"added": 0, "skipped": 0, "problems": ["not a task file: it is nested too deeply to read"]}
    give_uids(rows)
    turn = new_turn()  # the whole import is one /undo
    added, skipped, problems = 0, 0, []
    new = updated = 0
    with store.write() as conn:
        for n, (where, raw) in enumerate(rows, 1):
            if progress and n % 200 == 0:
                progress(n, len(rows))
            if isinstance(raw, Exception):
                problems.append(f"{where}: {raw}")
                continue
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
        if fmt == "ics" and not events:  # the file's events: busy time in the calendar, never tasks
            from planner.storage import calendar

            try:
                found = calendar.objects(text)
            except ValueError as e:
                problems.append(f"the events could not be read: {e}")
                found = []
            new, updated = calendar.put(conn, "file", found)
    if progress:
        progress(len(rows), len(rows))
    out: dict[str, Any] = {"added": added, "skipped": skipped, "problems": problems}
    if fmt == "ics" and not events and (new or updated):
        out["events"] = {"added": new, "updated": updated}
    return out
