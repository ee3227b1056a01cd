"""The sync against the apps people use, on the Radicale the tests start: the real todoman 4 over vdirsyncer
(apps.py) doing what users do, and the layouts tasks.org, Apple Reminders and others write for a completed
repeat, written with the `caldav` library. Whichever app completes a repeat, each side ends with exactly one
open occurrence, and it carries the planner's list, tags and estimate.

What todoman 4.7 really does when a repeating to-do is done (todoman/model.py, Todo.complete): the original
UID is marked COMPLETED and loses its RRULE, and the next occurrence is a clone saved under a new UID, with
the rule, due moved forward by it, and only todoman's own fields (no ESTIMATED-DURATION, no X- properties).
"""

from __future__ import annotations

import datetime as dt

import icalendar
import pytest
from apps import Desk
from helpers import TODAY
from phone import PASSWORD, USER, add, edit, save_raw, todos

from planner.policy import Door
from planner.storage import exchange
from planner.sync.runner import sync
from planner.tools import dispatch


def go(store, url, **kw):
    """One sync as the planner does it."""
    return sync(store, url, USER, PASSWORD, today=lambda: TODAY, **kw)


def here(store, title: str) -> list[dict]:
    """The tasks with this title here, by due date."""
    return sorted((t for t in exchange.all_tasks(store) if t["title"] == title), key=lambda t: t["due_date"] or "")


def there(phone, title: str) -> list[icalendar.Todo]:
    """The to-dos with this title on the server, by due date."""
    found = []
    for obj in phone.todos(include_completed=True):
        todo = next(c for c in icalendar.Calendar.from_ical(obj.data).walk() if c.name == "VTODO")
        if str(todo.get("summary")) == title:
            found.append(todo)
    return sorted(found, key=lambda t: str(t["due"].dt) if t.get("due") else "")


def open_ones(items, status=lambda t: t["status"]) -> list:
    return [t for t in items if status(t) in ("open", "NEEDS-ACTION", "IN-PROCESS")]


def water_the_plants(ctx) -> None:
    out, ok = dispatch(
        ctx,
        "add_task",
        {
            "title": "water the plants",
            "due_date": "2026-12-03",
            "repeat": "every week",
            "list": "home",
            "tags": ["work"],
            "estimate": "15m",
        },
    )
    assert ok, out


def one_open_occurrence_with_our_fields(store, phone, due: dt.date) -> None:
    mine = here(store, "water the plants")
    assert [(t["status"], t["due_date"]) for t in mine] == [("done", "2026-12-03"), ("open", due.isoformat())]
    nxt = mine[1]
    assert (nxt["list"], nxt["tags"], nxt["estimate_minutes"], nxt["repeat"]) == ("home", ["work"], 15, "FREQ=WEEKLY")
    theirs = there(phone, "water the plants")
    (open_there,) = open_ones(theirs, lambda t: str(t.get("status", "NEEDS-ACTION")))
    assert open_there["due"].dt == due and str(open_there["x-planner-list"]) == "home"
    assert open_there["estimated-duration"] is not None and "work" in open_there.to_ical().decode()
    assert [str(t["status"]) for t in theirs].count("COMPLETED") == 1


# ---------------------------------------------------------------- the real todoman


@pytest.mark.slow
def test_completing_a_repeat_in_todoman_leaves_one_open_occurrence_on_each_side(ctx, store, tasklist, tmp_path):
    url, phone = tasklist
    water_the_plants(ctx)
    go(store, url)
    desk = Desk(tmp_path / "desk", url)
    desk.todo("done", desk.id_of("water the plants"))
    desk.sync()
    report = go(store, url)
    assert report.problems == [] and any("next one that app saved" in n for n in report.notes)
    desk.sync()
    go(store, url)  # and again: nothing more
    one_open_occurrence_with_our_fields(store, phone, dt.date(2026, 12, 10))
    assert desk.open_titles() == ["water the plants"]


@pytest.mark.slow
def test_what_users_do_in_todoman_reaches_the_planner(ctx, store, tasklist, tmp_path):
    url, phone = tasklist
    for title in ("dentist", "fix the bike", "trip", "old chore"):
        assert dispatch(ctx, "add_task", {"title": title, "due_date": "2026-12-08", "tags": ["mine"]})[1]
    go(store, url)
    desk = Desk(tmp_path / "desk", url)
    desk.todo("edit", desk.id_of("dentist"), "--due", "2026-12-09")
    desk.todo("edit", desk.id_of("fix the bike"), "--location", "Rua Augusta 12", "--start", "2026-12-05")
    desk.todo("cancel", desk.id_of("trip"))
    desk.todo("delete", "--yes", desk.id_of("old chore"))
    desk.sync()
    report = go(store, url)
    assert (report.deleted_here, report.problems) == (1, [])
    mine = {t["title"]: t for t in exchange.all_tasks(store)}
    assert set(mine) == {"dentist", "fix the bike", "trip"}
    assert mine["dentist"]["due_date"] == "2026-12-09"
    assert mine["fix the bike"]["start_date"] == "2026-12-05" and mine["trip"]["status"] == "cancelled"
    assert all(t["tags"] == ["mine"] for t in mine.values())
    (bike_id,) = store.conn().execute("SELECT id FROM tasks WHERE title = 'fix the bike'").fetchone()
    assert dispatch(ctx, "update_task", {"id": bike_id, "priority": "high"})[1]
    go(store, url)
    desk.sync()
    (bike,) = [t for t in desk.listed() if t["summary"] == "fix the bike"]
    assert bike["location"] == "Rua Augusta 12"  # what todoman wrote stays when the planner writes


# ---------------------------------------------------------------- other apps' layouts (the caldav library)


def _copy(todo: icalendar.Todo, uid: str, **changes) -> icalendar.Todo:
    out = icalendar.Todo.from_ical(todo.to_ical())
    for key, value in {"uid": uid, **changes}.items():
        out.pop(key, None)
        if value is not None:
            out.add(key, value)
    return out


def _original(phone) -> icalendar.Todo:
    (todo,) = open_ones(there(phone, "water the plants"), lambda t: str(t.get("status", "NEEDS-ACTION")))
    return todo


@pytest.mark.parametrize(
    "layout",
    [
        "completed in place, rule kept (Thunderbird, Evolution)",
        "completed, rule kept, next one under a new UID",
        "completed copy under a new UID, the original moved on (Apple Reminders)",
        "moved on in place, no completed copy (tasks.org)",
    ],
)
def test_a_repeat_completed_in_any_layout_leaves_one_open_occurrence_on_each_side(ctx, store, tasklist, layout):
    url, phone = tasklist
    water_the_plants(ctx)
    go(store, url)
    original = _original(phone)
    uid = str(original["uid"])
    done_at = dt.datetime(2026, 12, 3, 18, 0, tzinfo=dt.UTC)
    if layout.startswith("completed in place"):
        edit(phone, "water the plants", uid=uid, status="COMPLETED", completed=done_at)
    elif layout.startswith("completed, rule kept"):
        nxt = _copy(original, "next-1@other.app", due=dt.date(2026, 12, 10), categories=None)
        nxt.pop("estimated-duration", None)
        nxt.pop("x-planner-list", None)
        save_raw(phone, nxt)
        edit(phone, "water the plants", uid=uid, status="COMPLETED", completed=done_at)
    elif layout.startswith("completed copy"):
        save_raw(phone, _copy(original, "copy-1@apple", rrule=None, status="COMPLETED", completed=done_at))
        edit(phone, "water the plants", uid=uid, due=dt.date(2026, 12, 10))
    else:
        edit(phone, "water the plants", uid=uid, due=dt.date(2026, 12, 10))
    go(store, url)
    go(store, url)  # and again: never twice
    mine = here(store, "water the plants")
    (nxt_here,) = open_ones(mine)
    assert nxt_here["due_date"] == "2026-12-10"
    assert (nxt_here["list"], nxt_here["tags"], nxt_here["estimate_minutes"]) == ("home", ["work"], 15)
    (nxt_there,) = open_ones(there(phone, "water the plants"), lambda t: str(t.get("status", "NEEDS-ACTION")))
    assert nxt_there["due"].dt == dt.date(2026, 12, 10) and str(nxt_there["x-planner-list"]) == "home"
    assert len(todos(phone)) == 1  # one title, whatever the number of completed records


def test_a_new_todo_under_a_new_uid_that_is_not_a_next_occurrence_stays_a_task_of_its_own(ctx, store, tasklist):
    url, phone = tasklist
    water_the_plants(ctx)
    go(store, url)
    uid = str(_original(phone)["uid"])
    add(phone, "water the plants", dt.date(2026, 12, 2))  # earlier than the one completed: not its next one
    edit(phone, "water the plants", uid=uid, status="COMPLETED")
    go(store, url, door=Door("sync", yes=True))
    assert sorted(t["due_date"] for t in open_ones(here(store, "water the plants"))) == ["2026-12-02", "2026-12-10"]
