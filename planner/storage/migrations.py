"""The schema as a tiny ordered list of migrations: MIGRATIONS[i] takes a database from version i to i + 1.

PRAGMA user_version holds the version; db.migrate runs the missing steps, each
in the one transaction that also sets the version, so a crash never leaves a
half-migrated file. Never change a step that has shipped: add one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _script(conn: sqlite3.Connection, sql: str) -> None:
    # Not executescript(): it commits first, which would split a migration
    # across transactions.
    buffer = ""
    for piece in sql.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):  # a trigger body holds ';' of its own
            if buffer.strip(" \n;"):
                conn.execute(buffer)
            buffer = ""


def _add_columns(conn: sqlite3.Connection, table: str, columns: dict[str, str]) -> None:
    have = _columns(conn, table)
    for name, decl in columns.items():
        if name not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")


def _m1_tutorial_tables(conn: sqlite3.Connection) -> None:
    # The tutorial's tables, exactly; IF NOT EXISTS keeps a tutorial file's data.
    _script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS tasks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            title TEXT NOT NULL,
            due_date TEXT,
            status TEXT NOT NULL DEFAULT 'open',
            created_at TEXT DEFAULT CURRENT_TIMESTAMP
        );
        CREATE TABLE IF NOT EXISTS messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session TEXT NOT NULL,
            role TEXT NOT NULL,
            content TEXT,
            tool_calls TEXT,
            tool_name TEXT,
            created_at TEXT DEFAULT CURRENT_TIMESTAMP
        );
        CREATE TABLE IF NOT EXISTS memories (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            text TEXT NOT NULL,
            embedding BLOB,
            created_at TEXT DEFAULT CURRENT_TIMESTAMP
        );
        """,
    )
    # A tutorial file may predate a column; add what is missing.
    _add_columns(conn, "tasks", {"due_date": "TEXT", "created_at": "TEXT"})
    _add_columns(conn, "messages", {"tool_calls": "TEXT", "tool_name": "TEXT", "created_at": "TEXT"})
    _add_columns(conn, "memories", {"embedding": "BLOB", "created_at": "TEXT"})


def _m2_sessions_and_models(conn: sqlite3.Connection) -> None:
    # embed_model: which model made each vector, so a model change is detected.
    _add_columns(conn, "memories", {"embed_model": "TEXT", "updated_at": "TEXT"})
    _script(
        conn,
        """
        -- window_start: id of the first message sent to the model (planner/memory/history.py)
        CREATE TABLE IF NOT EXISTS sessions (
            name TEXT PRIMARY KEY,
            created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
            window_start INTEGER NOT NULL DEFAULT 0
        );
        INSERT OR IGNORE INTO sessions (name, created_at)
            SELECT session, MIN(created_at) FROM messages GROUP BY session;
        CREATE INDEX IF NOT EXISTS messages_session_id ON messages (session, id);
        CREATE INDEX IF NOT EXISTS tasks_status ON tasks (status);
        """,
    )


def _m3_typed_memories(conn: sqlite3.Connection) -> None:
    # Memories become typed, scored cells with a keyword index beside the vectors.
    _add_columns(
        conn,
        "memories",
        {
            "kind": "TEXT NOT NULL DEFAULT 'fact'",
            "salience": "REAL NOT NULL DEFAULT 0.5",
            "topic": "TEXT NOT NULL DEFAULT ''",
            "source": "TEXT NOT NULL DEFAULT 'remember'",
        },
    )
    _script(
        conn,
        """
        UPDATE memories SET updated_at = COALESCE(updated_at, created_at, CURRENT_TIMESTAMP);
        -- reason: update (a newer version), supersede (contradicted), forget (removed)
        CREATE TABLE IF NOT EXISTS memory_history (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id INTEGER NOT NULL,
            old_text TEXT NOT NULL,
            new_text TEXT,
            reason TEXT NOT NULL,
            changed_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
        );
        CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
            text, content='memories', content_rowid='id', tokenize='porter unicode61'
        );
        CREATE TRIGGER IF NOT EXISTS memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER IF NOT EXISTS memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END;
        CREATE TRIGGER IF NOT EXISTS memories_fts_update AFTER UPDATE OF text ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
            INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
        END;
        INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
        CREATE TABLE IF NOT EXISTS memory_topics (
            topic TEXT PRIMARY KEY,
            summary TEXT NOT NULL,
            memory_count INTEGER NOT NULL,
            updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
        );
        -- one row per finished turn whose memories are still to be extracted
        CREATE TABLE IF NOT EXISTS memory_jobs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session TEXT NOT NULL,
            user_text TEXT NOT NULL,
            reply TEXT NOT NULL,
            today TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
        );
        CREATE TABLE IF NOT EXISTS conversation_summaries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session TEXT NOT NULL,
            summary TEXT NOT NULL,
            first_message_id INTEGER NOT NULL,
            last_message_id INTEGER NOT NULL,
            message_count INTEGER NOT NULL,
            created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
        );
        CREATE INDEX IF NOT EXISTS conversation_summaries_session ON conversation_summaries (session, id)
        """,
    )


def _m4_task_events(conn: sqlite3.Connection) -> None:
    # The change log behind /undo (tasks.py): each task as it was and as it became.
    _script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS task_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            turn TEXT NOT NULL,
            tool TEXT NOT NULL,
            task_id INTEGER NOT NULL,
            before TEXT,
            after TEXT,
            created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
            undone_at TEXT
        );
        CREATE INDEX IF NOT EXISTS task_events_turn ON task_events (turn, id);
        CREATE INDEX IF NOT EXISTS task_events_pending ON task_events (id) WHERE undone_at IS NULL
        """,
    )


def _m5_planner_fields(conn: sqlite3.Connection) -> None:
    # Priority, notes, a due time, completion time, a repeat rule (RRULE) and a
    # stable uid (so export -> import is idempotent); tags in their own table.
    _add_columns(
        conn,
        "tasks",
        {
            "due_time": "TEXT",
            "priority": "TEXT",
            "notes": "TEXT",
            "completed_at": "TEXT",
            "recurrence": "TEXT",
            "uid": "TEXT",
        },
    )
    _script(
        conn,
        """
        UPDATE tasks SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL;
        CREATE UNIQUE INDEX IF NOT EXISTS tasks_uid ON tasks (uid);
        CREATE INDEX IF NOT EXISTS tasks_due ON tasks (status, due_date);
        CREATE TABLE IF NOT EXISTS task_tags (
            task_id INTEGER NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            PRIMARY KEY (task_id, tag)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS task_tags_tag ON task_tags (tag)
        """,
    )


# Ordered; index i upgrades user_version i to i + 1. Append only.
def _m6_forget_undo(conn: sqlite3.Connection) -> None:
    # A forgotten memory keeps its whole row and vector under the turn that forgot it, so /undo brings it back.
    # after_event: the newest task_events.id when it was forgotten, so /undo knows which came last.
    _add_columns(
        conn,
        "memory_history",
        {"turn": "TEXT", "row": "TEXT", "embedding": "BLOB", "undone_at": "TEXT", "after_event": "INTEGER"},
    )
    conn.execute("CREATE INDEX IF NOT EXISTS memory_history_pending ON memory_history (turn) WHERE undone_at IS NULL")


def _m7_said_on(conn: sqlite3.Connection) -> None:
    # The planner's date when the fact was last said (its "today", which a background extraction
    # carries from the turn), shown with the memory so the model can answer "when" and prefer the newer.
    _add_columns(conn, "memories", {"said_on": "TEXT"})
    conn.execute("UPDATE memories SET said_on = substr(COALESCE(updated_at, created_at), 1, 10) WHERE said_on IS NULL")


def _m8_sync(conn: sqlite3.Connection) -> None:
    # CalDAV sync state: for each task last synced, where it lives on the server, the ETag it had
    # there, and a hash of its fields as synced (a change on either side since shows as a difference).
    _script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS sync_items (
            uid TEXT PRIMARY KEY,
            href TEXT NOT NULL,
            etag TEXT,
            synced TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS sync_meta (key TEXT PRIMARY KEY, value TEXT)
        """,
    )


def _m9_reminders(conn: sqlite3.Connection) -> None:
    # When to remind (local time, like due dates) and when the reminder was shown, so each shows once.
    _add_columns(conn, "tasks", {"remind_at": "TEXT", "reminded_at": "TEXT"})
    conn.execute("CREATE INDEX IF NOT EXISTS tasks_remind ON tasks (remind_at) WHERE reminded_at IS NULL")


def _m10_task_model(conn: sqlite3.Connection) -> None:
    # The fields other planners have: a list (project), a start date (not before), an estimate, a parent
    # (by uid, as RELATED-TO names it), dated notes after the first, the to-do as another app last
    # wrote it (ical) and other tools' fields (extra, JSON: Taskwarrior's UDAs), so a sync or export
    # writes back everything the planner does not own.
    # Status gains 'cancelled'. The sync remembers each task's fields as last agreed (for a merge by
    # field) and which collection it lives in; a stored URL loses any user name or password in it.
    _add_columns(
        conn,
        "tasks",
        {
            "list": "TEXT",
            "start_date": "TEXT",
            "estimate_minutes": "INTEGER",
            "parent_uid": "TEXT",
            "annotations": "TEXT",
            "ical": "TEXT",
            "extra": "TEXT",
        },
    )
    conn.execute("CREATE INDEX IF NOT EXISTS tasks_list ON tasks (list) WHERE list IS NOT NULL")
    conn.execute("CREATE INDEX IF NOT EXISTS tasks_parent ON tasks (parent_uid) WHERE parent_uid IS NOT NULL")
    _add_columns(conn, "sync_items", {"collection": "TEXT NOT NULL DEFAULT ''", "fields": "TEXT"})
    for key, value in conn.execute("SELECT key, value FROM sync_meta").fetchall():
        if value and "://" in value and value != _without_userinfo(value):
            conn.execute("UPDATE sync_meta SET value = ? WHERE key = ?", (_without_userinfo(value), key))


def _without_userinfo(url: str) -> str:
    """A URL without the user name and password an older planner stored in it."""
    scheme, sep, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme}{sep}{host.rpartition('@')[2]}{slash}{path}"


def _m11_redo(conn: sqlite3.Connection) -> None:
    # The order undos were made in, so redo takes back the latest one first (undone_at has only seconds).
    _add_columns(conn, "task_events", {"undo_seq": "INTEGER"})
    conn.execute("CREATE INDEX IF NOT EXISTS task_events_undone ON task_events (undo_seq) WHERE undo_seq IS NOT NULL")


def _m12_calendar(conn: sqlite3.Connection) -> None:
    # Busy time: calendar events as the file or the server had them (storage/calendar.py), the planning
    # preferences, and a task's pinned place in the plan (scheduled_at: a local time the plan keeps).
    _script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            uid TEXT NOT NULL,
            source TEXT NOT NULL,
            title TEXT NOT NULL,
            first TEXT NOT NULL,
            last TEXT,
            transparent INTEGER NOT NULL DEFAULT 0,
            all_day INTEGER NOT NULL DEFAULT 0,
            ical TEXT NOT NULL,
            added_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
            UNIQUE (source, uid)
        );
        CREATE INDEX IF NOT EXISTS events_span ON events (first, last);
        CREATE TABLE IF NOT EXISTS preferences (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            weekdays TEXT NOT NULL DEFAULT '',
            start TEXT NOT NULL,
            end TEXT NOT NULL,
            tags TEXT NOT NULL DEFAULT '',
            said TEXT NOT NULL,
            turn TEXT NOT NULL,
            after_event INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
            undone_at TEXT,
            removed_turn TEXT,
            removed_after INTEGER,
            removed_at TEXT
        )
        """,
    )
    _add_columns(conn, "tasks", {"scheduled_at": "TEXT"})


def _m13_happened_on(conn: sqlite3.Connection) -> None:
    # The days a memory is about, beside the day it was said: "I went to Lisbon last week", said on
    # 2026-03-12, is about 2026-03-02..08 (planner/periods.py reads it when the memory is stored).
    # Older memories are taken to be about the day they were said.
    _add_columns(conn, "memories", {"happened_on": "TEXT", "happened_to": "TEXT"})
    conn.execute("UPDATE memories SET happened_on = said_on, happened_to = said_on WHERE happened_on IS NULL")
    conn.execute("CREATE INDEX IF NOT EXISTS memories_happened ON memories (happened_on, happened_to)")


def _m14_scenes(conn: sqlite3.Connection) -> None:
    # Scenes: memories grouped by the person, place or thing they share (planner/memory/scenes.py),
    # each with a consolidated summary. Derived from the memories, never the other way round; a
    # summary that is replaced or a scene that is forgotten is kept in scene_history for /undo.
    _script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS scenes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL UNIQUE,
            summary TEXT NOT NULL DEFAULT '',
            summarised INTEGER NOT NULL DEFAULT 0,
            embedding BLOB,
            embed_model TEXT,
            updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
        );
        CREATE TABLE IF NOT EXISTS scene_cells (
            scene_id INTEGER NOT NULL REFERENCES scenes (id) ON DELETE CASCADE,
            memory_id INTEGER NOT NULL,
            PRIMARY KEY (scene_id, memory_id)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS scene_cells_memory ON scene_cells (memory_id);
        CREATE TABLE IF NOT EXISTS scene_history (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scene_id INTEGER NOT NULL,
            name TEXT NOT NULL,
            summary TEXT NOT NULL,
            reason TEXT NOT NULL,
            turn TEXT,
            cells TEXT,
            changed_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
            undone_at TEXT
        );
        -- how far the grouping has read: the newest memory id and the time of the last refresh
        CREATE TABLE IF NOT EXISTS scene_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)
        """,
    )


def _m15_event_log(conn: sqlite3.Connection) -> None:
    # The change log of the calendar's events, as task_events is for tasks (storage/calendar.py): an import that
    # adds, replaces or removes events is one /undo with its tasks. after_event: the newest task_events.id then.
    _script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS event_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            turn TEXT,
            event_id INTEGER NOT NULL,
            before TEXT,
            after TEXT,
            after_event INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
            undone_at TEXT
        );
        CREATE INDEX IF NOT EXISTS event_log_turn ON event_log (turn, id)
        """,
    )


def _m16_worklog(conn: sqlite3.Connection) -> None:
    # Tracked time (planner/storage/worklog.py): a stretch of work per row, undone by the turn that made
    # or stopped it, as preferences are.
    _script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS worklog (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            task_id INTEGER NOT NULL,
            start TEXT NOT NULL,
            end TEXT,
            minutes INTEGER,
            turn TEXT,
            after_event INTEGER,
            stop_turn TEXT,
            stop_after INTEGER,
            seq INTEGER,
            stop_seq INTEGER,
            undone_at TEXT
        );
        CREATE INDEX IF NOT EXISTS worklog_task ON worklog (task_id);
        CREATE INDEX IF NOT EXISTS worklog_running ON worklog (end) WHERE end IS NULL
        """,
    )


def _m17_plan_memory(conn: sqlite3.Connection) -> None:
    # The last plan shown (planner/storage/planstate.py), so that a re-plan moves only what it must.
    _script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS plan_memory (
            task_id INTEGER NOT NULL,
            start TEXT,
            end TEXT,
            late INTEGER NOT NULL DEFAULT 0,
            made_for TEXT NOT NULL,
            made_until TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS plan_memory_start ON plan_memory (start)
        """,
    )


def _m18_memory_context(conn: sqlite3.Connection) -> None:
    # Where a memory came from: who said it (NULL: the user), the conversation and its place in it (so a
    # search can bring the turns around it), and the earlier memory it restates without replacing (a
    # near-duplicate that is not the same fact is kept beside it, linked).
    _add_columns(
        conn, "memories", {"speaker": "TEXT", "conversation": "TEXT", "turn_no": "INTEGER", "linked_to": "INTEGER"}
    )
    conn.execute(
        "CREATE INDEX IF NOT EXISTS memories_turn ON memories (conversation, turn_no) WHERE conversation IS NOT NULL"
    )
    # The keyword index holds who said it beside the words: "when did Elise go to Morocco?" ranks Elise's
    # "I went to Morocco" above "did you like Morocco?" said to her.
    _script(
        conn,
        """
        DROP TRIGGER IF EXISTS memories_fts_insert;
        DROP TRIGGER IF EXISTS memories_fts_delete;
        DROP TRIGGER IF EXISTS memories_fts_update;
        DROP TABLE IF EXISTS memories_fts;
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            text, speaker, content='memories', content_rowid='id', tokenize='porter unicode61'
        );
        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts (rowid, text, speaker) VALUES (new.id, new.text, new.speaker);
        END;
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text, speaker) VALUES ('delete', old.id, old.text, old.speaker);
        END;
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, speaker ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text, speaker) VALUES ('delete', old.id, old.text, old.speaker);
            INSERT INTO memories_fts (rowid, text, speaker) VALUES (new.id, new.text, new.speaker);
        END;
        INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')
        """,
    )


def _m19_redo_rows(conn: sqlite3.Connection) -> None:
    # What an undo took back from the tables that keep their history in the row (preferences, worklog):
    # the row as its request left it, so redo can make it again (planner/storage/undoing.py), and the row
    # as the undo left it, so a redo never overwrites a change made since.
    _script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS redo_rows (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            turn TEXT NOT NULL,
            tbl TEXT NOT NULL,
            key INTEGER NOT NULL,
            made TEXT NOT NULL,
            undone TEXT NOT NULL,
            undone_at TEXT NOT NULL,
            redone_at TEXT
        );
        CREATE INDEX IF NOT EXISTS redo_rows_turn ON redo_rows (turn)
        """,
    )


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _m1_tutorial_tables,
    _m2_sessions_and_models,
    _m3_typed_memories,
    _m4_task_events,
    _m5_planner_fields,
    _m6_forget_undo,
    _m7_said_on,
    _m8_sync,
    _m9_reminders,
    _m10_task_model,
    _m11_redo,
    _m12_calendar,
    _m13_happened_on,
    _m14_scenes,
    _m15_event_log,
    _m16_worklog,
    _m17_plan_memory,
    _m18_memory_context,
    _m19_redo_rows,
]
SCHEMA_VERSION = len(MIGRATIONS)
