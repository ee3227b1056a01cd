"""Writing the user's files safely: export -o, backup, anything the planner puts on disk for them.

    target(path, store, force, ask)  -> the checked path, or a FileRefused with the sentence to show
    write_text(path, text)           -> through a new temporary file in the same folder, then renamed

A file is never written through a symbolic link (another user's link in /tmp
would point the write anywhere), never over the live database or its WAL, and
never over an existing file without the user's yes (y/N in a terminal, else
--force). The temporary file is created exclusively (O_EXCL, not following
links) and renamed over the target, so a fault leaves the old file whole.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from planner.storage.db import Store


class FileRefused(Exception):
    """A path the planner will not write; the message says which and what to do."""


def target(path: Path, store: Store | None, force: bool, ask: Callable[[str], bool] | None) -> Path:
    """The path to write, checked; raises FileRefused in words."""
    if str(path) == "-":
        raise FileRefused("'-' is not a file name here; give a file name (or leave -o out for standard output)")
    path = path.expanduser()
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise FileRefused(f"cannot write {path}: the folder {folder} does not exist")
    if path.is_symlink():
        raise FileRefused(f"{path} is a symbolic link; give the file it points to, or another name")
    if path.is_dir():
        raise FileRefused(f"cannot write {path}: it is a folder; give a file name")
    if store is not None and path.exists():
        live = [
            store.path,
            store.path.with_name(store.path.name + "-wal"),
            store.path.with_name(store.path.name + "-shm"),
        ]
        if any(p.exists() and os.path.samefile(p, path) for p in live):
            raise FileRefused(f"{path} is the planner's own database; write the copy to another file")
    if path.exists() and not force:
        if ask is None or not ask(f"{path} exists. Replace it?"):
            raise FileRefused(f"{path} exists and was left as it is; add --force to replace it")
    return path


def temporary(path: Path) -> Path:
    """A new, empty file beside `path`, made by us alone (never an existing file or link)."""
    for n in range(100):
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{n}.part")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            continue
        os.close(fd)
        return tmp
    raise FileRefused(f"cannot make a temporary file beside {path}")


def write_text(path: Path, text: str) -> None:
    """Write a file through a temporary one beside it, renamed over it when whole."""
    tmp = temporary(path)
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
