"""The tool registry, argument validation and every task tool's behaviour."""

import json

import pytest
from helpers import TODAY, tasks
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.tools import READ_ONLY_TOOLS, TOOLS, dispatch, tool_specs
from planner.tools import task_tools as tools


def run(ctx, name, **args):
    result, ok = dispatch(ctx, name, args)
    json.dumps(result)  # every result is JSON the model can read
    return result


def test_the_promised_tools_are_registered_with_their_arguments():
    specs = {s["function"]["name"]: s["function"]["parameters"] for s in tool_specs()}
    assert set(specs) == {
        "add_task",
        "list_tasks",
        "complete_task",
        "update_task",
        "delete_task",
        "cancel_task",
        "reopen_task",
        "list_lists",
        "rename_list",
        "plan_day",
        "find_time",
        "schedule_task",
        "add_event",
        "add_preference",
        "agenda",
        "get_today",
        "remember",
        "recall",
        "forget",
        "query_planner",
        "lookup",
    }
    assert specs["add_task"]["required"] == ["title"]
    new = {"due_time", "priority", "tags", "notes", "repeat", "remind"}  # optional, so old calls still work
    new |= {"start_date", "list", "estimate", "parent"}
    assert set(specs["add_task"]["properties"]) == {"title", "due_date"} | new
    assert specs["list_tasks"]["properties"]["status"]["enum"] == ["open", "waiting", "done", "cancelled", "all"]
    assert specs["list_tasks"]["required"] == []
    filters = {"status", "tag", "priority", "due_before", "due_after", "overdue", "text", "sort", "limit"}
    assert set(specs["list_tasks"]["properties"]) == filters | {"list", "parent"}
    assert set(specs["update_task"]["properties"]) == {"id", "title", "due_date", "add_note"} | new
    assert specs["update_task"]["required"] == ["id"]
    assert specs["recall"]["required"] == ["query"]
    assert specs["query_planner"]["required"] == ["sql"] and specs["lookup"]["required"] == ["topic"]
    assert READ_ONLY_TOOLS == {
        "list_tasks",
        "list_lists",
        "agenda",
        "get_today",
        "recall",
        "query_planner",
        "lookup",
        "plan_day",
        "find_time",
    }


def test_tool_decorator_returns_the_function_unchanged():
    def probe(ctx):
        """Probe."""
        return {}

    try:
        assert tools.tool()(probe) is probe
        assert TOOLS["probe"].description == "Probe."
    finally:
        del TOOLS["probe"]


def test_descriptions_carry_no_concrete_dates_a_model_could_copy():
    text = json.dumps(tool_specs())
    assert not __import__("re").search(r"\d{4}-\d{2}-\d{2}", text)


def test_add_task_stores_title_and_date_and_returns_the_id(ctx, store):
    r = run(ctx, "add_task", title="  buy milk ", due_date="2026-12-05")
    assert r == {"added": {"id": 1, "title": "buy milk", "due_date": "2026-12-05", "status": "open"}}
    assert tasks(store) == [{"id": 1, "title": "buy milk", "due_date": "2026-12-05", "status": "open"}]


def test_add_task_without_date_and_with_null_date(ctx, store):
    run(ctx, "add_task", title="a")
    run(ctx, "add_task", title="b", due_date=None)
    assert [t["due_date"] for t in tasks(store)] == [None, None]


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ("2026-02-30", "not a real calendar date"),
        ("2026-13-01", "not a real calendar date"),
        ("someday maybe", "cannot read 'someday maybe' as a date"),
        ("may", "cannot read"),
        ("12/05/2026", "could mean Tuesday 2026-05-12 or Saturday 2026-12-05"),
        ("next friday", "could mean Friday 2026-12-04 or Friday 2026-12-11; ask the user which"),
    ],
)
def test_dates_that_are_not_dates_or_are_ambiguous_are_errors(ctx, store, bad, fragment):
    r = run(ctx, "add_task", title="x", due_date=bad)
    assert r["error"].startswith("due_date: ") and fragment in r["error"]
    assert tasks(store) == []


def test_a_date_phrase_is_resolved_in_code_and_echoed(ctx, store):
    r = run(ctx, "add_task", title="dentist", due_date="friday 3pm")
    assert r["added"]["due_date"] == "2026-12-04" and r["added"]["due_time"] == "15:00"
    assert r["date_read_as"] == "'friday 3pm' -> Friday 2026-12-04 15:00"
    assert "date_read_as" not in run(ctx, "add_task", title="iso", due_date="2026-12-09")


@pytest.mark.parametrize("title", ["", "   ", "x" * 501])
def test_add_task_rejects_empty_or_huge_titles(ctx, store, title):
    assert "error" in run(ctx, "add_task", title=title)
    assert tasks(store) == []


def test_non_ascii_and_control_characters_are_stored_faithfully(ctx, store):
    title = "café ☕ 日本 \x07bell"
    run(ctx, "add_task", title=title)
    assert tasks(store)[0]["title"] == title


def test_unknown_tool_error_names_it_lists_real_ones_and_suggests(ctx):
    r = run(ctx, "rename_task", id=1, title="x")
    assert "rename_task" in r["error"] and "Use update_task" in r["error"]
    for name in TOOLS:  # every tool offered here, and only those (lookup needs --web)
        assert (name in r["error"]) is (name != "lookup")


@pytest.mark.parametrize(
    "args, fragment",
    [
        ({}, "needs the argument 'title'"),
        ({"title": "x", "colour": "red"}, "no argument 'colour'"),
        ({"title": "x", "priority": "urgent"}, 'must be one of "high", "medium", "low"'),
        ({"title": "x", "tags": [1]}, "must be a list of strings"),
        ({"title": "x", "repeat": "sometimes"}, "repeat: cannot read 'sometimes' as a repeat"),
        ({"title": "x", "due_time": "25:00"}, "due_time: "),
        ({"title": 5}, "must be a string"),
        ({"title": ["x"]}, "must be a string"),
    ],
)
def test_bad_arguments_come_back_as_errors_that_say_what_to_fix(ctx, store, args, fragment):
    r, ok = dispatch(ctx, "add_task", args)
    assert not ok and fragment in r["error"]
    assert tasks(store) == []


def test_arguments_sent_as_a_json_string_are_accepted(ctx, store):
    r, ok = dispatch(ctx, "add_task", '{"title": "tea"}')
    assert ok and tasks(store)[0]["title"] == "tea"
    r, ok = dispatch(ctx, "add_task", "{not json")
    assert not ok and "JSON object" in r["error"]


def test_status_outside_the_enum_is_an_error(ctx):
    r = run(ctx, "list_tasks", status="pending")
    assert "one of" in r["error"] and '"open"' in r["error"]


def test_integer_ids_sent_as_strings_are_accepted(ctx, store):
    run(ctx, "add_task", title="a")
    assert run(ctx, "complete_task", id="1")["completed"]["status"] == "done"


@pytest.mark.parametrize("bad_id", ["one", 1.5, True, None, "", [1]])
def test_ids_that_are_not_integers_are_rejected(ctx, store, bad_id):
    run(ctx, "add_task", title="a")
    r = run(ctx, "complete_task", id=bad_id)
    assert "error" in r
    assert tasks(store)[0]["status"] == "open"


def test_an_id_that_does_not_exist_is_an_error_that_points_to_list_tasks(ctx):
    r = run(ctx, "complete_task", id=9)
    assert "no task with id=9" in r["error"] and "list_tasks" in r["error"]


def test_list_tasks_filters_by_status_and_sorts_by_due_date(ctx):
    run(ctx, "add_task", title="late", due_date="2026-12-09")
    run(ctx, "add_task", title="nodate")
    run(ctx, "add_task", title="soon", due_date="2026-12-02")
    run(ctx, "complete_task", id=1)
    assert [t["title"] for t in run(ctx, "list_tasks")["tasks"]] == ["soon", "nodate"]
    assert [t["title"] for t in run(ctx, "list_tasks", status="done")["tasks"]] == ["late"]
    r = run(ctx, "list_tasks", status="all")
    assert r["count"] == 3 and all("id" in t for t in r["tasks"])


def test_completing_twice_says_already_done(ctx):
    run(ctx, "add_task", title="a")
    run(ctx, "complete_task", id=1)
    assert "already_done" in run(ctx, "complete_task", id=1)


def test_update_task_renames_moves_and_clears_the_date(ctx, store):
    run(ctx, "add_task", title="a", due_date="2026-12-05")
    r = run(ctx, "update_task", id=1, title="b")
    assert r["updated"]["title"] == "b" and r["before"]["title"] == "a"
    run(ctx, "update_task", id=1, due_date="2026-12-24")
    assert tasks(store)[0]["due_date"] == "2026-12-24"
    run(ctx, "update_task", id=1, due_date="")
    assert tasks(store)[0] == {"id": 1, "title": "b", "due_date": None, "status": "open"}


def test_update_task_needs_something_to_change_and_validates_it(ctx, store):
    run(ctx, "add_task", title="a", due_date="2026-12-05")
    assert "error" in run(ctx, "update_task", id=1)
    assert "error" in run(ctx, "update_task", id=1, title="b", due_date="2026-02-30")
    assert tasks(store)[0]["title"] == "a"  # nothing half-applied


def test_delete_is_refused_when_nobody_can_confirm(ctx, store):
    run(ctx, "add_task", title="a")
    r = run(ctx, "delete_task", id=1)
    assert "needs the user's yes" in r["error"] and "--yes" in r["error"]
    assert len(tasks(store)) == 1


def test_delete_asks_and_respects_the_answer(ctx, store):
    run(ctx, "add_task", title="a")
    asked = []
    ctx.confirm = lambda q: asked.append(q) or False
    assert "declined" in run(ctx, "delete_task", id=1)["error"]
    assert len(tasks(store)) == 1 and '"a"' in asked[0]
    ctx.confirm = lambda q: True
    assert run(ctx, "delete_task", id=1) == {"deleted": {"id": 1, "title": "a", "due_date": None, "status": "open"}}
    assert tasks(store) == []


def test_get_today_uses_the_injected_date(ctx):
    assert run(ctx, "get_today") == {"date": TODAY.isoformat(), "weekday": "Tuesday"}


def test_remember_and_recall_need_text(ctx):
    assert "error" in run(ctx, "remember", fact="  ")
    assert "error" in run(ctx, "recall", query="")
    assert "between 1 and 20" in run(ctx, "recall", query="x", k=0)["error"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from([*TOOLS, "rename_task", "", "x"]) | st.text(max_size=15) | json_values,
    args=st.dictionaries(
        st.sampled_from(["id", "title", "due_date", "status", "fact", "query", "k", "sql", "topic", "x"]),
        json_values,
        max_size=4,
    )
    | json_values,
)
def test_dispatch_never_raises_and_never_writes_invalid_rows(ctx, store, name, args):
    result, ok = dispatch(ctx, name, args)
    assert isinstance(result, dict)
    json.dumps(result)
    if not ok:
        assert set(result) == {"error"} and result["error"]
    for row in store.conn().execute("SELECT title, due_date, status FROM tasks"):
        assert row["title"].strip() and len(row["title"]) <= 500
        assert row["status"] in ("open", "done")
        assert row["due_date"] is None or tools.ISO_DATE.fullmatch(row["due_date"])


def test_a_schema_echoed_as_arguments_is_ignored(ctx):
    assert run(ctx, "get_today", properties={}) == {"date": TODAY.isoformat(), "weekday": "Tuesday"}
    assert run(ctx, "list_tasks", type="object", properties={})["count"] == 0
    assert "needs the argument 'title'" in run(ctx, "add_task", properties={"title": "x"})["error"]


def test_tool_facts_are_declared_once_on_each_tool():
    from planner.tools import CHANGES_EXISTING

    declared = {name: (t.read_only, t.changes_existing, t.destructive) for name, t in TOOLS.items()}
    assert {n for n, (ro, _, _) in declared.items() if ro} == READ_ONLY_TOOLS
    assert (
        {n for n, (_, ce, _) in declared.items() if ce}
        == CHANGES_EXISTING
        == {"update_task", "complete_task", "delete_task", "cancel_task", "reopen_task", "rename_list", "schedule_task"}
    )
    assert {n for n, (_, _, d) in declared.items() if d} == {"delete_task", "forget"}
    # A tool that reads never changes anything, and one that asks first is never read-only.
    assert not any(ro and (ce or d) for ro, ce, d in declared.values())


def test_storage_and_memory_errors_reach_the_model_as_errors(ctx):
    # storage.tasks raises TaskError, memory raises LongTermMemoryError: dispatch says both in words.
    out, ok = dispatch(ctx, "complete_task", {"id": 99})
    assert not ok and out["error"].startswith("no task with id=99")
    out, ok = dispatch(ctx, "forget", {"query_or_id": "#42"})
    assert not ok and out["error"] == "no memory with id=42"


def test_tool_tests_need_no_server(ctx, request):
    # The memory of a test without a fake server embeds through the scripted model, in this process.
    assert "fake" not in request.fixturenames
    out, ok = dispatch(ctx, "remember", {"fact": "The user's sister Ana lives in Lisbon."})
    assert ok, out
    out, ok = dispatch(ctx, "recall", {"query": "where does Ana live"})
    assert ok and "Lisbon" in out["memories"][0]["text"]
    assert request.getfixturevalue("model").count("/api/embed") == 2
