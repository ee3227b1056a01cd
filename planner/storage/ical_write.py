"""Tasks written as iCalendar: a VTODO over the copy another app wrote, and a VEVENT for calendars.

The mapping of fields to properties is ical.py's (its docstring has the table); this half writes it.
A to-do read from another app is written back starting from that copy, and only the properties of
the fields that changed are replaced (WRITERS, compared field by field with what the copy reads
as), so everything else comes back as it came. A change bumps SEQUENCE and sets DTSTAMP and
LAST-MODIFIED (RFC 5545 3.8.7). What it leaves out: VTIMEZONE (a floating local time needs none;
a zone another app wrote stays on its copy) and events of the planner's own beyond a dated task.
"""

from __future__ import annotations

import datetime as dt
import urllib.parse
from collections.abc import Callable
from typing import Any

import icalendar

from planner.storage.ical import (
    EVENT_SUFFIX,
    EXACT_TITLE,
    PRIORITY_OUT,
    STATUS_OUT,
    ReadError,
    Text,
    parent_of,
    reminder_of,
    safe_text,
    to_row,
    uid_of,
    value_of,
    values_of,
)


def _when(day: str | None, time: str | None) -> dt.date | dt.datetime | None:
    if not day:
        return None
    d = dt.date.fromisoformat(day)
    if time:
        hour, minute = map(int, time.split(":"))
        return dt.datetime.combine(d, dt.time(hour, minute))  # floating local time, as the planner keeps it
    return d


def _utc_of(local: str) -> dt.datetime:
    """A stored local time as UTC (the planner stores local wall-clock times)."""
    return dt.datetime.fromisoformat(local).astimezone(dt.UTC)


def _dated(task: dict[str, Any]) -> bool:
    """Whether the task has a creation time CREATED can hold (a UTC date-time in the years dates allow)."""
    try:
        return bool(task.get("created_at")) and 1900 < _utc_of(task["created_at"]).year < 9999
    except (ValueError, OverflowError, TypeError):
        return False


def _put(item: icalendar.cal.Component, names: tuple[str, ...], values: list[tuple[str, Any, dict | None]]) -> None:
    for name in names:
        item.pop(name, None)
    for name, value, params in values:
        item.add(name, value, parameters=params)


def _rule(item: icalendar.cal.Component, rule: str | None) -> None:
    """RRULE, or (a rule another tool stored that iCalendar cannot hold) X-PLANNER-RRULE, kept as text."""
    item.pop("x-planner-rrule", None)
    try:
        _put(item, ("rrule",), [("rrule", icalendar.vRecur.from_ical(rule), None)] if rule else [])
    except (ValueError, TypeError):
        _put(item, ("rrule",), [])
        item.add("x-planner-rrule", Text(safe_text(str(rule))))


def _write_status(item: icalendar.cal.Component, task: dict[str, Any]) -> None:
    had_percent = item.get("percent-complete") is not None
    values: list[tuple[str, Any, dict | None]] = [("status", STATUS_OUT.get(task["status"], "NEEDS-ACTION"), None)]
    if task["status"] == "done":
        when = _utc_of(task["completed_at"]) if task.get("completed_at") else dt.datetime.now(dt.UTC)
        values.append(("completed", when, None))
        if had_percent:
            values.append(("percent-complete", 100, None))
    _put(item, ("status", "completed", "percent-complete"), values)


def _write_parent(item: icalendar.cal.Component, task: dict[str, Any]) -> None:
    keep = [r for r in values_of(item, "related-to") if r is not parent_of(item)]
    item.pop("related-to", None)
    for rel in keep:
        item.add("related-to", rel)
    if task.get("parent"):
        item.add("related-to", uid_of(task["parent"]), parameters={"RELTYPE": "PARENT"})


def _write_title(item: icalendar.cal.Component, task: dict[str, Any]) -> None:
    """SUMMARY as TEXT can hold it, and the title exactly beside it when it cannot (ical.py)."""
    title = task["title"]
    shown = safe_text(title)
    values: list[tuple[str, Any, dict | None]] = [("summary", Text(shown), None)]
    if shown != title:
        values.append((EXACT_TITLE, urllib.parse.quote(title, safe=""), None))
    _put(item, ("summary", EXACT_TITLE), values)


def _write_alarm(item: icalendar.cal.Component, task: dict[str, Any], due: Any) -> None:
    _, mine = reminder_of(item, due)
    if mine is not None:
        item.subcomponents.remove(mine)
    if task.get("remind_at"):
        alarm = icalendar.Alarm()
        alarm.add("action", "DISPLAY")
        alarm.add("description", Text(safe_text(task["title"])))
        alarm.add("trigger", _utc_of(task["remind_at"]), parameters={"VALUE": "DATE-TIME"})  # RFC 5545 3.8.6.3
        item.add_component(alarm)


# field -> (the row keys it is, how it is written): compared with the copy read, a field that is the
# same keeps its properties exactly as they were.
Writer = Callable[[icalendar.cal.Component, dict[str, Any], Any], None]
WRITERS: dict[str, tuple[tuple[str, ...], Writer]] = {
    "title": (("title",), lambda i, t, d: _write_title(i, t)),
    "due": (
        ("due_date", "due_time"),
        lambda i, t, d: _put(
            i, ("due",), [("due", w, None)] if (w := _when(t.get("due_date"), t.get("due_time"))) else []
        ),
    ),
    "start": (
        ("start_date",),
        lambda i, t, d: _put(
            i, ("dtstart",), [("dtstart", _when(t["start_date"], None), None)] if t.get("start_date") else []
        ),
    ),
    "priority": (
        ("priority",),
        lambda i, t, d: _put(
            i, ("priority",), [("priority", PRIORITY_OUT[t["priority"]], None)] if t.get("priority") else []
        ),
    ),
    "tags": (
        ("tags",),
        lambda i, t, d: _put(
            i, ("categories",), [("categories", [safe_text(x) for x in t["tags"]], None)] if t.get("tags") else []
        ),
    ),
    "notes": (
        ("notes",),
        lambda i, t, d: _put(
            i, ("description",), [("description", Text(safe_text(t["notes"])), None)] if t.get("notes") else []
        ),
    ),
    "annotations": (
        ("annotations",),
        lambda i, t, d: _put(
            i,
            ("comment",),
            [("comment", Text(safe_text(f"{a['at']} {a['text']}".strip())), None) for a in t.get("annotations") or []],
        ),
    ),
    "repeat": (("repeat",), lambda i, t, d: _rule(i, t.get("repeat"))),
    "status": (("status",), lambda i, t, d: _write_status(i, t)),
    "list": (
        ("list",),
        lambda i, t, d: _put(
            i, ("x-planner-list",), [("x-planner-list", Text(safe_text(t["list"])), None)] if t.get("list") else []
        ),
    ),
    "estimate": (
        ("estimate_minutes",),
        lambda i, t, d: _put(
            i,
            ("estimated-duration",),
            [("estimated-duration", icalendar.vDuration(dt.timedelta(minutes=t["estimate_minutes"])), None)]
            if t.get("estimate_minutes")
            else [],
        ),
    ),
    "parent": (("parent",), lambda i, t, d: _write_parent(i, t)),
    "created": (
        ("created_at",),
        lambda i, t, d: _put(i, ("created",), [("created", _utc_of(t["created_at"]), None)] if _dated(t) else []),
    ),
    "reminder": (("remind_at",), lambda i, t, d: _write_alarm(i, t, d)),
}


def _same(keys: tuple[str, ...], task: dict[str, Any], was: dict[str, Any]) -> bool:
    def norm(k: str, v: Any) -> Any:
        if k == "tags":
            return sorted(v or [])
        if k == "annotations":
            return [(a.get("at") or "", a.get("text")) for a in v or []]
        return v or None

    return all(norm(k, task.get(k)) == norm(k, was.get(k)) for k in keys)


def base_of(text: str | None) -> icalendar.Todo | None:
    """The to-do in a stored copy (a VTODO or a VCALENDAR holding one), or None."""
    if not text:
        return None
    try:
        found = icalendar.Calendar.from_ical(text) if text.lstrip().upper().startswith("BEGIN:VCALENDAR") else None
        todo = next((c for c in found.subcomponents if c.name == "VTODO"), None) if found else None
        return todo or icalendar.Todo.from_ical(text)
    except (ValueError, StopIteration):
        return None


def to_vtodo(
    task: dict[str, Any],
    stamp: dt.datetime,
    repeat_when_done: bool = True,
    base: icalendar.Todo | None = None,
    changed_at: dt.datetime | None = None,
) -> icalendar.Todo:
    """One task as a VTODO, written over `base` (else the task's stored copy): only what changed is replaced.

    A sync sends a completed instance without its repeat rule (`repeat_when_done=False`): the series
    goes on in the next task, and no app should roll it again.
    """
    if task["status"] == "done" and not repeat_when_done:
        task = {**task, "repeat": None}
    item = base if base is not None else base_of(task.get("ical"))
    try:
        was = to_row(item) if item is not None else None
    except ReadError:
        was = None  # a copy we cannot read: every field of ours is written over it
    if item is None:
        item = icalendar.Todo()
        item.add("uid", uid_of(task["uid"]))
    due = value_of(item, "due") if was is not None else None
    changed = [name for name, (keys, _) in WRITERS.items() if was is None or not _same(keys, task, was)]
    for name in changed:
        WRITERS[name][1](item, task, due if name == "reminder" else None)
    if changed and was is not None:  # a revision of a to-do another app has: RFC 5545 3.8.7.4
        try:
            sequence = int(str(value_of(item, "sequence") or 0)) + 1
        except (ValueError, ReadError):
            sequence = 1
        _put(item, ("sequence",), [("sequence", sequence, None)])
    if changed or item.get("dtstamp") is None:
        _put(item, ("dtstamp",), [("dtstamp", stamp, None)])
        if changed_at is not None or was is not None:
            _put(item, ("last-modified",), [("last-modified", changed_at or stamp, None)])
    return item


def with_worklog(item: icalendar.Todo, stretches: list[dict[str, Any]] | None) -> icalendar.Todo:
    """The to-do with its tracked time, one X-PLANNER-WORKED per stretch ("start/end", local, end empty while
    it runs; ";MINUTES=" when the user said how long). Calendars ignore it; it is there for a backup."""
    item.pop("X-PLANNER-WORKED", None)
    for s in stretches or ():
        value = icalendar.vText(
            f"{s['start'].replace('-', '').replace(':', '')}/{(s['end'] or '').replace('-', '').replace(':', '')}"
        )
        item.add("x-planner-worked", value, parameters={"MINUTES": str(s["minutes"])} if s["end"] else None)
    return item


def to_vevent(task: dict[str, Any], stamp: dt.datetime) -> icalendar.Event | None:
    """A dated task as an event on its day (or at its time), for calendars that show no to-dos; None if undated."""
    start = _when(task.get("due_date"), task.get("due_time"))
    if start is None:
        return None
    item = icalendar.Event()
    item.add("uid", f"{task['uid']}{EVENT_SUFFIX}")
    item.add("dtstamp", stamp)
    for name in ("title", "priority", "tags", "notes", "repeat"):
        WRITERS[name][1](item, task, None)
    item.add("dtstart", start)
    if not isinstance(start, dt.datetime) and start < dt.date.max:  # a date stored before dates were bounded
        item.add("dtend", start + dt.timedelta(days=1))
    return item
