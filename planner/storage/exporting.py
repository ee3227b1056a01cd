"""Export of tasks: every task as the formats write it (all_tasks), the planner's JSON, iCalendar, and what a
format cannot hold, said per field with a count (Exported), a value another tool stored oddly left out and
named (writable), never a crash.

    export_report(store, fmt)  -> Exported(text, left_out, odd)     export(store, fmt) -> the text

The formats' own writers are todotxt.py, ical_write.py and taskwarrior.py; import is exchange.py.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import icalendar

from planner.dates import DateError, check_year
from planner.storage import ical, ical_write, memories, taskwarrior, todotxt, worklog
from planner.storage.db import Store
from planner.storage.fields import PRIORITIES, STATUSES, annotations_of
from planner.storage.tasks import tags_of

FORMATS = ("json", "todotxt", "ics", "taskwarrior")
FIELDS = ("uid", "title", "status", "due_date", "due_time", "start_date", "priority", "tags", "list")
FIELDS += ("estimate_minutes", "parent", "notes", "annotations", "repeat", "created_at", "completed_at", "remind_at")


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
    rows, scenes = memories.exported(store.conn())
    return to_json(all_tasks(store), rows, scenes)


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


# The fields each format has a place for (the rest is named when an export leaves it out).
HOLDS = {
    "json": frozenset(FIELDS),
    "ics": frozenset(FIELDS),
    "taskwarrior": frozenset(FIELDS),  # its own attributes, and UDAs for the rest (taskwarrior.py)
    "todotxt": frozenset(FIELDS) - {"notes", "annotations"},  # one line per task: no place for notes
}
NAMES = {"notes": "notes", "annotations": "later notes"}


@dataclass
class Exported:
    """An export: its text, and what it could not hold."""

    text: str
    left_out: dict[str, int] = field(default_factory=dict)  # field -> tasks whose value the format has no place for
    odd: list[str] = field(default_factory=list)  # values not written because they are not valid, one line each

    def lines(self, fmt: str) -> list[str]:
        """What was left out, a line per field and per odd value, for stderr."""
        out = [
            f"{fmt} has no place for {NAMES.get(k, k)}: left out of {n} task{'' if n == 1 else 's'}"
            for k, n in self.left_out.items()
        ]
        return out + self.odd


def writable(task: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A stored task with every value a writer would choke on taken out (a row another tool or an older
    planner wrote oddly), and a line for each."""
    out = dict(task)
    odd = []

    def drop(key: str, why: str) -> None:
        odd.append(f'task "{str(task.get("title"))[:40]}": its {key} {str(task.get(key))[:40]!r} {why}; left out')
        out[key] = None

    for key in ("due_date", "start_date"):
        if out.get(key) is not None:
            try:
                check_year(dt.date.fromisoformat(str(out[key])))
            except (ValueError, DateError):
                drop(key, "is not a date")
    if out.get("due_time") is not None and not re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", str(out["due_time"])):
        drop("due_time", "is not a time of day")
    for key in ("created_at", "completed_at", "remind_at"):
        if out.get(key) is not None:
            try:
                when = dt.datetime.fromisoformat(str(out[key]))
                check_year(when.date())
                if when.tzinfo is not None:
                    when.astimezone()
            except (ValueError, DateError, OverflowError):
                drop(key, "is not a date and time")
    if out.get("priority") is not None and out["priority"] not in PRIORITIES:
        drop("priority", "is not high, medium or low")
    n = out.get("estimate_minutes")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 43200):
        drop("estimate_minutes", "is not a number of minutes")
    if out.get("status") not in STATUSES:
        odd.append(
            f'task "{str(task.get("title"))[:40]}": its status {str(task.get("status"))[:20]!r} is unknown; written as open'
        )
        out["status"] = "open"
    for key in ("list", "parent", "repeat", "uid"):
        if out.get(key) is not None and not isinstance(out[key], str):
            drop(key, "is not text")
    if not isinstance(out.get("extra"), dict):
        out["extra"] = {}
    return out, odd


def export_report(store: Store, fmt: str, events: bool = False) -> Exported:
    """All tasks in one of FORMATS (`events`: ics only, dated tasks as events too), with their tracked time,
    and what it left out."""
    tasks, odd = [], []
    tracked = worklog.by_uid(store.conn())
    for t in all_tasks(store):
        if t.get("uid") in tracked:
            t["worklog"] = tracked[t["uid"]]
        clean, lines = writable(t) if fmt != "json" else (t, [])  # JSON keeps every value as stored
        tasks.append(clean)
        odd += lines
    left: dict[str, int] = {}
    for t in tasks:
        for key in sorted(set(FIELDS) - HOLDS[fmt]):
            if t.get(key):
                left[key] = left.get(key, 0) + 1
    if fmt == "ics":
        return Exported(to_ics(tasks, events=events), left, odd)
    writer: dict[str, Callable[[list[dict[str, Any]]], str]] = {
        "json": to_json,
        "todotxt": todotxt.write,
        "taskwarrior": taskwarrior.write,
    }
    return Exported(writer[fmt](tasks), left, odd)


def export(store: Store, fmt: str, events: bool = False) -> str:
    """All tasks in one of FORMATS (`events`: ics only, dated tasks as events too)."""
    return export_report(store, fmt, events).text
