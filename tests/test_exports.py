"""Exports say what they cannot hold: each format writes every field it has a place for (iCalendar CREATED;
Taskwarrior its own attributes and UDAs for the rule, the reminder and the estimate, so `task import` /
`task export` keeps them; todo.txt its key:value extensions), and a line on stderr names what was left out,
per field, with a count. `tasks --json` gives every match, or says how many more.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
from helpers import clean_env, run, run_cli

from planner.storage import exchange
from planner.storage.db import Store
from planner.storage.urgency import urgency


def seeded(ctx) -> None:
    run(
        ctx,
        "add_task",
        title="gym",
        due_date="2026-12-07",
        repeat="every monday and thursday",
        remind="2026-12-07 07:30",
        estimate="45m",
        notes="bring the towel",
        list="health",
        tags=["body"],
    )
    run(ctx, "add_task", title="rent", due_date="2026-12-15", repeat="monthly on the 15th")
    run(ctx, "add_task", title="step", parent=1)


def fields(store, keys) -> list[dict]:
    return [{k: t[k] for k in keys} for t in exchange.all_tasks(store, with_copies=False)]


KEEP = ("title", "repeat", "remind_at", "estimate_minutes", "list", "tags", "due_date", "parent", "created_at")


@pytest.mark.parametrize("fmt", ["taskwarrior", "ics", "json"])
def test_a_round_trip_keeps_the_rule_the_reminder_the_estimate_and_the_age(ctx, store, tmp_path, fmt):
    seeded(ctx)
    with store.write() as conn:  # created a year ago: the age urgency counts must survive the trip
        conn.execute("UPDATE tasks SET created_at = '2025-12-01T09:00:00'")
    fresh = Store(tmp_path / "fresh.db")
    report = exchange.export_report(store, fmt)
    assert report.left_out == {} and report.odd == []
    assert exchange.import_text(fresh, report.text, fmt)["problems"] == []
    assert fields(fresh, KEEP) == fields(store, KEEP)
    today = __import__("datetime").date(2026, 12, 1)
    assert [urgency(t, today) for t in exchange.all_tasks(fresh)] == [
        urgency(t, today) for t in exchange.all_tasks(store)
    ]


def test_todotxt_writes_its_extensions_and_names_what_it_has_no_place_for(ctx, store, tmp_path):
    seeded(ctx)
    report = exchange.export_report(store, "todotxt")
    assert "remind:2026-12-07T07:30" in report.text and "est:45m" in report.text and "parent:" in report.text
    assert report.lines("todotxt") == ["todotxt has no place for notes: left out of 1 task"]
    fresh = Store(tmp_path / "fresh.db")
    exchange.import_text(fresh, report.text, "todotxt")
    keys = ("title", "repeat", "remind_at", "estimate_minutes", "parent")
    assert fields(fresh, keys) == fields(store, keys)


def test_export_says_on_stderr_what_it_left_out(tmp_path):
    env = clean_env(PLANNER_HOME=str(tmp_path))
    run_cli(["--today", "2026-12-01", "add", "call the bank", "friday"], env)
    run_cli(["note", "1", "ask about the fee"], env)
    p = run_cli(["export", "--format", "todotxt"], env)
    assert p.returncode == 0 and "call the bank" in p.stdout
    assert re.fullmatch(r"todotxt has no place for (later )?notes: left out of 1 task\n", p.stderr), p.stderr
    store = Store(tmp_path / "planner.db")
    with store.write() as conn:
        conn.execute("UPDATE tasks SET due_date = '2026-02-30'")  # as another tool might have written it
    store.close()
    p = run_cli(["export", "--format", "ics"], env)
    assert p.returncode == 0 and "call the bank" in p.stdout
    assert "its due_date '2026-02-30' is not a date; left out" in p.stderr


@pytest.mark.skipif(shutil.which("task") is None, reason="Taskwarrior is not installed (.ci/run installs it)")
def test_the_real_taskwarrior_keeps_the_rule_reminder_and_estimate_through_its_own_round_trip(ctx, store, tmp_path):
    seeded(ctx)
    env = {**os.environ, "TASKDATA": str(tmp_path / "tw"), "TASKRC": str(tmp_path / "taskrc")}
    (tmp_path / "taskrc").write_text("confirmation=off\nverbose=nothing\n")  # recurrence on: it makes instances
    (tmp_path / "tw").mkdir()
    exported = exchange.export(store, "taskwarrior")
    subprocess.run(["task", "import", "-"], input=exported, text=True, env=env, check=True, capture_output=True)
    back = subprocess.run(["task", "export"], text=True, env=env, check=True, capture_output=True).stdout
    fresh = Store(tmp_path / "fresh.db")
    assert exchange.import_text(fresh, back, "taskwarrior")["problems"] == []
    keys = ("title", "repeat", "remind_at", "estimate_minutes", "list", "tags")
    by_title = lambda s: sorted(fields(s, keys), key=lambda t: t["title"])  # noqa: E731
    assert by_title(fresh) == by_title(store)


def test_tasks_json_returns_every_match_or_says_how_many_more(tmp_path):
    env = clean_env(PLANNER_HOME=str(tmp_path))
    rows = [{"title": f"task {n}"} for n in range(200)]
    (tmp_path / "many.json").write_text(json.dumps(rows))
    assert run_cli(["import", str(tmp_path / "many.json")], env).returncode == 0
    p = run_cli(["tasks", "--json"], env)
    out = json.loads(p.stdout)
    assert p.returncode == 0 and len(out["tasks"]) == 200 and out["count"] == 200 and "more" not in out
    p = run_cli(["tasks", "--json", "--limit", "50"], env)
    out = json.loads(p.stdout)
    assert (len(out["tasks"]), out["more"]) == (
        50,
        150,
    ) and p.stderr == "150 more tasks match; --limit 200 gives them all\n"
    assert "--limit N" in run_cli(["tasks", "--help"], env).stdout
