"""The tool machinery: the `@tool` registry, argument validation and dispatch.

A tool's docstring and JSON schema are what the model reads, so they are
written for the model: short, imperative, and without concrete example values
(small models copy examples verbatim). The schema is explicit rather than
derived from type hints, because Ollama's client marks defaulted parameters
required and drops enums.

Dispatch never raises. Whatever the model sends - an invented tool, missing or
extra arguments, wrong types, impossible dates - comes back as
{"error": "..."} that says what to fix, and nothing invalid is written.

The tools themselves live beside this file (task_tools, status_tools, memory_tools,
query_tool, web); importing the `planner.tools` package registers them all.
Each declares its facts here, once: `read_only` (never a change, never asks),
`changes_existing` (counts toward the large-change question), `destructive`
(asks the user first), and its `group`: which of the tool groups the agent
sends it with (agent/request.py picks the groups a request needs).
"""

from __future__ import annotations

import datetime as dt
import difflib
import inspect
import json
import logging
import re
import sqlite3
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from planner import policy
from planner.memory.errors import LongTermMemoryError
from planner.policy import ALL, Door, Grant, Mandate, Need
from planner.schedule import Hours
from planner.storage import gate
from planner.storage.db import DatabaseError, Store, explain
from planner.storage.gate import Applied, Pending, Refusal, Refused
from planner.storage.tasks import TaskError
from planner.tools.schemas import OUTPUT

if TYPE_CHECKING:
    from planner.memory.longterm import LongTermMemory
    from planner.tools.wikipedia import Web

log = logging.getLogger("planner")


class ToolError(Exception):
    """A problem the model can fix; the message is returned to it as {"error": ...}."""


@dataclass(frozen=True)
class Tool:
    """A registered tool: what the model sees and the function that runs."""

    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of an object
    fn: Callable[..., dict[str, Any]]
    read_only: bool = False  # only reads: never a change, never needs approval
    changes_existing: bool = False  # changes a task the user has: counts toward the large-change question
    destructive: bool = False  # needs the user's confirmation
    # Whether the model is offered the tool in this run (lookup is off unless --web).
    enabled: Callable[[ToolContext], bool] | None = None
    # A description built from the running program (query_planner shows the live schema).
    describe: Callable[[ToolContext], str] | None = None
    title: str = ""  # a short human name (MCP clients show it)
    output: dict[str, Any] | None = None  # JSON schema of a successful result (MCP's outputSchema)
    group: str = "change"  # the tool group it is sent with (GROUPS); a tool without one: read or change


# The tool groups, in the order their tools are sent: reading tasks (always sent), adding a task, changing
# tasks, planning and time, memory, lookup (query_planner and the encyclopedia). agent/request.py reads
# which ones a request needs. Adding is a group of its own: most requests add, and the six tools that
# change a task are two thirds of the tokens of the two.
GROUPS = ("read", "add", "change", "plan", "memory", "lookup")

TOOLS: dict[str, Tool] = {}


def tool(
    properties: dict[str, dict[str, Any]] | None = None,
    required: tuple[str, ...] = (),
    *,
    read_only: bool = False,
    changes_existing: bool = False,
    destructive: bool = False,
    enabled: Callable[[ToolContext], bool] | None = None,
    describe: Callable[[ToolContext], str] | None = None,
    title: str = "",
    output: dict[str, Any] | None = None,
    group: str | None = None,
) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    """Register a function as a tool named after it; its docstring is its description."""
    if group is not None and group not in GROUPS:
        raise ValueError(f"group must be one of {', '.join(GROUPS)}, not {group!r}")

    def register(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        schema = {"type": "object", "properties": properties or {}, "required": list(required)}
        doc = inspect.cleandoc(fn.__doc__ or "")
        TOOLS[fn.__name__] = Tool(
            fn.__name__,
            doc,
            schema,
            fn,
            read_only,
            changes_existing,
            destructive,
            enabled,
            describe,
            title or fn.__name__.replace("_", " ").capitalize(),
            output or OUTPUT.get(fn.__name__),
            group or ("read" if read_only else "change"),
        )
        return fn

    return register


def tool_specs(ctx: ToolContext | None = None, groups: Collection[str] | None = None) -> list[dict[str, Any]]:
    """The `tools=` list for Ollama, in registration order; with a context, only the tools enabled in it and
    with their live descriptions; with `groups`, only theirs, group by group (GROUPS).

    The list is part of the cached prompt prefix: the same groups give the same bytes, and the groups
    always come in one order, so a list with more groups shares its start with one with fewer."""
    specs = []
    chosen = TOOLS.values() if groups is None else sorted(TOOLS.values(), key=lambda t: GROUPS.index(t.group))
    for t in chosen:
        if ctx is not None and t.enabled is not None and not t.enabled(ctx):
            continue
        if groups is not None and t.group not in groups:
            continue
        description = t.describe(ctx) if ctx is not None and t.describe else t.description
        specs.append(
            {"type": "function", "function": {"name": t.name, "description": description, "parameters": t.parameters}}
        )
    return specs


@dataclass
class ToolContext:
    """What tools need from the running program, passed in rather than imported."""

    store: Store
    memory: LongTermMemory | None = None
    today: Callable[[], dt.date] = dt.date.today
    # The user's own y/N (the terminal, elicitation); None when nobody can answer.
    confirm: Callable[[str], bool] | None = None
    # The user said yes in advance (--yes, PLANNER_YES, a large change they approved): no question.
    yes: bool = False
    # The user turn tool writes belong to (task_events.turn), so /undo can revert it.
    turn: str | None = None
    # The encyclopedia client when the user turned lookups on (--web); None keeps everything local.
    web: Web | None = None
    # The time now (UTC), for the bulk window; a test passes its own clock instead of waiting.
    clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC)
    # When tasks may be planned (PLANNER_WORK_HOURS, PLANNER_MIN_BLOCK, PLANNER_BREAK).
    hours: Hours = field(default_factory=Hours)
    # The local moment a plan starts from; None: now. Set when today is pretended (--today), so a plan is
    # the same whenever it is made.
    plan_from: dt.datetime | None = None
    # Plans correct estimates by the time tracked on finished tasks (PLANNER_LEARN_ESTIMATES).
    learn_estimates: bool = True
    # What the user's own words name (the agent reads them from the message: planner/agent/intent.py); --yes
    # covers only those rows. A command that names its own rows (the shell, an import) names everything.
    mandate: Mandate = ALL
    # Where there is no request to count a large change by (MCP): seconds of the change log counted together.
    window: float | None = None
    door_name: str = "tool"
    how: str = "run it in a terminal, or with --yes"  # what works, for someone refused here
    # The rows the user said yes to in this request, at the versions they were shown (one question for
    # several calls); shared by the calls of one request.
    grant: Grant = field(default_factory=Grant)
    dry: bool = False  # find out what a call would need, write nothing (one question for several calls)

    def door(self) -> Door:
        """How this run hears the user's yes, for the gate."""
        return Door(
            self.door_name,
            ask=self.confirm,
            yes=self.yes,
            how=self.how,
            mandate=self.mandate,
            turn=self.turn,
            window=self.window,
            clock=self.clock,
            dry=self.dry,
        )

    def commit(self, plan: Any) -> Applied:
        """Write a planned change set through the one gate (planner/storage/gate.py), asking as the policy says."""
        return gate.commit(self.store, plan, self.door(), self.grant)

    def confirm_needs(self, needs: list[Need], notes: tuple[str, ...] = ()) -> None:
        """The user's yes for needs the gate cannot write yet (a memory forgotten): the same policy, door and
        question (gate.ask); Refused when it is missing."""
        door = self.door()
        unmet = policy.unmet(needs, door, self.grant)
        if door.dry:
            raise gate.Probed([], unmet)
        if unmet:
            gate.ask(unmet, door, self.grant, notes)


def refusal_text(e: Refused) -> str:
    """A refusal as the model reads it: what was not done, and what it may do now."""
    if e.kind is Refusal.DECLINED:
        what = "; ".join(dict.fromkeys(n.line for n in e.needs)) or "this change"
        return f"the user declined: {what}. Nothing was changed; do not ask again in this request"
    return str(e)


@dataclass(frozen=True)
class Dispatched:
    """What one call came to: its result, whether it worked, and why not when the user's yes was missing."""

    result: dict[str, Any]
    ok: bool
    refused: Refusal | None = None  # DECLINED (the user said no), NOBODY (no one could be asked), else None


# ---------------------------------------------------------------- validation

# Names small models invent for real tools, so the error can point the right way.
ALIASES = {
    "update_task": ("rename_task", "move_task", "reschedule_task", "edit_task", "change_task", "modify_task"),
    "complete_task": ("finish_task", "done_task", "mark_done", "mark_task_done", "check_task", "close_task"),
    "delete_task": ("remove_task", "drop_task", "erase_task"),
    "reopen_task": ("undo_complete", "uncomplete_task", "restore_task", "open_task"),
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
    "delete_task": ("delete", "remove", "drop", "erase"),
    "cancel_task": ("cancel", "abandon", "skip"),
    "reopen_task": ("reopen", "uncomplete", "unfinish"),
    "add_task": ("add", "create", "new", "schedule", "submit", "remind", "plan", "book"),
    "list_tasks": ("list", "show", "get", "find", "search"),
}


def suggest_tool(name: str) -> str | None:
    """The real tool an invented name most likely meant."""
    for real, aliases in ALIASES.items():
        if name in aliases:
            return real
    close = difflib.get_close_matches(name, list(TOOLS), n=1, cutoff=0.8)  # a typo of a real name
    if close:
        return close[0]
    first = re.split(r"[_\W]+", name.lower())[0] if name else ""
    if name.lower().endswith(("due_date", "date")) and first in ("remove", "clear", "delete"):
        return "update_task"  # remove_due_date: an empty due_date clears it
    by_verb = next((real for real, verbs in VERBS.items() if first in verbs), None)
    if by_verb:
        return by_verb
    close = difflib.get_close_matches(name, list(TOOLS), n=1, cutoff=0.6)
    return close[0] if close else None


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
        if not -(2**63) <= value < 2**63:  # what SQLite can hold; no id is that large
            raise ToolError(f"{name} is too large: no {name} is that large; use list_tasks to see the ids")
    elif kind == "string":
        if not isinstance(value, str):
            raise ToolError(f"{name} must be a string, not {json.dumps(value, ensure_ascii=False)[:60]}")
    elif kind == "boolean":
        if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
            value = value.strip().lower() in ("true", "yes")  # small models quote booleans too
        if not isinstance(value, bool):
            raise ToolError(f"{name} must be true or false, not {json.dumps(value, ensure_ascii=False)[:60]}")
    elif kind == "array":
        if isinstance(value, str):
            value = [v for v in re.split(r"[,\s]+", value) if v]  # "work, home" for ["work", "home"]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ToolError(f"{name} must be a list of strings, not {json.dumps(value, ensure_ascii=False)[:60]}")
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
    out = run_call(ctx, name, args)
    return out.result, out.ok


def run_call(ctx: ToolContext, name: Any, args: Any) -> Dispatched:
    """Run a tool call; what it came to, typed. Never raises for anything the model sends."""
    t0 = time.perf_counter()
    t = TOOLS.get(name) if isinstance(name, str) else None
    refused = None
    try:
        if t is None:
            hint = suggest_tool(name) if isinstance(name, str) else None
            real = ", ".join(n for n, x in TOOLS.items() if x.enabled is None or x.enabled(ctx))  # only those offered
            use = f" Use {hint} instead." if hint else ""
            raise ToolError(f"there is no tool named {json.dumps(name, ensure_ascii=False)[:60]}.{use} Tools: {real}")
        result = t.fn(ctx, **validate(t, args))
        ok = True
    except Pending:
        raise  # the door answers later (MCP's input_required round): nothing was written
    except Refused as e:  # the gate wrote nothing: the user's yes was missing
        result, ok, refused = {"error": refusal_text(e)}, False, e.kind
    # The layers below raise their own errors, each written for the model: said as {"error": ...}.
    # DatabaseError: busy, disk full, read-only, said in words.
    except (ToolError, TaskError, LongTermMemoryError, DatabaseError) as e:
        result, ok = {"error": str(e)}, False
    except Exception as e:  # a bug or a database fault: the model gets a line, the log the traceback
        log.exception("tool %s crashed", name)
        known = explain(e) if isinstance(e, sqlite3.Error) else None  # a damaged page met while reading
        result, ok = (
            {
                "error": str(known)
                if known
                else f"{name} failed inside the planner ({type(e).__name__}); try again later"
            },
            False,
        )
    ms = (time.perf_counter() - t0) * 1000
    log.info("tool %s args=%s %.1fms %s", name, _short(args), ms, "ok" if ok else f"error={result['error']}")
    return Dispatched(result, ok, refused)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 300 else text[:300] + "..."


def to_json(result: dict[str, Any]) -> str:
    """A tool result as the text the model reads."""
    return json.dumps(result, ensure_ascii=False)
