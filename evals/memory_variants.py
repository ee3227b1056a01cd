"""Variants of the memory search for `python -m evals memory --experiments`: other ways of fusing the two
candidate lists, the planner's search with each of its parts changed or left out, and second looks
at the best candidates. Each is scored beside the planner's search; what is kept is in docs/memory.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evals.memory import best_first
from planner.memory.scoring import fuse, minmax
from planner.periods import TimeQuestion

Ranked = list[tuple[int, float]]  # (memory id, score) best first


def _rrf(k: float, w_vec: float = 1.0, w_kw: float = 1.0) -> Callable[[Ranked, Ranked], list[int]]:
    def fuse(vec: Ranked, kw: Ranked) -> list[int]:
        score: dict[int, float] = {}
        for weight, ranked in ((w_vec, vec), (w_kw, kw)):
            for rank, (id_, _) in enumerate(ranked):
                score[id_] = score.get(id_, 0.0) + weight / (k + rank)
        return best_first(score)

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
        return best_first({i: w_vec * a.get(i, floor_a) + w_kw * b.get(i, floor_b) for i in ids})

    return fuse


FUSIONS: dict[str, Callable[[Ranked, Ranked], list[int]]] = {
    "rrf k=60 (before)": _rrf(60),
    "rrf k=10": _rrf(10),
    "rrf k=60, keyword x2": _rrf(60, 1, 2),
    "scores, max": _scores("max"),
    "scores, min-max (now)": lambda vec, kw: best_first(fuse(vec, kw)),
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
    "fused, every scene hit counts": {"SCENE_MARGIN": -9.0},
    "fused, scene margin -0.02": {"SCENE_MARGIN": -0.02},
    "fused, scene margin +0.02": {"SCENE_MARGIN": 0.02},
    "fused, scene weight 1.0": {"SCENE_WEIGHT": 1.0},
    "fused, no hop to the best hit's scenes": {"SCENE_HOP": False},
    "fused, scene weight 0.25": {"SCENE_WEIGHT": 0.25},
    "fused, scenes bring 1 each": {"SCENE_CELLS": 1},
    "fused, no turns around the best": {"NEIGHBOUR_WEIGHT": 0.0},
    "fused, turns around at 0.5": {"NEIGHBOUR_WEIGHT": 0.5},
    "fused, turns around at 0.7": {"NEIGHBOUR_WEIGHT": 0.7},
    "fused, turns around the best 20": {"NEIGHBOURS_OF": 20},
    "fused, no names searched again": {"NAME_HOP_WEIGHT": 0.0},
    "fused, names searched again at 0.3": {"NAME_HOP_WEIGHT": 0.3},
    "fused, names searched again at 0.7": {"NAME_HOP_WEIGHT": 0.7},
    "fused, as before this round": {"NEIGHBOUR_WEIGHT": 0.0, "NAME_HOP_WEIGHT": 0.0, "KEYWORD_COLUMNS": "text"},
    "fused, keywords without the speaker": {"KEYWORD_COLUMNS": "text"},
    "fused, no lift for the person named": {"SPEAKER_BOOST": 0.0},
    "fused, person named lifted 0.15": {"SPEAKER_BOOST": 0.15},
    "fused, person named lifted 0.6": {"SPEAKER_BOOST": 0.6},
    "fused, no lift for a stretch of conversation": {"STRETCH_WEIGHT": 0.0},
    "fused, keyword x1.5": {"KEYWORD_WEIGHT": 1.5},
    "fused, keyword x0.7": {"KEYWORD_WEIGHT": 0.7},
    "fused, stretch lifted 0.5": {"STRETCH_WEIGHT": 0.5},
    "fused, stretch of 3 turns": {"STRETCH": 3},
    "fused, stretch of 15 turns": {"STRETCH": 15},
    "fused, every scene lifts, however large": {"SCENE_MAX_SHARE": 1.0},
    "fused, scenes of at most 3% lift": {"SCENE_MAX_SHARE": 0.03},
    "fused, scenes of at most 3% lift, no hop": {"SCENE_MAX_SHARE": 0.03, "SCENE_HOP": False},
    "fused, scenes of at most 3% lift, keyword x1.5": {"SCENE_MAX_SHARE": 0.03, "KEYWORD_WEIGHT": 1.5},
}


def experiments(only: str = "") -> dict[str, Callable[[Any, str], list[int]]]:
    """For --experiments: fusion variants over the same two candidate lists (50 each), and the planner's
    search with each of its parts changed or left out; only those whose name holds one of the comma-separated
    words of `only` when given."""

    def method(fuse: Callable[[Ranked, Ranked], list[int]]) -> Callable[[Any, str], list[int]]:
        return lambda memory, q: fuse(memory.vector_search(q), memory.keyword_scores(q))

    every = {name: method(fuse) for name, fuse in FUSIONS.items()} | {
        name: _variant(**changes) for name, changes in VARIANTS.items()
    }
    words = [w for w in only.split(",") if w]
    return {name: m for name, m in every.items() if not words or any(w in name for w in words)}


# -- second looks at the best candidates: each costs model calls, so each must pay for them

PICK_PROMPT = """\
You choose which of a user's memories answer a question. You get the question and numbered memories.
Answer with JSON only: {"best": [the numbers of the memories that answer it, best first, at most 3]}, or {"best": []} if none does."""
PICK_SCHEMA = {
    "type": "object",
    "properties": {"best": {"type": "array", "items": {"type": "integer"}}},
    "required": ["best"],
}


def _query_variants(weight: float = 0.5, n: int = 20) -> Callable[[Any, str], list[int]]:
    """The planner's best n, re-scored with the cosine of the question embedded two more ways by the user's
    own model: as a document (its document prefix) and as its meaningful words alone. Two embedding calls."""
    from planner.memory.scoring import meaningful_words

    def method(memory: Any, q: str) -> list[int]:
        hits = memory.search(q, n)
        if len(hits) < 2:
            return [h["id"] for h in hits]
        ids = [h["id"] for h in hits]
        looks = [memory.embedder.documents([q])[0], memory.embedder.query(" ".join(meaningful_words(q)) or q)]
        sims = [memory.index.similarity(ids, v) for v in looks]
        second = minmax([(i, sum(s.get(i, 0.0) for s in sims) / len(sims)) for i in ids])
        first = minmax([(h["id"], h["score"]) for h in hits])
        return best_first({i: (1 - weight) * first[i] + weight * second[i] for i in ids})[:5]

    return method


def _critic_picks(llm: Any, model: str, n: int = 10) -> Callable[[Any, str], list[int]]:
    """The planner's best n shown to the critic model in JSON mode, which picks those that answer; they go
    first, the rest keep their order. One chat call."""
    import json

    from planner.memory.search import dated

    def method(memory: Any, q: str) -> list[int]:
        hits = memory.search(q, n)
        if len(hits) < 2:
            return [h["id"] for h in hits]
        listing = "\n".join(f"{i + 1}. {h['text']}{dated(h)}" for i, h in enumerate(hits))
        try:
            r = llm.chat_json(
                model,
                [
                    {"role": "system", "content": PICK_PROMPT},
                    {"role": "user", "content": f"Question: {q}\nMemories:\n{listing}"},
                ],
                schema=PICK_SCHEMA,
                options={"num_ctx": 2048, "num_predict": 40, "temperature": 0},
                purpose="memory second look",
            )
            picks = [p for p in json.loads(r.content)["best"] if isinstance(p, int) and 1 <= p <= len(hits)]
        except (ValueError, KeyError, TypeError):
            picks = []  # no usable answer: the planner's order stands
        chosen = [hits[p - 1]["id"] for p in dict.fromkeys(picks)]
        return (chosen + [h["id"] for h in hits if h["id"] not in chosen])[:5]

    return method


def second_looks(llm: Any = None, critic: str | None = None) -> dict[str, Callable[[Any, str], list[int]]]:
    """The second-look variants: query variants always, the critic's pick when a model server is given."""
    out = {
        "second look: query variants": _query_variants(),
        "second look: query variants x0.25": _query_variants(0.25),
    }
    if llm is not None and critic:
        out["second look: critic picks"] = _critic_picks(llm, critic)
    return out
