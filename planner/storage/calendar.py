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

    event_log(id, turn, event_id, before JSON|NULL, after JSON|NULL, after_event, undone_at)
        every write to events, as task_events is for tasks: an import's events
        are one /undo with its tasks (undo_events); a turn of NULL is a mirror
        of a server (a CalDAV calendar), which the next sync refreshes, not undone

Repeats are expanded by recurring-ical-events (RRULE, RDATE, EXDATE,
RECURRENCE-ID, in the event's own time zone), only inside the window asked
for and at most MAX_OCCURRENCES per event (the rest of the window is then
busy as one span), then turned into local time; a rule that repeats by the
second or the minute is busy as one span while it runs, never expanded.
TRANSP:TRANSPARENT and cancelled occurrences are not busy. Sources: "file:PATH"
(an import of that file; "file" from older planners), a CalDAV calendar's URL
(sync), "said" (the add_event tool). The events of a source are the set it
holds: importing the file again removes those it no longer has (replace).
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import icalendar

from planner.storage.ical import zones_in

FOREVER = "9999-12-31T23:59"
MAX_OCCURRENCES = 500  # of one event inside one window: past this, the rest of the window is one busy span
DENSE = ("SECONDLY", "MINUTELY")  # rules busy as one span while they run (600k occurrences a week otherwise)
COLUMNS = ("uid", "source", "title", "first", "last", "transparent", "all_day", "ical")


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


def objects(text: str | list[icalendar.Calendar]) -> list[tuple[str, str, icalendar.Calendar]]:
    """(uid, title, a calendar of that event with its overrides and zones) for each event in a file (its text, or
    its calendars as parsed once by ical.read)."""
    calendars = icalendar.Calendar.from_ical(text, multiple=True) if isinstance(text, str) else text
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
        text_of = "".join(p.to_ical().decode() for p in parts) if zones else ""  # only to find the zones named
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


@dataclass
class Put:
    """What storing a source's events did."""

    added: int = 0
    updated: int = 0
    removed: list[str] = field(default_factory=list)  # titles of events the source no longer has, removed
    kept: list[str] = field(default_factory=list)  # ... and those kept because removing them was not allowed
    dense: list[str] = field(default_factory=list)  # titles of events repeating by the second or minute


def put(
    conn: sqlite3.Connection, source: str, items: list[tuple[str, str, icalendar.Calendar]], replace: bool = False
) -> tuple[int, int]:
    """Store events (the same uid from the same source is replaced); with `replace`, the source's others go.
    Returns (added, updated). Logged with no turn: for a mirror of a server (see store_source)."""
    done = store_source(conn, None, source, items, replace)
    return done.added, done.updated


def store_source(
    conn: sqlite3.Connection,
    turn: str | None,
    source: str,
    items: list[tuple[str, str, icalendar.Calendar]],
    replace: bool = False,
    allow: Callable[[list[str]], bool] | None = None,
    adopt: str | None = None,
) -> Put:
    """Store a source's events, each change logged in `turn` (one /undo with the rest). With `replace`, the
    events of this source it no longer holds are removed when `allow(lines)` says yes (None: always). `adopt`:
    an older source name whose events with these uids now belong to this one (events imported as "file")."""
    done = Put()
    if replace:
        gone = _gone(conn, source, items)
        if gone and (allow is None or allow(_lines(gone, source))):
            for g in gone:
                remove(conn, g["id"], turn)
                done.removed.append(g["title"])
        else:
            done.kept += [g["title"] for g in gone]
    for uid, title, cal in items:
        first, last, transparent, all_day = bounds(cal)
        row = conn.execute("SELECT id FROM events WHERE source = ? AND uid = ?", (source, uid)).fetchone()
        if row is None and adopt:
            row = conn.execute("SELECT id FROM events WHERE source = ? AND uid = ?", (adopt, uid)).fetchone()
        values = dict(zip(COLUMNS, (uid, source, title, first, last, int(transparent), int(all_day)), strict=False))
        values["ical"] = cal.to_ical().decode()
        if _rule_freq(cal) in DENSE:
            done.dense.append(title)
        if row:
            before = _event_row(conn, row[0])
            if before is not None and all(before[k] == values[k] for k in COLUMNS):
                continue  # the same as stored: nothing to log
            sets = ", ".join(f"{k} = ?" for k in COLUMNS)
            conn.execute(f"UPDATE events SET {sets} WHERE id = ?", [values[k] for k in COLUMNS] + [row[0]])
            _log(conn, turn, row[0], before)
            done.updated += 1
        else:
            cur = conn.execute(
                f"INSERT INTO events ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)})",
                [values[k] for k in COLUMNS],
            )
            _log(conn, turn, cur.lastrowid, None)  # type: ignore[arg-type]
            done.added += 1
    return done


def vanishing(conn: sqlite3.Connection, source: str, items: list[tuple[str, str, icalendar.Calendar]]) -> list[str]:
    """A line for each event of `source` that `items` no longer holds (what store_source with replace removes),
    to ask about before the write."""
    return _lines(_gone(conn, source, items), source)


def _gone(conn: sqlite3.Connection, source: str, items: list[tuple[str, str, icalendar.Calendar]]) -> list[dict]:
    keep = {uid for uid, _, _ in items}
    return [dict(r) for r in conn.execute("SELECT * FROM events WHERE source = ?", (source,)) if r["uid"] not in keep]


def _lines(gone: list[dict], source: str) -> list[str]:
    where = source.removeprefix("file:")
    return [f'event {g["id"]} "{g["title"]}" ({g["first"].replace("T", " ")}), no longer in {where}' for g in gone]


def _rule_freq(cal: icalendar.Calendar) -> str:
    """FREQ of the master event's RRULE ("" when it has none)."""
    for c in cal.subcomponents:
        if c.name == "VEVENT" and c.get("recurrence-id") is None and c.get("rrule") is not None:
            rule = c["rrule"][0] if isinstance(c["rrule"], list) else c["rrule"]
            freq = rule.get("FREQ") or [""]
            return str(freq[0] if isinstance(freq, list) else freq).upper()
    return ""


def _event_row(conn: sqlite3.Connection, event_id: int) -> dict[str, Any] | None:
    row = conn.execute(f"SELECT id, {', '.join(COLUMNS)} FROM events WHERE id = ?", (event_id,)).fetchone()
    return dict(row) if row else None


def _log(conn: sqlite3.Connection, turn: str | None, event_id: int, before: dict[str, Any] | None) -> None:
    """Log one change to an event (after the write, in its transaction)."""
    after = _event_row(conn, event_id)
    conn.execute(
        "INSERT INTO event_log (turn, event_id, before, after, after_event) "
        "VALUES (?, ?, ?, ?, (SELECT COALESCE(MAX(id), 0) FROM task_events))",
        (turn, event_id, _dump(before), _dump(after)),
    )


def _dump(row: dict[str, Any] | None) -> str | None:
    return None if row is None else json.dumps(row, ensure_ascii=False)


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
            if _rule_freq(cal) in DENSE:  # by the second or minute: busy while it runs, as one span
                out += _span(r, cal, start, end)
                continue
            out += _occurrences(r, recurring_ical_events.of(cal), start, end)
        except Exception:  # an object another app wrote that cannot be expanded: it takes no time, said in the log
            continue
    return sorted(out, key=lambda e: (e.start, e.end, e.event_id))


def _occurrences(r: sqlite3.Row, expander: Any, start: dt.datetime, end: dt.datetime) -> list[Busy]:
    """The occurrences that overlap [start, end), in order, at most MAX_OCCURRENCES; when there are more, the
    rest of the window from the next one's start is one busy span (a cap, so no rule can fill the memory)."""
    out: list[Busy] = []
    for occ in expander.after(start - dt.timedelta(days=1)):  # a day early: zones are turned into local time
        a, all_day = _local(occ["dtstart"])
        if a >= end:
            break
        b = _local(occ["dtend"])[0] if occ.get("dtend") is not None else a + (dt.timedelta(days=1 if all_day else 0))
        if occ.get("duration") is not None and occ.get("dtend") is None:
            b = a + occ["duration"].dt
        if b <= start or str(occ.get("status") or "").upper() == "CANCELLED":
            continue
        if len(out) >= MAX_OCCURRENCES:
            out.append(Busy(r["id"], r["uid"], r["title"], max(a, start), end, False, r["source"]))
            break
        out.append(Busy(r["id"], r["uid"], str(occ.get("summary") or r["title"]), a, b, all_day, r["source"]))
    return out


def _span(r: sqlite3.Row, cal: icalendar.Calendar, start: dt.datetime, end: dt.datetime) -> list[Busy]:
    """A rule by the second or minute as one busy span: from its start (or the window's) to its UNTIL (or the
    window's end)."""
    master = next(c for c in cal.subcomponents if c.name == "VEVENT" and c.get("recurrence-id") is None)
    first, all_day = _local(master["dtstart"])
    rule = master["rrule"][0] if isinstance(master["rrule"], list) else master["rrule"]
    until, count = rule.get("UNTIL"), rule.get("COUNT")
    last = _local(until[0])[0] if until else end
    if count:  # the last occurrence's start, plus a minute or second for its length
        unit = "seconds" if _rule_freq(cal) == "SECONDLY" else "minutes"
        step = int((rule.get("INTERVAL") or [1])[0]) * int(count[0])
        last = min(last, first + dt.timedelta(**{unit: step}))
    a, b = max(first, start), min(last, end)
    return [Busy(r["id"], r["uid"], r["title"], a, b, all_day, r["source"])] if a < b else []


def remove(conn: sqlite3.Connection, event_id: int, turn: str | None = None) -> dict[str, Any] | None:
    """Delete one event, logged in `turn` (undo puts it back); returns it (None if there was none)."""
    row = conn.execute("SELECT * FROM events WHERE id = ?", (event_id,)).fetchone()
    if row:
        before = _event_row(conn, event_id)
        conn.execute("DELETE FROM events WHERE id = ?", (event_id,))
        _log(conn, turn, event_id, before)
    return dict(row) if row else None


def listing(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every event, soonest first: id, title, first, last (None: it repeats for ever), source, repeats."""
    rows = conn.execute("SELECT id, title, first, last, source, all_day, ical FROM events ORDER BY first, id")
    out = []
    for r in rows:
        item = {k: r[k] for k in ("id", "title", "first", "last", "source", "all_day")}
        item["repeats"] = "RRULE" in r["ical"] or "RDATE" in r["ical"]
        out.append(item)
    return out


def newest_event_turn(conn: sqlite3.Connection) -> str | None:
    """The turn of the newest change to events that is not undone, when that turn changed only events and
    nothing newer happened to tasks, preferences or memories since (then /undo takes it back first); None
    otherwise (a turn with task changes is found by tasks.newest_turn, and its events undone with it)."""
    row = conn.execute(
        "SELECT turn, after_event FROM event_log WHERE turn IS NOT NULL AND undone_at IS NULL ORDER BY id DESC LIMIT 1"
    ).fetchone()
    if row is None:
        return None
    after = row["after_event"]
    newer = (
        "SELECT 1 FROM task_events WHERE id > ?1 AND undone_at IS NULL AND turn != ?2 "
        "UNION ALL SELECT 1 FROM preferences WHERE (after_event >= ?1 AND undone_at IS NULL AND turn != ?2) "
        "OR (removed_after >= ?1 AND removed_turn != ?2) "
        "UNION ALL SELECT 1 FROM memory_history WHERE reason = 'forget' AND after_event >= ?1 "
        "AND undone_at IS NULL AND turn != ?2"
    )
    if conn.execute(newer, (after, row["turn"])).fetchone():
        return None
    if conn.execute("SELECT 1 FROM task_events WHERE turn = ? AND undone_at IS NULL", (row["turn"],)).fetchone():
        return None  # it changed tasks too: the newest task turn is undone whole, its events with it
    return row["turn"]


def pending_event_changes(conn: sqlite3.Connection, turn: str) -> list[str]:
    """A line for each change to events an undo of `turn` would take back."""
    rows = conn.execute(
        "SELECT event_id, before, after FROM event_log WHERE turn = ? AND undone_at IS NULL ORDER BY id", (turn,)
    ).fetchall()
    out = []
    for r in rows:
        before, after = _load(r["before"]), _load(r["after"])
        verb = "removes" if before is None else "restores" if after is None else "puts back"
        out.append(f'undo {verb} event {r["event_id"]} "{(before or after or {}).get("title", "")}"')
    return out


def undo_events(conn: sqlite3.Connection, turn: str) -> list[str]:
    """Take back what a turn did to events, newest first; one line per event."""
    rows = conn.execute(
        "SELECT id, event_id, before, after FROM event_log WHERE turn = ? AND undone_at IS NULL ORDER BY id DESC",
        (turn,),
    ).fetchall()
    lines = []
    for r in rows:
        before, after = _load(r["before"]), _load(r["after"])
        _restore(conn, r["event_id"], before)
        if before is None:
            lines.append(f'removed event {r["event_id"]} "{(after or {}).get("title", "")}" (it was added)')
        elif after is None:
            lines.append(f'restored event {r["event_id"]} "{before["title"]}" (it was removed)')
        else:
            lines.append(f'event {r["event_id"]} "{before["title"]}" put back as it was')
    now = dt.datetime.now().isoformat(timespec="seconds")
    conn.executemany("UPDATE event_log SET undone_at = ? WHERE id = ?", [(now, r["id"]) for r in rows])
    return lines[::-1]


def redo_events(conn: sqlite3.Connection, turn: str) -> list[str]:
    """Make again what undo_events took back of a turn; one line per event."""
    rows = conn.execute(
        "SELECT id, event_id, after FROM event_log WHERE turn = ? AND undone_at IS NOT NULL ORDER BY id", (turn,)
    ).fetchall()
    for r in rows:
        _restore(conn, r["event_id"], _load(r["after"]))
    conn.executemany("UPDATE event_log SET undone_at = NULL WHERE id = ?", [(r["id"],) for r in rows])
    return [f"event {r['event_id']} made again" for r in rows]


def _load(text: str | None) -> dict[str, Any] | None:
    return json.loads(text) if text else None


def _restore(conn: sqlite3.Connection, event_id: int, row: dict[str, Any] | None) -> None:
    """Put an event back exactly as logged (None: remove it)."""
    conn.execute("DELETE FROM events WHERE id = ?", (event_id,))
    if row is not None:
        conn.execute(  # OR REPLACE: a copy of the same (source, uid) added since gives way to the one undone
            f"INSERT OR REPLACE INTO events (id, {', '.join(COLUMNS)}) VALUES (?, {', '.join('?' for _ in COLUMNS)})",
            [event_id, *(row[k] for k in COLUMNS)],
        )


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
