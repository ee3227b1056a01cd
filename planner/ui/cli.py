"""The terminal layer: flags, start-up checks, the REPL, confirmations, logging.

This is the only module that prints or reads input. Everything a user can
see on a fault is one line on stderr ("error: ..."), never a traceback; the
traceback goes to agent.log beside the database.

Interactive when stdin is a terminal: a `you> ` prompt, streamed replies,
y/N confirmations. Otherwise each input line is one turn, each reply is
printed after `bot> `, and the program exits 0 at end of input.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sqlite3
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from planner.settings import VERSION, Config, ConfigError, clock
from planner.storage.db import DatabaseError, Store, explain
from planner.ui import offline
from planner.ui.logs import setup_logging
from planner.ui.models import ensure_models
from planner.ui.options import Parser, add_global
from planner.ui.text import err, prompted_line, safe

if TYPE_CHECKING:
    from planner.model.client import Ollama

# The agent, the model client and the interfaces load only for a conversation: a subcommand
# (`remind --check` from cron every minute, `export`, `--help`) starts in a tenth of the time.

log = logging.getLogger("planner")


ENVIRONMENT = (
    "PLANNER_MODEL PLANNER_CRITIC_MODEL PLANNER_EMBED_MODEL PLANNER_HOME PLANNER_DB PLANNER_GUARDS PLANNER_TOOL_GROUPS "
    "PLANNER_YES "
    "PLANNER_WEB PLANNER_WEB_URL PLANNER_MEMORY PLANNER_AUTO_MEMORY PLANNER_TODAY PLANNER_NUM_CTX "
    "PLANNER_NUM_PREDICT PLANNER_CRITIC_NUM_CTX PLANNER_MAX_STEPS PLANNER_MAX_TURNS PLANNER_TIMEOUT "
    "PLANNER_REPLY_TIMEOUT PLANNER_KEEP_ALIVE PLANNER_CRITIC_KEEP_ALIVE PLANNER_CALDAV_URL PLANNER_CALDAV_USER "
    "PLANNER_CALDAV_PASSWORD PLANNER_CALDAV_LISTS PLANNER_CALDAV_CALENDARS PLANNER_CALDAV_PLAN "
    "PLANNER_CALDAV_TIMEOUT PLANNER_WORK_HOURS PLANNER_MIN_BLOCK PLANNER_BREAK PLANNER_MCP_CONFIRM PLANNER_NOW "
    "PLANNER_LEARN_ESTIMATES OLLAMA_HOST"
)
EXAMPLES = [
    ("", "talk to it in the terminal"),
    ('"what is due this week?"', "one request, then exit"),
    ("add call mum sunday +family", "add a task, no model"),
    ("tasks due:week", "this week's tasks"),
    ("backup ~/planner.bak.db", "a copy, safe while running"),
]


def epilog(prog: str, home: Path) -> str:
    """The end of --help: the subcommands, the environment, where the data is, examples; under 80 columns."""
    import textwrap

    from planner.ui.subcommands import summary

    width = max(len(f"{prog} {cmd}".strip()) for cmd, _ in EXAMPLES) + 2
    examples = "\n".join(f"  {f'{prog} {cmd}'.strip():<{width}}{what}" for cmd, what in EXAMPLES)
    env = textwrap.fill(ENVIRONMENT, width=78, initial_indent="  ", subsequent_indent="  ")
    return (
        "subcommands (no model needed; the options above go before or after them):\n"
        f"{summary()}\n\nenvironment:\n{env}\n\ndata: {home}/planner.db\n  (agent.log and input_history beside it)"
        f"\n\nexamples:\n{examples}\n"
    )


def build_parser(defaults: Config) -> argparse.ArgumentParser:
    """The command-line flags; defaults come from the environment."""
    # `planner` once installed, `python agent.py` from a checkout: the help shows what the user typed.
    from planner.ui.subcommands import prog as called

    prog = called()
    p = Parser(
        prog=prog,
        description="A private personal planner on a local Ollama server.",
        epilog=epilog(prog, defaults.db_path.parent),
        formatter_class=lambda prog: argparse.RawDescriptionHelpFormatter(prog, width=79, max_help_position=26),
    )
    add_global(p, defaults)
    p.add_argument(
        "--trajectory",
        type=Path,
        metavar="FILE",
        help="write every turn of this run as JSON: messages, tool calls, results, decisions",
    )
    p.add_argument("-V", "--version", action="version", version=f"planner {VERSION}")
    p.add_argument(
        "message", nargs="*", help="run this one request and exit (the words need no quotes; '-' reads stdin)"
    )
    return p


@dataclass
class Options:
    """How this run talks to the user; the interface's own, never the agent's settings."""

    message: str | None = None  # one request to run and exit (command line), '-' for stdin
    plain: bool = False  # terminal: plain lines, one per turn, instead of the full interface
    quiet: bool = False  # hide the trace of tool calls (stderr in the plain modes)
    verbose: bool = False  # show tokens and timings of every model call, the critic's and background's too
    trajectory: Path | None = None  # every turn as JSON (planner/agent/trajectory.py)


def load_config(argv: list[str] | None, env: dict[str, str] | None = None) -> Config:
    """Config from defaults, then PLANNER_* variables, then flags."""
    return load(argv, env)[0]


def load(argv: list[str] | None, env: dict[str, str] | None = None) -> tuple[Config, Options]:
    """The settings (defaults, then PLANNER_* variables, then flags) and the interface's options."""
    base = Config.from_env(env)
    args = build_parser(base).parse_args(argv)
    options = Options(
        message=" ".join(args.message) or None,
        quiet=args.quiet,
        plain=args.plain,
        verbose=args.verbose,
        trajectory=args.trajectory,
    )
    config = base.replace(
        model=args.model,
        critic_model=args.critic_model,
        embed_model=args.embed_model,
        db_path=args.db.expanduser(),
        session=args.session,
        resume_last=args.resume_last,
        think=args.think,
        guards=args.guards,
        reflect=args.reflect,
        yes=args.yes,
        web=args.web,
        auto_memory=args.auto_memory and args.memory,
        memory=args.memory,
        num_ctx=args.num_ctx,
        **clock(args.today, args.now, base),
    )
    return config, options


# ---------------------------------------------------------------- start-up checks


def make_confirm(config: Config, interactive: bool, lock: threading.Lock) -> Callable[[str], bool] | None:
    """How the user is asked: y/N in a terminal, or nobody (None). --yes is the policy's (ToolContext.yes)."""
    if not interactive:
        return None

    def confirm(question: str) -> bool:
        with lock:
            try:
                return prompted_line(f"\n{safe(question)} [y/N] ").strip().lower() in ("y", "yes")
            except EOFError:
                return False

    return confirm


def serve_mcp(argv: list[str]) -> int:
    """`mcp`: the MCP server on stdin/stdout, with the same database and settings as the terminal."""
    from planner.ui import mcp_server  # the MCP SDK loads only for this subcommand

    try:
        config = load_config(argv)
    except ConfigError as e:
        err(str(e))
        return 2
    try:
        store = Store(config.db_path)
    except DatabaseError as e:
        err(str(e))
        return 1
    setup_logging(config.log_path)  # stdout is the protocol: nothing else may be printed there
    try:
        return mcp_server.run(config, store)
    finally:
        store.close()


EXIT_GRACE = 1.0  # seconds the interpreter has to end once main() returned, before the process is ended anyway


def entry() -> None:
    """`python agent.py` and the `planner` command: main(), then the process ends with its status.

    Every path that ends the program ends it: a thread still running (a pull that failed mid-stream, a
    tool call stuck in a read) must not keep it alive. The interpreter gets EXIT_GRACE seconds to end the
    usual way (joining its threads); an alarm then ends the process with the same status, what was printed
    flushed first. The alarm is called off once the threads are over (the first atexit step, which comes after
    them), so the interpreter's own last steps, however slow on a loaded machine, are never cut into; and an
    alarm rather than a thread, so nothing of ours runs while the interpreter comes down.
    """
    status = main()

    def end_anyway(signum: int, frame: object) -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)

    if hasattr(signal, "setitimer"):
        import atexit

        signal.signal(signal.SIGALRM, end_anyway)
        atexit.register(signal.setitimer, signal.ITIMER_REAL, 0)  # the threads ended: the usual way goes on
        signal.setitimer(signal.ITIMER_REAL, EXIT_GRACE)
    raise SystemExit(status)


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python agent.py`; returns the exit status."""
    try:
        return _main(argv)
    except BrokenPipeError:  # the reader went away (`doctor | head`): quietly, as `git log | head` does
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except KeyboardInterrupt:  # Ctrl-C while starting or between turns: leave quietly
        print(file=sys.stderr)
        return 130
    except DatabaseError as e:  # busy, read-only, full or damaged while starting: one line
        err(str(e))
        return 1
    except sqlite3.Error as e:
        err(str(explain(e) or f"the database could not be used ({e})"))
        return 1


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Private by default: the data folder, the database, its WAL and SHM, the input history and the log are
    # created readable by the user alone (0700 and 0600). Files that already exist keep their modes.
    os.umask(0o077)
    if hasattr(signal, "SIGXFSZ"):
        # Past a file size limit, a write fails (SQLite says the disk is full) instead of killing us.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    if hasattr(sys.stdin, "reconfigure"):
        # Piped bytes that are not UTF-8 become U+FFFD instead of ending the session.
        sys.stdin.reconfigure(errors="replace")
    what, rest = offline.split(argv)
    if what in offline.OWN_PARSER and ("-h" in rest or "--help" in rest):
        from planner.ui.subcommands import parser

        parser(what, Config.from_env()).print_help()
        return 0
    if what == "doctor":
        from planner.ui import doctor

        try:
            return doctor.run(load_config(rest))
        except ConfigError as e:
            err(str(e))
            return 2
    if what == "mcp":
        return serve_mcp(rest)
    if what:
        return offline.run(what, rest)
    try:
        config, options = load(argv)
    except ConfigError as e:
        err(str(e))
        return 2
    from planner.model.client import Ollama  # noqa: F811 (the client loads once a conversation is wanted)

    one_shot = options.message
    if one_shot == "-":
        one_shot = sys.stdin.read().strip()
        if not one_shot:
            err("no request on stdin")
            return 2
    llm = Ollama(config.host, timeout=config.timeout, reply_seconds=config.reply_timeout)
    try:
        return _talk(config, options, llm, one_shot)
    finally:
        llm.close()  # its connections, whichever way the run ended


def _talk(config: Config, options: Options, llm: Ollama, one_shot: str | None) -> int:
    """The conversation, a one-shot request or a local /command, on a client to the server; the exit status."""
    from planner.agent.build import build_agent
    from planner.memory.history import latest_session, new_session_name
    from planner.ui import reminders
    from planner.ui.repl import ONE_SHOT_SESSION, rich_terminal, run_once, run_repl
    from planner.ui.traceview import SideCalls, Trace

    interactive = sys.stdin.isatty() and not one_shot
    # A /command runs locally: no model, and Ollama may be down. Everything else needs the models,
    # checked before the database exists, so a run that cannot start leaves nothing behind.
    local = bool(one_shot and one_shot.startswith("/") and one_shot.split()[0] not in ("/pull", "/model"))
    if not local:
        try:
            problem, memory_ok = ensure_models(llm, config, interactive)
        except EOFError:  # no answer to the pull question
            problem, memory_ok = "a model is missing; pull it with `ollama pull` and start again", True
        if problem:
            err(problem)
            return 1
        if config.memory and not memory_ok:
            print(
                safe(
                    f"long-term memory is off this run: the embedding model {config.embed_model} is not pulled "
                    f"(ollama pull {config.embed_model}); --no-memory hides this"
                ),
                file=sys.stderr,
            )
            config = config.replace(memory=False, auto_memory=False)
    try:
        store = Store(config.db_path)
    except DatabaseError as e:
        err(str(e))
        return 1
    setup_logging(config.log_path)
    log.info(
        "start model=%s critic=%s embed=%s db=%s", config.model, config.critic_model, config.embed_model, config.db_path
    )

    # One-shot requests share one session, so /sessions and -c stay about conversations.
    fresh = ONE_SHOT_SESSION if one_shot else new_session_name()
    session = config.session or (latest_session(store) if config.resume_last else None) or fresh

    def progress(done: int, total: int) -> None:
        print(f"\rre-embedding memories with {config.embed_model}: {done}/{total}", end="", file=sys.stderr, flush=True)
        if done == total:
            print(file=sys.stderr)

    side = SideCalls()  # the critic's, memory's and embedding calls, for --verbose
    if options.verbose:
        llm.observer = side.add
    # The plain modes print the trace on stderr where someone watches it (or when asked with -v).
    trace = Trace(options.quiet or not (sys.stderr.isatty() or options.verbose), options.verbose, side)
    ui = None
    if interactive and not one_shot and not options.plain and rich_terminal(os.environ, sys.stdout):
        from planner.ui.tui import TerminalUI  # rich and prompt_toolkit load only for a real terminal

        ui = TerminalUI(
            config.db_path.parent / "input_history", quiet=options.quiet, verbose=options.verbose, side=side
        )
    # The full terminal asks its own way: it keeps the trace on screen around the question.
    confirm = ui.confirm if ui else make_confirm(config, interactive, threading.Lock())
    agent = build_agent(config, store, llm, session, confirm, on_progress=progress)
    if options.verbose and agent.keeper:
        agent.keeper.observer = side.extraction  # what each memory extraction stored, or why not
    if options.trajectory:
        from planner.agent.trajectory import record

        try:
            record(agent, options.trajectory.expanduser())  # every interface's turns go through agent.run_turn
        except OSError as e:
            err(f"cannot write the trajectory to {options.trajectory}: {e.strerror}")
            agent.close()
            store.close()
            return 2
    agent.resume_background()  # extraction or a summary left undone last time
    if one_shot:
        try:
            return run_once(agent, one_shot, sys.stdout, trace)
        finally:
            agent.close()  # waits for the background memory work, whose calls -v shows last
            for line in trace.rest():
                print(line, file=sys.stderr)
            store.close()
    if ui:
        try:
            return ui.run(agent, config.db_path)
        finally:
            agent.close()
            store.close()
    watcher = None
    if interactive:
        print(f"Planner · {config.model} · session {session} · {config.db_path}")
        print("Ask me to add, list, change or finish tasks. /help lists commands; exit quits.")
        for text in reminders.due_now(store):  # what fell due since last time
            print(safe(text))
        watcher = reminders.Watcher(store, lambda text: print(f"\n{safe(text)}", flush=True)).start()
    try:
        return run_repl(agent, interactive, sys.stdout, trace)
    except Exception as e:  # a bug: the log gets the traceback, the user one line
        log.exception("unexpected error")
        known = explain(e) if isinstance(e, sqlite3.Error) else None
        err(str(known) if known else f"something went wrong inside the planner; details are in {config.log_path}")
        return 1
    finally:
        if watcher:
            watcher.close()
        agent.close()
        store.close()
