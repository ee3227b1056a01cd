"""Two-way sync of the tasks with CalDAV task lists (VTODO), e.g. on Radicale, Nextcloud or Fastmail.

    python agent.py sync [--yes] [--create]   (and /sync)   PLANNER_CALDAV_URL (+ PLANNER_CALDAV_LISTS)

One sync lists each collection's to-dos and compares every task with what
both sides agreed on last time (storage/syncstate.py):

    here       there            what happens
    new        -                sent (the first sync merges: same uid, else same title and due date)
    -          new              added here
    changed    changed          merged by field: a field changed on one side takes that side's value;
                                a field changed on both sides keeps the newer (our change log against
                                LAST-MODIFIED) and the other value goes into the change log (/undo)
    deleted    unchanged        deleted there       } asked first when more than 3, or when the listing
    unchanged  gone             deleted here        } looks like a glitch (empty, far smaller, replaced)
    deleted/gone  changed       the edit wins: the task comes back where it was deleted

A to-do written back starts from the server's copy (ical_write.to_vtodo), so what
other apps wrote survives. Everything one sync changes here is one /undo;
undoing it forgets what that sync received, so the next sync takes it again
instead of deleting it on the phone. Each item is written on the server
before it is recorded here, one at a time, so a sync killed halfway is
finished by the next one. A to-do that cannot be read, or that the server
refuses, is one line in the report and is tried again next time; nothing
else stops. Two syncs of one database never run at once.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from planner.policy import Door, Effect, decide, settle
from planner.storage import ical, syncstate
from planner.storage.db import DatabaseError, Store
from planner.storage.exchange import all_tasks, check_row
from planner.storage.fields import TaskError
from planner.storage.tasks import by_uid, insert, new_turn, record, restore, set_tags, snapshot
from planner.sync.dav import Dav, DavError, Resource
from planner.sync.remote import (
    SYNCED,
    TAKEN,
    Remote,
    as_export,
    as_task,
    fingerprint,
    raw_uid,
    read_remote,
    synced_fields,
    to_ics,
)
from planner.tools import ToolContext, dispatch

log = logging.getLogger("planner")

Progress = Callable[[int, int], None]


class SyncError(Exception):
    """The sync could not run (server unreachable, refused, not a task list); nothing was lost."""

    def __init__(self, message: str, missing: bool = False):
        super().__init__(message)
        self.missing = missing  # the task list is not there: `sync --create` makes it


@dataclass
class Report:
    """What one sync did, counted by direction."""

    sent: int = 0
    received: int = 0
    deleted_here: int = 0
    deleted_there: int = 0
    merged: list[str] = field(default_factory=list)  # tasks changed on both sides, and which fields met
    conflicts: list[str] = field(default_factory=list)  # fields changed on both sides: whose value was kept
    kept: list[str] = field(default_factory=list)  # deletions not made (no yes): why, once
    problems: list[str] = field(default_factory=list)  # to-dos skipped this time, one line each
    calendars: list[str] = field(default_factory=list)  # the busy time read, and the plan published

    def line(self) -> str:
        """The report in one line for the user."""
        text = (
            f"sent {self.sent}, received {self.received}, deleted {self.deleted_there} there "
            f"and {self.deleted_here} here"
        )
        if self.merged:
            text += f"; merged {len(self.merged)} changed on both sides ({'; '.join(self.merged)})"
        if self.conflicts:
            text += f"; {len(self.conflicts)} changed on both sides, the newer kept ({'; '.join(self.conflicts)})"
        return text


class Sync:
    """One sync run between a Store and one CalDAV task list (collection)."""

    def __init__(
        self,
        store: Store,
        dav: Dav,
        *,
        list_name: str | None = None,
        today: Callable[[], dt.date] = dt.date.today,
        door: Door | None = None,
        progress: Progress | None = None,
        turn: str | None = None,
        others: set[str] | None = None,
    ):
        self.store, self.dav = store, dav
        self.collection = dav.url
        self.list_name = list_name  # tasks on this list live in this collection (None: the default one)
        self.others = others or set()  # lists that live in other collections
        self.turn = turn or new_turn()  # everything this sync changes here is one /undo
        self.ctx = ToolContext(store=store, today=today, turn=self.turn, yes=True)  # the roll-forward of a repeat
        self.door = door or Door("sync", how="run `sync --yes` to allow it")
        self.progress = progress
        self.report = Report()

    # -- the run

    def run(self) -> Report:
        """Sync both ways once; returns what it did."""
        info = self.dav.info()
        if not info.calendar or (info.components and "VTODO" not in info.components):
            raise SyncError(f"{self.collection} is not a task list (a calendar collection for to-dos); check the URL")
        conn = self.store.conn()
        if syncstate.meta(conn, f"url:{self.collection}") is None and self.list_name is None:
            legacy = syncstate.meta(conn, "url")
            if legacy is not None and legacy != self.collection:
                with self.store.write() as w:  # another list at this address: start over, merging by uid and title
                    syncstate.reset(w, "")
        state = (
            {**syncstate.items(conn, ""), **syncstate.items(conn, self.collection)}
            if self.list_name is None
            else syncstate.items(conn, self.collection)
        )
        replaced = False
        token = syncstate.meta(conn, f"token:{self.collection}")
        if state and token and self.dav.token_valid(token) is False:
            replaced = True
        remote, unreadable = self._listing()
        local = self._local()
        self._merge_twins(local, remote, state)
        uids = sorted(set(local) | set(remote) | set(state))
        gone_here, gone_there = self._deletions(local, remote, state, unreadable)
        allowed = self._allowed(gone_here, gone_there, local, remote, state, replaced, len(unreadable))
        for n, uid in enumerate(uids, 1):
            if self.progress:
                self.progress(n, len(uids))
            last = state.get(uid)
            if last is not None and last["href"] in unreadable:
                continue  # could not be read this time: left as it is, tried again next sync
            try:
                self._one(uid, local.get(uid), remote.get(uid), last, allowed)
            except DatabaseError:  # the file itself (busy, full, read-only): one line from the caller
                raise
            except DavError as e:
                self.report.problems.append(f"{self._name(uid, local, remote)}: {e}")
            except (TaskError, ValueError, ical.ReadError) as e:
                self.report.problems.append(f"{self._name(uid, local, remote)}: {e}")
        self._send_new(set(local) | set(remote))
        with self.store.write() as w:
            syncstate.set_meta(w, f"url:{self.collection}", self.collection)
            if self.list_name is None:
                syncstate.set_meta(w, "url", self.collection)
            syncstate.set_meta(w, f"token:{self.collection}", self.dav.info().sync_token if info.sync_token else None)
        return self.report

    def _name(self, uid: str, local: dict, remote: dict) -> str:
        task = local.get(uid) or (remote[uid].row if uid in remote else {})
        return f'"{task.get("title")}"' if task.get("title") else uid

    def _listing(self) -> tuple[dict[str, Remote], set[str]]:
        """The server's to-dos by uid, and the hrefs of those that could not be read (each reported)."""
        out: dict[str, Remote] = {}
        unreadable: set[str] = set()
        for resource in self.dav.objects("VTODO"):
            try:
                item = read_remote(resource)
            except ical.ReadError as e:
                unreadable.add(resource.href)
                uid = raw_uid(resource.data)
                self.report.problems.append(f"to-do {uid or resource.href} not read: {e}")
                continue
            out[item.uid] = item
        return out, unreadable

    def _local(self) -> dict[str, dict[str, Any]]:
        """The tasks that live in this collection, by uid, each with its id."""
        ids = syncstate.ids_by_uid(self.store.conn())
        mine = {}
        for task in all_tasks(self.store):
            listed = task.get("list")
            if self.list_name is not None and (listed or "").lower() != self.list_name.lower():
                continue
            if self.list_name is None and listed and listed.lower() in self.others:
                continue
            mine[task["uid"]] = task | {"id": ids[task["uid"]]}
        return mine

    def _merge_twins(self, local: dict, remote: dict, state: dict) -> None:
        """First sync with a full list: a task here and a to-do there with the same title and due date are one."""
        by_title = {(r.row["title"], r.row["due_date"]): uid for uid, r in remote.items() if uid not in local}
        for uid, task in list(local.items()):
            if uid in state or uid in remote:
                continue
            twin = by_title.pop((task["title"], task["due_date"]), None)
            if twin is not None and twin not in local:
                with self.store.write() as conn:
                    syncstate.set_uid(conn, uid, twin)
                local[twin] = {**task, "uid": twin}
                del local[uid]

    # -- deletions: counted first, asked about once

    def _deletions(self, local: dict, remote: dict, state: dict, unreadable: set[str]) -> tuple[list, list]:
        here, there = [], []
        for uid, last in state.items():
            if last["href"] in unreadable:
                continue
            mine, theirs = local.get(uid), remote.get(uid)
            if mine is not None and theirs is None and not self._changed_here(mine, last):
                here.append(uid)
            elif mine is None and theirs is not None and theirs.resource.etag == last["etag"]:
                if by_uid(self.store.conn(), uid) is None:  # not moved to another list: really deleted here
                    there.append(uid)
        return here, there

    def _allowed(
        self, here: list, there: list, local: dict, remote: dict, state: dict, replaced: bool, unreadable: int
    ) -> set[str]:
        """The deletions the user allows: all of them, unless they are many or look like a glitch."""
        glitch = ""
        if here and replaced:
            glitch = "the task list on the server was replaced (it no longer knows the last sync)"
        elif here and not remote and not unreadable:
            glitch = "the server listed no to-dos at all"
        elif len(here) >= 2 and len(here) * 2 >= len(state):
            glitch = f"the server listed only {len(remote)} of the {len(state)} to-dos synced last time"
        lines = [f'here: "{local[u]["title"]}" (gone from the server)' for u in here]
        lines += [f'on the server: "{remote[u].row["title"]}" (deleted here)' for u in there]
        effect = Effect(deletes=tuple(lines), glitch=glitch, by_user=True)
        ok, reason = settle(decide(effect, self.door), self.door)
        if ok:
            return set(here) | set(there)
        self.report.kept.append(f"kept {len(lines)} tasks the sync would delete ({reason})")
        return set()

    # -- one task

    def _changed_here(self, mine: dict[str, Any], last: dict[str, Any]) -> bool:
        if last.get("fields") is not None:
            return synced_fields(mine) != last["fields"]
        return fingerprint(mine) != last["synced"]

    def _one(self, uid: str, mine: dict | None, theirs: Remote | None, last: dict | None, allowed: set[str]) -> None:
        if mine is not None and theirs is None:
            if last is not None and not self._changed_here(mine, last):
                if uid in allowed:
                    self._delete_here(mine, last)
            else:
                self._send(mine, None)  # new here, or changed here after it was deleted there
            return
        if mine is None and theirs is not None:
            if last is not None and theirs.resource.etag == last["etag"]:
                if uid in allowed:
                    self.dav.delete(theirs.resource.href, theirs.resource.etag)  # deleted here, unchanged there
                    with self.store.write() as conn:
                        syncstate.forget(conn, uid)
                    self.report.deleted_there += 1
                elif by_uid(self.store.conn(), uid) is not None:  # moved to a list with its own collection
                    self.dav.delete(theirs.resource.href, theirs.resource.etag)
                    with self.store.write() as conn:
                        syncstate.forget(conn, uid)
            elif by_uid(self.store.conn(), uid) is None and self._take(None, theirs):
                self.report.received += 1  # new there, or edited there after it was deleted here
            return
        if mine is None or theirs is None:
            with self.store.write() as conn:  # gone on both sides
                syncstate.forget(conn, uid)
            return
        self._meet(mine, theirs, last)

    def _meet(self, mine: dict[str, Any], theirs: Remote, last: dict | None) -> None:
        """The task is on both sides: merge by field against what both agreed on last time."""
        ours, other = synced_fields(mine), theirs.fields
        if ours == other:  # the same either way: only the record is new
            self._record(mine, theirs.resource, theirs.resource.data)
            return
        base = last.get("fields") if last else None
        if base is None:  # a first meeting, or a record from before fields were kept: as a whole
            mine_changed = last is None or fingerprint(mine) != last["synced"]
            theirs_changed = last is None or theirs.resource.etag != last["etag"]
            base = other if mine_changed and not theirs_changed else ours if theirs_changed and not mine_changed else {}
        merged, met, lost_here, lost_there = {}, [], [], []
        mine_at = syncstate.changed_at(self.store.conn(), mine["id"]) or dt.datetime.min.replace(tzinfo=dt.UTC)
        for k in SYNCED:
            a, b, was = ours.get(k), other.get(k), base.get(k, ours.get(k) if base else None)
            if a == b or b == was:
                merged[k] = a
            elif a == was:
                merged[k] = b
            else:  # changed on both sides, differently: the newer side's value
                newer_theirs = theirs.modified > mine_at
                merged[k] = b if newer_theirs else a
                (lost_here if newer_theirs else lost_there).append(k)
                met.append(k)
        if met:
            who = "theirs" if lost_here and not lost_there else "ours"
            self.report.conflicts.append(f'"{mine["title"]}": {who} ({", ".join(met)})')
        elif merged != ours and merged != other:
            changed_here = [k for k in SYNCED if merged[k] != ours[k]]
            changed_there = [k for k in SYNCED if merged[k] != other[k]]
            self.report.merged.append(
                f'"{mine["title"]}": {", ".join(changed_there)} from here, {", ".join(changed_here)} from there'
            )
        if mine["status"] == "open" and merged["status"] == "done" and mine.get("repeat"):
            self._roll_forward(mine, theirs)  # completed there, and it repeats
            return
        if merged != ours:
            if not self._take(mine, theirs, merged):
                return
            self.report.received += 1
        if lost_there:  # their values go into the change log, so /undo brings them back
            with self.store.write() as conn:
                before = snapshot(conn, mine["id"])
                if before is not None:
                    record(conn, self.turn, "sync", mine["id"], as_task(before, {k: other[k] for k in lost_there}))
        if merged != other:
            now_mine = self._reload(mine["uid"])
            if now_mine is not None:
                self._send(now_mine, theirs)
        else:
            self._record(self._reload(mine["uid"]) or mine, theirs.resource, theirs.resource.data)

    # -- writing here

    def _take(self, mine: dict | None, theirs: Remote, merged: dict[str, Any] | None = None) -> bool:
        """Apply the server's version (or a merge) here, logged in this sync's turn; False if it was not applied."""
        row = dict(theirs.row)
        if merged is not None:
            row.update({k: v for k, v in merged.items()})
        if self.list_name is not None:
            row["list"] = self.list_name
        elif mine is not None:
            row["list"] = mine.get("list")
        row["ical"] = theirs.resource.data
        fields, tags = check_row(row)
        if fields["status"] == "open":
            fields.pop("completed_at", None)
        with self.store.write() as conn:
            if mine is None:
                insert(conn, self.turn, fields, tags, "sync")
            else:
                before = snapshot(conn, mine["id"])
                if before is None or synced_fields(as_export(before)) != synced_fields(mine):
                    # Changed here while this sync ran: that edit is newer than what we read; next sync meets it.
                    self.report.problems.append(f'"{mine["title"]}" changed here during the sync; synced next time')
                    return False
                changes = {**before, **{k: v for k, v in fields.items() if k != "uid"}}
                for key in TAKEN:  # a field cleared there is cleared here (check_row leaves out what is empty)
                    changes[key] = fields.get(key)
                if changes["remind_at"] != before.get("remind_at"):
                    changes["reminded_at"] = None  # a new reminder time shows again
                restore(conn, mine["id"], changes)
                set_tags(conn, mine["id"], tags)
                record(conn, self.turn, "sync", mine["id"], before)
            now_task = self._reload(fields["uid"], conn)
            if now_task is not None:
                self._record(now_task, theirs.resource, theirs.resource.data, conn)
        return True

    def _roll_forward(self, mine: dict[str, Any], theirs: Remote) -> None:
        """Completed elsewhere and it repeats: complete it here, so it rolls forward exactly once, and send
        the completed one without its rule (no app rolls it again) and the next one as a new to-do."""
        out, ok = dispatch(self.ctx, "complete_task", {"id": mine["id"]})
        if not ok:
            raise TaskError(out["error"])
        done = self._reload(mine["uid"])
        if done is not None:
            self._send(done, theirs)
        self.report.received += 1

    def _delete_here(self, mine: dict[str, Any], last: dict[str, Any]) -> None:
        with self.store.write() as conn:
            before = snapshot(conn, mine["id"])
            if before is None:
                return
            if self._changed_here(as_export(before), last):  # edited here since the listing: the edit wins
                self.report.problems.append(f'"{mine["title"]}" changed here during the sync; kept and sent next time')
                return
            restore(conn, mine["id"], None)
            record(conn, self.turn, "sync", mine["id"], before)
            syncstate.forget(conn, mine["uid"])
        self.report.deleted_here += 1

    def _reload(self, uid: str, conn: Any = None) -> dict[str, Any] | None:
        task = by_uid(conn or self.store.conn(), uid)
        return as_export(task) if task is not None else None

    def _record(self, task: dict[str, Any], resource: Resource, data: str, conn: Any = None, etag: Any = ...) -> None:
        def write(c: Any) -> None:
            syncstate.remember(
                c,
                self.collection,
                task["uid"],
                resource.href,
                resource.etag if etag is ... else etag,
                synced_fields(task),
                fingerprint(task),
            )
            syncstate.set_copy(c, task["uid"], data)

        if conn is not None:
            write(conn)
        else:
            with self.store.write() as c:
                write(c)

    # -- writing there

    def _send(self, task: dict[str, Any], theirs: Remote | None) -> None:
        changed = syncstate.changed_at(self.store.conn(), task["id"]) if task.get("id") else None
        data = to_ics(
            task,
            changed,
            base=theirs.todo if theirs is not None else None,
            copy=theirs.resource.data if theirs is not None else None,
        )
        if theirs is not None:
            href = theirs.resource.href
            etag = self.dav.put(href, data, etag=theirs.resource.etag)  # If-Match: never over a change made since
        else:
            href = self.dav.href_for(ical.uid_of(task["uid"]))
            etag = self.dav.put(href, data, create=True)
        self._record(task, Resource(href, etag, data), data, etag=etag)
        self.report.sent += 1

    def _send_new(self, seen: set[str]) -> None:
        """Tasks this sync made here (the next date of a repeat completed there) go across in the same run."""
        for uid, task in self._local().items():
            if uid not in seen and task.get("uid"):
                try:
                    self._send(task, None)
                except DavError as e:
                    self.report.problems.append(f'"{task["title"]}": {e}')
