"""The days each memory is about, as day numbers beside sorted ids: the time filter of a search.

A memory is about a range of days (happened_on..happened_to). Keeping them as two int32 arrays beside the
ids makes "which memories are about last May" one vectorised comparison instead of a range query SQLite
cannot serve from one index (that query alone cost 160 ms at 100,000 memories; bench/recall.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from planner.memory.vectors import np, rows_of


class Days:
    """The days each memory is about, as day numbers beside sorted ids, so a time filter is one vectorised
    comparison instead of a range query SQLite cannot serve from one index (bench/recall.py)."""

    def __init__(self) -> None:
        self._ids: np.ndarray | None = None  # allocated on first use, so numpy loads then
        self._lo: np.ndarray | None = None
        self._hi: np.ndarray | None = None
        self._lock = threading.Lock()

    def load(self, rows: Iterable[tuple[int, int, int]]) -> None:
        """Replace the contents with (id, first day, last day) rows; days as date ordinals."""
        table = np.array(list(rows), dtype=np.int64).reshape(-1, 3)
        table = table[np.argsort(table[:, 0], kind="stable")]
        with self._lock:
            # day numbers fit int32, which halves what the filter reads
            self._ids, self._lo, self._hi = (
                table[:, 0].copy(),
                table[:, 1].astype(np.int32),
                table[:, 2].astype(np.int32),
            )

    def set(self, id_: int, lo: int, hi: int) -> None:
        """Add or change one memory's days."""
        with self._lock:
            if self._ids is None:
                self._ids = np.empty(0, dtype=np.int64)
                self._lo, self._hi = np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32)
            at = int(np.searchsorted(self._ids, id_))
            if at < len(self._ids) and self._ids[at] == id_:
                self._lo[at], self._hi[at] = lo, hi
            else:
                self._ids, self._lo, self._hi = (
                    np.insert(a, at, v) for a, v in ((self._ids, id_), (self._lo, lo), (self._hi, hi))
                )

    def remove(self, id_: int) -> None:
        """Drop one memory (no-op if absent)."""
        with self._lock:
            if self._ids is not None and len(rows := rows_of(self._ids, np.array([id_]))):
                self._ids, self._lo, self._hi = (np.delete(a, rows) for a in (self._ids, self._lo, self._hi))

    def within(self, lo: int, hi: int, most: int) -> np.ndarray | None:
        """The sorted ids of the memories about a day in lo..hi; None when there are more than `most`."""
        with self._lock:
            if self._ids is None:
                return np.empty(0, dtype=np.int64)
            inside = (self._lo <= hi) & (self._hi >= lo)
            if np.count_nonzero(inside) > most:
                return None
            return self._ids[inside]
