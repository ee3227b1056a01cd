"""How import and the sync scale: `python -m bench files`.

- .ics import, flat and nested: the time per component for 5,000, 10,000 and
  20,000 to-dos must stay about the same (linear), and nested components are
  reported, never walked (the quadratic case: 20,000 nested took 47 s before).
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


def imports(quick: bool) -> list[dict]:
    """Seconds and microseconds per component to import flat and nested calendars of growing size."""
    rows = []
    for n in (500, 1_000, 2_000) if quick else (5_000, 10_000, 20_000):
        for shape, text in (("flat", _flat(n)), ("nested", _nested(n))):
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
                    "added": result["added"],
                    "problems": len(result["problems"]),
                }
            )
    return rows


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
    flat = [r["us"] for r in rows if r["what"].endswith("flat")]
    print(f"linear: the largest flat file costs {flat[-1] / flat[0]:.2f}x per component what the smallest does")
    print()
    s = first_sync(quick)
    print(f"{'first sync to Radicale':<28} {'tasks':>6} {'seconds':>8} {'sent':>6} {'on server':>10} {'progress':>9}")
    print(
        f"{'new tasks, empty list':<28} {s['n']:>6} {s['s']:>8.1f} {s['sent']:>6} {s['there']:>10} {s['progress']:>9}"
    )
