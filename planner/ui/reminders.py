"""Reminders that reach you: at start (what fell due since last time), while the planner runs, and from cron.

    python agent.py remind            the reminders of the next 7 days
    python agent.py remind --check    what is due now, printed (and sent through notify-send when there
                                      is one); exit status 1 when something was due, so cron can act on it

Each reminder shows once: whoever shows it (the terminal, the check) marks it
shown. Reminders use the real clock, not --today: they are about the moment.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import threading
from collections.abc import Callable

from planner.storage.db import Store
from planner.storage.tasks import Task, due_reminders, mark_reminded, upcoming_reminders

WATCH_SECONDS = 5.0  # how often a running planner looks for a reminder that came due


def line(task: Task) -> str:
    """A reminder in one line."""
    due = task.get("due_date") or ""
    if due and task.get("due_time"):
        due += f" {task['due_time']}"
    return f"reminder: {task['title']}" + (f" (due {due})" if due else "") + f" [task {task['id']}]"


def due_now(store: Store, now: dt.datetime | None = None) -> list[str]:
    """The reminders that came due and were not shown yet, as lines; they count as shown from now."""
    now = now or dt.datetime.now()
    if not due_reminders(store.conn(), now):  # the usual tick: one read, no write lock taken
        return []
    with store.write() as conn:  # again under the lock: another planner may have shown them meanwhile
        tasks = due_reminders(conn, now)
        mark_reminded(conn, [t["id"] for t in tasks], now)
    return [line(t) for t in tasks]


class Watcher:
    """Looks for reminders every WATCH_SECONDS in a thread of its own and hands each line to `say`."""

    def __init__(self, store: Store, say: Callable[[str], None], every: float = WATCH_SECONDS):
        self.store, self.say, self.every = store, say, every
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="reminders", daemon=True)

    def start(self) -> Watcher:
        """Start watching; returns self."""
        self.thread.start()
        return self

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            try:
                for text in due_now(self.store):
                    self.say(text)
            except Exception:  # a busy or closed database: try again next time, never end the session
                continue

    def close(self) -> None:
        """Stop watching."""
        self.stop.set()


def check(store: Store, out: Callable[[str], None] = print) -> int:
    """`remind --check`: print what is due now (and notify-send it); 1 when something was due, else 0."""
    lines = due_now(store)
    notify = shutil.which("notify-send")
    for text in lines:
        out(text)
        if notify:
            subprocess.run([notify, "Planner", text], check=False, timeout=10, capture_output=True)
    return 1 if lines else 0


def upcoming(store: Store, days: int = 7) -> list[str]:
    """`remind`: the reminders still to come in the next `days` days, as lines."""
    now = dt.datetime.now()
    tasks = upcoming_reminders(store.conn(), now, now + dt.timedelta(days=days))
    return [f"{t['remind_at'].replace('T', ' ')}  {t['title']} [task {t['id']}]" for t in tasks]
