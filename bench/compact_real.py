"""The approximate searches against exact search on real embeddings: the memory eval's cached e5-small vectors.

`python -m bench.compact_real` reads ~/.cache/planner-evals/embeddings-multilingual-e5-small.jsonl (written
by `python -m evals memory --embed-model multilingual-e5-small`): every document vector is loaded into an
exact index and into each approximate one, and a sample of the cached questions asks all of them for its
top 1, 5, 10 and 50. It prints the share of the exact lists each returns: the compact index with its
sign bits taken around the vectors' mean (as the planner does) and around zero (as it did), and the exact
index's sign-bit shortlist (vectors.py) at the share of the rows the planner keeps and at smaller ones.

How to read the shortlist rows at another size: a shortlist of a given share of the rows finds about
the same share of the exact top k when k is the same share of the rows. A recall's 50 candidates
among 100,000 memories are 0.05% of them, as the top 5 is of 9,000: read the agree@5 column for a
store of 100,000. Real vectors lean one way, which synthetic ones do not.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator

import numpy as np

from evals.bfcl import cache_dir
from planner.memory import vectors
from planner.memory.compact import CompactIndex
from planner.memory.vectors import VectorIndex

QUESTIONS = 600  # a sample of the cached questions of every set
TOPS = (1, 5, 10, 50)


def load(path) -> tuple[np.ndarray, np.ndarray]:
    """(document vectors, question vectors) from the eval's cache: "passage: " and "query: " texts."""
    docs, questions = [], []
    for line in path.read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:  # a line cut short by a kill
            continue
        (questions if entry["t"].startswith("query: ") else docs).append(entry["v"])
    return np.array(docs, dtype=np.float32), np.array(questions, dtype=np.float32)


def agreement(docs: np.ndarray, questions: np.ndarray, index, tops: tuple[int, ...] = TOPS) -> list[float]:
    """The mean share of the exact top k the index returns, for each k of tops."""
    n = len(docs)
    exact = VectorIndex(shortlist_above=n)  # never shortlists: the oracle
    exact.load(np.arange(n), docs)
    shares: dict[int, list[float]] = {k: [] for k in tops}
    for q in questions / np.linalg.norm(questions, axis=1, keepdims=True):
        for k, kept in shares.items():
            kept.append(len({i for i, _ in exact.search(q, k)} & {i for i, _ in index.search(q, k)}) / k)
    return [float(np.mean(shares[k])) for k in tops]


@contextlib.contextmanager
def share_alone(share: int) -> Iterator[None]:
    """Within it, the shortlist is 1/share of the rows searched, however few (the planner's floors off)."""
    saved = vectors.SHORTLIST_MIN, vectors.SHORTLIST_PER_HIT, vectors.SHORTLIST_SHARE
    vectors.SHORTLIST_MIN, vectors.SHORTLIST_PER_HIT, vectors.SHORTLIST_SHARE = 1, 1, share
    try:
        yield
    finally:
        vectors.SHORTLIST_MIN, vectors.SHORTLIST_PER_HIT, vectors.SHORTLIST_SHARE = saved


def compact(docs: np.ndarray, centred: bool) -> CompactIndex:
    """The compact index over docs, loaded in batches as the planner loads it."""
    n, index = len(docs), CompactIndex(centred=centred)
    index.load_batches(((np.arange(i, min(n, i + 20_000)), docs[i : i + 20_000]) for i in range(0, n, 20_000)), n)
    return index


def shortlisted(docs: np.ndarray) -> VectorIndex:
    """The exact index over docs, shortlisting at every size."""
    index = VectorIndex(shortlist_above=0)
    index.load(np.arange(len(docs)), docs)
    return index


def main() -> int:
    """Print the table."""
    path = cache_dir() / "embeddings-multilingual-e5-small.jsonl"
    if not path.exists():
        print(f"error: no e5-small vectors in {path}; run python -m evals memory --embed-model multilingual-e5-small")
        return 1
    docs, questions = load(path)
    questions = questions[np.random.default_rng(0).permutation(len(questions))[:QUESTIONS]]  # every set's
    n = len(docs)
    tops = " ".join(f"{'agree@' + str(k):>9}" for k in TOPS)
    print(f"{'search':<44} {'vectors':>8} {'questions':>9} {tops}")
    cases = [
        ("compact index, sign bits around the mean", lambda: compact(docs, True), None),
        ("compact index, sign bits around zero", lambda: compact(docs, False), None),
    ] + [
        (f"shortlist of 1/{share} of the rows ({n // share:,})", lambda: shortlisted(docs), share)
        for share in (vectors.SHORTLIST_SHARE, 25, 50)
    ]
    for name, make, share in cases:
        with share_alone(share) if share else contextlib.nullcontext():
            shares = agreement(docs, questions, make())
        print(f"{name:<44} {n:>8,} {len(questions):>9} " + " ".join(f"{a:>9.3f}" for a in shares))
    print()
    scaling(docs, questions)
    return 0


def scaling(docs: np.ndarray, questions: np.ndarray) -> None:
    """The planner's share of the rows at all, half and a quarter of the vectors (a random part), asked
    for the same share of the rows as its top k: the agreement should not move with the size."""
    share = vectors.SHORTLIST_SHARE
    print(
        f"{f'shortlist of 1/{share}, top k the same share':<44} {'vectors':>8} {'questions':>9} {'k':>5} {'agree@k':>9}"
    )
    rng = np.random.default_rng(1)
    with share_alone(share):
        for part, name in ((1, "all"), (2, "a half"), (4, "a quarter")):
            some = docs[rng.permutation(len(docs))[: len(docs) // part]]
            for k in (20 // part, 40 // part):
                (agree,) = agreement(some, questions, shortlisted(some), (k,))
                print(f"{name + ' of the vectors':<44} {len(some):>8,} {len(questions):>9} {k:>5} {agree:>9.3f}")


if __name__ == "__main__":
    sys.exit(main())
