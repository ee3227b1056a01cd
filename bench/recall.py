"""Recall latency, resident memory and agreement with exact search: the
planner's index against the tutorial's pure-Python cosine loop, side by side
in one process, on synthetic 768-d vectors.

Vectors are clustered (2,000 centres plus noise), as real embeddings are:
uniformly random vectors have no near neighbours, so no index, exact or not,
means anything on them. What is timed is `LongTermMemory.vector_search` after
the lazy load: the numpy search plus nothing else (the query vector is
ready-made, so Ollama is not timed). Up to 250,000 memories the index is
exact float32; past that it is the compact index (sign bits + int8), and
"agree@10" is the share of the exact top 10 it returns.
"""

from __future__ import annotations

import datetime as dt
import math
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from planner.memory.longterm import LongTermMemory
from planner.memory.scoring import fuse
from planner.memory.vectors import Embedder, normalize, pack
from planner.storage.db import Store

DIM = 768
CENTRES = 2_000
TURNS = 600  # turns of a synthetic conversation (REALTALK's run 400-1,500)


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


def vectors(centres: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """n clustered float32 vectors around the given centres."""
    return centres[rng.integers(0, len(centres), n)] + 0.8 * rng.standard_normal(
        (n, centres.shape[1]), dtype=np.float32
    )


def memory_text(i: int, rng: np.random.Generator) -> str:
    """A sentence of four words from a 5,000-word vocabulary, so keyword search has realistic hit lists."""
    return f"note {i} about " + " ".join(f"w{w}" for w in rng.integers(0, 5_000, 4))


def populate(store: Store, n: int, dim: int, rng: np.random.Generator, model: str = "bench") -> np.ndarray:
    """Insert n memories with clustered vectors; returns the centres."""
    centres = rng.standard_normal((CENTRES, dim), dtype=np.float32)
    batch = 20_000
    with store.write() as conn:
        for start in range(0, n, batch):
            m = vectors(centres, min(batch, n - start), rng)
            conn.executemany(
                "INSERT INTO memories (text, embedding, embed_model) VALUES (?, ?, ?)",
                ((memory_text(start + i, rng), pack(v), model) for i, v in enumerate(m)),
            )
    return centres


def _exact_top10(store: Store, queries: np.ndarray) -> list[set[int]]:
    # Streaming exact search over the stored float32 vectors, for the agreement column.
    best = [[] for _ in queries]
    cursor = store.conn().execute("SELECT id, embedding FROM memories ORDER BY id")
    while chunk := cursor.fetchmany(50_000):
        ids = np.array([r[0] for r in chunk])
        m = normalize(np.frombuffer(b"".join(r[1] for r in chunk), dtype="<f4").reshape(len(chunk), -1))
        scores = m @ queries.T  # (chunk, q)
        for j in range(len(queries)):
            best[j] = sorted(best[j] + list(zip(scores[:, j].tolist(), ids.tolist(), strict=True)), reverse=True)[:10]
    return [{i for _, i in b} for b in best]


def _measure(n: int, with_loop: bool, repeats: int, rng: np.random.Generator) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as d:
        store = Store(Path(d) / "bench.db")
        centres = populate(store, n, DIM, rng)
        queries = normalize(vectors(centres, repeats, rng))
        feed = iter(queries)
        # The embedder returns ready query vectors: we time search, not Ollama.
        mem = LongTermMemory(store, Embedder(lambda model, texts: [next(feed).tolist() for _ in texts], "bench"))
        t0 = time.perf_counter()
        mem._load()
        load_ms = (time.perf_counter() - t0) * 1000
        found: list[set[int]] = []
        ms = _timed(lambda: found.append({i for i, _ in mem.vector_search("q", 10)}), repeats)
        exact = _exact_top10(store, queries[: min(10, repeats)])
        agree = statistics.mean(len(a & b) / 10 for a, b in zip(found, exact, strict=False))
        kind = type(mem.index).__name__
        rows.append(
            {
                "what": f"recall, {kind}",
                "n": n,
                "ms": ms,
                "load_ms": load_ms,
                "mb": mem.index.nbytes() / 1e6,
                "agree": agree,
            }
        )
        store.close()
    if with_loop:
        data = [(i, v.tolist()) for i, v in enumerate(vectors(centres, n, rng))]
        q = queries[0].tolist()
        loop_ms = _timed(lambda: _python_cosine_recall(q, data, 3), max(1, repeats // 10))
        rows.append(
            {"what": "recall, pure-Python loop", "n": n, "ms": loop_ms, "load_ms": None, "mb": None, "agree": None}
        )
    return rows


def run(sizes: list[int], loop_sizes: list[int], repeats: int = 20) -> list[dict]:
    """Rows of (what, n, median ms per query, load ms, resident MB, agreement with exact)."""
    rng = np.random.default_rng(0)
    return [row for n in sizes for row in _measure(n, n in loop_sizes, repeats, rng)]


# -- one recall against a bare scan of the same matrix

YEARS = 10  # the synthetic memories were said over this many years
NAMES = 500  # and one in ten names one of this many people, so scenes form


class _BenchEmbedder:
    """Ready-made vectors: each query gets the next prepared one; documents (scene summaries) a clustered one."""

    def __init__(self, centres: np.ndarray, queries: np.ndarray, rng: np.random.Generator):
        self.centres, self.queries, self.rng, self.i = centres, queries, rng, 0

    def __call__(self, model: str, texts: list[str]) -> list[np.ndarray] | np.ndarray:
        if texts and texts[0].startswith("q:"):
            self.i += 1
            return [self.queries[self.i % len(self.queries)]]  # as Ollama's answer, but already numbers
        return vectors(self.centres, len(texts), self.rng)


def _dated(store: Store, n: int, rng: np.random.Generator) -> None:
    """Give every memory a day said (and about) over YEARS years, a name in one of ten, and a place in a
    conversation of TURNS turns (so a search also reads the turns around its best candidates)."""
    start = dt.date(2026, 12, 1) - dt.timedelta(days=365 * YEARS)
    days = [(start + dt.timedelta(days=int(d))).isoformat() for d in rng.integers(0, 365 * YEARS, n)]
    with store.write() as conn:
        conn.executemany(
            "UPDATE memories SET said_on = ?, happened_on = ?, happened_to = ?, text = text || ?, conversation = ?, "
            "turn_no = ? WHERE id = ?",
            [
                (
                    d,
                    d,
                    d,
                    f" with Person{rng.integers(0, NAMES)}" if i % 10 == 0 else "",
                    f"c{i // TURNS}",
                    i % TURNS,
                    i + 1,
                )
                for i, d in enumerate(days)
            ],
        )


def _recall_before(mem: LongTermMemory, query: str, k: int = 3) -> list[dict]:
    """The search as it was before time, context and scenes, for comparison: the two lists one after the
    other, fused, every candidate's row read and weighted."""
    qv = mem._query(query)
    vec = mem.vector_search(query, vector=qv)
    kw = mem.keyword_scores(query)
    fused = fuse(vec, kw)
    marks = ",".join("?" * len(fused))
    rows = mem.store.conn().execute(
        f"SELECT id, text, kind, topic, salience, updated_at, said_on FROM memories WHERE id IN ({marks})", list(fused)
    )
    cosine = dict(vec)
    missing = [i for i in fused if i not in cosine]
    if missing:
        cosine.update(mem.index.similarity(missing, qv))
    now, hits = dt.datetime.now(), []
    for r in rows:
        try:
            age = max(0.0, (now - dt.datetime.fromisoformat(r["updated_at"])).days)
        except (TypeError, ValueError):
            age = 365.0
        weight = (0.75 + 0.5 * r["salience"]) * (0.8 + 0.2 * math.exp(-age / 365))
        hits.append({"id": r["id"], "text": r["text"], "score": fused[r["id"]] * weight, "cosine": cosine.get(r["id"])})
    return sorted(hits, key=lambda h: -h["score"])[:k]


def recall_vs_scan(n: int, repeats: int = 30) -> list[dict]:
    """Median ms of a bare numpy scan with top-k over the index's own matrix (every row's product), of the
    index's own search (past SHORTLIST_ABOVE rows a sign-bit shortlist), and of one planner recall (a plain
    question, one naming a month, one naming a scene), measured in turns of one loop."""
    rng = np.random.default_rng(5)
    with tempfile.TemporaryDirectory() as d:
        store = Store(Path(d) / "bench.db")
        centres = populate(store, n, DIM, rng)
        _dated(store, n, rng)
        embed = _BenchEmbedder(centres, normalize(vectors(centres, 64, rng)), rng)
        embedder = Embedder(embed, "bench")
        embedder.query_prefix = "q:"
        mem = LongTermMemory(store, embedder, today=lambda: dt.date(2026, 12, 1))
        mem._load()
        while not mem.scenes.refresh():
            pass
        matrix, ids = mem.index._m[: len(mem.index)], mem.index.ids()
        words = [r[0] for r in store.conn().execute("SELECT text FROM memories ORDER BY random() LIMIT 64")]

        def bare() -> None:
            q = embed.queries[embed.i % len(embed.queries)]
            scores = matrix @ q
            top = np.argpartition(-scores, 19)[:20]
            ids[top[np.argsort(-scores[top])]]

        def asking(template: str):
            def one() -> None:
                mem.begin_turn()
                mem.recall(template.format(words[embed.i % len(words)].split(" about ")[-1]), 3)

            return one

        def before() -> None:
            mem.begin_turn()
            _recall_before(mem, "what did I say about {}?".format(words[embed.i % len(words)].split(" about ")[-1]))

        def exact(fn):  # the same, with every row's product computed (no sign-bit shortlist)
            def one() -> None:
                mem.index.shortlist_above, saved = len(mem.index), mem.index.shortlist_above
                try:
                    fn()
                finally:
                    mem.index.shortlist_above = saved

            return one

        def shortlist() -> None:
            mem.index.search(embed.queries[embed.i % len(embed.queries)], 20)

        cases = {
            "bare numpy scan + top-k": bare,
            "the index's search alone": shortlist,
            "one recall as before time and scenes": before,
            "one recall, exact scan (no shortlist)": exact(asking("what did I say about {}?")),
            "one recall": asking("what did I say about {}?"),
            "one recall, a month named": asking("what did I do last may about {}?"),
            "one recall, a scene named": asking("what about Person7 and {}?"),
            "one recall, a word in every memory": asking("which note did I write about {}?"),
            "one recall, only a word in every memory": lambda: (mem.begin_turn(), mem.recall("notes?", 3)),
        }
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(repeats):  # interleaved, so a busy moment of the machine hits every case alike
            for name, fn in cases.items():
                samples[name].append(_timed(fn, 1))
        store.close()
    bare_ms = statistics.median(samples["bare numpy scan + top-k"])
    return [
        {"what": name, "n": n, "ms": statistics.median(s), "ratio": statistics.median(s) / bare_ms}
        for name, s in samples.items()
    ]


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.recall [--quick] [--json FILE]`: one recall against a bare scan at 100,000 memories (the
    table `python -m bench speed` prints last but one), written to FILE as JSON too."""
    import argparse
    import json

    p = argparse.ArgumentParser(prog="python -m bench.recall", description=main.__doc__)
    p.add_argument("--quick", action="store_true", help="1,000 memories, 5 rounds: to check it runs")
    p.add_argument("--json", type=Path, help="write the rows here")
    args = p.parse_args(argv)
    rows = recall_vs_scan(1_000 if args.quick else 100_000, repeats=5 if args.quick else 40)
    before = next(r["ms"] for r in rows if r["what"].startswith("one recall as before"))
    print(f"{'recall against a bare scan, same matrix':<44} {'n':>8} {'ms':>8} {'x scan':>7} {'x before':>9}")
    for r in rows:
        print(f"{r['what']:<44} {r['n']:>8,} {r['ms']:>8.2f} {r['ratio']:>7.2f} {r['ms'] / before:>9.2f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
