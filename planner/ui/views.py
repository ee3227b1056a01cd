"""The task list and the agenda as the user sees them, in plain text that fits the terminal.

Built from the tools' own results (`list_tasks`, `agenda`), so /tasks, `tasks`,
/agenda, `agenda` and the full terminal's rich tables (tables.py) all show the
same rows. A task in the table's notation, the one the shell reads too:

      7  call the dentist   2026-12-04 15:00  open  !high +health #personal ~30m (every 6 months)

`where` says how a hint names a command: "/tasks" in a session, "tasks" in the shell.
A view returns its text or rows; one that cannot be made raises a Failure
(outcomes.py) that says why, with the exit status the shell gives it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from planner.durations import short
from planner.storage.fields import brief
from planner.storage.listing import search
from planner.tools import ToolContext, ToolError, dispatch
from planner.ui.layout import Column, fit, width
from planner.ui.outcomes import Failure, Usage, UsageError
from planner.ui.quickadd import NotationError, filters
from planner.ui.text import inline, plural

SHOWN = 100  # rows a table shows before it says how many more


def when(t: dict[str, Any]) -> str:
    """A task's due date and time, as one cell."""
    return " ".join(x for x in (t.get("due_date"), t.get("due_time")) if x)


def notes_marker(t: dict[str, Any]) -> str:
    """ " [2]" after a title with notes (how many), as Taskwarrior counts annotations; `show ID` prints them."""
    n = (1 if t.get("notes") else 0) + len(t.get("more_notes") or [])
    return f" [{n}]" if n else ""


def extras(t: dict[str, Any]) -> str:
    """A task's priority, tags, list, estimate, start, parent, repeat and reminder, in the shell's notation."""
    bits = [f"!{t['priority']}"] if t.get("priority") else []
    bits += [f"+{tag}" for tag in t.get("tags") or []]
    if t.get("list"):
        bits.append("#" + "-".join(t["list"].split()))
    if t.get("estimate_minutes"):
        bits.append(f"~{short(t['estimate_minutes'])}")
    if t.get("start_date"):
        bits.append(f"start:{t['start_date']}")
    if t.get("parent"):
        bits.append(f"(step of {t['parent']})")
    if t.get("repeat"):
        bits.append(f"({t['repeat']})")
    if t.get("remind_at"):
        bits.append(f"remind:{t['remind_at'].replace(' ', 'T')}")
    return " ".join(bits)


@dataclass
class Listing:
    """The rows of a task table, and the lines under it."""

    tasks: list[dict[str, Any]] = field(default_factory=list)
    footer: list[str] = field(default_factory=list)
    status: str = "open"


def listing(ctx: ToolContext, words: list[str], limit: int = SHOWN, where: str = "/tasks") -> Listing:
    """The tasks the words ask for ([status] [+tag #list !high due:... start:... words]); UsageError for words
    that are not a filter, Failure when the tasks cannot be read."""
    try:
        args = filters(words, ctx.today())
    except NotationError as e:
        raise UsageError(str(e)) from None
    status = args.setdefault("status", "open")
    shell_only = {k: args.pop(k) for k in ("start_before",) if k in args}
    result, ok = dispatch(ctx, "list_tasks", {**args, "limit": min(limit, 100)})
    if not ok:
        raise Failure(result["error"])
    tasks = result["tasks"]
    if limit > 100 and result["count"] > 100:  # the tool gives the model 100 at most; the shell may ask for more
        found, _ = search(ctx.store.conn(), ctx.today(), limit=limit, **_search_args(args))
        tasks = [brief(t) for t in found]
    if "start_before" in shell_only:
        tasks = [t for t in tasks if t.get("start_date") and t["start_date"] <= shell_only["start_before"]]
    view = Listing(tasks=tasks, status=status)
    if result["count"] > len(tasks) and not shell_only:
        view.footer.append(f"… {result['count'] - len(tasks)} more: narrow with filters, or {where} --limit N")
    return view


def _search_args(args: dict[str, Any]) -> dict[str, Any]:
    names = {
        "tag": "tag",
        "list": "list_name",
        "priority": "priority",
        "due_before": "due_before",
        "due_after": "due_after",
        "overdue": "overdue",
        "text": "text",
        "status": "status",
    }
    return {names[k]: (v.lower() if k == "tag" else v) for k, v in args.items() if k in names}


def status_cell(t: dict[str, Any], today: str) -> str:
    """open, OVERDUE, done, cancelled, or waiting (not before its start date)."""
    if t["status"] == "open" and t.get("due_date") and t["due_date"] < today:
        return "OVERDUE"
    if t["status"] == "open" and t.get("start_date") and t["start_date"] > today:
        return "waiting"
    return t["status"]


def tasks_text(
    ctx: ToolContext, words: list[str], limit: int = SHOWN, where: str = "/tasks", room: int | None = None
) -> str:
    """The task table of /tasks and `tasks`, fitted to the terminal: the title gets the room first."""
    view = listing(ctx, words, limit, where)
    if not view.tasks:
        return f"no {'' if view.status == 'all' else view.status + ' '}tasks" + (" match" if words else "")
    today = ctx.today().isoformat()
    rows = [
        [str(t["id"]), inline(t["title"]) + notes_marker(t), when(t), status_cell(t, today), inline(extras(t))]
        for t in view.tasks
    ]
    columns = [
        Column("id", max(len(r[0]) for r in rows), align=">"),
        Column("title", 12, grow=True),
        Column("due", 10),
        Column("status", 4),
        Column("more", 4, last=True),
    ]
    return "\n".join(fit(columns, rows, room) + view.footer)


Section = tuple[str, list[dict[str, Any]]]  # a heading ("today 2026-12-01") and its tasks


def agenda_sections(ctx: ToolContext, arg: str, where: str = "/tasks") -> tuple[str, list[Section], list[str]]:
    """/agenda as a title, sections and footer lines, shared by the text and the table; Usage for a bad DAYS."""
    if arg and not arg.isdigit():
        raise Usage(f"{'/' if where.startswith('/') else ''}agenda [DAYS]")
    result, ok = dispatch(ctx, "agenda", {"days": int(arg)} if arg else {})
    if not ok:
        raise UsageError(result["error"])
    sections: list[Section] = []
    if result["overdue"]:
        sections.append(("overdue", [{**t, "note": f"(was due {t['due_date']})"} for t in result["overdue"]]))
    for day in result["days"]:
        events = [{"id": "", "title": e["title"], "due_time": e["when"], "event": True} for e in day.get("events", [])]
        sections.append((f"{day['label']} {day['date']}", events + day["tasks"]))
    footer = [] if sections else ["  nothing due"]
    if result["without_date"]:
        footer.append(f"and {plural(result['without_date'], 'open task')} without a date ({where})")
    if result.get("more"):
        footer.append(f"… {result['more']} more")
    return f"agenda from {result['today']}", sections, footer


def agenda_text(ctx: ToolContext, arg: str, where: str = "/tasks", room: int | None = None) -> str:
    """The agenda of /agenda and `agenda`, fitted to the terminal."""
    title, sections, footer = agenda_sections(ctx, arg, where)
    out = [title]
    columns = [Column("id", 4, align=">", pad=4), Column("title", 12, grow=True), Column("more", 4, last=True)]
    for heading, tasks in sections:
        rows = [
            [
                str(t["id"]),
                (f"{t['due_time']} " if t.get("due_time") else "") + inline(t["title"]) + notes_marker(t),
                "(event)" if t.get("event") else inline("  ".join(x for x in (extras(t), t.get("note")) if x)),
            ]
            for t in tasks
        ]
        out += [heading, *("  " + line for line in fit(columns, rows, (room or width()) - 2, header=False))]
    return "\n".join(out + footer)


def lists_text(ctx: ToolContext) -> str:
    """The lists with their counts (/lists and `lists`)."""
    result, _ = dispatch(ctx, "list_lists", {})
    if not result["lists"]:
        return "no lists yet: add a task with #NAME to start one"
    rows = [[r["list"], str(r["open"]), str(r["tasks"])] for r in result["lists"]]
    columns = [Column("list", 8, grow=True), Column("open", 4, align=">"), Column("all", 3, align=">")]
    return "\n".join(fit(columns, rows))


def plan_text(ctx: ToolContext, when: str | None, room: int | None = None) -> str:
    """The plan of `plan` and /plan: a timeline per day, then what was not placed and why."""
    from planner.tools.plan_tools import horizon_of, make_plan, plan_json

    try:
        horizon = horizon_of(ctx, when)
    except ToolError as e:
        raise UsageError(str(e)) from None
    data = plan_json(make_plan(ctx, horizon), horizon)
    columns = [Column("when", 11), Column("what", 12, grow=True), Column("", 4, last=True)]
    out = []
    for day in data.get("days", [data]):
        d = dt.date.fromisoformat(day["day"])
        out.append(f"{d:%A} {d.isoformat()}")
        rows = []
        for b in day["blocks"]:
            title = inline(b["title"]) + (f" (part {b['part']})" if b.get("part") else "")
            more = f"task {b['task_id']}" if b["kind"] == "task" else "event"
            more += "".join(f", {flag}" for flag in ("pinned", "guessed", "late") if b.get(flag))
            rows.append([f"{b['start'][11:]}-{b['end'][11:]}", title, more])
        out += ["  " + line for line in fit(columns, rows, (room or width()) - 2, header=False)] or [
            "  nothing planned"
        ]
    for key, heading in (("late", "placed after their due date:"), ("unscheduled", "not planned:")):
        if data.get(key):
            out.append(heading)
            out += [f"  {n['task_id']:>4}  {inline(n['title'])} ({n['reason']})" for n in data[key]]
    past = [n["task_id"] for n in data.get("unscheduled", []) if n["reason"] == "past due"]
    if past:  # not placed, so that a missed date is not pushed on quietly: say how to plan it
        out.append(f"  past due: a new date plans it (`edit {past[0]} today`)")
    return "\n".join(out)
