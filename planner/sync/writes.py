"""The writes of a sync, here and there: a server's version taken here (logged in the sync's turn), a repeat
completed elsewhere rolled forward once, a deletion made here, a task written over the server's copy, and
the record of what both sides now hold (storage/syncstate.py).

The decisions (what is deleted, what met, what is unknown) are caldav_sync.py's; Sync inherits these. Each
item is written on the server before it is recorded here, so a sync killed halfway is finished by the next.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from planner.policy import Door, Grant
from planner.storage import gate, ical, syncstate
from planner.storage.exchange import check_row
from planner.storage.fields import TaskError
from planner.storage.gate import Change, ChangeSet, Op
from planner.storage.tasks import by_uid, children, snapshot
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
    door: Door
    grant: Grant  # the rows the user said yes to in this sync's question (its deletions)
    glitch: str
    deleting: list[tuple[dict[str, Any], dict[str, Any]]]

    def _commit(self, changes: list[Change] | Any, **kw: Any) -> gate.Applied:
        """Write through the one gate, in this sync's turn: what another device did is the user's own act
        (a deletion there, an edit there), asked about as the policy says (more than a few, or a glitch)."""
        plan = changes if callable(changes) else (lambda conn: ChangeSet(tuple(changes), by_user=True, **kw))
        door = dataclasses.replace(self.door, turn=None, window=None)  # one task at a time, not a bulk window
        return gate.commit(self.store, plan, door, self.grant)

    def _uid_changes(self, conn: Any, old: str, new: str) -> list[Change]:
        """A task here takes the server's UID (a twin met, a UID the server renamed), its subtasks with it."""
        mine = by_uid(conn, old)
        if mine is None:
            return []
        out = [Change(Op.EDIT, mine["id"], {"uid": new}, tool="sync")]
        out += [Change(Op.EDIT, c["id"], {"parent_uid": new}, tool="sync") for c in children(conn, old, status=None)]
        return out

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
        stale: list[bool] = []

        def plan(conn: Any) -> ChangeSet | None:
            stale.clear()
            if mine is None:
                change = Change(Op.ADD, values=fields, tags=tuple(tags), tool="sync")
            else:
                before = snapshot(conn, mine["id"])
                if before is None or synced_fields(as_export(before)) != synced_fields(mine):
                    stale.append(True)  # changed here while this sync ran: that edit is newer; next sync meets it
                    return None
                changes = {**before, **{k: v for k, v in fields.items() if k != "uid"}}
                for key in TAKEN:  # a field cleared there is cleared here (check_row leaves out what is empty)
                    changes[key] = fields.get(key)
                if changes["remind_at"] != before.get("remind_at"):
                    changes["reminded_at"] = None  # a new reminder time shows again
                change = Change(Op.PUT, mine["id"], {**changes, "tags": tags}, tool="sync")
            return ChangeSet((change,), by_user=True, turn=self.turn, after=(self._remember(fields["uid"], theirs),))

        self._commit(plan)
        if stale:
            self.report.problems.append(f'"{mine["title"]}" changed here during the sync; synced next time')  # type: ignore[index]
            return False
        return True

    def _remember(self, uid: str, theirs: Remote) -> Any:
        """The sync record of a task just taken from the server (beside the write, in its transaction)."""

        def step(conn: Any) -> None:
            now_task = self._reload(uid, conn)
            if now_task is not None:
                self._keep(conn, now_task, theirs.resource, theirs.resource.etag)

        return step

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
        self._commit([Change(Op.EDIT, following, {"uid": nxt.uid, **dates}, tool="sync")], turn=self.turn)
        task = self._reload(nxt.uid)
        if task is not None:
            self._send(task, nxt)
            self.report.notes.append(
                f'"{mine["title"]}": completed elsewhere; the next one that app saved '
                f"({nxt.row.get('due_date') or 'undated'}) is this task's next occurrence"
            )

    def _delete_here(self, mine: dict[str, Any], last: dict[str, Any]) -> None:
        self.deleting.append((mine, last))  # written with the others, in one change set (_delete_together)

    def _delete_together(self) -> None:
        """The deletions made on the server, here: one change set, so the gate sees them all at once (more than
        a few, or while the server looks wrong, is asked about; the sync's own question gave its yes)."""
        if not self.deleting:
            return
        kept: list[str] = []

        def plan(conn: Any) -> ChangeSet | None:
            kept.clear()
            changes, forgets = [], []
            for mine, last in self.deleting:
                before = snapshot(conn, mine["id"])
                if before is None:
                    continue
                if self._changed_here(as_export(before), last):  # edited here since the listing: the edit wins
                    kept.append(mine["title"])
                    continue
                changes.append(Change(Op.PUT, mine["id"], None, tool="sync"))
                forgets.append(lambda c, u=mine["uid"]: syncstate.forget(c, u))
            return ChangeSet(tuple(changes), by_user=True, glitch=self.glitch, turn=self.turn, after=tuple(forgets))

        applied = self._commit(plan)
        self.report.deleted_here += len(applied.changes)
        for title in kept:
            self.report.problems.append(f'"{title}" changed here during the sync; kept and sent next time')

    def _reload(self, uid: str, conn: Any = None) -> dict[str, Any] | None:
        task = by_uid(conn or self.store.conn(), uid)
        return as_export(task) if task is not None else None

    def _record(self, task: dict[str, Any], resource: Resource, data: str, conn: Any = None, etag: Any = ...) -> None:
        """What both sides hold now: the sync record, and the server's copy kept with the task (through the
        gate: the copy is the task's bookkeeping, not a change to undo)."""
        held = Resource(resource.href, resource.etag if etag is ... else etag, data)
        copy = task.get("id") and Change(Op.EDIT, task["id"], {"ical": data}, tool="sync")

        def plan(c: Any) -> ChangeSet:
            return ChangeSet(
                (copy,) if copy else (), logged=False, after=(lambda w: self._keep(w, task, held, held.etag),)
            )

        if copy:
            self._commit(plan)
        else:
            with self.store.write() as c:
                self._keep(c, task, held, held.etag)

    def _keep(self, conn: Any, task: dict[str, Any], resource: Resource, etag: Any) -> None:
        syncstate.remember(
            conn, self.collection, task["uid"], resource.href, etag, synced_fields(task), fingerprint(task)
        )

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
