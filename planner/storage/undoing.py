"""Undo and redo as change sets: what putting the newest request back (or making it again) would write.

    undo_plan()   the newest request with task changes not undone: each task put back as it was before it,
                  newest first, and its change-log rows marked undone (one undo step)
    redo_plan()   the request undone last: each task made again as it became, unless one changed since the
                  undo (then nothing, and a TaskError names the task: the user's newer edit wins)

Both are planned inside the gate's transaction (planner/storage/gate.py), so the rows an answer was given
for are the rows written: if another process changed the newest request meanwhile (an import landed), the
plan is another one, its rows have other versions, and the user is asked again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from planner.policy import Door
from planner.storage import syncstate
from planner.storage.db import Store
from planner.storage.fields import TaskError
from planner.storage.gate import Change, ChangeSet, LogMark, Op, commit
from planner.storage.tasks import describe_redo, describe_undo, plain, redo_preview, snapshot, undo_preview


@dataclass
class Planned:
    """The lines an undo or redo says, filled in when it is planned (the last plan is the one written)."""

    lines: list[str]
    turn: str | None = None
    tools: frozenset[str] = frozenset()


def undo_plan(
    planned: Planned,
    only: str | None = None,
    asks: Callable[[set[str], int], str] | None = None,
    by_user: bool = True,
) -> Callable[[sqlite3.Connection], ChangeSet | None]:
    """A plan for the gate: put back the newest request's task changes (only `only`'s, when given).

    `by_user`: the user typed it (a few removals need no question); False when a model asked for it."""

    def plan(conn: sqlite3.Connection) -> ChangeSet | None:
        turn, events = undo_preview(conn)
        planned.lines, planned.turn = [], turn
        if turn is None or (only is not None and turn != only):
            return None
        changes, forget = [], []
        for e in events:  # newest first
            changes.append(Change(Op.PUT, e["task_id"], e["before"], tool="undo"))
            if e["tool"] == "sync" and e["before"] is None and e["after"]:
                forget.append(e["after"]["uid"])
            planned.lines.append(describe_undo(e["task_id"], e["before"], e["after"]))
        planned.lines.reverse()  # in the order the request made them
        planned.tools = frozenset(e["tool"] for e in events)
        return ChangeSet(
            tuple(changes),
            by_user=by_user,
            asks=asks(set(planned.tools), len(events)) if asks else "",
            marks=(LogMark("undo", tuple(e["id"] for e in events)),),
            doing="undo",
            after=tuple(_forget_sync(uid) for uid in forget),
        )

    return plan


def redo_plan(
    planned: Planned, asks: Callable[[set[str], int], str] | None = None, by_user: bool = True
) -> Callable[[sqlite3.Connection], ChangeSet | None]:
    """A plan for the gate: make the request undone last again; a TaskError if a task changed since."""

    def plan(conn: sqlite3.Connection) -> ChangeSet | None:
        turn, events = redo_preview(conn)
        planned.lines, planned.turn = [], turn
        if turn is None:
            return None
        for e in events:  # nothing redone over a change made since: the user's newer edit wins
            now_task = snapshot(conn, e["task_id"])
            if plain(now_task) != plain(e["before"]):
                title = (now_task or e["before"] or {}).get("title", "")
                raise TaskError(
                    f'task {e["task_id"]} "{title}" changed after the undo, so redo would overwrite '
                    "it; nothing was redone"
                )
        planned.lines = [describe_redo(e["task_id"], e["before"], e["after"]) for e in events]
        planned.tools = frozenset(e["tool"] for e in events)
        return ChangeSet(
            tuple(Change(Op.PUT, e["task_id"], e["after"], tool="redo") for e in events),
            by_user=by_user,
            asks=asks(set(planned.tools), len(events)) if asks else "",
            marks=(LogMark("redo", tuple(e["id"] for e in events)),),
            doing="redo",
        )

    return plan


def _forget_sync(uid: str) -> Callable[[sqlite3.Connection], None]:
    # Undoing a sync forgets the sync record of each task it received, so the next sync takes it again
    # from the server rather than deleting it there.
    return lambda conn: syncstate.forget(conn, uid)


def undo_last_turn(store: Store, turn: str | None = None, door: Door | None = None) -> list[str]:
    """Put back the newest request's task changes (only if it is still `turn`, when given); one line per task
    (empty: nothing to undo). The user's own command: a door that says yes to what it shows."""
    planned = Planned([])
    applied = commit(store, undo_plan(planned, turn), door or Door("undo", yes=True))
    return planned.lines if applied.changes else []


def redo_last_undo(store: Store, door: Door | None = None) -> list[str]:
    """Make again the request undone last; a TaskError if a task changed since the undo."""
    planned = Planned([])
    applied = commit(store, redo_plan(planned), door or Door("redo", yes=True))
    return planned.lines if applied.changes else []
