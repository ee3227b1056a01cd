"""Taskwarrior's JSON (`task export`, `task import`), read and written, so a Taskwarrior user can move in and out.

    Taskwarrior           task field
    description           title
    status                pending -> open, completed -> done, deleted -> cancelled (kept, never open),
                          waiting -> open with a start date, recurring -> the series (see below)
    entry, end            created_at, completed_at
    due                   due_date (and due_time unless it is local midnight, Taskwarrior's "a day")
    scheduled, wait       start_date (the later of the two; written back as they came, or as wait)
    project               list
    tags                  tags
    priority H M L        high, medium, low
    annotations           notes (the first) and the dated notes after it
    recur                 repeat (daily, weekly, 2wk, monthly, quarterly, yearly, weekdays, ...)
    uuid                  uid
    depends               parent: a task that depends on exactly one other is that one's subtask
    estimate (a UDA)      estimate_minutes
    planner_rrule (UDA)   the repeat rule whole, when recur cannot say it (every monday and thursday,
                          monthly on the 15th): recur holds Taskwarrior's nearest, the UDA the rule
    planner_remind (UDA)  remind_at (Taskwarrior has no reminders)
    planner_uid (UDA)     the planner's uid, when it is not a uuid

`task import` keeps attributes it has no definition for (orphan UDAs) and
`task export` gives them back, so a round trip through Taskwarrior keeps them.

A recurring series is a template (status recurring) and its instances
(pending, with `parent` = the template). The planner keeps a series as one
open task with a rule, so the earliest pending instance becomes that task and
the template is not imported; a template without instances is. Every other
attribute (until, modified, mask, imask, UDAs) is kept in the task's `extra`
and written back by `write`, which `task import` reads.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import uuid
from typing import Any

from planner.dates import MAX_YEAR, MIN_YEAR
from planner.durations import DurationError, iso, minutes, short
from planner.storage import jsonrows

OWN = {
    "description",
    "status",
    "entry",
    "end",
    "due",
    "scheduled",
    "wait",
    "project",
    "tags",
    "priority",
    "annotations",
    "recur",
    "uuid",
    "estimate",
    "id",
    "urgency",
    "parent",
    "depends",
    "planner_uid",
    "planner_rrule",
    "planner_remind",
}
PRIORITY_IN = {"H": "high", "M": "medium", "L": "low"}
PRIORITY_OUT = {v: k for k, v in PRIORITY_IN.items()}
NAMED = {
    "daily": "FREQ=DAILY",
    "day": "FREQ=DAILY",
    "weekdays": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
    "weekly": "FREQ=WEEKLY",
    "week": "FREQ=WEEKLY",
    "biweekly": "FREQ=WEEKLY;INTERVAL=2",
    "fortnight": "FREQ=WEEKLY;INTERVAL=2",
    "monthly": "FREQ=MONTHLY",
    "month": "FREQ=MONTHLY",
    "bimonthly": "FREQ=MONTHLY;INTERVAL=2",
    "quarterly": "FREQ=MONTHLY;INTERVAL=3",
    "semiannual": "FREQ=MONTHLY;INTERVAL=6",
    "yearly": "FREQ=YEARLY",
    "annual": "FREQ=YEARLY",
    "year": "FREQ=YEARLY",
}
UNITS = {
    "d": "DAILY",
    "day": "DAILY",
    "days": "DAILY",
    "w": "WEEKLY",
    "wk": "WEEKLY",
    "wks": "WEEKLY",
    "week": "WEEKLY",
    "weeks": "WEEKLY",
    "mo": "MONTHLY",
    "mos": "MONTHLY",
    "month": "MONTHLY",
    "months": "MONTHLY",
    "q": "QUARTER",
    "qtr": "QUARTER",
    "y": "YEARLY",
    "yr": "YEARLY",
    "yrs": "YEARLY",
    "year": "YEARLY",
    "years": "YEARLY",
}


def looks_like(head: str) -> bool:
    """Whether a JSON file's start is Taskwarrior's (a "description" and a "uuid" or "entry")."""
    return '"description"' in head and ('"uuid"' in head or '"entry"' in head) and '"format"' not in head


def _time(value: Any) -> dt.datetime | None:
    """A Taskwarrior time (20261201T100000Z, or ISO) as local time; None if there is none or it is unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        when = dt.datetime.strptime(value, "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        try:
            when = dt.datetime.fromisoformat(value)
        except ValueError:
            return None
    if not MIN_YEAR <= when.year <= MAX_YEAR:
        return None  # a year the planner does not keep (near year 1 or 9999, where an offset overflows)
    return when.astimezone().replace(tzinfo=None) if when.tzinfo else when


def _read_time(t: dict[str, Any], key: str) -> dt.datetime | None:
    """A time attribute of a row: None when absent; a ValueError naming it when it is there but unreadable."""
    value = t.get(key)
    if value in (None, ""):
        return None
    when = _time(value)
    if when is None:
        raise ValueError(f"its {key} {str(value)[:40]!r} is not a Taskwarrior date in {MIN_YEAR}-{MAX_YEAR}")
    return when


def _out(local: str | None, date_only: bool = False) -> str | None:
    """A stored local time (or date) in Taskwarrior's form, UTC."""
    if not local:
        return None
    when = dt.datetime.fromisoformat(local if not date_only else local[:10])
    return when.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")


def recur_rule(value: str) -> str:
    """Taskwarrior's recur (weekly, 2wk, P1M, quarterly) as an RRULE; a ValueError when it has no such form."""
    v = value.strip().lower()
    if v in NAMED:
        return NAMED[v]
    m = re.fullmatch(r"(\d{1,3})\s*([a-z]+)", v) or re.fullmatch(r"p(\d{1,3})([dwmy])", v)
    if m and (m[2] in UNITS or m[2] == "m"):
        n, unit = int(m[1]), UNITS.get(m[2], "MONTHLY")
        if n < 1:
            raise ValueError(f"the repeat {value[:30]!r} has an interval of 0: it would never come round again")
        if unit == "QUARTER":
            n, unit = n * 3, "MONTHLY"
        return f"FREQ={unit}" + (f";INTERVAL={n}" if n > 1 else "")
    raise ValueError(f"the repeat {value[:30]!r} has no planner form (daily, weekly, 2wk, monthly, yearly)")


STATUSES = ("pending", "completed", "deleted", "waiting", "recurring")


def _check_types(t: dict[str, Any]) -> None:
    """A ValueError naming the first attribute Taskwarrior would never write in this shape."""
    status = t.get("status", "pending")
    if status not in STATUSES:
        raise ValueError(f"its status must be one of {', '.join(STATUSES)}, not {str(status)[:40]!r}")
    for key in ("description", "project", "uuid", "planner_uid", "recur", "priority", "parent"):
        if t.get(key) is not None and not isinstance(t[key], str):
            raise ValueError(f"its {key} must be text, not {type(t[key]).__name__}")
    for key in ("tags", "annotations"):
        if t.get(key) is not None and not isinstance(t[key], list):
            raise ValueError(f"its {key} must be a list, not {type(t[key]).__name__}")
    if not isinstance(t.get("depends"), str | list | None):
        raise ValueError(f"its depends must be a list of uuids, not {type(t['depends']).__name__}")


def _depends(t: Any) -> list[str]:
    """The uuids a row depends on (a list, or Taskwarrior 2.5's comma-separated text); [] when odd."""
    deps = t.get("depends") if isinstance(t, dict) else None
    if isinstance(deps, str):
        return [d for d in deps.split(",") if d]
    return [d for d in deps if isinstance(d, str)] if isinstance(deps, list) else []


def _row(t: dict[str, Any]) -> dict[str, Any]:
    _check_types(t)
    status = t.get("status", "pending")
    row: dict[str, Any] = {
        "title": t.get("description"),
        "status": {"completed": "done", "deleted": "cancelled"}.get(status, "open"),
        "uid": str(t.get("planner_uid") or t.get("uuid") or ""),
        "list": t.get("project"),
        "tags": t.get("tags") or [],
        "priority": PRIORITY_IN.get(str(t.get("priority") or "")),
    }
    for key, name in (("entry", "created_at"), ("end", "completed_at")):
        if (when := _read_time(t, key)) is not None:
            row[name] = when.isoformat(timespec="seconds")
    if (due := _read_time(t, "due")) is not None:
        row["due_date"] = due.date().isoformat()
        if due.time() != dt.time():
            row["due_time"] = f"{due:%H:%M}"
    starts = [w for w in (_read_time(t, "scheduled"), _read_time(t, "wait")) if w is not None]
    if starts:
        row["start_date"] = max(starts).date().isoformat()
    notes = [a for a in t.get("annotations") or [] if isinstance(a, dict) and isinstance(a.get("description"), str)]
    if notes:
        row["notes"] = notes[0]["description"]
        row["annotations"] = [
            {"at": (w.isoformat(timespec="minutes") if (w := _time(a.get("entry"))) else ""), "text": a["description"]}
            for a in notes[1:]
        ]
    if t.get("recur"):
        row["repeat"] = recur_rule(str(t["recur"]))
        if isinstance(t.get("planner_rrule"), str) and _recur_out(t["planner_rrule"]) == t["recur"]:
            row["repeat"] = t["planner_rrule"]  # the whole rule, while recur is still what it was written as
    if (remind := _read_time(t, "planner_remind")) is not None:
        row["remind_at"] = remind.isoformat(timespec="minutes")
    if t.get("estimate"):
        try:
            row["estimate_minutes"] = minutes(str(t["estimate"]))
        except DurationError:
            pass  # kept in extra as written
    extra = {k: v for k, v in t.items() if k not in OWN or k in ("parent", "depends", "scheduled", "wait")}
    if t.get("estimate") and "estimate_minutes" not in row:
        extra["estimate"] = t["estimate"]
    if extra:
        row["extra"] = extra
    return row


def parse(text: str) -> list[tuple[str, Any]]:
    """(where, row or ValueError) for each task of `task export` (a JSON array, or one object per line)."""
    items = jsonrows.elements(text, key=None)
    instances: dict[str, list[dict[str, Any]]] = {}
    for t in items:
        if isinstance(t, dict) and isinstance(t.get("parent"), str) and t.get("status") in ("pending", "waiting"):
            instances.setdefault(t["parent"], []).append(t)
    first = {p: min(ts, key=lambda t: str(t.get("due") or "")) for p, ts in instances.items()}
    depended: dict[str, list[str]] = {}  # uuid -> the tasks that depend on it
    for t in items:
        for d in _depends(t):  # the dependant's uid as the planner reads it (its planner_uid, else its uuid)
            depended.setdefault(d, []).append(str(t.get("planner_uid") or t.get("uuid")))
    rows: list[tuple[str, Any]] = []
    for n, t in enumerate(items, 1):
        where = f"task {n} ({str(t.get('description'))[:40]!r})" if isinstance(t, dict) else f"task {n}"
        if isinstance(t, ValueError):
            rows.append((where, t))
            continue
        if not isinstance(t, dict):
            rows.append((where, ValueError("each task must be an object")))
            continue
        if t.get("status") == "recurring" and str(t.get("uuid")) in instances:
            continue  # the series is its earliest pending instance, which carries the rule
        try:
            row = _row(t)
            if t.get("parent") and first.get(str(t["parent"])) is not t:
                row.pop("repeat", None)  # a later instance already generated: a dated task of its own
            parents = depended.get(str(t.get("uuid")), [])
            if len(parents) == 1:
                row["parent"] = parents[0]
        except (ValueError, TypeError, OverflowError) as e:
            rows.append((where, e if isinstance(e, ValueError) else ValueError(f"it cannot be read ({e})")))
            continue
        rows.append((where, row))
    return rows


def _uuid(uid: str) -> str:
    """A Taskwarrior uuid for a planner uid: the uid itself when it is one, else one made from it."""
    try:
        return str(uuid.UUID(uid))
    except ValueError:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"planner:{uid}"))


def write(tasks: list[dict[str, Any]]) -> str:
    """Every task as `task import` reads it: a JSON array, one task per line."""
    children: dict[str, list[str]] = {}
    for t in tasks:
        if t.get("parent"):
            children.setdefault(t["parent"], []).append(_uuid(t["uid"]))
    out = []
    for t in tasks:
        item: dict[str, Any] = dict(t.get("extra") or {})
        item.pop("parent", None)  # an instance's old template: the planner's series is its own
        item.update({"uuid": _uuid(t["uid"]), "description": t["title"]})
        if item["uuid"] != t["uid"]:
            item["planner_uid"] = t["uid"]  # kept by Taskwarrior as an attribute, so a round trip keeps the uid
        item["status"] = {"done": "completed", "cancelled": "deleted"}.get(t["status"], "pending")
        if t["status"] == "open" and t.get("repeat"):
            item["status"] = "recurring"  # a template: Taskwarrior makes the instances
            item["recur"] = _recur_out(t["repeat"])
            item["mask"] = item.get("mask", "")
        item.pop("planner_rrule", None)
        if t.get("repeat") and _rule_of(_recur_out(t["repeat"])) != t["repeat"]:
            item["planner_rrule"] = t["repeat"]  # recur says less (BYDAY, BYMONTHDAY): the rule whole, as a UDA
        item.pop("planner_remind", None)
        if t.get("remind_at"):
            item["planner_remind"] = _out(t["remind_at"])
        for key, value in (("entry", _out(t.get("created_at"))), ("end", _out(t.get("completed_at")))):
            if value:
                item[key] = value
        if t.get("due_date"):
            item["due"] = _out(f"{t['due_date']}T{t.get('due_time') or '00:00'}")
        item.pop("scheduled", None)
        item.pop("wait", None)
        if t.get("start_date"):
            came = {k: v for k, v in (t.get("extra") or {}).items() if k in ("scheduled", "wait")}
            starts = [w for w in (_time(v) for v in came.values()) if w is not None]
            if starts and max(starts).date().isoformat() == t["start_date"]:
                item.update(came)  # the start date as it came: Taskwarrior's scheduled and wait as they were
            else:
                item["wait"] = _out(t["start_date"], date_only=True)  # not before: hidden until then, as here
        if t.get("list"):
            item["project"] = t["list"]
        if t.get("tags"):
            item["tags"] = t["tags"]
        if t.get("priority"):
            item["priority"] = PRIORITY_OUT[t["priority"]]
        if t.get("estimate_minutes"):
            item["estimate"] = iso(t["estimate_minutes"])
        notes = ([{"at": (t.get("created_at") or "")[:16], "text": t["notes"]}] if t.get("notes") else []) + list(
            t.get("annotations") or []
        )
        if notes:
            item["annotations"] = [
                {
                    "entry": _out(a["at"]) if a.get("at") else item.get("entry") or _out(dt.datetime.now().isoformat()),
                    "description": a["text"],
                }
                for a in notes
            ]
        _worked(item, t.get("worklog"))
        if t["uid"] in children:
            item["depends"] = children[t["uid"]]
        out.append(json.dumps(item, ensure_ascii=False))
    return "[\n" + ",\n".join(out) + "\n]\n"


def _rule_of(recur: str) -> str | None:
    """What Taskwarrior's recur reads back as, or None when it has no planner form."""
    try:
        return recur_rule(recur)
    except ValueError:
        return None


def _worked(item: dict[str, Any], stretches: list[dict[str, Any]] | None) -> None:
    """Tracked time as Taskwarrior keeps it: `start` while the clock runs, an annotation per stretch done."""
    for s in stretches or ():
        if s["end"] is None:
            item["start"] = _out(s["start"])
            continue
        note = (
            f"worked {s['start'].replace('T', ' ')}-{s['end'][11:]} ({short(s['minutes']) if s['minutes'] else '0m'})"
        )
        item.setdefault("annotations", []).append({"entry": _out(s["end"]), "description": note})


def _recur_out(rule: str) -> str:
    """An RRULE in Taskwarrior's recur words where it has one (weekly, 2wk, weekdays), else days or months."""
    for word, value in NAMED.items():
        if value == rule and word not in ("day", "week", "month", "year", "fortnight", "annual"):
            return word
    parts = dict(p.partition("=")[::2] for p in rule.split(";"))
    n = parts.get("INTERVAL", "1")
    unit = {"DAILY": "d", "WEEKLY": "wk", "MONTHLY": "mo", "YEARLY": "y"}.get(parts.get("FREQ", ""))
    return f"{n}{unit}" if unit else rule  # a rule with no Taskwarrior form is written as it is
