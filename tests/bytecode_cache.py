"""A pytest plugin, loaded first (pyproject's addopts): the test run keeps Python's bytecode in one cache outside
the tree, and so does every program it starts (helpers.clean_env).

With PYTHONDONTWRITEBYTECODE set, as on a machine that keeps checkouts free of __pycache__ folders, each xdist
worker compiled the planner and rewrote every test module's asserts again, and each `python agent.py` a test
started compiled the planner and its libraries again: 0.4 s of a start's 0.9 s, 4 s of a worker's collection,
together near a third of the suite's CPU. Under a prefix (sys.pycache_prefix) nothing is written beside the
sources; Python checks each cached file against its source, so a stale one is only compiled again.
Left out: a run that did not set PYTHONDONTWRITEBYTECODE, or set its own prefix, keeps its own way.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

PYCACHE = Path(tempfile.gettempdir()) / "planner-tests-pycache"

if sys.dont_write_bytecode and sys.pycache_prefix is None:
    sys.pycache_prefix = str(PYCACHE)
    sys.dont_write_bytecode = False
