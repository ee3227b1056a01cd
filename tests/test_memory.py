"""Session history (validity, chunked trimming, persistence) and long-term memory."""

import json
import sqlite3

import numpy as np
import pytest
from helpers import call, valid
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.memory.history import Budget, History, estimate_tokens, sanitize, session_messages, trim_start
from planner.memory.longterm import LongTermMemory
from planner.memory.vectors import Embedder, pack, unpack
from planner.storage.db import SCHEMA_VERSION, DatabaseError, Store

user = st.builds(lambda t: {"role": "user", "content": t}, st.text(max_size=40))
text_reply = st.builds(lambda t: {"role": "assistant", "content": t}, st.text(max_size=40))


@st.composite
def tool_group(draw):
    k = draw(st.integers(1, 3))
    calls = [{"function": {"name": "get_today", "arguments": {}}} for _ in range(k)]
    results = [{"role": "tool", "content": "{}", "tool_name": "get_today"} for _ in range(draw(st.integers(0, 4)))]
    return [{"role": "assistant", "content": "", "tool_calls": calls}, *results]


stray_tool = st.just({"role": "tool", "content": "{}", "tool_name": "x"})
sequences = st.lists(
    st.one_of(user.map(lambda m: [m]), text_reply.map(lambda m: [m]), tool_group(), stray_tool.map(lambda m: [m])),
    max_size=40,
).map(lambda groups: [m for g in groups for m in g])


@settings(max_examples=400, deadline=None)
@given(sequences)
def test_sanitize_always_returns_a_valid_subsequence(messages):
    out = sanitize(messages)
    assert valid(out)
    it = iter(messages)
    assert all(any(m is x for x in it) for m in out)  # order kept, nothing invented


@settings(max_examples=400, deadline=None)
@given(sequences, st.integers(2, 30), st.integers(20, 400))
def test_trimmed_windows_are_valid_and_within_budget_when_possible(messages, max_messages, max_tokens):
    messages = sanitize(messages)
    budget = Budget(messages=max_messages, tokens=max_tokens)
    tokens = [estimate_tokens(m) for m in messages]
    start = trim_start(messages, tokens, budget)
    window = messages[start:]
    assert valid(window)
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    if start and users and start != users[-1]:
        # a real cut lands well under the budget, leaving room for many turns
        assert len(window) <= max_messages * budget.low_water
        assert sum(tokens[start:]) <= max_tokens * budget.low_water


def test_trim_happens_in_chunks_so_the_prefix_is_stable(store):
    history = History(store, "s", Budget(messages=20, tokens=10_000))
    starts = []
    for i in range(30):
        history.append([{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}])
        history.end_turn()
        starts.append(history.messages[0]["content"])
    changes = sum(1 for a, b in zip(starts, starts[1:], strict=False) if a != b)
    assert changes <= 6  # 30 turns, 60 messages, cap 20: a few jumps, not one per turn
    assert len(history.messages) <= 20


def test_a_resumed_session_sends_the_same_window(store):
    budget = Budget(messages=20, tokens=10_000)
    history = History(store, "s", budget)
    for i in range(15):
        history.append([{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}])
        history.end_turn()
    again = History(store, "s", budget)
    assert again.messages == history.messages


def test_loading_repairs_a_turn_cut_short_by_a_crash(store):
    h = History(store, "s", Budget())
    h.append([{"role": "user", "content": "add two"}])
    h.append(
        [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": "add_task", "arguments": {"title": "a"}}}] * 2,
            }
        ]
    )
    h.append([{"role": "tool", "content": "{}", "tool_name": "add_task"}])  # the second result never came
    loaded = History(store, "s", Budget()).messages
    assert loaded == [{"role": "user", "content": "add two"}]
    assert len(session_messages(store, "s")) == 3  # nothing is deleted from the store


def test_sessions_are_separate(model, make_agent, store):
    model.respond_with("main", lambda body: {"content": "ok"})
    make_agent("one").run_turn("first session")
    make_agent("two").run_turn("second session")
    assert "first session" not in json.dumps(model.chats("main")[-1]["messages"])


def test_history_is_sent_again_after_a_restart(model, make_agent):
    model.script(
        "main",
        {"tool_calls": [call("get_today")]},
        {"content": "It is Tuesday."},
        {"content": "You asked about today."},
    )
    make_agent("s").run_turn("what day is it?")
    make_agent("s").run_turn("what did I ask?")
    sent = model.chats("main")[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[2]["tool_calls"][0]["function"]["name"] == "get_today"


# ---------------------------------------------------------------- schema


def test_a_tutorial_database_opens_in_place_and_keeps_its_data(tmp_path):
    path = tmp_path / "planner.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE tasks (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, due_date TEXT, status TEXT DEFAULT 'open', created_at TEXT DEFAULT CURRENT_TIMESTAMP);
        CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT, role TEXT, content TEXT, tool_calls TEXT, tool_name TEXT, created_at TEXT DEFAULT CURRENT_TIMESTAMP);
        CREATE TABLE memories (id INTEGER PRIMARY KEY AUTOINCREMENT, text TEXT, embedding BLOB, created_at TEXT DEFAULT CURRENT_TIMESTAMP);
        INSERT INTO tasks (title, due_date) VALUES ('old task', '2026-01-02');
        INSERT INTO messages (session, role, content) VALUES ('old', 'user', 'hello');
        INSERT INTO memories (text, embedding) VALUES ('likes tea', X'0000803F');
        """
    )
    conn.commit()
    conn.close()
    store = Store(path)
    c = store.conn()
    assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert c.execute("SELECT title, due_date, status FROM tasks").fetchone()[:] == ("old task", "2026-01-02", "open")
    assert c.execute("SELECT text, embed_model FROM memories").fetchone()[:] == ("likes tea", None)
    assert c.execute("SELECT name FROM sessions").fetchone()[0] == "old"
    store.close()
    Store(path).close()  # opening again is a no-op


def test_a_newer_schema_is_refused_not_downgraded(tmp_path):
    path = tmp_path / "planner.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(DatabaseError, match="newer planner"):
        Store(path)


def test_a_file_that_is_not_sqlite_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "planner.db"
    path.write_bytes(b"my notes, not a database" * 100)
    before = path.read_bytes()
    with pytest.raises(DatabaseError, match="not a usable planner database"):
        Store(path)
    assert path.read_bytes() == before


# ---------------------------------------------------------------- long-term memory


def test_pack_is_little_endian_float32():
    blob = pack([1.0, -2.5])
    assert blob == b"\x00\x00\x80?\x00\x00 \xc0"
    assert unpack(blob).tolist() == [1.0, -2.5]


def test_remember_then_recall_with_task_prefixes(model, memory):
    memory.remember("My sister Ana lives in Lisbon")
    memory.remember("I prefer meetings in the morning")
    hits = memory.recall("where does Ana live", 1)
    assert hits[0]["text"] == "My sister Ana lives in Lisbon" and 0 < hits[0]["score"] <= 1
    assert "search_document: My sister Ana lives in Lisbon" not in model.embed_inputs  # model 'embed' has no prefixes


def test_nomic_gets_its_document_and_query_prefixes(model, store):
    model.models["nomic-embed-text"] = ["embedding"]
    mem = LongTermMemory(store, Embedder(model.embed, "nomic-embed-text"))
    mem.remember("likes green tea")
    mem.recall("tea", 1)
    assert model.embed_inputs == ["search_document: likes green tea", "search_query: tea"]


def test_a_near_identical_fact_updates_instead_of_duplicating(memory, store):
    first = memory.remember("I like green tea")
    again = memory.remember("i like green tea!")
    assert again["updated"]["id"] == first["remembered"]["id"]
    assert store.conn().execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 1
    other = memory.remember("I like black coffee")
    assert "remembered" in other


def test_vectors_load_lazily_not_at_construction(model, store):
    LongTermMemory(store, Embedder(model.embed, "embed")).remember("a fact")
    model.requests.clear()
    mem = LongTermMemory(store, Embedder(model.embed, "embed"))
    assert model.requests == [] and len(mem.index) == 0
    assert mem.recall("fact", 1)[0]["text"] == "a fact"


def test_changing_the_embedding_model_re_embeds_with_progress(model, store):
    old = LongTermMemory(store, Embedder(model.embed, "embed"))
    for i in range(5):
        old.remember(f"fact number {i} about topic{i}")
    model.models["embed2"] = ["embedding"]
    model.embed_dim = 64  # a model with other dimensions
    progress = []
    new = LongTermMemory(
        store, Embedder(model.embed, "embed2", batch=2), on_progress=lambda d, t: progress.append((d, t))
    )
    hits = new.recall("topic3", 1)
    assert hits[0]["text"] == "fact number 3 about topic3"
    assert progress == [(2, 5), (4, 5), (5, 5)]
    rows = store.conn().execute("SELECT embed_model, embedding FROM memories").fetchall()
    assert {r[0] for r in rows} == {"embed2"} and {len(unpack(r[1])) for r in rows} == {64}


@pytest.mark.own_server
def test_embedding_failures_become_tool_errors(fake, ctx):
    from planner.tools import dispatch

    fake.stop()
    result, ok = dispatch(ctx, "remember", {"fact": "likes tea"})
    assert not ok and "Cannot reach Ollama" in result["error"]


def test_index_add_grows_and_replaces(memory):
    from planner.memory.vectors import VectorIndex

    idx = VectorIndex()
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((100, 8)).astype(np.float32)
    for i, v in enumerate(vecs):
        idx.add(i, v)
    assert len(idx) == 100
    assert idx.search(vecs[42], 1)[0][0] == 42
    idx.add(42, -vecs[42])
    assert len(idx) == 100 and idx.search(vecs[42], 1)[0][0] != 42
    idx.remove(42)
    assert len(idx) == 99 and all(i != 42 for i, _ in idx.search(vecs[0], 99))
    scores = [s for _, s in idx.search(vecs[0], 10)]
    assert scores == sorted(scores, reverse=True)


def test_opening_waits_out_a_lock_sqlite_reports_at_once(tmp_path, monkeypatch):
    # Two processes opening a new file together can deadlock on the switch to WAL;
    # SQLite then says "locked" without waiting. Opening retries instead of failing.
    import sqlite3

    from planner.storage import db

    real, calls = db.migrate, []

    def fault(message, code):  # as SQLite raises it: the words and the result code
        e = sqlite3.OperationalError(message)
        e.sqlite_errorcode = code
        return e

    def flaky(conn):
        calls.append(1)
        if len(calls) < 3:
            raise fault("database is locked", sqlite3.SQLITE_BUSY)
        return real(conn)

    monkeypatch.setattr(db, "migrate", flaky)
    s = Store(tmp_path / "p.db")
    assert len(calls) == 3 and s.conn().execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    s.close()
    monkeypatch.setattr(db, "migrate", lambda conn: (_ for _ in ()).throw(fault("no such table: x", 1)))
    with pytest.raises(DatabaseError, match="no such table"):  # other faults are not retried
        Store(tmp_path / "q.db")


def test_memories_search_says_nothing_matches_below_the_relevance_floor(model, make_agent, memory):
    from planner.ui.commands import Stats, run_command

    memory.store_cell("The user's cat is named Pixel.")
    memory.store_cell("The user likes jazz.")
    agent = make_agent()
    assert run_command(agent, "/memories volcanoes", Stats()) == "nothing matches"
    assert run_command(agent, "/memories cat", Stats()).startswith("[1] The user's cat is named Pixel.")
    assert "jazz" not in run_command(agent, "/memories cat", Stats())
