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
        self._stopped = threading.Event()  # set by close once its wait is over: the thread's queue is dropped
        self._lock = threading.Lock()
        self.draining = threading.Event()  # set while drain waits: jobs that come in chunks stop queueing more

    def submit(self, job: Callable[[], None]) -> None:
        """Queue a job; the thread starts on first use."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, args=(self._q, self._stopped), name="planner-background", daemon=True
                )
                self._thread.start()
            self._q.put(job)

    @staticmethod
    def _run(jobs: queue.Queue[Callable[[], None] | None], stopped: threading.Event) -> None:
        while True:
            job = jobs.get()
            if job is None:  # close(): the jobs before it have run
                jobs.task_done()
                return
            try:
                if not stopped.is_set():  # after close, the database may be closed: queued jobs wait for the next start
                    job()
            except Exception as e:  # a failed job must not stop the next one
                if stopped.is_set():  # the database closed under a job still running at exit: it wrote nothing
                    log.info("background job stopped at exit (%s); it runs again at the next start", e)
                else:
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
        nothing); jobs still queued do not start, since the store closes next (the pending work is kept
        in the database and resumed at the next start); a job that meets the closed store says so in one
        log line, not a traceback. The daemon thread ends with it, or with the process.
        """
        finished = self.drain(timeout)
        with self._lock:
            if self._thread is not None:
                self._stopped.set()  # what is still queued does not start: the store closes after this
                self._q.put(None)
                # A job submitted later starts a thread of its own on a queue of its own, so it never runs
                # beside what this thread still has to finish.
                self._q, self._thread, self._stopped = queue.Queue(), None, threading.Event()
        return finished
