"""The task tools the model calls to add, find and change tasks: add, list, update, agenda, today.

Finishing, cancelling, reopening, deleting and the lists are in status_tools.py;
the machinery (registry, validation, dispatch) is in registry.py. Every write
goes through planner/storage/tasks.py, which logs each change for /undo in the
same transaction; values are checked in planner/storage/fields.py. Dates,
start dates, repeats, reminders and estimates arrive as the user's words and
are resolved here in code (dates.py, durations.py), never by the model.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from planner.dates import DateError, When, check_time, resolve, resolve_remind
from planner.durations import DurationError, minutes
from planner.repeats import first_due, parse_repeat
from planner.storage.fields import (
    PRIORITIES,
    Task,
    brief,
    check_list,
    check_notes,
    check_title,
    clean_tags,
)
from planner.storage.gate import Change, Op, one
from planner.storage.listing import SORTS, STATUS_FILTERS, lists, search, tag_names, waiting_count
from planner.storage.listing import agenda as agenda_of
from planner.storage.tasks import require
from planner.tools.registry import ToolContext, ToolError, tool
from planner.tools.titles import cut_day, cut_title

ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

# ---------------------------------------------------------------- reading the user's words


def read_date(ctx: ToolContext, value: str, name: str = "due_date") -> When:
    """A date phrase or YYYY-MM-DD resolved against today, or a ToolError listing the readings."""
    try:
        return resolve(value, ctx.today())
    except DateError as e:
        raise ToolError(f"{name}: {e}") from None


def read_due(
    ctx: ToolContext, due_date: str, due_time: str | None, notes: list[str], name: str = "due_date"
) -> tuple[str, str | None]:
    """(YYYY-MM-DD, HH:MM or None) from the model's date and time; notes gets the echo."""
    when = read_date(ctx, due_date, name)
    if not ISO_DATE.fullmatch(due_date.strip()):
        notes.append(when.describe(due_date))  # so the model and the user see what the phrase became
    time = when.time
    if due_time is not None:
        time = read_time(due_time)
    return when.date.isoformat(), time


def read_time(value: str) -> str | None:
    """A due time as HH:MM; an empty string clears it."""
    if not value.strip():
        return None
    try:
        return check_time(value)
    except DateError as e:
        raise ToolError(f"due_time: {e}") from None


def read_repeat(value: str) -> str | None:
    """A repeat phrase as an RRULE; an empty string clears it."""
    if not value.strip() or value.strip().lower() in ("none", "never", "no"):
        return None
    try:
        return parse_repeat(value)
    except DateError as e:
        raise ToolError(f"repeat: {e}") from None


def read_remind(
    ctx: ToolContext, value: str, due_date: str | None, due_time: str | None, notes: list[str] | None = None
) -> str | None:
    """A reminder phrase as a local time (YYYY-MM-DDTHH:MM); "none" or an empty string clears it.
    A moment already past is kept (it shows at once) and said in `notes`."""
    try:
        when = resolve_remind(value, ctx.today(), due_date, due_time)
    except DateError as e:
        raise ToolError(f"remind: {e}") from None
    if when is None:
        return None
    if notes is not None:  # what the words became, as for a date: the reminder is a guess the user sees
        notes.append(f"remind {value.strip()!r} -> {when:%A %Y-%m-%d %H:%M}")
    # Now, on the planner's today: a pretended one (--today) has its reminders judged against itself.
    now = dt.datetime.combine(ctx.today(), ctx.clock().astimezone().time().replace(tzinfo=None))
    if notes is not None and when < now:
        notes.append(f"the reminder time {when:%Y-%m-%d %H:%M} is already past, so it shows at once")
    return when.isoformat(timespec="minutes")


def read_estimate(value: str, notes: list[str]) -> int | None:
    """An estimate in words as minutes ("none" or empty clears it); notes gets the echo."""
    if not value.strip() or value.strip().lower() in ("none", "no", "unknown"):
        return None
    try:
        total = minutes(value)
    except DurationError as e:
        raise ToolError(f"estimate: {e}") from None
    if not re.fullmatch(r"\d+", value.strip()):
        notes.append(f"{value.strip()!r} -> {total} minutes")
    return total


def read_parent(ctx: ToolContext, conn: Any, parent: int, task_id: int | None = None) -> str | None:
    """The uid of the parent task given by id (0 clears it); a ToolError for itself or a loop."""
    if parent == 0:
        return None
    found = require(conn, parent)
    seen, uid = {task_id}, found["uid"]
    walk: Task | None = found
    while walk is not None:  # a task cannot be a subtask of one of its own subtasks
        if walk["id"] in seen:
            raise ToolError(f"task {parent} cannot be the parent: that would make a loop of subtasks")
        seen.add(walk["id"])
        walk = require(conn, walk["parent"]) if walk.get("parent") else None
    return uid


def _result(key: str, task: Task | None, notes: list[str], **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {key: brief(task), **extra}
    if notes:
        out["date_read_as"] = "; ".join(notes)
    return out


# Written for the model, each word earning its tokens (docs/evals.md has the count per tool): "only if"
# keeps a small model from filling fields nobody asked for.
ID = {"type": "integer", "description": "The task's id (list_tasks shows it)."}
DUE = "In the user's words or YYYY-MM-DD."
FIELDS = {
    "due_time": {"type": "string", "description": "HH:MM, only if a time was said."},
    "start_date": {"type": "string", "description": "Only if the user said when it can start."},
    "priority": {"type": "string", "enum": list(PRIORITIES), "description": "Only if the user said how important."},
    "tags": {"type": "array", "items": {"type": "string"}, "description": "Only labels the user gave."},
    "list": {"type": "string", "description": "Only if the user named a list."},
    "estimate": {"type": "string", "description": "Only if the user said how long it takes."},
    "parent": {"type": "integer", "description": "Only to make it a step of task with this id."},
    "notes": {"type": "string", "description": "Only details the user asked to keep."},
    "repeat": {"type": "string", "description": "Only if it repeats, in the user's words."},
    "remind": {"type": "string", "description": "Only if the user asked to be reminded, in their words."},
}

# ---------------------------------------------------------------- the tools


@tool(
    {
        "title": {"type": "string", "description": "The task in a few words, without its date."},
        "due_date": {"type": "string", "description": DUE},
        **FIELDS,
    },
    required=("title",),
    title="Add a task",
    group="add",
)
def add_task(
    ctx: ToolContext,
    title: str,
    due_date: str | None = None,
    due_time: str | None = None,
    start_date: str | None = None,
    priority: str | None = None,
    tags: list[str] | None = None,
    list: str | None = None,  # noqa: A002  (the name the model and JSON use)
    estimate: str | None = None,
    parent: int | None = None,
    notes: str | None = None,
    repeat: str | None = None,
    remind: str | None = None,
) -> dict[str, Any]:
    """Add one task (a to-do or reminder). Call once per task."""
    title, cut = cut_title(title, due_date=due_date, repeat=repeat, remind=remind)
    said: list[str] = []
    fields: dict[str, Any] = {"title": check_title(title), "priority": priority, "list": check_list(list)}
    if due_date:
        fields["due_date"], fields["due_time"] = read_due(ctx, due_date, due_time, said)
    elif due_time:
        fields["due_date"], fields["due_time"] = ctx.today().isoformat(), read_time(due_time)
    if start_date:
        fields["start_date"] = read_due(ctx, start_date, None, said, "start_date")[0]
    if estimate:
        fields["estimate_minutes"] = read_estimate(estimate, said)
    fields["notes"] = check_notes(notes) if notes else None
    fields["recurrence"] = read_repeat(repeat) if repeat else None
    if fields["recurrence"] and not fields.get("due_date"):
        # A repeat needs a first date: its first occurrence from today on, the series starting today.
        first = first_due(fields["recurrence"], ctx.today())
        if first is None:
            raise ToolError(f"repeat: the rule {fields['recurrence']} has no date from today on")
        fields["due_date"] = first.isoformat()
    if remind:
        fields["remind_at"] = read_remind(ctx, remind, fields.get("due_date"), fields.get("due_time"), said)
    if not cut:  # "Call the bank tomorrow" due tomorrow (the day in other words)
        fields["title"], cut = cut_day(fields["title"], fields.get("due_date"), ctx.today())

    def plan(conn: Any) -> Any:
        if parent:
            fields["parent_uid"] = read_parent(ctx, conn, parent)
        return one(Change(Op.ADD, values=fields, tags=tuple(clean_tags(tags or [])), tool="add_task"))

    task = ctx.commit(plan).row()
    return {**_result("added", task, said), **cut}


@tool(
    {
        "status": {"type": "string", "enum": list(STATUS_FILTERS), "description": "Default open."},
        "tag": {"type": "string"},
        "list": {"type": "string"},
        "priority": {"type": "string", "enum": list(PRIORITIES)},
        "due_before": {"type": "string", "description": "A date, inclusive."},
        "due_after": {"type": "string", "description": "A date, inclusive."},
        "overdue": {"type": "boolean"},
        "parent": {"type": "integer", "description": "A task id: its subtasks."},
        "text": {"type": "string", "description": "Words in the title or notes."},
        "sort": {"type": "string", "enum": list(SORTS), "description": "Default most urgent first."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Default 20."},
    },
    read_only=True,
    title="List tasks",
)
def list_tasks(
    ctx: ToolContext,
    status: str = "open",
    tag: str | None = None,
    list: str | None = None,  # noqa: A002
    priority: str | None = None,
    due_before: str | None = None,
    due_after: str | None = None,
    overdue: bool = False,
    parent: int | None = None,
    text: str | None = None,
    sort: str = "urgency",
    limit: int = 20,
) -> dict[str, Any]:
    """List the user's tasks with ids, titles, due dates and status. Give only filters the user asked for."""
    said: list[str] = []
    before = read_due(ctx, due_before, None, said, "due_before")[0] if due_before else None
    after = read_due(ctx, due_after, None, said, "due_after")[0] if due_after else None
    tags = clean_tags([tag]) if tag else []
    conn = ctx.store.conn()
    # An unknown list or tag is an error naming the real ones, never an empty list read as "no tasks".
    names = [x["list"] for x in lists(conn)] if list and check_list(list) else []
    if list and check_list(list) and check_list(list).lower() not in {n.lower() for n in names}:
        raise ToolError(_unknown("list", check_list(list), names))
    if tags and tags[0] not in (known := tag_names(conn)):
        raise ToolError(_unknown("tag", tags[0], known))
    parent_uid = require(conn, parent)["uid"] if parent else None
    found, total = search(
        conn,
        ctx.today(),
        status=status,
        tag=tags[0] if tags else None,
        list_name=check_list(list) if list else None,
        priority=priority,
        due_before=before,
        due_after=after,
        overdue=overdue,
        parent_uid=parent_uid,
        text=text.strip() if text and text.strip() else None,
        sort=sort,
        limit=limit,
    )
    out: dict[str, Any] = {"status": status, "count": total, "tasks": [brief(t) for t in found]}
    if said:
        out["date_read_as"] = "; ".join(said)
    if total > len(found):
        out["more"] = f"{total - len(found)} more not shown; narrow the filters or raise limit"
    if status == "open" and (n := waiting_count(conn, ctx.today())):
        out["waiting"] = f"{n} of these wait for their start date"
    return out


def _unknown(what: str, name: str, real: list[str]) -> str:
    if not real:
        return f"there is no {what} {name!r}: no task has a {what} yet; leave {what} out"
    return f"there is no {what} {name!r}; the {what}s are: {', '.join(real[:20])}"


@tool(
    {
        "id": ID,
        "title": {"type": "string", "description": "A new title."},
        "due_date": {"type": "string", "description": DUE + " Empty removes it."},
        **FIELDS,
        "priority": {
            "type": "string",
            "enum": [*PRIORITIES, "none"],
            "description": "Only if the user said; none clears.",
        },
        "add_note": {"type": "string", "description": "A note to add; the others stay."},
    },
    required=("id",),
    changes_existing=True,
    title="Change a task",
)
def update_task(
    ctx: ToolContext,
    id: int,  # noqa: A002
    title: str | None = None,
    due_date: str | None = None,
    due_time: str | None = None,
    start_date: str | None = None,
    priority: str | None = None,
    tags: list[str] | None = None,
    list: str | None = None,  # noqa: A002
    estimate: str | None = None,
    parent: int | None = None,
    notes: str | None = None,
    repeat: str | None = None,
    remind: str | None = None,
    add_note: str | None = None,
) -> dict[str, Any]:
    """Change a task: only the fields given change; an empty string clears one."""
    title, cut = cut_title(title, due_date=due_date, repeat=repeat, remind=remind)
    said: list[str] = []
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = check_title(title)
    if due_date is not None:
        if due_date.strip():
            changes["due_date"], changes["due_time"] = read_due(ctx, due_date, due_time, said)
        else:
            changes["due_date"] = changes["due_time"] = None
    elif due_time is not None:
        changes["due_time"] = read_time(due_time)
    if "title" in changes and not cut:
        changes["title"], cut = cut_day(changes["title"], changes.get("due_date"), ctx.today())
    if start_date is not None:
        changes["start_date"] = read_due(ctx, start_date, None, said, "start_date")[0] if start_date.strip() else None
    if priority is not None:
        changes["priority"] = None if priority == "none" else priority
    if list is not None:
        changes["list"] = check_list(list)
    if estimate is not None:
        changes["estimate_minutes"] = read_estimate(estimate, said)
    if notes is not None:
        changes["notes"] = check_notes(notes)
    if repeat is not None:
        changes["recurrence"] = read_repeat(repeat)
    new_tags = clean_tags(tags) if tags is not None else None
    if not changes and new_tags is None and remind is None and parent is None and not (add_note or "").strip():
        raise ToolError(
            "give at least one thing to change: title, due_date, due_time, start_date, priority, tags, list, "
            "estimate, parent, notes, add_note, repeat or remind"
        )
    # Planned inside the gate's transaction, and again if the user is asked first: from what was asked each time.
    asked, said_first = dict(changes), [*said]  # `list` is an argument here
    before: Task = {}

    def plan(conn: Any) -> Any:
        nonlocal before
        changes.clear()
        changes.update(asked)
        said[:] = said_first
        before = require(conn, id)
        if parent is not None:
            changes["parent_uid"] = read_parent(ctx, conn, parent, id)
        if changes.get("due_time") and not (changes.get("due_date") or before["due_date"]):
            changes["due_date"] = ctx.today().isoformat()
        if remind is not None:
            due = changes.get("due_date", before["due_date"])
            at = changes.get("due_time", before["due_time"])
            changes["remind_at"] = read_remind(ctx, remind, due, at, said) if remind.strip() else None
            changes["reminded_at"] = None
        elif before.get("remind_at") and ("due_date" in changes or "due_time" in changes):
            said.append(f"the reminder stays at {before['remind_at'].replace('T', ' ')}; set remind to move it")
        if add_note and add_note.strip():
            changes.update(added_note(before, add_note, ctx.today()))
        tags = tuple(new_tags) if new_tags is not None else None
        return one(Change(Op.EDIT, id, dict(changes), tags=tags, tool="update_task"))

    task = ctx.commit(plan).row()
    return {**_result("updated", task, said, before=brief(before)), **cut}


def added_note(task: Task, text: str, today: dt.date) -> dict[str, Any]:
    """The changes that add one note: a dated annotation, the first as every later one (`notes` is the text the
    task was written with; a note added later says when it was added)."""
    from planner.storage.fields import annotations_of, check_annotations

    note = check_notes(text)
    later = [
        *annotations_of(task),
        {"at": dt.datetime.combine(today, dt.datetime.now().time()).isoformat()[:16], "text": note},
    ]
    return {"annotations": check_annotations(later)}


@tool(
    {"days": {"type": "integer", "minimum": 1, "maximum": 60, "description": "Default 7."}},
    read_only=True,
    title="The agenda",
)
def agenda(ctx: ToolContext, days: int = 7) -> dict[str, Any]:
    """What is coming up: overdue tasks, then each day's tasks and events."""
    from planner.storage.calendar import between

    out = agenda_of(ctx.store.conn(), ctx.today(), days)
    start = dt.datetime.combine(ctx.today(), dt.time())
    busy = between(ctx.store.conn(), start, start + dt.timedelta(days=days + 1), busy_only=False)
    by_day: dict[str, list[dict[str, Any]]] = {}
    for e in busy:
        when = "all day" if e.all_day else f"{e.start:%H:%M}-{e.end:%H:%M}"
        by_day.setdefault(e.start.date().isoformat(), []).append({"title": e.title, "when": when})
    known = {d["date"]: d for d in out["days"]}
    for date, events in by_day.items():
        if date not in known:
            d = dt.date.fromisoformat(date)
            label = (
                "today" if d == ctx.today() else "tomorrow" if d == ctx.today() + dt.timedelta(days=1) else f"{d:%A}"
            )
            known[date] = {"date": date, "label": label, "tasks": []}
        known[date]["events"] = events
    out["days"] = [known[d] for d in sorted(known)]
    return out


@tool(read_only=True, title="Today's date")
def get_today(ctx: ToolContext) -> dict[str, Any]:
    """Today's date and weekday."""
    today = ctx.today()
    return {"date": today.isoformat(), "weekday": today.strftime("%A")}
