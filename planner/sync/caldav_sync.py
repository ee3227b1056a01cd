"""Two-way sync of the tasks with one CalDAV task list (VTODO), e.g. on Radicale, Nextcloud or Fastmail.

    python agent.py sync        (and /sync)    PLANNER_CALDAV_URL, _USER, _PASSWORD from the environment

One sync lists the server's to-dos (href, ETag, data) and compares each with
what was synced last time (`sync_items`: href, ETag, a hash of the fields):

    here          there              what happens
    new           -                  sent (the first sync merges: same uid, else same title and due date)
    -             new                added here
    changed       same ETag          sent
    same          new ETag           taken here
    changed       new ETag           the newer change wins (our change log's time against LAST-MODIFIED);
                                     the other is kept in the change log, so /undo brings it back
    deleted       same ETag          deleted there
    same          gone               deleted here
    deleted/gone  edited/changed     the edit wins: the task comes back where it was deleted

Everything this sync changes here is one turn in the change log: one /undo
reverts it (the next sync then sends what /undo put back). A to-do completed
elsewhere that repeats rolls forward here once, through complete_task, and a
completed instance is sent without its repeat rule, so no app rolls it again.
Each item's server write comes before its local record, in its own
transaction: a sync killed halfway leaves tasks the next sync recognises by
uid, so nothing is lost or duplicated.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import icalendar

from planner.storage import ical
from planner.storage.db import DatabaseError, Store
from planner.storage.exchange import all_tasks, check_row
from planner.storage.tasks import (
    TaskError,
    insert,
    new_turn,
    record,
    restore,
    set_tags,
    snapshot,
)
from planner.tools import ToolContext, dispatch

log = logging.getLogger("planner")

SYNCED = ("title", "status", "due_date", "due_time", "priority", "tags", "notes", "repeat", "remind_at")


class SyncError(Exception):
    """The sync could not run (server unreachable, refused, not a task list); nothing was lost."""


@dataclass
class Report:
    """What one sync did, counted by direction."""

    sent: int = 0
    received: int = 0
    deleted_here: int = 0
    deleted_there: int = 0
    conflicts: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        """The report in one line for the user."""
        text = (
            f"sent {self.sent}, received {self.received}, deleted {self.deleted_there} there "
            f"and {self.deleted_here} here"
        )
        if self.conflicts:
            text += f"; {len(self.conflicts)} changed on both sides, the newer kept ({'; '.join(self.conflicts)})"
        return text


def fingerprint(task: dict[str, Any]) -> str:
    """A hash of the fields a sync carries, as it carries them (a completed instance has no repeat)."""
    view = {k: task.get(k) for k in SYNCED}
    view["tags"] = sorted(view["tags"] or [])
    if view["status"] == "done":
        view["repeat"] = None
    return hashlib.sha256(json.dumps(view, sort_keys=True).encode()).hexdigest()[:24]


def to_ics(task: dict[str, Any], changed_at: dt.datetime | None, uid: str | None = None) -> str:
    """One task as a calendar object resource: a VCALENDAR with its VTODO (under `uid`, the UID it has there)."""
    cal = icalendar.Calendar()
    cal.add("prodid", "-//planner//tasks//EN")
    cal.add("version", "2.0")
    stamp = dt.datetime.now(dt.UTC)
    todo = ical.to_vtodo(task, stamp, repeat_when_done=False)
    todo.add("last-modified", changed_at or stamp)
    if uid:
        todo["uid"] = icalendar.vText(uid)  # a UID never changes at its href
    cal.add_component(todo)
    return cal.to_ical().decode()


def connect(url: str, user: str | None, password: str | None, timeout: float = 15.0) -> Any:
    """The task list at `url`, checked to answer; a SyncError in words when it does not."""
    import caldav  # loads only for a sync
    from caldav.lib import error

    try:
        client = caldav.DAVClient(url=url, username=user, password=password, timeout=timeout)
        tasks = caldav.Calendar(client=client, url=url)
        tasks.todos(include_completed=True)  # one REPORT: reachable, allowed, a collection
        return tasks
    except error.AuthorizationError:
        raise SyncError(
            f"the CalDAV server at {safe_url(url)} refused the user name or password; check PLANNER_CALDAV_USER "
            "and PLANNER_CALDAV_PASSWORD; nothing was changed"
        ) from None
    except error.DAVError as e:
        raise SyncError(
            f"the CalDAV server at {safe_url(url)} did not answer as a task list ({type(e).__name__}); "
            "check PLANNER_CALDAV_URL; nothing was changed"
        ) from None
    except Exception as e:  # connection refused, DNS, TLS, a timeout
        raise SyncError(
            f"cannot reach the CalDAV server at {safe_url(url)} ({type(e).__name__}); nothing was changed"
        ) from None


def _remote(tasks: Any) -> dict[str, dict[str, Any]]:
    """The server's to-dos by local uid: {"href", "etag", "row", "modified"}."""
    out: dict[str, dict[str, Any]] = {}
    for obj in tasks.todos(include_completed=True):
        cal = icalendar.Calendar.from_ical(obj.data)
        todo = next((c for c in cal.walk() if c.name == "VTODO"), None)
        if todo is None:
            continue
        row = ical.to_row(todo)
        modified = todo.get("last-modified") or todo.get("dtstamp")
        when = modified.dt if modified is not None else None
        if isinstance(when, dt.datetime) and when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        etag = getattr(obj, "etag", None)
        out[row["uid"]] = {
            "href": str(obj.url), "etag": etag, "row": row, "modified": when, "obj": obj, "uid": str(todo.get("uid")),
        }  # fmt: skip
    return out


class Sync:
    """One sync run between a Store and a CalDAV task list."""

    def __init__(self, store: Store, tasks: Any, url: str, today: Callable[[], dt.date] = dt.date.today):
        self.store, self.tasks, self.url = store, tasks, url
        self.turn = new_turn()  # everything this sync changes here is one /undo
        self.ctx = ToolContext(store=store, today=today, turn=self.turn)
        self.report = Report()

    # -- local side

    def _state(self) -> dict[str, dict[str, Any]]:
        conn = self.store.conn()
        meta = conn.execute("SELECT value FROM sync_meta WHERE key = 'url'").fetchone()
        if meta is None or meta[0] != self.url:  # another list: start over, merging by uid and title
            with self.store.write() as w:
                w.execute("DELETE FROM sync_items")
                w.execute("INSERT OR REPLACE INTO sync_meta (key, value) VALUES ('url', ?)", (self.url,))
        return {r["uid"]: dict(r) for r in conn.execute("SELECT uid, href, etag, synced FROM sync_items")}

    def _remember(self, conn: Any, uid: str, href: str, etag: str | None, task: dict[str, Any]) -> None:
        conn.execute(
            "INSERT OR REPLACE INTO sync_items (uid, href, etag, synced) VALUES (?, ?, ?, ?)",
            (uid, href, etag, fingerprint(task)),
        )

    def _changed_at(self, task: dict[str, Any]) -> dt.datetime | None:
        row = (
            self.store.conn()
            .execute("SELECT MAX(created_at) FROM task_events WHERE task_id = ?", (task["id"],))
            .fetchone()
        )
        return dt.datetime.fromisoformat(row[0]).replace(tzinfo=dt.UTC) if row and row[0] else None

    def _take(self, task: dict[str, Any] | None, there: dict[str, Any]) -> dict[str, Any] | None:
        """Apply the server's version here (a new task when `task` is None); logged in this sync's turn."""
        row = dict(there["row"])
        try:
            fields, tags = check_row(row)
        except (TaskError, ValueError, TypeError) as e:
            self.report.problems.append(f"{row.get('title') or there['href']}: {e}")
            return None
        if task is not None and task["status"] == "open" and fields["status"] == "done" and task.get("repeat"):
            # Completed elsewhere and it repeats: complete it here, so it rolls forward once.
            out, ok = dispatch(self.ctx, "complete_task", {"id": task["id"]})
            if not ok:
                self.report.problems.append(f"{task['title']}: {out['error']}")
                return None
            mine = self._reload(task["uid"])
            if mine is not None:
                self._send(mine, there)  # the completed one, without its rule: no app rolls it again
            return mine
        with self.store.write() as conn:
            if task is None:
                insert(conn, self.turn, fields, tags, "sync")
            else:
                before = snapshot(conn, task["id"])
                changes = {**(before or {}), **fields}
                changes["recurrence"] = fields.get("recurrence")
                changes["remind_at"] = fields.get("remind_at")
                if changes["remind_at"] != (before or {}).get("remind_at"):
                    changes["reminded_at"] = None  # a new reminder time shows again
                restore(conn, task["id"], {k: v for k, v in changes.items() if k != "tags"})
                set_tags(conn, task["id"], tags)
                record(conn, self.turn, "sync", task["id"], before)
            mine = self._reload(fields["uid"], conn)
            if mine is not None:
                self._remember(conn, mine["uid"], there["href"], there["etag"], mine)
        return mine

    def _reload(self, uid: str, conn: Any = None) -> dict[str, Any] | None:
        conn = conn or self.store.conn()
        row = conn.execute("SELECT id FROM tasks WHERE uid = ?", (uid,)).fetchone()
        if row is None:
            return None
        task = snapshot(conn, row[0]) or {}
        task["repeat"] = task.get("recurrence")
        return task

    def _delete_here(self, task: dict[str, Any]) -> None:
        with self.store.write() as conn:
            before = snapshot(conn, task["id"])
            restore(conn, task["id"], None)
            record(conn, self.turn, "sync", task["id"], before)
            conn.execute("DELETE FROM sync_items WHERE uid = ?", (task["uid"],))
        self.report.deleted_here += 1

    # -- server side

    def _send(self, task: dict[str, Any], there: dict[str, Any] | None) -> None:
        data = to_ics(task, self._changed_at(task), there["uid"] if there else None)
        if there is not None:
            obj = there["obj"]
            obj.data = data
            obj.save(precondition="etag")  # If-Match: a change there since the listing is not overwritten
        else:
            obj = self.tasks.save_todo(data)
        etag = getattr(obj, "etag", None)  # the server's answer to the PUT carries it
        with self.store.write() as conn:
            self._remember(conn, task["uid"], str(obj.url), etag, task)
        self.report.sent += 1

    # -- the run

    def run(self) -> Report:
        """Sync both ways once; returns what it did."""
        state = self._state()
        remote = _remote(self.tasks)
        ids = dict(self.store.conn().execute("SELECT uid, id FROM tasks").fetchall())
        local = {t["uid"]: t | {"id": ids[t["uid"]]} for t in all_tasks(self.store)}
        by_title = {(r["row"]["title"], r["row"]["due_date"]): uid for uid, r in remote.items() if uid not in local}
        for uid, task in list(local.items()):
            if uid in state or uid in remote:
                continue
            twin = by_title.pop((task["title"], task["due_date"]), None)  # first sync: the same task, another uid
            if twin is not None and twin not in local:
                with self.store.write() as conn:
                    conn.execute("UPDATE tasks SET uid = ? WHERE uid = ?", (twin, uid))
                local[twin] = {**task, "uid": twin}
                del local[uid]
        for uid in sorted(set(local) | set(remote) | set(state)):
            try:
                self._one(uid, local.get(uid), remote.get(uid), state.get(uid))
            except DatabaseError:  # the file itself (busy, full, read-only): one line from the caller, not one per task
                raise
            except Exception as e:  # one item the server refused: said, and the rest goes on
                log.exception("sync of %s failed", uid)
                self.report.problems.append(f"{(local.get(uid) or {}).get('title', uid)}: {type(e).__name__}: {e}")
        return self.report

    def _one(self, uid: str, here: dict | None, there: dict | None, last: dict | None) -> None:
        if here is not None and there is None:
            if last is None or fingerprint(here) != last["synced"]:
                self._send(here, None)  # new here, or changed here after it was deleted there
            else:
                self._delete_here(here)
            return
        if here is None and there is not None:
            if last is not None and there["etag"] == last["etag"]:
                there["obj"].delete()  # deleted here, unchanged there
                with self.store.write() as conn:
                    conn.execute("DELETE FROM sync_items WHERE uid = ?", (uid,))
                self.report.deleted_there += 1
            elif self._take(None, there) is not None:
                self.report.received += 1  # new there, or edited there after it was deleted here
            return
        if here is None and there is None:
            with self.store.write() as conn:  # gone on both sides
                conn.execute("DELETE FROM sync_items WHERE uid = ?", (uid,))
            return
        assert here is not None and there is not None
        mine_changed = last is None or fingerprint(here) != last["synced"]
        theirs_changed = last is None or there["etag"] != last["etag"]
        theirs = {**here, **{k: there["row"].get(k) for k in SYNCED}}
        if fingerprint(theirs) == fingerprint(here):  # the same either way: only the record is new
            with self.store.write() as conn:
                self._remember(conn, uid, there["href"], there["etag"], here)
            return
        if mine_changed and not theirs_changed:
            self._send(here, there)
        elif theirs_changed and not mine_changed:
            if self._take(here, there) is not None:
                self.report.received += 1
        else:
            mine_at = self._changed_at(here) or dt.datetime.min.replace(tzinfo=dt.UTC)
            theirs_at = there["modified"] or dt.datetime.min.replace(tzinfo=dt.UTC)
            if theirs_at > mine_at:
                if self._take(here, there) is not None:  # logged: /undo brings ours back
                    self.report.received += 1
                self.report.conflicts.append(f'"{here["title"]}": theirs')
            else:
                with self.store.write() as conn:  # theirs goes into the change log, so /undo can bring it back
                    before = snapshot(conn, here["id"])
                    if before is not None:
                        kept = {**before, **{k: v for k, v in there["row"].items() if k in SYNCED and k != "repeat"}}
                        record(conn, self.turn, "sync", here["id"], kept)
                self._send(here, there)
                self.report.conflicts.append(f'"{here["title"]}": ours')


def sync(store: Store, url: str, user: str | None, password: str | None, **kw: Any) -> Report:
    """Connect and sync once; raises SyncError in words when the server cannot be used."""
    return Sync(store, connect(url, user, password), url, **kw).run()


NO_URL = (
    "no CalDAV task list is set: set PLANNER_CALDAV_URL to its address (and PLANNER_CALDAV_USER, "
    "PLANNER_CALDAV_PASSWORD); see the README, Sync"
)


def sync_config(store: Store, config: Any, today: Callable[[], dt.date] = dt.date.today) -> str:
    """`sync` and /sync: one sync with the list the settings name; the report in lines (a SyncError if it
    could not run)."""
    if not config.caldav_url:
        raise SyncError(NO_URL)
    report = sync(store, config.caldav_url, config.caldav_user, config.caldav_password, today=today)
    lines = [f"synced with {safe_url(config.caldav_url)}: {report.line()}"]
    lines += [f"  not synced: {p}" for p in report.problems]
    return "\n".join(lines)


def safe_url(url: str) -> str:
    """A URL as shown to the user: without a password written into it."""
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else "")))
