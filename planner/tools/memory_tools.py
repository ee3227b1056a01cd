"""The memory tools the model calls: remember, recall and forget.

The memories themselves (storage, embedding, search) are planner/memory/longterm.py;
these functions check what the model sent and ask the user before forgetting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.memory.orders import gives_orders
from planner.tools.registry import TOOLS, ToolContext, ToolError, ask, tool

if TYPE_CHECKING:
    from planner.memory.longterm import LongTermMemory

MAX_FACT = 2000


def _memory(ctx: ToolContext) -> LongTermMemory:
    if ctx.memory is None:
        raise ToolError("long-term memory is not available in this run")
    return ctx.memory


@tool(
    {"fact": {"type": "string", "description": "One self-contained sentence about the user, with dates written out."}},
    required=("fact",),
    group="memory",
)
def remember(ctx: ToolContext, fact: str) -> dict[str, Any]:
    """Save a lasting fact about the user (a preference, a person, a place, a routine) for later conversations. Not for tasks or reminders: use add_task for those."""
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
        "query": {"type": "string", "description": "What you want to know about the user."},
        "k": {
            "type": "integer",
            "minimum": 1,
            "maximum": 20,
            "description": "How many memories to return; 3 if left out.",
        },
    },
    required=("query",),
    read_only=True,
    group="memory",
)
def recall(ctx: ToolContext, query: str, k: int = 3) -> dict[str, Any]:
    """Search saved facts about the user from earlier conversations. Keep the user's words for time in the query (last May, before the move, the first time): the search reads them. Each memory has the date it was said ("said") and, when it names one, the days it is about ("happened"): answer "when" questions from those, and when two memories disagree, the newer one holds."""
    if not query.strip():
        raise ToolError("query must not be empty")
    return {"memories": _memory(ctx).recall(query.strip(), k)}


@tool(
    {
        "query_or_id": {
            "type": "string",
            "description": "The memory's id, or words that describe it; or the word scene and a scene's name.",
        }
    },
    required=("query_or_id",),
    destructive=True,
    group="memory",
)
def forget(ctx: ToolContext, query_or_id: str) -> dict[str, Any]:
    """Delete a saved fact about the user when they ask you to forget it."""
    if not query_or_id.strip():
        raise ToolError("query_or_id must not be empty")
    memory = _memory(ctx)
    scene = memory.find_scene(query_or_id)
    if scene is not None:  # a scene is only a grouping: its memories stay
        ask(
            ctx, f'Forget the scene "{scene["name"]}" (its memories stay)?', "forgetting", "the scene was not forgotten"
        )
        return memory.forget(f"scene {scene['id']}", turn=ctx.turn)
    row = memory.find(query_or_id)
    ask(ctx, f'Forget memory {row["id"]} "{row["text"]}"?', "forgetting", f"memory {row['id']} was not forgotten")
    return memory.forget(str(row["id"]), turn=ctx.turn)
