"""`python tests/killpoint.py WHEN N ARGS...`: `python agent.py ARGS`, held still at a chosen point of its N-th task
insert, so a test can kill -9 it exactly there instead of at a moment it hopes for.

WHEN is "write" (inside that write's transaction, after the task's row went in, before COMMIT) or "commit" (just
after its COMMIT, before the next statement). There the planner writes `killpoint` beside the database (the WAL's
size when the COMMIT began and now, so a test can tear that commit as a kill during its writes would) and waits
to be killed. Statements are seen through SQLite's trace callback on every connection the planner opens.
KILLPOINT_STATEMENT (a regular expression) counts other statements than task inserts: a sync's records.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.storage import db  # noqa: E402  (after the path is set, as agent.py's import)
from planner.ui import cli  # noqa: E402

TASK_INSERT = re.compile(os.environ.get("KILLPOINT_STATEMENT", r"\s*INSERT INTO tasks\s*\("))


def main() -> int:
    when, n, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    assert when in ("write", "commit"), when
    lock = threading.Lock()
    seen = {"inserts": 0, "armed": False, "stop": False, "wal_before": 0}
    opened: list[Path] = []

    def wal() -> int:
        path = Path(f"{opened[0]}-wal")
        return path.stat().st_size if path.exists() else 0

    def hold() -> None:
        marker = opened[0].parent / "killpoint"
        marker.with_suffix(".part").write_text(f"{seen['wal_before']} {wal()}")
        os.replace(marker.with_suffix(".part"), marker)
        while True:  # until the test's kill -9
            time.sleep(60)

    def watch(sql: str) -> None:
        with lock:
            if seen["stop"]:
                hold()
            if TASK_INSERT.match(sql):
                seen["inserts"] += 1
                seen["armed"] = seen["inserts"] == n
                seen["stop"] = seen["armed"] and when == "write"  # the next statement: still inside the write
            elif seen["armed"] and when == "commit" and sql.strip().upper() == "COMMIT":
                seen["wal_before"], seen["stop"] = wal(), True  # the next statement: the commit is done

    real = db._open

    def traced(path: Path):  # noqa: ANN202  (a sqlite3.Connection)
        conn = real(path)
        opened.append(Path(path))
        conn.set_trace_callback(watch)
        return conn

    db._open = traced
    sys.argv = [str(ROOT / "agent.py"), *args]
    return cli.main(args)


if __name__ == "__main__":
    raise SystemExit(main())
