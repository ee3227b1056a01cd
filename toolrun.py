"""Running the tool calls of one model reply: screening, confirmation of large changes, the pool.

    calls as the model sent them
      -> more than BULK_LIMIT changes to existing tasks this turn? ask once (or refuse them all)
      -> each call screened against what the user said (recovery.screen_call)
      -> reads side by side on the pool; writes one after another in call order on the pool
         (SQLite has one write lock anyway, and ids then follow the order asked);
         destructive calls on the calling thread, so their y/N prompt can use the terminal
      -> outcomes {index: (result, ok, arguments run)}, complete even after Ctrl-C

The Agent (agent.py) stores the outcomes in history; this class never prints.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from recovery import call_key, drop_unknown, screen_call
from tasks import BULK_LIMIT, describe_call, new_turn
from tools import CHANGES_EXISTING, READ_ONLY_TOOLS, TOOLS, ToolContext, dispatch

log = logging.getLogger("planner")

Outcome = tuple[dict[str, Any], bool, Any]  # (result for the model, ok, the arguments that ran)
Event = Callable[[str, dict[str, Any]], None]


def _name(call: dict[str, Any]) -> Any:
    return (call.get("function") or {}).get("name")


class ToolRunner:
    """Runs batches of tool calls for one agent; one turn at a time."""

    def __init__(self, tools: ToolContext, workers: int = 4):
        self.tools = tools
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tool")
        self.start_turn([])

    def start_turn(self, said: list[str]) -> None:
        """Begin a user turn: what the user said (last turn and now), a new turn id for /undo, no changes yet."""
        self.said = said
        self.tools.turn = new_turn()
        self._changed = 0  # changes to existing tasks so far this turn
        self._bulk_ok = False  # the user approved a large change this turn

    def close(self) -> None:
        """Wait for running tools and release the pool."""
        self._pool.shutdown(wait=True)

    def run(self, calls: list[dict[str, Any]], failed: set[str], emit: Event, outcomes: dict[int, Outcome]) -> None:
        """Run calls, filling `outcomes` for every index (also when Ctrl-C interrupts, then re-raised).

        `failed` holds call_key()s of calls that failed earlier this turn.
        """
        refused = self._check_bulk(calls)
        if refused:
            # Nothing runs: the model hears why, and the turn's history stays valid.
            for i, c in enumerate(calls):
                outcomes[i] = ({"error": refused}, False, None)
                fn = c.get("function") or {}
                emit(
                    "tool_end",
                    {"name": _name(c), "arguments": fn.get("arguments"), "ok": False, "result": outcomes[i][0]},
                )
            return

        def destructive(call: dict[str, Any]) -> bool:
            t = TOOLS.get(_name(call))
            return bool(t and t.destructive)

        reads = [i for i, c in enumerate(calls) if _name(c) in READ_ONLY_TOOLS]
        writes = [i for i, c in enumerate(calls) if i not in reads and not destructive(c)]
        futures: dict[int, Future] = {i: self._pool.submit(self._one, calls[i], failed, emit) for i in reads}
        if writes:
            futures[writes[0]] = self._pool.submit(lambda: [self._one(calls[i], failed, emit) for i in writes])

        def collect(i: int, f: Future) -> None:
            if i in reads:
                outcomes[i] = f.result()
            else:
                outcomes.update(zip(writes, f.result(), strict=True))

        try:
            for i, c in enumerate(calls):
                if destructive(c):
                    outcomes[i] = self._one(c, failed, emit)
            for i, f in futures.items():
                collect(i, f)
        except KeyboardInterrupt:
            # Tools already running finish; their results are kept so history stays valid.
            for i, f in futures.items():
                if i not in outcomes:
                    collect(i, f)
            for i in range(len(calls)):
                outcomes.setdefault(i, ({"error": "cancelled by the user"}, False, None))
            raise

    def _one(self, call: dict[str, Any], failed: set[str], emit: Event) -> Outcome:
        fn = call.get("function") or {}
        name, args = fn.get("name"), fn.get("arguments")
        emit("tool_start", {"name": name, "arguments": args})
        note = None
        if call_key(name, args, raw=True) in failed:
            # The same failing call again: small models loop on an extra argument; drop it this time.
            args, dropped = drop_unknown(name, args)
            note = f"ignored arguments this tool does not take: {', '.join(dropped)}" if dropped else None
        args, refusal, screen_note = screen_call(name, args, self.said, self.tools.today())
        note = note or screen_note
        if refusal:
            out, ok = {"error": refusal}, False
            log.info("tool %s refused: %s", name, refusal)
        else:
            ctx = self.tools
            if self._bulk_ok and name in CHANGES_EXISTING and ctx.confirm is not None:
                ctx = dataclasses.replace(ctx, confirm=lambda question: True)  # approved in the list
            out, ok = dispatch(ctx, name, args)
            if ok and note:
                out = {**out, "note": note}
        emit("tool_end", {"name": name, "arguments": args, "ok": ok, "result": out})
        return out, ok, args  # the arguments that ran, so repeats are recognised

    def _check_bulk(self, calls: list[dict[str, Any]]) -> str | None:
        """Ask before a turn changes more than BULK_LIMIT existing tasks; the refusal for the model, or None.

        Counted per turn, so a model that changes tasks one call at a time is
        asked too. One yes covers the rest of the turn, deletions included: the
        list the user approved names them.
        """
        writes = [c.get("function") or {} for c in calls]
        writes = [f for f in writes if f.get("name") in CHANGES_EXISTING]
        if self._bulk_ok or not writes or self._changed + len(writes) <= BULK_LIMIT:
            self._changed += len(writes)
            return None
        conn = self.tools.store.conn()
        lines = [describe_call(conn, f["name"], f.get("arguments")) for f in writes]
        total = self._changed + len(writes)
        question = f"This would change {total} tasks in one request:\n  " + "\n  ".join(lines) + "\nGo ahead?"
        if self.tools.confirm is None:
            return (
                f"this request would change {total} tasks, more than {BULK_LIMIT} at once, and no one can confirm "
                "here, so nothing was changed by these calls. Tell the user; they can run the planner in a terminal "
                "or with --yes."
            )
        if not self.tools.confirm(question):
            return f"the user declined changing {total} tasks at once; nothing was changed by these calls"
        self._bulk_ok = True
        self._changed = total
        return None
