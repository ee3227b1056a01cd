"""Which tools a model call is offered, and what becomes of a call to one it was not.

selection  the groups the request needs (request.py), plus those sent earlier in the turn (the
           groups only grow within a turn, so its calls share their prompt prefix); all of them with
           PLANNER_TOOL_GROUPS=all
screen     calls past MAX_CALLS in one reply, and calls of tools not offered, get an error instead of
           running: a real tool not sent is named as offered now (its group comes with the next step),
           an invented name gets the real tool it most likely meant, never the whole tool list
"""

from __future__ import annotations

import json

from planner.agent.budget import MAX_CALLS
from planner.agent.request import Selection, groups_for
from planner.agent.turn import ToolCall, Turn
from planner.tools import GROUPS, TOOLS, suggest_tool


def selection(turn: Turn, mode: str = "needed") -> Selection:
    """The tool groups for the turn's next model call, each with why."""
    if mode == "all":
        return Selection(tuple(GROUPS), {g: "all tools (PLANNER_TOOL_GROUPS=all)" for g in GROUPS})
    chosen = groups_for(turn.text, turn.recent, turn.reached)
    kept = {g: "sent earlier this request" for g in turn.groups if g not in chosen.groups}
    if not kept:
        return chosen
    why = {**chosen.why, **kept}
    return Selection(tuple(g for g in GROUPS if g in why), {g: why[g] for g in GROUPS if g in why})


def screen(turn: Turn, calls: list[ToolCall], offered: set[str], names: set[str]) -> None:
    """Refuse, with an error the model can act on, the calls beyond MAX_CALLS and those of tools not offered;
    a tool the model reached for is added to turn.reached, so the next step sends its group."""
    todo = [c for c in calls if c.result is None and not c.refusal]
    for c in todo[MAX_CALLS:]:
        c.refusal = (
            f"not run: at most {MAX_CALLS} calls are run from one reply; if the user asked for more, "
            "make the rest in your next reply"
        )
    for c in todo[:MAX_CALLS]:
        if isinstance(c.name, str) and c.name in offered:
            continue
        name = c.name if isinstance(c.name, str) else json.dumps(c.name, default=str)[:40]
        real = c.name if c.name in names else suggest_tool(name)
        if real not in names:
            c.refusal = f"there is no tool named {name!r}; use one of the tools you were given"
            continue
        turn.reached.append(TOOLS[real].group)
        c.refusal = (
            f"{name} was not among the tools for this request, so it did not run; it is offered now: "
            "call it again if the user asked for this"
            if real == c.name
            else f"there is no tool named {name!r}. Use {real} instead (offered now)."
        )
