"""Plain-text tables and paragraphs that fit the terminal: the width from COLUMNS or the terminal itself.

    fit([Column("id", 2, align=">"), Column("title", 12, grow=True), Column("due", 5)], rows, width=40)

Every column starts at its least width; the room left goes first to the
short columns a row is read by (id, due, status: their whole width), then to
the growing one (the title), and what is left after the title to the columns
marked `last` (the notation of the rest: tags, list, repeat, reminder), cut
with "…". So at any width the title has all the room the table can give it
(at least 12 characters at 40 columns). Cells are measured by how wide they
show (wcwidth), so a title in Chinese or with emoji does not break the columns.
"""

from __future__ import annotations

import os
import shutil
import textwrap
from dataclasses import dataclass

GAP = 2


def width() -> int:
    """The terminal's width: COLUMNS when set, else the terminal's, else 80."""
    try:
        return max(20, int(os.environ["COLUMNS"]))
    except (KeyError, ValueError):
        return max(20, shutil.get_terminal_size((80, 24)).columns)


def shown(text: str) -> int:
    """How many columns a text takes on screen."""
    if text.isascii():
        return len(text)  # the usual case, without loading wcwidth (the shell starts faster)
    from wcwidth import wcswidth

    n = wcswidth(text)
    return n if n >= 0 else len(text)


def cut(text: str, room: int) -> str:
    """The text in at most `room` columns, ending in "…" when cut."""
    if shown(text) <= room:
        return text
    from wcwidth import wcwidth

    out, used = [], 0
    for ch in text:
        w = max(wcwidth(ch), 0)
        if used + w > room - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…"


def pad(text: str, room: int, align: str = "<") -> str:
    """The text cut to `room` columns and padded to exactly that many."""
    text = cut(text, room)
    space = " " * (room - shown(text))
    return space + text if align == ">" else text + space


@dataclass(frozen=True)
class Column:
    """One column: its heading, the least width it keeps, and whether it takes the room left."""

    name: str
    least: int = 1  # it shrinks to no less than this
    grow: bool = False
    align: str = "<"
    pad: int = 0  # and is never narrower than this (ids line up across sections)
    last: bool = False  # gets room only after the title has all it needs


def fit(columns: list[Column], rows: list[list[str]], room: int | None = None, header: bool = True) -> list[str]:
    """The rows as lines of at most `room` columns (the terminal's width by default)."""
    room = room or width()
    natural = [
        max([c.pad, shown(c.name) if header else 0, *(shown(r[i]) for r in rows)]) for i, c in enumerate(columns)
    ]
    widths = [min(n, max(c.least, c.pad)) for n, c in zip(natural, columns, strict=True)]
    left = room - sum(widths) - GAP * (len(widths) - 1)
    first = [i for i, c in enumerate(columns) if not c.grow and not c.last]
    title = [i for i, c in enumerate(columns) if c.grow]
    rest = [i for i, c in enumerate(columns) if c.last and not c.grow]
    for i in first + title + rest:  # the room, in that order, each up to its widest cell
        more = max(0, min(natural[i] - widths[i], left))
        widths[i] += more
        left -= more
    lines = []
    for r in ([[c.name for c in columns]] if header else []) + rows:
        cells = [pad(cell, widths[i], columns[i].align) for i, cell in enumerate(r)]
        lines.append((" " * GAP).join(cells).rstrip())
    return lines


def wrap(text: str, room: int | None = None, indent: int = 0) -> str:
    """A paragraph wrapped to the terminal, its continuation lines indented."""
    room = room or width()
    return textwrap.fill(text, width=max(20, room), subsequent_indent=" " * indent, break_on_hyphens=False)
