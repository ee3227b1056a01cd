"""Short-term memory: a session's messages, and the window of them the model sees.

Short-term: every message is stored. What is sent to the model is a window
over the session that is always valid for a tool-calling API and fits a
budget. The window is trimmed in chunks: when it overflows, its start jumps
forward to well under the budget and then stays put for many turns, so the
prompt prefix is byte-identical from turn to turn and Ollama reuses its KV
cache. The start is stored per session (sessions.window_start), so a resumed
session sends the same prefix as before the restart.

Long-term memory (facts about the user) lives in longterm.py.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from planner.storage.db import Store

log = logging.getLogger("planner")

Message = dict[str, Any]  # {"role", "content", "tool_calls"?, "tool_name"?}

SUMMARY_HEADER = "Summary of the earlier part of this conversation (older messages are not shown):\n"

# ---------------------------------------------------------------- sessions


def new_session_name() -> str:
    """A fresh, sortable, unique session name."""
    return dt.datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def latest_session(store: Store) -> str | None:
    """The session with the most recent message, if any."""
    row = store.conn().execute("SELECT session FROM messages ORDER BY id DESC LIMIT 1").fetchone()
    return row[0] if row else None


def recent_sessions(store: Store, limit: int = 20) -> list[dict]:
    """The most recently used sessions: {"name", "messages", "last"} (last: the newest message's time or None)."""
    rows = store.conn().execute(
        "SELECT s.name, COUNT(m.id) AS n, MAX(m.created_at) AS last FROM sessions s "
        "LEFT JOIN messages m ON m.session = s.name GROUP BY s.name ORDER BY COALESCE(last, s.created_at) DESC "
        "LIMIT ?",
        (limit,),
    )
    return [{"name": r["name"], "messages": r["n"], "last": r["last"]} for r in rows]


def ensure_session(store: Store, name: str) -> None:
    """Create the session row if it does not exist."""
    with store.write() as conn:
        conn.execute("INSERT OR IGNORE INTO sessions (name) VALUES (?)", (name,))


# ---------------------------------------------------------------- validity


def sanitize(messages: list[Message]) -> list[Message]:
    """The longest valid form of a message list for a tool-calling API.

    Valid: starts with a user message; every assistant message with k
    tool_calls is followed by exactly k tool results; tool results appear only
    there. Anything else (left by a crash mid-turn) is dropped.
    """
    out: list[Message] = []
    i, n = 0, len(messages)
    while i < n:
        m = messages[i]
        role = m.get("role")
        calls = m.get("tool_calls") or []
        if role == "assistant" and calls:
            j = i + 1
            while j < n and messages[j].get("role") == "tool":
                j += 1
            if j - (i + 1) == len(calls):
                out.extend(messages[i:j])
            i = j
            continue
        if role in ("user", "assistant"):
            out.append(m)
        i += 1  # stray tool results and unknown roles are dropped
    while out and out[0].get("role") != "user":
        out.pop(0)
    return out


def estimate_tokens(m: Message) -> int:
    """A cheap token estimate: ~4 characters a token plus per-message overhead."""
    n = len(m.get("content") or "")
    if m.get("tool_calls"):
        n += len(json.dumps(m["tool_calls"]))
    return n // 4 + 4


@dataclass(frozen=True)
class Budget:
    """How much history may be sent: a message cap and a token cap."""

    messages: int = 200
    tokens: int = 4000
    low_water: float = 0.5  # after a trim, the window is at most this share of the caps


def trim_start(messages: list[Message], tokens: list[int], budget: Budget) -> int:
    """Index where the window must start so it fits, moving in chunks.

    Returns 0 when everything fits. Otherwise the smallest user-message index
    whose suffix is within low_water of both caps (or the last user message,
    if even one exchange is larger than that).
    """
    total = sum(tokens)
    if len(messages) <= budget.messages and total <= budget.tokens:
        return 0
    max_msgs = int(budget.messages * budget.low_water)
    max_tokens = int(budget.tokens * budget.low_water)
    last_user = 0
    for i, m in enumerate(messages):
        if m.get("role") != "user":
            total -= tokens[i]
            continue
        last_user = i
        if len(messages) - i <= max_msgs and total <= max_tokens:
            return i
        total -= tokens[i]
    return last_user


class History:
    """One session's window of messages, stored as they happen."""

    def __init__(self, store: Store, session: str, budget: Budget):
        self.store = store
        self.session = session
        self.budget = budget
        # The session row is made with its first message: a run in which nothing was said leaves none.
        conn = store.conn()
        row = conn.execute("SELECT window_start FROM sessions WHERE name = ?", (session,)).fetchone()
        start = row[0] if row else 0
        rows = conn.execute(
            "SELECT id, role, content, tool_calls, tool_name FROM messages WHERE session = ? AND id >= ? ORDER BY id",
            (session, start),
        ).fetchall()
        loaded = [(r["id"], _from_row(r)) for r in rows]
        keep = {id(m) for m in sanitize([m for _, m in loaded])}
        self.ids = [i for i, m in loaded if id(m) in keep]
        self.messages = [m for _, m in loaded if id(m) in keep]
        self._tokens = [estimate_tokens(m) for m in self.messages]
        self.summary: str | None = None
        self.refresh_summary()
        self._trim()

    def refresh_summary(self) -> None:
        """Pick up the newest summary of the messages before the window."""
        row = (
            self.store.conn()
            .execute(
                "SELECT summary FROM conversation_summaries WHERE session = ? ORDER BY id DESC LIMIT 1", (self.session,)
            )
            .fetchone()
        )
        self.summary = row[0] if row else None

    def context(self) -> list[Message]:
        """What the model sees of the session: the summary, if any, then the window."""
        if not self.summary:
            return list(self.messages)
        return [{"role": "system", "content": SUMMARY_HEADER + self.summary}, *self.messages]

    def append(self, messages: Iterable[Message]) -> None:
        """Store messages in one transaction and add them to the window."""
        messages = list(messages)
        now = dt.datetime.now().isoformat(timespec="seconds")
        ids = []
        with self.store.write() as conn:
            conn.execute("INSERT OR IGNORE INTO sessions (name) VALUES (?)", (self.session,))
            for m in messages:
                cur = conn.execute(
                    "INSERT INTO messages (session, role, content, tool_calls, tool_name, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        self.session,
                        m["role"],
                        m.get("content") or "",
                        json.dumps(m["tool_calls"], ensure_ascii=False) if m.get("tool_calls") else None,
                        m.get("tool_name"),
                        now,
                    ),
                )
                ids.append(cur.lastrowid)
        self.ids += ids
        self.messages += messages
        self._tokens += [estimate_tokens(m) for m in messages]

    def end_turn(self) -> bool:
        """Trim the window if the finished turn made it overflow; True if it did."""
        return self._trim()

    def _trim(self) -> bool:
        start = trim_start(self.messages, self._tokens, self.budget)
        if start == 0:
            return False
        del self.messages[:start], self.ids[:start], self._tokens[:start]
        first = self.ids[0] if self.ids else 2**62
        with self.store.write() as conn:
            conn.execute("UPDATE sessions SET window_start = ? WHERE name = ?", (first, self.session))
        log.info("history of %s trimmed to %d messages", self.session, len(self.messages))
        return True


def _from_row(r: Any) -> Message:
    m: Message = {"role": r["role"], "content": r["content"] or ""}
    if r["tool_calls"]:
        try:
            # NaN or Infinity stored by an older planner could never be sent again: they are read as text.
            m["tool_calls"] = json.loads(r["tool_calls"], parse_constant=str)
        except (ValueError, RecursionError):
            m["tool_calls"] = []  # unreadable: sanitize drops the group
    if r["tool_name"]:
        m["tool_name"] = r["tool_name"]
    return m


def session_messages(store: Store, session: str) -> list[Message]:
    """Every stored message of a session, oldest first."""
    rows = store.conn().execute(
        "SELECT id, role, content, tool_calls, tool_name FROM messages WHERE session = ? ORDER BY id", (session,)
    )
    return [_from_row(r) for r in rows]


def prefix_share(previous: list[Message], current: list[Message]) -> float:
    """Share of the current request (by characters) in its leading messages that equal the previous request's.

    Whole messages are compared (history dicts are the same objects turn to
    turn, so this is cheap); a partly equal message counts as changed.
    """

    def size(messages: list[Message]) -> int:
        return sum(
            len(m.get("content") or "") + (len(str(m["tool_calls"])) if m.get("tool_calls") else 0) + 16
            for m in messages
        )

    same = 0
    for a, b in zip(previous, current, strict=False):
        if a != b:
            break
        same += 1
    return size(current[:same]) / max(1, size(current))


# ---------------------------------------------------------------- summaries of what left the window


def latest_summary(store: Store, session: str) -> Any:
    """The newest summary row of a session, or None."""
    return (
        store.conn()
        .execute("SELECT * FROM conversation_summaries WHERE session = ? ORDER BY id DESC LIMIT 1", (session,))
        .fetchone()
    )


def messages_before_window(store: Store, session: str, after: int) -> list[Any]:
    """The session's messages after id `after` that have left the window (id, role, content, tool_calls);
    none when the session does not exist."""
    conn = store.conn()
    start = conn.execute("SELECT window_start FROM sessions WHERE name = ?", (session,)).fetchone()
    if start is None:
        return []
    return conn.execute(
        "SELECT id, role, content, tool_calls FROM messages WHERE session = ? AND id > ? AND id < ? ORDER BY id",
        (session, after, start[0]),
    ).fetchall()


def save_summary(store: Store, session: str, summary: str, first: int, last: int, count: int) -> None:
    """Store a new rolling summary of a session's messages first..last (count of them in all)."""
    with store.write() as conn:
        conn.execute(
            "INSERT INTO conversation_summaries (session, summary, first_message_id, last_message_id, message_count) "
            "VALUES (?, ?, ?, ?, ?)",
            (session, summary, first, last, count),
        )
