"""The memory tools the model calls: remember, recall and forget.

The memories themselves (storage, embedding, search) are planner/memory/longterm.py;
these functions check what the model sent and ask the user before forgetting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.memory.orders import gives_orders
from planner.policy import Need, Rule
from planner.storage.gate import version
from planner.tools.registry import TOOLS, ToolContext, ToolError, tool

if TYPE_CHECKING:
    from planner.memory.longterm import LongTermMemory

MAX_FACT = 2000


def _memory(ctx: ToolContext) -> LongTermMemory:
    if ctx.memory is None:
        raise ToolError("long-term memory is not available in this run")
    return ctx.memory


@tool(
    {"fact": {"type": "string", "description": "One sentence about the user, dates written out."}},
    required=("fact",),
    group="memory",
)
def remember(ctx: ToolContext, fact: str) -> dict[str, Any]:
    """Save a lasting fact about the user (a person, a place, a preference). Not for tasks: use add_task."""
    fact = fact.strip()
    if not fact:
        raise ToolError("fact must not be empty")
    why = gives_orders(fact, frozenset(TOOLS))
    if why:
        # Memories are attached to later requests: one that gives orders would act on every turn.
        raise ToolError(
            f"a memory is a fact about the user, not an instruction to the planner ({why}); nothing was stored. "
            "Tell the user you cannot store rules that act on their data; they can say it as a fact, or add a task."
        )
    if len(fact) > MAX_FACT:
        raise ToolError(f"fact is {len(fact)} characters; keep it under {MAX_FACT}")
    return _memory(ctx).remember(fact, said_on=ctx.today().isoformat())


@tool(
    {
        "query": {"type": "string", "description": "What to find, with the user's words for time."},
        "k": {"type": "integer", "minimum": 1, "maximum": 20, "description": "Default 3."},
    },
    required=("query",),
    read_only=True,
    group="memory",
)
def recall(ctx: ToolContext, query: str, k: int = 3) -> dict[str, Any]:
    """Search facts saved about the user. Each has the day it was said ("said") and the days it is about ("happened"); of two that disagree, the newer holds."""
    if not query.strip():
        raise ToolError("query must not be empty")
    return {"memories": _memory(ctx).recall(query.strip(), k)}


@tool(
    {
        "query_or_id": {
            "type": "string",
            "description": "The memory's id or words of it (scene NAME: a scene).",
        }
    },
    required=("query_or_id",),
    destructive=True,
    group="memory",
)
def forget(ctx: ToolContext, query_or_id: str) -> dict[str, Any]:
    """Delete a saved fact when the user asks you to forget it."""
    if not query_or_id.strip():
        raise ToolError("query_or_id must not be empty")
    memory = _memory(ctx)
    named = ctx.mandate.forget  # the user's words ask to forget (intent.py); --yes covers only that
    scene = memory.find_scene(query_or_id)
    if scene is not None:  # a scene is only a grouping: its memories stay
        line = f'forget the scene "{scene["name"]}" (its memories stay)'
        ctx.confirm_needs([Need(Rule.DELETE, ("scenes", scene["id"]), line, version(dict(scene)), named)])
        return memory.forget(f"scene {scene['id']}", turn=ctx.turn)
    # The memory the user says yes to, as shown: one changed or forgotten since is said, never another forgotten.
    return memory.forget(query_or_id, turn=ctx.turn, door=ctx.door(), grant=ctx.grant)
