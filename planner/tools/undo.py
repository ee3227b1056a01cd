"""Undo and redo, wherever the change was made: /undo and /redo, the shell's `undo` and `redo`, and MCP's
undo_last_change and redo_last_change.

Every write logs its turn id (task_events for tasks, the forget record for
memories), so the newest turn is found the same way whichever interface made
it, and one undo reverts all of that turn's changes. Undo is a change like
any other, so it goes through the policy (policy.py) first:

    the user typed it (/undo, `undo`)       asks when it would remove, restore or change more than 3
                                            tasks, or when it undoes an import or a sync
    a model asked for it (MCP)              asks also before it removes any task (an undone add)

Redo makes again what the last undo took back, unless a task changed since
(then it refuses, naming the task). Redo covers task changes; a memory put
back by undo stays, and `forget` forgets it again.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from planner.storage import worklog
from planner.storage.calendar import undo_preferences
from planner.storage.fields import TaskError
from planner.storage.tasks import (
    newest_turn,
    recently_changed,
    redo_last_undo,
    redo_preview,
    undo_last_turn,
    undo_preview,
)
from planner.tools.policy import BULK_WINDOW, Door, Effect, decide, settle
from planner.tools.registry import TOOLS, ToolContext


@dataclass
class Outcome:
    """What an undo or redo did: a line per thing, or why it did nothing."""

    lines: list[str] = field(default_factory=list)
    refused: str = ""  # set: nothing was done, and this says why and what to do


def _effect(events: list[dict], by_user: bool, verb: str, ctx: ToolContext | None = None) -> Effect:
    """What replaying these events would do, for the policy: each task removed, restored or changed (and, when
    a model asked for it, the other tasks changed in the bulk window, as for any change)."""
    deletes, changes = [], []
    for e in events:
        gone, back = (e["after"], e["before"]) if verb == "undo" else (e["before"], e["after"])
        title = (gone or back or {}).get("title", "")
        if back is None:
            deletes.append(f'{verb} removes task {e["task_id"]} "{title}"')
        else:
            changes.append(f'{verb} {"restores" if gone is None else "changes"} task {e["task_id"]} "{title}"')
    tools = {e["tool"] for e in events}
    kind = "import" if "import" in tools else "sync" if "sync" in tools else ""
    asks = f"it would {verb} {'an' if kind == 'import' else 'a'} {kind} of {len(events)} changes" if kind else ""
    if by_user:  # the user's own command: small ones run, as the user just asked for exactly this
        return Effect(changes=tuple(deletes + changes), asks=asks, by_user=True)
    recent = 0
    if ctx is not None:
        changing = frozenset(n for n, t in TOOLS.items() if t.changes_existing)
        since = ctx.clock() - dt.timedelta(seconds=BULK_WINDOW)
        recent = len(recently_changed(ctx.store.conn(), since, changing) - {e["task_id"] for e in events})
    return Effect(deletes=tuple(deletes), changes=tuple(deletes + changes), asks=asks, recent=recent)


def _door(ctx: ToolContext, door: Door | None) -> Door:
    return door or Door("undo", ask=ctx.confirm, yes=ctx.yes, how="run it in a terminal, or with --yes")


def undo_newest(ctx: ToolContext, door: Door | None = None, by_user: bool = True) -> Outcome:
    """Revert the newest turn's task changes and forgotten memories, if the policy lets it."""
    newest = newest_turn(ctx.store)
    turn = newest.turn
    out = Outcome()
    if newest.tasks:
        pending_turn, events = undo_preview(ctx.store.conn())
        ok, reason = settle(decide(_effect(events, by_user, "undo", ctx), _door(ctx, door)), _door(ctx, door))
        if not ok:
            return Outcome(refused=f"nothing was undone: {reason}")
        out.lines += undo_last_turn(ctx.store, pending_turn)
    if newest.forgot and turn and ctx.memory:
        out.lines += ctx.memory.unforget(turn)
    if newest.preferences and turn:
        with ctx.store.write() as conn:
            out.lines += undo_preferences(conn, turn)
    if newest.worklog and turn:
        with ctx.store.write() as conn:
            out.lines += worklog.undo(conn, turn)
    return out


def redo_newest(ctx: ToolContext, door: Door | None = None, by_user: bool = True) -> Outcome:
    """Make again what the last undo took back, if the policy lets it and no task changed since."""
    turn, events = redo_preview(ctx.store.conn())
    if turn is None:
        return Outcome()
    ok, reason = settle(decide(_effect(events, by_user, "redo", ctx), _door(ctx, door)), _door(ctx, door))
    if not ok:
        return Outcome(refused=f"nothing was redone: {reason}")
    try:
        return Outcome(lines=redo_last_undo(ctx.store))
    except TaskError as e:
        return Outcome(refused=str(e))
