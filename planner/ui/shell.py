"""The everyday commands from the shell, without the model: add, done, reopen, cancel, edit, note, delete,
undo, redo, tasks, lists.

    $ python agent.py add call the dentist friday 3pm +health !high ~30m
    added 1  call the dentist  2026-12-04 15:00  !high +health ~30m
      'friday 3pm' -> Friday 2026-12-04 15:00; '~30m' -> 30 minutes

Each command is one turn in the change log (one `undo`), and writes through
the same tools the model calls (dispatch), so every value is checked the same
way and every write passes the one gate (planner/storage/gate.py). What the
policy asks about (planner/policy.py) is asked once per command, listing the
tasks, in a terminal; elsewhere it needs --yes: deleting, changing more than
3 tasks (done, cancel, reopen, edit, delete, undo, redo), undoing an import.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import sys
from collections.abc import Callable
from typing import Any

from planner.settings import Config
from planner.storage.db import Store
from planner.storage.tasks import new_turn
from planner.tools import ToolContext, batch, dispatch, run_call
from planner.ui.quickadd import NotationError, read
from planner.ui.subcommands import EXIT_ERROR, EXIT_OK, EXIT_REFUSED, EXIT_USAGE
from planner.ui.text import ask_yes_no, err, safe
from planner.ui.views import extras, listing, lists_text, tasks_text, when

Handler = Callable[[Store, argparse.Namespace, dt.date], int]


def context(store: Store, today: dt.date, yes: bool = False, pretended: bool = False) -> ToolContext:
    """A tool context for one shell command: its own turn; y/N in a terminal, --yes elsewhere; a plan starts
    now, or at the start of a pretended today (--today)."""
    from planner.tools.plan_tools import hours_of

    confirm = ask_yes_no if sys.stdin.isatty() else None
    return ToolContext(
        store=store,
        today=lambda: today,
        turn=new_turn(),
        confirm=confirm,
        yes=yes or Config.from_env().yes,
        hours=hours_of(Config.from_env()),
        plan_from=dt.datetime.combine(today, dt.time()) if pretended else None,
        door_name="shell",
        how="run it in a terminal to be asked, or add --yes to the command",
    )


def line(verb: str, task: dict[str, Any]) -> str:
    """A task as the table shows it, after what happened to it."""
    parts = [f"{verb} {task['id']}", task["title"], when(task), extras(task)]
    return safe("  ".join(p for p in parts if p))


def _say(result: dict[str, Any]) -> None:
    if result.get("date_read_as"):
        print(safe(f"  {result['date_read_as']}"))
    if result.get("note"):
        print(safe(f"  note: {result['note']}"))


def _refused(message: str, refused: bool = True) -> int:
    err(message)
    return EXIT_REFUSED if refused else EXIT_ERROR


def add(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """add WORDS...: one task in the notation."""
    try:
        reading = read(args.words, today)
    except NotationError as e:
        err(str(e))
        return EXIT_USAGE
    if not reading.title:
        err("the task needs a title: the words left after the date and the notation")
        return EXIT_USAGE
    result, ok = dispatch(context(store, today), "add_task", {"title": reading.title, **reading.args})
    if not ok:
        err(result["error"])
        return EXIT_ERROR
    print(line("added", result["added"]))
    _say(result)
    return EXIT_OK


def edit(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """edit ID WORDS...: change a task in the notation; words left become the title."""
    try:
        reading = read(args.words, today)
    except NotationError as e:
        err(str(e))
        return EXIT_USAGE
    changes = dict(reading.args)
    if reading.title:
        changes["title"] = reading.title
    out = run_call(context(store, today, yes=getattr(args, "yes", False)), "update_task", {"id": args.id, **changes})
    result = out.result
    if not out.ok:
        return _refused(result["error"], out.refused is not None)
    print(line("changed", result["updated"]))
    _say(result)
    return EXIT_OK


def note(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """note ID WORDS...: a dated note on a task."""
    result, ok = dispatch(context(store, today), "update_task", {"id": args.id, "add_note": " ".join(args.words)})
    if not ok:
        err(result["error"])
        return EXIT_ERROR
    print(line("noted", result["updated"]))
    return EXIT_OK


def each(tool: str, verb: str) -> Handler:
    """done / reopen / cancel / delete ID...: one tool call per id, all in one turn (one undo)."""

    def run(store: Store, args: argparse.Namespace, today: dt.date) -> int:
        ctx = context(store, today, yes=getattr(args, "yes", False))
        status = EXIT_OK
        ids = list(dict.fromkeys(args.ids))
        decided = batch.confirm(ctx, [(tool, {"id": i}) for i in ids])  # one question for the whole command
        said: set[str] = set()
        for n, task_id in enumerate(ids):
            if n in decided.refused:  # the reason names the tasks; said once for the command
                if decided.refused[n][0] not in said:
                    said.add(decided.refused[n][0])
                    status = max(status, _refused(decided.refused[n][0]))
                continue
            out = run_call(ctx, tool, {"id": task_id})
            result = out.result
            if not out.ok:
                status = max(status, _refused(f"task {task_id}: {result['error']}", out.refused is not None))
                continue
            key = next(iter(result))
            shown = {
                "already_done": "already done",
                "already_open": "already open",
                "already_cancelled": "already cancelled",
            }.get(key, verb)
            print(line(shown, result[key]))
            if result.get("next"):
                print(line("  next", result["next"]))
            if result.get("repeat"):
                print(safe(f"  {result['repeat']}"))
        return status

    return run


def undo(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """undo: revert the last change (asks before a large one)."""
    from planner.tools.undo import undo_newest

    ctx = context(store, today, yes=getattr(args, "yes", False))
    outcome = undo_newest(ctx)
    if outcome.refused:
        return _refused(outcome.refused)
    if not outcome.lines:
        print("nothing to undo")
        return EXIT_OK
    print("undone:\n" + "\n".join(safe(f"  {x}") for x in outcome.lines))
    return EXIT_OK


def redo(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """redo: make again what undo took back."""
    from planner.tools.undo import redo_newest

    outcome = redo_newest(context(store, today, yes=getattr(args, "yes", False)))
    if outcome.refused:
        return _refused(outcome.refused)
    if not outcome.lines:
        print("nothing to redo")
        return EXIT_OK
    print("redone:\n" + "\n".join(safe(f"  {x}") for x in outcome.lines))
    return EXIT_OK


def tasks(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """tasks [STATUS] [FILTER...] [--limit N] [--json]."""
    ctx = dataclasses.replace(context(store, today), confirm=None)
    if args.limit < 1:
        err("--limit must be 1 or more")
        return EXIT_USAGE
    if args.json:
        view = listing(ctx, args.filters, args.limit, where="tasks")
        if isinstance(view, str):
            err(view.removeprefix("error: "))
            return EXIT_USAGE
        print(json.dumps({"tasks": view.tasks}, ensure_ascii=False, indent=1))
        return EXIT_OK
    text = tasks_text(ctx, args.filters, args.limit, where="tasks")
    if text.startswith("error: "):
        err(text.removeprefix("error: "))
        return EXIT_USAGE
    print(safe(text))
    return EXIT_OK


def lists(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """lists: the lists with their counts."""
    print(safe(lists_text(context(store, today))))
    return EXIT_OK


HANDLERS: dict[str, Handler] = {
    "add": add,
    "edit": edit,
    "note": note,
    "undo": undo,
    "redo": redo,
    "tasks": tasks,
    "lists": lists,
    "done": each("complete_task", "done"),
    "reopen": each("reopen_task", "reopened"),
    "cancel": each("cancel_task", "cancelled"),
    "delete": each("delete_task", "deleted"),
}
