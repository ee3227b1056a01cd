"""The subcommands: everything the planner does from the shell without a model, so it works while Ollama
is down (the table of them, with their help, is subcommands.py; the everyday task commands are shell.py):

    python agent.py add call the dentist friday 3pm +health    python agent.py tasks +health due:week
    python agent.py export --format ics -o tasks.ics           python agent.py sync
    python agent.py backup ~/planner-backup.db                 python agent.py remind --check

Global options (--db, --today, --yes, and the others, ignored here) may stand
before or after the subcommand. Every fault is one line on stderr (never a
traceback: that goes to agent.log), raised as a Failure (outcomes.py) whose
class gives the exit status: 0 done, 1 a fault, 2 a bad option or notation,
4 a change that needs the user's yes was not made. A reader that goes away
(`| head`) ends it quietly.
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import sqlite3
import sys

from planner.policy import Door
from planner.settings import Config, ConfigError, clock, program
from planner.storage.db import DatabaseError, Store, explain
from planner.ui.files import FileRefused, target, temporary, write_text
from planner.ui.logs import setup_logging
from planner.ui.options import value_options
from planner.ui.outcomes import Failure, UsageError
from planner.ui.subcommands import BY_NAME, EXIT_ERROR, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, parser
from planner.ui.text import Counter, ask_yes_no, err, plural, safe

log = logging.getLogger("planner")

SUBCOMMANDS = tuple(BY_NAME)
OWN_PARSER = ("doctor", "mcp")  # they read the main command's flags too
# Options of the main command that take a value, so their values are never taken for a subcommand.
VALUE_OPTIONS = value_options()


def split(argv: list[str]) -> tuple[str | None, list[str]]:
    """(subcommand, the other arguments) when the first plain word is a subcommand, else (None, argv)."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word in VALUE_OPTIONS:
            i += 2
        elif word.startswith("-") and word != "-":
            i += 1
        else:
            return (word, argv[:i] + argv[i + 1 :]) if word in SUBCOMMANDS else (None, argv)
    return None, argv


def run(what: str, argv: list[str]) -> int:
    """Run one subcommand; returns the exit status."""
    try:
        base = Config.from_env()
    except ConfigError as e:
        err(str(e))
        return EXIT_USAGE
    args = parser(what, base).parse_args(argv)
    try:
        moment = clock(args.today, args.now, base)
    except ConfigError as e:
        err(str(e))
        return EXIT_USAGE
    today, args.now = moment["today"], moment["now"]
    try:
        store = Store(args.db.expanduser())
    except DatabaseError as e:
        err(str(e))
        return EXIT_ERROR
    setup_logging(store.path.parent / "agent.log")
    log.info("subcommand %s", what)
    args.pretended = today is not None  # --today or PLANNER_TODAY: plans start at that day's start (or --now)
    try:
        return handler(what)(store, args, today or dt.date.today())
    except Failure as e:  # said for a person, with its exit status
        print(safe(e.line()), file=sys.stderr, flush=True)
        return e.status
    except BrokenPipeError:  # the reader went away (`tasks | head`): as `git log | head` does, quietly
        _quiet_stdout()
        return EXIT_OK
    except DatabaseError as e:  # busy, read-only, disk full, damaged
        err(str(e))
        return EXIT_ERROR
    except sqlite3.Error as e:  # a damaged page met while reading
        err(str(explain(e) or f"the database could not be read ({e})"))
        return EXIT_ERROR
    except FileRefused as e:
        err(str(e))
        return EXIT_ERROR
    except OSError as e:
        err(f"cannot write {getattr(args, 'output', None) or getattr(args, 'file', '')}: {e.strerror}")
        return EXIT_ERROR
    except Exception:  # a bug: the log gets the traceback, the user one line
        log.exception("subcommand %s failed", what)
        err(f"something went wrong inside the planner; details are in {store.path.parent / 'agent.log'}")
        return EXIT_ERROR
    finally:
        store.close()


def _quiet_stdout() -> None:
    """After a broken pipe: point stdout at nothing, so the interpreter's last flush cannot complain."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def handler(what: str):  # noqa: ANN201  (one of the handlers below, or shell.py's)
    """The function that runs a subcommand."""
    from planner.ui import events, shell

    own = {
        "export": export,
        "import": import_,
        "backup": backup,
        "agenda": agenda,
        "sync": sync,
        "remind": remind,
        "plan": plan,
        "events": events.listing,
        "event": events.delete,
    }
    return own.get(what) or shell.HANDLERS[what]


def _asker() -> object:
    return ask_yes_no if sys.stdin.isatty() else None


def export(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """export: every task (and with --memories, the memories) to stdout or a file."""
    from planner.storage.exchange import export_memories, export_report

    if args.memories and args.format != "json":
        raise UsageError("--memories needs --format json")
    if args.events and args.format != "ics":
        raise UsageError("--events needs --format ics")
    path = target(args.output, store, args.force, _asker()) if args.output is not None else None
    if args.plan:
        from planner.sync.plan_publish import plan_ics
        from planner.tools import ToolError
        from planner.ui.shell import context

        try:
            text = plan_ics(context(store, today, pretended=args.pretended, now=args.now), args.plan)
        except ToolError as e:
            raise UsageError(str(e)) from None
    elif args.memories:
        text = export_memories(store)
    else:
        report = export_report(store, args.format, args.events)
        text = report.text
        for line in report.lines(args.format):  # what this format could not hold, per field, with a count
            print(safe(line), file=sys.stderr)
    if path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return EXIT_OK
    write_text(path, text)
    what = "the plan's blocks" if args.plan else "tasks and memories" if args.memories else "tasks"
    print(safe(f"exported {what} to {path}"), file=sys.stderr)
    return EXIT_OK


TODO_TXT = ("", ".txt", ".todo")  # a file read as todo.txt without --format: any other name is refused


def import_(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """import: the tasks of a json, todo.txt, iCalendar or Taskwarrior file that are not there yet."""
    from planner.storage.exchange import MAX_BYTES, guess_format, import_text

    stdin = str(args.file) == "-"  # `task export | planner import -`
    try:
        if stdin:
            data = sys.stdin.buffer.read(MAX_BYTES + 1)
            if len(data) > MAX_BYTES:
                err(f"standard input is over the {MAX_BYTES / 1e6:g} MB an import reads; split it")
                return EXIT_ERROR
            text = data.decode("utf-8")
        else:
            if args.file.stat().st_size > MAX_BYTES:
                err(f"{args.file} is over the {MAX_BYTES / 1e6:g} MB an import reads; split it")
                return EXIT_ERROR
            text = args.file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        err(
            f"cannot read {'standard input' if stdin else args.file}: it is not UTF-8 text; save it as UTF-8 "
            "and import again"
        )
        return EXIT_ERROR
    except OSError as e:
        err(f"cannot read {'standard input' if stdin else args.file}: {e.strerror or e}")
        return EXIT_ERROR
    fmt = args.format or guess_format(args.file.name, text)
    if args.format is None and fmt == "todotxt" and not stdin and args.file.suffix.lower() not in TODO_TXT:
        raise UsageError(
            f"cannot tell what kind of file {args.file.name} is; say it with --format json, todotxt, ics or taskwarrior"
        )
    if args.events and fmt != "ics":
        raise UsageError("--events is for iCalendar files (.ics)")
    counter = Counter("importing", quiet=args.quiet)
    how = "run `import FILE --yes` to allow it"
    ask = _asker()

    def asking(question: str) -> bool:  # the counter's line first, then the question on a line of its own
        counter.done()
        return bool(ask and ask(question))

    door = Door("import", ask=asking if ask else None, yes=args.yes or Config.from_env().yes, how=how)
    source = None if stdin else f"file:{args.file.resolve()}"
    result = import_text(store, text, fmt, args.events, counter.show, source=source, door=door)
    counter.done()
    if not (result["added"] or result["skipped"] or result["problems"] or result.get("events")):
        print(safe(f"nothing to import: {'standard input' if stdin else args.file} holds no tasks"), file=sys.stderr)
        return EXIT_OK
    bad = len(result["problems"])
    if result["added"] or result["skipped"] or not result.get("events"):  # a calendar alone says only that
        said = f"imported {plural(result['added'], 'task')}, skipped {result['skipped']} already there"
        if bad:
            said += f", {plural(bad, 'row')} not imported (below)"
        print(said, file=sys.stderr)
    if result.get("events"):
        ev = result["events"]
        said = f"calendar: {plural(ev['added'], 'event')} added, {ev['updated']} updated, {ev['removed']} removed"
        print(said + " (busy time for `plan`; `events` lists them)", file=sys.stderr)
        if ev["kept"]:
            print(
                safe(f"  kept {ev['kept']} events the file no longer has ({ev.get('kept_because', '')})"),
                file=sys.stderr,
            )
        if ev.get("not_updated"):
            print(
                safe(
                    f"  left {ev['not_updated']} events as they were, not as the file has them now "
                    f"({ev.get('kept_because', '')})"
                ),
                file=sys.stderr,
            )
    for note in result.get("notes", []):
        print(safe(f"  note: {note}"), file=sys.stderr)
    for problem in result["problems"]:
        print(safe(f"  not imported: {problem}"), file=sys.stderr)
    read_something = result["added"] or result["skipped"] or result.get("events")
    if bad and not read_something:
        return EXIT_ERROR
    return EXIT_REFUSED if (result.get("events") or {}).get("kept_because") else EXIT_OK  # the good rows are in


def remind(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """remind: the reminders of the next days, or with --check what is due now (for cron)."""
    from planner.ui import reminders

    if args.check:
        reminders.check(store, lambda text: print(safe(text), flush=True))
        return EXIT_OK  # a reminder shown is a success, so a systemd timer does not mark the service failed
    lines = reminders.upcoming(store)
    print(safe("\n".join(lines)) if lines else "no reminders in the next 7 days")
    return EXIT_OK


def sync(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """sync: the tasks with the CalDAV task lists of the settings, both ways, once."""
    from planner.policy import Door
    from planner.sync.runner import SyncError, report_lines, sync_config
    from planner.ui.secrets import with_password

    ask = _asker()
    config = with_password(Config.from_env(), ask is not None)
    door = Door("sync", ask=ask, yes=args.yes or config.yes, how=f"run `{program()} sync --yes` to allow it")  # type: ignore[arg-type]
    counter = Counter("syncing", quiet=args.quiet)

    def say(text: str) -> None:
        print(safe(text), file=sys.stderr, flush=True)

    try:
        try:
            report = sync_config(store, config, lambda: today, door, counter.show, create=args.create, say=say)
        except SyncError as e:
            if not (e.missing and ask and ask_yes_no(f"{e}\nCreate the task list now?")):
                raise
            report = sync_config(store, config, lambda: today, door, counter.show, create=True, say=say)
    except SyncError as e:
        counter.done()
        raise Failure(str(e)) from None
    counter.done()
    print(safe("\n".join(report_lines(config, report))), file=sys.stderr)
    if report.problems:
        return EXIT_ERROR
    return EXIT_REFUSED if report.kept or report.events_kept else EXIT_OK


def backup(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """backup: a consistent copy into a new file, even while another planner writes (maintenance.backup)."""
    from planner.storage import maintenance

    path = target(args.file, store, args.force, _asker())
    counts = maintenance.backup(store, path, temporary(path))
    said = (
        f"backed up {plural(counts['tasks'], 'task')} and {plural(counts['memories'], 'memory', 'memories')} to {path}"
    )
    print(safe(said), file=sys.stderr)
    return EXIT_OK


def agenda(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """agenda: the same as /agenda, without a model."""
    from planner.tools import ToolContext
    from planner.ui.views import agenda_text

    ctx = ToolContext(store=store, today=lambda: today, plan_from=args.now)
    print(safe(agenda_text(ctx, str(args.days), where="tasks")))
    return EXIT_OK


def plan(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """plan: the day (or week) laid out in free time, without a model."""
    import json

    from planner.tools import ToolError
    from planner.tools.plan_tools import make_plan, plan_json, span_of
    from planner.ui.shell import context
    from planner.ui.views import plan_text

    when = " ".join(args.when) or None
    try:
        ctx = context(store, today, pretended=args.pretended, now=args.now)
    except ConfigError as e:
        raise UsageError(str(e)) from None
    if args.json:
        try:
            span = span_of(ctx, when)
        except ToolError as e:
            raise UsageError(str(e)) from None
        print(json.dumps(plan_json(make_plan(ctx, span.horizon, span.note), why=True), ensure_ascii=False, indent=1))
        return EXIT_OK
    print(safe(plan_text(ctx, when, why=args.why)))
    return EXIT_OK
