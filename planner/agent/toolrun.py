"""Running the screened tool calls of one model reply: large-change confirmation, the pool.

    calls screened by the guards (guards.py), as ToolCalls of the turn (turn.py)
      -> more than BULK_LIMIT distinct existing tasks changed this turn? ask about the
         calls not yet approved (or refuse them); a yes approves exactly those changes
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

from planner.agent.turn import CHANGES_EXISTING, READ_ONLY_TOOLS, Event, ToolCall, Turn
from planner.storage.tasks import BULK_LIMIT, describe_call, new_turn
from planner.tools import TOOLS, ToolContext, run_call
from planner.tools.policy import Door, Effect, Verdict, decide

log = logging.getLogger("planner")


class ToolRunner:
    """Runs batches of tool calls for one agent; one turn at a time."""

    def __init__(self, tools: ToolContext, workers: int = 4, ask_bulk: bool = True):
        self.tools = tools
        self.ask_bulk = ask_bulk  # the >BULK_LIMIT confirmation (off only in the guard profile "off")
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tool")

    def start(self, turn: Turn) -> None:
        """Begin a user turn: a new turn id, so its task changes are one /undo."""
        turn.id = new_turn()
        self.tools.turn = turn.id

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
        if self.ask_bulk:
            self._check_bulk(turn, calls)
        for c in calls:
            if c.result is None and c.refusal is None and (c.name, c.task_id) in turn.declined:
                c.refusal = (
                    f"the user already said no to this change of task {c.task_id} in this request; do not ask again"
                )
                c.refused = "already_declined"
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
        if (c.name, c.task_id) in turn.approved:
            ctx = dataclasses.replace(ctx, yes=True)  # approved in the list
        if c.unsure:
            ctx = dataclasses.replace(ctx, yes=False)  # the words may not ask for it: the user is asked, --yes or not
        out = run_call(ctx, c.name, c.args)
        c.result, c.ok, c.refused, c.ran = out.result, out.ok, out.refused, True
        if out.refused == "declined" and c.task_id is not None:
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
        """Ask before a turn changes more than BULK_LIMIT distinct existing tasks; refuse the calls if not approved.

        Counted per turn by task, so a model that changes tasks one call at a
        time is asked too, and one task changed twice counts once. A yes
        approves exactly the changes it listed; anything else asks again.
        """
        pending = [c for c in calls if c.result is None and not c.refusal and c.name in CHANGES_EXISTING]
        need = [c for c in pending if (c.name, c.task_id) not in turn.approved]
        total = turn.changed_tasks() | {c.task_id for c in pending if c.task_id is not None}
        if not need or len(total) <= BULK_LIMIT:
            return
        conn = self.tools.store.conn()
        lines = [describe_call(conn, c.name, c.args) for c in need]
        question = f"This would change {len(total)} tasks in one request:\n  " + "\n  ".join(lines) + "\nGo ahead?"
        effect = Effect(changes=tuple(str(t) for t in total))  # counted per request: the user sees it listed
        door = Door("terminal", ask=self.tools.confirm, yes=self.tools.yes)
        decision = decide(effect, door, question)
        if decision.verdict is Verdict.REFUSE:
            refusal, kind = (
                (
                    f"this request would change {len(total)} tasks, more than {BULK_LIMIT} at once, and no one can "
                    "confirm here, so nothing was changed by this call. Tell the user; they can run the planner in a "
                    "terminal or with --yes."
                ),
                "nobody",
            )
        elif decision.verdict is Verdict.ASK and not (self.tools.confirm and self.tools.confirm(question)):
            refusal, kind = (
                f"the user declined changing {len(total)} tasks at once; nothing was changed by this call",
                "declined",
            )
            turn.declined |= {(c.name, c.task_id) for c in need if c.task_id is not None}
        else:
            turn.approved |= {(c.name, c.task_id) for c in need if c.task_id is not None}
            return
        for c in need:
            c.refusal, c.refused = refusal, kind
