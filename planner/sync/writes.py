"""The writes of a sync, here and there: a server's version taken here (logged in the sync's turn), a repeat
completed elsewhere rolled forward once, a deletion made here, a task written over the server's copy, and
the record of what both sides now hold (storage/syncstate.py).

The decisions (what is deleted, what met, what is unknown) are caldav_sync.py's; Sync inherits these. Each
item is written on the server before it is recorded here, so a sync killed halfway is finished by the next.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.storage import ical, syncstate
from planner.storage.exchange import check_row
from planner.storage.fields import TaskError
from planner.storage.tasks import by_uid, insert, record, restore, set_tags, snapshot, update
from planner.sync.dav import Dav, DavError, Resource
from planner.sync.remote import TAKEN, Remote, as_export, fingerprint, synced_fields, to_ics
from planner.sync.report import Report
from planner.tools import ToolContext, dispatch

if TYPE_CHECKING:
    from planner.storage.db import Store


class Writes:
    """The writes of one sync run (mixed into caldav_sync.Sync, which sets these attributes)."""

    store: Store
    dav: Dav
    collection: str
    list_name: str | None
    turn: str
    ctx: ToolContext
    report: Report

    def _changed_here(self, mine: dict[str, Any], last: dict[str, Any]) -> bool:
        if last.get("fields") is not None:
            return synced_fields(mine) != last["fields"]
        return fingerprint(mine) != last["synced"]

    def _local(self) -> dict[str, dict[str, Any]]:
        raise NotImplementedError  # caldav_sync.Sync: the tasks that live in this collection

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

    def _roll_forward(self, mine: dict[str, Any], theirs: Remote, nxt: Remote | None) -> None:
        """Completed elsewhere and it repeats: complete it here, so it rolls forward exactly once, and send
        the completed one without its rule (no app rolls it again). The next one goes as a new to-do, or, when
        that app saved its own next occurrence under a new UID (`nxt`), it is that one: one task with our
        fields (list, tags, estimate) and that app's dates, written over that app's copy."""
        out, ok = dispatch(self.ctx, "complete_task", {"id": mine["id"]})
        if not ok:
            raise TaskError(out["error"])
        done = self._reload(mine["uid"])
        if done is not None:
            self._send(done, theirs)
        self.report.received += 1
        if nxt is None:
            return
        following = (out.get("next") or {}).get("id")
        if following is None:  # the series ended here: theirs is a to-do of its own
            if self._take(None, nxt):
                self.report.received += 1
            return
        dates = {k: nxt.row.get(k) for k in ("due_date", "due_time", "start_date") if nxt.row.get(k)}
        with self.store.write() as conn:
            update(conn, self.turn, "sync", following, {"uid": nxt.uid, **dates})
        task = self._reload(nxt.uid)
        if task is not None:
            self._send(task, nxt)
            self.report.notes.append(
                f'"{mine["title"]}": completed elsewhere; the next one that app saved '
                f"({nxt.row.get('due_date') or 'undated'}) is this task's next occurrence"
            )

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
