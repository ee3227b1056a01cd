"""The planner's tools: what the model can do, and how a call is run.

A tool is a function with a `@tool(...)` decorator (planner/tools/registry.py):
its docstring and JSON schema are what the model reads, and the decorator
declares the facts the agent acts on: `read_only` (never a change, never asks),
`changes_existing` (counts toward the large-change question), `destructive`
(asks the user first).

    planner/tools/task_tools.py    add_task, list_tasks, complete_task, update_task, delete_task, agenda, get_today
    planner/tools/memory_tools.py  remember, recall, forget
    planner/tools/query_tool.py    query_planner: one read-only SELECT over the user's data
    planner/tools/web.py           lookup: an encyclopedia summary, only with --web

`dispatch(ctx, name, args)` never raises: whatever the model sends comes back
as a result or as {"error": "..."} that says what to fix.
"""

from __future__ import annotations

from planner.tools import TOOLS, Tool, ToolContext, ToolError, dispatch, tool, tool_specs, validate

__all__ = ["TOOLS", "Tool", "ToolContext", "ToolError", "dispatch", "tool", "tool_specs", "validate"]
