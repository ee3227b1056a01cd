"""The tools layer: the @tool registry and every tool the model can call.

Importing this package registers them all, in the order the model reads them
(task tools, memory tools, query_planner, lookup), and derives the tool facts
the agent acts on from what each tool declared on its `@tool(...)`.
"""

# isort: off
from planner.tools import task_tools, status_tools, plan_tools, time_tools, calendar_tools, track_tools  # noqa: F401  (registers, in this order)
from planner.tools import memory_tools, query_tool, web  # noqa: F401

# isort: on
from planner.tools.registry import (
    ALIASES,
    GROUPS,
    TOOLS,
    Dispatched,
    Tool,
    ToolContext,
    ToolError,
    dispatch,
    run_call,
    suggest_tool,
    to_json,
    tool,
    tool_specs,
    validate,
)

# Tools that only read: they never count as a change, and never need approval.
READ_ONLY_TOOLS = frozenset(name for name, t in TOOLS.items() if t.read_only)
# Calls that change a task the user already has; more than BULK_LIMIT distinct tasks in one turn asks first.
# Additions do not count: they alter nothing the user had, and /undo removes them.
CHANGES_EXISTING = frozenset(name for name, t in TOOLS.items() if t.changes_existing)

__all__ = [
    "ALIASES",
    "GROUPS",
    "CHANGES_EXISTING",
    "READ_ONLY_TOOLS",
    "TOOLS",
    "Dispatched",
    "Tool",
    "ToolContext",
    "ToolError",
    "dispatch",
    "run_call",
    "suggest_tool",
    "to_json",
    "tool",
    "tool_specs",
    "validate",
]
