"""How memories are matched: meaningful words, keyword queries, fusion of two ranked lists.

Pure functions over text and (id, score) lists, kept apart from the storage in
longterm.py so the retrieval eval (evals/memory.py) scores exactly what the
planner uses. Trade-off: min-max scaling looks only at the candidates of one
search, so a list of near-ties spreads to 0..1 as if they differed; averaging
with the other list is what keeps that from deciding alone.
"""

from __future__ import annotations

import re

STOPWORDS = frozenset(
    "a an and are as at be but by do does did for from has have how i i'm in is it its me my of on or our so "
    "that the their them they this to was we what when where which who why will with you your about am".split()
)


def meaningful_words(text: str) -> list[str]:
    """The words of a text that carry meaning, in order (no stop words, no single letters)."""
    return [w for w in re.findall(r"\w+", text.lower()) if w not in STOPWORDS and len(w) > 1]


def word_overlap(a: str, b: str) -> float:
    """The share of the shorter text's meaningful words that the other has too (0..1)."""
    wa, wb = set(meaningful_words(a)), set(meaningful_words(b))
    return len(wa & wb) / min(len(wa), len(wb)) if wa and wb else 0.0


def fts_query(text: str) -> str:
    """An FTS5 query matching any meaningful word of the text ('' if none)."""
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(meaningful_words(text)))


def minmax(ranked: list[tuple[int, float]]) -> dict[int, float]:
    """{id: score scaled to 0..1 between the list's worst and best} (all 1.0 when they are equal)."""
    if not ranked:
        return {}
    top, low = max(v for _, v in ranked), min(v for _, v in ranked)
    return {i: (v - low) / (top - low) if top > low else 1.0 for i, v in ranked}


def fuse(vec: list[tuple[int, float]], kw: list[tuple[int, float]]) -> dict[int, float]:
    """{id: score in 0..1} from (id, cosine) and (id, BM25) candidate lists: each list min-max
    scaled, then averaged (absent from a list counts as its worst).

    Scores, not ranks: reciprocal rank fusion treats a clear keyword hit and a near-tie alike, and on
    public long-conversation data (python -m evals memory) it scored between its two parts; this beats both.
    """
    a, b = minmax(vec), minmax(kw)
    return {i: (a.get(i, 0.0) + b.get(i, 0.0)) / 2 for i in a.keys() | b.keys()}
