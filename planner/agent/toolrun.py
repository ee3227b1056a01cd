"""Running the screened tool calls of one model reply: one question for a large change, the pool.

    calls screened by the guards (guards.py), as ToolCalls of the turn (turn.py)
      -> the rows they would change, with those this request changed already: a large change by the
         policy (planner/policy.py)? one question lists them; a yes is the request's grant for exactly
         those rows as shown, which the gate (planner/storage/gate.py) checks again at each write
      -> a change the user already declined in this request is not asked again
      -> reads side by side on the pool; writes one after another in call order on the pool
         (SQLite has one write lock anyway, and ids then follow the order asked);
         destructive calls on the calling thread, so their y/N prompt can use the terminal
      -> every call gets its result, also after Ctrl-C, and is added to turn.calls

The Agent (planner/agent/loop.py) stores the calls in history; this class never prints.
"""

from __future__ import annotations

import dataclasses
import logging
from concurrent.futures import Future, ThreadPoolExecutor

from planner.agent.turn import READ_ONLY_TOOLS, Event, ToolCall, Turn
from planner.policy import Grant, Refusal
from planner.storage.tasks import new_turn
from planner.tools import TOOLS, ToolContext, batch, run_call

log = logging.getLogger("planner")


class ToolRunner:
    """Runs batches of tool calls for one agent; one turn at a time."""

    def __init__(self, tools: ToolContext, workers: int = 4, ask_bulk: bool = True):
        self.tools = tools
        # One question for a reply's calls (planner/tools/batch.py). Off only in the guard profile "off": each
        # call is then decided alone by the gate, which still counts the request's changes in the change log.
        self.ask_bulk = ask_bulk
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tool")

    def start(self, turn: Turn) -> None:
        """Begin a user turn: a new turn id, so its task changes are one /undo, and no yes given yet."""
        turn.id = new_turn()
        self.tools.turn = turn.id
        self.tools.grant = Grant()

    def close(self) -> None:
        """Wait for running tools and release the pool."""
        self._pool.shutdown(wait=True)

    def run(self, turn: Turn, calls: list[ToolCall], emit: Event) -> None:
        """Run calls, giving each its result and adding it to turn.calls (also when Ctrl-C interrupts, then re-raised)."""
        try:
            self._run(turn, calls, emit)
        finally:
            for c in calls:
                if c.result is None:
                    c.result = {"error": "cancelled by the user"}
            turn.calls += calls

    def _run(self, turn: Turn, calls: list[ToolCall], emit: Event) -> None:
        for c in calls:
            if c.result is None and c.refusal is None and (c.name, c.task_id) in turn.declined:
                c.refusal = (
                    f"the user already said no to this change of task {c.task_id} in this request; do not ask again"
                )
                c.refused = Refusal.ALREADY_DECLINED
        if self.ask_bulk:
            self._check_bulk(turn, calls)
        todo = [c for c in calls if c.result is None and not c.refusal]
        for c in calls:
            if c not in todo:  # refused or a repeat: answered without running
                emit("tool_start", {"name": c.name, "arguments": c.args})
                self._finish(c, emit)

        def destructive(c: ToolCall) -> bool:
            t = TOOLS.get(c.name) if isinstance(c.name, str) else None
            return bool(t and t.destructive)

        reads = [c for c in todo if c.name in READ_ONLY_TOOLS]
        writes = [c for c in todo if c not in reads and not destructive(c)]
        futures: list[Future] = [self._pool.submit(self._one, turn, c, emit) for c in reads]
        if writes:
            futures.append(self._pool.submit(lambda: [self._one(turn, c, emit) for c in writes]))
        try:
            for c in todo:
                if destructive(c):
                    self._one(turn, c, emit)
        finally:
            # Tools already running finish, also after Ctrl-C: their results are kept so history stays valid.
            for f in futures:
                f.result()

    def _one(self, turn: Turn, c: ToolCall, emit: Event) -> None:
        emit("tool_start", {"name": c.name, "arguments": c.args})
        ctx = self.tools
        if c.unsure:
            ctx = dataclasses.replace(ctx, yes=False)  # the words may not ask for it: the user is asked, --yes or not
        out = run_call(ctx, c.name, c.args)
        c.result, c.ok, c.refused, c.ran = out.result, out.ok, out.refused, True
        if out.refused is Refusal.DECLINED and c.task_id is not None:
            turn.declined.add((c.name, c.task_id))
        self._finish(c, emit)

    def _finish(self, c: ToolCall, emit: Event) -> None:
        """Give the call its final result: a refusal as the error, and what the guards did as a note."""
        if c.refusal:
            c.result, c.ok = {"error": c.refusal}, False
            log.info("tool %s refused: %s", c.name, c.refusal)
        if c.notes and c.result is not None:
            c.result = {**c.result, "note": "; ".join(c.notes)}
        emit("tool_end", {"name": c.name, "arguments": c.args, "ok": c.ok, "result": c.result})

    def _check_bulk(self, turn: Turn, calls: list[ToolCall]) -> None:
        """One question for what the reply's calls would need (planner/tools/batch.py): a large change over
        this request, deletions, overwrites; refuse the calls when the user says no or no one can answer.

        Counted per request by task, so a model that changes tasks one call at a time is asked too, and
        one task changed twice counts once. A yes is the request's grant for exactly the rows listed, as
        they were shown; the gate checks each write against it.
        """
        pending = [c for c in calls if c.result is None and not c.refusal and batch.asks(c.name)]
        if not pending:
            return
        ctx = self.tools
        if any(c.unsure for c in pending):
            ctx = dataclasses.replace(ctx, yes=False)
        decided = batch.confirm(ctx, [(c.name, c.args) for c in pending])
        for i, (refusal, kind) in decided.refused.items():
            c = pending[i]
            c.refusal, c.refused = refusal, kind
            if kind is Refusal.DECLINED and c.task_id is not None:
                turn.declined.add((c.name, c.task_id))
