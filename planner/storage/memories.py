"""Long-term memory's tables and every query on them: the one module that reads or writes them.

The tables: `memories` (one row a memory: its text, vector, kind, the days it was said and is about,
who said it and where in a conversation), `memory_history` (every earlier text, forgotten rows for
/undo), `memories_fts` (the keyword index, kept by triggers), `scenes`, `scene_cells`,
`scene_history`, `scene_state` (scenes.py), `memory_jobs` and `memory_topics` (keeper.py). The rest
of planner/memory, and anything above it, calls the methods here; none of them takes a connection.

A memory is added, restated, forgotten and put back through the one gate (gate.py, planner/policy.py):
MEMORIES is this table's part in it, its writers called by the gate alone. The other writes are the
planner's own bookkeeping, each one transaction: `set_vectors` (a memory embedded again), the job and topic
writes, and the scene writes (`regroup`, `save_scene_summaries`, `forget_scene`, `unforget_scenes`, and
`forget_marker`): a scene is a grouping the planner makes, and forgetting one removes no memory. Vectors cross this boundary as the
float32 BLOBs they are stored as (vectors.pack/unpack), so this module needs neither numpy nor the
embedding model. Trade-off: a method per question the memory layer asks, rather than a general
query builder; each is a plain parameterised statement a reader can check against the schema.
"""

from __future__ import annotations

import datetime as dt
import heapq
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from planner.storage.db import Store
from planner.storage.owner import Owner

Row = sqlite3.Row
ORDINAL = "CAST(julianday(%s) - 1721424.5 AS INTEGER)"  # a date column as Python's date.toordinal()
CELL = "id, text, kind, topic, said_on, happened_on, happened_to, speaker, conversation, turn_no, linked_to"


def _now() -> str:
    return dt.datetime.now().isoformat(timespec="seconds")


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


def _day_sql(column: str) -> str:
    # The column as a date ordinal, computed by SQLite (100,000 rows load in milliseconds).
    return ORDINAL % f"COALESCE({column}, said_on, substr(updated_at, 1, 10), '2000-01-01')"


class MemoryStore:
    """The queries and writes of long-term memory, over one planner database."""

    def __init__(self, store: Store):
        self.db = store

    # -- memories: reading

    def count(self) -> int:
        """How many memories are stored."""
        return self.db.conn().execute("SELECT COUNT(*) FROM memories").fetchone()[0]

    def listing(self) -> list[dict[str, Any]]:
        """Every memory, oldest first: {"id", "text", "kind", "topic", "said_on", "happened_on", "happened_to",
        "speaker"}."""
        rows = self.db.conn().execute(
            "SELECT id, text, kind, topic, said_on, happened_on, happened_to, speaker FROM memories ORDER BY id"
        )
        return [dict(r) for r in rows]

    def cell(self, id_: int) -> Row | None:
        """One memory's fields (no vector), or None."""
        return self.db.conn().execute(f"SELECT {CELL} FROM memories WHERE id = ?", (id_,)).fetchone()

    def cells(self, ids: Sequence[int]) -> dict[int, Row]:
        """{id: fields} of those of the ids that are stored."""
        if not ids:
            return {}
        rows = self.db.conn().execute(f"SELECT {CELL} FROM memories WHERE id IN ({_marks(ids)})", list(ids))
        return {r["id"]: r for r in rows}

    def texts(self, ids: Sequence[int]) -> list[Row]:
        """(id, text) of those of the ids that are stored."""
        return (
            self.db.conn().execute(f"SELECT id, text FROM memories WHERE id IN ({_marks(ids)})", list(ids)).fetchall()
        )

    def ids(self) -> list[int]:
        """Every memory's id, in order."""
        return [r[0] for r in self.db.conn().execute("SELECT id FROM memories ORDER BY id")]

    def vector_size(self, model: str) -> tuple[int, int] | None:
        """The most common vector size (bytes) among this model's vectors and how many have it; None if none."""
        row = (
            self.db.conn()
            .execute(
                "SELECT LENGTH(embedding) AS size, COUNT(*) AS n FROM memories WHERE embed_model = ? "
                "AND embedding IS NOT NULL GROUP BY size ORDER BY n DESC LIMIT 1",
                (model,),
            )
            .fetchone()
        )
        return (row[0], row[1]) if row else None

    def vectors(self, model: str, size: int) -> sqlite3.Cursor:
        """A cursor of (id, vector BLOB) of this model's vectors of this size, in id order."""
        return self.db.conn().execute(
            "SELECT id, embedding FROM memories WHERE embed_model = ? AND embedding IS NOT NULL "
            "AND LENGTH(embedding) = ? ORDER BY id",
            (model, size),
        )

    def days(self) -> Iterator[tuple[int, int, int]]:
        """(id, first day, last day) of every memory, days as date ordinals."""
        return self.db.conn().execute(f"SELECT id, {_day_sql('happened_on')}, {_day_sql('happened_to')} FROM memories")

    def weights(
        self, ids: Sequence[int]
    ) -> Iterator[tuple[int, float, int | None, int | None, int | None, str | None, int | None]]:
        """(id, salience, day said, first day about, last day about, conversation, turn number) of the ids, days
        as ordinals: what a search weighs its candidates by before reading any text."""
        return self.db.conn().execute(
            f"SELECT id, salience, {ORDINAL % 'said_on'}, {ORDINAL % 'happened_on'}, {ORDINAL % 'happened_to'}, "
            f"conversation, turn_no FROM memories WHERE id IN ({_marks(ids)})",
            list(ids),
        )

    def speakers(self) -> list[str]:
        """Every name a memory was said by (turns of a conversation; the user's own memories have none)."""
        rows = self.db.conn().execute("SELECT DISTINCT speaker FROM memories WHERE TRIM(COALESCE(speaker, '')) != ''")
        return [r[0] for r in rows]

    def said_by_or_naming(self, ids: Sequence[int], by: Sequence[str], naming: Sequence[str]) -> set[int]:
        """Those of the ids said by one of the speakers `by` (as stored) or whose words name one of `naming`."""
        found: set[int] = set()
        if ids and by:
            rows = self.db.conn().execute(
                f"SELECT id FROM memories WHERE id IN ({_marks(ids)}) AND speaker IN ({_marks(by)})", [*ids, *by]
            )
            found.update(r[0] for r in rows)
        if ids and naming:
            phrase = " OR ".join('"' + n.replace('"', '""') + '"' for n in naming)
            rows = self.db.conn().execute(
                f"SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? AND rowid IN ({_marks(ids)})",
                [f"text : ({phrase})", *ids],
            )
            found.update(r[0] for r in rows)
        return found

    def matches_more_than(self, fts_query: str, most: int) -> bool:
        """Whether an FTS5 query matches more than `most` memories (reading at most most + 1 of them)."""
        sql = "SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)"
        return self.db.conn().execute(sql, (fts_query, most + 1)).fetchone()[0] > most

    def keyword(self, fts_query: str, n: int, many: bool = False) -> list[tuple[int, float]]:
        """(id, BM25 score) best first for an FTS5 query; higher is better (SQLite's rank is its negative).

        The best n are picked here, not by ORDER BY rank: FTS5 then scores each matching row once, without
        its sorter (a fifth less time for 300 matching rows of 100,000, bench/recall.py). When the query
        matches `many` rows (thousands), FTS5's sorter is quicker than handing every row to Python."""
        if many:
            rows = self.db.conn().execute(
                "SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?", (fts_query, n)
            )
            return [(r[0], -r[1]) for r in rows]
        rows = self.db.conn().execute(
            "SELECT bm25(memories_fts), rowid FROM memories_fts WHERE memories_fts MATCH ?", (fts_query,)
        )
        return [(id_, -score) for score, id_ in heapq.nsmallest(n, map(tuple, rows))]

    def neighbours(self, ids: Sequence[int], reach: int = 1) -> dict[int, list[Row]]:
        """{id: the fields of the turns up to `reach` before and after it in the conversation it came from, in
        order} for those of the ids that are turns of a conversation: one query, served by memories_turn."""
        if not ids:
            return {}
        cols = ", ".join(f"n.{c.strip()}" for c in CELL.split(","))
        rows = self.db.conn().execute(
            f"SELECT m.id AS of_id, {cols} FROM memories m JOIN memories n ON n.conversation = m.conversation "
            "AND n.turn_no BETWEEN m.turn_no - ? AND m.turn_no + ? AND n.id != m.id "
            f"WHERE m.id IN ({_marks(ids)}) AND m.conversation IS NOT NULL ORDER BY m.id, n.turn_no",
            [reach, reach, *ids],
        )
        out: dict[int, list[Row]] = {}
        for r in rows:
            out.setdefault(r["of_id"], []).append(r)
        return out

    def before(self, id_: int) -> Row | None:
        """The turn said just before this one in its conversation (its fields), or None."""
        return (
            self.db.conn()
            .execute(
                f"SELECT {CELL} FROM memories WHERE conversation = (SELECT conversation FROM memories WHERE id = ?) "
                "AND turn_no < (SELECT turn_no FROM memories WHERE id = ?) ORDER BY turn_no DESC LIMIT 1",
                (id_, id_),
            )
            .fetchone()
        )

    def topic_texts(self, topic: str, most: int = 20) -> list[str]:
        """The newest texts of a topic."""
        rows = self.db.conn().execute(
            "SELECT text FROM memories WHERE topic = ? ORDER BY id DESC LIMIT ?", (topic, most)
        )
        return [r[0] for r in rows]

    def topic_summaries(self, topics: Sequence[str]) -> dict[str, str]:
        """Stored summaries of these topics."""
        if not topics:
            return {}
        rows = self.db.conn().execute(
            f"SELECT topic, summary FROM memory_topics WHERE topic IN ({_marks(topics)})", list(topics)
        )
        return {r[0]: r[1] for r in rows}

    # -- memories: writing

    def set_vectors(self, pairs: Iterable[tuple[int, bytes]], model: str) -> None:
        """Store new vectors (of `model`) for existing memories, in one transaction."""
        with self.db.write() as conn:
            conn.executemany(
                "UPDATE memories SET embedding = ?, embed_model = ? WHERE id = ?", [(v, model, i) for i, v in pairs]
            )

    def forget_marker(self, what: str, turn: str | None) -> None:
        """The turn's marker of a forgetting that removed no memory (a scene), so /undo finds the newest forget
        the same way whatever it removed."""
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO memory_history (memory_id, old_text, reason, changed_at, turn, after_event) "
                "VALUES (0, ?, 'forget', ?, ?, (SELECT COALESCE(MAX(id), 0) FROM task_events))",
                (what, _now(), turn),
            )

    # -- extraction jobs and topic summaries (keeper.py)

    def add_job(self, session: str, user_text: str, reply: str, today: str) -> None:
        """Record a finished turn whose memories are still to be extracted."""
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO memory_jobs (session, user_text, reply, today) VALUES (?, ?, ?, ?)",
                (session, user_text, reply, today),
            )

    def pending_jobs(self, max_attempts: int) -> list[Row]:
        """The turns still to extract, oldest first: (id, session, user_text, reply, today, attempts)."""
        return (
            self.db.conn()
            .execute(
                "SELECT id, session, user_text, reply, today, attempts FROM memory_jobs WHERE attempts < ? ORDER BY id",
                (max_attempts,),
            )
            .fetchall()
        )

    def has_jobs(self) -> bool:
        """Whether any turn waits for extraction."""
        return self.db.conn().execute("SELECT 1 FROM memory_jobs LIMIT 1").fetchone() is not None

    def job_failed(self, id_: int) -> None:
        """Count one more failed attempt of a job."""
        with self.db.write() as conn:
            conn.execute("UPDATE memory_jobs SET attempts = attempts + 1 WHERE id = ?", (id_,))

    def job_done(self, id_: int) -> None:
        """Drop a job whose memories are stored."""
        with self.db.write() as conn:
            conn.execute("DELETE FROM memory_jobs WHERE id = ?", (id_,))

    def save_topic_summary(self, topic: str, summary: str, count: int) -> None:
        """Store (or replace) a topic's summary."""
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO memory_topics (topic, summary, memory_count) VALUES (?, ?, ?) "
                "ON CONFLICT (topic) DO UPDATE SET summary = excluded.summary, memory_count = excluded.memory_count, "
                "updated_at = CURRENT_TIMESTAMP",
                (topic, summary, count),
            )

    # -- scenes (scenes.py): reading

    def scene_cells(self) -> list[tuple[int, int]]:
        """Every (scene id, memory id) pair."""
        return [
            (r[0], r[1])
            for r in self.db.conn().execute("SELECT scene_id, memory_id FROM scene_cells ORDER BY scene_id, memory_id")
        ]

    def scene_vectors(self, model: str) -> list[Row]:
        """(id, name, embedding) of the scenes with a vector of this model."""
        return (
            self.db.conn()
            .execute("SELECT id, name, embedding FROM scenes WHERE embedding IS NOT NULL AND embed_model = ?", (model,))
            .fetchall()
        )

    def scenes_listing(self, min_cells: int) -> list[Row]:
        """(id, name, summary, ids: comma-separated memory ids) of the scenes with at least min_cells memories."""
        return (
            self.db.conn()
            .execute(
                "SELECT s.id, s.name, s.summary, GROUP_CONCAT(c.memory_id) AS ids FROM scenes s "
                "JOIN scene_cells c ON c.scene_id = s.id GROUP BY s.id HAVING COUNT(*) >= ? ORDER BY s.name",
                (min_cells,),
            )
            .fetchall()
        )

    def scene(self, name_or_id: str) -> Row | None:
        """The scene with this id ("3") or name (any case), or None."""
        conn = self.db.conn()
        if name_or_id.isdigit():
            return conn.execute("SELECT * FROM scenes WHERE id = ?", (int(name_or_id),)).fetchone()
        return conn.execute("SELECT * FROM scenes WHERE lower(name) = lower(?)", (name_or_id,)).fetchone()

    def grouping_mark(self) -> tuple[str, int]:
        """How far scene grouping has read: (time of the last pass, newest memory id read)."""
        mark = self.db.conn().execute("SELECT value FROM scene_state WHERE key = 'read'").fetchone()
        since, last_id = json.loads(mark[0]) if mark else ("", 0)
        return since, last_id

    def to_group(self, since: str, last_id: int, most: int) -> tuple[list[Row], list[Row]]:
        """(memories read before and changed since `since`, up to `most` memories not read yet), each
        (id, text, speaker, conversation, turn_no)."""
        conn = self.db.conn()
        cols = "id, text, speaker, conversation, turn_no"
        changed = conn.execute(
            f"SELECT {cols} FROM memories WHERE id <= ? AND updated_at >= ? ORDER BY id", (last_id, since)
        ).fetchall()
        new = conn.execute(f"SELECT {cols} FROM memories WHERE id > ? ORDER BY id LIMIT ?", (last_id, most)).fetchall()
        return changed, new

    def stale_scenes(self, model: str) -> set[int]:
        """The scenes without a vector of this model."""
        return {r[0] for r in self.db.conn().execute("SELECT id FROM scenes WHERE embed_model IS NOT ?", (model,))}

    def unsummarised(self, most: int = 20) -> set[int]:
        """Scenes still waiting for a model's summary."""
        return {r[0] for r in self.db.conn().execute("SELECT id FROM scenes WHERE summarised = 0 LIMIT ?", (most,))}

    def scene_texts(self, sid: int, most: int = 30) -> tuple[Row | None, list[str]]:
        """A scene's (name, summary, summarised, embed_model) and its memories' texts, newest first."""
        conn = self.db.conn()
        row = conn.execute("SELECT name, summary, summarised, embed_model FROM scenes WHERE id = ?", (sid,)).fetchone()
        texts = [
            r[0]
            for r in conn.execute(
                "SELECT m.text FROM scene_cells c JOIN memories m ON m.id = c.memory_id WHERE c.scene_id = ? "
                "ORDER BY m.said_on DESC, m.id DESC LIMIT ?",
                (sid, most),
            )
        ]
        return row, texts

    # -- scenes: writing

    def regroup(
        self,
        memories: list[tuple[Row, bool]],
        names_of: Callable[[Row], set[str]],
        mentions_of: Callable[[Row], set[str]],
        backfill: Callable[[str, str], bool],
        read_up_to: int,
        started: str,
    ) -> set[int]:
        """Put each memory in the scenes it names, in one transaction; the scenes whose members changed.

        `memories` are (row, read before); `names_of(row)` are the names that start a scene, `mentions_of(row)`
        every name the row belongs to (names said at a sentence's start too); a new scene also takes the
        memories stored before it that name it (`backfill(name, text)` says whether a text does). A name
        whose scene the user forgot starts none. The mark moves to `read_up_to` as of `started`.
        """
        touched: set[int] = set()
        with self.db.write() as w:
            gone = w.execute(
                "DELETE FROM scene_cells WHERE memory_id NOT IN (SELECT id FROM memories) RETURNING scene_id"
            )
            touched |= {r[0] for r in gone}
            forgotten = {
                r[0] for r in w.execute("SELECT name FROM scene_history WHERE reason = 'forget' AND undone_at IS NULL")
            }
            scenes = {r["name"]: r["id"] for r in w.execute("SELECT id, name FROM scenes")}
            for m, read_before in memories:
                for name in names_of(m) - set(scenes) - forgotten:
                    scenes[name] = w.execute("INSERT INTO scenes (name) VALUES (?)", (name,)).lastrowid
                    rows = w.execute(
                        "SELECT m.id, m.text FROM memories_fts f JOIN memories m ON m.id = f.rowid "
                        "WHERE memories_fts MATCH ?",
                        (" ".join(f'"{part}"' for part in name.replace('"', " ").split()),),
                    ).fetchall()
                    added = [(scenes[name], r["id"]) for r in rows if backfill(name, r["text"])]
                    w.executemany("INSERT OR IGNORE INTO scene_cells (scene_id, memory_id) VALUES (?, ?)", added)
                    touched |= {scenes[name]} if added else set()
                now = {scenes[n] for n in mentions_of(m) if n in scenes}
                before = (
                    {r[0] for r in w.execute("SELECT scene_id FROM scene_cells WHERE memory_id = ?", (m["id"],))}
                    if read_before or now  # a new memory has no scenes yet, unless a backfill just gave some
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
            # What was read now is read: next time, "changed" means changed since this pass started.
            w.execute(
                "INSERT INTO scene_state (key, value) VALUES ('read', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (json.dumps([started, read_up_to]),),
            )
        return touched

    def save_scene_summaries(self, todo: list[tuple[int, Row, str, bool, bytes]], model: str) -> None:
        """Store new summaries and their vectors: (scene id, its row before, summary, written by a model,
        vector); a model's summary that is replaced is kept in scene_history."""
        with self.db.write() as w:
            for sid, row, summary, by_model, vector in todo:
                if row["summarised"]:  # nothing is lost: a model's summary that is replaced is kept
                    w.execute(
                        "INSERT INTO scene_history (scene_id, name, summary, reason) VALUES (?, ?, ?, 'summary')",
                        (sid, row["name"], row["summary"]),
                    )
                w.execute(
                    "UPDATE scenes SET summary = ?, summarised = ?, embedding = ?, embed_model = ?, updated_at = ? "
                    "WHERE id = ?",
                    (summary, int(by_model), vector, model, _now(), sid),
                )

    def forget_scene(self, scene: Row, turn: str | None) -> int:
        """Remove a scene's grouping (its memories stay), kept in scene_history under `turn`; how many
        memories it grouped."""
        with self.db.write() as w:
            cells = [r[0] for r in w.execute("SELECT memory_id FROM scene_cells WHERE scene_id = ?", (scene["id"],))]
            w.execute(
                "INSERT INTO scene_history (scene_id, name, summary, reason, turn, cells) VALUES (?, ?, ?, 'forget', ?, ?)",
                (scene["id"], scene["name"], scene["summary"], turn, json.dumps(cells)),
            )
            w.execute("DELETE FROM scenes WHERE id = ?", (scene["id"],))
        return len(cells)

    def unforget_scenes(self, turn: str) -> list[tuple[int, str]]:
        """Put back the scenes `turn` forgot, with their memories; (id, name) of each."""
        with self.db.write() as w:
            out = forgotten_scenes(w, turn)
            restore_scenes(w, turn)
        return out


def newest_forget(conn: sqlite3.Connection) -> tuple[str, int] | None:
    """The newest request that forgot a memory or a scene and is not undone: (turn, the task change-log id
    it came after), or None."""
    row = conn.execute(
        "SELECT turn, after_event FROM memory_history "
        "WHERE reason = 'forget' AND turn IS NOT NULL AND undone_at IS NULL ORDER BY id DESC LIMIT 1"
    ).fetchone()
    return (row["turn"], row["after_event"]) if row else None


def exported(conn: sqlite3.Connection) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every memory (text, kind, topic, dates; no vectors) and every scene of two or more (name, summary,
    member ids), for the json export."""
    rows = conn.execute(
        "SELECT id, text, kind, topic, said_on, happened_on, happened_to, created_at, updated_at FROM memories "
        "ORDER BY id"
    )
    scenes = conn.execute(
        "SELECT s.id, s.name, s.summary, json_group_array(c.memory_id) AS memories FROM scenes s "
        "JOIN scene_cells c ON c.scene_id = s.id GROUP BY s.id HAVING COUNT(*) >= 2 ORDER BY s.name"  # as scenes.MIN_CELLS
    )
    return [dict(r) for r in rows], [dict(r) | {"memories": json.loads(r["memories"])} for r in scenes]


def count(conn: sqlite3.Connection) -> int:
    """How many memories are stored."""
    return conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]


def forgotten_scenes(conn: sqlite3.Connection, turn: str) -> list[tuple[int, str]]:
    """(id, name) of each scene `turn` forgot and no undo has put back."""
    rows = conn.execute(
        "SELECT scene_id, name FROM scene_history WHERE turn = ? AND reason = 'forget' AND undone_at IS NULL "
        "ORDER BY id",
        (turn,),
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def restore_scenes(conn: sqlite3.Connection, turn: str) -> None:
    """Put back the scenes `turn` forgot, with their memories (in the caller's transaction: an undo's)."""
    rows = conn.execute(
        "SELECT id, scene_id, name, summary, cells FROM scene_history "
        "WHERE turn = ? AND reason = 'forget' AND undone_at IS NULL ORDER BY id",
        (turn,),
    ).fetchall()
    for h in rows:
        conn.execute("INSERT OR REPLACE INTO scenes (id, name, summary) VALUES (?, ?, ?)", (h[1], h[2], h[3]))
        conn.executemany(
            "INSERT OR IGNORE INTO scene_cells (scene_id, memory_id) VALUES (?, ?)",
            [(h[1], m) for m in json.loads(h[4] or "[]")],
        )
        conn.execute("UPDATE scene_history SET undone_at = ? WHERE id = ?", (_now(), h[0]))


# ---------------------------------------------------------------- the gate's writers (gate.py alone calls them)

CELL_COLUMNS = (
    "text",
    "kind",
    "salience",
    "topic",
    "source",
    "said_on",
    "happened_on",
    "happened_to",
    "speaker",
    "conversation",
    "turn_no",
    "linked_to",
)


def _row(conn: sqlite3.Connection, id_: int) -> dict[str, Any] | None:
    """A memory as a yes is bound to it: every column but its vector."""
    row = conn.execute("SELECT * FROM memories WHERE id = ?", (id_,)).fetchone()
    return {k: row[k] for k in row.keys() if k != "embedding"} if row else None


def _apply(conn: sqlite3.Connection, c: Any, turn: str, log: bool) -> int | None:
    """add: a new memory (the cell's columns, `embedding`, `embed_model`); edit: newer words for it (`reason`
    "update" or "supersede"), the old text, days and speaker kept in memory_history; delete: forgotten, its
    whole row and vector kept in memory_history under `turn` for /undo; put: a forgotten row put back."""
    values = dict(c.values or {})
    op = c.op.value
    if op == "add":
        now = _now()
        cols = [*CELL_COLUMNS, "embedding", "embed_model", "created_at", "updated_at"]
        row = {k: values.get(k) for k in (*CELL_COLUMNS, "embedding", "embed_model")} | {"created_at": now}
        row["updated_at"] = now
        return conn.execute(
            f"INSERT INTO memories ({', '.join(cols)}) VALUES ({_marks(cols)})", [row[k] for k in cols]
        ).lastrowid
    if op == "edit":
        old = conn.execute(
            "SELECT text, said_on, happened_on, happened_to, speaker FROM memories WHERE id = ?", (c.key,)
        ).fetchone()
        kept = json.dumps({k: old[k] for k in ("said_on", "happened_on", "happened_to", "speaker")})
        conn.execute(
            "INSERT INTO memory_history (memory_id, old_text, new_text, reason, changed_at, row) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (c.key, old["text"], values["text"], values.get("reason", "update"), _now(), kept),
        )
        conn.execute(
            "UPDATE memories SET text = ?, embedding = ?, embed_model = ?, kind = ?, salience = MAX(salience, ?), "
            "topic = CASE WHEN ? = '' THEN topic ELSE ? END, updated_at = ?, "
            # said again: the newer date, and the days the newer words are about
            "happened_on = CASE WHEN ? >= COALESCE(said_on, '') THEN ? ELSE happened_on END, "
            "happened_to = CASE WHEN ? >= COALESCE(said_on, '') THEN ? ELSE happened_to END, "
            "said_on = MAX(COALESCE(said_on, ''), ?) WHERE id = ?",
            (
                values["text"],
                values["embedding"],
                values["embed_model"],
                values["kind"],
                values["salience"],
                values["topic"],
                values["topic"],
                _now(),
                values["said_on"],
                values["happened_on"],
                values["said_on"],
                values["happened_to"],
                values["said_on"],
                c.key,
            ),
        )
        return c.key
    if op == "delete":
        full = conn.execute("SELECT * FROM memories WHERE id = ?", (c.key,)).fetchone()
        kept_row = {k: full[k] for k in full.keys() if k != "embedding"}
        conn.execute(
            "INSERT INTO memory_history (memory_id, old_text, reason, changed_at, turn, row, embedding, after_event)"
            " VALUES (?, ?, 'forget', ?, ?, ?, ?, (SELECT COALESCE(MAX(id), 0) FROM task_events))",
            (c.key, full["text"], _now(), turn, json.dumps(kept_row), full["embedding"]),
        )
        conn.execute("DELETE FROM memories WHERE id = ?", (c.key,))
        return None
    cols = list(values)  # put: the row as it was, with its vector
    conn.execute(f"INSERT OR REPLACE INTO memories ({', '.join(cols)}) VALUES ({_marks(cols)})", list(values.values()))
    return c.key


def _line(op: str, key: int | None, before: dict[str, Any] | None, after: dict[str, Any] | None) -> str:
    if before is None:
        return f'remember "{(after or {}).get("text", "")}"' if op == "add" else f"put back memory {key}"
    if after is None:
        return f'forget memory {key} "{before.get("text", "")}"'
    return f'change memory {key} "{before.get("text", "")}"'


def _mark(conn: sqlite3.Connection, kind: str, ids: list[int]) -> None:
    """Mark memory_history rows undone (a forget taken back), or not."""
    now = _now() if kind == "undo" else None
    conn.executemany("UPDATE memory_history SET undone_at = ? WHERE id = ?", [(now, i) for i in ids])


MEMORIES = Owner("memories", _row, _apply, _line, _mark)


def undo_changes(conn: sqlite3.Connection, turn: str) -> tuple[list[tuple[int, dict[str, Any]]], list[int], list[str]]:
    """What undoing a turn's forgets would write: (memory id, its row with its vector), the memory_history
    rows to mark (the markers of scenes forgotten too), and a line for each memory."""
    rows = conn.execute(
        "SELECT id, row, embedding FROM memory_history WHERE turn = ? AND reason = 'forget' AND undone_at IS NULL "
        "ORDER BY id",
        (turn,),
    ).fetchall()
    puts, lines = [], []
    for h in rows:
        if h["row"] is None:
            continue  # a scene's marker: its memories stayed
        kept = json.loads(h["row"]) | {"embedding": h["embedding"]}
        puts.append((kept["id"], kept))
        lines.append(f'restored memory {kept["id"]} "{kept["text"]}" (it was forgotten)')
    return puts, [h["id"] for h in rows], lines
