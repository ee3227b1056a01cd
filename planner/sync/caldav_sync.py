"""Two-way sync of the tasks with CalDAV task lists (VTODO), e.g. on Radicale, Nextcloud or Fastmail.

    python agent.py sync [--yes] [--create]   (and /sync)   PLANNER_CALDAV_URL (+ PLANNER_CALDAV_LISTS)

One sync lists each collection's to-dos (listing.py: one per UID, and what
the server named without giving) and compares every task with what both
sides agreed on last time (storage/syncstate.py):

    here       there            what happens
    new        -                sent (the first sync merges: same uid, else same title and due date)
    -          new              added here
    changed    changed          merged by field (merge.py)
    deleted    unchanged        deleted there       } asked first when more than 3, or when the listing
    unchanged  gone             deleted here        } looks like a glitch (empty, far smaller, replaced)
    deleted/gone  changed       the edit wins: the task comes back where it was deleted
    any        unknown          nothing: named in the report, looked at again next sync

"Gone" is a fact the server states (listing.proven): a sync-collection report
naming it removed, or a 404/410 on its own href. A to-do only left out of a
listing, or named with an error, is unknown. Identity is the UID: a to-do the
server gave a new UID (same href, or the same fields) is matched and asked
about, never deleted and added again; a repeat completed elsewhere whose next
occurrence came under a new UID (todoman) is that task's next occurrence.

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
from typing import Any

from planner.policy import Door, Effect, Grant, decide, settle
from planner.storage import ical, syncstate
from planner.storage.db import DatabaseError, Store
from planner.storage.exchange import all_tasks
from planner.storage.fields import TaskError
from planner.storage.gate import Change, ChangeSet, Op, version
from planner.storage.tasks import by_uid, new_turn, snapshot
from planner.sync import listing
from planner.sync.dav import Dav, DavError
from planner.sync.merge import merge
from planner.sync.remote import (
    SYNCED,
    Remote,
    as_task,
    fingerprint,
    stamp_of,
    synced_fields,
)
from planner.sync.report import Report, SyncError
from planner.sync.writes import Writes
from planner.tools import ToolContext

log = logging.getLogger("planner")

Progress = Callable[[int, int], None]
NEVER = dt.datetime.min.replace(tzinfo=dt.UTC)


class Sync(Writes):
    """One sync run between a Store and one CalDAV task list (collection); its writes are writes.py's."""

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
        self.grant = Grant()  # the rows the user said yes to in this sync (its deletions here)
        self.glitch = ""  # why the deletions here looked like a fault, when the user allowed them anyway
        self.deleting: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (task, its sync record), deleted together
        self.follow: dict[str, Remote] = {}  # uid of a repeat completed there -> its next one, saved under a new UID

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
        token = syncstate.meta(conn, f"token:{self.collection}")
        changes = self.dav.changes_since(token) if state and token else None
        replaced = changes is not None and changes.valid is False
        seen = listing.read(self.dav, state)
        self.report.problems += seen.problems
        self.report.notes += seen.notes
        remote, unknown = seen.remote, dict(seen.unknown)
        local = self._local()
        self._merge_twins(local, remote, state)
        missing = [u for u in state if u not in remote and u not in unknown]
        if missing and listing.new_odd(seen.odd, syncstate.meta(conn, f"odd:{self.collection}")):
            for uid in missing:  # an object it named but did not give may be this one, moved: no proof now
                unknown[uid] = "a to-do on the server could not be read, and it may be this one"
            missing = []
        skip: set[str] = set()  # to-dos there not taken this time
        new = {u: r for u, r in remote.items() if u not in state and u not in local and by_uid(conn, u) is None}
        missing = self._renames(listing.renamed(state, missing, new), local, remote, state, unknown, skip, missing)
        gone, not_proven = listing.proven(self.dav, state, missing, changes)
        unknown.update(not_proven)
        free = {u: r for u, r in new.items() if u not in skip and u in remote and u not in state}
        for done, nxt in listing.continued(local, remote, state, free).items():
            self.follow[done] = remote[nxt]
            skip.add(nxt)
        self._name_unknown({u: w for u, w in unknown.items() if u not in seen.unknown}, local, remote)
        uids = sorted((set(local) | set(remote) | set(state)) - set(unknown) - skip)
        here, there = self._deletions(local, remote, state, gone)
        allowed = self._allowed(here, there, local, remote, state, replaced)
        for n, uid in enumerate(uids, 1):
            if self.progress:
                self.progress(n, len(uids))
            try:
                self._one(uid, local.get(uid), remote.get(uid), state.get(uid), allowed)
            except DatabaseError:  # the file itself (busy, full, read-only): one line from the caller
                raise
            except DavError as e:
                self.report.problems.append(f"{self._name(uid, local, remote)}: {e}")
            except (TaskError, ValueError, ical.ReadError) as e:
                self.report.problems.append(f"{self._name(uid, local, remote)}: {e}")
        self._delete_together()
        self._send_new(set(local) | set(remote) | set(unknown) | set(state))
        with self.store.write() as w:
            syncstate.set_meta(w, f"url:{self.collection}", self.collection)
            if self.list_name is None:
                syncstate.set_meta(w, "url", self.collection)
            syncstate.set_meta(w, f"token:{self.collection}", self.dav.info().sync_token if info.sync_token else None)
            syncstate.set_meta(w, f"odd:{self.collection}", listing.remember_odd(seen.odd) if seen.odd else None)
        return self.report

    def _name_unknown(self, unknown: dict[str, str], local: dict, remote: dict) -> None:
        """One line per to-do that is neither there nor gone this time; one line for many with the same reason."""
        by_why: dict[str, list[str]] = {}
        for uid, why in unknown.items():
            by_why.setdefault(why, []).append(self._name(uid, local, remote))
        for why, names in by_why.items():
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            self.report.problems.append(f"{shown}: {why}; left as they are, looked at again next sync")

    def _name(self, uid: str, local: dict, remote: dict) -> str:
        task = local.get(uid) or (remote[uid].row if uid in remote else {})
        return f'"{task.get("title")}"' if task.get("title") else uid

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
                self._commit(
                    lambda conn, u=uid, t=twin: ChangeSet(tuple(self._uid_changes(conn, u, t)), turn=self.turn)
                )
                local[twin] = {**task, "uid": twin}
                del local[uid]

    # -- identity: a to-do the server gave a new UID

    def _renames(
        self,
        pairs: list[tuple[str, str]],
        local: dict,
        remote: dict[str, Remote],
        state: dict,
        unknown: dict[str, str],
        skip: set[str],
        missing: list[str],
    ) -> list[str]:
        """Asked once for all: yes gives each task here the new UID (one /undo with the rest); no leaves both
        sides as they are and names them. Returns the missing to-dos that are still missing."""
        if not pairs:
            return missing
        lines = [f'"{self._name(old, local, remote)}": UID {old} is now {new} on the server' for old, new in pairs]
        effect = Effect(changes=tuple(lines), asks=f"the server gave {len(pairs)} to-do(s) a new UID", by_user=True)
        ok, reason = settle(decide(effect, self.door), self.door)
        renamed = {old for old, _ in pairs}
        for old, new in pairs:
            if not ok:
                unknown[old] = f"the server now holds it under another UID ({new}); kept as it is ({reason})"
                skip.add(new)
                continue
            self._commit(
                lambda conn, o=old, n=new: ChangeSet(
                    tuple(self._uid_changes(conn, o, n)),
                    by_user=True,
                    turn=self.turn,
                    after=(lambda w: syncstate.forget(w, o),),
                )
            )
            if old in local:
                local[new] = {**local.pop(old), "uid": new}
            state[new] = {**state.pop(old), "href": remote[new].resource.href, "etag": remote[new].resource.etag}
            self.report.notes.append(f"{lines[[o for o, _ in pairs].index(old)]}: matched as the same task")
        if not ok:
            self.report.kept.append(f"kept {len(pairs)} to-dos whose UID the server changed as they were ({reason})")
        return [u for u in missing if u not in renamed]

    # -- deletions: proven first, counted, asked about once

    def _deletions(self, local: dict, remote: dict, state: dict, gone: set[str]) -> tuple[list, list]:
        here, there = [], []
        for uid, last in state.items():
            mine, theirs = local.get(uid), remote.get(uid)
            if mine is not None and uid in gone and not self._changed_here(mine, last):
                here.append(uid)
            elif mine is None and theirs is not None and theirs.resource.etag == last["etag"]:
                if by_uid(self.store.conn(), uid) is None:  # not moved to another list: really deleted here
                    there.append(uid)
        return here, there

    def _allowed(self, here: list, there: list, local: dict, remote: dict, state: dict, replaced: bool) -> set[str]:
        """The deletions the user allows: all of them, unless they are many or look like a glitch."""
        glitch = ""
        if here and replaced:
            glitch = "the task list on the server was replaced (it no longer knows the last sync)"
        elif here and not remote:
            glitch = "the server listed no to-dos at all"
        elif len(here) >= 2 and len(here) * 2 >= len(state):
            glitch = f"the server listed only {len(remote)} of the {len(state)} to-dos synced last time"
        lines = [f'here: "{local[u]["title"]}" (deleted on the server)' for u in here]
        lines += [f'on the server: "{remote[u].row["title"]}" (deleted here)' for u in there]
        effect = Effect(deletes=tuple(lines), glitch=glitch, by_user=True)
        ok, reason = settle(decide(effect, self.door), self.door)
        if ok:
            self.glitch = glitch
            conn = self.store.conn()
            for u in here:  # the yes covers these tasks as they are now; the gate checks them again at the write
                self.grant.add(("tasks", local[u]["id"]), version(snapshot(conn, local[u]["id"])))
            return set(here) | set(there)
        self.report.kept.append(f"kept {len(lines)} tasks the sync would delete ({reason})")
        return set()

    # -- one task

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
        if ours == other and not theirs.patched:  # the same either way: only the record is new
            self._record(mine, theirs.resource, theirs.resource.data)
            return
        base = last.get("fields") if last else None
        if base is None:  # a first meeting, or a record from before fields were kept: as a whole
            mine_changed = last is None or fingerprint(mine) != last["synced"]
            theirs_changed = last is None or theirs.resource.etag != last["etag"]
            base = other if mine_changed and not theirs_changed else ours if theirs_changed and not mine_changed else {}
        mine_at = syncstate.changed_at(self.store.conn(), mine["id"]) or NEVER
        theirs_at = theirs.modified
        if theirs.stamp and theirs.stamp == stamp_of(_copy(mine)):
            theirs_at = NEVER  # LAST-MODIFIED copied along, not bumped: the other app claims no time for its change
        result = merge(ours, other, base, mine_at, theirs_at)
        merged = result.fields
        if result.met:
            who = "theirs" if result.lost_here and not result.lost_there else "ours"
            self.report.conflicts.append(f'"{mine["title"]}": {who} ({", ".join(result.met)})')
        elif merged != ours and merged != other:
            changed_here = [k for k in SYNCED if merged[k] != ours[k]]
            changed_there = [k for k in SYNCED if merged[k] != other[k]]
            self.report.merged.append(
                f'"{mine["title"]}": {", ".join(changed_there)} from here, {", ".join(changed_here)} from there'
            )
        if mine["status"] == "open" and merged["status"] == "done" and mine.get("repeat"):
            self._roll_forward(mine, theirs, self.follow.get(mine["uid"]))  # completed there, and it repeats
            return
        if merged != ours:
            if not self._take(mine, theirs, merged):
                return
            self.report.received += 1
        if result.lost_there:  # their values go into the change log, so /undo brings them back
            values = {k: other[k] for k in result.lost_there}

            def keep_theirs(conn: Any) -> ChangeSet | None:
                before = snapshot(conn, mine["id"])
                if before is None:
                    return None
                logged = as_task(before, values)
                change = Change(Op.PUT, mine["id"], before, tool="sync", logged_before=logged)
                return ChangeSet((change,), by_user=True, turn=self.turn)

            self._commit(keep_theirs)
        if merged != other or theirs.patched:
            now_mine = self._reload(mine["uid"])
            if now_mine is not None:
                self._send(now_mine, theirs)
        else:
            self._record(self._reload(mine["uid"]) or mine, theirs.resource, theirs.resource.data)


def _copy(task: dict[str, Any]) -> Any:
    """The to-do in the copy kept with a task (the server's version as last synced), or None."""
    from planner.storage.ical_write import base_of

    return base_of(task.get("ical"))
