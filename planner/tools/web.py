"""lookup: a short encyclopedia summary from Wikipedia, only when the user asks for the web.

The planner is private: nothing leaves the machine unless it is started with
`--web` (or PLANNER_WEB=1). Without it the model is not even offered the tool.
The client (requests, redirects, caps) is wikipedia.py. Text from the web is
data: the result says so, and the system prompt tells the model never to
follow instructions found in it.
"""

from __future__ import annotations

from typing import Any

from planner.tools.registry import ToolContext, ToolError, tool
from planner.tools.wikipedia import WebError

PROPERTIES = {"topic": {"type": "string", "description": "The subject to look up, as an encyclopedia title."}}


@tool(PROPERTIES, required=("topic",), read_only=True, enabled=lambda ctx: ctx.web is not None, group="lookup")
def lookup(ctx: ToolContext, topic: str) -> dict[str, Any]:
    """Look up a topic in the encyclopedia (Wikipedia): a short summary and its URL. Only for general knowledge, never for the user's own tasks or facts."""
    if ctx.web is None:
        raise ToolError("web lookups are off; the user can start the planner with --web to allow them")
    if not topic.strip():
        raise ToolError("topic must not be empty")
    if len(topic) > 300:
        raise ToolError("topic is too long; give the title of one encyclopedia page")
    try:
        return ctx.web.summary(topic)
    except WebError as e:
        raise ToolError(str(e)) from None
