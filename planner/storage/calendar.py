"""The user's calendar as busy time (events, a kind of their own, never tasks) and their planning preferences.

    events(id, uid, source, title, first, last, transparent, all_day, ical)
        one row per calendar object: a VEVENT with its overrides (RECURRENCE-ID)
        and the time zones it names, as the file or the server had it; `first`
        and `last` bound its occurrences (last NULL: it repeats for ever), so a
        range is read without parsing everything
    preferences(id, kind, weekdays, start, end, tags, said, turn, after_event, undone_at,
                removed_turn, removed_after, removed_at)
        avoid / free / prefer windows the scheduler reads, each from the user's
        words; undone like any change (the turn that made or removed it)

Repeats are expanded by recurring-ical-events (RRULE, RDATE, EXDATE,
RECURRENCE-ID, in the event's own time zone), then turned into local time;
TRANSP:TRANSPARENT and cancelled occurrences are not busy. Sources: "file"
(import), a CalDAV calendar's URL (sync), "said" (the add_event tool).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from dataclasses import dataclass
from typing import Any

import icalendar

from planner.storage.ical import zones_in

FOREVER = "9999-12-31T23:59"


@dataclass(frozen=True)
class Busy:
    """One occurrence of an event, in local time."""

    event_id: int
    uid: str
    title: str
    start: dt.datetime
    end: dt.datetime
    all_day: bool
    source: str


def _local(value: Any, end: bool = False) -> tuple[dt.datetime, bool]:
    when = getattr(value, "dt", value)
    if isinstance(when, dt.datetime):
        if when.tzinfo is not None:
            when = when.astimezone().replace(tzinfo=None)
        return when, False
    return dt.datetime.combine(when, dt.time()), True


def objects(text: str) -> list[tuple[str, str, icalendar.Calendar]]:
    """(uid, title, a calendar of that event with its overrides and zones) for each event in a file."""
    calendars = icalendar.Calendar.from_ical(text, multiple=True)
    grouped: dict[str, list[Any]] = {}
    zones: dict[str, Any] = {}
    for cal in calendars:
        zones.update(zones_in(cal))
        for c in cal.subcomponents:
            if c.name == "VEVENT" and c.get("uid") is not None and c.get("dtstart") is not None:
                grouped.setdefault(str(c["uid"]), []).append(c)
    out = []
    for uid, parts in grouped.items():
        cal = icalendar.Calendar()
        cal.add("prodid", "-//planner//events//EN")
        cal.add("version", "2.0")
        text_of = "".join(p.to_ical().decode() for p in parts)
        for tzid, zone in zones.items():
            if f"TZID={tzid}" in text_of:
                cal.add_component(zone)
        for p in parts:
            cal.add_component(p)
        master = next((p for p in parts if p.get("recurrence-id") is None), parts[0])
        out.append((uid, str(master.get("summary") or "busy"), cal))
    return out


def bounds(cal: icalendar.Calendar) -> tuple[str, str | None, bool, bool]:
    """(first start, last end or None if it never ends, transparent, all-day) of an event object."""
    events = [c for c in cal.subcomponents if c.name == "VEVENT"]
    master = next((e for e in events if e.get("recurrence-id") is None), events[0])
    start, all_day = _local(master["dtstart"])
    transparent = str(master.get("transp") or "").upper() == "TRANSPARENT"
    rule = master.get("rrule")
    if rule is None and master.get("rdate") is None:
        end = (
            _local(master["dtend"])[0]
            if master.get("dtend") is not None
            else start + (dt.timedelta(days=1) if all_day else dt.timedelta())
        )
        if master.get("duration") is not None:
            end = start + master["duration"].dt
        last = max([end] + [_local(e["dtend"])[0] for e in events if e.get("dtend") is not None])
        return start.isoformat(timespec="minutes"), last.isoformat(timespec="minutes"), transparent, all_day
    # A repeat: read whole for any range after its start (bounding COUNT and UNTIL would mean expanding it).
    return start.isoformat(timespec="minutes"), None, transparent, all_day


def put(
    conn: sqlite3.Connection, source: str, items: list[tuple[str, str, icalendar.Calendar]], replace: bool = False
) -> tuple[int, int]:
    """Store events (the same uid from the same source is replaced); with `replace`, the source's others go.
    Returns (added, updated)."""
    added = updated = 0
    if replace:
        keep = [uid for uid, _, _ in items]
        marks = ", ".join("?" for _ in keep) or "''"
        conn.execute(f"DELETE FROM events WHERE source = ? AND uid NOT IN ({marks})", [source, *keep])
    for uid, title, cal in items:
        first, last, transparent, all_day = bounds(cal)
        row = conn.execute("SELECT id FROM events WHERE source = ? AND uid = ?", (source, uid)).fetchone()
        values = (title, first, last, int(transparent), int(all_day), cal.to_ical().decode())
        if row:
            conn.execute(
                "UPDATE events SET title = ?, first = ?, last = ?, transparent = ?, all_day = ?, ical = ? WHERE id = ?",
                (*values, row[0]),
            )
            updated += 1
        else:
            conn.execute(
                "INSERT INTO events (uid, source, title, first, last, transparent, all_day, ical) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (uid, source, *values),
            )
            added += 1
    return added, updated


def between(conn: sqlite3.Connection, start: dt.datetime, end: dt.datetime, busy_only: bool = True) -> list[Busy]:
    """Every occurrence that overlaps [start, end), in local time, soonest first."""
    import recurring_ical_events  # loads only when a plan or an agenda needs the calendar

    rows = conn.execute(
        "SELECT id, uid, source, title, ical, transparent FROM events WHERE first < ? AND COALESCE(last, ?) > ?"
        + (" AND transparent = 0" if busy_only else ""),
        (end.isoformat(timespec="minutes"), FOREVER, start.isoformat(timespec="minutes")),
    ).fetchall()
    out: list[Busy] = []
    for r in rows:
        try:
            cal = icalendar.Calendar.from_ical(r["ical"])
            found = recurring_ical_events.of(cal).between(start - dt.timedelta(days=1), end + dt.timedelta(days=1))
        except Exception:  # an object another app wrote that cannot be expanded: it takes no time, said in the log
            continue
        for occ in found:
            if str(occ.get("status") or "").upper() == "CANCELLED":
                continue
            a, all_day = _local(occ["dtstart"])
            b = (
                _local(occ["dtend"])[0]
                if occ.get("dtend") is not None
                else a + (dt.timedelta(days=1) if all_day else dt.timedelta(minutes=0))
            )
            if occ.get("duration") is not None and occ.get("dtend") is None:
                b = a + occ["duration"].dt
            if a < end and b > start:
                out.append(Busy(r["id"], r["uid"], str(occ.get("summary") or r["title"]), a, b, all_day, r["source"]))
    return sorted(out, key=lambda e: (e.start, e.end, e.event_id))


def remove(conn: sqlite3.Connection, event_id: int) -> dict[str, Any] | None:
    """Delete one event; returns it (None if there was none)."""
    row = conn.execute("SELECT * FROM events WHERE id = ?", (event_id,)).fetchone()
    if row:
        conn.execute("DELETE FROM events WHERE id = ?", (event_id,))
    return dict(row) if row else None


def sources(conn: sqlite3.Connection) -> dict[str, int]:
    """source -> how many events come from it."""
    return dict(conn.execute("SELECT source, COUNT(*) FROM events GROUP BY source").fetchall())


# ---------------------------------------------------------------- preferences


def preferences(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """The preferences in force, oldest first."""
    rows = conn.execute(
        "SELECT id, kind, weekdays, start, end, tags, said FROM preferences "
        "WHERE undone_at IS NULL AND removed_at IS NULL ORDER BY id"
    )
    return [dict(r) for r in rows]


def _last_event(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COALESCE(MAX(id), 0) FROM task_events").fetchone()[0]


def add_preference(
    conn: sqlite3.Connection,
    turn: str,
    kind: str,
    weekdays: tuple[int, ...],
    start: str,
    end: str,
    tags: tuple[str, ...],
    said: str,
) -> int:
    """Store a preference, made by `turn` (so undo takes it back)."""
    cur = conn.execute(
        "INSERT INTO preferences (kind, weekdays, start, end, tags, said, turn, after_event) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (kind, ",".join(map(str, weekdays)), start, end, ",".join(tags), said, turn, _last_event(conn)),
    )
    return cur.lastrowid  # type: ignore[return-value]


def remove_preference(conn: sqlite3.Connection, turn: str, pref_id: int) -> dict[str, Any] | None:
    """Drop a preference (undo brings it back); returns it, or None if there is no such one in force."""
    row = conn.execute(
        "SELECT * FROM preferences WHERE id = ? AND undone_at IS NULL AND removed_at IS NULL", (pref_id,)
    ).fetchone()
    if row is None:
        return None
    conn.execute(
        "UPDATE preferences SET removed_at = ?, removed_turn = ?, removed_after = ? WHERE id = ?",
        (dt.datetime.now().isoformat(timespec="seconds"), turn, _last_event(conn), pref_id),
    )
    return dict(row)


def newest_preference_turn(conn: sqlite3.Connection) -> tuple[str, int] | None:
    """The newest turn that added or removed a preference (not undone), and the change-log id it came after."""
    row = conn.execute(
        "SELECT turn, after_event, id FROM ("
        " SELECT turn, after_event, id FROM preferences WHERE undone_at IS NULL"
        " UNION ALL SELECT removed_turn, removed_after, id FROM preferences WHERE removed_turn IS NOT NULL)"
        " ORDER BY after_event DESC, id DESC LIMIT 1"
    ).fetchone()
    return (row[0], row[1]) if row else None


def undo_preferences(conn: sqlite3.Connection, turn: str) -> list[str]:
    """Take back what a turn did to the preferences; one line per preference."""
    now = dt.datetime.now().isoformat(timespec="seconds")
    lines = []
    for r in conn.execute("SELECT id, said FROM preferences WHERE turn = ? AND undone_at IS NULL", (turn,)).fetchall():
        conn.execute("UPDATE preferences SET undone_at = ? WHERE id = ?", (now, r[0]))
        lines.append(f'removed preference {r[0]} "{r[1]}" (it was added)')
    for r in conn.execute("SELECT id, said FROM preferences WHERE removed_turn = ?", (turn,)).fetchall():
        conn.execute(
            "UPDATE preferences SET removed_at = NULL, removed_turn = NULL, removed_after = NULL WHERE id = ?", (r[0],)
        )
        lines.append(f'restored preference {r[0]} "{r[1]}" (it was removed)')
    return lines
