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

Writes go through `store_cell`, which loses nothing a question could need: a
new cell updates an existing one only when it states the same fact (close in
meaning, most words shared, the same names, numbers, days and speaker; the old
text goes to memory_history); a cell that is close but not the same fact is
kept beside it, linked (`linked_to`); a cell that names a memory it replaces
supersedes it. A memory may also know where it was said: who said it
(`speaker`), the conversation and its place in it (`conversation`, `turn_no`),
so a search can bring the turns around it (search.py). Every query on the
tables is in planner/storage/memories.py.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from planner.memory.compact import CompactIndex
from planner.memory.days import Days
from planner.memory.errors import LongTermMemoryError
from planner.memory.history import SUMMARY_HEADER
from planner.memory.scenes import Scenes
from planner.memory.scoring import SAME_WORDS, same_fact, word_overlap
from planner.memory.search import AUTO_RECALL_COSINE, Ranked, Search
from planner.memory.vectors import Embedder, VectorIndex, pack, row_batches, unpack_rows
from planner.model.base import ModelError
from planner.periods import happened
from planner.policy import Door, Grant
from planner.prompts import MEMORY_KINDS, MEMORY_NOTES
from planner.storage import memories
from planner.storage.db import Store
from planner.storage.fields import TaskError
from planner.storage.gate import Applied, Change, ChangeSet, LogMark, Op, commit, one
from planner.storage.memories import MemoryStore

if TYPE_CHECKING:
    import numpy as np

__all__ = ["AUTO_RECALL_COSINE", "KINDS", "LongTermMemory", "LongTermMemoryError", "without_attached"]

log = logging.getLogger("planner")

KINDS = MEMORY_KINDS  # the extraction schema names them to the model (prompts.py)
DUPLICATE_COSINE = 0.95  # any topic: this close may be the same fact
TOPIC_DUPLICATE_COSINE = 0.88  # same topic: this close may be a newer version (either way: same_fact decides)
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


def _ordinal(day: str) -> int:
    return dt.date.fromisoformat(day[:10]).toordinal()


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
        self.db = MemoryStore(store)  # every query on the memory tables
        self.embedder = embedder
        self.on_progress = on_progress  # (done, total) while re-embedding
        self.today = today  # the planner's today: what "last May" and "said on" are read against
        self.index: VectorIndex | CompactIndex = VectorIndex()
        self.days = Days()  # the days each memory is about, for the time filter
        self.scenes = Scenes(self.db, embedder)
        self._loaded = False
        self._lock = threading.Lock()  # loading, and read-modify-write of cells
        self._version = 0  # bumped on every write, so a shared search is never stale
        self._searches: dict[tuple[Any, ...], Ranked] = {}  # this turn's searches
        self._context: list[str] = []  # what the user said just before this turn (begin_turn)
        self.speakers: set[str] = set()  # every name a stored turn was said by, read on load, kept on writes
        self._pool = None  # the keyword search's thread, started by the first large search

    def all(self) -> list[dict[str, Any]]:
        """Every memory, oldest first: {"id", "text", "kind", "topic", "said_on", "happened_on", "happened_to",
        "speaker"}."""
        return self.db.listing()

    def count(self) -> int:
        """How many memories are stored."""
        return self.db.count()

    # -- loading

    def _load(self) -> None:
        # Lazy: the first remember/recall pays for it, not start-up.
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            model = self.embedder.model
            # Same model name but vectors of another size: trust the most common size, re-embed the rest.
            common = self.db.vector_size(model)
            if common:
                rows = self.db.vectors(model, common[0])
                if common[1] > COMPACT_ABOVE:
                    self.index = CompactIndex()
                    self.index.load_batches(row_batches(rows), common[1])
                else:
                    rows = rows.fetchall()
                    self.index.load([r[0] for r in rows], unpack_rows([r[1] for r in rows]))
            have = set(self.index.ids().tolist())
            stale = [i for i in self.db.ids() if i not in have]
            if stale:
                self._reembed(stale)
            self.days.load(self.db.days())
            self.speakers = set(self.db.speakers())
            self._loaded = True

    def _reembed(self, ids: list[int]) -> None:
        # Vectors from another model (or none) cannot be compared with ours.
        log.info("re-embedding %d memories with %s", len(ids), self.embedder.model)
        batch = self.embedder.batch
        for i in range(0, len(ids), batch):
            rows = self.db.texts(ids[i : i + batch])
            vectors = self.embedder.documents([r["text"] for r in rows])
            self.db.set_vectors([(r["id"], pack(v)) for r, v in zip(rows, vectors, strict=True)], self.embedder.model)
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
        speaker: str | None = None,
        conversation: str | None = None,
        turn_no: int | None = None,
    ) -> dict[str, Any]:
        """Store a memory said on `said_on` (the planner's today; the clock's date if None) by `speaker` (None:
        the user), at `turn_no` of `conversation` if it is a turn of one; it updates a memory only when it
        restates the same fact, or the one it replaces.

        The one place memories are written: text the planner attached (its notes from memory, a
        conversation summary) is cut here, so it can never come back as the user's words.
        """
        text, cut = without_attached(text)
        if not text:
            raise LongTermMemoryError(
                "that is the planner's own notes, not something the user said; nothing was stored. "
                "Store only the new fact, in the user's words."
            )
        said_on = said_on or self.today().isoformat()
        about = happened(text, dt.date.fromisoformat(said_on))
        start, end = (about.start.isoformat(), about.end.isoformat()) if about else (said_on, said_on)
        cell = {
            "text": text,
            "kind": kind if kind in KINDS else "fact",
            "salience": min(1.0, max(0.0, float(salience))),
            "topic": topic.strip().lower()[:40],
            "source": source,
            "said_on": said_on,
            "happened_on": start,
            "happened_to": end,
            "speaker": speaker,
            "conversation": conversation,
            "turn_no": turn_no,
        }
        vector = self._vector(text)
        with self._lock:
            if replaces is not None and self.db.cell(replaces) is not None:
                target, reason = replaces, "supersede"
            else:
                target, cell["linked_to"] = self._restates(vector, cell, about is not None)
                reason = "update"
            stored = {**cell, "embedding": pack(vector), "embed_model": self.embedder.model}
            if target is not None:
                change = Change(Op.EDIT, target, {**stored, "reason": reason}, tool=source, table="memories")
                old = self._write(change).before[0] or {}
                self.index.add(target, vector)
                if start >= (old["said_on"] or ""):  # the newer words: the days they are about
                    self.days.set(target, _ordinal(start), _ordinal(end))
                self._version += 1
                key = "superseded" if reason == "supersede" else "updated"
                return {key: {"id": target, "text": text, "previous": old["text"]}} | _said(cut)
            id_ = self._write(Change(Op.ADD, values=stored, tool=source, table="memories")).row()["id"]
            self._added(id_, vector, speaker, start, end)
            out = {"remembered": {"id": id_, "text": text}}
            if cell["linked_to"] is not None:
                out["remembered"]["beside"] = cell["linked_to"]  # close to it, but not the same fact: both kept
            return out | _said(cut)

    def add_verbatim(
        self,
        text: str,
        said_on: str,
        speaker: str | None = None,
        conversation: str | None = None,
        turn_no: int | None = None,
    ) -> int:
        """Store a turn as it was said: no restatement check, no days read from its words (it is taken to be
        about the day it was said). What `python -m evals memory` measures the store path against."""
        cell = {
            "text": text,
            "kind": "fact",
            "salience": 0.5,
            "topic": "",
            "source": "verbatim",
            "said_on": said_on,
            "happened_on": said_on,
            "happened_to": said_on,
            "speaker": speaker,
            "conversation": conversation,
            "turn_no": turn_no,
        }
        vector = self._vector(text)
        with self._lock:
            stored = {**cell, "embedding": pack(vector), "embed_model": self.embedder.model}
            id_ = self._write(Change(Op.ADD, values=stored, tool="verbatim", table="memories")).row()["id"]
            self._added(id_, vector, speaker, said_on, said_on)
        return id_

    def _added(self, id_: int, vector: np.ndarray, speaker: str | None, start: str, end: str) -> None:
        # A new row's place in what a search reads beside the table: its vector, its days, who said it.
        self.index.add(id_, vector)
        self.days.set(id_, _ordinal(start), _ordinal(end))
        if speaker and speaker.strip():
            self.speakers.add(speaker)
        self._version += 1

    def _restates(self, vector: np.ndarray, cell: dict[str, Any], names_days: bool) -> tuple[int | None, int | None]:
        # (the memory this cell restates, the memory it is only close to). Compare document vector with
        # document vectors: both carry the document prefix, so a restatement scores close to 1. Close is
        # not enough: some models score any two sentences 0.8-0.9 (multilingual-e5-small merged 632 of
        # 1,873 different sentences of one user's conversations, python -m evals memory), and merging
        # two turns that differ loses one of them. So a restatement must state the same fact
        # (scoring.same_fact: most words shared, the same names and numbers), be said by the same speaker,
        # and if either names days, be about the same days ("I went to the dentist yesterday" said in
        # January and in June are two visits); a close cell that is not the same fact is kept, linked to
        # the first close one. A fact said again on a later day with no day named is the same fact: the
        # memory takes the newer day, and the older one stays in memory_history (MemoryStore.restate).
        near = None
        for id_, score in self.index.search(vector, 5) if len(self.index) else []:
            if score < min(DUPLICATE_COSINE, TOPIC_DUPLICATE_COSINE):
                break
            row = self.db.cell(id_)
            if row is None or word_overlap(cell["text"], row["text"]) < SAME_WORDS:
                continue
            near = id_ if near is None else near
            if not same_fact(cell["text"], row["text"]) or (cell["speaker"] or None) != (row["speaker"] or None):
                continue
            if cell["turn_no"] is not None or row["turn_no"] is not None:
                continue  # a turn of a conversation is what was said there: two turns are two, each at its place
            named = bool(row["said_on"] and happened(row["text"], dt.date.fromisoformat(row["said_on"])))
            days = (cell["happened_on"], cell["happened_to"]) == (row["happened_on"], row["happened_to"])
            if (names_days or named) and not (names_days and named and days):
                continue  # one names days and the other none, or other days: two events, or two tellings
            if score >= DUPLICATE_COSINE or (cell["topic"] and row["topic"] == cell["topic"]):
                return id_, None
        return None, near

    def remember(self, fact: str, said_on: str | None = None) -> dict[str, Any]:
        """The `remember` tool's path: an explicit fact, through the same dedup."""
        return self.store_cell(fact, salience=0.7, source="remember", said_on=said_on)

    def find(self, query_or_id: str) -> Any:
        """The memory with this id, or the one that best matches the words; a LongTermMemoryError if none."""
        text = query_or_id.strip()
        if re.fullmatch(r"#?\d+", text):
            row = self.db.cell(int(text.lstrip("#")))
            if row is None:
                raise LongTermMemoryError(f"no memory with id={text.lstrip('#')}")
        else:
            hits = [h for h in self.search(text, 1) if h["keyword"] or h["cosine"] >= AUTO_RECALL_COSINE]
            if not hits:
                raise LongTermMemoryError(f"no memory matches {text[:60]!r}; call recall to see what is stored")
            row = self.db.cell(hits[0]["id"])
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

    def _vector(self, text: str) -> Any:
        """The text's embedding as a document, for storing; a LongTermMemoryError if the model fails."""
        try:
            self._load()
            return self.embedder.documents([text])[0]
        except ModelError as e:
            raise LongTermMemoryError(f"could not save the memory: {e}") from None

    def _write(self, change: Change) -> Applied:
        """A memory added or said again, through the one gate: the planner's own act (extraction, `remember`
        after its checks), so nothing in it needs the user's yes."""
        return commit(self.store, lambda conn: one(change), Door("memory"))

    def forget(
        self, query_or_id: str, turn: str | None = None, door: Door | None = None, grant: Grant | None = None
    ) -> dict[str, Any]:
        """Remove the memory with this id, or the one that best matches the words ("scene NAME": only that
        grouping, its memories stay); kept for /undo under `turn`. Through the gate with `door` (the caller's:
        the tool's y/N, or a door that already has the user's yes): the yes covers the memory as it was
        shown, so one changed or forgotten by another process meanwhile is not forgotten."""
        scene = self.find_scene(query_or_id)
        if scene is not None:
            with self._lock:
                self.db.forget_marker(f"scene {scene['name']}", turn)
            return self.scenes.forget(scene, turn)
        row = self.find(query_or_id)
        door = dataclasses.replace(door or Door("forget", yes=True), turn=turn)
        try:  # not under self._lock: the door may wait for the user's y/N, and extraction must not wait on it
            commit(
                self.store, lambda conn: one(Change(Op.DELETE, row["id"], tool="forget", table="memories")), door, grant
            )
        except TaskError:  # no such row any more: another window forgot it
            raise LongTermMemoryError(f"memory {row['id']} is already forgotten (another window forgot it)") from None
        self._forgotten(row["id"])
        return {"forgotten": {"id": row["id"], "text": row["text"]}}

    def _forgotten(self, id_: int) -> None:
        with self._lock:
            self.index.remove(id_)
            self.days.remove(id_)
            self._version += 1

    def unforget(self, turn: str) -> list[str]:
        """Put back the memories `turn` forgot (through the gate); one line per memory."""
        said: list[list[str]] = []

        def plan(conn: Any) -> ChangeSet:
            puts, marked, lines = memories.undo_changes(conn, turn)
            said[:] = [lines]
            changes = tuple(Change(Op.PUT, key, row, tool="undo", table="memories") for key, row in puts)
            return ChangeSet(changes, by_user=True, marks=(LogMark("undo", tuple(marked), "memories"),))

        applied = commit(self.store, plan, Door("undo", yes=True))
        self.restored([dict(c.values or {}) for c in applied.changes])
        return (said[0] if said else []) + self.scenes.unforget(turn)

    def restored(self, rows: list[dict[str, Any]]) -> None:
        """Memories put back (an undo): searchable again."""
        with self._lock:
            for kept in rows:
                if (
                    kept.get("embedding") is not None
                    and self._loaded
                    and kept.get("embed_model") == self.embedder.model
                ):
                    self.index.add(kept["id"], unpack_rows([kept["embedding"]])[0])
                    first, last = (
                        kept.get(k) or kept.get("said_on") or "2000-01-01" for k in ("happened_on", "happened_to")
                    )
                    self.days.set(kept["id"], _ordinal(first), _ordinal(last))
                    self._version += 1
