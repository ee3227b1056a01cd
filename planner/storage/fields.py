"""The values a task holds, checked the same way whoever writes them (tools, shell, import, sync).

    column            value
    title             text, 1-500 characters
    status            open | done | cancelled
    due_date, _time   YYYY-MM-DD, HH:MM (local wall-clock time)
    start_date        YYYY-MM-DD: not before this day (hidden from "what's next" until then)
    priority          high | medium | low
    tags              up to 10 words (task_tags)
    list              a project: one short name per task, or none
    estimate_minutes  1 .. 43200
    parent_uid        the uid of the task this one is a step of (RELATED-TO in iCalendar)
    notes             the first note (free text, up to 4,000 characters)
    annotations       later notes, each dated: JSON [{"at": "YYYY-MM-DDTHH:MM", "text": ...}]
    recurrence        an RRULE
    ical              the to-do as another app last wrote it, so what the planner does not own is kept

`brief()` is a task as the model, MCP clients and JSON readers see it. Every
check raises TaskError with a sentence that says what to fix.
"""

from __future__ import annotations

import json
import re
from typing import Any

from planner.repeats import describe_repeat

MAX_TITLE = 500
MAX_NOTES = 4000
MAX_TAGS = 10
MAX_ANNOTATIONS = 50
PRIORITIES = ("high", "medium", "low")
STATUSES = ("open", "done", "cancelled")
LIST_NAME = re.compile(r"[^\s#+!~@:][^\n\r\t]{0,59}")


class TaskError(ValueError):
    """A task value storage will not write, or a task that is not there; the message says what to fix."""


Task = dict[str, Any]  # a tasks row as a dict, plus "tags" once tasks have tags


def check_title(value: str) -> str:
    """A task title that is not empty and not absurdly long."""
    title = value.strip()
    if not title:
        raise TaskError("title must not be empty")
    if len(title) > MAX_TITLE:
        raise TaskError(f"title is {len(title)} characters; keep it under {MAX_TITLE}")
    return title


def check_notes(value: str) -> str | None:
    """Notes on a task; an empty string clears them."""
    if len(value) > MAX_NOTES:
        raise TaskError(f"notes are {len(value)} characters; keep them under {MAX_NOTES}")
    return value.strip() or None


def check_list(value: str | None) -> str | None:
    """A list (project) name: a few words on one line; empty or "none" means no list."""
    if value is None:
        return None
    name = " ".join(str(value).split()).lstrip("#")
    if name.lower() in ("", "none", "no list", "inbox"):
        return None
    if not LIST_NAME.fullmatch(name):
        raise TaskError(f"list {name[:40]!r} is not a list name: up to 60 characters on one line")
    return name


def check_status(value: Any) -> str:
    """open, done or cancelled."""
    if value not in STATUSES:
        raise TaskError(f"status must be open, done or cancelled, not {str(value)[:40]!r}")
    return value


def clean_tags(value: Any) -> list[str]:
    """Tags from a list or a comma/space separated string: lower case, no '#' or '+', deduplicated."""
    if isinstance(value, str):
        if len(value) > MAX_TAGS * 50:
            raise TaskError(f"give at most {MAX_TAGS} tags")
        value = value.replace(",", " ").split()
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise TaskError("tags must be a list of words")
    if len(value) > MAX_TAGS * 5:  # checked before any work: an import may carry 100,000 tags
        raise TaskError(f"give at most {MAX_TAGS} tags, not {len(value)}")
    tags: dict[str, None] = {}  # ordered and linear to dedupe
    for t in value:
        tag = "-".join(t.strip().lstrip("#+@").lower().split())
        if not tag:
            continue
        if len(tag) > 40:
            raise TaskError(f"the tag {tag[:40]!r}... is too long; keep tags to one or two words")
        tags[tag] = None
    if len(tags) > MAX_TAGS:
        raise TaskError(f"give at most {MAX_TAGS} tags")
    return sorted(tags)


def annotations_of(task: Task) -> list[dict[str, str]]:
    """A task's later notes, oldest first: [{"at", "text"}]."""
    raw = task.get("annotations")
    if not raw:
        return []
    try:
        items = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return []  # written by another tool in a shape we do not read: shown as none, kept as it is
    return (
        [i for i in items if isinstance(i, dict) and isinstance(i.get("text"), str)] if isinstance(items, list) else []
    )


def check_annotations(items: Any) -> str | None:
    """Later notes as stored (JSON), checked: each a dict with a text and an ISO time."""
    if not items:
        return None
    if not isinstance(items, list) or len(items) > MAX_ANNOTATIONS:
        raise TaskError(f"annotations must be a list of at most {MAX_ANNOTATIONS} notes")
    out = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
            raise TaskError("each annotation needs a text")
        text = check_notes(item["text"])
        at = str(item.get("at") or "")[:16]
        if at and not re.fullmatch(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2})?", at):
            raise TaskError(f"annotation time {at!r} is not like 2026-12-01T09:30")
        out.append({"at": at, "text": text})
    return json.dumps(out, ensure_ascii=False)


def brief(task: Task | None) -> dict[str, Any]:
    """A task as the model sees it: always id, title, due_date and status; the rest only when set."""
    task = task or {}
    out = {k: task.get(k) for k in ("id", "title", "due_date", "status")}
    for key in ("due_time", "start_date", "priority", "tags", "list", "estimate_minutes", "notes"):
        if task.get(key):
            out[key] = task[key]
    later = annotations_of(task)
    if later:
        out["more_notes"] = [f"{a['at'][:10]}: {a['text']}" if a["at"] else a["text"] for a in later]
    if task.get("parent"):
        out["parent"] = task["parent"]  # the parent's id, as snapshot() and search() look it up
    if task.get("recurrence"):
        out["repeat"] = describe_repeat(task["recurrence"])
    if task.get("remind_at"):
        out["remind_at"] = task["remind_at"].replace("T", " ")
    return out


# What a person calls each column, in the words `undo`, `redo` and `show` use; bookkeeping is left out.
FIELD_WORDS = {
    "title": "title",
    "status": "status",
    "due": "due",
    "start_date": "start",
    "priority": "priority",
    "tags": "tags",
    "list": "list",
    "estimate_minutes": "estimate",
    "parent_uid": "step of",
    "notes": "notes",
    "recurrence": "repeat",
    "remind_at": "reminder",
    "scheduled_at": "pinned at",
}
BOOKKEEPING = {"id", "uid", "ical", "parent", "reminded_at", "completed_at", "created_at", "updated_at", "due_time"}


def _word(key: str, task: dict[str, Any]) -> str:
    """One field's value as a person reads it ("none" for no value)."""
    from planner.durations import short

    value = task.get(key)
    if key == "due":
        value = " ".join(x for x in (task.get("due_date"), task.get("due_time")) if x)
    elif key == "tags":
        value = " ".join(f"+{t}" for t in value or [])
    elif key == "recurrence" and value:
        value = describe_repeat(value)
    elif key == "estimate_minutes" and value:
        value = short(int(value))
    elif key in ("remind_at", "scheduled_at") and value:
        value = str(value).replace("T", " ")
    return str(value) if value not in (None, "", []) else "none"


def describe_changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What changed from one state of a task to another, in words: 'due 2026-12-04 → 2026-12-05',
    'note added "bring the card"'. Notes added or removed are said one by one, never as stored JSON."""
    keys = ["due" if k == "due_date" else k for k in [*before, *(k for k in after if k not in before)]]
    out = []
    for key in dict.fromkeys(keys):
        if key in BOOKKEEPING:
            continue
        if key == "annotations":
            old = [a["text"] for a in annotations_of(before)]
            new = [a["text"] for a in annotations_of(after)]
            out += [f"note added {json.dumps(t, ensure_ascii=False)}" for t in new if t not in old]
            out += [f"note removed {json.dumps(t, ensure_ascii=False)}" for t in old if t not in new]
            continue
        was, now = _word(key, before), _word(key, after)
        if was != now:
            out.append(f"{FIELD_WORDS.get(key, key.replace('_', ' '))} {was} → {now}")
    return out
