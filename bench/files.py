"""How import and the sync scale: `python -m bench files`.

- .ics import, flat and nested: the time per component for 5,000, 10,000 and
  20,000 to-dos must stay about the same (linear), and nested components are
  reported, never walked (the quadratic case: 20,000 nested took 47 s before).
- A calendar of 20,000 events (.ics import: the file's events become busy
  time), the same linear read.
- `plan week` over a calendar holding an event that repeats every second
  (FREQ=SECONDLY: 20 s and 600 MB before it was one busy span) and 20 tasks:
  the seconds the plan takes, which must be well under one.
- A first sync of 500 new tasks to a fresh Radicale task list (a real server,
  started here), with the progress it reports: the seconds, and how many
  progress calls the user saw.

--quick uses 500/1,000/2,000 components and 50 tasks.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from planner.storage import exchange
from planner.storage.db import Store


def _flat(n: int) -> str:
    body = "".join(
        f"BEGIN:VTODO\r\nUID:t{i}@bench\r\nSUMMARY:task {i}\r\nDUE;VALUE=DATE:20261210\r\nEND:VTODO\r\n"
        for i in range(n)
    )
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\n{body}END:VCALENDAR\r\n"


def _nested(n: int) -> str:
    inner = "".join(f"BEGIN:VTODO\r\nUID:n{i}\r\nSUMMARY:nested {i}\r\n" for i in range(n)) + "END:VTODO\r\n" * n
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\n{inner}END:VCALENDAR\r\n"


def _events(n: int) -> str:
    body = "".join(
        f"BEGIN:VEVENT\r\nUID:e{i}@bench\r\nSUMMARY:meeting {i}\r\nDTSTAMP:20261130T100000Z\r\n"
        f"DTSTART:2026{1 + i % 12:02d}{1 + i % 28:02d}T{8 + i % 9:02d}0000\r\nDURATION:PT1H\r\nEND:VEVENT\r\n"
        for i in range(n)
    )
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\n{body}END:VCALENDAR\r\n"


def imports(quick: bool) -> list[dict]:
    """Seconds and microseconds per component to import flat and nested calendars of growing size."""
    rows = []
    for n in (500, 1_000, 2_000) if quick else (5_000, 10_000, 20_000):
        for shape, text in (("flat", _flat(n)), ("nested", _nested(n)), ("events", _events(n))):
            with tempfile.TemporaryDirectory() as d:
                store = Store(Path(d) / "p.db")
                t0 = time.perf_counter()
                result = exchange.import_text(store, text, "ics")
                seconds = time.perf_counter() - t0
                store.close()
            rows.append(
                {
                    "what": f".ics import, {shape}",
                    "n": n,
                    "s": seconds,
                    "us": seconds / n * 1e6,
                    "added": result["added"] or result.get("events", {}).get("added", 0),
                    "problems": len(result["problems"]),
                }
            )
    return rows


SECONDLY = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\nBEGIN:VEVENT\r\nUID:ticker@bench\r\n"
    "SUMMARY:ticker\r\nDTSTAMP:20261130T100000Z\r\nDTSTART:20200101T000000\r\nDTEND:20200101T000001\r\n"
    "RRULE:FREQ=SECONDLY;INTERVAL=7\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:lunch@bench\r\nSUMMARY:lunch\r\n"
    "DTSTAMP:20261130T100000Z\r\nDTSTART:20261101T120000\r\nDTEND:20261101T130000\r\nRRULE:FREQ=DAILY\r\n"
    "END:VEVENT\r\nEND:VCALENDAR\r\n"
)


def dense_plan() -> dict:
    """`plan week` over a calendar with a FREQ=SECONDLY event (and a daily one) and 20 tasks: seconds, blocks."""
    import datetime as dt

    from planner.tools import ToolContext
    from planner.tools.plan_tools import horizon_of, make_plan

    today = dt.date(2026, 12, 1)
    with tempfile.TemporaryDirectory() as d:
        store = Store(Path(d) / "p.db")
        exchange.import_text(store, SECONDLY, "ics")
        rows = [{"title": f"task {i}", "due_date": "2026-12-04", "estimate_minutes": 30} for i in range(20)]
        exchange.import_text(store, __import__("json").dumps(rows), "json")
        ctx = ToolContext(store=store, today=lambda: today, plan_from=dt.datetime.combine(today, dt.time(8)))
        t0 = time.perf_counter()
        plan = make_plan(ctx, horizon_of(ctx, "week"))
        seconds = time.perf_counter() - t0
        store.close()
    return {"s": seconds, "blocks": len(plan.plan.blocks)}


def first_sync(quick: bool) -> dict:
    """A first sync of new tasks to an empty Radicale list: seconds and progress calls."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from phone import PASSWORD, USER, new_list, start_radicale

    from planner.sync.runner import sync

    n = 50 if quick else 500
    with tempfile.TemporaryDirectory() as d:
        server, base = start_radicale(Path(d))
        try:
            url, phone = new_list(base)
            store = Store(Path(d) / "p.db")
            with store.write() as conn:
                conn.executemany(
                    "INSERT INTO tasks (title, uid) VALUES (?, ?)", [(f"task {i}", f"u{i}") for i in range(n)]
                )
            seen = []
            t0 = time.perf_counter()
            report = sync(store, url, USER, PASSWORD, progress=lambda done, total: seen.append(done))
            seconds = time.perf_counter() - t0
            store.close()
            there = len(phone.todos(include_completed=True))
        finally:
            server.terminate()
            server.wait(5)
    return {"n": n, "s": seconds, "sent": report.sent, "there": there, "progress": len(seen)}


def table(quick: bool) -> None:
    """Print both tables."""
    rows = imports(quick)
    print(f"{'import':<22} {'components':>10} {'seconds':>8} {'us/component':>13} {'added':>7} {'reported':>9}")
    for r in rows:
        print(f"{r['what']:<22} {r['n']:>10,} {r['s']:>8.2f} {r['us']:>13.0f} {r['added']:>7,} {r['problems']:>9}")
    for shape in ("flat", "events"):
        per = [r["us"] for r in rows if r["what"].endswith(shape)]
        print(f"linear: the largest {shape} file costs {per[-1] / per[0]:.2f}x per component what the smallest does")
    print()
    p = dense_plan()
    print(f"{'plan week, a FREQ=SECONDLY event':<36} {'seconds':>8} {'blocks':>7}")
    print(f"{'(and a daily one, 20 tasks)':<36} {p['s']:>8.3f} {p['blocks']:>7}")
    print()
    s = first_sync(quick)
    print(f"{'first sync to Radicale':<28} {'tasks':>6} {'seconds':>8} {'sent':>6} {'on server':>10} {'progress':>9}")
    print(
        f"{'new tasks, empty list':<28} {s['n']:>6} {s['s']:>8.1f} {s['sent']:>6} {s['there']:>10} {s['progress']:>9}"
    )
