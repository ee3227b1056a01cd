"""Short-term memory: the session history the model sees, trimmed to fit.

The code is `planner/memory/history.py`. Every message of a session is kept in
SQLite; the model gets a window of the most recent ones that fits the
context budget and is always valid for a tool-calling API (no tool result
without its call). The window moves in chunks so the prompt prefix stays the
same for many turns and Ollama can reuse it. Older messages are folded into a
rolling summary in the background (planner/memory/keeper.py).

Long-term memory (facts the user asked the planner to keep) is
`planner/memory/longterm.py`; see `embeddings.py`.
"""

from __future__ import annotations

from planner.memory.history import Budget, History, Message, latest_session, new_session_name, sanitize

__all__ = ["Budget", "History", "Message", "latest_session", "new_session_name", "sanitize"]
