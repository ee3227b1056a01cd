"""Recall: the memories that answer a question. The search half of LongTermMemory (longterm.py).

One search, step by step:

1. The question is read for time in code (planner/periods.py): the days it asks about ("last May",
   "two weeks ago"), or an event it is relative to ("before the move": the move's day is the best
   keyword match for "the move"), and whether it wants the first or the last of several matches.
2. When the question refers back ("what did she say about it?"), the names said in the user's
   turns just before are added to what is searched (scoring.with_context).
3. Two candidate lists, by meaning (the vector index) and by keyword (FTS5/BM25). For a period,
   each list also gets its best among the memories about those days (Days: two int32 arrays beside
   the index), the vector ones picked from the scores of the one scan; a period that holds a tenth
   of all memories or more is left to the weighting alone.
4. The lists are fused by score (scoring.fuse). Scenes (scenes.py) then lift their memories closest
   to the question: a scene whose summary is closer to the question than any one memory is, a
   scene the question names, and, unless the question is about time, the best memory's own scenes.
   The second fact of a two-fact question shares a name with the first, not words with the question.
5. Each candidate is weighted by salience and by how long ago it was said, raised when it is about
   the asked period, and among near ties the earliest or latest comes first when that was asked.
   Only the best k have their text read.

Every step reuses the one query vector, and none adds a second scan; past 20,000 memories the
keyword search runs in a thread while the matrix is scanned, and past 50,000 the scan computes the
exact product only for a sign-bit shortlist (vectors.py; bench/recall.py measures recall against a
bare numpy scan of the same matrix). Each constant below was set by measuring its
variants (python -m evals memory --experiments; docs/memory.md).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from planner.dates import MONTHS
from planner.memory.compact import CompactIndex
from planner.memory.days import Days
from planner.memory.errors import LongTermMemoryError
from planner.memory.scenes import Scenes
from planner.memory.scoring import (
    FACT_WORDS,
    STOPWORDS,
    fts_any,
    fts_words,
    fuse,
    meaningful_words,
    minmax,
    names_in,
    with_context,
)
from planner.memory.vectors import Embedder, VectorIndex, np, rows_present
from planner.model.base import ModelError
from planner.periods import MONTH_LEAD, Period, TimeQuestion, around, in_question
from planner.prompts import MEMORY_NOTES
from planner.storage.memories import MemoryStore

AUTO_RECALL_COSINE = 0.55  # automatic recall: keyword hit, or at least this similar
SHARED_K = 20  # hits kept per shared search (the recall tool asks for at most 20)
CANDIDATES = 50  # per list
WITHIN = 20  # per list, from inside a named period
WITHIN_SHARE = 0.1  # a period holding more of the memories than this is left to the weighting
PERIOD_BOOST = 0.3  # added to the score of a memory about the asked days (python -m evals memory)
NEAR_TIE = 0.8  # "the first/last time": among hits this close to the best, the order is by day
BESIDE_ABOVE = (
    20_000  # from this many memories the keyword search runs beside the scan (below: handing over costs more)
)
SCENES_K, SCENE_CELLS, SCENE_WEIGHT = 2, 3, 0.5  # scenes consulted, memories each brings, their weight
SCENE_MARGIN = 0.0  # a scene counts when its summary is at least this much closer than the best memory
SCENE_HOP = True  # also the best memory's scenes, unless the question is about time (then time ranks)
SCENE_MAX_SHARE = 0.1  # a scene holding more than this share of all memories lifts none of them (who said half)
NEIGHBOURS_OF, NEIGHBOUR_WEIGHT = 10, 0.3  # the best candidates whose conversation turns around them count too
NAME_HOP, NAME_HOP_WEIGHT = 3, 0.5  # the best hits whose names are searched again, and that search's weight
STRETCH, STRETCH_WEIGHT = 8, 0.25  # turns either side that make a stretch of conversation, and its lift
SPEAKER_BOOST = 0.3  # added to the score of a memory said by a person the question names, or naming them
# A word in more than this many memories is left out of the keyword search (all of them: no keyword list):
# BM25 weighs it little, and FTS5 scores every row it matches (a word in all of 100,000 memories: 0.5 s).
COMMON = 5_000
KEYWORD_WEIGHT = 1.0  # the keyword list's weight in the fusion, the vector list's being 1
KEYWORD_COLUMNS = ""  # "" : the words and who said them; "text": the words alone (python -m evals memory)


def _turn(row: Any) -> dict[str, Any]:
    # A turn around a hit, as the hit shows it.
    out = {"id": row["id"], "text": row["text"], "said": row["said_on"]}
    return out | ({"speaker": row["speaker"]} if row["speaker"] else {})


class Ranked:
    """One search's best candidates, ranked on numbers alone; the hits are made (text read, turns around each)
    only as far as someone asks: automatic recall wants 3, the recall tool up to 20 of the same search."""

    def __init__(
        self,
        search: Search,
        order: list[tuple[float, int]],
        qv: Any,
        cosine: dict[int, float],
        keyword: set[int],
        around: dict[int, list[Any]],
    ):
        self.search, self.order, self.qv, self.cosine, self.keyword = search, order, qv, cosine, keyword
        self.around = around  # the turns around the candidates the search read already, by id
        self.made: list[dict[str, Any]] = []
        self.read = 0  # how far into order the hits are made (a row forgotten meanwhile makes none)

    def hits(self, k: int) -> list[dict[str, Any]]:
        """The best k hits (fewer when the search found fewer)."""
        while len(self.made) < k and self.read < len(self.order):
            more = self.order[self.read : self.read + k - len(self.made)]
            self.read += len(more)
            self.made += self.search._hits(self, more)
        return self.made[:k]


def _stretches(fused: dict[int, float], places: dict[int, tuple[str, int]]) -> dict[int, float]:
    """{id: 0..1} for candidates that are turns of a conversation: the summed scores of the other candidates
    within STRETCH turns of it, the densest being 1.

    A question is often answered where the conversation was about it: "what Italian dishes does Elise
    like?" is answered by "I'm a sucker for homemade spaghetti, either with sausage or meatballs", said
    among turns about a cooking class and a favourite Italian region, and sharing one word with the
    question. The turns right beside the best are lifted anyway (_add_neighbours); this weighs a whole
    stretch. Measured on REALTALK's tuning part (docs/memory.md); a memory that is not a turn of a
    conversation gets nothing from it.
    """
    by_conversation: dict[str, list[tuple[int, int]]] = {}
    for id_, (conversation, turn) in places.items():
        by_conversation.setdefault(conversation, []).append((turn, id_))
    near: dict[int, float] = {}
    for turns in by_conversation.values():
        turns.sort()
        for i, (turn, id_) in enumerate(turns):
            total, j = 0.0, i - 1
            while j >= 0 and turn - turns[j][0] <= STRETCH:
                total, j = total + fused[turns[j][1]], j - 1
            j = i + 1
            while j < len(turns) and turns[j][0] - turn <= STRETCH:
                total, j = total + fused[turns[j][1]], j + 1
            near[id_] = total
    top = max(near.values(), default=0.0)
    return {i: v / top for i, v in near.items()} if top > 0 else {}


def _day(text: str | None, default: dt.date) -> dt.date:
    try:
        return dt.date.fromisoformat(text[:10]) if text else default
    except ValueError:
        return default


class Search:
    """Searching the memories; mixed into LongTermMemory, which provides the store, the embedder, the
    vector index, the scenes and the planner's today."""

    db: MemoryStore
    embedder: Embedder
    index: VectorIndex | CompactIndex
    days: Days
    scenes: Scenes
    today: Callable[[], dt.date]
    _version: int
    _searches: dict[tuple[Any, ...], Ranked]
    _context: list[str]
    speakers: set[str]
    _pool: ThreadPoolExecutor | None

    def _load(self) -> None:  # provided by LongTermMemory
        raise NotImplementedError

    def _beside(self) -> ThreadPoolExecutor:
        # One thread for the keyword search that runs beside the vector scan; started on first use.
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="planner-keywords")
        return self._pool

    def close(self) -> None:
        """End the thread of the keyword search beside the scan, if one started (it starts again if needed)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def _query(self, query: str) -> np.ndarray | None:
        # The query's vector, or None when there is nothing to search.
        try:
            self._load()
            return self.embedder.query(query) if len(self.index) else None
        except ModelError as e:
            raise LongTermMemoryError(f"could not search memories: {e}") from None

    def vector_search(
        self, query: str, n: int = CANDIDATES, vector: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """(id, cosine) best first, by embedding alone."""
        vector = self._query(query) if vector is None else vector
        if vector is None:
            return []
        try:
            return self.index.search(vector, n)
        except ValueError:
            raise LongTermMemoryError("the embedding model changed mid-session; restart the planner") from None

    def keyword_search(self, query: str, n: int = CANDIDATES) -> list[int]:
        """Ids best first by BM25 over the memory text, by keywords alone."""
        return [id_ for id_, _ in self.keyword_scores(query, n)]

    def keyword_scores(self, query: str, n: int = CANDIDATES, forms: bool = True) -> list[tuple[int, float]]:
        """(id, BM25 score) best first; higher is better (SQLite's rank is its negative). forms=False: the
        query's words alone, without the other forms of irregular verbs (the search as it was, for evals)."""
        words = fts_words(query, forms)
        q = fts_any(words)
        if not q:
            return []
        # Only past COMMON memories can a word be in more than COMMON, and only when all the words together
        # are is each one asked about. When every word is that common, the keyword list is left empty: no
        # word tells the memories apart, the vector list still ranks them, and FTS5 would score every row.
        many = len(self.index) > COMMON and self.db.matches_more_than(q, COMMON)
        if many:
            rare = [w for w in words if len(words) > 1 and not self.db.matches_more_than(f'"{w}"', COMMON)]
            if not rare:
                return []
            q = fts_any(rare)
            many = self.db.matches_more_than(q, COMMON)
        if KEYWORD_COLUMNS:
            q = f"{KEYWORD_COLUMNS} : ({q})"
        return self.db.keyword(q, n, many)

    def begin_turn(self, recent: Sequence[str] = ()) -> None:
        """A new turn: forget the last turn's searches (their scores age, and the user may have changed
        things) and keep what the user said just before, for questions that refer back to it."""
        self._searches.clear()
        self._context = [r for r in recent if r.strip()]

    def search(self, query: str, k: int = 3) -> list[dict[str, Any]]:
        """The k best memories for a question: fused vector and keyword rank, scenes, time, salience, recency.

        One embedding and one index search per distinct query per turn: automatic recall and the
        `recall` tool asking the same thing share it, until a memory is written.
        """
        key = (query, tuple(self._context), self._version)
        if key not in self._searches:
            if len(self._searches) >= 8:
                self._searches.clear()
            self._searches[key] = self._search(query, max(k, SHARED_K))
        return [dict(h) for h in self._searches[key].hits(k)]

    def _search(self, query: str, k: int) -> Ranked:
        today = self.today()
        asked = in_question(query, today)
        text = with_context(query, self._context)  # the period's words too: leaving them out measured worse
        # BM25 in SQLite runs while the question is embedded and the matrix scanned: none of the three holds
        # the GIL, so the keyword list costs little once there is enough to scan (bench/recall.py), and
        # nothing while the embedding model answers. For a period, more hits are read at once: their best
        # inside the period join the list.
        n = 4 * CANDIDATES if asked else CANDIDATES
        pending = self._beside().submit(self.keyword_scores, text, n) if len(self.index) > BESIDE_ABOVE else None
        qv = self._query(text)
        period = asked.period or self._around_anchor(asked, today)
        inside = self._inside(period) if period else None
        vec: list[tuple[int, float]] = []
        if qv is not None and inside is not None:  # the period's best, picked from the same one scan
            vec, best_inside = self._vector_also(qv, inside)
            vec = vec + best_inside
        elif qv is not None:
            vec = self.vector_search(text, vector=qv)
        more = pending.result() if pending else self.keyword_scores(text, n)
        kw = more[:CANDIDATES]
        if inside is not None:
            present = set(rows_present(inside, [i for i, _ in more]))
            kw = kw + [(i, s) for i, s in more if i in present][:WITHIN]
        fused = fuse(vec, kw, KEYWORD_WEIGHT)
        if not fused:
            return Ranked(self, [], qv, {}, set(), {})
        self._add_names_hop(fused, text)
        around = self._add_neighbours(fused)
        if qv is not None:
            self._add_scenes(fused, qv, text, max((c for _, c in vec), default=0.0), bool(asked))
        now = today.toordinal()
        lo, hi = (period.start.toordinal(), period.end.toordinal()) if period else (1, 0)
        theirs = self.db.said_by_or_naming(list(fused), *self._named_speakers(text))
        rows = list(self.db.weights(list(fused)))
        stretch = _stretches(fused, {r[0]: (r[5], r[6]) for r in rows if r[5] is not None and r[6] is not None})
        ranked = []  # (score, first day, id): weighed on numbers alone, the text read only for the best k
        for id_, salience, said, first, last, _, _ in rows:
            said = now if said is None else said
            first, last = first or said, last or said
            weight = (0.75 + 0.5 * salience) * (0.8 + 0.2 * math.exp(-max(0, now - said) / 365))
            boost = PERIOD_BOOST if first <= hi and last >= lo else 0.0
            boost += SPEAKER_BOOST if id_ in theirs else 0.0
            boost += STRETCH_WEIGHT * stretch.get(id_, 0.0)
            ranked.append((fused[id_] * weight / 1.25 + boost, first, id_))
        ranked.sort(reverse=True)
        if asked.order and ranked:
            near = [r for r in ranked if r[0] >= NEAR_TIE * ranked[0][0]]
            near.sort(key=lambda r: r[1], reverse=asked.order == "last")
            ranked = near + ranked[len(near) :]
        best = [(score, id_) for score, _, id_ in ranked[:k]]
        return Ranked(self, best, qv, dict(vec), {i for i, _ in kw}, around)

    def _hits(self, ranked: Ranked, best: list[tuple[float, int]]) -> list[dict[str, Any]]:
        """The hits as a search shows them, for these (score, id): the text and the turns around each read."""
        today, cosine = self.today(), ranked.cosine
        missing = [i for _, i in best if i not in cosine]
        if missing and ranked.qv is not None:
            cosine.update(self.index.similarity(missing, ranked.qv))
        rows = self.db.cells([i for _, i in best])
        unread = [i for _, i in best if i not in ranked.around]  # the best candidates' turns were read already
        beside = {**ranked.around, **self.db.neighbours(unread)} if unread else ranked.around
        hits = []
        for score, id_ in best:
            r = rows.get(id_)
            if r is None:  # forgotten since the search ranked it
                continue
            hit = {"id": id_, "text": r["text"], "kind": r["kind"], "topic": r["topic"], "said": r["said_on"]}
            if r["happened_on"] and (r["happened_on"], r["happened_to"]) != (r["said_on"], r["said_on"]):
                hit["happened"] = Period(_day(r["happened_on"], today), _day(r["happened_to"], today)).describe()
            if r["speaker"]:
                hit["speaker"] = r["speaker"]
            for n in beside.get(id_, []):  # the turns around it in its conversation: what makes "yes, twice" answerable
                hit["before" if n["turn_no"] < r["turn_no"] else "after"] = _turn(n)
            hit["score"] = round(score, 3)  # 1.0 = best in both lists, salience 1, said today
            hit["cosine"] = round(cosine.get(id_, 0.0), 3)
            hit["keyword"] = id_ in ranked.keyword
            hits.append(hit)
        return hits

    def _named_speakers(self, text: str) -> tuple[list[str], list[str]]:
        # (the speakers the question names, those of them whose name in a memory's words counts too).
        # "What does Vanessa do with her dog?" is answered by what Vanessa said, or what was said naming her:
        # any case, whole words. A name that is also a word ("Will", "May", "June") counts only written with
        # a capital inside the sentence, and not after a word that makes it a month ("in June"); its
        # lower-case word in a memory names no one, so only what that person said is theirs.
        named, naming = [], []
        for name in sorted(self.speakers):
            if not re.fullmatch(r"[\w'-]+(?: [\w'-]+)*", name):
                continue  # punctuation or spaces at the ends: not a name a question writes
            whole = rf"(?<![\w'-]){re.escape(name)}(?![\w'-])"
            if name.lower() not in STOPWORDS and name.lower() not in MONTHS:
                if re.search(whole, text, re.IGNORECASE):
                    named.append(name)
                    naming.append(name)
                continue
            for m in re.finditer(whole, text):
                before = text[: m.start()]
                first = not before.strip() or re.search(r"[.!?]\s*$", before)
                month = name.lower() in MONTHS and re.search(MONTH_LEAD, before, re.IGNORECASE)
                if m[0][0].isupper() and not first and not month:
                    named.append(name)
                    break
        return named, naming

    def _add_names_hop(self, fused: dict[int, float], text: str) -> None:
        # A question of two facts ("which cities have both of them been to?", "what does my landlord's
        # wife do?") names the first; its best hits name the second's subject. The names in the best
        # NAME_HOP hits that the question does not say are searched by keyword, and what that finds is
        # raised to at least NAME_HOP_WEIGHT of its scaled score. In code: no model call, one BM25 query.
        best = sorted(fused, key=fused.__getitem__, reverse=True)[:NAME_HOP]
        said = text.lower()
        names = {n for r in self.db.cells(best).values() for n in names_in(r["text"]) if n.lower() not in said}
        if not names or NAME_HOP_WEIGHT <= 0:
            return
        for id_, score in minmax(self.keyword_scores(" ".join(sorted(names)), CANDIDATES)).items():
            fused[id_] = max(fused.get(id_, 0.0), NAME_HOP_WEIGHT * score)

    def _add_neighbours(self, fused: dict[int, float]) -> dict[int, list[Any]]:
        # A turn is often answerable only with the one before it: "Did you make it to Miami?" - "Yes, twice!".
        # The turns around each of the best NEIGHBOURS_OF candidates (same conversation, one before and one
        # after) are raised to at least NEIGHBOUR_WEIGHT of its score, so the reply a question needs comes
        # up with the turn that matched its words.
        # Returns the turns read, {id: turns} for each of those candidates ([] for one with none around it).
        if NEIGHBOUR_WEIGHT <= 0:
            return {}
        best = sorted(fused, key=fused.__getitem__, reverse=True)[:NEIGHBOURS_OF]
        around: dict[int, list[Any]] = {i: [] for i in best} | self.db.neighbours(best)
        lift: dict[int, float] = {}
        for id_, turns in around.items():
            for n in turns:
                lift[n["id"]] = max(lift.get(n["id"], 0.0), NEIGHBOUR_WEIGHT * fused[id_])
        for n, score in lift.items():
            fused[n] = max(fused.get(n, 0.0), score)
        return around

    def _around_anchor(self, asked: TimeQuestion, today: dt.date) -> Period | None:
        # "before the move": the days before the best keyword match for "the move" happened.
        if not asked.anchor or not asked.side:
            return None
        best = self.keyword_scores(asked.anchor, 1)
        if not best:
            return None
        row = self.db.cell(best[0][0])
        said = _day(row["said_on"], today)
        event = Period(_day(row["happened_on"], said), _day(row["happened_to"], said))
        return around(event, asked.side, today)

    def _inside(self, period: Period) -> np.ndarray | None:
        # The memories about the period's days, or None when there are none or most memories are.
        ids = self.days.within(period.start.toordinal(), period.end.toordinal(), int(WITHIN_SHARE * len(self.index)))
        return ids if ids is not None and len(ids) else None

    def _vector_also(self, qv: np.ndarray, inside: np.ndarray) -> tuple[list, list]:
        try:
            return self.index.search_also(qv, CANDIDATES, inside, WITHIN)
        except ValueError:
            raise LongTermMemoryError("the embedding model changed mid-session; restart the planner") from None

    def _add_scenes(
        self, fused: dict[int, float], qv: np.ndarray, text: str, best_cosine: float, about_time: bool
    ) -> None:
        # A scene whose summary is closer to the question than any one memory is, any scene the question
        # names, and the best memory's own scenes lift their memories closest to the question: the fact
        # that shares only a name with the question comes up with the scene. For a question about time the
        # best memory's scenes are left out: its near ties are ordered by day, and the hop measured worse.
        scenes = {s: c for s, c in self.scenes.search(qv, SCENES_K) if c >= best_cosine + SCENE_MARGIN}
        top = max(1e-9, max(scenes.values(), default=best_cosine))
        for sid in self.scenes.named_in(text):
            scenes[sid] = top
        if SCENE_HOP and fused and not about_time:  # the best memory's own scenes: the second fact shares its name
            first = max(fused, key=fused.__getitem__)
            for sid in self.scenes.of(first):
                scenes.setdefault(sid, top)
        most = max(SCENE_CELLS, SCENE_MAX_SHARE * len(self.index))
        for sid, closeness in scenes.items():
            members = self.scenes.members.get(sid, [])
            if len(members) > most:  # a scene of a good part of everything (who sends half the turns) is no topic
                continue
            sims = sorted(self.index.similarity(members, qv).items(), key=lambda p: -p[1])[:SCENE_CELLS]
            for id_, _ in sims:
                fused[id_] = fused.get(id_, 0.0) + SCENE_WEIGHT * max(0.0, closeness / top) / 2

    def recall(self, query: str, k: int = 3) -> list[dict[str, Any]]:
        """The `recall` tool's answer: [{"id", "text", "kind", "topic", "said", "happened"?, "score"}]."""
        keys = ("id", "text", "kind", "topic", "said", "happened", "speaker", "before", "after", "score")
        return [{key: h[key] for key in keys if key in h} for h in self.search(query, k)]

    def relevant(self, text: str, k: int = 3) -> list[dict[str, Any]]:
        """Memories worth attaching to a message unasked: a keyword hit or clearly similar, or the turn just
        before or after one in its conversation (the reply that answers the turn the words matched)."""
        if not self.db.count():
            return []
        hits = self.search(text, k)
        sure = {h["id"] for h in hits if h["keyword"] or h["cosine"] >= AUTO_RECALL_COSINE}
        return [h for h in hits if sure & {h["id"], h.get("before", {}).get("id"), h.get("after", {}).get("id")}]

    def topic_summaries(self, topics: list[str]) -> dict[str, str]:
        """Stored summaries of these topics."""
        return self.db.topic_summaries([t for t in dict.fromkeys(topics) if t])

    def with_notes(self, text: str, k: int = 3) -> str:
        """The user's message with the memories relevant to it attached (what the planner sends), or as it was."""
        hits = self.relevant(text, k)
        if not hits:
            return text
        lines = [note(h) for h in hits]
        lines += [f"- About {t}: {s}" for t, s in self.topic_summaries([h["topic"] for h in hits]).items()]
        return f"{text}\n\n{MEMORY_NOTES}\n" + "\n".join(lines)


RELATIVE_DAY = re.compile(r"\b(today|tonight|this (?:morning|afternoon|evening)|(yesterday|last night))\b", re.I)
DAYS_IN_TEXT = False  # the day written beside "today" in the notes (python -m evals memory --qa --notes days)


def days_in_words(text: str, said: str | None) -> str:
    """The text with the day it was said written after "today", "tonight" or "yesterday", for a model that
    copies a note's sentence and leaves the date after it behind. Measured on Qwen2.5-Coder-1.5B, it
    dropped this date too (docs/memory.md), so the notes leave it out (DAYS_IN_TEXT)."""
    try:
        day = dt.date.fromisoformat(said or "")
    except ValueError:
        return text
    return RELATIVE_DAY.sub(lambda m: f"{m[0]} ({day - dt.timedelta(days=1) if m[2] else day})", text)


def note(hit: dict[str, Any]) -> str:
    """One memory as the notes attached to a message show it: who said it (when not the user), the words, the
    days; a reply too short to be a fact of its own comes with the turn it answered."""
    text = days_in_words(hit["text"], hit.get("said")) if DAYS_IN_TEXT else hit["text"]
    line = f"- {_who(hit)}{text}{dated(hit)}"
    before = hit.get("before")
    if before and len(set(meaningful_words(hit["text"]))) < FACT_WORDS:
        line += f", answering {_who(before)}{before['text']}"
    return line


def _who(turn: dict[str, Any]) -> str:
    return f"{turn['speaker']}: " if turn.get("speaker") else ""


def dated(hit: dict[str, Any]) -> str:
    """The days shown after a memory: when it was said, and what day it is about if the words named one."""
    if hit.get("happened"):
        return f" (happened {hit['happened']}, said {hit['said']})"
    return f" (said {hit['said']})" if hit.get("said") else ""
