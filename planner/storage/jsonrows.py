"""The rows of a JSON task file, each read on its own: a file with one broken row still gives the others.

    elements(text, key="tasks") -> [value or ValueError, ...]

A whole file is read with json.loads; only when that fails is it read element
by element (json.JSONDecoder.raw_decode), starting again at the next line that
opens an object after a row that is not JSON. Exporters write one row per line
(Taskwarrior) or one object per block (the planner), so a broken row costs that
row. One object per line (Taskwarrior's json.array=off) is read line by line.
Raises ValueError only when nothing at all could be read.
"""

from __future__ import annotations

import json
import re
from typing import Any

_NEXT_OBJECT = re.compile(r"\n[ \t]*\{")


def elements(text: str, key: str | None = "tasks") -> list[Any]:
    """The elements of a JSON array, of {key: [...]}, or of one object per line; a row that is not JSON is a
    ValueError in its place. Raises ValueError when the file holds no readable row."""
    stripped = text.strip()
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError as e:
        whole = e
    else:
        if isinstance(data, dict) and key is not None and key in data:
            data = data[key]
        if isinstance(data, list):
            return data
        if isinstance(data, dict):
            return [data]  # one object alone
        raise ValueError(f"expected a list of tasks{f' or {{{key!r}: [...]}}' if key else ''}")
    if stripped.startswith("[") or (key is not None and stripped.startswith("{") and f'"{key}"' in stripped[:2000]):
        out = _salvage(stripped)
    elif stripped.startswith("{"):
        out = [_line(line) for line in stripped.splitlines() if line.strip()]
    else:
        out = []
    if not out or all(isinstance(x, ValueError) for x in out):
        raise ValueError(f"not JSON ({whole.msg}, line {whole.lineno} column {whole.colno})")
    return out


def _line(line: str) -> Any:
    try:
        return json.loads(line.strip().rstrip(","))
    except json.JSONDecodeError as e:
        return ValueError(f"not JSON ({e.msg}, column {e.colno})")


def _salvage(text: str) -> list[Any]:
    """The elements of the first array in `text`, one by one, skipping a broken one to the next object."""
    pos = text.find("[")
    if pos < 0:
        return []
    pos += 1
    decoder = json.JSONDecoder()
    out: list[Any] = []
    while pos < len(text):
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            break
        try:
            value, pos = decoder.raw_decode(text, pos)
            out.append(value)
        except json.JSONDecodeError as e:
            out.append(ValueError(f"not JSON ({e.msg}, line {e.lineno})"))
            found = _NEXT_OBJECT.search(text, pos + 1)
            if found is None:
                break
            pos = found.end() - 1
    return out
