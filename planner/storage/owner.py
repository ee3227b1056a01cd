"""What the gate (gate.py) needs from the module that owns a table of the user's data: the row a yes is bound
to, how to write one planned change (with the table's own change log), and the change in words.

Each owning module (tasks in gate.py over tasks.py, events and preferences in calendar.py, tracked time in
worklog.py, memories in memories.py) makes one Owner; its write functions are called by the gate alone, which
tests/test_gate_structure.py checks in the code itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Row = dict[str, Any]


@dataclass(frozen=True)
class Owner:
    """One table's part in the gate."""

    table: str
    row: Callable[[sqlite3.Connection, int], Row | None]  # the row as it is (None: there is none)
    # Write one planned change (op, key, values, tool) in the gate's transaction, with the table's own change
    # log in `turn` (unless `log` is off: an undo marks the log instead); the row's key.
    apply: Callable[[sqlite3.Connection, Any, str, bool], int | None]
    line: Callable[[str, int | None, Row | None, Row | None], str]  # the change in words, for a question
    mark: Callable[[sqlite3.Connection, str, list[int]], None] | None = None  # undo/redo: mark the log's rows
