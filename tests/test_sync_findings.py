"""The sync keeps everything other apps write and never deletes on a glitch: one test per finding.

Real parts where they exist: Radicale as the server and the `caldav` library as a phone that writes
what todoman, tasks.org and Apple Reminders write; a scripted hostile server (hostile_dav.py) for the
faults a real server only shows now and then.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sqlite3
import subprocess
import sys

import icalendar
import pytest
from helpers import ROOT, TODAY, clean_env, run_cli
from hostile_dav import HostileDav, vtodo
from phone import LONG_AGO, PASSWORD, USER, add, edit, new_list, put_text, raw, save_raw, todos

from planner.policy import Door
from planner.storage import exchange
from planner.storage.undoing import undo_last_turn
from planner.sync.runner import SyncError, sync
from planner.tools import dispatch


def go(store, url, user=USER, password=PASSWORD, **kw):
    """One sync as the planner does it."""
    return sync(store, url, user, password, today=lambda: TODAY, **kw)


def tasks_here(store) -> dict[str, dict]:
    return {t["title"]: t for t in exchange.all_tasks(store)}


def cli(env, *args, timeout=60, process=False):
    return run_cli(args, env, timeout=timeout, process=process)


# ---------------------------------------------------------------- what other apps wrote


TODOMAN = [
    "DTSTART;TZID=Europe/Lisbon:20261203T090000",
    "DUE;VALUE=DATE:20261210",
    "LOCATION:Rua Augusta 12\\, Lisboa",
    "URL:https://example.org/ticket/7",
    "GEO:38.7;-9.14",
    "CLASS:PRIVATE",
    "SEQUENCE:3",
    "ATTENDEE;CN=Ana:mailto:ana@example.org",
    "X-APPLE-SORT-ORDER:12",
    "RELATED-TO;RELTYPE=SIBLING:other@phone.example",
    "STATUS:IN-PROCESS",
    "PERCENT-COMPLETE:40",
    "BEGIN:VALARM",
    "ACTION:AUDIO",
    "TRIGGER;RELATED=END:-PT15M",
    "END:VALARM",
]


def test_an_edit_here_keeps_every_property_another_app_wrote(ctx, store, tasklist):
    url, phone = tasklist
    put_text(phone, "fix-bike.ics", vtodo("fix-bike@phone.example", "fix the bike", *TODOMAN))
    go(store, url)
    task = tasks_here(store)["fix the bike"]
    assert (task["start_date"], task["due_date"], task["status"]) == ("2026-12-03", "2026-12-10", "open")
    dispatch(ctx, "update_task", {"id": 1, "priority": "high"})
    assert go(store, url).sent == 1
    after = raw(phone, "fix the bike")
    for line in TODOMAN:
        if not line.startswith("SEQUENCE"):
            assert line in after, line  # byte for byte, parameters included
    assert "PRIORITY:1" in after and "SEQUENCE:4" in after  # ours changed, and the revision counted
    assert "BEGIN:VTIMEZONE\nTZID:Europe/Lisbon" in after  # the zone DTSTART names stays with it


def test_a_foreign_todo_survives_import_edit_and_export(ctx, store, tmp_path):
    path = tmp_path / "todoman.ics"
    path.write_text(vtodo("fix-bike@phone.example", "fix the bike", *TODOMAN))
    assert exchange.import_text(store, path.read_text(), "ics")["added"] == 1
    dispatch(ctx, "update_task", {"id": 1, "title": "fix the bike brakes"})
    out = exchange.export(store, "ics").replace("\r\n ", "")
    assert "SUMMARY:fix the bike brakes" in out
    assert all(line in out for line in TODOMAN if not line.startswith("SEQUENCE"))


# ---------------------------------------------------------------- glitches delete nothing


def test_one_empty_listing_deletes_nothing_and_the_recovered_server_adds_nothing_twice(store):
    with HostileDav() as server:
        for n in range(6):
            server.todos[f"/tasks/t{n}.ics"] = vtodo(f"t{n}@x", f"task {n}")
        go(store, server.url)
        before = [dict(r) for r in store.conn().execute("SELECT id, uid, title FROM tasks ORDER BY id")]
        server.empty_listings = 1
        report = go(store, server.url)
        assert report.deleted_here == 0 and report.kept and "listed no to-dos" in report.kept[0]
        again = go(store, server.url)
        assert (again.received, again.deleted_here, again.sent) == (0, 0, 0)
        assert [dict(r) for r in store.conn().execute("SELECT id, uid, title FROM tasks ORDER BY id")] == before


def test_a_replaced_collection_at_the_same_address_asks_before_deleting(store):
    with HostileDav() as server:
        server.todos["/tasks/a.ics"] = vtodo("a@x", "only one")
        go(store, server.url)
        server.replace()
        asked = []
        report = go(store, server.url, door=Door("sync", ask=lambda q: asked.append(q) or False))
        assert asked and "replaced" in asked[0] and '"only one"' in asked[0]
        assert report.deleted_here == 0 and "only one" in tasks_here(store)


def test_more_than_three_deletions_in_one_sync_ask_and_yes_allows_them(ctx, store, tasklist):
    url, phone = tasklist
    for n in range(5):
        add(phone, f"chore {n}")
    add(phone, "kept")
    go(store, url)
    for obj in phone.todos(include_completed=True):
        if "chore" in obj.data:
            obj.delete()
    refused = go(store, url)  # nobody to ask: refused in one line, nothing deleted
    assert refused.deleted_here == 0 and "run `sync --yes`" in refused.kept[0]
    assert go(store, url, door=Door("sync", yes=True)).deleted_here == 5


def test_undoing_a_sync_never_deletes_on_the_phone(store, tasklist):
    url, phone = tasklist
    for title in ("a", "b", "c"):
        add(phone, title)
    assert go(store, url).received == 3
    assert len(undo_last_turn(store)) == 3 and tasks_here(store) == {}
    report = go(store, url)
    assert report.deleted_there == 0 and set(todos(phone)) == {"a", "b", "c"}
    assert report.received == 3  # what the undone sync received comes back


def test_an_edit_here_during_a_sync_beats_a_deletion_there(ctx, store, tasklist):
    url, phone = tasklist
    dispatch(ctx, "add_task", {"title": "keep me"})
    go(store, url)
    next(iter(phone.todos(include_completed=True))).delete()

    def edit_meanwhile(done, total):  # the user edits the task while the sync runs
        if done == 1:
            writer = dataclasses.replace(ctx, turn="meanwhile")
            assert dispatch(writer, "update_task", {"id": 1, "notes": "edited during the sync"})[1]

    report = go(store, url, progress=edit_meanwhile)
    assert report.deleted_here == 0 and tasks_here(store)["keep me"]["notes"] == "edited during the sync"
    go(store, url)
    assert "keep me" in todos(phone)  # and the edit goes back to the phone


# ---------------------------------------------------------------- one odd to-do is one line


ODD = {
    "rrule-twice": vtodo("rrule-twice@x", "rrule twice", "RRULE:FREQ=WEEKLY", "RRULE:FREQ=DAILY"),
    "completed-twice": vtodo(
        "completed-twice@x",
        "completed twice",
        "STATUS:COMPLETED",
        "COMPLETED:20261101T100000Z",
        "COMPLETED:20261102T100000Z",
    ),
    "modified-twice": vtodo(
        "modified-twice@x", "modified twice", "LAST-MODIFIED:20261101T100000Z", "LAST-MODIFIED:20261102T100000Z"
    ),
    "alarm-9999": vtodo(
        "alarm-9999@x",
        "alarm far away",
        "DUE;VALUE=DATE:20261210",
        "BEGIN:VALARM",
        "ACTION:DISPLAY",
        "TRIGGER;VALUE=DATE-TIME:99991231T235959Z",
        "END:VALARM",
    ),
    "no-uid": vtodo(None, "no uid"),
    "bad-due": vtodo("bad-due@x", "bad due", "DUE:tomorrowish"),
}


def test_odd_todos_are_one_line_each_and_the_rest_syncs(store):
    with HostileDav() as server:
        for name, text in ODD.items():
            server.todos[f"/tasks/{name}.ics"] = text
        server.todos["/tasks/fine.ics"] = vtodo("fine@x", "a fine one")
        report = go(store, server.url)
        here = tasks_here(store)
        assert {"a fine one", "completed twice", "modified twice", "alarm far away"} <= set(here)
        assert here["completed twice"]["completed_at"].startswith("2026-11-02")  # the latest
        assert here["alarm far away"]["remind_at"] is None  # an alarm past 9000 is no reminder, and is kept
        lines = "\n".join(report.problems)
        assert "rrule-twice@x not read: it has 2 different RRULE values" in lines
        assert "no-uid.ics not read: it has no UID" in lines
        assert "bad-due@x not read: its DUE cannot be read" in lines and "cannot reach" not in lines
        assert len(report.problems) == 3
        assert go(store, server.url).problems == report.problems  # tried again, said again, nothing else


def test_a_500_and_server_text_with_escapes_are_one_escaped_line_and_exit_1(tmp_path):
    env = clean_env(PLANNER_HOME=str(tmp_path))
    with HostileDav() as server:
        server.fail["REPORT"] = (500, "disk on fire \x1b[31m red")
        env["PLANNER_CALDAV_URL"] = server.url
        p = cli(env, "sync")
        assert p.returncode == 1 and "Traceback" not in p.stderr and "\x1b" not in p.stderr
        assert p.stderr.startswith("error: REPORT") and "500" in p.stderr and "\\x1b[31m" in p.stderr
        assert p.stderr.count("\n") == 1
        del server.fail["REPORT"]
        cli(env, "--today", "2026-12-01", "import", str(_todo_file(tmp_path, "\x1b]0;pwned\x07title")))
        server.fail["PUT"] = (500, "no space left")
        p = cli(env, "sync")
        assert p.returncode == 1 and "not synced:" in p.stderr and "no space left" in p.stderr
        assert "\x1b" not in p.stderr and "\x07" not in p.stderr and "Traceback" not in p.stderr
        assert (tmp_path / "agent.log").exists() and "sync" in (tmp_path / "agent.log").read_text()


def _todo_file(tmp_path, title):
    path = tmp_path / "one.json"
    path.write_text(exchange.to_json([{"uid": "u1", "title": title, "status": "open", "tags": []}]))
    return path


def test_a_server_that_trickles_is_given_up_at_the_deadline(tmp_path):
    env = clean_env(PLANNER_HOME=str(tmp_path), PLANNER_CALDAV_TIMEOUT="1")
    with HostileDav() as server:
        server.trickle = 0.2  # a byte every 0.2 s: no single read ever times out
        env["PLANNER_CALDAV_URL"] = server.url
        p = cli(env, "sync", timeout=30, process=True)  # its stalled reader is a daemon thread: exit ends it
    assert p.returncode == 1 and "did not answer within 1 s" in p.stderr and "Traceback" not in p.stderr


def test_a_redirect_to_another_server_is_refused_and_the_password_not_sent(store):
    with HostileDav() as server, HostileDav() as other:
        server.redirect = other.url
        with pytest.raises(SyncError, match="redirects to another server"):
            go(store, server.url)
        assert other.requests == []


def test_a_wrong_password_and_a_missing_list_are_one_line_and_create_makes_the_list(store, radicale):
    with pytest.raises(SyncError, match="refused the user name or password"):
        go(store, f"{radicale}/{USER}/nothing-here/", password="wrong")
    with pytest.raises(SyncError, match=r"no task list at .*; create it with `python agent.py sync --create`"):
        go(store, f"{radicale}/{USER}/new-list/")
    assert go(store, f"{radicale}/{USER}/new-list/", create=True).problems == []
    go(store, f"{radicale}/{USER}/new-list/")  # it is there now


def test_two_syncs_at_once_wait_for_each_other_without_a_traceback(store, tmp_path, tasklist):
    url, _ = tasklist
    env = clean_env(
        PLANNER_HOME=str(tmp_path), PLANNER_CALDAV_URL=url, PLANNER_CALDAV_USER=USER, PLANNER_CALDAV_PASSWORD=PASSWORD
    )
    with store.exclusive("sync"):  # a first sync holds the database's sync lock
        second = subprocess.Popen(
            [sys.executable, str(ROOT / "agent.py"), "sync", "--db", str(store.path)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert second.stderr.readline().startswith("another sync of this database is running; waiting")
    assert second.wait(60) == 0 and "Traceback" not in second.stderr.read()


def test_a_password_in_the_url_is_never_stored(store, tmp_path, tasklist):
    url, _ = tasklist
    secret_url = url.replace("http://", f"http://{USER}:{PASSWORD}@")
    go(store, secret_url, user=None, password=None)
    store.close()
    copy = b"".join(p.read_bytes() for p in tmp_path.glob("planner.db*"))
    assert PASSWORD.encode() not in copy
    check = sqlite3.connect(tmp_path / "planner.db")
    urls = [v for (v,) in check.execute("SELECT value FROM sync_meta WHERE key LIKE 'url%'")]
    assert urls and all("@" not in v and v.startswith("http://") for v in urls)


def test_an_old_database_loses_the_password_it_stored(tmp_path):
    from planner.storage import migrations

    conn = sqlite3.connect(tmp_path / "old.db")
    for step in migrations.MIGRATIONS[:9]:
        step(conn)
    conn.execute("INSERT INTO sync_meta VALUES ('url', 'https://ana:secret@cloud.example/dav/tasks/')")
    conn.execute("PRAGMA user_version = 9")
    conn.commit()
    migrations.MIGRATIONS[9](conn)
    assert conn.execute("SELECT value FROM sync_meta").fetchone()[0] == "https://cloud.example/dav/tasks/"


# ---------------------------------------------------------------- the status set of other apps


def test_cancelled_is_its_own_status_and_dtstart_is_a_start_date(store, tasklist):
    url, phone = tasklist
    add(phone, "cancelled trip", status="CANCELLED")
    add(phone, "starts friday", dtstart=dt.date(2026, 12, 4))
    go(store, url)
    here = tasks_here(store)
    assert here["cancelled trip"]["status"] == "cancelled"
    assert (here["starts friday"]["start_date"], here["starts friday"]["due_date"]) == ("2026-12-04", None)
    assert dispatch_open_titles(store) == ["starts friday"]


def dispatch_open_titles(store):
    from planner.tools import ToolContext

    out, _ = dispatch(ToolContext(store=store, today=lambda: TODAY), "list_tasks", {})
    return [t["title"] for t in out["tasks"]]


def test_a_repeat_completed_todoman_style_leaves_one_open_occurrence_on_both_sides(ctx, store, tasklist):
    url, phone = tasklist
    dispatch(ctx, "add_task", {"title": "water the plants", "due_date": "2026-12-03", "repeat": "every week"})
    go(store, url)
    # todoman: the done occurrence saved as a copy (new UID, COMPLETED), the rule moved forward on the original.
    original = todos(phone)["water the plants"]
    copy = icalendar.Todo.from_ical(original.to_ical())
    copy.pop("uid")
    copy.add("uid", "copy-1@todoman")
    copy.pop("rrule")
    copy.pop("status")
    copy.add("status", "COMPLETED")
    copy.add("completed", dt.datetime(2026, 12, 3, 18, 0, tzinfo=dt.UTC))
    save_raw(phone, copy)
    edit(phone, "water the plants", uid=str(original["uid"]), due=dt.date(2026, 12, 10))
    go(store, url)
    go(store, url)
    here = sorted((t["due_date"], t["status"]) for t in exchange.all_tasks(store))
    assert here == [("2026-12-03", "done"), ("2026-12-10", "open")]
    there = sorted(
        (o.icalendar_component["due"].dt, str(o.icalendar_component["status"]))
        for o in phone.todos(include_completed=True)
    )
    assert there == [(dt.date(2026, 12, 3), "COMPLETED"), (dt.date(2026, 12, 10), "NEEDS-ACTION")]


def test_both_sides_edit_one_task_and_both_fields_survive(ctx, store, tasklist):
    url, phone = tasklist
    dispatch(ctx, "add_task", {"title": "water the plants", "due_date": "2026-12-03"})
    go(store, url)
    dispatch(ctx, "update_task", {"id": 1, "priority": "high"})  # here: the priority
    edit(phone, "water the plants", due=dt.date(2026, 12, 5))  # there: the date
    report = go(store, url)
    assert tasks_here(store)["water the plants"]["priority"] == "high"
    assert tasks_here(store)["water the plants"]["due_date"] == "2026-12-05"
    phone_copy = todos(phone)["water the plants"]
    assert phone_copy["priority"] == 1 and phone_copy["due"].dt == dt.date(2026, 12, 5)
    assert report.merged and "priority from here" in report.merged[0] and "due_date" in report.merged[0]


def test_one_field_changed_on_both_sides_keeps_the_newer_and_undo_brings_back_ours(ctx, store, tasklist):
    url, phone = tasklist
    dispatch(ctx, "add_task", {"title": "dentist"})
    go(store, url)
    dispatch(ctx, "update_task", {"id": 1, "notes": "ours"})
    edit(phone, "dentist", modified=LONG_AGO, description="theirs, older")
    report = go(store, url)
    assert report.conflicts == ['"dentist": ours (notes)']
    assert str(todos(phone)["dentist"]["description"]) == "ours"
    assert any("notes ours → theirs, older" in line for line in undo_last_turn(store))


# ---------------------------------------------------------------- what others read


def test_exported_reminders_have_value_date_time(ctx, store):
    dispatch(ctx, "add_task", {"title": "dentist", "due_date": "friday 3pm", "remind": "an hour before"})
    text = exchange.export(store, "ics")
    assert "TRIGGER;VALUE=DATE-TIME:20261204T" in text


def test_the_sync_command_is_one_line_with_and_without_a_url(tmp_path):
    env = clean_env(PLANNER_HOME=str(tmp_path))
    p = cli(env, "sync")
    assert p.returncode == 1 and p.stderr.startswith("error: no CalDAV task list is set")
    p = cli(env, "sync", "--help")
    assert p.returncode == 0 and "PLANNER_CALDAV_URL" in p.stdout


@pytest.mark.slow
def test_every_new_task_reaches_a_fresh_list_in_one_sync_with_progress_for_each(store, radicale):
    # Nothing in the sync counts past a few: 50 shows the property; `python -m bench files` times 500.
    n = 50
    url, phone = new_list(radicale)
    with store.write() as conn:
        conn.executemany("INSERT INTO tasks (title, uid) VALUES (?, ?)", [(f"task {i}", f"u{i}") for i in range(n)])
    seen = []
    report = go(store, url, progress=lambda done, total: seen.append((done, total)))
    assert report.sent == n and len(phone.todos(include_completed=True)) == n
    assert seen[-1] == (n, n) and len(seen) >= n  # progress for every task
