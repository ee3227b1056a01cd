"""The user's calendar as busy time: events, a kind of their own, never tasks (planning preferences: preferences.py).

    events(id, uid, source, title, first, last, transparent, all_day, ical)
        one row per calendar object: a VEVENT with its overrides (RECURRENCE-ID)
        and the time zones it names, as the file or the server had it; `first`
        and `last` bound its occurrences (last NULL: it repeats for ever), so a
        range is read without parsing everything

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

from planner.storage.fields import TaskError
from planner.storage.ical import zones_in
from planner.storage.owner import Owner

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
    kept_because: str = ""  # why they were kept, in words
    unchanged: int = 0  # events the source changed, left as they were because the change was not allowed
    dense: list[str] = field(default_factory=list)  # titles of events repeating by the second or minute


def source_changes(
    conn: sqlite3.Connection,
    source: str,
    items: list[tuple[str, str, icalendar.Calendar]],
    replace: bool = False,
    adopt: str | None = None,
    within: tuple[str, str] | None = None,
) -> tuple[list[tuple[str, int | None, dict[str, Any] | None]], Put]:
    """What storing a source's events would change, as (op, event id, columns) for the gate (gate.py), and
    the counts. The same uid from the same source is an edit (nothing when it is the same as stored); with
    `replace`, the source's events these items no longer hold are deletions; with `within` (local ISO start,
    end), only those that meet that window: a calendar read for a window says nothing of events outside it.
    `adopt`: an older source name whose events with these uids now belong to this one (events imported as
    "file")."""
    done, out = Put(), []
    if replace:
        for g in _gone(conn, source, items, within):
            out.append(("delete", g["id"], None))
            done.removed.append(g["title"])
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
                continue  # the same as stored: nothing to change
            out.append(("edit", row[0], values))
            done.updated += 1
        else:
            out.append(("add", None, values))
            done.added += 1
    return out, done


def vanishing(conn: sqlite3.Connection, source: str, items: list[tuple[str, str, icalendar.Calendar]]) -> list[str]:
    """A line for each event of `source` that `items` no longer holds (what store_source with replace removes),
    to ask about before the write."""
    return _lines(_gone(conn, source, items), source)


def _gone(
    conn: sqlite3.Connection,
    source: str,
    items: list[tuple[str, str, icalendar.Calendar]],
    within: tuple[str, str] | None = None,
) -> list[dict]:
    keep = {uid for uid, _, _ in items}
    rows = conn.execute("SELECT * FROM events WHERE source = ?", (source,))
    return [dict(r) for r in rows if r["uid"] not in keep and (within is None or _meets(r, within))]


def _meets(row: sqlite3.Row, within: tuple[str, str]) -> bool:
    """Whether a stored event has time in the window (local ISO strings). A repeat is stored with no end, so
    its occurrences are looked at: one whose rule ended before the window is not in it. One that cannot be
    expanded is not taken for gone."""
    if row["first"] >= within[1] or (row["last"] is not None and row["last"] <= within[0]):
        return False
    if row["last"] is not None:
        return True
    start, end = (dt.datetime.fromisoformat(x) for x in within)
    return bool(_expanded(row, start, end, lambda r: True))


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
    rows = conn.execute(
        "SELECT id, uid, source, title, ical, transparent FROM events WHERE first < ? AND COALESCE(last, ?) > ?"
        + (" AND transparent = 0" if busy_only else ""),
        (end.isoformat(timespec="minutes"), FOREVER, start.isoformat(timespec="minutes")),
    ).fetchall()
    out: list[Busy] = []
    for r in rows:
        out += _expanded(r, start, end, lambda r: [])
    return sorted(out, key=lambda e: (e.start, e.end, e.event_id))


def _expanded(r: sqlite3.Row, start: dt.datetime, end: dt.datetime, otherwise: Callable[[sqlite3.Row], Any]) -> Any:
    """One stored event's occurrences in [start, end); `otherwise(r)` when another app's object cannot be
    expanded (in a plan it takes no time)."""
    import recurring_ical_events  # loads only when a plan, an agenda or a calendar read needs it

    try:
        cal = icalendar.Calendar.from_ical(r["ical"])
        if _rule_freq(cal) in DENSE:  # by the second or minute: busy while it runs, as one span
            return _span(r, cal, start, end)
        return _occurrences(r, recurring_ical_events.of(cal), start, end)
    except Exception:
        return otherwise(r)


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


# ---------------------------------------------------------------- the gate's writers (gate.py alone calls them)

MIRROR = "mirror"  # the tool of a write that mirrors a server's calendar: logged with no turn, never undone


def _apply(conn: sqlite3.Connection, c: Any, turn: str, log: bool) -> int | None:
    """One planned change to an event (op, key, values), logged in event_log unless an undo marks it."""
    op, key, values = c.op.value, c.key, dict(c.values) if c.values is not None else None
    before = _event_row(conn, key) if key is not None else None
    if op == "add":
        key = conn.execute(
            f"INSERT INTO events ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)})",
            [values[k] for k in COLUMNS],  # type: ignore[index]
        ).lastrowid
    elif op == "edit":
        merged = {**(before or {}), **(values or {})}
        sets = ", ".join(f"{k} = ?" for k in COLUMNS)
        conn.execute(f"UPDATE events SET {sets} WHERE id = ?", [merged[k] for k in COLUMNS] + [key])
    elif op == "delete":
        conn.execute("DELETE FROM events WHERE id = ?", (key,))
    else:  # put: exactly this row, or none (undo, redo)
        _restore(conn, key, values)  # type: ignore[arg-type]
    if log:
        _log(conn, None if c.tool == MIRROR else turn, key, before)  # type: ignore[arg-type]
    return key if op != "delete" and (op != "put" or values is not None) else None


def _line(op: str, key: int | None, before: dict[str, Any] | None, after: dict[str, Any] | None) -> str:
    """An event's change in words, for a question."""
    row = before or after or {}
    when = str(row.get("first") or "").replace("T", " ")
    what = f'event {key} "{row.get("title", "")}"' + (f" ({when})" if when else "")
    if before is None:
        return f"add {what}" if op == "add" else f"put back {what}"
    return f"DELETE {what}" if after is None else f"change {what}"


DROPPED = "dropped"  # undone_at of a row a redo found already there: neither undone nor made again, for good


def _mark(conn: sqlite3.Connection, kind: str, ids: list[int]) -> None:
    """Mark event_log rows undone, made again, or dropped (a redo found the same event already there)."""
    now = {"undo": dt.datetime.now().isoformat(timespec="microseconds"), "drop": DROPPED}.get(kind)  # undo_stamp
    conn.executemany("UPDATE event_log SET undone_at = ? WHERE id = ?", [(now, i) for i in ids])


def last_undone(conn: sqlite3.Connection) -> tuple[str, str] | None:
    """The request whose events were undone last, and when: (turn, undone_at), or None."""
    row = conn.execute(
        "SELECT turn, undone_at FROM event_log WHERE turn IS NOT NULL AND undone_at IS NOT NULL AND undone_at != ? "
        "ORDER BY undone_at DESC, id LIMIT 1",
        (DROPPED,),
    ).fetchone()
    return (row["turn"], row["undone_at"]) if row else None


EVENTS = Owner("events", _event_row, _apply, _line, _mark)


def listing(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every event, soonest first: id, title, first, last (None: it repeats for ever), source, repeats."""
    rows = conn.execute("SELECT id, title, first, last, source, all_day, ical FROM events ORDER BY first, id")
    out = []
    for r in rows:
        item = {k: r[k] for k in ("id", "title", "first", "last", "source", "all_day")}
        item["repeats"] = "RRULE" in r["ical"] or "RDATE" in r["ical"]
        out.append(item)
    return out


def undo_changes(
    conn: sqlite3.Connection, turn: str
) -> tuple[list[tuple[int, dict[str, Any] | None]], list[int], list[str]]:
    """What undoing a turn's events would write: (event id, the row to put back or None) newest first, the
    event_log rows to mark, and a line per event."""
    rows = conn.execute(
        "SELECT id, event_id, before, after FROM event_log WHERE turn = ? AND undone_at IS NULL ORDER BY id DESC",
        (turn,),
    ).fetchall()
    puts, lines = [], []
    for r in rows:
        before, after = _load(r["before"]), _load(r["after"])
        puts.append((r["event_id"], before))
        if before is None:
            lines.append(f'removed event {r["event_id"]} "{(after or {}).get("title", "")}" (it was added)')
        elif after is None:
            lines.append(f'restored event {r["event_id"]} "{before["title"]}" (it was removed)')
        else:
            lines.append(f'event {r["event_id"]} "{before["title"]}" put back as it was')
    return puts, [r["id"] for r in rows], lines[::-1]


def redo_changes(
    conn: sqlite3.Connection, turn: str
) -> tuple[list[tuple[int, dict[str, Any] | None]], list[int], list[int], list[str]]:
    """What making a turn's undone events again would write: (event id, row or None), the log rows made
    again, those dropped (the same event already there), lines."""
    rows = conn.execute(
        "SELECT id, event_id, before, after FROM event_log WHERE turn = ? AND undone_at IS NOT NULL "
        "AND undone_at != ? ORDER BY id",
        (turn, DROPPED),
    ).fetchall()
    seen: set[int] = set()
    for r in rows:  # nothing redone over a change made since the undo: the newer edit wins, as for tasks
        if r["event_id"] in seen:
            continue
        seen.add(r["event_id"])
        now, before = _event_row(conn, r["event_id"]), _load(r["before"])
        if (now is None) != (before is None) or (now and before and any(now[k] != before.get(k) for k in COLUMNS)):
            title = (now or before or {}).get("title", "")
            raise TaskError(
                f'event {r["event_id"]} "{title}" changed after the undo, so redo would overwrite it; '
                "nothing was redone"
            )
    puts, logged, dropped, said = [], [], [], []
    for r in rows:
        row = _load(r["after"])
        other = (
            row
            and conn.execute(  # the same event came back since (the file imported again): kept as is
                "SELECT id FROM events WHERE source = ? AND uid = ? AND id != ?",
                (row["source"], row["uid"], r["event_id"]),
            ).fetchone()
        )
        if other:  # dropped: no later undo says it removed it, no later redo tries it again
            said.append(f'event {r["event_id"]} "{row["title"]}" is already there (event {other[0]}); not made again')
            dropped.append(r["id"])
            continue
        puts.append((r["event_id"], row))
        logged.append(r["id"])
        said.append(f"event {r['event_id']} made again" if row else f"event {r['event_id']} removed again")
    return puts, logged, dropped, said


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
