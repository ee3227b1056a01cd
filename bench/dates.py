"""How well each way of reading dates does on the phrase table: `python -m bench dates`.

The table (tests/data/date_phrases.json) says what each phrase should give
with today fixed; an ambiguous phrase should be reported as ambiguous with
its readings, and a non-date as an error. Compared:

- planner: dates.resolve, the grammar over python-dateutil that the tools use;
- dateutil alone: dateutil.parser.parse(fuzzy=True), today as the default;
- dateparser (only if installed; it is not a dependency): dateparser.parse
  with RELATIVE_BASE=today and PREFER_DATES_FROM=future.

Neither library can report ambiguity, so they miss those rows by design.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

from planner.dates import AmbiguousDate, DateError, resolve  # noqa: E402

TABLE = ROOT / "tests" / "data" / "date_phrases.json"


def load() -> tuple[dt.date, list[dict[str, Any]]]:
    """Today and the phrase rows."""
    data = json.loads(TABLE.read_text())
    return dt.date.fromisoformat(data["today"]), data["phrases"]


def expected(row: dict[str, Any]) -> dict[str, Any]:
    """A row without its phrase: what a reader should give."""
    return {k: v for k, v in row.items() if k != "phrase"}


def planner(phrase: str, today: dt.date) -> dict[str, Any]:
    """The planner's own reading."""
    try:
        w = resolve(phrase, today)
    except AmbiguousDate as e:
        return {"ambiguous": [d.isoformat() for d in e.readings]}
    except DateError:
        return {"error": True}
    return {"date": w.date.isoformat(), **({"time": w.time} if w.time else {})}


def _from_datetime(value: dt.datetime | None) -> dict[str, Any]:
    if value is None:
        return {"error": True}
    out: dict[str, Any] = {"date": value.date().isoformat()}
    if value.time() != dt.time():
        out["time"] = value.strftime("%H:%M")
    return out


def dateutil_alone(phrase: str, today: dt.date) -> dict[str, Any]:
    """dateutil's parser on its own."""
    from dateutil import parser

    try:
        return _from_datetime(parser.parse(phrase, fuzzy=True, default=dt.datetime.combine(today, dt.time())))
    except (ValueError, OverflowError):
        return {"error": True}


def dateparser_reader() -> Callable[[str, dt.date], dict[str, Any]] | None:
    """dateparser, if it is installed."""
    try:
        import dateparser
    except ImportError:
        return None

    def read(phrase: str, today: dt.date) -> dict[str, Any]:
        settings = {"RELATIVE_BASE": dt.datetime.combine(today, dt.time()), "PREFER_DATES_FROM": "future"}
        return _from_datetime(dateparser.parse(phrase, languages=["en"], settings=settings))

    return read


def run() -> list[dict[str, Any]]:
    """Correct rows and time per phrase for each reader."""
    today, rows = load()
    readers: dict[str, Any] = {"planner (dates.py)": planner, "dateutil parser alone": dateutil_alone}
    if (dp := dateparser_reader()) is not None:
        readers["dateparser"] = dp
    out = []
    for name, read in readers.items():
        read(rows[0]["phrase"], today)  # first use loads data; not what a phrase costs
        t0 = time.perf_counter()
        misses = [r["phrase"] for r in rows if read(r["phrase"], today) != expected(r)]
        ms = (time.perf_counter() - t0) * 1000 / len(rows)
        out.append({"reader": name, "correct": len(rows) - len(misses), "total": len(rows), "ms": ms, "misses": misses})
    return out


def table(rows: list[dict[str, Any]]) -> None:
    """Print the date table."""
    print(f"{'date reader':<24} {'correct':>8} {'rate':>6} {'ms/phrase':>10}  misses (first 6)")
    for r in rows:
        shown = ", ".join(r["misses"][:6])
        print(
            f"{r['reader']:<24} {r['correct']:>4}/{r['total']:<3} {r['correct'] / r['total']:>6.0%} {r['ms']:>10.3f}  {shown}"
        )
