"""Every subcommand in one table: its usage, what it does, and its own options; the help is made from it.

    python agent.py --help          the main help lists them (SUMMARY), each on one line
    python agent.py add --help      one subcommand: its usage line, what it does, its options

Every help line stays under 80 columns (a test checks). The global options
(options.py) stand before or after any of them; --db, --today, --now and
--yes are the ones a subcommand uses. None of these needs the model; `doctor` is the one
that asks Ollama.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from planner.settings import Config, program
from planner.ui import outcomes
from planner.ui.options import Parser, add_global
from planner.ui.outcomes import Failure, Refused, UsageError

# The exit statuses, from the classes that carry them (outcomes.py); 4: a change that needs the user's yes was not made.
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_REFUSED = outcomes.EXIT_OK, Failure.status, UsageError.status, Refused.status


@dataclass(frozen=True)
class Sub:
    """One subcommand: how it is called, one line for the list, and a paragraph for its own help."""

    name: str
    usage: str
    summary: str
    about: str
    options: Callable[[argparse.ArgumentParser, Config], None] | None = None


def _yes(p: argparse.ArgumentParser, c: Config) -> None:
    p.add_argument("--yes", action="store_true", help="go ahead where a terminal would ask (deletions, >3 tasks)")


def _ids(p: argparse.ArgumentParser, c: Config) -> None:
    p.add_argument("ids", nargs="+", metavar="ID", help="task ids, as `tasks` shows them")
    _yes(p, c)


def _id(p: argparse.ArgumentParser, c: Config) -> None:
    p.add_argument("id", metavar="ID", help="the task's id, as `tasks` shows it")


def _words(p: argparse.ArgumentParser, c: Config) -> None:
    p.add_argument("words", nargs="+", metavar="WORDS", help="the task in the shell's notation")


def _id_words(p: argparse.ArgumentParser, c: Config) -> None:
    p.add_argument("id", metavar="ID", help="the task's id")
    p.add_argument("words", nargs="+", metavar="WORDS", help="what to change, in the shell's notation")
    _yes(p, c)


def _delete(p: argparse.ArgumentParser, c: Config) -> None:
    _ids(p, c)


def _tasks(p: argparse.ArgumentParser, c: Config) -> None:
    p.add_argument(
        "filters",
        nargs="*",
        metavar="FILTER",
        help="open|waiting|done|cancelled|all, +tag, #list, "
        "!high, due:today|tomorrow|week|overdue|DATE, start:DATE, words",
    )
    p.add_argument(
        "--limit", type=int, default=None, metavar="N", help="show at most N tasks (100; with --json, every match)"
    )
    p.add_argument(
        "--json", action="store_true", help='the tasks as JSON, for scripts: {"tasks", "count", "more" when cut}'
    )


def _export(p: argparse.ArgumentParser, c: Config) -> None:
    from planner.storage.exchange import FORMATS

    p.add_argument("--format", choices=FORMATS, default="json", help="json (everything), todotxt, ics, taskwarrior")
    p.add_argument("--memories", action="store_true", help="json only: the long-term memories too (text only)")
    p.add_argument("--events", action="store_true", help="ics only: dated tasks as events too, for calendars")
    p.add_argument("-o", "--output", type=Path, help="write to this file (default: standard output)")
    p.add_argument("--force", action="store_true", help="replace the file if it is there")
    p.add_argument("--plan", nargs="?", const="week", metavar="DAY|week", help="the plan's task blocks as events (ics)")


def _import(p: argparse.ArgumentParser, c: Config) -> None:
    from planner.storage.exchange import FORMATS

    p.add_argument("file", type=Path, help="a json, todo.txt, iCalendar (.ics) or Taskwarrior file; - reads stdin")
    p.add_argument("--format", choices=FORMATS, help="default: from the file name and content")
    p.add_argument("--events", action="store_true", help="ics only: events as dated tasks (not busy time)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress")
    _yes(p, c)  # also: remove the events a calendar file no longer has (more than 3) without asking


def _event(p: argparse.ArgumentParser, c: Config) -> None:
    p.add_argument("action", choices=["delete"], help="delete: remove one event (undo brings it back)")
    p.add_argument("id", type=int, metavar="ID", help="the event's id, as `events` shows it")
    p.add_argument("--yes", action="store_true", help="delete without asking (when no one can answer y/N)")


def _backup(p: argparse.ArgumentParser, c: Config) -> None:
    p.add_argument("file", type=Path, help="where to write the copy (a new .db file)")
    p.add_argument("--force", action="store_true", help="replace the file if it is there")


def _days(p: argparse.ArgumentParser, c: Config) -> None:
    p.add_argument("days", nargs="?", type=int, default=7, help="how many days ahead (7)")


def _remind(p: argparse.ArgumentParser, c: Config) -> None:
    p.add_argument("--check", action="store_true", help="print what is due now (for cron)")


def _sync(p: argparse.ArgumentParser, c: Config) -> None:
    p.add_argument("--yes", action="store_true", help="allow deletions a sync would otherwise ask about")
    p.add_argument("--create", action="store_true", help="create the task list on the server if it is missing")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress")


def _plan(p: argparse.ArgumentParser, c: Config) -> None:
    p.add_argument("when", nargs="*", metavar="DAY|week", help="today (the default), a day, the afternoon, or week")
    p.add_argument("--json", action="store_true", help="the plan as JSON, for scripts (with why, per block)")
    p.add_argument("--why", action="store_true", help="under each task, why it is where it is")


def _start(p: argparse.ArgumentParser, c: Config) -> None:
    p.add_argument("id", metavar="ID", help="the task's id, as `tasks` shows it")


def _stop(p: argparse.ArgumentParser, c: Config) -> None:
    p.add_argument("id", nargs="?", metavar="ID", help="the task's id (the running one if left out)")
    p.add_argument("--took", nargs="+", metavar="TIME", help="how long it took (3h, 90m), if the clock did not run")


SUBS = [
    Sub(
        "add",
        "WORDS...",
        "add a task: a date, +tag, #list, !high, ~30m",
        "Add a task written in the shell's notation, without the model: a date phrase anywhere (friday 3pm), "
        "+tag, #list, !high|!medium|!low, ~30m or ~1h30m for an estimate, every ... for a repeat, "
        "start:DATE and remind:WORDS; the words left are the title; \\word keeps a word as it is.",
        _words,
    ),
    Sub("done", "ID...", "mark tasks done", "Mark tasks done; a repeating one gets its next date.", _ids),
    Sub("reopen", "ID...", "open done or cancelled tasks again", "Open done or cancelled tasks again.", _ids),
    Sub("cancel", "ID...", "mark tasks cancelled (kept, not done)", "Mark tasks cancelled: kept, never open.", _ids),
    Sub(
        "edit",
        "ID WORDS...",
        "change a task, in the notation of add",
        "Change a task in the notation of add: a date moves it, +tag adds a tag, #list moves it to a list, "
        "!low sets the priority, ~1h the estimate; words left become the new title.",
        _id_words,
    ),
    Sub("note", "ID WORDS...", "add a dated note to a task", "Add a note to a task, dated today.", _id_words),
    Sub(
        "delete",
        "ID...",
        "delete tasks (asks first)",
        "Delete tasks for good: asks y/N in a terminal; elsewhere needs --yes.",
        _delete,
    ),
    Sub(
        "undo",
        "",
        "revert the last change, wherever it was made",
        "Revert the last change, wherever it was made; asks first when it would delete or change more than 3 tasks.",
        _yes,
    ),
    Sub("redo", "", "make again what undo took back", "Make again the change undo took back last.", _yes),
    Sub(
        "tasks",
        "[STATUS] [FILTER...]",
        "your tasks, most urgent first",
        "Your tasks as a table, most urgent first. Filters combine: open (the default), waiting, done, "
        "cancelled or all; +tag; #list; !high (tag:, list:, pri:high where the shell reads # or !); due:today, "
        "due:tomorrow, due:week, due:overdue or due:DATE; start:DATE; any other words are searched in titles "
        "and notes.",
        _tasks,
    ),
    Sub(
        "show",
        "ID",
        "one task whole: notes, reminder, history",
        "One task with every field, its notes with their dates, its reminder, its steps and its history.",
        _id,
    ),
    Sub("lists", "", "the lists and their open tasks", "The lists (projects) and how many open tasks each has.", None),
    Sub(
        "agenda",
        "[DAYS]",
        "overdue, today and the next days",
        "Overdue tasks, today's and the next days' (7), grouped by day.",
        _days,
    ),
    Sub(
        "plan",
        "[DAY|week] [--json]",
        "your day laid out in free time",
        "Your open tasks placed into the free time of your working hours, around your calendar, from now: "
        "deadlines first, then priority, whole blocks where they fit; a re-plan moves only what it must. "
        "Without the model.",
        _plan,
    ),
    Sub(
        "events",
        "",
        "the calendar's events (busy time for plan)",
        "The events imported from calendar files and read from CalDAV calendars, soonest first, with their ids "
        "and where they came from.",
        None,
    ),
    Sub(
        "event",
        "delete ID",
        "remove one event (asks first)",
        "Remove one event from the busy time: asks y/N in a terminal; elsewhere needs --yes. Undo brings it back.",
        _event,
    ),
    Sub(
        "start",
        "ID",
        "start the clock on a task",
        "Start the clock on a task: the time you spend on it is kept (another running task stops), the plan "
        "starts it now, and finished tasks teach the estimates.",
        _start,
    ),
    Sub(
        "stop",
        "[ID] [--took TIME]",
        "stop the clock (or say how long it took)",
        "Stop the clock on the running task; with --took, how long a task took when the clock did not run.",
        _stop,
    ),
    Sub(
        "export",
        "[--format F] [-o FILE]",
        "your tasks as json, todotxt, ics, taskwarrior",
        "Write every task to standard output or a file: json (everything), todotxt, ics (to-dos) or taskwarrior "
        "(for `task import`).",
        _export,
    ),
    Sub(
        "import",
        "FILE [--format F]",
        "add the tasks of a file, once",
        "Add the tasks of a json, todo.txt, iCalendar or Taskwarrior (`task export`) file that are not there "
        "yet; a bad row is listed and not written, the others are. An .ics file's events are the busy time of "
        "that file: importing it again removes the events it no longer has (more than 3 ask first).",
        _import,
    ),
    Sub(
        "backup",
        "FILE",
        "a consistent copy of the database",
        "A consistent copy of the whole database, safe while the planner runs.",
        _backup,
    ),
    Sub(
        "sync",
        "[--yes] [--create]",
        "the tasks with your CalDAV lists, both ways",
        "Sync the tasks with the CalDAV task list at PLANNER_CALDAV_URL (user and password: PLANNER_CALDAV_USER, "
        "PLANNER_CALDAV_PASSWORD, or the keyring), and lists of their own with PLANNER_CALDAV_LISTS. Deletions "
        "that look like a glitch, and more than 3 at once, ask first.",
        _sync,
    ),
    Sub(
        "remind",
        "[--check]",
        "coming reminders; --check: what is due now",
        "The reminders of the next 7 days; with --check, what is due now (for cron; exit 0 either way).",
        _remind,
    ),
    Sub(
        "doctor",
        "",
        "can the planner run here? (asks Ollama)",
        "Check that Ollama, the models, the data folder and the database are ready.",
        None,
    ),
    Sub(
        "mcp",
        "[--web] [--yes]",
        "serve the tools to an MCP client on stdio",
        "Serve the planner's tools, agenda and memories to an MCP client over stdio.",
        None,
    ),
]
BY_NAME = {s.name: s for s in SUBS}


def prog() -> str:
    """How the user called the planner: `planner` once installed, else `python agent.py` (settings.program)."""
    return program()


def summary() -> str:
    """The subcommands, one line each, for the main help."""
    width = max(len(f"{s.name} {s.usage}".strip()) for s in SUBS) + 2
    lines = [f"  {f'{s.name} {s.usage}'.strip():<{width}}{s.summary}" for s in SUBS]
    return "\n".join(lines)


def parser(name: str, base: Config) -> argparse.ArgumentParser:
    """The options of one subcommand, and the global ones (options.py): --db and --today shown, the others
    accepted before or after it and ignored where they mean nothing (--yes where nothing asks)."""
    sub = BY_NAME[name]
    p = Parser(prog=f"{prog()} {name}", description=sub.about, formatter_class=_Narrow, conflict_handler="resolve")
    add_global(p, base, shown=("db", "today", "now"))
    if sub.options:
        sub.options(p, base)  # its own --yes or -q (with its own help) takes the place of the global one
    return p


class _Narrow(argparse.HelpFormatter):
    """Help wrapped under 80 columns whatever the terminal."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=79, max_help_position=28)
