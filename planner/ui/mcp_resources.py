"""The MCP server's resources and prompts as the protocol serves them: listing and reading them, the
subscriptions to them, and telling subscribers when the planner's data changed, here or in another process.

What the resources and prompts hold is mcp_views.py's; the tools are mcp_server.py's. A subscription is
only to a resource the planner has: one made-up URI is refused (INVALID_PARAMS), so a client can hold at
most one subscription per resource (resources/subscribe, 2025-11-25) and at most MAX_STREAMS listen
streams (subscriptions/listen, 2026-07-28), and one write sends at most that many notifications.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError

from planner.tools import ToolContext
from planner.ui.mcp_views import PROMPTS, RESOURCES, prompt_text, view

log = logging.getLogger("planner")

WATCH_SECONDS = 1.0  # how often the database is checked for changes made by another process
MAX_STREAMS = 8  # subscriptions/listen streams open at once (the SDK's default is 1,024)


def known(uri: str) -> str:
    """The URI when it is one of the planner's resources; else the client's mistake, said (INVALID_PARAMS)."""
    if uri not in RESOURCES:
        raise MCPError(types.INVALID_PARAMS, f"no resource {uri}; the planner has {', '.join(RESOURCES)}")
    return uri


class Listen:
    """subscriptions/listen: the SDK's handler, for the planner's own resources only and MAX_STREAMS streams."""

    def __init__(self, bus: InMemorySubscriptionBus):
        self.handler = ListenHandler(bus, max_subscriptions=MAX_STREAMS)

    async def __call__(self, ctx: Any, params: Any) -> Any:
        """Refuse a stream that names a resource the planner does not have; else serve it."""
        for uri in params.notifications.resource_subscriptions or ():
            known(str(uri))
        return await self.handler(ctx, params)


class Resources:
    """The server's resources and prompts; PlannerServer sets `ctx` and calls `start_resources` first."""

    ctx: ToolContext

    def start_resources(self) -> None:
        """No subscribers yet; the bus the listen streams hear."""
        self.subscribed: dict[str, Any] = {}  # uri -> the session that subscribed (protocol 2025-11-25)
        self.seen = 0  # the file's data_version last told to subscribers
        self.bus = InMemorySubscriptionBus()  # subscriptions/listen streams (protocol 2026-07-28)
        self.listen = Listen(self.bus)

    async def list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        """The three views of the planner, as JSON."""
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=uri, name=name, description=about, mime_type="application/json")
                for uri, (name, about) in RESOURCES.items()
            ]
        )

    async def read_resource(self, ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        """One resource's JSON."""
        uri = known(str(params.uri))
        data = await anyio.to_thread.run_sync(view, self.ctx, uri)
        text = json.dumps(data, ensure_ascii=False)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )

    async def subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        """Tell this client when a resource changes; only a resource the planner has (so at most one each)."""
        self.subscribed[known(str(params.uri))] = ctx.session
        return types.EmptyResult()

    async def unsubscribe(self, ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        """Stop telling this client about a resource."""
        self.subscribed.pop(str(params.uri), None)
        return types.EmptyResult()

    async def notify_all(self) -> None:
        """Tell subscribed clients that the planner's data changed (what the file holds now is seen)."""
        self.seen = await anyio.to_thread.run_sync(self.ctx.store.data_version)  # the watch need not say it again
        for uri in RESOURCES:
            await self.bus.publish(ResourceUpdated(uri))  # only streams that asked for `uri` hear it
        for uri, session in list(self.subscribed.items()):
            try:
                await session.send_resource_updated(uri)
            except Exception as e:  # a client that went away
                log.info("resource update for %s not sent: %s", uri, e)

    async def watch(self) -> None:
        """Notice writes by other processes (the terminal, another MCP server) and tell subscribers."""
        store = self.ctx.store
        self.seen = await anyio.to_thread.run_sync(store.data_version)
        while True:
            await anyio.sleep(WATCH_SECONDS)
            if await anyio.to_thread.run_sync(store.data_version) != self.seen:
                await self.notify_all()

    async def list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        """daily_review and weekly_plan."""
        return types.ListPromptsResult(
            prompts=[types.Prompt(name=name, description=about) for name, about in PROMPTS.items()]
        )

    async def get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        """A prompt with the agenda, the plan (and for the week, open tasks without a date) and relevant memories."""
        if params.name not in PROMPTS:
            raise MCPError(types.INVALID_PARAMS, f"no prompt {params.name}; the planner has {', '.join(PROMPTS)}")
        text = await anyio.to_thread.run_sync(prompt_text, self.ctx, params.name)
        message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        return types.GetPromptResult(description=PROMPTS[params.name], messages=[message])
