"""The approximate searches against exact search on real embeddings: the memory eval's cached e5-small vectors.

`python -m bench.compact_real` reads ~/.cache/planner-evals/embeddings-multilingual-e5-small.jsonl (written
by `python -m evals memory --embed-model multilingual-e5-small`): every document vector is loaded into an
exact index and into each approximate one, and each cached question asks all of them for its top 10 and
top 50 (the 50 candidates a recall fuses). It prints the share of the exact lists each returns: the
compact index with its sign bits taken around the vectors' mean (as the planner does) and around zero
(as it did), and the exact index's sign-bit shortlist (vectors.py) at the planner's size for this many
rows and at the share of the rows it keeps past its minimum. Real vectors lean one way, which synthetic
ones do not.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from evals.bfcl import cache_dir
from planner.memory import vectors
from planner.memory.compact import CompactIndex
from planner.memory.vectors import VectorIndex

QUESTIONS = 300


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


def agreement(docs: np.ndarray, questions: np.ndarray, index) -> tuple[float, float]:
    """The mean share of the exact top 10 and top 50 the index returns."""
    n = len(docs)
    exact = VectorIndex(shortlist_above=n)  # never shortlists: the oracle
    exact.load(np.arange(n), docs)
    shares: dict[int, list[float]] = {10: [], 50: []}
    for q in questions[:QUESTIONS] / np.linalg.norm(questions[:QUESTIONS], axis=1, keepdims=True):
        for k, kept in shares.items():
            kept.append(len({i for i, _ in exact.search(q, k)} & {i for i, _ in index.search(q, k)}) / k)
    return float(np.mean(shares[10])), float(np.mean(shares[50]))


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
    n = len(docs)
    print(f"{'search':<52} {'vectors':>8} {'questions':>9} {'agree@10':>9} {'agree@50':>9}")
    share = f"{vectors.SHORTLIST_SHARE}"
    cases = [
        ("compact index, sign bits around the mean", lambda: compact(docs, True), None),
        ("compact index, sign bits around zero", lambda: compact(docs, False), None),
        (
            f"shortlist of {vectors.shortlist_size(n, 50):,} (the planner's at this size)",
            lambda: shortlisted(docs),
            None,
        ),
        (f"shortlist of 1/{share} of the rows ({n // vectors.SHORTLIST_SHARE:,})", lambda: shortlisted(docs), 1),
    ]
    for name, make, least in cases:
        saved = vectors.SHORTLIST_MIN, vectors.SHORTLIST_PER_HIT
        if least is not None:
            vectors.SHORTLIST_MIN, vectors.SHORTLIST_PER_HIT = least, least
        try:
            at10, at50 = agreement(docs, questions, make())
        finally:
            vectors.SHORTLIST_MIN, vectors.SHORTLIST_PER_HIT = saved
        print(f"{name:<52} {n:>8,} {min(QUESTIONS, len(questions)):>9} {at10:>9.3f} {at50:>9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
