"""The tools the model can call: the `@tool` registry, validation, dispatch,
and the task and memory tools themselves.

A tool's docstring and JSON schema are what the model reads, so they are
written for the model: short, imperative, and without concrete example values
(small models copy examples verbatim). The schema is explicit rather than
derived from type hints, because Ollama's client marks defaulted parameters
required and drops enums.

Dispatch never raises. Whatever the model sends - an invented tool, missing or
extra arguments, wrong types, impossible dates - comes back as
{"error": "..."} that says what to fix, and nothing invalid is written.
"""

from __future__ import annotations

import datetime as dt
import difflib
import inspect
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from db import Store

if TYPE_CHECKING:
    from longterm import LongTermMemory

log = logging.getLogger("planner")

MAX_TITLE = 500
MAX_FACT = 2000


class ToolError(Exception):
    """A problem the model can fix; the message is returned to it as {"error": ...}."""


@dataclass(frozen=True)
class Tool:
    """A registered tool: what the model sees and the function that runs."""

    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of an object
    fn: Callable[..., dict[str, Any]]
    destructive: bool = False  # needs the user's confirmation


TOOLS: dict[str, Tool] = {}


def tool(
    properties: dict[str, dict[str, Any]] | None = None,
    required: tuple[str, ...] = (),
    destructive: bool = False,
) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    """Register a function as a tool named after it; its docstring is its description."""

    def register(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        schema = {"type": "object", "properties": properties or {}, "required": list(required)}
        TOOLS[fn.__name__] = Tool(fn.__name__, inspect.cleandoc(fn.__doc__ or ""), schema, fn, destructive)
        return fn

    return register


def tool_specs() -> list[dict[str, Any]]:
    """The `tools=` list for Ollama, in registration order (stable across calls)."""
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in TOOLS.values()
    ]


@dataclass
class ToolContext:
    """What tools need from the running program, passed in rather than imported."""

    store: Store
    memory: LongTermMemory | None = None
    today: Callable[[], dt.date] = dt.date.today
    # Asks the user to confirm a destructive action; None when nobody can answer.
    confirm: Callable[[str], bool] | None = None


# ---------------------------------------------------------------- validation

# Names small models invent for real tools, so the error can point the right way.
ALIASES = {
    "update_task": ("rename_task", "move_task", "reschedule_task", "edit_task", "change_task", "modify_task"),
    "complete_task": ("finish_task", "done_task", "mark_done", "mark_task_done", "check_task", "close_task"),
    "delete_task": ("remove_task", "cancel_task", "drop_task"),
    "add_task": ("create_task", "new_task", "add_todo", "create_todo", "add_reminder"),
    "list_tasks": ("get_tasks", "show_tasks", "tasks", "list_todos", "search_tasks"),
    "remember": ("save_memory", "store_fact", "save_fact", "memorize", "add_memory"),
    "recall": ("search_memory", "search_memories", "get_memory", "find_memory"),
    "get_today": ("get_date", "today", "current_date", "get_current_date"),
}


# The first word of an invented name, when no alias or close spelling matches.
VERBS = {
    "update_task": ("move", "rename", "change", "edit", "modify", "reschedule", "postpone", "push", "set"),
    "complete_task": ("complete", "finish", "mark", "done", "check", "close"),
    "delete_task": ("delete", "remove", "cancel", "drop"),
    "add_task": ("add", "create", "new", "schedule", "submit", "remind", "plan", "book"),
    "list_tasks": ("list", "show", "get", "find", "search"),
}


def suggest_tool(name: str) -> str | None:
    """The real tool an invented name most likely meant."""
    for real, aliases in ALIASES.items():
        if name in aliases:
            return real
    close = difflib.get_close_matches(name, list(TOOLS), n=1, cutoff=0.6)
    if close:
        return close[0]
    first = re.split(r"[_\W]+", name.lower())[0] if name else ""
    if name.lower().endswith(("due_date", "date")) and first in ("remove", "clear", "delete"):
        return "update_task"  # remove_due_date: an empty due_date clears it
    return next((real for real, verbs in VERBS.items() if first in verbs), None)


def _check_type(name: str, value: Any, spec: dict[str, Any]) -> Any:
    kind = spec.get("type")
    if kind == "integer":
        if isinstance(value, bool):
            raise ToolError(f"{name} must be a whole number, not {json.dumps(value)}")
        if isinstance(value, int):
            pass
        elif isinstance(value, float) and value.is_integer():
            value = int(value)
        elif isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
            value = int(value)  # small models often quote numbers
        else:
            raise ToolError(f"{name} must be a whole number, not {json.dumps(value, ensure_ascii=False)[:60]}")
        lo, hi = spec.get("minimum"), spec.get("maximum")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise ToolError(f"{name} must be between {lo} and {hi}, not {value}")
    elif kind == "string":
        if not isinstance(value, str):
            raise ToolError(f"{name} must be a string, not {json.dumps(value, ensure_ascii=False)[:60]}")
    if "enum" in spec and value not in spec["enum"]:
        options = ", ".join(json.dumps(v) for v in spec["enum"])
        raise ToolError(f"{name} must be one of {options}, not {json.dumps(value, ensure_ascii=False)[:60]}")
    return value


SCHEMA_WORDS = {"type", "properties", "required"}


def validate(t: Tool, args: Any) -> dict[str, Any]:
    """Arguments checked against the tool's schema, with strings coerced where safe."""
    if args is None:
        args = {}
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            raise ToolError("arguments must be a JSON object") from None
    if not isinstance(args, dict):
        raise ToolError("arguments must be a JSON object of named values")
    props = t.parameters["properties"]
    if set(args) & SCHEMA_WORDS and not SCHEMA_WORDS & set(props):
        # A small model echoing parts of the schema ({"properties": {}}, "required": [...]).
        args = {k: v for k, v in args.items() if k not in SCHEMA_WORDS}
    unknown = [k for k in args if k not in props]
    if unknown:
        allowed = ", ".join(props) or "none"
        raise ToolError(f"{t.name} has no argument {unknown[0]!r}; call it again with only: {allowed}")
    out: dict[str, Any] = {}
    for name, value in args.items():
        if value is None and name not in t.parameters["required"]:
            continue  # small models send null for "not given"
        out[name] = _check_type(name, value, props[name])
    missing = [k for k in t.parameters["required"] if k not in out]
    if missing:
        raise ToolError(f"{t.name} needs the argument {missing[0]!r}")
    return out


def dispatch(ctx: ToolContext, name: Any, args: Any) -> tuple[dict[str, Any], bool]:
    """Run a tool call; returns (result, ok). Never raises for anything the model sends."""
    t0 = time.perf_counter()
    t = TOOLS.get(name) if isinstance(name, str) else None
    try:
        if t is None:
            hint = suggest_tool(name) if isinstance(name, str) else None
            real = ", ".join(TOOLS)
            use = f" Use {hint} instead." if hint else ""
            raise ToolError(f"there is no tool named {json.dumps(name, ensure_ascii=False)[:60]}.{use} Tools: {real}")
        result = t.fn(ctx, **validate(t, args))
        ok = True
    except ToolError as e:
        result, ok = {"error": str(e)}, False
    except Exception as e:  # a bug or a database fault: the model gets a line, the log the traceback
        log.exception("tool %s crashed", name)
        result, ok = {"error": f"{name} failed inside the planner ({type(e).__name__}); try again later"}, False
    ms = (time.perf_counter() - t0) * 1000
    log.info("tool %s args=%s %.1fms %s", name, _short(args), ms, "ok" if ok else f"error={result['error']}")
    return result, ok


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 300 else text[:300] + "..."


def to_json(result: dict[str, Any]) -> str:
    """A tool result as the text the model reads."""
    return json.dumps(result, ensure_ascii=False)


# ---------------------------------------------------------------- helpers

ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def check_date(ctx: ToolContext, value: str) -> str:
    """A due date as YYYY-MM-DD, or a ToolError that tells the model how to fix it."""
    value = value.strip()
    if ISO_DATE.fullmatch(value):
        try:
            return dt.date.fromisoformat(value).isoformat()
        except ValueError:
            raise ToolError(f"due_date {value!r} is not a real calendar date") from None
    today = ctx.today()
    raise ToolError(
        f"due_date must be a date written YYYY-MM-DD, not {value[:40]!r}. "
        f"Today is {today.isoformat()} ({today:%A}): work out the date and call again."
    )


def check_title(value: str) -> str:
    """A task title that is not empty and not absurdly long."""
    title = value.strip()
    if not title:
        raise ToolError("title must not be empty")
    if len(title) > MAX_TITLE:
        raise ToolError(f"title is {len(title)} characters; keep it under {MAX_TITLE}")
    return title


def _task(row: Any) -> dict[str, Any]:
    return {"id": row["id"], "title": row["title"], "due_date": row["due_date"], "status": row["status"]}


def get_task(ctx: ToolContext, id_: int) -> dict[str, Any]:
    """One task by id, or a ToolError that says how to find the right id."""
    row = ctx.store.conn().execute("SELECT id, title, due_date, status FROM tasks WHERE id = ?", (id_,)).fetchone()
    if row is None:
        raise ToolError(f'no task with id={id_}; call list_tasks with status "all" to see the ids')
    return _task(row)


ID = {"type": "integer", "description": "The task's id, as shown by list_tasks."}
DUE = "Due date as YYYY-MM-DD, taken from the calendar in your instructions."

# ---------------------------------------------------------------- task tools


@tool(
    {
        "title": {"type": "string", "description": "The task itself in a few words, without its date."},
        "due_date": {"type": "string", "description": DUE + " Leave out when the user gave no date."},
    },
    required=("title",),
)
def add_task(ctx: ToolContext, title: str, due_date: str | None = None) -> dict[str, Any]:
    """Add one task (a to-do or a reminder) to the user's list. Call once per task."""
    title = check_title(title)
    due = check_date(ctx, due_date) if due_date else None
    with ctx.store.write() as conn:
        cur = conn.execute(
            "INSERT INTO tasks (title, due_date, status, created_at) VALUES (?, ?, 'open', ?)",
            (title, due, dt.datetime.now().isoformat(timespec="seconds")),
        )
    return {"added": {"id": cur.lastrowid, "title": title, "due_date": due, "status": "open"}}


@tool(
    {
        "status": {
            "type": "string",
            "enum": ["open", "done", "all"],
            "description": "Which tasks to list; open if left out.",
        }
    }
)
def list_tasks(ctx: ToolContext, status: str = "open") -> dict[str, Any]:
    """List the user's tasks with their ids, titles, due dates and status."""
    where, params = ("", ()) if status == "all" else ("WHERE status = ?", (status,))
    rows = ctx.store.conn().execute(
        f"SELECT id, title, due_date, status FROM tasks {where} ORDER BY due_date IS NULL, due_date, id",
        params,
    )
    tasks = [_task(r) for r in rows]
    return {"status": status, "count": len(tasks), "tasks": tasks}


@tool({"id": ID}, required=("id",))
def complete_task(ctx: ToolContext, id: int) -> dict[str, Any]:
    """Mark a task as done."""
    task = get_task(ctx, id)
    if task["status"] == "done":
        return {"already_done": task}
    with ctx.store.write() as conn:
        conn.execute("UPDATE tasks SET status = 'done' WHERE id = ?", (id,))
    return {"completed": dict(task, status="done")}


@tool(
    {
        "id": ID,
        "title": {"type": "string", "description": "The new title. Leave out to keep the current one."},
        "due_date": {"type": "string", "description": DUE + " An empty string removes the date. Leave out to keep it."},
    },
    required=("id",),
)
def update_task(ctx: ToolContext, id: int, title: str | None = None, due_date: str | None = None) -> dict[str, Any]:
    """Change a task's title and/or due date (rename, reschedule, or clear its date)."""
    if title is None and due_date is None:
        raise ToolError("give a new title or due_date (an empty due_date clears it)")
    before = get_task(ctx, id)
    after = dict(before)
    if title is not None:
        after["title"] = check_title(title)
    if due_date is not None:
        after["due_date"] = check_date(ctx, due_date) if due_date.strip() else None
    with ctx.store.write() as conn:
        conn.execute("UPDATE tasks SET title = ?, due_date = ? WHERE id = ?", (after["title"], after["due_date"], id))
    return {"updated": after, "before": before}


@tool({"id": ID}, required=("id",), destructive=True)
def delete_task(ctx: ToolContext, id: int) -> dict[str, Any]:
    """Delete a task for good. Only when the user asked to delete or remove it; to finish a task use complete_task."""
    task = get_task(ctx, id)
    if ctx.confirm is None:
        raise ToolError(
            "deleting needs the user's confirmation, and no one can confirm here. "
            "Tell the user it was not deleted; they can run the planner in a terminal or with --yes."
        )
    if not ctx.confirm(f'Delete task {id} "{task["title"]}"?'):
        raise ToolError(f"the user declined; task {id} was not deleted")
    with ctx.store.write() as conn:
        conn.execute("DELETE FROM tasks WHERE id = ?", (id,))
    return {"deleted": task}


@tool()
def get_today(ctx: ToolContext) -> dict[str, Any]:
    """Today's date and weekday."""
    today = ctx.today()
    return {"date": today.isoformat(), "weekday": today.strftime("%A")}


# ---------------------------------------------------------------- memory tools


def _memory(ctx: ToolContext) -> LongTermMemory:
    if ctx.memory is None:
        raise ToolError("long-term memory is not available in this run")
    return ctx.memory


@tool(
    {"fact": {"type": "string", "description": "One self-contained sentence about the user, with dates written out."}},
    required=("fact",),
)
def remember(ctx: ToolContext, fact: str) -> dict[str, Any]:
    """Save a lasting fact about the user (a preference, a person, a place, a routine) for later conversations. Not for tasks or reminders: use add_task for those."""
    fact = fact.strip()
    if not fact:
        raise ToolError("fact must not be empty")
    if len(fact) > MAX_FACT:
        raise ToolError(f"fact is {len(fact)} characters; keep it under {MAX_FACT}")
    return _memory(ctx).remember(fact)


@tool(
    {
        "query": {"type": "string", "description": "What you want to know about the user."},
        "k": {
            "type": "integer",
            "minimum": 1,
            "maximum": 20,
            "description": "How many memories to return; 3 if left out.",
        },
    },
    required=("query",),
)
def recall(ctx: ToolContext, query: str, k: int = 3) -> dict[str, Any]:
    """Search saved facts about the user from earlier conversations."""
    if not query.strip():
        raise ToolError("query must not be empty")
    return {"memories": _memory(ctx).recall(query.strip(), k)}


@tool(
    {"query_or_id": {"type": "string", "description": "The memory's id, or words that describe it."}},
    required=("query_or_id",),
)
def forget(ctx: ToolContext, query_or_id: str) -> dict[str, Any]:
    """Delete a saved fact about the user when they ask you to forget it."""
    if not query_or_id.strip():
        raise ToolError("query_or_id must not be empty")
    return _memory(ctx).forget(query_or_id)


READ_ONLY_TOOLS = frozenset({"list_tasks", "get_today", "recall"})
