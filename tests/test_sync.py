"""CalDAV sync against a real server: Radicale started on 127.0.0.1 with a temporary folder and a test
user, and the `caldav` library as a second client (a phone) on the same task list."""

from __future__ import annotations

import dataclasses
import datetime as dt
import signal
import subprocess
import sys

import icalendar
import pytest
from helpers import ROOT, TODAY, clean_env, run_cli, wait_for
from phone import FAR_AHEAD, PASSWORD, USER
from phone import add as phone_add
from phone import edit as phone_edit
from phone import todos as phone_todos

from planner.settings import Config
from planner.storage import exchange
from planner.storage.undoing import undo_last_turn
from planner.sync.runner import SyncError, sync, sync_config
from planner.tools import dispatch


def go(store, url, **kw):
    """One sync as the planner does it."""
    return sync(store, url, USER, PASSWORD, today=lambda: TODAY, **kw)


def titles(store) -> dict[str, str]:
    """Task title -> status, here."""
    return {t["title"]: t["status"] for t in exchange.all_tasks(store)}


def test_first_sync_goes_both_ways_and_a_second_changes_nothing(ctx, store, tasklist):
    url, phone = tasklist
    dispatch(ctx, "add_task", {"title": "buy milk", "due_date": "tomorrow", "priority": "high", "tags": ["home"]})
    dispatch(ctx, "add_task", {"title": "call mum"})
    phone_add(phone, "renew passport", dt.date(2026, 12, 10))
    report = go(store, url)
    assert (report.sent, report.received, report.problems) == (2, 1, [])
    seen = phone_todos(phone)
    assert set(seen) == {"buy milk", "call mum", "renew passport"}
    milk = seen["buy milk"]
    assert (milk["due"].dt, milk["priority"], str(milk["status"])) == (dt.date(2026, 12, 2), 1, "NEEDS-ACTION")
    assert titles(store) == {"buy milk": "open", "call mum": "open", "renew passport": "open"}
    etags = {str(o.url): o.etag for o in phone.todos(include_completed=True)}
    again = go(store, url)
    assert (again.sent, again.received, again.deleted_here, again.deleted_there, again.conflicts) == (0, 0, 0, 0, [])
    assert {str(o.url): o.etag for o in phone.todos(include_completed=True)} == etags  # nothing was rewritten


def test_a_task_added_in_the_terminal_reaches_the_phone_and_one_completed_there_is_done_here(fake, tmp_path, tasklist):
    url, phone = tasklist
    db = tmp_path / "p.db"
    env = clean_env(
        OLLAMA_HOST=fake.url,
        PLANNER_HOME=str(tmp_path),
        PLANNER_CALDAV_URL=url,
        PLANNER_CALDAV_USER=USER,
        PLANNER_CALDAV_PASSWORD=PASSWORD,
    )
    terminal = ["--db", str(db), "--today", TODAY.isoformat()]
    models = ["--model", "main", "--critic-model", "critic", "--embed-model", "embed", "--no-auto-memory"]
    fake.script(
        "main",
        {"tool_calls": [{"name": "add_task", "arguments": {"title": "water the plants", "due_date": "friday"}}]},
        {"content": "Added."},
    )
    p = run_cli([*terminal, *models, "add water the plants on friday"], env)
    assert p.returncode == 0, p.stderr
    p = run_cli([*terminal, "sync"], env)
    assert p.returncode == 0 and "sent 1, received 0" in p.stderr and PASSWORD not in p.stderr, p.stderr
    assert phone_todos(phone)["water the plants"]["due"].dt == dt.date(2026, 12, 4)
    phone_edit(phone, "water the plants", status="COMPLETED", completed=dt.datetime.now(dt.UTC))
    p = run_cli([*terminal, *models, "/sync"], env)
    assert p.returncode == 0 and "received 1" in p.stdout, p.stdout + p.stderr
    p = run_cli([*terminal, "tasks", "all"], env)
    assert "water the plants" in p.stdout and "done" in p.stdout


def test_edits_on_each_side_travel_and_a_conflict_keeps_the_newer_and_undo_brings_back_the_other(ctx, store, tasklist):
    url, phone = tasklist
    dispatch(ctx, "add_task", {"title": "dentist", "due_date": "2026-12-08"})
    dispatch(ctx, "add_task", {"title": "gym"})
    go(store, url)
    dispatch(ctx, "update_task", {"id": 1, "due_date": "2026-12-09"})  # here
    phone_edit(phone, "gym", priority=1)  # there
    report = go(store, url)
    assert (report.sent, report.received, report.conflicts) == (1, 1, [])
    assert phone_todos(phone)["dentist"]["due"].dt == dt.date(2026, 12, 9)
    assert exchange.all_tasks(store)[1]["priority"] == "high"

    dispatch(ctx, "update_task", {"id": 1, "title": "dentist (here)"})
    phone_edit(phone, "dentist", summary="dentist (phone)")  # later: the phone's change is newer
    report = go(store, url)
    assert report.conflicts == ['"dentist (here)": theirs (title)']
    assert "dentist (phone)" in titles(store) and "dentist (phone)" in phone_todos(phone)
    assert any("dentist (phone) → dentist (here)" in line for line in undo_last_turn(store))  # ours, back
    go(store, url)
    assert "dentist (here)" in phone_todos(phone)  # and the next sync sends it


def test_deletions_travel_both_ways(ctx, store, tasklist):
    url, phone = tasklist
    for title in ("old chore", "phone deletes this", "kept"):
        dispatch(ctx, "add_task", {"title": title})
    go(store, url)
    assert dispatch(dataclasses.replace(ctx, confirm=lambda q: True), "delete_task", {"id": 1})[1]
    next(o for o in phone.todos(include_completed=True) if "phone deletes this" in o.data).delete()
    report = go(store, url)
    assert (report.deleted_there, report.deleted_here) == (1, 1)
    assert set(phone_todos(phone)) == {"kept"} and set(titles(store)) == {"kept"}
    assert any("phone deletes this" in line for line in undo_last_turn(store))  # /undo brings it back here


def test_a_repeating_task_completed_on_the_phone_rolls_forward_once(ctx, store, tasklist):
    url, phone = tasklist
    dispatch(ctx, "add_task", {"title": "take out the bins", "due_date": "2026-12-03", "repeat": "every week"})
    go(store, url)
    phone_edit(phone, "take out the bins", status="COMPLETED", completed=dt.datetime.now(dt.UTC))
    go(store, url)
    go(store, url)  # and again: never twice
    here = [(t["due_date"], t["status"]) for t in exchange.all_tasks(store)]
    assert here == [("2026-12-03", "done"), ("2026-12-10", "open")]
    there = [
        (o.icalendar_component["due"].dt, str(o.icalendar_component["status"]))
        for o in phone.todos(include_completed=True)
    ]
    assert sorted(there) == [(dt.date(2026, 12, 3), "COMPLETED"), (dt.date(2026, 12, 10), "NEEDS-ACTION")]
    done = next(o.icalendar_component for o in phone.todos(include_completed=True) if "COMPLETED" in o.data)
    assert done.get("rrule") is None  # the series goes on in the next one; no app rolls this one again


def test_the_first_sync_with_a_full_list_merges_by_title_and_date(ctx, store, tasklist):
    url, phone = tasklist
    phone_add(phone, "dentist", dt.date(2026, 12, 8))
    phone_add(phone, "only on the phone")
    dispatch(ctx, "add_task", {"title": "dentist", "due_date": "2026-12-08"})
    report = go(store, url)
    assert report.received == 1 and report.sent == 0
    assert sorted(phone_todos(phone)) == ["dentist", "only on the phone"] and len(titles(store)) == 2


@pytest.mark.slow
def test_a_sync_killed_halfway_loses_and_duplicates_nothing(ctx, store, tmp_path, tasklist):
    url, phone = tasklist
    with store.write() as conn:
        conn.executemany("INSERT INTO tasks (title, uid) VALUES (?, ?)", [(f"task {i}", f"u{i}") for i in range(60)])
    env = clean_env(
        PLANNER_HOME=str(tmp_path), PLANNER_CALDAV_URL=url, PLANNER_CALDAV_USER=USER, PLANNER_CALDAV_PASSWORD=PASSWORD
    )
    cmd = ["sync", "--db", str(store.path)]
    # Held still just after it recorded its third task as sent (tests/killpoint.py), so the kill lands halfway
    # whichever process is faster.
    held = {**env, "KILLPOINT_STATEMENT": r"\s*INSERT OR REPLACE INTO sync_items"}
    p = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "killpoint.py"), "commit", "3", *cmd],
        env=held,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for(lambda: (tmp_path / "killpoint").exists() or p.poll() is not None, "the sync to reach its third task")
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert (tmp_path / "killpoint").exists(), "the sync ended before it was held"
    assert 3 <= len(phone.todos(include_completed=True)) < 60  # killed halfway
    for _ in range(2):
        assert run_cli(cmd, env).returncode == 0
    uids = [o.icalendar_component["uid"] for o in phone.todos(include_completed=True)]
    assert len(uids) == len(set(uids)) == 60 and len(exchange.all_tasks(store)) == 60


def test_an_unreachable_server_and_a_wrong_password_are_one_line_and_change_nothing(ctx, store, tasklist, radicale):
    url, phone = tasklist
    dispatch(ctx, "add_task", {"title": "kept"})
    with pytest.raises(SyncError, match=r"cannot reach the CalDAV server at http://127.0.0.1:9/x/ \(\w+\); nothing"):
        sync(store, "http://127.0.0.1:9/x/", USER, PASSWORD)
    with pytest.raises(SyncError, match="refused the user name or password"):
        sync(store, url, USER, "wrong")
    with pytest.raises(SyncError, match="no CalDAV task list is set"):
        sync_config(store, Config(caldav_url=None))
    shown = f"http://{USER}:{PASSWORD}@127.0.0.1:9/x/"
    with pytest.raises(SyncError) as e:
        sync_config(store, Config(caldav_url=shown))
    assert PASSWORD not in str(e.value)
    assert titles(store) == {"kept": "open"} and phone.todos(include_completed=True) == []


def test_a_reminder_reaches_the_phone_as_an_alarm_and_a_new_alarm_there_comes_back(ctx, store, tasklist):
    url, phone = tasklist
    dispatch(ctx, "add_task", {"title": "dentist", "due_date": "friday 3pm", "remind": "an hour before"})
    go(store, url)
    (alarm,) = phone_todos(phone)["dentist"].walk("VALARM")
    assert alarm["trigger"].dt == dt.datetime(2026, 12, 4, 14, 0).astimezone(dt.UTC)
    for obj in phone.todos(include_completed=True):  # the phone moves the alarm to two hours before
        ics = icalendar.Calendar.from_ical(obj.data)
        todo = next(c for c in ics.walk() if c.name == "VTODO")
        (alarm,) = todo.walk("VALARM")
        alarm.pop("trigger")
        alarm.add("trigger", dt.timedelta(hours=-2))
        todo.pop("last-modified", None)
        todo.add("last-modified", FAR_AHEAD)
        obj.data = ics.to_ical().decode()
        obj.save()
    assert go(store, url).received == 1
    assert exchange.all_tasks(store)[0]["remind_at"] == "2026-12-04T13:00"
