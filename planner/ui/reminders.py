"""Reminders that reach you: at start (what fell due since last time), while the planner runs, and from cron.

    python agent.py remind            the reminders of the next 7 days
    python agent.py remind --check    what is due now, printed (and sent through notify-send when there
                                      is one); exit status 0 either way, so a systemd timer never fails

Each reminder is marked shown only once it was shown, so a crash or a
notify-send that hangs (killed after NOTIFY_SECONDS) never loses one; the
price is that two planners racing on one file may both show it. Reminders
use the real clock, not --today: they are about the moment (each function
takes the clock as a parameter, so a test passes one that moves when it says).
notify-send gets the text with its markup escaped, as it reads its body as markup.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import threading
from collections.abc import Callable

from planner.policy import Door
from planner.storage.db import Store
from planner.storage.gate import Change, ChangeSet, Op, commit
from planner.storage.tasks import Task, due_reminders, upcoming_reminders
from planner.ui.text import safe

Clock = Callable[[], dt.datetime]  # local wall-clock time now, without a zone (as remind_at is stored)
WATCH_SECONDS = 5.0  # how often a running planner looks for a reminder that came due
NOTIFY_SECONDS = 5.0  # a notify-send that takes longer is stopped; the reminder was printed anyway


def line(task: Task) -> str:
    """A reminder in one line."""
    due = task.get("due_date") or ""
    if due and task.get("due_time"):
        due += f" {task['due_time']}"
    return f"reminder: {task['title']}" + (f" (due {due})" if due else "") + f" [task {task['id']}]"


def show_due(store: Store, say: Callable[[str], None], now: dt.datetime | None = None) -> int:
    """Show each reminder that came due and was not shown yet, marking it shown once `say` returned;
    returns how many were shown."""
    now = now or dt.datetime.now()
    shown = 0
    for task in due_reminders(store.conn(), now):  # the usual tick: one read, no write lock taken
        say(line(task))
        stamp = {"reminded_at": now.isoformat(timespec="seconds")}
        shown_one = Change(Op.EDIT, task["id"], stamp, tool="reminder")
        commit(store, lambda conn, c=shown_one: ChangeSet((c,), logged=False), Door("reminders"))
        shown += 1
    return shown


def due_now(store: Store, now: dt.datetime | None = None) -> list[str]:
    """The reminders that came due and were not shown yet, as lines; they count as shown from now."""
    lines: list[str] = []
    show_due(store, lines.append, now)
    return lines


class Watcher:
    """Looks for reminders every WATCH_SECONDS in a thread of its own and hands each line to `say`."""

    def __init__(
        self, store: Store, say: Callable[[str], None], every: float = WATCH_SECONDS, clock: Clock = dt.datetime.now
    ):
        self.store, self.say, self.every, self.clock = store, say, every, clock
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="reminders", daemon=True)

    def start(self) -> Watcher:
        """Start watching; returns self."""
        self.thread.start()
        return self

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            try:
                show_due(self.store, self.say, self.clock())
            except Exception:  # a busy or closed database: try again next time, never end the session
                continue

    def close(self) -> None:
        """Stop watching."""
        self.stop.set()


def check(
    store: Store, out: Callable[[str], None] = print, notify: str | None = "notify-send", clock: Clock = dt.datetime.now
) -> int:
    """`remind --check`: print what is due now (and send it through notify-send); how many were due."""
    program = [shutil.which(notify) if notify else None]

    def say(text: str) -> None:
        out(text)
        if program[0]:
            try:
                subprocess.run(
                    [program[0], "Planner", markup_safe(text)], check=False, timeout=NOTIFY_SECONDS, capture_output=True
                )
            except (subprocess.TimeoutExpired, OSError):  # stopped: the reminder was printed, it still counts
                program[0] = None  # and the rest are printed without waiting for it again

    return show_due(store, say, clock())


def markup_safe(text: str) -> str:
    """Text as notify-send shows it: its markup characters escaped, control characters made visible."""
    return safe(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def upcoming(store: Store, days: int = 7, clock: Clock = dt.datetime.now) -> list[str]:
    """`remind`: the reminders still to come in the next `days` days, as lines."""
    now = clock()
    tasks = upcoming_reminders(store.conn(), now, now + dt.timedelta(days=days))
    return [f"{t['remind_at'].replace('T', ' ')}  {t['title']} [task {t['id']}]" for t in tasks]
