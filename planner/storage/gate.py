"""The one gate every change to the user's data passes: a typed change set, the policy's decision for exactly
those rows, applied in one transaction.

    commit(store, plan, door)
      loop:
        BEGIN IMMEDIATE
          changes = plan(conn)                 the change set, planned from the rows as they are now
          needs   = policy.needs(...)          what in it needs a yes (the bulk window counted here too)
          unmet   = policy.unmet(needs, door, grant)
          none unmet: write every change, log it, COMMIT  -> Applied
        (nothing written)
        policy.verdict(unmet, door): refuse -> Refused; ask -> the door's question, outside the lock
          yes: the grant now covers those rows at the versions shown; plan again
          no:  Refused(DECLINED)

Because the plan runs inside the write's transaction, the count of the large-change rule and the write are
one step for every process on the file, and a yes given for some rows covers them only as they were shown:
a row changed in the meantime has another version, so its need is unmet again and the user is asked again.
The question is asked with no lock held (a y/N may take minutes).

A door that cannot block for an answer (MCP's input_required round) raises `Pending` from its `ask`; the
caller hands the question out and comes back with a `Grant` built from the answer.

The tables this module writes are the user's: tasks, their tags and change log. Events, preferences and
memories are written by their own modules today; the layers' note in docs/safety.md says which.
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import json
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from planner import policy
from planner.policy import Changed, Door, Grant, Need, Refusal, Verdict
from planner.storage import tasks as rows
from planner.storage.db import Store
from planner.storage.fields import Task, TaskError
from planner.storage.owner import Owner

ASK_ROUNDS = 3  # questions in a row before giving up on rows that keep changing while the user is asked
VOLATILE = ("reminded_at", "parent")  # not part of a row's version: a reminder shown is not an edit


class Op(enum.Enum):
    """What one change does to one row."""

    ADD = "add"  # a new row (values: its columns)
    EDIT = "edit"  # some columns of an existing row (values: the columns set)
    DELETE = "delete"  # the row removed
    PUT = "put"  # the row made exactly this snapshot, or removed when there is none (undo, redo, a sync)


@dataclass(frozen=True)
class Change:
    """One row's change, as planned."""

    op: Op
    key: int | None = None  # the row's id (None: a new row)
    values: Mapping[str, Any] | None = None  # ADD, EDIT: columns; PUT: the snapshot (None: remove the row)
    tags: tuple[str, ...] | None = None  # tasks, ADD and EDIT: the tags to set (None: keep them)
    tool: str = ""  # who made it, for the change log ("complete_task", "import", "sync")
    table: str = "tasks"  # tasks | events | preferences | worklog | memories (OWNERS)
    # tasks: what the change log keeps as the row before, when that is not the row now (a sync's merge keeps
    # the other side's values there, so /undo brings them back)
    logged_before: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class LogMark:
    """An undo or redo marks a table's change-log rows instead of adding some."""

    kind: str  # "undo" | "redo"
    events: tuple[int, ...]
    table: str = "tasks"


@dataclass(frozen=True)
class ChangeSet:
    """Everything one call or command would change, and why it might need a yes beyond its rows."""

    changes: tuple[Change, ...] = ()
    by_user: bool = False  # the user's own act elsewhere (a deletion on another device, their own undo)
    glitch: str = ""  # why its deletions look like a fault ("the server listed no to-dos")
    asks: str = ""  # a reason of its own to ask ("task 3 has 2 open subtasks")
    notes: tuple[str, ...] = ()  # more for the question ("its 2 subtasks stay, without a parent")
    doing: str = ""  # what makes the change when it is not the request itself ("undo"), for the question
    turn: str | None = None  # the request the change log files it under, when not the door's (a sync's one turn)
    marks: tuple[LogMark, ...] = ()
    logged: bool = True  # False: bookkeeping only (a reminder shown), which is not a change to undo
    after: tuple[Callable[[sqlite3.Connection], None], ...] = ()  # bookkeeping beside it (sync records)

    def __bool__(self) -> bool:
        return bool(self.changes or self.marks)


def one(change: Change, **kw: Any) -> ChangeSet:
    """A change set of one change."""
    return ChangeSet((change,), **kw)


class Refused(Exception):
    """Nothing was written: the change needs a yes it did not get. The message says what works."""

    def __init__(self, message: str, kind: Refusal, needs: list[Need] | None = None):
        super().__init__(message)
        self.kind = kind
        self.needs = needs or []


class Pending(Exception):
    """The door hands the question out and comes back with the answer (MCP's input_required round)."""

    def __init__(self, question: str, needs: list[Need]):
        super().__init__(question)
        self.question = question
        self.needs = needs


class Probed(Pending):
    """A dry run's answer: what the change set would change and what of it needs a yes; nothing written."""

    def __init__(self, rows: list[Changed], needs: list[Need]):
        super().__init__("", needs)
        self.rows = rows


@dataclass
class Applied:
    """What a commit wrote: each change with the row as it became (None: removed), in the plan's order."""

    changes: list[Change] = field(default_factory=list)
    after: list[Task | None] = field(default_factory=list)
    before: list[Task | None] = field(default_factory=list)

    def row(self, i: int = 0) -> Task:
        """The row the i-th change made (it must exist)."""
        task = self.after[i]
        if task is None:
            raise TaskError("that task is gone")
        return task


def version(row: Mapping[str, Any] | None) -> str:
    """A row's version: a hash of everything in it but bookkeeping, so a yes binds to the row as it was shown."""
    if row is None:
        return "none"
    kept = {k: v for k, v in row.items() if k not in VOLATILE}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()[:24]


def commit(
    store: Store,
    plan: Callable[[sqlite3.Connection], ChangeSet | None],
    door: Door,
    grant: Grant | None = None,
) -> Applied:
    """Plan, decide and write in one transaction; ask outside it when the policy says so. Raises Refused
    (nothing written), Pending (a door that answers later) or whatever `plan` raises (TaskError)."""
    grant = grant if grant is not None else Grant()
    for _ in range(ASK_ROUNDS):
        with store.write() as conn:
            changes = plan(conn)
            if not changes:
                return Applied()
            seen = [_view(conn, c) for c in changes.changes]
            keys = {(c.table, c.key) for c in seen if c.key is not None}
            made = frozenset(rows.added_in_turn(conn, door.turn)) if door.turn else frozenset()
            found = policy.needs(
                seen, door.mandate, recent(conn, door, keys), changes.by_user, changes.glitch, changes.asks, made
            )
            unmet = policy.unmet(found, door, grant)
            if door.dry:
                raise Probed(seen, unmet)
            if not unmet:
                applied = _write(conn, changes, changes.turn or door.turn)
                for c, before, after in zip(applied.changes, applied.before, applied.after, strict=True):
                    if before is not None and c.key is not None:
                        grant.moved((c.table, c.key), version(before), version(after))
                return applied
        ask(unmet, door, grant, changes.notes, changes.doing, changes.asks)
    raise Refused(
        "the tasks kept changing while the user was asked, so nothing was changed; try again",
        Refusal.CHANGING,
    )


def ask(
    unmet: list[Need], door: Door, grant: Grant, notes: tuple[str, ...] = (), doing: str = "", reason: str = ""
) -> None:
    """The door's question for what is unmet (the policy words it); the grant covers those rows on a yes.
    Refused on a no or where no one can answer; Pending where the answer comes in a later round."""
    decision = policy.verdict(unmet, door, notes, doing, reason)
    if decision.verdict is Verdict.REFUSE or door.ask is None:
        raise Refused(decision.reason, Refusal.NOBODY, unmet)
    try:
        said_yes = door.ask(decision.question)
    except Pending:  # the door answers later: the caller hands out this question for these rows
        raise Pending(decision.question, unmet) from None
    if not said_yes:
        raise Refused("the user said no", Refusal.DECLINED, unmet)
    grant.approve(unmet)


# ---------------------------------------------------------------- inside the transaction


def _view(conn: sqlite3.Connection, c: Change) -> Changed:
    """A change as the policy sees it: the row now, the row after, a line for the question, the version."""
    owner = _owner(c.table)
    before = owner.row(conn, c.key) if c.key is not None else None
    missing = f'no task with id={c.key}; call list_tasks with status "all" to see the ids'
    if c.table != "tasks":
        missing = f"no {c.table} row {c.key}"
    if c.op is Op.ADD:
        after: dict[str, Any] | None = {**(c.values or {})}
        if c.table == "tasks":
            after["tags"] = list(c.tags or [])
    elif c.op is Op.DELETE:
        if before is None:
            raise TaskError(missing)
        after = None
    elif c.op is Op.EDIT:
        if before is None:
            raise TaskError(missing)
        after = {**before, **(c.values or {})}
        if c.tags is not None:
            after["tags"] = list(c.tags)
    else:
        after = dict(c.values) if c.values is not None else None
    return Changed(c.table, c.key, before, after, owner.line(c.op.value, c.key, before, after), version(before))


def recent(conn: sqlite3.Connection, door: Door, keys: set[tuple[str, int | None]]) -> int:
    """Other existing tasks changed together with these: in this request, or in the door's window."""
    mine = {k for t, k in keys if t == "tasks"}
    if door.turn is not None and door.window is None:
        found = rows.changed_in_turn(conn, door.turn)
    elif door.window is not None:
        since = (door.clock or (lambda: dt.datetime.now(dt.UTC)))() - dt.timedelta(seconds=door.window)
        found = rows.changed_since(conn, since)
    else:
        return 0
    return len(found - mine)


def _write(conn: sqlite3.Connection, changes: ChangeSet, turn: str | None) -> Applied:
    """Every change of the set, each by its table's owner with that table's change log, in one transaction."""
    turn = turn or rows.new_turn()
    out = Applied()
    log = not changes.marks and changes.logged
    if not changes.logged and any(
        c.op is not Op.EDIT or set(c.values or {}) - policy.BOOKKEEPING or c.tags is not None for c in changes.changes
    ):
        raise TaskError("only bookkeeping may be written without the change log")  # every edit can be undone
    for c in changes.changes:
        owner = _owner(c.table)
        before = owner.row(conn, c.key) if c.key is not None else None
        key = owner.apply(conn, c, turn, log)
        out.changes.append(c)
        out.before.append(before)
        out.after.append(owner.row(conn, key) if key is not None else None)
    for m in changes.marks:
        mark = _owner(m.table).mark
        if mark is None:
            raise TaskError(f"{m.table} has no change log to mark")
        mark(conn, m.kind, list(m.events))
    for step in changes.after:
        step(conn)
    return out


# ---------------------------------------------------------------- the owners of the tables


def _apply_task(conn: sqlite3.Connection, c: Change, turn: str, log: bool) -> int | None:
    """One task change with its change-log row (tasks.py's writers: called here alone)."""
    tags = list(c.tags) if c.tags is not None else None
    if c.op is Op.ADD:
        return rows.insert(conn, turn, dict(c.values or {}), tags or [], c.tool, log=log)["id"]
    if c.op is Op.EDIT:
        rows.update(conn, turn, c.tool, c.key, dict(c.values or {}), tags, log=log)  # type: ignore[arg-type]
        return c.key
    if c.op is Op.DELETE:
        rows.delete(conn, turn, c.tool, c.key, log=log)  # type: ignore[arg-type]
        return None
    before = rows.snapshot(conn, c.key) if c.logged_before is None else dict(c.logged_before)  # type: ignore[arg-type]
    rows.restore(conn, c.key, dict(c.values) if c.values is not None else None)  # type: ignore[arg-type]
    if log:
        rows.record(conn, turn, c.tool, c.key, before)  # type: ignore[arg-type]
    return c.key if c.values is not None else None


TASKS = Owner("tasks", rows.snapshot, _apply_task, rows.describe_change, rows.mark_events)


def event_changes(
    conn: sqlite3.Connection,
    source: str,
    items: list[Any],
    replace: bool = False,
    adopt: str | None = None,
    tool: str = "import",
    within: tuple[str, str] | None = None,
) -> tuple[list[Change], Any]:
    """A calendar source's events as planned changes (calendar.source_changes), and what they add up to."""
    from planner.storage import calendar

    planned, done = calendar.source_changes(conn, source, items, replace, adopt, within)
    return [Change(Op(op), key, values, tool=tool, table="events") for op, key, values in planned], done


def _owner(table: str) -> Owner:
    if table == "tasks":
        return TASKS
    if table == "events":
        from planner.storage import calendar

        return calendar.EVENTS
    if table == "preferences":
        from planner.storage import preferences

        return preferences.PREFERENCES
    if table == "worklog":
        from planner.storage import worklog

        return worklog.WORKLOG
    if table == "memories":
        from planner.storage import memories

        return memories.MEMORIES
    raise TaskError(f"the gate has no table {table}")
