"""Tasks as iCalendar to-dos (VTODO) and back: the one mapping for export, import and later sync.

    task field      VTODO property
    uid             UID ("<uid>@planner"; a UID from another program is written back as it came)
    title           SUMMARY
    due_date/time   DUE (a date, or a floating local date-time; a zoned time becomes local time)
    priority        PRIORITY (high 1, medium 5, low 9; 1-4 / 5 / 6-9 when read)
    tags            CATEGORIES
    notes           DESCRIPTION
    repeat          RRULE
    status          STATUS (NEEDS-ACTION or COMPLETED) and COMPLETED (when)
    remind_at       VALARM (DISPLAY) with an absolute TRIGGER; a relative one is read against DUE

Calendar apps that show no to-dos can get dated tasks as events too
(VEVENT, UID "<uid>.event@planner"); reading a file, events are tasks only
when asked (`--events`), dated by DTSTART. Everything read comes back as the
raw row the importer checks like any other (exchange._clean), so a field
that cannot be stored is reported, never written.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from typing import Any

import icalendar

SUFFIX = "@planner"
EVENT_SUFFIX = ".event@planner"
PRIORITY_OUT = {"high": 1, "medium": 5, "low": 9}


class Text(icalendar.vText):
    """A TEXT value escaped by RFC 5545 alone. icalendar's own writer reads a backslash before an N as
    an escaped line break (a title "C:\\Notes" came back broken in two); reading is right, so only
    writing is ours."""

    def to_ical(self) -> bytes:
        """The value with backslash, semicolon, comma and line break escaped, in that order."""
        text = str(self).replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")
        return text.encode("utf-8")


def safe_text(text: str) -> str:
    """Line breaks of any kind as the one iCalendar escapes (\\n); other control characters dropped."""
    text = re.sub(r"\r\n?|[\u2028\u2029\x0b\x0c\x85]", "\n", text)
    return re.sub(r"[\x00-\x08\x0e-\x1f\x7f]", "", text)


def _when(task: dict[str, Any]) -> dt.date | dt.datetime | None:
    if not task.get("due_date"):
        return None
    day = dt.date.fromisoformat(task["due_date"])
    if task.get("due_time"):
        hour, minute = map(int, task["due_time"].split(":"))
        return dt.datetime.combine(day, dt.time(hour, minute))  # floating local time, as the planner keeps it
    return day


def _common(item: icalendar.cal.Component, task: dict[str, Any], stamp: dt.datetime) -> None:
    item.add("dtstamp", stamp)
    item.add("summary", Text(safe_text(task["title"])))
    if task.get("repeat"):
        item.add("rrule", icalendar.vRecur.from_ical(task["repeat"]))
    if task.get("priority"):
        item.add("priority", PRIORITY_OUT[task["priority"]])
    if task.get("tags"):
        item.add("categories", [safe_text(x) for x in task["tags"]])
    if task.get("notes"):
        item.add("description", Text(safe_text(task["notes"])))


def to_vtodo(task: dict[str, Any], stamp: dt.datetime, repeat_when_done: bool = True) -> icalendar.Todo:
    """One task as a VTODO. A sync sends a completed instance without its repeat rule
    (`repeat_when_done=False`): the series goes on in the next task, and no app should roll it again."""
    item = icalendar.Todo()
    item.add("uid", uid_of(task["uid"]))
    if task["status"] == "done" and not repeat_when_done:
        task = {**task, "repeat": None}
    _common(item, task, stamp)
    due = _when(task)
    if due is not None:
        item.add("due", due)
    if task["status"] == "done":
        item.add("status", "COMPLETED")
        if task.get("completed_at"):
            done = dt.datetime.fromisoformat(task["completed_at"]).astimezone(dt.UTC)  # stored as local time
            item.add("completed", done)
    else:
        item.add("status", "NEEDS-ACTION")
    if task.get("remind_at"):
        alarm = icalendar.Alarm()
        alarm.add("action", "DISPLAY")
        alarm.add("description", Text(safe_text(task["title"])))
        alarm.add("trigger", dt.datetime.fromisoformat(task["remind_at"]).astimezone(dt.UTC))  # stored as local time
        item.add_component(alarm)
    return item


def uid_of(uid: str) -> str:
    """The UID a task is written with: a uid from another program (it holds an @) as it came."""
    return uid if "@" in uid else f"{uid}{SUFFIX}"


def to_vevent(task: dict[str, Any], stamp: dt.datetime) -> icalendar.Event | None:
    """A dated task as an event on its day (or at its time), for calendars that show no to-dos; None if undated."""
    start = _when(task)
    if start is None:
        return None
    item = icalendar.Event()
    item.add("uid", f"{task['uid']}{EVENT_SUFFIX}")
    _common(item, task, stamp)
    item.add("dtstart", start)
    if not isinstance(start, dt.datetime) and start < dt.date.max:  # a date stored before dates were bounded
        item.add("dtend", start + dt.timedelta(days=1))
    return item


def _local(value: Any) -> tuple[str | None, str | None]:
    """(due_date, due_time) from a DUE or DTSTART value: a zoned time is read as local time."""
    when = getattr(value, "dt", value)
    if isinstance(when, dt.datetime):
        if when.tzinfo is not None:
            when = when.astimezone().replace(tzinfo=None)
        return when.date().isoformat(), f"{when:%H:%M}"
    if isinstance(when, dt.date):
        return when.isoformat(), None
    return None, None


def _uid(component: icalendar.cal.Component) -> str | None:
    uid = str(component.get("uid") or "").strip()
    for suffix in (EVENT_SUFFIX, SUFFIX):
        if uid.endswith(suffix):
            return uid[: -len(suffix)]
    if uid and not re.fullmatch(r"[\w.@-]{1,100}", uid):
        # Another program's UID in a shape the planner does not store ({GUID}, a URL): the same
        # UID still gets the same uid, so the file imports once.
        return "ics-" + hashlib.sha256(uid.encode()).hexdigest()[:20]
    return uid or None


def _priority(value: Any) -> str | None:
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return None if n <= 0 else "high" if n <= 4 else "medium" if n == 5 else "low"


def _categories(component: icalendar.cal.Component) -> list[str]:
    values = component.get("categories")
    if values is None:
        return []
    out: list[str] = []
    for value in values if isinstance(values, list) else [values]:
        out += [str(c) for c in getattr(value, "cats", [value])]
    return out


def to_row(component: icalendar.cal.Component) -> dict[str, Any]:
    """A VTODO or VEVENT as an import row (the same keys as a JSON export's task)."""
    due = component.get("due") if component.name == "VTODO" else component.get("dtstart")
    if due is None and component.name == "VTODO":
        due = component.get("dtstart")  # a to-do with a start and no due date: dated by its start
    due_date, due_time = _local(due) if due is not None else (None, None)
    status = str(component.get("status") or "").upper()
    row: dict[str, Any] = {
        "title": str(component.get("summary") or "").strip(),
        "status": "done" if status == "COMPLETED" or component.get("completed") is not None else "open",
        "due_date": due_date,
        "due_time": due_time,
        "priority": _priority(component.get("priority")),
        "tags": _categories(component),
        "notes": str(component.get("description") or "") or None,
        "uid": _uid(component),
    }
    if component.get("rrule") is not None:
        row["repeat"] = component["rrule"].to_ical().decode()
    if component.get("completed") is not None:
        row["completed_at"] = component["completed"].dt.isoformat()
    row["remind_at"] = _alarm(component, due)
    return row


def _alarm(component: icalendar.cal.Component, due: Any) -> str | None:
    """The first display alarm's moment as local time (YYYY-MM-DDTHH:MM), or None."""
    for alarm in component.walk("VALARM"):
        trigger = alarm.get("trigger")
        when = getattr(trigger, "dt", None)
        if isinstance(when, dt.timedelta):  # relative to the due moment (or the start)
            base = getattr(due, "dt", None)
            if base is None:
                continue
            if not isinstance(base, dt.datetime):
                base = dt.datetime.combine(base, dt.time())
            when = base + when
        if isinstance(when, dt.datetime):
            if when.tzinfo is not None:
                when = when.astimezone().replace(tzinfo=None)
            return when.isoformat(timespec="minutes")
    return None


def parse(text: str, events: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """(where, row) pairs for every VTODO in a calendar file, and every VEVENT when `events`."""
    try:
        calendars = icalendar.Calendar.from_ical(text, multiple=True)
    except ValueError as e:
        raise ValueError(f"not an iCalendar file ({e})") from None
    rows = []
    kinds = ("VTODO", "VEVENT") if events else ("VTODO",)
    for cal in calendars:
        for n, component in enumerate((c for c in cal.walk() if c.name in kinds), 1):
            summary = str(component.get("summary") or "")[:40]
            rows.append((f"{component.name} {n} ({summary!r})", to_row(component)))
    return rows
