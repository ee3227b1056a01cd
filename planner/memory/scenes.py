"""Scenes: memories grouped by the person, place or thing they share, each with a consolidated summary.

A question often needs two memories that share only a name: "where does my sister live?" needs
"My sister is Ana" and "Ana lives in Lisbon". A scene is every memory that names one person, place
or thing ("Ana", "Lisbon", "Dr. Okafor"), with a summary of them. A search lifts the memories of a
scene whose summary is closer to the question than any one memory is, of a scene the question
names, and of the best memory's own scenes (search.py): what such questions need.

Grouping is code, not a model: a scene's name is a capitalised name said mid-sentence (so "Went"
and "My" at the start of a sentence are not names, and "Ana" at the start is one once she has been
named elsewhere), months and weekdays left out; a memory belongs to every scene it names. A scene
counts once it has two memories. Its summary starts as its memories joined, newest first; the
background keeper (keeper.py) asks the critic model for a consolidated one and keeps it until the
scene changes. Scenes are derived from the memories, never the other way round: forgetting a scene
removes only the grouping (kept in scene_history, so /undo brings it back), and its memories stay.
Who said a turn counts as a name it holds ("Elise" is in every memory Elise said), and a turn that
names no one but says "she", "he" or "they" belongs to the scenes of the turn before it in its
conversation: a question about a person finds what that person said and what was said about them,
pronouns included. Left out: scenes for topics without a name (the topic summaries in keeper.py
cover those). Every query is in planner/storage/memories.py.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from typing import TYPE_CHECKING, Any

from planner.memory.scoring import mentioned, names_in
from planner.memory.vectors import Embedder, VectorIndex, pack, unpack_rows
from planner.storage.memories import MemoryStore

if TYPE_CHECKING:
    import numpy as np

MIN_CELLS = 2  # a name said once is not a scene yet
CHUNK = 2_000  # new memories grouped per refresh: a background job short enough to let the planner exit
SUMMARY_CHARS = 600


PRONOUN = re.compile(r"\b(she|he|her|him|his|hers|they|them|their)\b", re.I)


def _now() -> str:
    return dt.datetime.now().isoformat(timespec="seconds")


def speaker_name(speaker: str | None) -> set[str]:
    """The name a turn's speaker counts as ("elise" -> "Elise"); none for the user."""
    if not speaker or not speaker.strip():
        return set()
    name = " ".join(speaker.split())
    return {name.title() if name.islower() else name}


class Scenes:
    """The scenes of one memory store: their members, summaries and a small index of summary vectors."""

    def __init__(self, db: MemoryStore, embedder: Embedder):
        self.db = db
        self.embedder = embedder
        self.index = VectorIndex()  # scene id -> summary vector, scenes of MIN_CELLS or more
        self.members: dict[int, list[int]] = {}  # scene id -> memory ids, for the scenes in the index
        self.names: dict[int, str] = {}
        self.by_name: dict[str, int] = {}  # lower-case name -> scene id
        self.memory_scenes: dict[int, list[int]] = {}  # memory id -> the scenes it is in
        self._loaded = False
        self._lock = threading.Lock()

    # -- reading

    def load(self) -> None:
        """Read the scenes and their vectors (once; refresh keeps them current)."""
        with self._lock:
            if self._loaded:
                return
            members: dict[int, list[int]] = {}
            for sid, mid in self.db.scene_cells():
                members.setdefault(sid, []).append(mid)
            rows = self.db.scene_vectors(self.embedder.model)
            rows = [r for r in rows if len(members.get(r["id"], ())) >= MIN_CELLS]
            sizes = {len(r["embedding"]) for r in rows}
            if len(sizes) == 1:
                self.index.load([r["id"] for r in rows], unpack_rows([r["embedding"] for r in rows]))
            self.members = {r["id"]: members[r["id"]] for r in rows}
            self.names = {r["id"]: r["name"] for r in rows}
            self.by_name = {name.lower().replace(".", ""): sid for sid, name in self.names.items()}
            self.memory_scenes = {}
            for sid, ids in self.members.items():
                for id_ in ids:
                    self.memory_scenes.setdefault(id_, []).append(sid)
            self._loaded = True

    def search(self, query: np.ndarray, k: int = 3) -> list[tuple[int, float]]:
        """(scene id, cosine of its summary with the query) best first."""
        self.load()
        if not len(self.index):
            return []
        try:
            return self.index.search(query, k)
        except ValueError:  # another embedding model's vectors: the next refresh re-embeds them
            return []

    def of(self, memory_id: int) -> list[int]:
        """The scenes a memory is in."""
        self.load()
        return self.memory_scenes.get(memory_id, [])

    def named_in(self, text: str) -> list[int]:
        """The scenes whose name the text says (any case: a question is often typed in lower case)."""
        self.load()
        words = re.findall(r"[\w'-]+", text.lower())
        said = {" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, min(i + 3, len(words)) + 1)}
        return [self.by_name[n] for n in said if n in self.by_name]

    def all(self) -> list[dict[str, Any]]:
        """Every scene with two or more memories: {"id", "name", "summary", "memories": [ids]}."""
        return [
            {
                "id": r["id"],
                "name": r["name"],
                "summary": r["summary"],
                "memories": sorted(map(int, r["ids"].split(","))),
            }
            for r in self.db.scenes_listing(MIN_CELLS)
        ]

    # -- keeping them up to date

    def refresh(self, summarise: Any = None, most: int = CHUNK) -> bool:
        """Group the memories changed since the last pass and up to `most` new ones, rewrite the summaries
        of the scenes that changed (with `summarise(name, texts) -> str` if given, else the memories joined)
        and embed them; True when every memory has been read. Progress is saved each call, so a long first
        pass over an older database goes on where it stopped. Cheap when nothing changed: two queries."""
        since, last_id = self.db.grouping_mark()
        changed, new = self.db.to_group(since, last_id, most)
        done = len(new) < most
        started = _now()
        memories = [(m, True) for m in changed] + [(m, False) for m in new]
        touched = self.db.regroup(
            memories,
            names_of=lambda m: names_in(m["text"]) | speaker_name(m["speaker"]),
            mentions_of=self._mentions,
            backfill=lambda name, text: name in mentioned(text),
            read_up_to=max([last_id, *(m["id"] for m in new)]),
            started=started,
        )
        self._summarise(touched | self.db.stale_scenes(self.embedder.model), summarise)
        return done

    def _mentions(self, m: Any) -> set[str]:
        # Every name the memory belongs to: those it says, who said it, and for a turn that names no one
        # but says "she" or "they", the names of the turn before it in its conversation.
        names = mentioned(m["text"])
        if not names and m["conversation"] and PRONOUN.search(m["text"]):
            before = self.db.before(m["id"])
            if before is not None:
                names = mentioned(before["text"]) | speaker_name(before["speaker"])
        return names | speaker_name(m["speaker"])

    def _summarise(self, ids: set[int], summarise: Any) -> None:
        if summarise:  # scenes still waiting for a model's summary come after the ones that changed
            ids = ids | self.db.unsummarised()
        todo = []
        for sid in sorted(ids):
            row, texts = self.db.scene_texts(sid)
            if row is None or len(texts) < MIN_CELLS:
                continue
            written = summarise(row["name"], texts) if summarise else None
            summary = (written or joined(row["name"], texts))[:SUMMARY_CHARS]
            if summary != row["summary"] or row["embed_model"] != self.embedder.model:
                todo.append((sid, row, summary, written is not None))
        if not todo:
            return
        vectors = self.embedder.documents([t[2] for t in todo])
        self.db.save_scene_summaries([(*t, pack(v)) for t, v in zip(todo, vectors, strict=True)], self.embedder.model)
        with self._lock:
            self._loaded = False  # read again at the next search: a handful of rows

    # -- forgetting and bringing back

    def find(self, name_or_id: str) -> Any:
        """The scene with this id ("scene 3") or name ("scene Ana"), or None."""
        return self.db.scene(name_or_id.strip().removeprefix("#"))

    def forget(self, scene: Any, turn: str | None) -> dict[str, Any]:
        """Remove a scene's grouping (its memories stay), kept under `turn` for /undo."""
        kept = self.db.forget_scene(scene, turn)
        with self._lock:
            self._loaded = False
        return {"forgotten": {"scene": scene["id"], "name": scene["name"], "memories kept": kept}}

    def unforget(self, turn: str) -> list[str]:
        """Put back the scenes `turn` forgot; one line per scene."""
        lines = [f'restored scene {sid} "{name}" (it was forgotten)' for sid, name in self.db.unforget_scenes(turn)]
        self.reload()
        return lines

    def reload(self) -> None:
        """Read the scenes from the file again at the next use (an undo put some back)."""
        with self._lock:
            self._loaded = False


def joined(name: str, texts: list[str]) -> str:
    """A summary in code: the scene's name and its memories, newest first, cut to SUMMARY_CHARS."""
    return f"{name}: " + " ".join(texts)
