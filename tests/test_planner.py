"""The planner domain: fields, filters, the agenda, export and import, migrations (dates: test_dates.py)."""

import json
import re
import sqlite3

import pytest
from helpers import TODAY, call, clean_env, run, run_cli

from planner.storage import exchange, todotxt
from planner.storage.db import Store
from planner.storage.undoing import undo_last_turn
from planner.tools import ToolContext, dispatch
from planner.ui.commands import Stats, run_command
from planner.ui.outcomes import Usage

# ---------------------------------------------------------------- fields and filters


def titles(result):
    return [t["title"] for t in result["tasks"]]


def test_tags_are_cleaned_and_shown(planner):
    milk = run(planner, "list_tasks", text="milk")["tasks"][0]
    assert milk["tags"] == ["home", "shopping"]
    assert run(planner, "list_tasks", text="bank")["tasks"][0]["tags"] == ["money", "phone"]


@pytest.mark.parametrize(
    "filters, expected",
    [
        ({"tag": "money"}, ["file taxes", "call the bank"]),
        ({"tag": "money", "priority": "high", "due_before": "friday"}, ["file taxes", "call the bank"]),
        ({"tag": "money", "due_after": "today"}, ["call the bank"]),
        ({"overdue": True}, ["file taxes"]),
        ({"overdue": "true", "tag": "shopping"}, []),
        ({"text": "BRIDGES"}, ["read a book"]),  # notes too, any case
        ({"due_before": "end of month", "due_after": "2026-12-02"}, ["call the bank", "buy milk", "plan trip"]),
        (
            {"due_before": "end of month", "due_after": "2026-12-02", "sort": "due"},
            ["buy milk", "call the bank", "plan trip"],
        ),
        ({"status": "done", "tag": "home"}, ["old chore"]),
        ({"status": "all", "tag": "home"}, ["buy milk", "old chore"]),  # open first, most urgent first
        ({"sort": "priority"}, ["file taxes", "call the bank", "plan trip", "buy milk", "read a book"]),
        ({"sort": "title", "priority": "high"}, ["call the bank", "file taxes"]),
        ({"text": "100%_"}, []),  # LIKE wildcards are literal
    ],
)
def test_filters_combine(planner, filters, expected):
    assert titles(run(planner, "list_tasks", **filters)) == expected


def test_a_long_list_is_capped_with_how_many_more(ctx):
    for i in range(30):
        run(ctx, "add_task", title=f"t{i}")
    r = run(ctx, "list_tasks")
    assert len(r["tasks"]) == 20 and r["count"] == 30 and r["more"].startswith("10 more not shown")
    assert len(run(ctx, "list_tasks", limit=50)["tasks"]) == 30


def test_update_sets_and_clears_each_field(planner, store):
    tid = run(planner, "list_tasks", text="milk")["tasks"][0]["id"]
    r = run(planner, "update_task", id=tid, priority="medium", tags=["errands"], notes="semi-skimmed", due_time="6pm")
    assert r["updated"] | {"id": 0} == {
        "id": 0,
        "title": "buy milk",
        "due_date": "2026-12-02",
        "status": "open",
        "due_time": "18:00",
        "priority": "medium",
        "tags": ["errands"],
        "notes": "semi-skimmed",
    }
    r = run(planner, "update_task", id=tid, priority="none", tags=[], notes="", due_date="")
    assert r["updated"] == {"id": tid, "title": "buy milk", "due_date": None, "status": "open"}
    assert dispatch(planner, "update_task", {"id": tid})[0]["error"].startswith("give at least one thing to change")


def test_the_agenda_groups_overdue_today_and_the_coming_days(planner):
    run(planner, "add_task", title="standup", due_date="today", due_time="09:30")
    r = run(planner, "agenda")
    assert r["today"] == "Tuesday 2026-12-01"
    assert [t["title"] for t in r["overdue"]] == ["file taxes"]
    assert [(d["label"], d["date"], [t["title"] for t in d["tasks"]]) for d in r["days"]] == [
        ("today", "2026-12-01", ["standup"]),
        ("tomorrow", "2026-12-02", ["buy milk"]),
        ("Friday", "2026-12-04", ["call the bank"]),
    ]
    assert r["without_date"] == 1
    assert [d["date"] for d in run(planner, "agenda", days=30)["days"]][-1] == "2026-12-24"


def test_agenda_and_tasks_commands_show_the_fields(planner, fake, make_agent):
    agent = make_agent()
    text = run_command(agent, "/agenda", Stats())
    assert text.splitlines()[:3] == [
        "agenda from Tuesday 2026-12-01",
        "overdue",
        "     1  file taxes  !high +money  (was due 2026-11-20)",
    ]
    assert "tomorrow 2026-12-02\n     2  buy milk  +home +shopping" in text
    assert text.endswith("and 1 open task without a date (/tasks)")
    with pytest.raises(Usage) as bad:
        run_command(agent, "/agenda soon", Stats())
    assert bad.value.line() == "usage: /agenda [DAYS]" and bad.value.status == 2
    table = run_command(agent, "/tasks", Stats())
    assert next(line for line in table.splitlines() if "file taxes" in line).split()[-4:] == [
        "2026-11-20",
        "OVERDUE",
        "!high",
        "+money",
    ]


def test_fields_the_user_never_mentioned_are_left_out(fake, make_agent, store):
    # What a 0.5B model did with "add a task: buy a birthday card".
    invented = call(
        "add_task",
        title="Buy a birthday card",
        due_date="2026-12-02",
        due_time="14:00",
        priority="high",
        repeat="every monday",
        tags=["birthday"],
        notes="Buy a birthday card.",
    )
    fake.script("main", {"tool_calls": [invented]}, {"content": "Added."})
    r = make_agent(reflect=False, guards="small").run_turn("add a task: buy a birthday card")
    assert r.tool_calls[0]["result"]["added"] == {
        "id": 1,
        "title": "Buy a birthday card",
        "due_date": None,
        "status": "open",
    }
    # Each field left out is said in plain words, with its value, and nothing a model could read out
    # to the user is false or technical: no tool or argument names.
    note = r.tool_calls[0]["result"]["note"]
    for said in ('time "14:00"', 'priority "high"', 'tags "birthday"', 'note "Buy a birthday card."', "repeat "):
        assert f"the {said}" in note and "was not set: the request did not ask for it; say so to set it" in note
    assert 'no date was set ("2026-12-02" was not used): the request gave none; say a date to set one' in note
    assert not re.search(r"\w_\w|update_task|call |field", note)
    fake.script("main", {"tool_calls": [call("update_task", id=1, priority="high")]}, {"content": "Done."})
    make_agent(reflect=False, guards="small").run_turn("make the card urgent")
    assert store.conn().execute("SELECT priority FROM tasks").fetchone()[0] == "high"


@pytest.mark.parametrize(
    "said, sent, stored",
    [
        ("water the plants in 3 days", "2026-12-03", "2026-12-04"),  # the model's arithmetic, corrected
        ("dentist on jan 5", "2026-12-05", "2027-01-05"),
        ("dentist on jan 5", "2027-01-05", "2027-01-05"),  # right already
        ("dentist on jan 5", "jan 5", "2027-01-05"),  # words: the tool reads them
        ("dry cleaning tomorrow, flights on 2026-12-20", "2026-12-21", "2026-12-21"),  # two dates said: no guess
    ],
)
def test_a_date_the_model_worked_out_is_checked_against_the_users_words(fake, make_agent, store, said, sent, stored):
    fake.script("main", {"tool_calls": [call("add_task", title="it", due_date=sent)]}, {"content": "Added."})
    r = make_agent(reflect=False, guards="small").run_turn(said)
    assert r.tool_calls[0]["result"]["added"]["due_date"] == stored
    assert ("note" in r.tool_calls[0]["result"]) == (sent[:4].isdigit() and sent != stored)


def test_filters_the_user_never_asked_for_are_left_out(fake, make_agent, planner):
    # A 0.5B model asked "what is coming up?" listed with tag "personal", priority high and the question as text.
    sent = call("list_tasks", status="open", tag="personal", priority="high", text="What is coming up?", overdue=True)
    fake.script("main", {"tool_calls": [sent]}, {"content": ""})
    r = make_agent(reflect=False, guards="small").run_turn("What is coming up?")
    assert r.tool_calls[0]["arguments"] == {"status": "open"} and r.tool_calls[0]["result"]["count"] == 5
    note = r.tool_calls[0]["result"]["note"]  # said, so the model can set it right
    assert 'the list was not narrowed to the tag "personal": the request did not ask for that' in note
    assert "not narrowed to overdue tasks" in note and 'not narrowed to tasks mentioning "What is coming up?"' in note
    assert r.reply.startswith("Your open tasks: ")  # the model said nothing: the reply is built from the result
    fake.script("main", {"tool_calls": [call("list_tasks", tag="money", overdue=True)]}, {"content": "One."})
    r = make_agent(reflect=False, guards="small").run_turn("anything overdue tagged money?")
    assert [t["title"] for t in r.tool_calls[0]["result"]["tasks"]] == ["file taxes"]


def test_replies_built_from_agenda_query_and_lookup_results_are_words():
    from planner.agent.replies import describe

    agenda = {
        "today": "x",
        "overdue": [{"id": 1, "title": "taxes", "due_date": "2026-11-20", "status": "open"}],
        "days": [
            {
                "date": "2026-12-02",
                "label": "tomorrow",
                "tasks": [{"id": 2, "title": "milk", "due_date": "2026-12-02", "status": "open"}],
            }
        ],
        "without_date": 0,
    }
    assert "{" not in describe("agenda", agenda) and "tomorrow:" in describe("agenda", agenda)
    assert (
        describe("agenda", {"today": "x", "overdue": [], "days": [], "without_date": 0})
        == "Nothing is due in the coming days."
    )
    assert describe("query_planner", {"columns": ["n"], "rows": [[3]], "row_count": 1}) == "The answer is 3."
    assert describe("query_planner", {"columns": ["t"], "rows": [], "row_count": 0}) == "The query found nothing."
    assert (
        describe("lookup", {"title": "A", "summary": "A is a letter.", "url": "u", "note": "n"}) == "A is a letter. (u)"
    )


def test_the_model_drives_every_new_argument(fake, make_agent, store, ctx):
    fake.script(
        "main",
        {
            "tool_calls": [
                call(
                    "add_task",
                    title="dentist",
                    due_date="friday 3pm",
                    priority="high",
                    tags=["health"],
                    notes="bring the card",
                    repeat="every 6 months",
                )
            ]
        },
        {
            "tool_calls": [
                call(
                    "list_tasks",
                    tag="health",
                    priority="high",
                    due_before="end of month",
                    due_after="today",
                    overdue=False,
                    text="dent",
                    sort="priority",
                    limit=5,
                )
            ]
        },
        {
            "tool_calls": [
                call(
                    "update_task",
                    id=1,
                    due_date="next tuesday",
                    due_time="10:00",
                    priority="medium",
                    tags="health, teeth",
                    notes="",
                    repeat="yearly",
                )
            ]
        },
        {"tool_calls": [call("agenda", days=14)]},
        {"content": "All set."},
    )
    r = make_agent(reflect=False).run_turn(
        "dentist friday 3pm, high priority, tag it health, note: bring the card, every 6 months. "
        "Then move it to next tuesday 10:00, tags health and teeth, no note, yearly"
    )
    assert [c["ok"] for c in r.tool_calls] == [True] * 4, r.tool_calls
    added, listed, updated, agenda = (c["result"] for c in r.tool_calls)
    assert added["added"]["repeat"] == "every 6 months" and added["date_read_as"].endswith("Friday 2026-12-04 15:00")
    assert [t["id"] for t in listed["tasks"]] == [1]
    assert updated["updated"]["due_date"] == "2026-12-08" and updated["updated"]["tags"] == ["health", "teeth"]
    assert agenda["days"][0]["tasks"][0]["due_time"] == "10:00"
    row = dict(store.conn().execute("SELECT * FROM tasks").fetchone())
    assert (row["priority"], row["notes"], row["recurrence"]) == ("medium", None, "FREQ=YEARLY")


# ---------------------------------------------------------------- export and import


def everything(store):
    return [{k: v for k, v in t.items()} for t in exchange.all_tasks(store)]


def test_json_export_then_import_round_trips_everything_and_twice_adds_nothing(planner, store, tmp_path):
    text = exchange.export(store, "json")
    other = Store(tmp_path / "other.db")
    try:
        assert exchange.import_text(other, text, "json") == {"added": 6, "skipped": 0, "problems": []}
        assert everything(other) == everything(store)
        assert exchange.import_text(other, text, "json") == {"added": 0, "skipped": 6, "problems": []}
        assert len(everything(other)) == 6
    finally:
        other.close()


def test_todotxt_round_trips_what_todotxt_can_hold(planner, store, tmp_path):
    run(planner, "add_task", title="yoga", due_date="monday", due_time="07:15", repeat="every monday")
    text = exchange.export(store, "todotxt")
    lines = text.splitlines()
    assert lines[0].startswith("(A) ") and "@money due:2026-11-20 uid:" in lines[0]  # tags are @contexts
    assert lines[5].startswith("x 20") and lines[5].count("20") >= 2  # done: completion and creation dates
    assert "time:07:15 rec:FREQ=WEEKLY;BYDAY=MO" in lines[6]
    other = Store(tmp_path / "other.db")
    try:
        assert exchange.import_text(other, text, "todotxt")["added"] == 7
        keep = ("uid", "title", "status", "due_date", "due_time", "priority", "tags", "repeat")
        assert [{k: t[k] for k in keep} for t in everything(other)] == [
            {k: t[k] for k in keep} for t in everything(store)
        ]
        assert exchange.import_text(other, text, "todotxt")["added"] == 0
    finally:
        other.close()


def test_todotxt_from_another_program_imports_once_and_bad_lines_are_reported(store):
    text = "(B) 2026-11-01 Pay rent +home @phone due:2026-12-05\nx 2026-11-30 2026-11-02 Old thing\n(A)\n  \nFix bike due:2026-02-31\n"
    r = exchange.import_text(store, text, "todotxt")
    assert r["added"] == 2 and r["problems"] == [
        "line 3: title must not be empty",
        "line 5: due_date '2026-02-31' is not a date like 2026-12-04",
    ]
    tasks = everything(store)
    assert (tasks[0]["title"], tasks[0]["priority"], tasks[0]["list"], tasks[0]["tags"], tasks[0]["due_date"]) == (
        "Pay rent",
        "medium",
        "home",
        ["phone"],
        "2026-12-05",
    )  # fmt: skip  (a +project is the list, an @context a tag)
    assert tasks[1]["status"] == "done" and tasks[1]["completed_at"].startswith("2026-11-30")
    assert exchange.import_text(store, text, "todotxt")["added"] == 0


def test_an_import_is_one_undoable_turn(store):
    exchange.import_text(store, "a\nb\nc\n", "todotxt")
    assert len(undo_last_turn(store)) == 3 and everything(store) == []


def test_a_file_that_is_not_tasks_writes_nothing(store):
    assert exchange.import_text(store, "{not json", "json")["problems"][0].startswith("not a task file")
    r = exchange.import_text(
        store,
        json.dumps({"tasks": [{"title": "ok", "uid": "u1"}, {"title": "x", "status": "maybe", "uid": "u2"}, 5]}),
        "json",
    )
    assert r["added"] == 1 and len(r["problems"]) == 2 and [t["title"] for t in everything(store)] == ["ok"]


def test_export_and_import_from_the_command_line(planner, store, tmp_path):
    env = clean_env(PLANNER_HOME=str(tmp_path))
    out = tmp_path / "tasks.json"
    p = run_cli(["export", "-o", str(out)], env)
    assert (
        p.returncode == 0 and p.stderr == f"exported tasks to {out}\n" and json.loads(out.read_text())["version"] == 1
    )
    p = run_cli(["export", "--format", "ics"], env)
    assert p.stdout.startswith("BEGIN:VCALENDAR")
    fresh = tmp_path / "fresh.db"
    args = ["import", str(out), "--db", str(fresh)]
    p = run_cli(args, env)
    assert p.returncode == 0 and p.stderr == "imported 6 tasks, skipped 0 already there\n"
    p = run_cli(args, env)
    assert p.stderr == "imported 0 tasks, skipped 6 already there\n"
    p = run_cli(["import", str(tmp_path / "missing.txt")], env)
    assert p.returncode == 1 and p.stderr.startswith("error: cannot read") and "Traceback" not in p.stderr


# ---------------------------------------------------------------- migrations


def test_a_database_from_before_these_fields_is_upgraded_in_place(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE tasks (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, due_date TEXT, "
        "status TEXT NOT NULL DEFAULT 'open', created_at TEXT DEFAULT CURRENT_TIMESTAMP);"
        "INSERT INTO tasks (title, due_date, status) VALUES ('old task', '2026-12-03', 'open'), ('older', NULL, 'done');"
    )
    conn.close()
    store = Store(path)
    try:
        ctx = ToolContext(store=store, today=lambda: TODAY)
        old = run(ctx, "list_tasks", status="all")["tasks"]
        assert [t["title"] for t in old] == ["old task", "older"]
        run(ctx, "update_task", id=1, priority="high", tags=["kept"])
        assert run(ctx, "list_tasks", tag="kept")["tasks"][0]["priority"] == "high"
        uids = [r[0] for r in store.conn().execute("SELECT uid FROM tasks")]
        assert all(uids) and len(set(uids)) == 2
    finally:
        store.close()


def test_json_from_other_programs_imports_once_and_rec_uses_the_common_todotxt_form(store, tmp_path):
    rows = [{"title": "water plants", "due_date": "2026-12-04"}, {"title": "bad", "due_date": "next tuesday"}]
    r = exchange.import_text(store, json.dumps(rows), "json")
    assert r["added"] == 1 and r["problems"] == ["task 2: due_date 'next tuesday' is not a date like 2026-12-04"]
    assert exchange.import_text(store, json.dumps(rows[:1]), "json")["skipped"] == 1  # the same uid again
    assert todotxt.to_rec("FREQ=WEEKLY") == "1w" and todotxt.to_rec("FREQ=MONTHLY;INTERVAL=2") == "2m"
    assert todotxt.to_rec("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR") == "1b"
    assert todotxt.to_rec("FREQ=WEEKLY;BYDAY=MO,TH") == "FREQ=WEEKLY;BYDAY=MO,TH"  # no short form: the rule
    for rec in ("1w", "+1w", "2m", "1b", "3d", "1y", "FREQ=WEEKLY;BYDAY=MO,TH"):
        assert todotxt.to_rec(todotxt.from_rec(rec)) == rec.lstrip("+")
    line = todotxt.parse_line("pay rent due:2027-01-01 rec:+1m")
    assert line["repeat"] == "FREQ=MONTHLY" and line["title"] == "pay rent"
