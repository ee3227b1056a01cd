"""query_planner: one read-only SELECT over the user's planner data.

The guards (a read-only connection, an authorizer, caps and a time limit) are
SQLite's own and live in planner/storage/query.py; this is the tool the model
sees, with the live schema in its description.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from planner.storage import query
from planner.tools.registry import ToolContext, ToolError, tool

PROPERTIES = {"sql": {"type": "string", "description": "One SELECT statement in SQLite's dialect."}}


def describe(ctx: ToolContext) -> str:
    """query_planner's description: what it does and the live schema."""
    return f"{query.USAGE}\nTables:\n{query.schema(ctx.store.conn())}"


@tool(PROPERTIES, required=("sql",), read_only=True, describe=describe, group="lookup")
def query_planner(ctx: ToolContext, sql: str) -> dict[str, Any]:
    """Run one read-only SQL query over the user's planner data (see the tables in the description)."""
    if not sql.strip():
        raise ToolError("sql must not be empty")
    try:
        return query.run(ctx.store.path, sql)
    except (sqlite3.Error, sqlite3.Warning, query.TooManyColumns) as e:
        raise ToolError(f"{query.explain_error(e)}. Tables:\n{query.schema(ctx.store.conn())}") from None
