"""Recall latency: the numpy index against the tutorial's pure-Python cosine
loop, side by side in one process, on synthetic 768-d vectors.

The numpy path is what `recall` runs after the lazy load: one matrix-vector
product and argpartition (embeddings.VectorIndex), plus the SQL lookup of the
k texts (memory.LongTermMemory). The loop is the tutorial's: for every stored
vector, Python-level dot product and norms.
"""

from __future__ import annotations

import math
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from db import Store
from embeddings import Embedder, pack
from longterm import LongTermMemory

DIM = 768


def _python_cosine_recall(query: list[float], rows: list[tuple[int, list[float]]], k: int) -> list[int]:
    scored = []
    for id_, v in rows:
        dot = sum(a * b for a, b in zip(query, v, strict=True))
        na = math.sqrt(sum(a * a for a in query))
        nb = math.sqrt(sum(b * b for b in v))
        scored.append((dot / (na * nb), id_))
    scored.sort(reverse=True)
    return [i for _, i in scored[:k]]


def _timed(fn, repeats: int) -> float:
    """Median milliseconds of fn() over repeats."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def populate(store: Store, n: int, dim: int, rng: np.random.Generator, model: str = "bench") -> None:
    """Insert n memories with random vectors."""
    batch = 20_000
    with store.write() as conn:
        for start in range(0, n, batch):
            m = rng.standard_normal((min(batch, n - start), dim), dtype=np.float32)
            conn.executemany(
                "INSERT INTO memories (text, embedding, embed_model) VALUES (?, ?, ?)",
                ((f"memory {start + i}", pack(v), model) for i, v in enumerate(m)),
            )


def _measure(n: int, with_loop: bool, repeats: int, rng: np.random.Generator) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as d:
        store = Store(Path(d) / "bench.db")
        populate(store, n, DIM, rng)
        queries = iter(rng.standard_normal((repeats, DIM), dtype=np.float32))
        # The embedder call is replaced by a ready vector: we time search, not Ollama.
        mem = LongTermMemory(store, Embedder(lambda model, texts: [next(queries).tolist() for _ in texts], "bench"))
        t0 = time.perf_counter()
        mem._load()
        load_ms = (time.perf_counter() - t0) * 1000
        ms = _timed(lambda: mem.recall("q", 3), repeats)
        mb = (mem.index._m.nbytes + mem.index._ids.nbytes) / 1e6
        rows.append({"what": "recall, numpy (this planner)", "n": n, "ms": ms, "load_ms": load_ms, "mb": mb})
        store.close()
    if with_loop:
        data = [(i, v.tolist()) for i, v in enumerate(rng.standard_normal((n, DIM), dtype=np.float32))]
        q = rng.standard_normal(DIM, dtype=np.float32).tolist()
        loop_ms = _timed(lambda: _python_cosine_recall(q, data, 3), max(1, repeats // 10))
        rows.append({"what": "recall, pure-Python loop", "n": n, "ms": loop_ms, "load_ms": None, "mb": None})
    return rows


def run(sizes: list[int], loop_sizes: list[int], repeats: int = 20) -> list[dict]:
    """Rows of (what, n, median ms per query, load ms, resident MB)."""
    rng = np.random.default_rng(0)
    return [row for n in sizes for row in _measure(n, n in loop_sizes, repeats, rng)]
