"""How a task travels to a CalDAV server and back: the fields a sync carries, a to-do read from the
server, a task written as a calendar object resource over the server's copy.

The merge itself (what happens when both sides changed) is caldav_sync.py; the wire is dav.py.
Left out: VEVENTs (the plan's blocks and the calendars read as busy time are plan_publish.py).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from typing import Any

import icalendar

from planner.storage import ical, ical_write
from planner.sync.dav import Resource

SYNCED = ("title", "status", "due_date", "due_time", "start_date", "priority", "tags", "notes", "annotations")
SYNCED += ("repeat", "remind_at", "estimate_minutes", "parent")
# The columns a version from the server sets here, each one, also to nothing.
TAKEN = (
    "title",
    "status",
    "due_date",
    "due_time",
    "start_date",
    "priority",
    "notes",
    "annotations",
    "recurrence",
    "remind_at",
    "estimate_minutes",
    "parent_uid",
    "completed_at",
)


def synced_fields(task: dict[str, Any]) -> dict[str, Any]:
    """The fields a sync carries, as it carries them (a completed instance has no repeat)."""
    view = {k: task.get(k) for k in SYNCED}
    view["tags"] = sorted(view["tags"] or [])
    view["annotations"] = [{"at": a.get("at") or "", "text": a["text"]} for a in view["annotations"] or []]
    if view["status"] == "done":
        view["repeat"] = None
    for k, v in view.items():
        if v in ("", []) and k not in ("tags", "annotations"):
            view[k] = None
    return view


def fingerprint(task: dict[str, Any]) -> str:
    """A hash of the synced fields (what older records kept instead of the fields)."""
    return hashlib.sha256(json.dumps(synced_fields(task), sort_keys=True).encode()).hexdigest()[:24]


# How far ahead of our clock another clock's LAST-MODIFIED is believed: a phone a few minutes fast is a phone;
# a stamp in 9999 is a broken clock, and it would win every later conflict.
CLOCK_TOLERANCE = dt.timedelta(minutes=10)


@dataclass
class Remote:
    """One to-do as the server has it."""

    uid: str  # the planner's uid for it
    resource: Resource
    row: dict[str, Any]  # read as an import row
    todo: icalendar.Todo
    modified: dt.datetime  # LAST-MODIFIED (else DTSTAMP), never later than when it was read
    stamp: str = ""  # LAST-MODIFIED as written, to tell a bumped one from one copied along
    future: str = ""  # set when the stamp was in the future: the stamp as written (it was taken as now)
    patched: bool = False  # row holds changes from a duplicate copy: the server's copy is behind it

    @property
    def fields(self) -> dict[str, Any]:
        """Its synced fields."""
        return synced_fields(self.row)


def read_remote(resource: Resource, now: dt.datetime | None = None) -> Remote:
    """A server's to-do, read; raises ical.ReadError with what is wrong. A LAST-MODIFIED later than `now`
    (plus CLOCK_TOLERANCE) is taken as `now`, and `future` says so."""
    try:
        cal = icalendar.Calendar.from_ical(resource.data)
    except ValueError as e:
        raise ical.ReadError(f"it is not iCalendar ({e})") from None
    todos = [c for c in cal.subcomponents if c.name == "VTODO"]
    if not todos:
        raise ical.ReadError("it holds no to-do")
    todo = todos[0]
    row = ical.to_row(todo)
    if not row["uid"]:
        raise ical.ReadError("it has no UID")
    modified = ical.value_of(todo, "last-modified", latest=True) or ical.value_of(todo, "dtstamp", latest=True)
    when = getattr(modified, "dt", None)
    when = ical.as_utc(when) if isinstance(when, dt.date) else dt.datetime.min.replace(tzinfo=dt.UTC)
    now = now or dt.datetime.now(dt.UTC)
    future = ""
    if when > now + CLOCK_TOLERANCE:
        future, when = f"{when:%Y-%m-%d %H:%M} UTC", now
    return Remote(row["uid"], resource, row, todo, when, stamp=stamp_of(todo), future=future)


def stamp_of(todo: icalendar.Todo | None) -> str:
    """LAST-MODIFIED as written in a to-do ("" when it has none)."""
    if todo is None:
        return ""
    value = todo.get("last-modified")
    if isinstance(value, list):
        value = value[-1] if value else None
    try:
        return value.to_ical().decode() if value is not None else ""
    except (AttributeError, ValueError):
        return str(value)


def as_export(task: dict[str, Any]) -> dict[str, Any]:
    """A stored task (snapshot) in the shape all_tasks gives: repeat, parent uid, annotations as a list."""
    from planner.storage.fields import annotations_of

    out = dict(task)
    out["repeat"] = task.get("recurrence")
    out["parent"] = task.get("parent_uid")
    out["annotations"] = annotations_of(task)
    return out


def as_task(snap: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """A snapshot with some synced fields set to other values (for the change log)."""
    out = dict(snap)
    for k, v in values.items():
        key = {"repeat": "recurrence", "parent": "parent_uid"}.get(k, k)
        out[key] = json.dumps(v, ensure_ascii=False) if k == "annotations" and v else v
    return out


def raw_uid(data: str) -> str | None:
    """The UID line of a resource that could not be parsed, to name it in the report."""
    for line in data.replace("\r\n ", "").splitlines():
        if line.upper().startswith("UID:"):
            return line[4:].strip()[:80] or None
    return None


def to_ics(
    task: dict[str, Any], changed_at: dt.datetime | None, base: icalendar.Todo | None = None, copy: str | None = None
) -> str:
    """One task as a calendar object resource: a VCALENDAR with its VTODO, written over the server's copy,
    and the time zones (VTIMEZONE) that copy holds."""
    cal = icalendar.Calendar()
    cal.add("prodid", "-//planner//tasks//EN")
    cal.add("version", "2.0")
    for zone in ical.zones_in(copy or task.get("ical") or "").values():
        cal.add_component(zone)
    stamp = dt.datetime.now(dt.UTC)
    cal.add_component(
        ical_write.to_vtodo(task, stamp, repeat_when_done=False, base=base, changed_at=changed_at or stamp)
    )
    return cal.to_ical().decode()
