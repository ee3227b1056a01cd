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
Left out: scenes for topics without a name (the topic summaries in keeper.py cover those).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
from typing import TYPE_CHECKING, Any

from planner.memory.scoring import mentioned, names_in
from planner.memory.vectors import Embedder, VectorIndex, pack, unpack_rows
from planner.storage.db import Store

if TYPE_CHECKING:
    import numpy as np

MIN_CELLS = 2  # a name said once is not a scene yet
CHUNK = 2_000  # new memories grouped per refresh: a background job short enough to let the planner exit
SUMMARY_CHARS = 600


def _now() -> str:
    return dt.datetime.now().isoformat(timespec="seconds")


class Scenes:
    """The scenes of one memory store: their members, summaries and a small index of summary vectors."""

    def __init__(self, store: Store, embedder: Embedder):
        self.store = store
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
            conn = self.store.conn()
            members: dict[int, list[int]] = {}
            for r in conn.execute("SELECT scene_id, memory_id FROM scene_cells ORDER BY scene_id, memory_id"):
                members.setdefault(r[0], []).append(r[1])
            rows = conn.execute(
                "SELECT id, name, embedding FROM scenes WHERE embedding IS NOT NULL AND embed_model = ?",
                (self.embedder.model,),
            ).fetchall()
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
        conn = self.store.conn()
        rows = conn.execute(
            "SELECT s.id, s.name, s.summary, GROUP_CONCAT(c.memory_id) AS ids FROM scenes s "
            "JOIN scene_cells c ON c.scene_id = s.id GROUP BY s.id HAVING COUNT(*) >= ? ORDER BY s.name",
            (MIN_CELLS,),
        )
        return [
            {
                "id": r["id"],
                "name": r["name"],
                "summary": r["summary"],
                "memories": sorted(map(int, r["ids"].split(","))),
            }
            for r in rows
        ]

    # -- keeping them up to date

    def refresh(self, summarise: Any = None, most: int = CHUNK) -> bool:
        """Group the memories changed since the last pass and up to `most` new ones, rewrite the summaries
        of the scenes that changed (with `summarise(name, texts) -> str` if given, else the memories joined)
        and embed them; True when every memory has been read. Progress is saved each call, so a long first
        pass over an older database goes on where it stopped. Cheap when nothing changed: two queries."""
        conn = self.store.conn()
        mark = conn.execute("SELECT value FROM scene_state WHERE key = 'read'").fetchone()
        since, last_id = json.loads(mark[0]) if mark else ("", 0)
        changed = conn.execute(
            "SELECT id, text FROM memories WHERE id <= ? AND updated_at >= ? ORDER BY id", (last_id, since)
        ).fetchall()
        new = conn.execute("SELECT id, text FROM memories WHERE id > ? ORDER BY id LIMIT ?", (last_id, most)).fetchall()
        done = len(new) < most
        started = _now()
        touched: set[int] = set()
        with self.store.write() as w:
            gone = w.execute(
                "DELETE FROM scene_cells WHERE memory_id NOT IN (SELECT id FROM memories) RETURNING scene_id"
            )
            touched |= {r[0] for r in gone}
            forgotten = {
                r[0] for r in w.execute("SELECT name FROM scene_history WHERE reason = 'forget' AND undone_at IS NULL")
            }
            scenes = {r["name"]: r["id"] for r in w.execute("SELECT id, name FROM scenes")}
            for m in [*changed, *new]:
                for name in names_in(m["text"]) - set(scenes) - forgotten:
                    scenes[name] = w.execute("INSERT INTO scenes (name) VALUES (?)", (name,)).lastrowid
                    touched |= self._backfill(w, scenes[name], name)
                now = {scenes[n] for n in mentioned(m["text"]) if n in scenes}
                before = (
                    {r[0] for r in w.execute("SELECT scene_id FROM scene_cells WHERE memory_id = ?", (m["id"],))}
                    if m["id"] <= last_id or now  # a new memory has no scenes yet, unless a backfill just gave some
                    else set()
                )
                w.executemany(
                    "DELETE FROM scene_cells WHERE scene_id = ? AND memory_id = ?", [(s, m["id"]) for s in before - now]
                )
                w.executemany(
                    "INSERT OR IGNORE INTO scene_cells (scene_id, memory_id) VALUES (?, ?)",
                    [(s, m["id"]) for s in now - before],
                )
                touched |= before ^ now
            # What was read now is read: next time, "changed" means changed since this call started.
            w.execute(
                "INSERT INTO scene_state (key, value) VALUES ('read', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (json.dumps([started, max([last_id, *(m["id"] for m in new)])]),),
            )
        stale = {r[0] for r in conn.execute("SELECT id FROM scenes WHERE embed_model IS NOT ?", (self.embedder.model,))}
        self._summarise(touched | stale, summarise)
        return done

    def _backfill(self, w: Any, sid: int, name: str) -> set[int]:
        # A new name: the memories said before it that name it too (at a sentence start, say), found by keyword.
        rows = w.execute(
            "SELECT m.id, m.text FROM memories_fts f JOIN memories m ON m.id = f.rowid WHERE memories_fts MATCH ?",
            (" ".join(f'"{part}"' for part in re.findall(r"\w+", name)),),
        ).fetchall()
        added = [(sid, r["id"]) for r in rows if name in mentioned(r["text"])]
        w.executemany("INSERT OR IGNORE INTO scene_cells (scene_id, memory_id) VALUES (?, ?)", added)
        return {sid} if added else set()

    def _summarise(self, ids: set[int], summarise: Any) -> None:
        conn = self.store.conn()
        if summarise:  # scenes still waiting for a model's summary come after the ones that changed
            ids = ids | {r[0] for r in conn.execute("SELECT id FROM scenes WHERE summarised = 0 LIMIT 20")}
        todo = []
        for sid in sorted(ids):
            row = conn.execute(
                "SELECT name, summary, summarised, embed_model FROM scenes WHERE id = ?", (sid,)
            ).fetchone()
            texts = [
                r[0]
                for r in conn.execute(
                    "SELECT m.text FROM scene_cells c JOIN memories m ON m.id = c.memory_id WHERE c.scene_id = ? "
                    "ORDER BY m.said_on DESC, m.id DESC LIMIT 30",
                    (sid,),
                )
            ]
            if row is None or len(texts) < MIN_CELLS:
                continue
            written = summarise(row["name"], texts) if summarise else None
            summary = (written or joined(row["name"], texts))[:SUMMARY_CHARS]
            if summary != row["summary"] or row["embed_model"] != self.embedder.model:
                todo.append((sid, row, summary, written is not None))
        if not todo:
            return
        vectors = self.embedder.documents([t[2] for t in todo])
        with self.store.write() as w:
            for (sid, row, summary, by_model), v in zip(todo, vectors, strict=True):
                if row["summarised"]:  # nothing is lost: a model's summary that is replaced is kept
                    w.execute(
                        "INSERT INTO scene_history (scene_id, name, summary, reason) VALUES (?, ?, ?, 'summary')",
                        (sid, row["name"], row["summary"]),
                    )
                w.execute(
                    "UPDATE scenes SET summary = ?, summarised = ?, embedding = ?, embed_model = ?, updated_at = ? "
                    "WHERE id = ?",
                    (summary, int(by_model), pack(v), self.embedder.model, _now(), sid),
                )
        with self._lock:
            self._loaded = False  # read again at the next search: a handful of rows

    # -- forgetting and bringing back

    def find(self, name_or_id: str) -> Any:
        """The scene with this id ("scene 3") or name ("scene Ana"), or None."""
        key = name_or_id.strip().removeprefix("#")
        conn = self.store.conn()
        if key.isdigit():
            return conn.execute("SELECT * FROM scenes WHERE id = ?", (int(key),)).fetchone()
        return conn.execute("SELECT * FROM scenes WHERE lower(name) = lower(?)", (key,)).fetchone()

    def forget(self, scene: Any, turn: str | None) -> dict[str, Any]:
        """Remove a scene's grouping (its memories stay), kept under `turn` for /undo."""
        conn = self.store.conn()
        cells = [r[0] for r in conn.execute("SELECT memory_id FROM scene_cells WHERE scene_id = ?", (scene["id"],))]
        with self.store.write() as w:
            w.execute(
                "INSERT INTO scene_history (scene_id, name, summary, reason, turn, cells) VALUES (?, ?, ?, 'forget', ?, ?)",
                (scene["id"], scene["name"], scene["summary"], turn, json.dumps(cells)),
            )
            w.execute("DELETE FROM scenes WHERE id = ?", (scene["id"],))
        with self._lock:
            self._loaded = False
        return {"forgotten": {"scene": scene["id"], "name": scene["name"], "memories kept": len(cells)}}

    def unforget(self, turn: str) -> list[str]:
        """Put back the scenes `turn` forgot; one line per scene."""
        lines = []
        with self.store.write() as w:
            rows = w.execute(
                "SELECT id, scene_id, name, summary, cells FROM scene_history "
                "WHERE turn = ? AND reason = 'forget' AND undone_at IS NULL ORDER BY id",
                (turn,),
            ).fetchall()
            for h in rows:
                w.execute("INSERT OR REPLACE INTO scenes (id, name, summary) VALUES (?, ?, ?)", (h[1], h[2], h[3]))
                w.executemany(
                    "INSERT OR IGNORE INTO scene_cells (scene_id, memory_id) VALUES (?, ?)",
                    [(h[1], m) for m in json.loads(h[4] or "[]")],
                )
                w.execute("UPDATE scene_history SET undone_at = ? WHERE id = ?", (_now(), h[0]))
                lines.append(f'restored scene {h[1]} "{h[2]}" (it was forgotten)')
        with self._lock:
            self._loaded = False
        return lines


def joined(name: str, texts: list[str]) -> str:
    """A summary in code: the scene's name and its memories, newest first, cut to SUMMARY_CHARS."""
    return f"{name}: " + " ".join(texts)
