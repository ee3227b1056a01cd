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
this module holds the import's driver, the planner's JSON rows (jsonrows.py reads them one by one)
and the one row check; export is exporting.py (its names are importable from here too).
Parsing is linear in the file's size, and a file over MAX_BYTES is refused.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

from planner.dates import DateError, check_time, check_year
from planner.policy import Door, Refusal
from planner.repeats import parse_repeat
from planner.storage import ical, jsonrows, taskwarrior, todotxt
from planner.storage.db import Store
from planner.storage.exporting import (  # noqa: F401  (the export half, importable from here as before)
    FIELDS,
    FORMATS,
    HOLDS,
    Exported,
    all_tasks,
    export,
    export_memories,
    export_report,
    to_ics,
    to_json,
    writable,
)
from planner.storage.fields import (
    PRIORITIES,
    TaskError,
    check_annotations,
    check_list,
    check_notes,
    check_status,
    check_title,
    clean_tags,
)
from planner.storage.gate import Change, ChangeSet, Op, Refused, commit, event_changes
from planner.storage.tasks import new_turn

MAX_BYTES = 20_000_000  # of one file to import: a year of a busy planner is well under 1 MB


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
    check_year(when.date())
    if when.tzinfo is not None:  # stored as local time, like the planner's own
        when = when.astimezone().replace(tzinfo=None)
    return when.isoformat(timespec=spec)


def check_row(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Task columns and tags from an imported row, checked; raises TaskError or DateError."""
    if not isinstance(raw, dict):
        raise TaskError("each task must be an object")
    _text_only(raw)
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
    extra = {k: v for k, v in raw.items() if k not in READ}  # another tool's fields: kept, not dropped
    if isinstance(raw.get("extra"), dict):
        extra |= raw["extra"]
    if extra:
        fields["extra"] = json.dumps(extra, ensure_ascii=False)
    return {k: v for k, v in fields.items() if v is not None}, clean_tags(raw.get("tags") or [])


# The keys of a row this module reads (and `worklog`, which the JSON export writes beside them); any other
# key is another tool's field, kept in `extra` so an export gives it back.
READ = frozenset(
    {"title", "status", "due_date", "start_date", "due_time", "priority", "notes", "annotations", "list"}
    | {"estimate_minutes", "repeat", "created_at", "completed_at", "remind_at", "uid", "parent", "ical"}
    | {"extra", "tags", "worklog"}
)


def _text_only(value: Any, depth: int = 0) -> None:
    """Refuse a row holding a lone surrogate (JSON can write one as \\ud800; no database or file can store it)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise TaskError("it holds a character that is not text (a lone UTF-16 surrogate)") from None
    elif isinstance(value, dict) and depth < 20:
        for k, v in value.items():
            _text_only(k, depth + 1)
            _text_only(v, depth + 1)
    elif isinstance(value, list) and depth < 20:
        for v in value:
            _text_only(v, depth + 1)


# What a row another program wrote can raise while it is checked: named with its row, and the row skipped.
ROW_ERRORS = (TaskError, DateError, ValueError, TypeError, OverflowError, KeyError, AttributeError, RecursionError)


def give_uids(rows: list[tuple[str, Any]]) -> None:
    """A uid for each row written by another program without one: a hash of its title and due date and
    time (as earlier planners made it), and for the 2nd, 3rd ... identical row that count after it."""
    seen: dict[str, int] = {}
    for _, raw in rows:
        if not isinstance(raw, dict) or str(raw.get("uid") or "").strip() or not isinstance(raw.get("title"), str):
            continue
        key = json.dumps([raw["title"].strip(), raw.get("due_date"), raw.get("due_time")], ensure_ascii=False)
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:20]  # check_row names a surrogate
        seen[digest] = seen.get(digest, 0) + 1
        raw["uid"] = f"import-{digest}" + (f"-{seen[digest]}" if seen[digest] > 1 else "")


def parse_json(text: str) -> list[tuple[str, Any]]:
    """(where, row or ValueError) pairs from an export file (or a plain list of task objects), row by row."""
    return [(f"task {i + 1}", row) for i, row in enumerate(jsonrows.elements(text, "tasks"))]


def guess_format(name: str, text: str) -> str:
    """json, ics, taskwarrior or todotxt, from the file name or how it starts."""
    head = text.lstrip()[:200]
    if name.lower().endswith(".ics") or head[:15].upper() == "BEGIN:VCALENDAR":
        return "ics"
    if name.lower().endswith(".json") or head[:1] == "{" or re.match(r"\[\s*(\{|\])", head):
        return "taskwarrior" if taskwarrior.looks_like(head) else "json"
    return "todotxt"


def import_text(
    store: Store,
    text: str,
    fmt: str,
    events: bool = False,
    progress: Callable[[int, int], None] | None = None,
    source: str | None = None,
    door: Door | None = None,
) -> dict[str, Any]:
    """Add the tasks of a file that are not there yet; returns counts and problems (`progress(done, total)`).

    An .ics file's events are stored as the events of `source` ("file:PATH"): those it held before and holds
    no more are removed, asked first through `door` when they are more than the policy lets go without a
    question (the user's own file: --yes, or their y/N); refused, they are kept and the rest imported.
    Without a source (standard input) events are added and updated, never removed. Everything goes through
    the gate (gate.py) as one change set and one /undo."""
    text = text.removeprefix("\ufeff")  # a byte-order mark from an editor on Windows
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        return {
            "added": 0,
            "skipped": 0,
            "problems": [f"the file is over the {MAX_BYTES / 1e6:g} MB an import reads; split it"],
        }
    try:
        if fmt == "ics":
            calendars = ical.read(text)  # parsed once: the to-dos, the events and the zones come from it
            rows = ical.parse(calendars, events)
        elif fmt == "taskwarrior":
            rows = taskwarrior.parse(text)
        else:
            rows = parse_json(text) if fmt == "json" else todotxt.parse(text)
    except ValueError as e:  # json.JSONDecodeError is a ValueError
        return {"added": 0, "skipped": 0, "problems": [f"not a task file: {e}"]}
    except RecursionError:
        return {"added": 0, "skipped": 0, "problems": ["not a task file: it is nested too deeply to read"]}
    give_uids(rows)
    found, unread = None, []
    if fmt == "ics" and not events:  # the file's events: busy time in the calendar, never tasks
        from planner.storage import calendar

        try:
            found = calendar.objects(calendars)
        except ValueError as e:  # an unreadable file states nothing about which events it no longer has
            unread = [f"the events could not be read: {e}"]
    turn = new_turn()  # the whole import is one /undo
    door = dataclasses.replace(door or Door("import", yes=True), turn=turn, window=None)
    counts: dict[str, Any] = {}

    def plan(conn: Any, removing: bool = True) -> ChangeSet:
        """The file's new tasks and its events; without `removing` (the user's yes was not given) the
        events it no longer has stay, and those it changed stay as they were: only what is new goes in."""
        changes, seen, problems, skipped = [], set(), [], 0
        for n, (where, raw) in enumerate(rows, 1):
            if progress and n % 200 == 0:
                progress(n, len(rows))
            if isinstance(raw, Exception):
                problems.append(f"{where}: {raw}")
                continue
            try:
                fields, tags = check_row(raw)
            except ROW_ERRORS as e:
                problems.append(f"{where}: {e}")
                continue
            if fields["uid"] in seen or conn.execute("SELECT 1 FROM tasks WHERE uid = ?", (fields["uid"],)).fetchone():
                skipped += 1
                continue
            seen.add(fields["uid"])
            changes.append(Change(Op.ADD, values=fields, tags=tuple(tags), tool="import"))
        stored = None
        if found is not None:
            replace = source is not None and removing
            more, stored = event_changes(conn, source or "file", found, replace=replace, adopt="file")
            if not removing:  # changed events need the same yes as the removals (a large change): kept
                stored.unchanged = stored.updated
                stored.updated, more = 0, [c for c in more if c.op is Op.ADD]
            changes += more
        counts.update(added=len(seen), skipped=skipped, problems=problems + unread, stored=stored)
        return ChangeSet(tuple(changes), by_user=True)

    kept_why = ""
    try:
        commit(store, plan, door)
    except Refused as e:  # the events the file no longer has were not allowed to go: keep them, import the rest
        kept_why = str(e) if e.kind is not Refusal.DECLINED else "you said no"
        gone = counts["stored"].removed if counts.get("stored") else []
        commit(store, lambda conn: plan(conn, removing=False), door)
        counts["stored"].kept += gone
    if progress:
        progress(len(rows), len(rows))
    out: dict[str, Any] = {"added": counts["added"], "skipped": counts["skipped"], "problems": counts["problems"]}
    stored = counts.get("stored")
    if stored is not None and (stored.added or stored.updated or stored.removed or stored.kept or stored.unchanged):
        removed = 0 if kept_why else len(stored.removed)
        out["events"] = {"added": stored.added, "updated": stored.updated, "removed": removed, "kept": len(stored.kept)}
        if stored.unchanged:
            out["events"]["not_updated"] = stored.unchanged
        if kept_why:
            out["events"]["kept_because"] = kept_why
    if stored is not None and stored.dense:
        out["notes"] = [
            f'event "{title}" repeats by the second or minute: busy as one span while it runs' for title in stored.dense
        ]
    return out
