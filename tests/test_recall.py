"""Recall that answers the question asked: by the days a memory is about, by the conversation before
the question, by scene; restatements that must keep their particulars; the time filter's index."""

import json

import numpy as np
import pytest
from conftest import TODAY, call, local_embed
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.memory.compact import CompactIndex
from planner.memory.longterm import LongTermMemory, without_attached
from planner.memory.vectors import Embedder, VectorIndex
from planner.tools import dispatch


@pytest.fixture
def mem(store):
    """Long-term memory whose today is the suite's (2026-12-01)."""
    return LongTermMemory(store, Embedder(local_embed, "embed"), today=lambda: TODAY)


def about(store, id_):
    return tuple(store.conn().execute("SELECT happened_on, happened_to FROM memories WHERE id = ?", (id_,)).fetchone())


# -- recall by time


def test_a_memory_keeps_the_days_it_is_about_beside_the_day_it_was_said(mem, store):
    i = mem.store_cell("I went to Lisbon last week.", said_on="2026-03-12")["remembered"]["id"]
    assert about(store, i) == ("2026-03-02", "2026-03-08")
    j = mem.store_cell("The user likes green tea.", said_on="2026-03-12")["remembered"]["id"]
    assert about(store, j) == ("2026-03-12", "2026-03-12")  # no day named: the day it was said
    hit = mem.recall("Lisbon", 1)[0]
    assert hit["happened"] == "2026-03-02 to 2026-03-08" and hit["said"] == "2026-03-12"
    assert "happened" not in mem.recall("green tea", 1)[0]


def test_the_days_shown_after_a_memory_are_cut_when_a_model_copies_them(mem):
    text, cut = without_attached("The user went to Lisbon. (happened 2026-03-02 to 2026-03-08, said 2026-03-12)")
    assert (text, cut) == ("The user went to Lisbon.", True)


def test_a_question_naming_a_period_finds_what_happened_then(mem):
    mem.store_cell("Had dinner with Priya at the Ethiopian place tonight.", said_on="2026-05-14")
    mem.store_cell("Had dinner with Henk at the Ethiopian place tonight.", said_on="2026-09-02")
    top = mem.search("who did I have dinner with at the Ethiopian place last may?", 1)[0]
    assert "Priya" in top["text"]
    top = mem.search("who did I have dinner with at the Ethiopian place?", 1)[0]
    assert "Henk" in top["text"]  # without the period, the newer of two alike


def test_the_last_time_and_the_first_time_order_near_ties_by_day(mem):
    for day, who in (("2026-02-10", "Sven"), ("2026-06-03", "Mira"), ("2026-10-21", "Jonas")):
        mem.store_cell(f"Went bouldering today with {who}.", said_on=day)
    assert "Jonas" in mem.search("when did I last go bouldering?", 1)[0]["text"]
    assert "Sven" in mem.search("the first time I went bouldering, who came?", 1)[0]["text"]


def test_before_the_move_is_dated_by_the_memory_of_the_move(mem):
    mem.store_cell("My gym is Basic-Fit on the Kanaalweg.", said_on="2025-11-02")
    mem.store_cell("The move to Utrecht is on Saturday, boxes everywhere.", said_on="2026-04-09")
    mem.store_cell("I joined the gym Boulderhal Sterk near the new flat.", said_on="2026-05-20")
    assert "Basic-Fit" in mem.search("which gym did I go to before the move?", 1)[0]["text"]


def test_a_period_holding_most_memories_is_left_to_the_weighting(mem, monkeypatch):
    from planner.memory import search

    mem.store_cell("The user likes jazz.", said_on="2026-05-03")
    mem._load()
    looks = []
    real = mem.index.search_also
    monkeypatch.setattr(mem.index, "search_also", lambda *a: looks.append(a[2]) or real(*a))
    assert mem.search("what music did I like in 2026?", 3)
    assert looks == []  # one memory, inside the year: no look inside it
    monkeypatch.setattr(search, "WITHIN_SHARE", 100.0)
    mem.begin_turn()
    assert mem.search("what music did I like in 2026?", 3)
    assert [list(ids) for ids in looks] == [[1]]


# -- the conversation as context


def test_a_question_that_refers_back_is_searched_with_the_names_said_before(mem):
    mem.store_cell("Ana told me the museum reopens in March after the renovation.")
    mem.store_cell("Tomás told me the museum has free entry on Sunday mornings.")
    question = "what did she tell me about the museum?"
    mem.begin_turn(["I had lunch with Ana yesterday."])
    assert "Ana" in mem.search(question, 1)[0]["text"]
    mem.begin_turn(["Tomás called me this morning."])
    assert "Tomás" in mem.search(question, 1)[0]["text"]


def test_a_question_that_does_not_refer_back_is_searched_as_asked(mem):
    from planner.memory.scoring import with_context

    assert (
        with_context("what is my dentist's name?", ["I had lunch with Ana yesterday."]) == "what is my dentist's name?"
    )
    assert with_context("what did she say?", ["I had lunch with Ana yesterday."]) == "what did she say? (Ana)"
    assert with_context("what did she say?", []) == "what did she say?"
    assert with_context("what about it?", ["planning the coastal trip"]) == "what about it? (planning coastal trip)"


def test_the_agent_gives_memory_the_turns_before_the_question(model, make_agent, memory):
    memory.store_cell("Ana told me the museum reopens in March after the renovation.")
    memory.store_cell("Tomás told me the museum has free entry on Sunday mornings.")
    model.script("main", {"content": "Nice."}, {"content": "She said March."})
    agent = make_agent(reflect=False)
    agent.run_turn("I had lunch with Ana yesterday.")
    agent.run_turn("what did she tell me about the museum?")
    sent = model.chats("main")[-1]["messages"][-1]["content"]
    assert sent.index("Ana told me") < sent.index("Tomás told me") if "Tomás told me" in sent else "Ana told me" in sent


# -- restatements keep their particulars


@pytest.mark.parametrize(
    ("first", "second", "said"),
    [
        (
            "Had dinner with Priya at the Ethiopian place tonight.",
            "Had dinner with Henk at the Ethiopian place tonight.",
            ("2026-05-01", "2026-05-01"),
        ),
        (
            "My gym locker is number 31 at the Kanaalweg.",
            "My gym locker is number 48 at the Kanaalweg.",
            ("2026-05-01", "2026-05-01"),
        ),
        (
            "I had a check-up at the dentist yesterday.",
            "I had a check-up at the dentist yesterday.",
            ("2026-01-10", "2026-06-10"),
        ),
    ],
)
def test_sentences_with_other_names_numbers_or_days_are_other_facts(store, first, second, said):
    close = lambda model, texts: [[1.0, 0.001 * (len(t) % 3)] for t in texts]  # noqa: E731  (every pair ~1.0)
    mem = LongTermMemory(store, Embedder(close, "close"), today=lambda: TODAY)
    mem.store_cell(first, said_on=said[0])
    assert "remembered" in mem.store_cell(second, said_on=said[1])


def test_a_restatement_said_again_still_updates(store):
    close = lambda model, texts: [[1.0, 0.0] for t in texts]  # noqa: E731
    mem = LongTermMemory(store, Embedder(close, "close"), today=lambda: TODAY)
    first = mem.store_cell("The user's dentist is Dr. Okafor.", said_on="2026-01-10")
    assert "updated" in mem.store_cell("The user's dentist is dr. Okafor!", said_on="2026-01-10")
    # a name more is another fact: kept beside the first, linked to it, nothing lost
    more = mem.store_cell("The user's dentist is Dr. Okafor, on Main Street.", said_on="2026-01-10")
    assert more["remembered"]["beside"] == first["remembered"]["id"]
    assert [m["text"] for m in mem.all()] == ["The user's dentist is dr. Okafor!", more["remembered"]["text"]]


# -- the index's filter


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 300), st.integers(0, 2**32 - 1), st.integers(1, 20))
def test_a_search_within_some_ids_is_the_exact_top_k_among_them(n, seed, k):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, 16)).astype(np.float32)
    ids = np.arange(1, n + 1) * 3
    index = VectorIndex()
    index.load(ids, m)
    within = np.sort(rng.choice(ids, size=max(1, n // 3), replace=False))
    with_absent = np.sort(np.concatenate([within, [1, 2]]))  # ids not in the index are ignored
    q = rng.standard_normal(16).astype(np.float32)
    q /= np.linalg.norm(q)
    got = [i for i, _ in index.search(q, k, within=with_absent)]
    rows = {int(i): r for r, i in enumerate(ids)}
    scores = {int(i): float(m[rows[int(i)]] @ q / np.linalg.norm(m[rows[int(i)]])) for i in within}
    assert got == sorted(scores, key=lambda i: -scores[i])[:k]


def test_the_compact_index_searches_within_some_ids_too():
    rng = np.random.default_rng(1)
    m = rng.standard_normal((500, 64)).astype(np.float32)
    compact = CompactIndex()
    compact.load_batches([(np.arange(500), m)], 500)
    within = np.arange(0, 500, 7)
    got = compact.search(m[14] / np.linalg.norm(m[14]), 3, within=within)
    assert got[0][0] == 14 and all(i % 7 == 0 for i, _ in got)
    assert compact.search(m[0], 3, within=np.array([9999])) == []


def test_the_days_follow_forget_and_undo(mem, store):
    i = mem.store_cell("I went to Lisbon last week.", said_on="2026-03-12")["remembered"]["id"]
    day = lambda iso: __import__("datetime").date.fromisoformat(iso).toordinal()  # noqa: E731
    assert list(mem.days.within(day("2026-03-05"), day("2026-03-05"), 10)) == [i]
    mem.forget(str(i), turn="t1")
    assert list(mem.days.within(day("2026-03-05"), day("2026-03-05"), 10)) == []
    mem.unforget("t1")
    assert list(mem.days.within(day("2026-03-05"), day("2026-03-05"), 10)) == [i]
    fresh = LongTermMemory(store, Embedder(local_embed, "embed"), today=lambda: TODAY)
    fresh._load()  # a restart reads them from the file
    assert list(fresh.days.within(day("2026-03-05"), day("2026-03-05"), 10)) == [i]


# -- scenes


def sentences(mem, *texts):
    return [mem.store_cell(t, said_on="2026-05-01")["remembered"]["id"] for t in texts]


def test_memories_that_share_a_name_form_a_scene_once_the_name_is_said_twice(mem):
    a, b, c = sentences(mem, "Ana lives in Lisbon.", "Ana likes tea.", "I bought a new kettle.")
    mem.scenes.refresh()
    assert [(s["name"], s["memories"]) for s in mem.scenes.all()] == []  # "Ana" at a sentence start: not yet
    d = sentences(mem, "I called Ana about the trip.")[0]
    mem.scenes.refresh()
    scenes = {s["name"]: s for s in mem.scenes.all()}
    assert scenes["Ana"]["memories"] == [a, b, d]  # once named mid-sentence, the sentence start counts too
    assert c not in scenes["Ana"]["memories"] and "Lisbon" not in scenes  # Lisbon is said once


def test_a_scene_brings_the_second_fact_a_two_fact_question_needs(mem):
    from planner.memory import search

    sentences(mem, "My piano teacher is Sofia.", "Sofia lives in Zeist.", "I called Sofia about the lesson.")
    sentences(
        mem, *(f"{name} lives in {town}." for name, town in [("Henk", "Ghent"), ("Mira", "Graz"), ("Omar", "Lyon")])
    )
    mem.scenes.refresh()
    question = "in which town does my piano teacher live?"
    assert "Zeist" in " ".join(h["text"] for h in mem.search(question, 3))
    found = {}
    for scenes, names in ((0.0, 0.0), (search.SCENE_WEIGHT, 0.0), (0.0, search.NAME_HOP_WEIGHT)):
        mem.begin_turn()
        saved = search.SCENE_WEIGHT, search.NAME_HOP_WEIGHT
        search.SCENE_WEIGHT, search.NAME_HOP_WEIGHT = scenes, names
        try:
            found[scenes, names] = "Zeist" in " ".join(h["text"] for h in mem.search(question, 3))
        finally:
            search.SCENE_WEIGHT, search.NAME_HOP_WEIGHT = saved
    # neither way: the second fact shares no word with the question; either way alone finds it
    assert list(found.values()) == [False, True, True]


def test_a_scene_follows_its_memories_changing_and_going(mem, store):
    a, b = sentences(mem, "I met Priya for coffee.", "I met Priya at the market.")
    mem.scenes.refresh()
    assert mem.scenes.all()[0]["memories"] == [a, b]
    store.conn().execute(
        "UPDATE memories SET text = 'I met someone at the market.', updated_at = '9999' WHERE id = ?", (b,)
    )
    mem.scenes.refresh()
    assert mem.scenes.all() == []  # one memory left: no scene
    mem.forget(str(a))
    mem.scenes.refresh()
    assert store.conn().execute("SELECT COUNT(*) FROM scene_cells").fetchone()[0] == 0


def test_forgetting_a_scene_keeps_its_memories_and_undo_brings_it_back(ctx, mem, store):
    ctx.memory, ctx.turn = mem, "t1"
    sentences(mem, "I met Priya for coffee.", "I met Priya at the market.")
    mem.scenes.refresh()
    r, ok = dispatch(ctx, "forget", {"query_or_id": "scene Priya"})
    assert not ok and "needs the user's yes" in r["error"]
    ctx.confirm = lambda question: "Priya" in question and "memories stay" in question
    r, ok = dispatch(ctx, "forget", {"query_or_id": "scene Priya"})
    assert ok and r["forgotten"]["name"] == "Priya" and r["forgotten"]["memories kept"] == 2
    assert mem.scenes.all() == [] and mem.count() == 2
    mem.scenes.refresh()
    assert mem.scenes.all() == []  # not grouped again behind the user's back
    from planner.tools.undo import undo_newest

    assert undo_newest(ctx).lines == ['restored scene 1 "Priya" (it was forgotten)']
    assert [s["name"] for s in mem.scenes.all()] == ["Priya"]
    assert undo_newest(ctx).lines == []  # once
    r, ok = dispatch(ctx, "forget", {"query_or_id": "scene Nobody"})
    assert not ok and "no scene 'Nobody'" in r["error"]


def test_the_critic_summarises_scenes_in_the_background_and_a_replaced_summary_is_kept(
    model, make_agent, store, memory
):
    from planner.prompts import SCENE_PROMPT

    summaries = []

    def critic(body):
        if body["messages"][0]["content"] == SCENE_PROMPT:
            summaries.append(body["messages"][1]["content"])
            return {"content": json.dumps({"text": f"Priya is a friend; summary {len(summaries)}."})}
        return {"content": json.dumps({"memories": []})}

    model.respond_with("critic", critic)
    model.script("main", {"content": "Nice."}, {"content": "Nice."})
    memory.store_cell("I met Priya for coffee.")
    memory.store_cell("I met Priya at the market.")
    agent = make_agent(reflect=False, auto_memory=True)
    agent.run_turn("hello")
    assert agent.keeper.worker.drain(5)
    assert memory.scenes.all()[0]["summary"] == "Priya is a friend; summary 1."
    assert "I met Priya for coffee." in summaries[0]
    memory.store_cell("I met Priya at the cinema.")
    agent.run_turn("hello again")
    assert agent.keeper.worker.drain(5)
    assert memory.scenes.all()[0]["summary"] == "Priya is a friend; summary 2."
    kept = store.conn().execute("SELECT summary, reason FROM scene_history").fetchall()
    assert [tuple(r) for r in kept] == [("Priya is a friend; summary 1.", "summary")]


def test_a_failing_scene_summary_leaves_the_memories_joined_and_the_worker_going(model, make_agent, memory):
    model.respond_with("critic", lambda body: {"status": 500, "error": "boom"})
    model.script("main", {"content": "Nice."})
    memory.store_cell("I met Priya for coffee.")
    memory.store_cell("I met Priya at the market.")
    agent = make_agent(reflect=False, auto_memory=True)
    agent.run_turn("hello")
    assert agent.keeper.worker.drain(5)
    (scene,) = memory.scenes.all()
    assert scene["summary"].startswith("Priya: ") and "market" in scene["summary"]


def test_an_embedding_failure_while_grouping_postpones_the_scenes(store, model, config):
    from planner.memory.keeper import MemoryKeeper
    from planner.model.client import ModelError

    down = {"now": False}

    def embed(name, texts):
        if down["now"]:
            raise ModelError("Cannot reach Ollama", "unreachable")
        return local_embed(name, texts)

    mem = LongTermMemory(store, Embedder(embed, "embed"), today=lambda: TODAY)
    sentences(mem, "I met Priya for coffee.", "I met Priya at the market.")
    keeper = MemoryKeeper(store, model, config.replace(critic_model="none"), mem)
    down["now"] = True
    keeper.refresh_scenes()  # logged, not raised: the next refresh picks the same scenes up
    assert store.conn().execute("SELECT COUNT(*) FROM scenes WHERE embedding IS NOT NULL").fetchone()[0] == 0
    down["now"] = False
    mem.scenes.refresh()
    assert [s["name"] for s in mem.scenes.all()] == ["Priya"]
    mem.scenes.load()
    assert len(mem.scenes.index) == 1


# -- what the user sees


def test_memories_and_the_export_show_the_days_and_the_scenes(model, make_agent, memory, store):
    from planner.storage.exchange import export_memories
    from planner.ui.commands import Stats, run_command

    memory.store_cell("I met Priya for coffee yesterday.", said_on="2026-11-20")
    memory.store_cell("I met Priya at the market.", said_on="2026-11-21")
    memory.scenes.refresh()
    agent = make_agent()
    shown = run_command(agent, "/memories", Stats())
    assert "said 2026-11-20, about 2026-11-19" in shown and "scene Priya: memories 1, 2." in shown
    doc = json.loads(export_memories(store))
    assert doc["contains"] == ["tasks", "memories", "scenes"]
    assert doc["memories"][0]["happened_on"] == "2026-11-19"
    assert doc["scenes"][0]["name"] == "Priya" and doc["scenes"][0]["memories"] == [1, 2]


def test_the_notes_attached_to_a_message_say_what_day_a_memory_is_about(model, make_agent, memory):
    memory.store_cell("I went to Lisbon last week.", said_on="2026-03-12")
    model.script("main", {"tool_calls": [call("recall", query="Lisbon")]}, {"content": "In March."})
    make_agent(reflect=False).run_turn("when was I in Lisbon?")
    sent = model.chats("main")[0]["messages"][-1]["content"]
    assert "- I went to Lisbon last week. (happened 2026-03-02 to 2026-03-08, said 2026-03-12)" in sent
    result = json.loads(model.chats("main")[1]["messages"][-1]["content"])
    assert result["memories"][0]["happened"] == "2026-03-02 to 2026-03-08"


def test_today_and_yesterday_in_a_note_can_carry_the_day_they_mean():
    from planner.memory.search import days_in_words

    assert days_in_words("Dentist check-up today.", "2026-04-14") == "Dentist check-up today (2026-04-14)."
    assert days_in_words("Saw them yesterday, then last night again.", "2026-03-01") == (
        "Saw them yesterday (2026-02-28), then last night (2026-02-28) again."
    )
    assert days_in_words("This morning: a run.", "2026-01-02") == "This morning (2026-01-02): a run."
    assert days_in_words("today, said on no known day", None) == "today, said on no known day"
    assert days_in_words("a todayish word", "2026-01-02") == "a todayish word"


def test_the_keyword_search_beside_the_scan_finds_what_it_finds_in_line(mem, monkeypatch):
    from planner.memory import search

    for i in range(30):
        mem.store_cell(f"Note {i}: the user met Friend{i} at the Okapi cafe on day {i}.", said_on="2026-05-01")
    questions = ["who did I meet at the Okapi cafe?", "what happened last may at the cafe?", "Friend7"]
    in_line = [[h["id"] for h in mem.search(q, 5)] for q in questions]
    monkeypatch.setattr(search, "BESIDE_ABOVE", 0)
    mem.begin_turn()
    assert [[h["id"] for h in mem.search(q, 5)] for q in questions] == in_line
    assert mem._pool is not None  # it did run in the thread


def test_the_keyword_search_runs_while_the_question_is_being_embedded(store, monkeypatch):
    # The embedding model answers only once the keyword search has started: were it started after the
    # embedding, the search would wait for itself. The wait is bounded so a failure cannot hang the suite.
    import threading

    from planner.memory import search

    started = threading.Event()
    waited = []

    def embed(model, texts):
        if any("Okapi cafe?" in t for t in texts):  # the question, not the memories being stored
            waited.append(started.wait(timeout=10))
        return local_embed(model, texts)

    mem = LongTermMemory(store, Embedder(embed, "embed"), today=lambda: TODAY)
    for i in range(5):
        mem.store_cell(f"The user met Friend{i} at the Okapi cafe.", said_on="2026-05-01")
    keyword = mem.keyword_scores
    monkeypatch.setattr(mem, "keyword_scores", lambda *a, **k: (started.set(), keyword(*a, **k))[1])
    monkeypatch.setattr(search, "BESIDE_ABOVE", 0)
    assert mem.search("who did I meet at the Okapi cafe?", 3)
    assert waited == [True]


def test_a_word_in_very_many_memories_is_left_out_of_the_keyword_search(mem, monkeypatch):
    from planner.memory import search

    for i in range(12):
        mem.store_cell(f"Coffee note {i}: a flat white at place {i}.", said_on="2026-05-01")
    okapi = mem.store_cell("Coffee at the Okapi cafe was bitter.", said_on="2026-05-02")["remembered"]["id"]
    mem.search("warm up", 1)  # the index is loaded
    monkeypatch.setattr(search, "COMMON", 5)
    asked = mem.keyword_scores("coffee at the okapi", 50)
    assert [i for i, _ in asked] == [okapi]  # "coffee" is in 13 memories: only "okapi" was searched
    assert mem.keyword_scores("coffee", 50) == []  # no word that tells them apart: the vectors rank them
    assert [h["id"] for h in mem.search("coffee", 20)]  # and the search still finds them
    monkeypatch.setattr(search, "COMMON", 5_000)
    assert len(mem.keyword_scores("coffee at the okapi", 50)) == 13


def test_grouping_an_older_database_goes_a_chunk_at_a_time_and_ends_as_in_one_go(store, mem):
    texts = [f"I met Priya at place {i}." for i in range(5)] + ["I met Omar today.", "Omar called me."]
    for t in texts:
        mem.store_cell(t, said_on="2026-05-01")
    rounds = 1
    while not mem.scenes.refresh(most=2):
        rounds += 1
    assert rounds == 4  # 7 memories, 2 a time
    chunked = [(s["name"], s["memories"]) for s in mem.scenes.all()]
    store.conn().execute("DELETE FROM scene_cells")
    store.conn().execute("DELETE FROM scenes")
    store.conn().execute("DELETE FROM scene_state")
    assert mem.scenes.refresh(most=100)
    assert (
        [(s["name"], s["memories"]) for s in mem.scenes.all()]
        == chunked
        == [("Omar", [6, 7]), ("Priya", [1, 2, 3, 4, 5])]
    )


def test_the_keeper_queues_the_next_chunk_behind_other_work(store, model, config, mem, monkeypatch):
    from planner.memory import scenes
    from planner.memory.keeper import MemoryKeeper

    monkeypatch.setattr(scenes, "CHUNK", 2)
    monkeypatch.setattr(scenes.Scenes.refresh, "__defaults__", (None, 2))
    for i in range(5):
        mem.store_cell(f"I met Priya at place {i}.", said_on="2026-05-01")
    keeper = MemoryKeeper(store, model, config.replace(critic_model="none"), mem)
    keeper.refresh_scenes()
    assert keeper.worker.drain(10)
    assert mem.scenes.all()[0]["memories"] == [1, 2, 3, 4, 5]


def test_a_forgotten_scene_comes_back_with_the_shells_undo_too(ctx, mem, store, tmp_path):
    """The shell's undo has no memory loaded: the scene is put back in the undo's own write all the same."""
    from helpers import clean_env, run_cli

    ctx.memory, ctx.turn = mem, "t1"
    sentences(mem, "I met Priya for coffee.", "I met Priya at the market.")
    mem.scenes.refresh()
    ctx.confirm = lambda question: True
    assert dispatch(ctx, "forget", {"query_or_id": "scene Priya"})[1]
    env = clean_env(PLANNER_HOME=str(tmp_path), PLANNER_TODAY=TODAY.isoformat())
    out = run_cli(["undo", "--yes"], env)
    assert out.returncode == 0 and 'restored scene 1 "Priya"' in out.stdout, out.stdout + out.stderr
    assert [r[0] for r in store.conn().execute("SELECT name FROM scenes")] == ["Priya"]
    mem.scenes.reload()
    mem.scenes.refresh()
    assert [s["name"] for s in mem.scenes.all()] == ["Priya"]  # and grouping may use the name again
