"""One daemon thread that runs the planner's background jobs in order (memory extraction, summaries, scenes).

Kept apart from what the jobs do (keeper.py): the queue, draining it on exit and handing later jobs a
queue of their own when it closes are one concern; extracting memories is another.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

log = logging.getLogger("planner")


class Worker:
    """One daemon thread that runs submitted jobs in order."""

    def __init__(self) -> None:
        self._q: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.draining = threading.Event()  # set while drain waits: jobs that come in chunks stop queueing more

    def submit(self, job: Callable[[], None]) -> None:
        """Queue a job; the thread starts on first use."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, args=(self._q,), name="planner-background", daemon=True
                )
                self._thread.start()
            self._q.put(job)

    @staticmethod
    def _run(jobs: queue.Queue[Callable[[], None] | None]) -> None:
        while True:
            job = jobs.get()
            if job is None:  # close(): the jobs before it have run
                jobs.task_done()
                return
            try:
                job()
            except Exception:  # a failed job must not stop the next one
                log.exception("background job failed")
            finally:
                jobs.task_done()

    def drain(self, timeout: float) -> bool:
        """Wait up to timeout seconds for queued jobs; True if all finished."""
        deadline = time.monotonic() + timeout
        self.draining.set()
        try:
            while self._q.unfinished_tasks:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.02)
            return True
        finally:
            self.draining.clear()

    def close(self, timeout: float) -> bool:
        """Drain for up to timeout seconds, then let the thread end after what is queued; True if all finished.

        A job still running is not interrupted (it writes in one transaction, so stopping it gains
        nothing); the daemon thread ends with it, or with the process.
        """
        finished = self.drain(timeout)
        with self._lock:
            if self._thread is not None:
                self._q.put(None)
                # A job submitted later starts a thread of its own on a queue of its own, so it never runs
                # beside what this thread still has to finish.
                self._q, self._thread = queue.Queue(), None
        return finished
