"""Subcommands that need no model, so they work while Ollama is down:

    python agent.py export [--format json|todotxt|ics] [--memories] [--events] [-o FILE]
    python agent.py import FILE [--format json|todotxt|ics] [--events]
    python agent.py backup FILE        a consistent copy of the whole database, safe while the planner runs
    python agent.py tasks [open|done|all]
    python agent.py agenda [DAYS]
    python agent.py sync               the tasks with a CalDAV task list, both ways (PLANNER_CALDAV_URL)
    python agent.py remind [--check]   the coming reminders; --check: what is due now, exit 1 if any (cron)

Global options (--db, --today) may stand before or after the subcommand. Every
fault is one line on stderr and exit status 1; 2 is a bad option.
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import os
import sqlite3
import sys
from pathlib import Path

from planner.settings import Config, ConfigError, parse_today
from planner.storage import maintenance
from planner.storage.db import DatabaseError, Store, explain
from planner.ui.logs import setup_logging
from planner.ui.text import err

log = logging.getLogger("planner")

EXIT_REFUSED = 4  # a change that needs the user's yes was not made (as for a one-shot request)
SUBCOMMANDS = (
    "export",
    "import",
    "backup",
    "tasks",
    "agenda",
    "remind",
    "sync",
    "doctor",
    "mcp",
)  # doctor and mcp take every flag
# Options of the main command that take a value, so their values are never taken for a subcommand.
VALUE_OPTIONS = {"--model", "--critic-model", "--embed-model", "--db", "--session", "--num-ctx", "--today", "--guards"}


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


def parser(what: str, base: Config) -> argparse.ArgumentParser:
    """The options of one subcommand (and the global ones it uses)."""
    p = argparse.ArgumentParser(prog=f"agent.py {what}", description=(__doc__ or "").splitlines()[0])
    p.add_argument("--db", type=Path, default=base.db_path, help=f"database file (default {base.db_path})")
    p.add_argument("--today", default=None, help="pretend today is this date (YYYY-MM-DD)")
    from planner.storage.exchange import FORMATS

    if what == "export":
        p.add_argument("--format", choices=FORMATS, default="json", help="json (everything), todotxt or ics")
        p.add_argument("--memories", action="store_true", help="json only: add the long-term memories (text only)")
        p.add_argument("--events", action="store_true", help="ics only: dated tasks as events too, for calendars")
        p.add_argument("-o", "--output", type=Path, help="write to this file (default: standard output)")
    elif what == "import":
        p.add_argument("file", type=Path, help="a json export, a todo.txt file or an iCalendar (.ics) file")
        p.add_argument("--format", choices=FORMATS, help="default: from the file name or content")
        p.add_argument("--events", action="store_true", help="ics only: import events as dated tasks too")
    elif what == "backup":
        p.add_argument("file", type=Path, help="where to write the copy (a new .db file)")
    elif what == "remind":
        p.add_argument("--check", action="store_true", help="print what is due now; exit 1 when something was")
    elif what == "sync":  # the list and its user come from PLANNER_CALDAV_URL, _USER and _PASSWORD
        p.add_argument("--yes", action="store_true", help="allow deletions a sync would otherwise ask about")
        p.add_argument("--create", action="store_true", help="create the task list on the server if it is missing")
        p.add_argument("-q", "--quiet", action="store_true", help="no progress")
    elif what == "tasks":
        p.add_argument("status", nargs="?", choices=["open", "done", "all"], default="open")
    else:
        p.add_argument("days", nargs="?", type=int, default=7, help="how many days ahead (7)")
    return p


def run(what: str, argv: list[str]) -> int:
    """Run one subcommand; returns the exit status."""
    try:
        base = Config.from_env()
    except ConfigError as e:
        err(str(e))
        return 2
    args = parser(what, base).parse_args(argv)
    try:
        today = parse_today(args.today, "--today") if args.today else base.today
    except ConfigError as e:
        err(str(e))
        return 2
    try:
        store = Store(args.db.expanduser())
    except DatabaseError as e:
        err(str(e))
        return 1
    setup_logging(store.path.parent / "agent.log")
    log.info("subcommand %s", what)
    try:
        return {
            "export": export,
            "import": import_,
            "backup": backup,
            "tasks": show,
            "agenda": show,
            "sync": sync,
            "remind": remind,
        }[what](store, args, today or dt.date.today(), what)
    except OSError as e:
        err(f"cannot write {getattr(args, 'output', None) or getattr(args, 'file', '')}: {e.strerror}")
        return 1
    except DatabaseError as e:  # busy, read-only, disk full, damaged
        err(str(e))
        return 1
    except sqlite3.Error as e:  # a damaged page met while reading
        err(str(explain(e) or f"the database could not be read ({e})"))
        return 1
    except Exception:  # a bug: the log gets the traceback, the user one line
        log.exception("subcommand %s failed", what)
        err(f"something went wrong inside the planner; details are in {store.path.parent / 'agent.log'}")
        return 1
    finally:
        store.close()


def write_file(path: Path, text: str) -> None:
    """Write through a symlink to its target, via a temporary file (no half-written file on a fault)."""
    target = Path(os.path.realpath(path.expanduser()))
    if target.is_dir():
        raise IsADirectoryError(21, "it is a folder; give a file name")
    tmp = target.with_name(target.name + ".part")
    try:
        tmp.write_text(text, encoding="utf-8", newline="")
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)


def export(store: Store, args: argparse.Namespace, today: dt.date, what: str) -> int:
    """export: every task (and with --memories, the memories) to stdout or a file."""
    from planner.storage.exchange import export as export_text
    from planner.storage.exchange import export_memories

    if args.memories and args.format != "json":
        err("--memories needs --format json")
        return 2
    if args.events and args.format != "ics":
        err("--events needs --format ics")
        return 2
    text = export_memories(store) if args.memories else export_text(store, args.format, args.events)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    write_file(args.output, text)
    what = "tasks and memories" if args.memories else "tasks"
    print(f"exported {what} to {args.output}", file=sys.stderr)
    return 0


def import_(store: Store, args: argparse.Namespace, today: dt.date, what: str) -> int:
    """import: the tasks of a json, todo.txt or iCalendar file that are not there yet."""
    from planner.storage.exchange import guess_format, import_text

    try:
        text = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        err(f"cannot read {args.file}: {getattr(e, 'strerror', None) or e}")
        return 1
    fmt = args.format or guess_format(args.file.name, text)
    if args.events and fmt != "ics":
        err("--events is for iCalendar files (.ics)")
        return 2
    result = import_text(store, text, fmt, args.events)
    print(f"imported {result['added']} tasks, skipped {result['skipped']} already there", file=sys.stderr)
    for problem in result["problems"]:
        print(f"  not imported: {problem}", file=sys.stderr)
    return 1 if result["problems"] else 0


def remind(store: Store, args: argparse.Namespace, today: dt.date, what: str) -> int:
    """remind: the reminders of the next days, or with --check what is due now (for cron)."""
    from planner.ui import reminders
    from planner.ui.text import safe

    if args.check:
        return reminders.check(store, lambda text: print(safe(text), flush=True))
    lines = reminders.upcoming(store)
    print(safe("\n".join(lines)) if lines else "no reminders in the next 7 days")
    return 0


def sync(store: Store, args: argparse.Namespace, today: dt.date, what: str) -> int:
    """sync: the tasks with the CalDAV task lists of the settings, both ways, once."""
    from planner.sync.caldav_sync import SyncError, report_lines, sync_config
    from planner.tools.policy import Door
    from planner.ui.text import Counter, ask_yes_no, safe

    config = Config.from_env()
    interactive = sys.stdin.isatty()
    door = Door("sync", ask=ask_yes_no if interactive else None, yes=args.yes or config.yes,
                how="run `python agent.py sync --yes` to allow it")  # fmt: skip
    counter = Counter("syncing", quiet=args.quiet)
    try:
        try:
            report = sync_config(store, config, lambda: today, door, counter.show, create=args.create,
                                 say=lambda text: print(text, file=sys.stderr, flush=True))  # fmt: skip
        except SyncError as e:
            if not (e.missing and interactive and ask_yes_no(f"{e}\nCreate the task list now?")):
                raise
            report = sync_config(store, config, lambda: today, door, counter.show, create=True)
    except SyncError as e:
        counter.done()
        err(str(e))
        return 1
    counter.done()
    print(safe("\n".join(report_lines(config, report))), file=sys.stderr)
    if report.problems:
        return 1
    return EXIT_REFUSED if report.kept else 0


def backup(store: Store, args: argparse.Namespace, today: dt.date, what: str) -> int:
    """backup: a consistent copy into a new file, even while another planner writes (maintenance.backup)."""
    if Path(os.path.realpath(args.file.expanduser())).is_dir():
        err(f"cannot write {args.file}: it is a folder; give a file name")
        return 1
    counts = maintenance.backup(store, args.file)
    print(f"backed up {counts['tasks']} tasks and {counts['memories']} memories to {args.file}", file=sys.stderr)
    return 0


def show(store: Store, args: argparse.Namespace, today: dt.date, what: str) -> int:
    """tasks / agenda: the same tables as /tasks and /agenda, without a model."""
    from planner.tools import ToolContext
    from planner.ui.commands import agenda_text, tasks_table
    from planner.ui.text import safe

    ctx = ToolContext(store=store, today=lambda: today)
    text = tasks_table(ctx, args.status) if what == "tasks" else agenda_text(ctx, str(args.days))
    print(safe(text))
    return 1 if text.startswith(("error:", "usage:")) else 0
