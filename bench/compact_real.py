"""The compact index against exact search on real embeddings: the memory eval's cached e5-small vectors.

`python -m bench.compact_real` reads ~/.cache/planner-evals/embeddings-multilingual-e5-small.jsonl (written
by `python -m evals memory --embed-model multilingual-e5-small`): every document vector is loaded into the
exact index and the compact one, and each cached question asks both for its top 10. It prints the share
of the exact top 10 the compact index returns, with its sign bits taken around the vectors' mean (as the
planner does) and around zero (as it did). Real vectors lean one way, which synthetic ones do not.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from evals.bfcl import cache_dir
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


def agreement(docs: np.ndarray, questions: np.ndarray, centred: bool) -> float:
    """The mean share of the exact top 10 the compact index returns."""
    n = len(docs)
    exact, compact = VectorIndex(), CompactIndex(centred=centred)
    exact.load(np.arange(n), docs)
    compact.load_batches(((np.arange(i, min(n, i + 20_000)), docs[i : i + 20_000]) for i in range(0, n, 20_000)), n)
    shares = []
    for q in questions[:QUESTIONS] / np.linalg.norm(questions[:QUESTIONS], axis=1, keepdims=True):
        shares.append(len({i for i, _ in exact.search(q, 10)} & {i for i, _ in compact.search(q, 10)}) / 10)
    return float(np.mean(shares))


def main() -> int:
    """Print the table."""
    path = cache_dir() / "embeddings-multilingual-e5-small.jsonl"
    if not path.exists():
        print(f"error: no e5-small vectors in {path}; run python -m evals memory --embed-model multilingual-e5-small")
        return 1
    docs, questions = load(path)
    print(f"{'compact index, sign bits taken':<34} {'vectors':>8} {'questions':>9} {'agree@10':>9}")
    for name, centred in (("around the mean", True), ("around zero", False)):
        share = agreement(docs, questions, centred)
        print(f"{name:<34} {len(docs):>8,} {min(QUESTIONS, len(questions)):>9} {share:>9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
