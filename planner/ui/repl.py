"""The plain line-per-turn REPL and one-shot requests (the full terminal is tui.py).

Used when stdin or stdout is not a terminal, with TERM=dumb or --plain, and for
`python agent.py "a request"`. Like tui.py it only renders the agent's events
and prints; it decides nothing.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from planner.agent.loop import INTERRUPTED, Agent
from planner.ui.commands import EXIT_WORDS, Stats, run_command
from planner.ui.outcomes import Failure, Refused
from planner.ui.text import err, prompted_line, safe
from planner.ui.traceview import Trace


class Printer:
    """Renders agent events: streamed tokens on a terminal, the reply otherwise; the trace on stderr.

    Each model call's text starts its own `bot> ` line, so a first attempt and the retry after a
    critique never run together; a final reply that differs from what was streamed (the step
    limit, a reply built from the results) is printed whole. Trace lines (traceview.py) go to
    stderr, so stdout stays the replies alone for scripts.
    """

    def __init__(self, out: TextIO, stream: bool, trace: Trace | None = None, err_out: TextIO | None = None):
        self.out = out
        self.stream = stream
        self.trace = trace
        self.err_out = err_out or sys.stderr
        self.streamed = False  # this model call has printed text
        self.ended = False  # ...and its line was ended early, for a trace line
        self.shown = ""  # the text of the latest streamed line

    def start(self) -> None:
        """Begin a reply; `bot> ` waits for its first token, so a confirmation asked before it reads cleanly."""
        self.streamed, self.ended, self.shown = False, False, ""

    def show_trace(self, lines: list[str]) -> None:
        """Print trace lines on stderr, below any streamed text."""
        if not lines:
            return
        if self.streamed and not self.ended:
            self.out.write("\n")
            self.out.flush()
            self.ended = True
        for line in lines:
            print(line, file=self.err_out, flush=True)

    def event(self, kind: str, data: dict[str, Any]) -> None:
        """Handle one agent event."""
        if self.trace:
            self.show_trace(self.trace.lines(kind, data))
        if kind == "token" and self.stream:
            self.out.write(safe(data["text"]) if self.streamed else "bot> " + safe(data["text"]))
            self.out.flush()
            self.streamed = True
            self.shown += data["text"]
        elif kind == "status" and self.streamed:  # a new model call: what was shown stays, on its own line
            if not self.ended:
                self.out.write("\n")
            self.streamed, self.ended, self.shown = False, False, ""
        elif kind == "warning":
            print(f"\nwarning: {safe(data['text'])}", file=self.err_out, flush=True)

    def finish(self, reply: str, correction: str | None = None) -> None:
        """End a reply, printing it whole unless it is exactly what was streamed, then what did change if it claimed more."""
        if self.streamed and not self.ended:
            self.out.write("\n")
        if not (self.streamed and self.shown.strip() == reply.strip()):
            self.out.write(f"bot> {safe(reply)}\n")
        if correction:
            self.out.write(f"     ({safe(correction)})\n")
        self.out.flush()
        if self.trace:
            self.show_trace(self.trace.rest())


def read_lines(interactive: bool) -> Any:
    """User lines: prompted in a terminal, one per line otherwise."""
    last_interrupt = 0.0
    while True:
        try:
            line = prompted_line("you> ") if interactive else sys.stdin.readline()
        except EOFError:
            return
        except KeyboardInterrupt:
            if time.monotonic() - last_interrupt < 2:
                print()
                return
            last_interrupt = time.monotonic()
            print("\n(Ctrl-C again or type exit to quit)")
            continue
        if not interactive and line == "":
            return
        yield line.strip()


def run_repl(agent: Agent, interactive: bool, out: TextIO, trace: Trace | None = None) -> int:
    """Talk until end of input or exit; returns the exit status."""
    printer = Printer(out, stream=out.isatty(), trace=trace)
    stats = Stats()
    for line in read_lines(interactive):
        if not line:
            continue
        if line.lower() in EXIT_WORDS:
            break
        if line.startswith("/"):
            try:
                out.write(safe(run_command(agent, line, stats)) + "\n")
            except Failure as e:  # said, and the session goes on
                out.write(safe(e.line()) + "\n")
            out.flush()
            continue
        printer.start()
        try:
            result = agent.run_turn(line, printer.event)
        except KeyboardInterrupt:  # between tool completion and the next model call
            print(f"\n{INTERRUPTED}", file=out)
            continue
        stats.add(result)
        if result.error:
            if printer.stream:
                out.write("\n")
            err(result.error)
            continue
        if result.interrupted and printer.streamed:
            out.write(f" {INTERRUPTED}")
            printer.shown += f" {INTERRUPTED}"
        printer.finish(result.reply, result.correction)
    return 0


def rich_terminal(env: dict[str, str] | Any, out: TextIO) -> bool:
    """Whether to use the full terminal interface: a real terminal that wants colour."""
    # NO_COLOR turns colour off and nothing else (no-color.org): rich reads it itself. --plain is the line mode.
    return out.isatty() and env.get("TERM", "") != "dumb"


ONE_SHOT_SESSION = "oneshot"  # where requests given on the command line go, unless --session says otherwise
# Exit statuses of a one-shot request (README, "One-shot requests"); 2 is a bad flag or setting. A /command's
# come from the Failure it raised (outcomes.py).
EXIT_OK, EXIT_ERROR, EXIT_GAVE_UP, EXIT_REFUSED = 0, Failure.status, 3, Refused.status


def run_once(agent: Agent, message: str, out: TextIO, trace: Trace | None = None) -> int:
    """One request from the command line: print the reply; the exit status says how it went.

    0 done; 1 the turn failed (Ollama, the database); 3 the model gave up at the step limit;
    4 a change was refused or declined (a deletion without --yes, a "no"). A /command runs
    locally, as in the REPL, and exits with its Failure's status (2 for one that cannot be read).
    """
    if message.startswith("/"):
        try:
            out.write(safe(run_command(agent, message, Stats())) + "\n")
        except Failure as e:
            out.write(safe(e.line()) + "\n")
            return e.status
        return EXIT_OK
    printer = Printer(out, stream=False, trace=trace)
    result = agent.run_turn(message, printer.event)
    if result.error:
        err(result.error)
        return EXIT_ERROR
    out.write(safe(result.reply) + "\n" + (f"({safe(result.correction)})\n" if result.correction else ""))
    printer.show_trace(trace.rest() if trace else [])
    if result.gave_up:
        return EXIT_GAVE_UP
    return EXIT_REFUSED if any(c.get("refused") for c in result.tool_calls) else EXIT_OK
