"""Undo and redo, wherever the change was made: /undo and /redo, the shell's `undo` and `redo`, and MCP's
undo_last_change and redo_last_change.

Every write logs its turn id (task_events for tasks, the forget record for
memories), so the newest turn is found the same way whichever interface made
it, and one undo reverts all of that turn's changes. Undo is a change like
any other: its change set (planner/storage/undoing.py) goes through the one
gate, which asks as the policy says (planner/policy.py):

    the user typed it (/undo, `undo`)       asks when it would remove, restore or change more than 3
                                            tasks, or when it undoes an import or a sync
    a model asked for it (MCP)              asks also before it removes any task (an undone add)

The rows the user is asked about are the rows written: if another process
changed the newest request meanwhile, the plan differs and the user is asked
again. Redo makes again what the last undo took back, unless a task changed
since (then it refuses, naming the task). Redo covers task changes; a memory
put back by undo stays, and `forget` forgets it again.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from planner.policy import Door
from planner.storage.fields import TaskError
from planner.storage.gate import Refused, commit
from planner.storage.undoing import Planned, redo_plan, undo_plan
from planner.tools.registry import ToolContext


@dataclass
class Outcome:
    """What an undo or redo did: a line per thing, or why it did nothing."""

    lines: list[str] = field(default_factory=list)
    refused: str = ""  # set: nothing was done, and this says why and what to do


def _asks(verb: str):
    def asks(tools: set[str], n: int) -> str:
        kind = "import" if "import" in tools else "sync" if "sync" in tools else ""
        return f"it would {verb} {'an' if kind == 'import' else 'a'} {kind} of {n} changes" if kind else ""

    return asks


def _door(ctx: ToolContext, door: Door | None, name: str) -> Door:
    return door or dataclasses.replace(ctx.door(), name=name)


def undo_newest(ctx: ToolContext, door: Door | None = None, by_user: bool = True) -> Outcome:
    """Revert the newest request's changes (tasks, events, preferences, tracked time through the gate; its
    forgotten memories beside it), if the policy lets it."""
    planned = Planned([])
    try:
        plan = undo_plan(planned, asks=_asks("undo"), by_user=by_user)
        commit(ctx.store, plan, _door(ctx, door, "undo"), ctx.grant)
    except Refused as e:
        return Outcome(refused=f"nothing was undone: {e}")
    out = Outcome(lines=list(planned.lines))
    if ctx.memory and planned.turn:  # the search learns the memories and scenes put back
        ctx.memory.restored(planned.memories)
        ctx.memory.scenes.reload()
    return out


def redo_newest(ctx: ToolContext, door: Door | None = None, by_user: bool = True) -> Outcome:
    """Make again what the last undo took back, if the policy lets it and no task changed since."""
    planned = Planned([])
    try:
        applied = commit(
            ctx.store, redo_plan(planned, asks=_asks("redo"), by_user=by_user), _door(ctx, door, "redo"), ctx.grant
        )
    except Refused as e:
        return Outcome(refused=f"nothing was redone: {e}")
    except TaskError as e:
        return Outcome(refused=str(e))
    return Outcome(lines=planned.lines if applied.changes or planned.turn else [])  # "already there" too
