"""Tasks as iCalendar to-dos (VTODO) and back: the one mapping for export, import and the CalDAV sync.

This half reads (to_row, parse, components); ical_write.py writes the same mapping.

    task field        VTODO property
    uid               UID ("<uid>@planner"; a UID from another program is written back as it came)
    title             SUMMARY
    due_date/time     DUE (a date, or a floating local date-time; a zoned time becomes local time)
    start_date        DTSTART (not before)
    priority          PRIORITY (high 1, medium 5, low 9; 1-4 / 5 / 6-9 when read)
    tags              CATEGORIES
    notes             DESCRIPTION; later dated notes as COMMENT ("2026-12-01T10:00 text")
    repeat            RRULE
    status            STATUS (NEEDS-ACTION, IN-PROCESS, COMPLETED, CANCELLED) and COMPLETED (when)
    list              X-PLANNER-LIST (in files; a synced list is its collection)
    estimate_minutes  ESTIMATED-DURATION (the calext task extensions draft)
    parent            RELATED-TO;RELTYPE=PARENT (the parent's UID)
    remind_at         one VALARM with TRIGGER;VALUE=DATE-TIME (a relative one is read against DUE)
    created_at        CREATED (UTC), so the age urgency counts survives a round trip

A title iCalendar TEXT cannot hold as it is (control characters, U+2028,
U+0085 and the like, which servers and parsers turn into line breaks or drop)
is written twice: SUMMARY with those as the line break RFC 5545 escapes (or
left out), for other apps, and X-PLANNER-TITLE with the title exactly,
percent-encoded (RFC 3986: only letters, digits, - . _ ~ and %XX, so no
server can alter it; Radicale refuses ENCODING=BASE64 on an X- property, and
cuts a data: URI at its comma). Reading takes the exact one only while
SUMMARY is still what it was written as, so another app's rename wins.

Nothing else is the planner's. A to-do read from another app is kept whole
(the task's `ical`), and writing it back starts from that copy and replaces
only the properties of the fields that changed, so LOCATION, URL, ATTENDEE,
ATTACH, GEO, CLASS, X-*, other RELATED-TO, alarms the planner did not write and
parameters such as TZID come back as they came. A change bumps SEQUENCE and
sets DTSTAMP and LAST-MODIFIED (RFC 5545 3.8.7). Reading is tolerant: a value
icalendar cannot parse is kept as it was written (vBroken); only a broken
property the planner owns makes the to-do unreadable, and then only that
to-do is skipped, with one line that names it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import urllib.parse
from typing import Any

import icalendar

from planner.dates import MAX_YEAR, MIN_YEAR

SUFFIX = "@planner"
EVENT_SUFFIX = ".event@planner"
PRIORITY_OUT = {"high": 1, "medium": 5, "low": 9}
STATUS_OUT = {"open": "NEEDS-ACTION", "done": "COMPLETED", "cancelled": "CANCELLED"}
MAX_COMPONENTS = 100_000

# Keep what cannot be parsed as it was written (vBroken) instead of refusing the whole calendar:
# one odd to-do from another app must not make the others unreadable. VEVENT already works so.
for _cls in (icalendar.Calendar, icalendar.Todo, icalendar.Alarm):
    _cls.ignore_exceptions = True


class ReadError(ValueError):
    """A to-do the planner cannot read; the message says what is wrong with it."""


class Text(icalendar.vText):
    """A TEXT value escaped by RFC 5545 alone. icalendar's own writer reads a backslash before an N as
    an escaped line break (a title "C:\\Notes" came back broken in two); reading is right, so only
    writing is ours."""

    def to_ical(self) -> bytes:
        """The value with backslash, semicolon, comma and line break escaped, in that order."""
        text = str(self).replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")
        return text.encode("utf-8")


def safe_text(text: str) -> str:
    """Line breaks of any kind as the one iCalendar escapes (\\n); other control characters dropped, and
    U+FFFE/U+FFFF, which XML cannot carry (a server's listing holding one is no longer XML)."""
    text = re.sub(r"\r\n?|[\u2028\u2029\x0b\x0c\x85]", "\n", text)
    return re.sub(r"[\x00-\x08\x0e-\x1f\x7f\ufffe\uffff]", "", text)


EXACT_TITLE = "x-planner-title"


def exact_title(component: icalendar.cal.Component, summary: str) -> str:
    """The title as the planner wrote it (X-PLANNER-TITLE), while SUMMARY is still what it was written as;
    else SUMMARY."""
    value = component.get(EXACT_TITLE)
    if value is None or isinstance(value, list):
        return summary
    try:
        exact = urllib.parse.unquote(str(value), errors="strict")
    except (ValueError, UnicodeDecodeError):
        return summary
    return exact if safe_text(exact).strip() == summary else summary


def uid_of(uid: str) -> str:
    """The UID a task is written with: a uid from another program (it holds an @) as it came."""
    return uid if "@" in uid else f"{uid}{SUFFIX}"


# ---------------------------------------------------------------- reading


def value_of(component: icalendar.cal.Component, name: str, latest: bool = False) -> Any:
    """A property that may appear once; written twice with different values it is unreadable
    (unless `latest`: then the latest time wins, as for COMPLETED and LAST-MODIFIED)."""
    value = component.get(name)
    if not isinstance(value, list):
        return value
    if latest:
        times = [v.dt for v in value if isinstance(getattr(v, "dt", None), dt.datetime | dt.date)]
        return max(value, key=lambda v: as_utc(v.dt)) if len(times) == len(value) else value[0]
    if len({v.to_ical() for v in value}) > 1:
        raise ReadError(f"it has {len(value)} different {name.upper()} values")
    return value[0]


def as_utc(when: dt.date | dt.datetime) -> dt.datetime:
    if not isinstance(when, dt.datetime):
        when = dt.datetime.combine(when, dt.time())
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _local(value: Any) -> tuple[str | None, str | None]:
    """(date, time) from a DUE or DTSTART value: a zoned time is read as local time."""
    when = getattr(value, "dt", value)
    if isinstance(when, dt.datetime):
        if when.tzinfo is not None:
            when = when.astimezone().replace(tzinfo=None)
        return _in_range(when.date()).isoformat(), f"{when:%H:%M}"
    if isinstance(when, dt.date):
        return _in_range(when).isoformat(), None
    return None, None


def _in_range(day: dt.date) -> dt.date:
    if not MIN_YEAR <= day.year <= MAX_YEAR:
        raise ReadError(f"its date {day.isoformat()} is outside {MIN_YEAR}-{MAX_YEAR}")
    return day


def _uid(component: icalendar.cal.Component) -> str | None:
    return local_uid(str(value_of(component, "uid") or ""))


def local_uid(uid: str) -> str | None:
    """The planner's uid for a UID as written in a file or on a server (uid_of, the other way)."""
    uid = uid.strip()
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


def values_of(component: icalendar.cal.Component, name: str) -> list[Any]:
    value = component.get(name)
    return [] if value is None else value if isinstance(value, list) else [value]


def parent_of(component: icalendar.cal.Component) -> Any:
    """The RELATED-TO that names the parent (RELTYPE PARENT, the default), or None."""
    for rel in values_of(component, "related-to"):
        if str(getattr(rel, "params", {}).get("RELTYPE", "PARENT")).upper() == "PARENT":
            return rel
    return None


def _comments(component: icalendar.cal.Component) -> list[dict[str, str]]:
    out = []
    for value in values_of(component, "comment"):
        text = str(value)
        m = re.match(r"(\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2})?) (.*)", text, re.S)
        out.append({"at": m[1], "text": m[2]} if m else {"at": "", "text": text})
    return out


def _duration(value: Any) -> dt.timedelta | None:
    """ESTIMATED-DURATION (icalendar reads a property it does not know as text)."""
    if value is None:
        return None
    try:
        return icalendar.vDuration.from_ical(str(value))
    except (ValueError, TypeError):
        return None


def _broken(component: icalendar.cal.Component) -> None:
    owned = {"DUE", "DTSTART", "SUMMARY", "RRULE", "STATUS", "PRIORITY", "COMPLETED"}
    for name, error in getattr(component, "errors", []):
        if name.upper() in owned:
            raise ReadError(f"its {name.upper()} cannot be read ({error})")


def to_row(component: icalendar.cal.Component) -> dict[str, Any]:
    """A VTODO or VEVENT as an import row (the same keys as a JSON export's task); raises ReadError."""
    _broken(component)
    todo = component.name == "VTODO"
    due = value_of(component, "due") if todo else value_of(component, "dtstart")
    start = value_of(component, "dtstart") if todo else None
    due_date, due_time = _local(due) if due is not None else (None, None)
    status = str(value_of(component, "status") or "").upper()
    completed = value_of(component, "completed", latest=True)
    estimate_td = _duration(value_of(component, "estimated-duration"))
    parent = parent_of(component)
    row: dict[str, Any] = {
        "title": exact_title(component, str(value_of(component, "summary") or "").strip()),
        "status": "cancelled" if status == "CANCELLED" else "done" if status == "COMPLETED" or completed else "open",
        "due_date": due_date,
        "due_time": due_time,
        "start_date": _local(start)[0] if start is not None else None,
        "priority": _priority(value_of(component, "priority")),
        "tags": _categories(component),
        "notes": str(value_of(component, "description") or "") or None,
        "annotations": _comments(component),
        "uid": _uid(component),
        "list": str(component.get("x-planner-list") or "") or None,
        "estimate_minutes": int(estimate_td.total_seconds() // 60) if isinstance(estimate_td, dt.timedelta) else None,
        "parent": local_uid(str(parent)) if parent is not None else None,
        "repeat": value_of(component, "rrule").to_ical().decode() if component.get("rrule") is not None else None,
    }
    if completed is not None and isinstance(getattr(completed, "dt", None), dt.datetime):
        row["completed_at"] = completed.dt.isoformat()
    created = getattr(value_of(component, "created", latest=True), "dt", None)
    if isinstance(created, dt.datetime) and MIN_YEAR <= created.year <= MAX_YEAR:
        try:
            local = created.astimezone().replace(tzinfo=None) if created.tzinfo else created
        except (OverflowError, ValueError):
            local = None
        if local is not None:
            row["created_at"] = local.isoformat(timespec="seconds")  # as the planner stores it: local time
    row["remind_at"] = reminder_of(component, due)[0]
    return row


def reminder_of(component: icalendar.cal.Component, due: Any) -> tuple[str | None, Any]:
    """The planner's reminder: the first alarm whose moment can be read, as local time, and that alarm."""
    for alarm in component.subcomponents:  # its own alarms only, never a nested component's (linear)
        if alarm.name != "VALARM" or alarm.errors:
            continue
        when = getattr(alarm.get("trigger"), "dt", None)
        if isinstance(when, dt.timedelta):  # relative to the due moment (or the start)
            base = getattr(due, "dt", None)
            if base is None:
                continue
            if not isinstance(base, dt.datetime):
                base = dt.datetime.combine(base, dt.time())
            try:
                when = base + when
            except OverflowError:
                continue
        if isinstance(when, dt.datetime):
            try:
                if when.tzinfo is not None:
                    when = when.astimezone().replace(tzinfo=None)
            except (OverflowError, ValueError):
                continue
            if MIN_YEAR <= when.year <= MAX_YEAR:  # an alarm past 9000 is kept as written, not a reminder
                return when.isoformat(timespec="minutes"), alarm
    return None, None


def read(text: str) -> list[icalendar.Calendar]:
    """The calendars of a file, parsed once (the to-dos, the events and the zones are all read from them)."""
    try:
        calendars = icalendar.Calendar.from_ical(text, multiple=True)
    except ValueError as e:
        raise ValueError(f"not an iCalendar file ({e})") from None
    if not calendars:
        raise ValueError("not an iCalendar file (no complete BEGIN:VCALENDAR ... END:VCALENDAR in it)")
    return calendars


def components(text: str | list[Any], kinds: tuple[str, ...] = ("VTODO",)) -> list[tuple[str, Any]]:
    """(where, component or ReadError) for each top-level component of these kinds, in file order (of a file's
    text, or of its calendars as read() gives them).

    Components nested where iCalendar puts none (a VTODO inside a VTODO) are reported, not read.
    """
    calendars = read(text) if isinstance(text, str) else text
    out: list[tuple[str, Any]] = []
    for cal in calendars:
        counts: dict[str, int] = {}
        for component in cal.subcomponents:
            if component.name not in kinds:
                continue
            counts[component.name] = counts.get(component.name, 0) + 1
            summary = str(component.get("summary") or "")[:40]
            where = f"{component.name} {counts[component.name]} ({summary!r})"
            if len(out) >= MAX_COMPONENTS:
                raise ValueError(f"it holds more than {MAX_COMPONENTS:,} components")
            nested = [c.name for c in component.subcomponents if c.name in ("VTODO", "VEVENT", "VJOURNAL")]
            out.append((where, ReadError(f"it has a {nested[0]} inside it") if nested else component))
    return out


def parse(text: str | list[Any], events: bool = False) -> list[tuple[str, Any]]:
    """(where, row or ReadError) for every VTODO in a calendar file (its text, or its calendars as read() gives
    them), and every VEVENT when `events`."""
    rows: list[tuple[str, Any]] = []
    calendars = read(text) if isinstance(text, str) else text
    zones = zones_in(calendars)
    for where, component in components(calendars, ("VTODO", "VEVENT") if events else ("VTODO",)):
        if isinstance(component, ReadError):
            rows.append((where, component))
            continue
        try:
            row = to_row(component)
        except ReadError as e:
            rows.append((where, e))
            continue
        except (ValueError, TypeError, OverflowError, AttributeError, KeyError) as e:  # a value icalendar let by
            rows.append((where, ReadError(f"it cannot be read ({type(e).__name__}: {str(e)[:80]})")))
            continue
        if component.name == "VTODO":
            row["ical"] = copy_of(component, zones)  # kept whole: written back with what we do not own
        rows.append((where, row))
    return rows


def copy_of(component: icalendar.cal.Component, zones: dict[str, icalendar.cal.Component]) -> str:
    """A to-do as kept with its task: a VCALENDAR holding it and the time zones (VTIMEZONE) it names."""
    cal = icalendar.Calendar()
    cal.add("prodid", "-//planner//copy//EN")
    cal.add("version", "2.0")
    text = component.to_ical().decode() if zones else ""  # rendered only to find the zones it names
    for tzid, zone in zones.items():
        if f"TZID={tzid}:" in text or f'TZID="{tzid}":' in text:
            cal.add_component(zone)
    cal.add_component(component)
    return cal.to_ical().decode()


def zones_in(calendars: Any) -> dict[str, icalendar.cal.Component]:
    """The VTIMEZONE components of a calendar (or a list of them, or a copy's text), by TZID."""
    if isinstance(calendars, str):
        try:
            calendars = icalendar.Calendar.from_ical(calendars, multiple=True)
        except ValueError:
            return {}
    if not isinstance(calendars, list):
        calendars = [calendars]
    return {str(c.get("tzid")): c for cal in calendars for c in cal.subcomponents if c.name == "VTIMEZONE"}


# ---------------------------------------------------------------- writing
