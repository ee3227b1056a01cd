"""Long-term memory: typed, scored facts about the user, found by meaning and
by keyword.

Each memory is a cell: one sentence (`text`), a `kind` (fact, preference,
plan, decision, person, place, risk), a `salience` 0-1 and a `topic`. Two
indexes find them:

- vectors: a normalized float32 numpy matrix (embeddings.VectorIndex), loaded
  on first use, not at start-up, and appended to as memories arrive;
- keywords: SQLite FTS5 with BM25 over the text, kept in sync by triggers
  (db.py), so a name, a date or a rare word is found even when the embedding
  misses it.

`search` fuses the two candidate lists by their scores, each scaled between
its worst and best candidate (scoring.py), then weights by salience and
recency. Scaling per list needs no calibration between BM25 and cosine,
which differ per embedding model.

Writes go through `store_cell`, which deduplicates: a new cell close to an
existing one (in meaning and in words) updates it (the old text goes to
memory_history), and a cell that names a memory it replaces supersedes it.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from planner.memory.errors import LongTermMemoryError
from planner.memory.history import SUMMARY_HEADER
from planner.memory.scoring import fts_query, fuse, word_overlap
from planner.memory.vectors import CompactIndex, Embedder, VectorIndex, pack, row_batches, unpack_rows
from planner.model.client import ModelError
from planner.prompts import MEMORY_NOTES
from planner.storage.db import Store

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger("planner")

KINDS = ("fact", "preference", "plan", "decision", "person", "place", "risk")
DUPLICATE_COSINE = 0.95  # any topic: this close is the same fact
TOPIC_DUPLICATE_COSINE = 0.88  # same topic: this close is a newer version
SAME_WORDS = 0.6  # ...and either way it shares this share of the shorter one's content words
AUTO_RECALL_COSINE = 0.55  # automatic recall: keyword hit, or at least this similar
SHARED_K = 20  # hits kept per shared search (the recall tool asks for at most 20)
CANDIDATES = 50
COMPACT_ABOVE = 250_000  # more memories than this: sign bits + int8 instead of float32 (embeddings.py)


# What the planner attaches to a user's message (agent.py) or puts before the history (memory.py).
ATTACHED = (MEMORY_NOTES, SUMMARY_HEADER.strip(), "[Notes from memory")


SAID = re.compile(r"\s*\(said \d{4}-\d{2}-\d{2}\)")  # the date the planner shows after a memory


def without_attached(text: str) -> tuple[str, bool]:
    """The text without anything the planner attached to it, and whether something was cut."""
    text, dates = SAID.subn("", text)
    cut_at = min((i for i in (text.find(marker) for marker in ATTACHED) if i >= 0), default=-1)
    if cut_at < 0:
        return text.strip(), dates > 0
    return text[:cut_at].strip(), True


def _said(cut: bool) -> dict[str, str]:
    return {"note": "the planner's notes attached to the message were left out of the memory"} if cut else {}


def _now() -> str:
    return dt.datetime.now().isoformat(timespec="seconds")


class LongTermMemory:
    """Facts about the user, stored, deduplicated and searched."""

    def __init__(self, store: Store, embedder: Embedder, on_progress: Callable[[int, int], None] | None = None):
        self.store = store
        self.embedder = embedder
        self.on_progress = on_progress  # (done, total) while re-embedding
        self.index: VectorIndex | CompactIndex = VectorIndex()
        self._loaded = False
        self._lock = threading.Lock()  # loading, and read-modify-write of cells
        self._version = 0  # bumped on every write, so a shared search is never stale
        self._searches: dict[tuple[str, int], list[dict[str, Any]]] = {}  # this turn's searches

    def all(self) -> list[dict[str, Any]]:
        """Every memory, oldest first: {"id", "text", "kind", "topic", "said_on"}."""
        rows = self.store.conn().execute("SELECT id, text, kind, topic, said_on FROM memories ORDER BY id")
        return [dict(r) for r in rows]

    def count(self) -> int:
        """How many memories are stored."""
        return self.store.conn().execute("SELECT COUNT(*) FROM memories").fetchone()[0]

    # -- loading

    def _load(self) -> None:
        # Lazy: the first remember/recall pays for it, not start-up.
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            model = self.embedder.model
            conn = self.store.conn()
            where = "FROM memories WHERE embed_model = ? AND embedding IS NOT NULL"
            # Same model name but vectors of another size: trust the most common size, re-embed the rest.
            common = conn.execute(
                f"SELECT LENGTH(embedding) AS size, COUNT(*) AS n {where} GROUP BY size ORDER BY n DESC LIMIT 1",
                (model,),
            ).fetchone()
            if common:
                rows = conn.execute(
                    f"SELECT id, embedding {where} AND LENGTH(embedding) = ? ORDER BY id", (model, common[0])
                )
                if common[1] > COMPACT_ABOVE:
                    self.index = CompactIndex()
                    self.index.load_batches(row_batches(rows), common[1])
                else:
                    rows = rows.fetchall()
                    self.index.load([r[0] for r in rows], unpack_rows([r[1] for r in rows]))
            have = set(self.index.ids().tolist())
            stale = [r[0] for r in conn.execute("SELECT id FROM memories ORDER BY id") if r[0] not in have]
            if stale:
                self._reembed(stale)
            self._loaded = True

    def _reembed(self, ids: list[int]) -> None:
        # Vectors from another model (or none) cannot be compared with ours.
        log.info("re-embedding %d memories with %s", len(ids), self.embedder.model)
        conn = self.store.conn()
        batch = self.embedder.batch
        for i in range(0, len(ids), batch):
            chunk = ids[i : i + batch]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(f"SELECT id, text FROM memories WHERE id IN ({marks})", chunk).fetchall()
            vectors = self.embedder.documents([r["text"] for r in rows])
            with self.store.write() as w:
                for r, v in zip(rows, vectors, strict=True):
                    w.execute(
                        "UPDATE memories SET embedding = ?, embed_model = ? WHERE id = ?",
                        (pack(v), self.embedder.model, r["id"]),
                    )
            for r, v in zip(rows, vectors, strict=True):
                self.index.add(r["id"], v)
                self._version += 1
            if self.on_progress:
                self.on_progress(min(i + batch, len(ids)), len(ids))

    # -- writing

    def store_cell(
        self,
        text: str,
        kind: str = "fact",
        salience: float = 0.5,
        topic: str = "",
        source: str = "remember",
        replaces: int | None = None,
        said_on: str | None = None,
    ) -> dict[str, Any]:
        """Store a memory said on `said_on` (the planner's today; the clock's date if None), updating a
        near-duplicate or the one it replaces.

        The one place memories are written: text the planner attached (its notes from memory, a
        conversation summary) is cut here, so it can never come back as the user's words.
        """
        text, cut = without_attached(text)
        if not text:
            raise LongTermMemoryError(
                "that is the planner's own notes, not something the user said; nothing was stored. "
                "Store only the new fact, in the user's words."
            )
        kind = kind if kind in KINDS else "fact"
        salience = min(1.0, max(0.0, float(salience)))
        topic = topic.strip().lower()[:40]
        said_on = said_on or dt.date.today().isoformat()
        try:
            self._load()
            vector = self.embedder.documents([text])[0]
        except ModelError as e:
            raise LongTermMemoryError(f"could not save the memory: {e}") from None
        with self._lock:
            target, reason = None, "update"
            if replaces is not None and self._get(replaces) is not None:
                target, reason = replaces, "supersede"
            else:
                target = self._duplicate_of(vector, topic, text)
            with self.store.write() as conn:
                if target is not None:
                    old = conn.execute("SELECT text FROM memories WHERE id = ?", (target,)).fetchone()
                    conn.execute(
                        "INSERT INTO memory_history (memory_id, old_text, new_text, reason, changed_at) VALUES (?, ?, ?, ?, ?)",
                        (target, old["text"], text, reason, _now()),
                    )
                    conn.execute(
                        "UPDATE memories SET text = ?, embedding = ?, embed_model = ?, kind = ?, salience = MAX(salience, ?), "
                        "topic = CASE WHEN ? = '' THEN topic ELSE ? END, updated_at = ?, "
                        "said_on = MAX(COALESCE(said_on, ''), ?) WHERE id = ?",  # said again: the newer date
                        (
                            text,
                            pack(vector),
                            self.embedder.model,
                            kind,
                            salience,
                            topic,
                            topic,
                            _now(),
                            said_on,
                            target,
                        ),
                    )
                    self.index.add(target, vector)
                    self._version += 1
                    key = "superseded" if reason == "supersede" else "updated"
                    return {key: {"id": target, "text": text, "previous": old["text"]}} | _said(cut)
                cur = conn.execute(
                    "INSERT INTO memories (text, embedding, embed_model, kind, salience, topic, source, created_at, "
                    "updated_at, said_on) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (text, pack(vector), self.embedder.model, kind, salience, topic, source, _now(), _now(), said_on),
                )
            self.index.add(cur.lastrowid, vector)
            self._version += 1
            return {"remembered": {"id": cur.lastrowid, "text": text}} | _said(cut)

    def _get(self, id_: int) -> Any:
        return self.store.conn().execute("SELECT id, text, topic FROM memories WHERE id = ?", (id_,)).fetchone()

    def _duplicate_of(self, vector: np.ndarray, topic: str, text: str) -> int | None:
        # Compare document vector with document vectors: both carry the document prefix, so a
        # restatement of the same fact scores close to 1. Close is not enough: some models score
        # any two sentences 0.8-0.9 (multilingual-e5-small merged 632 of 1,873 different sentences
        # of one user's conversations, python -m evals memory), so a restatement must also share
        # most of its words.
        for id_, score in self.index.search(vector, 5) if len(self.index) else []:
            if score < min(DUPLICATE_COSINE, TOPIC_DUPLICATE_COSINE):
                break
            row = self._get(id_)
            if row is None or word_overlap(text, row["text"]) < SAME_WORDS:
                continue
            if score >= DUPLICATE_COSINE or (topic and row["topic"] == topic):
                return id_
        return None

    def remember(self, fact: str, said_on: str | None = None) -> dict[str, Any]:
        """The `remember` tool's path: an explicit fact, through the same dedup."""
        return self.store_cell(fact, salience=0.7, source="remember", said_on=said_on)

    def find(self, query_or_id: str) -> Any:
        """The memory with this id, or the one that best matches the words; a LongTermMemoryError if none."""
        text = query_or_id.strip()
        if re.fullmatch(r"#?\d+", text):
            row = self._get(int(text.lstrip("#")))
            if row is None:
                raise LongTermMemoryError(f"no memory with id={text.lstrip('#')}")
        else:
            hits = [h for h in self.search(text, 1) if h["keyword"] or h["cosine"] >= AUTO_RECALL_COSINE]
            if not hits:
                raise LongTermMemoryError(f"no memory matches {text[:60]!r}; call recall to see what is stored")
            row = self._get(hits[0]["id"])
        return row

    def forget(self, query_or_id: str, turn: str | None = None) -> dict[str, Any]:
        """Remove the memory with this id, or the one that best matches the words; kept for /undo under `turn`."""
        row = self.find(query_or_id)
        with self._lock, self.store.write() as conn:
            full = conn.execute("SELECT * FROM memories WHERE id = ?", (row["id"],)).fetchone()
            if full is None:
                raise LongTermMemoryError(f"no memory with id={row['id']}")
            kept = {k: full[k] for k in full.keys() if k != "embedding"}
            conn.execute(
                "INSERT INTO memory_history (memory_id, old_text, reason, changed_at, turn, row, embedding, after_event)"
                " VALUES (?, ?, 'forget', ?, ?, ?, ?, (SELECT COALESCE(MAX(id), 0) FROM task_events))",
                (row["id"], row["text"], _now(), turn, json.dumps(kept), full["embedding"]),
            )
            conn.execute("DELETE FROM memories WHERE id = ?", (row["id"],))
            self.index.remove(row["id"])
            self._version += 1
        return {"forgotten": {"id": row["id"], "text": row["text"]}}

    def unforget(self, turn: str) -> list[str]:
        """Put back the memories `turn` forgot; one line per memory."""
        lines = []
        with self._lock, self.store.write() as conn:
            rows = conn.execute(
                "SELECT id, row, embedding FROM memory_history WHERE turn = ? AND reason = 'forget' "
                "AND undone_at IS NULL AND row IS NOT NULL ORDER BY id",
                (turn,),
            ).fetchall()
            for h in rows:
                kept = json.loads(h["row"]) | {"embedding": h["embedding"]}
                cols = list(kept)
                conn.execute(
                    f"INSERT OR REPLACE INTO memories ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
                    [kept[c] for c in cols],
                )
                conn.execute("UPDATE memory_history SET undone_at = ? WHERE id = ?", (_now(), h["id"]))
                if h["embedding"] is not None and self._loaded and kept.get("embed_model") == self.embedder.model:
                    self.index.add(kept["id"], unpack_rows([h["embedding"]])[0])
                    self._version += 1
                lines.append(f'restored memory {kept["id"]} "{kept["text"]}" (it was forgotten)')
        return lines

    # -- searching

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

    def keyword_scores(self, query: str, n: int = CANDIDATES) -> list[tuple[int, float]]:
        """(id, BM25 score) best first; higher is better (SQLite's rank is its negative)."""
        q = fts_query(query)
        if not q:
            return []
        rows = self.store.conn().execute(
            "SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?", (q, n)
        )
        return [(r[0], -r[1]) for r in rows]

    def begin_turn(self) -> None:
        """Forget the searches of the last turn (their scores age, and the user may have changed things)."""
        self._searches.clear()

    def search(self, query: str, k: int = 3) -> list[dict[str, Any]]:
        """The k best memories by fused vector and keyword rank, weighted by salience and recency.

        One embedding and one index search per distinct query per turn: automatic recall and the
        `recall` tool asking the same thing share it, until a memory is written.
        """
        key = (query, self._version)
        if key not in self._searches:
            if len(self._searches) >= 8:
                self._searches.clear()
            self._searches[key] = self._search(query, max(k, SHARED_K))
        return [dict(h) for h in self._searches[key][:k]]

    def _search(self, query: str, k: int) -> list[dict[str, Any]]:
        qv = self._query(query)
        vec = self.vector_search(query, vector=qv) if qv is not None else []
        kw = self.keyword_scores(query)
        fused = fuse(vec, kw)
        if not fused:
            return []
        marks = ",".join("?" * len(fused))
        rows = self.store.conn().execute(
            f"SELECT id, text, kind, topic, salience, updated_at, said_on FROM memories WHERE id IN ({marks})",
            list(fused),
        )
        cosine = dict(vec)
        missing = [i for i in fused if i not in cosine]
        if missing and qv is not None:
            cosine.update(self.index.similarity(missing, qv))
        keyword = {id_ for id_, _ in kw}
        today = dt.datetime.now()
        hits = []
        for r in rows:
            try:
                age = max(0.0, (today - dt.datetime.fromisoformat(r["updated_at"])).days)
            except (TypeError, ValueError):
                age = 365.0
            weight = (0.75 + 0.5 * r["salience"]) * (0.8 + 0.2 * math.exp(-age / 365))
            hits.append(
                {
                    "id": r["id"],
                    "text": r["text"],
                    "kind": r["kind"],
                    "topic": r["topic"],
                    "said": r["said_on"],
                    # 1.0 = best in both lists, salience 1, updated today
                    "score": round(fused[r["id"]] * weight / 1.25, 3),
                    "cosine": round(cosine.get(r["id"], 0.0), 3),
                    "keyword": r["id"] in keyword,
                }
            )
        hits.sort(key=lambda h: -h["score"])
        return hits[:k]

    def recall(self, query: str, k: int = 3) -> list[dict[str, Any]]:
        """The `recall` tool's answer: [{"id", "text", "kind", "topic", "said", "score"}]."""
        keys = ("id", "text", "kind", "topic", "said", "score")
        return [{key: h[key] for key in keys} for h in self.search(query, k)]

    def relevant(self, text: str, k: int = 3) -> list[dict[str, Any]]:
        """Memories worth attaching to a message unasked: a keyword hit or clearly similar."""
        if not self.store.conn().execute("SELECT 1 FROM memories LIMIT 1").fetchone():
            return []
        return [h for h in self.search(text, k) if h["keyword"] or h["cosine"] >= AUTO_RECALL_COSINE]

    def topic_summaries(self, topics: list[str]) -> dict[str, str]:
        """Stored summaries of these topics."""
        topics = [t for t in dict.fromkeys(topics) if t]
        if not topics:
            return {}
        marks = ",".join("?" * len(topics))
        rows = self.store.conn().execute(f"SELECT topic, summary FROM memory_topics WHERE topic IN ({marks})", topics)
        return {r[0]: r[1] for r in rows}
