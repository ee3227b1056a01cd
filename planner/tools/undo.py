"""Undo the newest change, wherever it was made: the terminal's /undo and MCP's undo_last_change.

Every write logs its turn id (task_events for tasks, the forget record for
memories), so the newest turn is found the same way whichever interface made
it, and one undo reverts all of that turn's changes.
"""

from __future__ import annotations

from planner.storage.tasks import newest_turn, undo_last_turn
from planner.tools.registry import ToolContext


def undo_newest(ctx: ToolContext) -> list[str]:
    """Revert the newest turn's task changes and forgotten memories; one line per thing put back."""
    lines: list[str] = []
    turn, tasks_changed, forgot = newest_turn(ctx.store)
    if tasks_changed:
        lines += undo_last_turn(ctx.store)
    if forgot and turn and ctx.memory:
        lines += ctx.memory.unforget(turn)
    return lines
