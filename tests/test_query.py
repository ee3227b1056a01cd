"""query_planner: read-only SQL whose limits SQLite enforces, not string checks."""

import hashlib
import json

import pytest
from helpers import call
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.storage import query
from planner.tools import dispatch, tool_specs


def fingerprint(store):
    """Everything the planner keeps, to prove a query changed nothing."""
    conn = store.conn()
    dump = "\n".join(conn.iterdump())
    return hashlib.sha256(dump.encode()).hexdigest()


def add(ctx, title, **kw):
    result, ok = dispatch(ctx, "add_task", {"title": title, **kw})
    assert ok, result
    return result["added"]["id"]


def test_it_answers_a_count_question_over_tasks(ctx, store):
    for i in range(5):
        add(ctx, f"t{i}")
    for i in (1, 2, 3):
        dispatch(ctx, "complete_task", {"id": i})
    store.conn().execute("UPDATE tasks SET created_at = '2026-10-02T09:00:00'")
    store.conn().execute("UPDATE tasks SET created_at = '2026-11-12T10:00:00' WHERE id IN (1, 2, 4)")
    result, ok = dispatch(
        ctx,
        "query_planner",
        {"sql": "SELECT COUNT(*) AS n FROM tasks WHERE status = 'done' AND created_at LIKE '2026-11-%'"},
    )
    assert ok and result == {"columns": ["n"], "rows": [[2]], "row_count": 1}


def test_the_description_carries_the_live_schema(ctx, store):
    text = next(s for s in tool_specs(ctx) if s["function"]["name"] == "query_planner")["function"]["description"]
    assert "tasks(id INTEGER, title TEXT" in text and "status TEXT -- 'open'/'done'" in text
    assert "memories(" in text and "embedding" not in text
    assert "messages" not in text  # the conversation log is not offered
    store.conn().execute("ALTER TABLE tasks ADD COLUMN energy INTEGER")  # a later migration
    text = next(s for s in tool_specs(ctx) if s["function"]["name"] == "query_planner")["function"]["description"]
    assert "energy INTEGER" in text


ATTACKS = [
    "SELECT 1; DROP TABLE tasks",
    "SELECT 1; DELETE FROM tasks",
    "WITH x AS (DELETE FROM tasks RETURNING *) SELECT * FROM x",
    "DELETE FROM tasks",
    "UPDATE tasks SET status = 'done'",
    "INSERT INTO tasks (title) VALUES ('sneaky')",
    "DROP TABLE tasks",
    "CREATE TABLE evil (x)",
    "ATTACH DATABASE '{tmp}/evil.db' AS evil",
    "PRAGMA writable_schema = ON",
    "PRAGMA query_only = OFF",
    "SELECT load_extension('/tmp/evil')",
    "VACUUM INTO '{tmp}/copy.db'",
    "BEGIN IMMEDIATE",
    "SELECT * FROM messages",
    "SELECT content FROM messages WHERE role = 'user'",
    "SELECT * FROM sqlite_master",
    "SELECT * FROM memories_fts",
    "SELECT * FROM tasks WHERE id IN (SELECT id FROM messages)",
    "REPLACE INTO tasks (id, title) VALUES (1, 'x')",
]


@pytest.mark.parametrize("sql", ATTACKS)
def test_writes_attach_pragma_and_other_tables_are_refused_by_sqlite(ctx, store, tmp_path, sql):
    add(ctx, "keep me")
    dispatch(ctx, "remember", {"fact": "The user likes tea."})
    store.conn().execute("INSERT INTO messages (session, role, content) VALUES ('s', 'user', 'private words')")
    before = fingerprint(store)
    result, ok = dispatch(ctx, "query_planner", {"sql": sql.format(tmp=tmp_path)})
    assert not ok
    assert "Tables:\ntasks(" in result["error"]  # the schema, so the model can correct itself
    assert "private words" not in result["error"]
    assert fingerprint(store) == before
    assert not (tmp_path / "evil.db").exists() and not (tmp_path / "copy.db").exists()


def test_errors_say_what_went_wrong(ctx):
    def error(sql):
        return dispatch(ctx, "query_planner", {"sql": sql})[0]["error"]

    assert error("SELECT 1; SELECT 2").startswith("send exactly one SELECT")
    assert error("DELETE FROM tasks").startswith("that is not allowed")
    assert error("SELECT nope FROM tasks").startswith("SQLite said: no such column: nope")
    assert error("  ").startswith("sql must not be empty")


def test_a_runaway_recursive_query_is_stopped(ctx):
    sql = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n"
    result, ok = dispatch(ctx, "query_planner", {"sql": sql})
    assert not ok and result["error"].startswith("the query ran longer than 2 s and was stopped")


def test_rows_are_capped_and_the_cap_is_said(ctx, store):
    with store.write() as conn:
        conn.executemany("INSERT INTO tasks (title) VALUES (?)", [(f"task {i}",) for i in range(300)])
    result, ok = dispatch(ctx, "query_planner", {"sql": "SELECT id, title FROM tasks"})
    assert ok and result["row_count"] == query.MAX_ROWS == len(result["rows"])
    assert "first 200 rows" in result["truncated"]
    small, _ = dispatch(ctx, "query_planner", {"sql": "SELECT id FROM tasks LIMIT 3"})
    assert "truncated" not in small


def test_long_values_and_huge_answers_stay_small_for_the_model(ctx, store):
    with store.write() as conn:
        conn.executemany("INSERT INTO tasks (title) VALUES (?)", [("x" * 400,) for _ in range(100)])
    result, ok = dispatch(ctx, "query_planner", {"sql": "SELECT title FROM tasks"})
    assert ok and len(json.dumps(result)) < query.MAX_CHARS + 1000 and "truncated" in result
    assert result["rows"][0][0].endswith("…") and len(result["rows"][0][0]) == query.MAX_VALUE + 1
    doubling = "WITH RECURSIVE s(x) AS (SELECT 'x' UNION ALL SELECT x || x FROM s LIMIT 40) SELECT length(x) FROM s"
    big, ok = dispatch(ctx, "query_planner", {"sql": doubling})
    assert not ok and "too long" in big["error"]  # SQLITE_LIMIT_LENGTH: no gigabyte strings


def test_hidden_columns_read_as_null(ctx, store):
    dispatch(ctx, "remember", {"fact": "The user's sister is Ana."})
    result, ok = dispatch(ctx, "query_planner", {"sql": "SELECT text, embedding FROM memories"})
    assert ok and result["rows"] == [["The user's sister is Ana.", None]]


def test_the_model_can_ask_it_through_the_agent(model, make_agent, ctx):
    add(ctx, "a")
    add(ctx, "b")
    model.script(
        "main",
        {"tool_calls": [call("query_planner", sql="SELECT COUNT(*) FROM tasks")]},
        {"content": "You have 2 tasks."},
    )
    r = make_agent(reflect=False).run_turn("how many tasks do I have?")
    assert r.tool_calls[0]["ok"] and r.tool_calls[0]["result"]["rows"] == [[2]]
    tool_msg = model.chats("main")[1]["messages"][-1]
    assert tool_msg["role"] == "tool" and json.loads(tool_msg["content"])["rows"] == [[2]]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sql=st.text(max_size=80)
    | st.builds(
        lambda verb, rest: f"{verb} {rest}",
        st.sampled_from(["SELECT", "WITH", "INSERT INTO tasks", "DELETE FROM", "PRAGMA", "ATTACH", "DROP", "UPDATE"]),
        st.text(max_size=40),
    )
)
def test_no_sql_text_raises_out_of_dispatch_or_changes_anything(ctx, store, sql):
    before = fingerprint(store)
    result, ok = dispatch(ctx, "query_planner", {"sql": sql})
    json.dumps(result)
    assert ok or set(result) == {"error"}
    assert fingerprint(store) == before
