"""How an MCP client brings the user's yes: the part of the server (PlannerServer, mcp_server.py) that says how a
call hears the user (the tool context's door), asks through elicitation, and carries an answer given in a later
round back to the call it was for (mcp_answers.py signs and checks the request_state).

Outside clients skip the terminal's y/N; the one gate (planner/storage/gate.py) applies the policy
(planner/policy.py) to what each call would change:
  - a client that offers elicitation asks its user, and only their answer counts (a request mid-call on
    protocol 2025-11-25, an `input_required` round on 2026-07-28);
  - one that does not is refused with a sentence saying what works; its `confirm: true` counts only where the
    user allowed it (`mcp --yes`, PLANNER_MCP_CONFIRM=1).

A mixin rather than functions: these methods read the server's context and settings, and keeping them methods
kept the move from mcp_server.py a move (the code is as it was there).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread
import mcp_types as types

from planner.policy import ALL, BULK_WINDOW, NOTHING, Grant, Mandate
from planner.storage.gate import Pending
from planner.storage.tasks import new_turn
from planner.tools import Tool, ToolContext
from planner.ui.mcp_answers import ANSWER, States, said_yes

log = logging.getLogger("planner")

CONFIRM = {
    "type": "boolean",
    "description": "Only for clients that cannot ask their user: true after the user said yes to exactly this "
    "change. Counts only when the user allowed it (planner mcp --yes or PLANNER_MCP_CONFIRM=1).",
}


class Confirmation:
    """The server's side of the user's yes; PlannerServer sets `ctx`, `yes`, `confirm_allowed` and `states`."""

    ctx: ToolContext
    yes: bool  # --yes: the user allowed every change in advance
    confirm_allowed: bool  # PLANNER_MCP_CONFIRM: `confirm: true` from a client without elicitation counts
    states: States  # answers that come back in a later round (protocol 2026-07-28)

    def asks(self, t: Tool) -> bool:
        """Whether a call of this tool may need the user's yes (and so takes `confirm`)."""
        return t.destructive or t.changes_existing

    def run_ctx(self, ctx: Any, confirmed: bool, grant: Grant | None = None) -> ToolContext:
        """The tool context of one call: how this client brings the user's yes, and what a yes covers.

        A client that offers elicitation asks its user (only their answer counts); one that does not may
        pass `confirm: true` where the user allowed it (`--yes`, PLANNER_MCP_CONFIRM=1). A server started
        with --yes trusts its client's requests as the user's words; otherwise they name nothing, so a
        deletion, an overwrite or a large change asks."""
        trusted = self.yes or (confirmed and not self.can_ask(ctx) and self.confirm_allowed)
        how = (
            "ask the user, then start the planner's MCP server with --yes or set PLANNER_MCP_CONFIRM=1 so "
            "that confirm: true stands for their yes"
        )
        return dataclasses.replace(
            self.ctx,
            turn=new_turn(),
            confirm=self.asker(ctx) if self.can_ask(ctx) else None,
            yes=trusted,
            mandate=ALL if trusted else Mandate(NOTHING, NOTHING),
            window=BULK_WINDOW,
            door_name="mcp",
            how=how,
            grant=grant or Grant(),
        )

    @staticmethod
    def can_ask(ctx: Any) -> bool:
        """Whether the client offers elicitation (then only the user's answer to it counts)."""
        caps = ctx.session.client_capabilities
        return bool(caps and caps.elicitation)

    def asker(self, ctx: Any) -> Callable[[str], bool]:
        """The door's question, from the thread the call runs on: a request to the client mid-call
        (protocol 2025-11-25), or, where the client answers in a later round (2026-07-28), Pending."""

        def ask(question: str) -> bool:
            if not ctx.session.can_send_request:
                raise Pending(question, [])
            return anyio.from_thread.run(self.elicit, ctx, question)

        return ask

    async def elicit(self, ctx: Any, question: str) -> bool:
        """Ask the user through the client; only an accepted form whose `confirm` is the boolean true is a yes."""
        try:
            reply = await ctx.session.elicit_form(question, ANSWER, ctx.request_id)
        except Exception as e:  # the client failed to answer: nobody said yes
            log.info("elicitation failed: %s", e)
            return False
        return said_yes(reply)

    # -- an answer that comes back in a later round (protocol 2026-07-28)

    def input_required(self, name: str, args: dict[str, Any], pending: Pending) -> types.InputRequiredResult:
        """Hand the question out; the state binds the answer to this call, these rows as shown, once, for a while."""
        grant = Grant()
        grant.approve(pending.needs)
        state = self.states.issue(name, args, grant)
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=pending.question, requested_schema=ANSWER)
        )
        return types.InputRequiredResult(input_requests={"confirm": request}, request_state=state)

    def answered(
        self, ctx: Any, params: types.CallToolRequestParams, name: str, args: dict[str, Any]
    ) -> tuple[Grant | None, bool | None]:
        """The user's answer brought back with a request_state: (the rows it grants, True); (None, False) for
        a no; (None, None) when there is none, or the state is not valid for this call (then it asks again)."""
        answer = (getattr(params, "input_responses", None) or {}).get("confirm")
        state = getattr(params, "request_state", None)
        if answer is None or not state or not self.can_ask(ctx):
            return None, None
        rows = self.states.redeem(state, name, args)
        if rows is None:
            return None, None  # expired, used, or for another call: ask again
        if not said_yes(answer):
            return None, False
        return Grant(rows), True
