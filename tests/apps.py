"""The apps people use, driven as a user would: todoman (`todo`) on a local folder that vdirsyncer keeps in step
with the Radicale the tests start (phone.py). Both are on PyPI (requirements-dev.txt) and run as programs.

    desk = Desk(tmp_path, url)        # vdirsyncer discover + sync: the task list is on the desk
    desk.todo("done", desk.id_of("water the plants"))
    desk.sync()                       # vdirsyncer sync: the desk's changes go to the server
    desk.open_titles()                # what `todo list` shows

Each call is a process of its own, as at a terminal; a failure shows its output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from phone import PASSWORD, USER

BIN = Path(sys.executable).parent


class Desk:
    """todoman over vdirsyncer, on one task list."""

    def __init__(self, home: Path, url: str):
        self.home = home
        folder = home / "lists" / "tasks"
        folder.mkdir(parents=True)
        (home / "vdirsyncer.conf").write_text(
            f'[general]\nstatus_path = "{home}/status/"\n'
            '[pair tasks]\na = "desk"\nb = "server"\ncollections = null\n'
            f'[storage desk]\ntype = "filesystem"\npath = "{folder}/"\nfileext = ".ics"\n'
            f'[storage server]\ntype = "caldav"\nurl = "{url}"\nusername = "{USER}"\npassword = "{PASSWORD}"\n'
        )
        (home / "todoman.py").write_text(
            f'path = "{home}/lists/*"\ndate_format = "%Y-%m-%d"\ntime_format = "%H:%M"\n'
            f'cache_path = "{home}/cache.sqlite3"\n'
        )
        self._run("vdirsyncer", "-c", str(home / "vdirsyncer.conf"), "discover")
        self.sync()

    def _run(self, program: str, *args: str) -> str:
        p = subprocess.run(
            [str(BIN / program) if (BIN / program).exists() else program, *args],
            capture_output=True,
            text=True,
            timeout=120,
            env={"HOME": str(self.home), "PATH": f"{BIN}:/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": "UTC"},
        )
        assert p.returncode == 0, f"{program} {' '.join(args)}: {p.stdout}{p.stderr}"
        return p.stdout

    def sync(self) -> str:
        """vdirsyncer sync: both ways between the folder and the server."""
        return self._run("vdirsyncer", "-c", str(self.home / "vdirsyncer.conf"), "sync")

    def todo(self, *args: str) -> str:
        """One todoman command."""
        return self._run("todo", "-c", str(self.home / "todoman.py"), *args)

    def listed(self, status: str = "ANY") -> list[dict]:
        """`todo --porcelain list --status STATUS`: the to-dos as todoman shows them."""
        return json.loads(self.todo("--porcelain", "list", "--status", status))

    def id_of(self, summary: str) -> str:
        """todoman's id for the open to-do with this summary."""
        (found,) = [t["id"] for t in self.listed("NEEDS-ACTION,IN-PROCESS") if t["summary"] == summary]
        return str(found)

    def open_titles(self) -> list[str]:
        """The summaries of the open to-dos, sorted."""
        return sorted(t["summary"] for t in self.listed("NEEDS-ACTION,IN-PROCESS"))
