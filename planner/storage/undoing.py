"""Undo and redo as change sets: what putting the newest request back (or making it again) would write.

    undo_plan()   the newest request with anything not undone (tasks, events, preferences, tracked time,
                  forgotten memories and scenes): each row put back as it was before it, newest first, and
                  its log rows marked undone (one undo step)
    redo_plan()   the request undone last (its tasks, events, preferences and tracked time; the last two
                  from redo_rows, which the undo filled): each row made again as it became, unless one
                  changed since the undo (then nothing, and a TaskError names it: the newer edit wins);
                  a row whose data came back since (the same uid imported or synced again) is named, left
                  as it is, and dropped from the log, and the rest is made again

Both are planned inside the gate's transaction (planner/storage/gate.py), so the rows an answer was given
for are the rows written: if another process changed the newest request meanwhile (an import landed), the
plan is another one, its rows have other versions, and the user is asked again.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field

from planner.policy import Door
from planner.storage import calendar, memories, preferences, syncstate, tasks, worklog
from planner.storage.db import Store
from planner.storage.fields import TaskError
from planner.storage.gate import Change, ChangeSet, LogMark, Op, commit
from planner.storage.tasks import by_uid, describe_redo, describe_undo, pending_undo, plain, snapshot, undone_events


@dataclass
class Planned:
    """The lines an undo or redo says, filled in when it is planned (the last plan is the one written)."""

    lines: list[str]
    turn: str | None = None
    tools: frozenset[str] = frozenset()
    memories: list[dict] = field(default_factory=list)  # memories put back (the search's index learns them)


def newest(conn: sqlite3.Connection) -> str | None:
    """The newest request with something to undo, whatever it changed: tasks (their change log), events,
    preferences, tracked time, forgotten memories. Each of the other logs records the task change-log id it
    came after, so they are ordered with the task changes; a request that did several is undone whole."""
    task = conn.execute("SELECT turn, id FROM task_events WHERE undone_at IS NULL ORDER BY id DESC LIMIT 1").fetchone()
    candidates = [(float(task["id"]), 0, task["turn"])] if task else []
    forgot = memories.newest_forget(conn)
    candidates += [(forgot[1] + 0.5, 1, forgot[0])] if forgot else []
    pref = preferences.newest_preference_turn(conn)
    candidates += [(pref[1] + 0.5, 2, pref[0])] if pref else []
    clock = worklog.newest_turn(conn)
    candidates += [(clock[1] + 0.5, 3, clock[0])] if clock else []
    event = conn.execute(
        "SELECT turn, after_event FROM event_log WHERE turn IS NOT NULL AND undone_at IS NULL ORDER BY id DESC LIMIT 1"
    ).fetchone()
    candidates += [(event["after_event"] + 0.5, 4, event["turn"])] if event else []
    return max(candidates)[2] if candidates else None


def undo_plan(
    planned: Planned,
    only: str | None = None,
    asks: Callable[[set[str], int], str] | None = None,
    by_user: bool = True,
) -> Callable[[sqlite3.Connection], ChangeSet | None]:
    """A plan for the gate: put back everything the newest request changed (only `only`'s, when given): its
    tasks, events, preferences and tracked time, each to the row as it was.

    `by_user`: the user typed it (a few removals need no question); False when a model asked for it."""

    def plan(conn: sqlite3.Connection) -> ChangeSet | None:
        turn = newest(conn)
        planned.lines, planned.turn, planned.memories = [], turn, []
        if turn is None or (only is not None and turn != only):
            return None
        events = pending_undo(conn, turn)
        changes, forget, lines = [], [], []
        for e in events:  # newest first
            changes.append(Change(Op.PUT, e["task_id"], e["before"], tool="undo"))
            if e["tool"] == "sync" and e["before"] is None and e["after"]:
                forget.append(e["after"]["uid"])
            lines.append(describe_undo(e["task_id"], e["before"], e["after"]))
        lines.reverse()  # in the order the request made them
        puts, logged, said = calendar.undo_changes(conn, turn)
        changes += [Change(Op.PUT, key, row, tool="undo", table="events") for key, row in puts]
        lines += said
        stash = []  # the rows that keep their history in place: kept as they were, for redo
        for table, module in (("preferences", preferences), ("worklog", worklog)):
            rows, said = module.undo_changes(conn, turn)
            changes += [Change(Op.PUT, key, row, tool="undo", table=table) for key, row in rows]
            stash += [(table, key, OWNED[table].row(conn, key), row) for key, row in rows]
            lines += said
        kept, forgets, said = memories.undo_changes(conn, turn)
        changes += [Change(Op.PUT, key, row, tool="undo", table="memories") for key, row in kept]
        lines += said
        scenes = memories.forgotten_scenes(conn, turn)  # grouping, not data: put back beside, in this write
        lines += [f'restored scene {sid} "{name}" (it was forgotten)' for sid, name in scenes]
        planned.lines = lines
        planned.tools = frozenset(e["tool"] for e in events)
        planned.memories = [row for _, row in kept]
        marks = [LogMark("undo", tuple(e["id"] for e in events))] if events else []
        marks += [LogMark("undo", tuple(logged), "events")] if logged else []
        marks += [LogMark("undo", tuple(forgets), "memories")] if forgets else []
        return ChangeSet(
            tuple(changes),
            by_user=by_user,
            asks=asks(set(planned.tools), len(events)) if asks else "",
            marks=tuple(marks),
            doing="undo",
            after=tuple(_forget_sync(uid) for uid in forget)
            + ((_restore_scenes(turn),) if scenes else ())
            + ((_stash(turn, stash),) if stash else ()),
        )

    return plan


def redo_plan(
    planned: Planned, asks: Callable[[set[str], int], str] | None = None, by_user: bool = True
) -> Callable[[sqlite3.Connection], ChangeSet | None]:
    """A plan for the gate: make the request undone last again; a TaskError if a task changed since."""

    def plan(conn: sqlite3.Connection) -> ChangeSet | None:
        turn = last_undone(conn)
        planned.lines, planned.turn = [], turn
        if turn is None:
            return None
        events = undone_events(conn, turn)
        first: dict[int, dict] = {}
        for e in events:
            first.setdefault(e["task_id"], e)
        for e in first.values():  # nothing redone over a change made since: the user's newer edit wins
            now_task = snapshot(conn, e["task_id"])
            if plain(now_task) != plain(e["before"]):
                title = (now_task or e["before"] or {}).get("title", "")
                raise TaskError(
                    f'task {e["task_id"]} "{title}" changed after the undo, so redo would overwrite '
                    "it; nothing was redone"
                )
        there = _already_there(conn, events)  # the same data came back since (imported or synced again)
        dropped = [e["id"] for e in events if e["task_id"] in there]  # not made again, and not tried again
        events = [e for e in events if e["task_id"] not in there]
        planned.lines = [describe_redo(e["task_id"], e["before"], e["after"]) for e in events]
        planned.lines += [
            f'task {key} "{title}" is already there (task {other}); not made again'
            for key, (other, title) in there.items()
        ]
        planned.tools = frozenset(e["tool"] for e in events)
        puts, logged, gone, said = calendar.redo_changes(conn, turn)  # the same request's events come back too
        planned.lines += said
        changes = [Change(Op.PUT, e["task_id"], e["after"], tool="redo") for e in events]
        changes += [Change(Op.PUT, key, row, tool="redo", table="events") for key, row in puts]
        stashed = _stashed(conn, turn)
        for table, key, _, undone in stashed:  # nothing made again over a change made since the undo
            if OWNED[table].row(conn, key) != undone:
                raise TaskError(
                    f"the {NOUN[table]} {key} changed after the undo, so redo would overwrite it; nothing was redone"
                )
        changes += [Change(Op.PUT, key, made, tool="redo", table=table) for table, key, made, _ in stashed]
        planned.lines += [_again(table, key, made) for table, key, made, _ in stashed]
        marks = [LogMark("redo", tuple(e["id"] for e in events))] if events else []
        marks += [LogMark("drop", tuple(dropped))] if dropped else []
        marks += [LogMark("redo", tuple(logged), "events")] if logged else []
        marks += [LogMark("drop", tuple(gone), "events")] if gone else []
        return ChangeSet(
            tuple(changes),
            by_user=by_user,
            asks=asks(set(planned.tools), len(events)) if asks else "",
            marks=tuple(marks),
            doing="redo",
            after=(_redone(turn),) if stashed else (),
        )

    return plan


def last_undone(conn: sqlite3.Connection) -> str | None:
    """The request undone last, whatever it changed (tasks, events, preferences, tracked time): the one a
    redo makes again. Each log records when it was undone; at the same second the task change log's own
    order decides."""
    found = [x for x in (tasks.last_undone(conn), calendar.last_undone(conn), _last_stashed(conn)) if x]
    return max(found, key=lambda x: x[1])[0] if found else None


# ---------------------------------------------------------------- redo_rows: what redo makes again of the
# tables that keep their history in the row (preferences, tracked time), written beside the undo and the
# redo in their own transaction (this module owns the table).

OWNED = {"preferences": preferences.PREFERENCES, "worklog": worklog.WORKLOG}
NOUN = {"preferences": "preference", "worklog": "tracked time"}


def _again(table: str, key: int, made: dict) -> str:
    if table == "worklog":
        took = f", {made['minutes']}m" if made.get("minutes") is not None else ", running"
        return f"the time on task {made['task_id']} from {str(made['start'])[11:16]} made again{took}"
    return f'preference {key} "{made.get("said", "")}" made again'


def _stash(turn: str, rows: list[tuple[str, int, dict | None, dict]]) -> Callable[[sqlite3.Connection], None]:
    def step(conn: sqlite3.Connection) -> None:
        when = tasks.undo_stamp()
        conn.executemany(
            "INSERT INTO redo_rows (turn, tbl, key, made, undone, undone_at) VALUES (?, ?, ?, ?, ?, ?)",
            [(turn, t, k, json.dumps(made), json.dumps(undone), when) for t, k, made, undone in rows if made],
        )

    return step


def _stashed(conn: sqlite3.Connection, turn: str) -> list[tuple[str, int, dict, dict]]:
    rows = conn.execute(
        "SELECT tbl, key, made, undone FROM redo_rows WHERE turn = ? AND redone_at IS NULL ORDER BY id", (turn,)
    ).fetchall()
    return [(r[0], r[1], json.loads(r[2]), json.loads(r[3])) for r in rows]


def _last_stashed(conn: sqlite3.Connection) -> tuple[str, str] | None:
    row = conn.execute(
        "SELECT turn, undone_at FROM redo_rows WHERE redone_at IS NULL ORDER BY undone_at DESC, id DESC LIMIT 1"
    ).fetchone()
    return (row[0], row[1]) if row else None


def _redone(turn: str) -> Callable[[sqlite3.Connection], None]:
    return lambda conn: conn.execute(
        "UPDATE redo_rows SET redone_at = ? WHERE turn = ? AND redone_at IS NULL", (tasks.now(), turn)
    )


def _already_there(conn: sqlite3.Connection, events: list[dict]) -> dict[int, tuple[int, str]]:
    """Tasks a redo would make again whose uid another task holds now (the same file imported again, the
    same to-do synced again): task id -> (the other task's id, title). Redoing them would make a duplicate."""
    there: dict[int, tuple[int, str]] = {}
    for e in events:
        uid = (e["after"] or {}).get("uid")
        if not uid:
            continue
        holder = by_uid(conn, uid)
        if holder is not None and holder["id"] != e["task_id"]:
            there[e["task_id"]] = (holder["id"], e["after"].get("title", ""))
    return there


def _restore_scenes(turn: str) -> Callable[[sqlite3.Connection], None]:
    return lambda conn: memories.restore_scenes(conn, turn)


def _forget_sync(uid: str) -> Callable[[sqlite3.Connection], None]:
    # Undoing a sync forgets the sync record of each task it received, so the next sync takes it again
    # from the server rather than deleting it there.
    return lambda conn: syncstate.forget(conn, uid)


def undo_last_turn(store: Store, turn: str | None = None, door: Door | None = None) -> list[str]:
    """Put back the newest request's task changes (only if it is still `turn`, when given); one line per task
    (empty: nothing to undo). The user's own command: a door that says yes to what it shows."""
    planned = Planned([])
    applied = commit(store, undo_plan(planned, turn), door or Door("undo", yes=True))
    return planned.lines if applied.changes or planned.lines else []


def redo_last_undo(store: Store, door: Door | None = None) -> list[str]:
    """Make again the request undone last; a TaskError if a task changed since the undo."""
    planned = Planned([])
    applied = commit(store, redo_plan(planned), door or Door("redo", yes=True))
    return planned.lines if applied.changes or planned.turn else []
