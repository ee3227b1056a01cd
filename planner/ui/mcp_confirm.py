"""How an MCP client brings the user's yes: the part of the server (PlannerServer, mcp_server.py) that decides
whether a call needs it, asks the user through elicitation, and binds an answer to the call it answers.

Outside clients skip the terminal's y/N, so the policy (planner/tools/policy.py) is applied here:
  - a deletion (delete_task, forget), and a change to an existing task once three others were changed in
    the last two minutes, ask the user first: through elicitation when the client offers it (a request
    mid-call on protocol 2025-11-25, an `input_required` round on 2026-07-28);
  - else the call is refused with a sentence saying what works; `confirm: true` from a client that cannot
    ask counts only where the user allowed it (`mcp --yes`, PLANNER_MCP_CONFIRM=1).

A mixin rather than functions: these methods read the server's context and settings, and keeping them
methods kept the move from mcp_server.py a move (the code is as it was there).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import logging
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types

from planner.storage.listing import list_ids
from planner.storage.tasks import BULK_LIMIT, describe_call, recently_changed, snapshot
from planner.tools import CHANGES_EXISTING, Tool, ToolContext, dispatch
from planner.tools.policy import BULK_WINDOW, Door, Effect
from planner.tools.status_tools import subtasks_question

log = logging.getLogger("planner")

CONFIRM = {
    "type": "boolean",
    "description": "Only for clients that cannot ask their user: true after the user said yes to exactly this "
    "change. Counts only when the user allowed it (planner mcp --yes or PLANNER_MCP_CONFIRM=1).",
}


class Refusal(Exception):
    """A call that does not run; the message goes back to the client as the error."""


def answer_key(name: str, args: dict[str, Any], question: str) -> str:
    """What an answer to an input_required question is bound to: this tool, these arguments, this question."""
    blob = json.dumps([name, args, question], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


class Confirmation:
    """The server's side of the user's yes; PlannerServer sets `ctx`, `yes` and `confirm_allowed`."""

    ctx: ToolContext
    yes: bool  # --yes: the user allowed every change in advance
    confirm_allowed: bool  # PLANNER_MCP_CONFIRM: `confirm: true` from a client without elicitation counts

    def asks(self, t: Tool) -> bool:
        """Whether a call of this tool may need the user's yes (and so takes `confirm`)."""
        return t.destructive or t.changes_existing

    def door(self, ctx: Any, confirmed: bool) -> Door:
        """How this client can bring the user's yes: elicitation, or `confirm` where the user allowed it."""
        asks = self.can_ask(ctx)
        yes = self.yes or (confirmed and not asks and self.confirm_allowed)
        how = (
            "ask the user, then start the planner's MCP server with --yes or set PLANNER_MCP_CONFIRM=1 so "
            "that confirm: true stands for their yes"
        )
        return Door("mcp", ask=(lambda q: False) if asks else None, yes=yes, how=how)

    @staticmethod
    def can_ask(ctx: Any) -> bool:
        """Whether the client offers elicitation (then only the user's answer to it counts)."""
        caps = ctx.session.client_capabilities
        return bool(caps and caps.elicitation)

    async def effect(self, t: Tool, args: dict[str, Any]) -> tuple[Effect | Refusal, str]:
        """What this call would do, for the policy: its deletion, its tasks changed with the bulk window's,
        and the question the tool itself would ask (worded by the tool: which task, which memory)."""
        asked: list[str] = []

        def capture(q: str) -> bool:
            asked.append(q)
            return False

        if t.name in ("complete_task", "cancel_task"):
            task = await anyio.to_thread.run_sync(snapshot, self.ctx.store.conn(), args["id"])
            doing = "completing" if t.name == "complete_task" else "cancelling"
            if task is not None and task["status"] == "open":
                asked += [q for q in [subtasks_question(self.ctx.store.conn(), task, doing)] if q]
        if t.destructive:
            # A run that nobody confirms stops at its question, before any write, and hands it over.
            out, ok = await anyio.to_thread.run_sync(
                dispatch, dataclasses.replace(self.ctx, confirm=capture), t.name, args
            )
            if t.destructive and not asked:  # it failed before asking (no such task, a bad argument)
                return Refusal(out.get("error", "the call did not run")), ""
        if not t.changes_existing:
            return Effect(deletes=tuple(asked)), (asked[0] if asked else "")
        conn = self.ctx.store.conn()
        since = self.ctx.clock() - dt.timedelta(seconds=BULK_WINDOW)
        ids = set(list_ids(conn, args["name"])) if t.name == "rename_list" else {args.get("id")}
        others = await anyio.to_thread.run_sync(recently_changed, conn, since, CHANGES_EXISTING)
        what = await anyio.to_thread.run_sync(describe_call, conn, t.name, args)
        effect = Effect(
            deletes=tuple(asked) if t.destructive else (),
            changes=tuple(f"{what} (task {i})" for i in ids),
            recent=len(others - ids),
            asks=asked[0] if asked and not t.destructive else "",
        )
        question = asked[0] if asked else ""
        if not question and effect.changed > BULK_LIMIT:
            question = f"{what}? That makes {effect.changed} tasks changed in {BULK_WINDOW / 60:g} minutes"
        return effect, question

    async def ask(self, ctx: Any, params: types.CallToolRequestParams, question: str, key: str) -> Any:
        """The user's yes or no through elicitation: True, False, an input_required round, or None (cannot ask)."""
        if not self.can_ask(ctx):
            return None
        schema = {
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "title": "Go ahead?", "default": False}},
            "required": ["confirm"],
        }
        if ctx.session.can_send_request:  # protocol 2025-11-25: a request to the client mid-call
            try:
                reply = await ctx.session.elicit_form(question, schema, ctx.request_id)
            except Exception as e:  # the client failed to answer: nobody said yes
                log.info("elicitation failed: %s", e)
                return None
            return reply.action == "accept" and bool((reply.content or {}).get("confirm"))
        # Protocol 2026-07-28: return the question; the client calls again with the answer. The
        # state binds the answer to this exact call and question, so it cannot approve another one.
        answer = (params.input_responses or {}).get("confirm")
        if answer is not None and params.request_state == key:
            return getattr(answer, "action", None) == "accept" and bool(
                (getattr(answer, "content", None) or {}).get("confirm")
            )
        request = types.ElicitRequest(params=types.ElicitRequestFormParams(message=question, requested_schema=schema))
        return types.InputRequiredResult(input_requests={"confirm": request}, request_state=key)
