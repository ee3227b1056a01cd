"""A real CalDAV server for the sync tests (Radicale on 127.0.0.1) and a second device on it (the `caldav`
library, writing to-dos the way todoman, tasks.org and Apple Reminders do).

Fixtures are in conftest.py (`radicale`, `tasklist`); the helpers here are what a phone does.
"""

from __future__ import annotations

import datetime as dt
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import caldav
import icalendar

USER, PASSWORD = "ana", "s3cret"


def free_port() -> int:
    """A port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_radicale(home: Path) -> tuple[subprocess.Popen, str]:
    """Radicale with user ana in `home`; returns the process and its base URL, once it answers."""
    (home / "users").write_text(f"{USER}:{PASSWORD}\n")
    port = free_port()
    (home / "config").write_text(
        f"[server]\nhosts = 127.0.0.1:{port}\n[auth]\ntype = htpasswd\nhtpasswd_filename = {home / 'users'}\n"
        # delay 0: Radicale waits a second after each refused login, and every client's first request is one
        f"htpasswd_encryption = plain\ndelay = 0\n[storage]\nfilesystem_folder = {home / 'collections'}\n"
        "[logging]\nlevel = error\n"
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "radicale", "--config", str(home / "config")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while True:  # a server that does not come up fails the tests that need it, loudly
        if server.poll() is not None:
            raise RuntimeError(f"Radicale exited at start: {server.stderr.read().decode()[-500:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return server, f"http://127.0.0.1:{port}"
        except OSError:
            if time.monotonic() > deadline:
                server.kill()
                raise RuntimeError("Radicale did not listen within 30 s") from None
            time.sleep(0.05)


def new_list(base: str, components: tuple[str, ...] = ("VTODO",)) -> tuple[str, caldav.Calendar]:
    """A fresh task list: (its URL, the phone's view of it)."""
    phone = caldav.DAVClient(url=f"{base}/{USER}/", username=USER, password=PASSWORD)
    name = uuid.uuid4().hex[:12]
    cal = phone.principal().make_calendar(name="Tasks", cal_id=name, supported_calendar_component_set=list(components))
    return str(cal.url), cal


def todos(cal: caldav.Calendar) -> dict[str, icalendar.Todo]:
    """The phone's to-dos by SUMMARY."""
    out = {}
    for obj in cal.todos(include_completed=True):
        todo = next(c for c in icalendar.Calendar.from_ical(obj.data).walk() if c.name == "VTODO")
        out[str(todo["summary"])] = todo
    return out


def raw(cal: caldav.Calendar, title: str) -> str:
    """The text of the phone's object holding this to-do, unfolded, one content line per line ("\n")."""
    for obj in cal.todos(include_completed=True):
        text = obj.data.replace("\r\n", "\n").replace("\n ", "")
        if f"SUMMARY:{title}\n" in text:
            return text
    raise AssertionError(f"no to-do {title!r} on the phone")


LONG_AGO = dt.datetime(2001, 1, 1, tzinfo=dt.UTC)  # older than any change the planner made
FAR_AHEAD = dt.datetime(2099, 1, 1, tzinfo=dt.UTC)  # newer than any


def edit(
    cal: caldav.Calendar, title: str, modified: dt.datetime = FAR_AHEAD, uid: str | None = None, **changes: object
) -> None:
    """Change one to-do on the phone (by title, or by UID when two share one), as a phone app does:
    LAST-MODIFIED set, by default newer than any change the planner made."""
    for obj in cal.todos(include_completed=True):
        ics = icalendar.Calendar.from_ical(obj.data)
        todo = next(c for c in ics.walk() if c.name == "VTODO")
        if (str(todo["uid"]) != uid) if uid else (str(todo["summary"]) != title):
            continue
        for key, value in changes.items():
            todo.pop(key, None)
            if value is not None:
                todo.add(key, value)
        todo.pop("last-modified", None)
        todo.add("last-modified", modified)
        obj.data = ics.to_ical().decode()
        obj.save()
        return
    raise AssertionError(f"no to-do {title!r} on the phone")


def add(cal: caldav.Calendar, summary: str, due: dt.date | None = None, uid: str | None = None, **props: object) -> str:
    """Add a to-do on the phone; returns its UID."""
    todo = icalendar.Todo()
    uid = uid or f"{uuid.uuid4()}@phone.example"
    todo.add("uid", uid)
    todo.add("dtstamp", dt.datetime.now(dt.UTC))
    todo.add("summary", summary)
    if due:
        todo.add("due", due)
    for key, value in props.items():
        todo.add(key.replace("_", "-"), value)
    save_raw(cal, todo)
    return uid


def save_raw(cal: caldav.Calendar, todo: icalendar.Todo) -> None:
    """Store a to-do exactly as built."""
    ics = icalendar.Calendar()
    ics.add("prodid", "-//phone//EN")
    ics.add("version", "2.0")
    ics.add_component(todo)
    cal.save_todo(ics.to_ical().decode())


def put_text(cal: caldav.Calendar, name: str, text: str) -> None:
    """Store an object's text as another app wrote it, byte for byte (odd ones too)."""
    cal.client.put(str(cal.url) + name, text, {"Content-Type": "text/calendar; charset=utf-8"})
