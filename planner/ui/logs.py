"""The planner's log: agent.log beside the database, size-capped, for every mode and subcommand.

What the user sees is one line; what went wrong in detail (a traceback, a
server's answer) goes here, so the REPL, the one-shot mode, the MCP server
and the subcommands all leave the same trail.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

LOG_BYTES, LOG_FILES = 1_000_000, 3  # agent.log rotates at 1 MB, keeping agent.log.1 to .3


def setup_logging(path: Path) -> None:
    """Send the planner's log to agent.log and nowhere else (nowhere, with one line, if it cannot be written)."""
    try:
        # Size-capped: a planner used for years must not grow an unbounded log beside its data.
        handler: logging.Handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=LOG_BYTES, backupCount=LOG_FILES, encoding="utf-8"
        )
    except OSError as e:
        print(f"warning: no log this run: cannot write {path} ({e.strerror})", file=sys.stderr)
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    root = logging.getLogger("planner")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    root.propagate = False
    # A log that cannot be written (disk full, a file size limit) must not print "--- Logging error ---".
    logging.raiseExceptions = False
