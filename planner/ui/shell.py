"""The everyday commands from the shell, without the model: add, done, reopen, cancel, edit, note, delete,
undo, redo, tasks, lists, show.

    $ python agent.py add call the dentist friday 3pm +health !high ~30m
    added 1  call the dentist  2026-12-04 15:00  !high +health ~30m
      'friday 3pm' -> Friday 2026-12-04 15:00; '~30m' -> 30 minutes

Each command is one turn in the change log (one `undo`), and writes through
the same tools the model calls (dispatch), so every value is checked the same
way and every write passes the one gate (planner/storage/gate.py). What the
policy asks about (planner/policy.py) is asked once per command, listing the
tasks, in a terminal; elsewhere it needs --yes: deleting, changing more than
3 tasks (done, cancel, reopen, edit, delete, undo, redo), undoing an import.

What goes wrong is raised as a Failure (outcomes.py), whose class carries the
exit status. The tools' errors are written for the model ("call list_tasks");
what the shell says to a person is its own: a missing task, a refused change
and a bad id are found and worded here, in the shell's commands.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import sys
from collections.abc import Callable
from typing import Any

from planner.dates import DateError, check_time, time_only
from planner.policy import Refusal
from planner.settings import Config, program
from planner.storage.db import Store
from planner.storage.tasks import new_turn, snapshot
from planner.tools import Dispatched, ToolContext, batch, dispatch, run_call
from planner.ui.outcomes import EXIT_OK, Failure, Refused, UsageError
from planner.ui.quickadd import NotationError, Reading, read
from planner.ui.text import ask_yes_no, safe
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


def yes_given(args: argparse.Namespace) -> bool:
    """--yes before or after the subcommand's name, or PLANNER_YES."""
    return bool(getattr(args, "yes", False)) or Config.from_env().yes


def line(verb: str, task: dict[str, Any]) -> str:
    """A task as the table shows it, after what happened to it."""
    parts = [f"{verb} {task['id']}", task["title"], when(task), extras(task)]
    return safe("  ".join(p for p in parts if p))


def _say(result: dict[str, Any], reading: Reading | None = None) -> None:
    """Every phrase read and what it became (the tool's echo), and what the notation left in the title."""
    if result.get("date_read_as"):
        print(safe(f"  {result['date_read_as']}"))
    for note in ([result["note"]] if result.get("note") else []) + (reading.notes if reading else []):
        print(safe(f"  note: {note}"))


def task_id(word: str) -> int:
    """A task id as typed; UsageError for anything that is not one."""
    if not word.isdigit() or not 0 < int(word) < 2**63:
        raise UsageError(f"{word!r} is not a task id: ids are the numbers `{program()} tasks` shows")
    return int(word)


def existing(store: Store, word: str) -> dict[str, Any]:
    """The task with this id as stored; a Failure in the shell's words when there is none."""
    number = task_id(word)
    task = snapshot(store.conn(), number)
    if task is None:
        raise Failure(f"there is no task {number}; `{program()} tasks all` lists every task with its id")
    return task


def not_done(numbers: list[int], verb: str, why: Refusal) -> Refused:
    """Tasks a change did not reach because the user's yes was missing, said to a person (the policy's own
    sentence is the model's)."""
    which = f"task {numbers[0]} was" if len(numbers) == 1 else f"tasks {', '.join(map(str, numbers))} were"
    if why in (Refusal.DECLINED, Refusal.ALREADY_DECLINED):
        return Refused(f"{which} not {verb}: you said no")
    if why is Refusal.CHANGING:
        return Refused(f"{which} not {verb}: they changed while you were asked; try again")
    return Refused(f"{which} not {verb}: that asks for your yes; run it in a terminal, or add --yes")


def refused(out: Dispatched, number: int, verb: str) -> Failure:
    """A call that did not run, said to a person (the tool's own words are for the model)."""
    if out.refused is not None:
        return not_done([number], verb, out.refused)
    return Failure(f"task {number}: {out.result['error']}")


def notation(words: list[str], today: dt.date) -> Reading:
    """The words of add or edit read; UsageError when they cannot be."""
    try:
        return read(words, today)
    except NotationError as e:
        raise UsageError(str(e)) from None


def add(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """add WORDS...: one task in the notation."""
    reading = notation(args.words, today)
    if not reading.title:
        raise UsageError("the task needs a title: the words left after the date and the notation")
    result, ok = dispatch(context(store, today), "add_task", {"title": reading.title, **reading.args})
    if not ok:
        raise Failure(result["error"])
    print(line("added", result["added"]))
    _say(result, reading)
    return EXIT_OK


def _only_what_is_written(changes: dict[str, Any], task: dict[str, Any], today: dt.date) -> dict[str, Any]:
    """A new day keeps the task's time, a time alone keeps its day: only the part written changes."""
    phrase = changes.get("due_date")
    if not phrase:
        return changes
    if time_only(phrase):
        try:
            return {**{k: v for k, v in changes.items() if k != "due_date"}, "due_time": check_time(phrase)}
        except DateError:
            return changes
    from planner.dates import resolve

    try:
        timed = resolve(phrase, today).time is not None
    except DateError:
        return changes  # the tool says what is wrong with it
    if not timed and task.get("due_time") and "due_time" not in changes:
        return {**changes, "due_time": task["due_time"]}
    return changes


def edit(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """edit ID WORDS...: change a task in the notation; words left become the title."""
    task = existing(store, args.id)
    reading = notation(args.words, today)
    changes = _only_what_is_written(dict(reading.args), task, today)
    if reading.title:
        changes["title"] = reading.title
    out = run_call(context(store, today, yes=yes_given(args)), "update_task", {"id": task["id"], **changes})
    if not out.ok:
        raise refused(out, task["id"], "changed")
    print(line("changed", out.result["updated"]))
    _say(out.result, reading)
    return EXIT_OK


def note(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """note ID WORDS...: a dated note on a task."""
    task = existing(store, args.id)
    out = run_call(context(store, today), "update_task", {"id": task["id"], "add_note": " ".join(args.words)})
    if not out.ok:
        raise refused(out, task["id"], "noted")
    print(line("noted", out.result["updated"]))
    return EXIT_OK


def each(tool: str, verb: str) -> Handler:
    """done / reopen / cancel / delete ID...: one tool call per id, all in one turn (one undo); every id is
    tried, and the exit status is the worst of them."""

    def run(store: Store, args: argparse.Namespace, today: dt.date) -> int:
        numbers = list(dict.fromkeys(task_id(word) for word in args.ids))
        ctx = context(store, today, yes=yes_given(args))
        decided = batch.confirm(ctx, [(tool, {"id": n}) for n in numbers])  # one question for the whole command
        status = EXIT_OK
        kept = {i: why for i, (_, why) in decided.refused.items()}
        for why in dict.fromkeys(kept.values()):  # said once for the command, naming its tasks
            e = not_done([numbers[i] for i, w in kept.items() if w is why], verb, why)
            print(safe(e.line()), file=sys.stderr, flush=True)
            status = max(status, e.status)
        for i, number in enumerate(numbers):
            if i in kept:
                continue
            try:
                _one(ctx, store, tool, verb, number)
            except Failure as e:  # said for this id; the others are still tried
                print(safe(e.line()), file=sys.stderr, flush=True)
                status = max(status, e.status)
        return status

    return run


def _one(ctx: ToolContext, store: Store, tool: str, verb: str, number: int) -> None:
    """One id of done / reopen / cancel / delete; a Failure in a person's words when it did not happen."""
    existing(store, str(number))
    out = run_call(ctx, tool, {"id": number})
    if not out.ok:
        raise refused(out, number, verb)
    result = out.result
    key = next(iter(result))
    shown = {"already_done": "already done", "already_open": "already open", "already_cancelled": "already cancelled"}
    print(line(shown.get(key, verb), result[key]))
    if result.get("next"):
        print(line("  next", result["next"]))
    if result.get("repeat"):
        print(safe(f"  {result['repeat']}"))


def _replay(store: Store, args: argparse.Namespace, today: dt.date, redo: bool) -> int:
    """undo / redo, said in words; a refusal in the shell's own words, from what the shell knows (whether
    anyone could be asked, and what they answered), not from the policy's sentence, which is the model's."""
    from planner.tools.undo import redo_newest, undo_newest

    answers: list[bool] = []

    def ask(question: str) -> bool:
        answers.append(ask_yes_no(question))
        return answers[-1]

    ctx = context(store, today, yes=yes_given(args))
    ctx = dataclasses.replace(ctx, confirm=ask if ctx.confirm else None)
    outcome = (redo_newest if redo else undo_newest)(ctx)
    verb = "redo" if redo else "undo"
    if outcome.refused:
        if answers and not answers[-1]:
            raise Refused(f"nothing was {verb}ne: you said no")
        if not answers and ctx.confirm is None and not ctx.yes:
            raise Refused(
                f"nothing was {verb}ne: this {verb} deletes tasks or changes more than 3, which asks for your yes; "
                "run it in a terminal, or add --yes"
            )
        raise Failure(outcome.refused)  # a task changed since the undo: the storage's sentence says which
    if not outcome.lines:
        print(f"nothing to {verb}")
        return EXIT_OK
    print(f"{verb}ne:\n" + "\n".join(safe(f"  {x}") for x in outcome.lines))
    return EXIT_OK


def undo(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """undo: revert the last change (asks before a large one), and say what changed, in words."""
    return _replay(store, args, today, redo=False)


def redo(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """redo: make again what undo took back."""
    return _replay(store, args, today, redo=True)


def tasks(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """tasks [STATUS] [FILTER...] [--limit N] [--json]."""
    ctx = dataclasses.replace(context(store, today), confirm=None)
    if args.limit < 1:
        raise UsageError("--limit must be 1 or more")
    if args.json:
        view = listing(ctx, args.filters, args.limit, where="tasks")
        print(json.dumps({"tasks": view.tasks}, ensure_ascii=False, indent=1))
        return EXIT_OK
    print(safe(tasks_text(ctx, args.filters, args.limit, where="tasks")))
    return EXIT_OK


def lists(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """lists: the lists with their counts."""
    print(safe(lists_text(context(store, today))))
    return EXIT_OK


def show(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """show ID: one task whole, without the model: its fields, notes, reminder, time tracked and history."""
    from planner.ui.show import show_text

    print(safe(show_text(store, existing(store, args.id), today)))
    return EXIT_OK


HANDLERS: dict[str, Handler] = {
    "add": add,
    "edit": edit,
    "note": note,
    "undo": undo,
    "redo": redo,
    "tasks": tasks,
    "lists": lists,
    "show": show,
    "done": each("complete_task", "done"),
    "reopen": each("reopen_task", "reopened"),
    "cancel": each("cancel_task", "cancelled"),
    "delete": each("delete_task", "deleted"),
}
