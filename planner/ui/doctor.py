"""`python agent.py doctor`: one screen that says whether the planner can run here, and what to fix.

    Ollama       reachable at OLLAMA_HOST? its version
    models       each one pulled? its capabilities (tools, thinking, embedding) and size
    guards       the profile `auto` picks for the main model
    data         the folder, the database, the log: where, and readable by whom
    database     schema version, tasks, memories, sessions

Exit status 0 only when everything the planner needs is there (a missing critic
counts only while reflection or background memory is on).
"""

from __future__ import annotations

import sqlite3
import stat
import sys
from pathlib import Path
from typing import TextIO

from planner.agent.guards import pick_profile
from planner.model.client import ModelError, Ollama
from planner.settings import Config
from planner.storage.db import SCHEMA_VERSION, explain
from planner.storage.maintenance import inspect
from planner.ui.text import safe


def _mode(path: Path) -> tuple[bool, str]:
    """(private?, the mode in words)."""
    if not path.exists():
        return True, "not there yet"
    mode = stat.S_IMODE(path.stat().st_mode)
    private = not mode & 0o077
    return private, f"{oct(mode)[2:]}{'' if private else f'  (others can read it: chmod go-rwx {path})'}"


def run(config: Config, out: TextIO | None = None) -> int:
    """Print the checks (on stdout unless told); 0 when the planner has all it needs."""
    out = out or sys.stdout  # looked up now, not when the module loaded: the stdout of this call
    ok = True

    def line(mark: str, what: str, detail: str) -> None:
        out.write(safe(f"{mark} {what:<10} {detail}") + "\n")  # Ollama's answers and paths: made harmless

    llm = Ollama(config.host, timeout=10)
    try:
        try:
            line("ok", "ollama", f"{config.host}, version {llm.version()}")
            have = llm.models()
        except ModelError as e:
            line("!!", "ollama", str(e))
            have, ok = None, False
        roles = [("main", config.model, "tools"), ("embedding", config.embed_model, "embedding")]
        if config.reflect or config.auto_memory:
            roles.insert(1, ("critic", config.critic_model, None))
        for role, name, needs in roles if have is not None else []:
            if name not in have and f"{name}:latest" not in have:
                line("!!", role, f"{name} is not pulled: ollama pull {name}")
                ok = False
                continue
            try:
                size, caps = llm.facts(name)
            except ModelError as e:
                line("!!", role, f"{name}: {e}")
                ok = False
                continue
            lacking = needs and caps and needs not in caps
            line(
                "!!" if lacking else "ok",
                role,
                f"{name} ({size or 'size unknown'}; {', '.join(caps) or 'no capabilities said'})",
            )
            ok = ok and not lacking
            if role == "main":
                line("ok", "guards", f"{config.guards} -> {pick_profile(config.guards, size)}")
        folder = config.db_path.parent
        for path, label, name in [
            (folder, "data", str(folder)),
            (config.db_path, "", config.db_path.name),
            (config.log_path, "", config.log_path.name),
            (folder / "input_history", "", "input_history"),
        ]:
            private, mode = _mode(path)
            line("ok" if private else "!!", label, f"{name} {mode}")
            ok = ok and private
        if config.db_path.exists():
            try:
                version, counts = inspect(config.db_path)  # read-only: it looks, never migrates
                line(
                    "ok" if version <= SCHEMA_VERSION else "!!",
                    "database",
                    f"schema {version} (this planner: {SCHEMA_VERSION}); {counts['tasks']} tasks, "
                    f"{counts['memories']} memories, {counts['sessions']} sessions",
                )
                ok = ok and version <= SCHEMA_VERSION
            except sqlite3.Error as e:
                line("!!", "database", str(explain(e) or e))
                ok = False
        out.write("everything the planner needs is here\n" if ok else "fix the lines marked !! and run doctor again\n")
        return 0 if ok else 1
    finally:
        llm.close()
