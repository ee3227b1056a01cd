"""Long-term memory: typed, scored facts about the user, stored, deduplicated and forgotten.

Each memory is a cell: one sentence (`text`), a `kind` (fact, preference,
plan, decision, person, place, risk), a `salience` 0-1, a `topic`, the day it
was said (`said_on`, the planner's today) and the days it is about
(`happened_on`..`happened_to`: "I went to Lisbon last week" is about the week
before it was said, read by planner/periods.py; the day it was said when the
words name none). Two indexes find them:

- vectors: a normalized float32 numpy matrix (embeddings.VectorIndex), loaded
  on first use, not at start-up, and appended to as memories arrive;
- keywords: SQLite FTS5 with BM25 over the text, kept in sync by triggers
  (db.py), so a name, a date or a rare word is found even when the embedding
  misses it.

Searching them (search.py) is mixed in; scenes (scenes.py) group them by the
names they share.

Writes go through `store_cell`, which deduplicates: a new cell close to an
existing one (in meaning and in words) updates it (the old text goes to
memory_history), and a cell that names a memory it replaces supersedes it.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from planner.memory.errors import LongTermMemoryError
from planner.memory.history import SUMMARY_HEADER
from planner.memory.scenes import Scenes
from planner.memory.scoring import same_particulars, word_overlap
from planner.memory.search import AUTO_RECALL_COSINE, Days, Search
from planner.memory.vectors import CompactIndex, Embedder, VectorIndex, pack, row_batches, unpack_rows
from planner.model.base import ModelError
from planner.periods import happened
from planner.prompts import MEMORY_KINDS, MEMORY_NOTES
from planner.storage.db import Store

if TYPE_CHECKING:
    import numpy as np

__all__ = ["AUTO_RECALL_COSINE", "KINDS", "LongTermMemory", "LongTermMemoryError", "without_attached"]

log = logging.getLogger("planner")

KINDS = MEMORY_KINDS  # the extraction schema names them to the model (prompts.py)
DUPLICATE_COSINE = 0.95  # any topic: this close is the same fact
TOPIC_DUPLICATE_COSINE = 0.88  # same topic: this close is a newer version
SAME_WORDS = 0.6  # ...and either way it shares this share of the shorter one's content words
COMPACT_ABOVE = 250_000  # more memories than this: sign bits + int8 instead of float32 (embeddings.py)


# What the planner attaches to a user's message (agent.py) or puts before the history (memory.py).
ATTACHED = (MEMORY_NOTES, SUMMARY_HEADER.strip(), "[Notes from memory")


# The days the planner shows after a memory: "(said 2026-11-03)", "(happened 2026-11-02, said 2026-11-03)".
SAID = re.compile(r"\s*\((?:happened [^()]{10,40}, )?said \d{4}-\d{2}-\d{2}\)")


def without_attached(text: str) -> tuple[str, bool]:
    """The text without anything the planner attached to it, and whether something was cut."""
    text, dates = SAID.subn("", text)
    cut_at = min((i for i in (text.find(marker) for marker in ATTACHED) if i >= 0), default=-1)
    if cut_at < 0:
        return text.strip(), dates > 0
    return text[:cut_at].strip(), True


def _said(cut: bool) -> dict[str, str]:
    return {"note": "the planner's notes attached to the message were left out of the memory"} if cut else {}


def _day_sql(column: str) -> str:
    # The column as a date ordinal, computed by SQLite (100,000 rows load in milliseconds).
    return (
        f"CAST(julianday(COALESCE({column}, said_on, substr(updated_at, 1, 10), '2000-01-01')) - 1721424.5 AS INTEGER)"
    )


def _ordinal(day: str) -> int:
    return dt.date.fromisoformat(day[:10]).toordinal()


def _now() -> str:
    return dt.datetime.now().isoformat(timespec="seconds")


class LongTermMemory(Search):
    """Facts about the user, stored, deduplicated and searched."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        on_progress: Callable[[int, int], None] | None = None,
        today: Callable[[], dt.date] = dt.date.today,
    ):
        self.store = store
        self.embedder = embedder
        self.on_progress = on_progress  # (done, total) while re-embedding
        self.today = today  # the planner's today: what "last May" and "said on" are read against
        self.index: VectorIndex | CompactIndex = VectorIndex()
        self.days = Days()  # the days each memory is about, for the time filter
        self.scenes = Scenes(store, embedder)
        self._loaded = False
        self._lock = threading.Lock()  # loading, and read-modify-write of cells
        self._version = 0  # bumped on every write, so a shared search is never stale
        self._searches: dict[tuple[Any, ...], list[dict[str, Any]]] = {}  # this turn's searches
        self._context: list[str] = []  # what the user said just before this turn (begin_turn)
        self._pool = None  # the keyword search's thread, started by the first large search

    def all(self) -> list[dict[str, Any]]:
        """Every memory, oldest first: {"id", "text", "kind", "topic", "said_on", "happened_on", "happened_to"}."""
        rows = self.store.conn().execute(
            "SELECT id, text, kind, topic, said_on, happened_on, happened_to FROM memories ORDER BY id"
        )
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
            self.days.load(
                conn.execute(f"SELECT id, {_day_sql('happened_on')}, {_day_sql('happened_to')} FROM memories")
            )
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
        said_on = said_on or self.today().isoformat()
        about = happened(text, dt.date.fromisoformat(said_on))
        start, end = (about.start.isoformat(), about.end.isoformat()) if about else (said_on, said_on)
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
                target = self._duplicate_of(vector, topic, text, (start, end) if about else None)
            with self.store.write() as conn:
                if target is not None:
                    old = conn.execute("SELECT text, said_on FROM memories WHERE id = ?", (target,)).fetchone()
                    conn.execute(
                        "INSERT INTO memory_history (memory_id, old_text, new_text, reason, changed_at) VALUES (?, ?, ?, ?, ?)",
                        (target, old["text"], text, reason, _now()),
                    )
                    conn.execute(
                        "UPDATE memories SET text = ?, embedding = ?, embed_model = ?, kind = ?, salience = MAX(salience, ?), "
                        "topic = CASE WHEN ? = '' THEN topic ELSE ? END, updated_at = ?, "
                        # said again: the newer date, and the days the newer words are about
                        "happened_on = CASE WHEN ? >= COALESCE(said_on, '') THEN ? ELSE happened_on END, "
                        "happened_to = CASE WHEN ? >= COALESCE(said_on, '') THEN ? ELSE happened_to END, "
                        "said_on = MAX(COALESCE(said_on, ''), ?) WHERE id = ?",
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
                            start,
                            said_on,
                            end,
                            said_on,
                            target,
                        ),
                    )
                    self.index.add(target, vector)
                    if start >= (old["said_on"] or ""):  # the newer words: the days they are about
                        self.days.set(target, _ordinal(start), _ordinal(end))
                    self._version += 1
                    key = "superseded" if reason == "supersede" else "updated"
                    return {key: {"id": target, "text": text, "previous": old["text"]}} | _said(cut)
                cur = conn.execute(
                    "INSERT INTO memories (text, embedding, embed_model, kind, salience, topic, source, created_at, "
                    "updated_at, said_on, happened_on, happened_to) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        text,
                        pack(vector),
                        self.embedder.model,
                        kind,
                        salience,
                        topic,
                        source,
                        _now(),
                        _now(),
                        said_on,
                        start,
                        end,
                    ),
                )
            self.index.add(cur.lastrowid, vector)
            self.days.set(cur.lastrowid, _ordinal(start), _ordinal(end))
            self._version += 1
            return {"remembered": {"id": cur.lastrowid, "text": text}} | _said(cut)

    def _get(self, id_: int) -> Any:
        return self.store.conn().execute("SELECT id, text, topic FROM memories WHERE id = ?", (id_,)).fetchone()

    def _duplicate_of(self, vector: np.ndarray, topic: str, text: str, days: tuple[str, str] | None) -> int | None:
        # Compare document vector with document vectors: both carry the document prefix, so a
        # restatement of the same fact scores close to 1. Close is not enough: some models score
        # any two sentences 0.8-0.9 (multilingual-e5-small merged 632 of 1,873 different sentences
        # of one user's conversations, python -m evals memory), so a restatement must also share
        # most of its words, keep its names and numbers, and be about the same days if both name
        # some ("dinner with Priya" is not "dinner with Henk"; two visits to the dentist are two).
        for id_, score in self.index.search(vector, 5) if len(self.index) else []:
            if score < min(DUPLICATE_COSINE, TOPIC_DUPLICATE_COSINE):
                break
            row = (
                self.store.conn()
                .execute("SELECT text, topic, said_on, happened_on, happened_to FROM memories WHERE id = ?", (id_,))
                .fetchone()
            )
            if row is None or word_overlap(text, row["text"]) < SAME_WORDS or not same_particulars(text, row["text"]):
                continue
            named = row["said_on"] and happened(row["text"], dt.date.fromisoformat(row["said_on"]))
            if days and named and (days[0] > row["happened_to"] or days[1] < row["happened_on"]):
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
            if row is None:  # forgotten by another process since the search's index was read
                raise LongTermMemoryError(
                    f"no memory matches {text[:60]!r} any more; call recall to see what is stored"
                )
        return row

    def find_scene(self, query: str) -> Any:
        """The scene a "scene NAME" or "scene ID" names, None if the words do not start with "scene"; a
        LongTermMemoryError if there is no such scene."""
        words = query.strip().split(None, 1)
        if len(words) < 2 or words[0].lower() != "scene":
            return None
        scene = self.scenes.find(words[1])
        if scene is None:
            raise LongTermMemoryError(f"no scene {words[1][:60]!r}; /memories lists them")
        return scene

    def forget(self, query_or_id: str, turn: str | None = None, expect: str | None = None) -> dict[str, Any]:
        """Remove the memory with this id, or the one that best matches the words ("scene NAME": only that
        grouping, its memories stay); kept for /undo under `turn`. `expect`: the text the user was asked
        about; if the memory says something else now (another process changed it), nothing is forgotten."""
        scene = self.find_scene(query_or_id)
        if scene is not None:
            with self._lock, self.store.write() as conn:
                # The turn's marker, so /undo finds the newest forget the same way whatever it removed.
                conn.execute(
                    "INSERT INTO memory_history (memory_id, old_text, reason, changed_at, turn, after_event) "
                    "VALUES (0, ?, 'forget', ?, ?, (SELECT COALESCE(MAX(id), 0) FROM task_events))",
                    (f"scene {scene['name']}", _now(), turn),
                )
            return self.scenes.forget(scene, turn)
        row = self.find(query_or_id)
        with self._lock, self.store.write() as conn:
            full = conn.execute("SELECT * FROM memories WHERE id = ?", (row["id"],)).fetchone()
            if full is None:
                raise LongTermMemoryError(f"memory {row['id']} is already forgotten (another window forgot it)")
            if expect is not None and full["text"] != expect:
                raise LongTermMemoryError(
                    f"memory {row['id']} changed while the user was asked, so it was not forgotten; ask again"
                )
            kept = {k: full[k] for k in full.keys() if k != "embedding"}
            conn.execute(
                "INSERT INTO memory_history (memory_id, old_text, reason, changed_at, turn, row, embedding, after_event)"
                " VALUES (?, ?, 'forget', ?, ?, ?, ?, (SELECT COALESCE(MAX(id), 0) FROM task_events))",
                (row["id"], row["text"], _now(), turn, json.dumps(kept), full["embedding"]),
            )
            conn.execute("DELETE FROM memories WHERE id = ?", (row["id"],))
            self.index.remove(row["id"])
            self.days.remove(row["id"])
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
                    first, last = (
                        kept.get(k) or kept.get("said_on") or "2000-01-01" for k in ("happened_on", "happened_to")
                    )
                    self.days.set(kept["id"], _ordinal(first), _ordinal(last))
                    self._version += 1
                lines.append(f'restored memory {kept["id"]} "{kept["text"]}" (it was forgotten)')
            conn.execute(
                "UPDATE memory_history SET undone_at = ? WHERE turn = ? AND reason = 'forget' AND row IS NULL",
                (_now(), turn),
            )  # the markers of scenes forgotten
        return lines + self.scenes.unforget(turn)
