"""What the user tells of their time: an event (`add_event`, busy time) and a preference (`add_preference`).

    add_event(title, when)               busy time the user tells of: "tomorrow 2-3pm"
    add_preference(kind, when, tasks)    avoid / free / prefer, in words: "fridays", "wednesday afternoons"

Both are read from the user's words in code (timespans.py) and stored by storage/calendar.py, the
preferences with the turn that made them, so /undo takes them back.
"""

from __future__ import annotations

import datetime as dt
import secrets
from typing import Any

import icalendar

from planner.dates import DateError
from planner.storage.gate import Change, ChangeSet, Op, event_changes, one
from planner.timespans import span, weekly
from planner.tools.registry import ToolContext, ToolError, tool

KINDS = ("avoid", "free", "prefer")


@tool(
    {
        "title": {"type": "string"},
        "when": {"type": "string", "description": "In the user's words."},
    },
    required=("title", "when"),
    title="Add a calendar event",
    group="plan",
)
def add_event(ctx: ToolContext, title: str, when: str) -> dict[str, Any]:
    """Add an appointment or meeting to the calendar. Not for to-dos: use add_task."""
    if not title.strip():
        raise ToolError("title must not be empty")
    try:
        s = span(when, ctx.today())
    except DateError as e:
        raise ToolError(f"when: {e}") from None
    event = icalendar.Event()
    uid = f"said-{secrets.token_hex(8)}@planner"
    event.add("uid", uid)
    event.add("dtstamp", dt.datetime.now(dt.UTC))
    event.add("summary", title.strip()[:200])
    event.add("dtstart", s.start.date() if s.all_day else s.start)
    event.add("dtend", s.end.date() if s.all_day else s.end)
    cal = icalendar.Calendar()
    cal.add("prodid", "-//planner//said//EN")
    cal.add("version", "2.0")
    cal.add_component(event)
    said = [(uid, title.strip()[:200], cal)]
    ctx.commit(lambda conn: ChangeSet(tuple(event_changes(conn, "said", said, tool="add_event")[0])))
    read = f"{when.strip()!r} -> {s.start:%A %Y-%m-%d}" + ("" if s.all_day else f" {s.start:%H:%M}-{s.end:%H:%M}")
    out = {
        "event": {
            "title": title.strip(),
            "start": f"{s.start:%Y-%m-%d %H:%M}",
            "end": f"{s.end:%Y-%m-%d %H:%M}",
            "all_day": s.all_day,
        },
        "date_read_as": read,
    }
    if s.guessed:
        out["assumed"] = s.guessed
    return out


@tool(
    {
        "kind": {
            "type": "string",
            "enum": list(KINDS),
            "description": "avoid: no tasks then; free: extra time; prefer: the named tasks there.",
        },
        "when": {
            "type": "string",
            "description": "A time of week, in the user's words.",
        },
        "tasks": {"type": "string", "description": "A tag or list, for prefer."},
    },
    required=("kind", "when"),
    title="Keep a planning preference",
    group="plan",
)
def add_preference(ctx: ToolContext, kind: str, when: str, tasks: str | None = None) -> dict[str, Any]:
    """Keep a planning preference: a time to avoid, free time, or a time for some tasks."""
    try:
        w = weekly(when)
    except DateError as e:
        raise ToolError(f"when: {e}") from None
    tags = tuple(t.strip().lstrip("#+").lower() for t in (tasks or "").replace(",", " ").split() if t.strip())
    if kind == "prefer" and not tags:
        raise ToolError("prefer needs tasks: the tag or list of the tasks to put there")
    end = "00:00" if w.end == dt.time(23, 59) else f"{w.end:%H:%M}"
    said = f"{kind} {when.strip()}" + (f" for {' '.join(tags)}" if tags else "")
    values = {
        "kind": kind,
        "weekdays": ",".join(map(str, w.weekdays)),
        "start": f"{w.start:%H:%M}",
        "end": end,
        "tags": ",".join(tags),
        "said": said,
    }
    applied = ctx.commit(lambda conn: one(Change(Op.ADD, values=values, tool="add_preference", table="preferences")))
    pref_id = applied.row()["id"]
    days = ", ".join(("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[d] for d in w.weekdays) or "every day"
    return {
        "preference": {
            "id": pref_id,
            "kind": kind,
            "days": days,
            "from": f"{w.start:%H:%M}",
            "to": end,
            "tasks": list(tags),
        },
        "date_read_as": f"{when.strip()!r} -> {days} {w.start:%H:%M}-{end}",
    }
