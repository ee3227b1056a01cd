"""The exact index's sign-bit shortlist (planner/memory/vectors.py): past `shortlist_above` rows a search
scores exactly only the rows nearest the query by sign bits. The oracle is a plain numpy product over
every row, and a row searched for by its own vector, whose bits are the query's."""

import numpy as np
import pytest
from conftest import local_embed
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.memory import vectors
from planner.memory.longterm import LongTermMemory
from planner.memory.vectors import Embedder, VectorIndex, normalize

DIM = 64


@pytest.fixture
def small_shortlist(monkeypatch):
    """A shortlist of a quarter of the rows, at least 4: small enough that tests of tens of rows use it."""
    shrink(monkeypatch)


def shrink(monkeypatch) -> None:
    monkeypatch.setattr(vectors, "SHORTLIST_MIN", 4)
    monkeypatch.setattr(vectors, "SHORTLIST_SHARE", 4)
    monkeypatch.setattr(vectors, "SHORTLIST_PER_HIT", 1)


def vector(*seed: int) -> np.ndarray:
    return np.random.default_rng(list(seed)).standard_normal(DIM).astype(np.float32)


ops = st.lists(
    st.tuples(st.sampled_from(["add", "add", "remove"]), st.integers(1, 40), st.integers(0, 10**6)),
    min_size=1,
    max_size=120,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 40), max_size=40), ops, st.integers(0, 3))
def test_every_row_finds_itself_first_through_any_adds_removes_and_replacements(loaded, script, searches):
    # The bits must stay beside their rows through every shift, growth and replacement, and be taken again
    # around a new centre as the rows double: a row's own vector is at bit distance 0, so the shortlist
    # always holds it, and its exact cosine of 1 puts it first.
    with pytest.MonkeyPatch.context() as mp:
        shrink(mp)
        index = VectorIndex(shortlist_above=0)
        held = {i: vector(0, i) for i in sorted(set(loaded))}
        index.load(list(held), np.array(list(held.values())).reshape(len(held), DIM))
        for step, (op, id_, seed) in enumerate(script):
            if op == "add":
                held[id_] = vector(1, seed, id_)  # never two rows alike
                index.add(id_, held[id_])
            else:
                held.pop(id_, None)
                index.remove(id_)
            if step % 4 == searches and held:  # searching builds the bits: later changes must keep them right
                index.search(normalize(held[next(iter(held))]), 1)
        assert index.ids().tolist() == sorted(held)
        for id_, v in held.items():
            (found, cosine), *_ = index.search(normalize(v), 3)
            assert found == id_ and cosine == pytest.approx(1.0, abs=1e-5)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 400), st.integers(0, 2**32 - 1), st.integers(1, 30))
def test_a_shortlist_as_large_as_the_rows_is_the_exact_search(n, seed, k):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    index = VectorIndex(shortlist_above=0)  # every search shortlists; SHORTLIST_MIN (2,000) keeps every row
    index.load(np.arange(n) * 2, m)
    q = normalize(rng.standard_normal(DIM).astype(np.float32))
    scores = normalize(m) @ q
    expected = (np.argsort(-scores, kind="stable")[:k] * 2).tolist()
    got = index.search(q, k)
    assert [i for i, _ in got] == expected
    assert [c for _, c in got] == pytest.approx(np.sort(scores)[::-1][:k].tolist(), abs=1e-5)


def leaning(n: int, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n vectors in a narrow cone as embedding models make them (cosines 0.7-0.9), clustered, and the centres."""
    lean = normalize(rng.standard_normal(d).astype(np.float32))
    centres = rng.standard_normal((300, d)).astype(np.float32) / np.sqrt(d)
    m = 3 * lean + centres[rng.integers(0, 300, n)] + rng.standard_normal((n, d)).astype(np.float32) / np.sqrt(d)
    return m, normalize(3 * lean + centres)


def test_the_shortlist_finds_nearly_all_of_the_exact_top_ten_and_scores_them_exactly():
    rng = np.random.default_rng(11)
    m, questions = leaning(60_000, 96, rng)
    exact, short = VectorIndex(shortlist_above=10**9), VectorIndex(shortlist_above=0)
    exact.load(np.arange(60_000), m)
    short.load(np.arange(60_000), m)
    agree = []
    for q in questions[:40]:
        want, got = exact.search(q, 10), short.search(q, 10)
        agree.append(len({i for i, _ in want} & {i for i, _ in got}) / 10)
        for id_, cosine in got:  # what it returns it scored on the float32 row: no approximation in the score
            assert cosine == pytest.approx(exact.similarity([id_], q)[id_], abs=1e-6)
    assert np.mean(agree) >= 0.95
    assert short.nbytes() == exact.nbytes() + 60_000 * 16  # the bits: two 64-bit words a row beside 384 bytes


def test_a_search_within_some_ids_shortlists_only_among_them(small_shortlist):
    rng = np.random.default_rng(5)
    m = rng.standard_normal((400, DIM)).astype(np.float32)
    index = VectorIndex(shortlist_above=0)
    index.load(np.arange(400), m)
    within = np.arange(0, 400, 5)
    q = normalize(m[35])
    top, inside = index.search_also(q, 5, within, 5)
    assert top[0][0] == 35 and inside[0][0] == 35
    assert all(i % 5 == 0 for i, _ in inside) and len(inside) == 5
    assert index.search(q, 5, within=np.arange(1, 400, 5))[0][0] != 35
    assert index.search_also(q, 5, np.array([9999]), 5)[1] == []


def test_recall_through_the_planner_past_the_shortlist_size(monkeypatch, store):
    monkeypatch.setattr(vectors, "SHORTLIST_ABOVE", 10)
    shrink(monkeypatch)
    mem = LongTermMemory(store, Embedder(local_embed, "embed"))
    facts = [
        f"The user's {thing} is {colour}."
        for thing in ("car", "bike", "door", "mug")
        for colour in "red blue green".split()
    ]
    for fact in facts:
        mem.store_cell(fact)
    assert len(mem.index) == 12 and mem.index.shortlist_above == 10
    assert mem.recall("what colour is my bike, blue?", 1)[0]["text"] == "The user's bike is blue."
    added = mem.store_cell("The user's parrot is called Kiwi.")["remembered"]["id"]
    assert mem.recall("parrot Kiwi", 1)[0]["id"] == added
    mem.forget(str(added))
    assert len(mem.index) == 12 and all(h["id"] != added for h in mem.recall("parrot Kiwi", 3))


@pytest.mark.parametrize("above", [0, 10**9], ids=["shortlisted", "exact"])
def test_searches_beside_writes_in_another_thread_pair_every_id_with_its_own_score(above):
    # A write below the largest id shifts the rows in place; a search that picked its best after letting go
    # of the lock paired one row's score with the next row's id. Each id has one vector here, so every
    # (id, cosine) a search returns can be checked against it.
    import threading

    rng = np.random.default_rng(8)
    m = normalize(rng.standard_normal((300, DIM)).astype(np.float32))
    index = VectorIndex(shortlist_above=above)
    index.load(np.arange(100, 300), m[100:])
    done = threading.Event()

    def writer() -> None:
        for round_ in range(300):
            for id_ in range(round_ % 100, 100, 7):  # ids below every loaded one: each add and remove shifts
                index.add(id_, m[id_])
            for id_ in range(round_ % 100, 100, 7):
                index.remove(id_)
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    searched = 0
    while not done.is_set() or searched < 50:
        q = m[100 + searched % 200]
        top, inside = index.search_also(q, 5, np.arange(0, 300, 3), 3)
        for id_, cosine in top + inside + index.search(q, 5):
            assert cosine == pytest.approx(float(m[id_] @ q), abs=1e-5)
        searched += 1
    thread.join()
