"""Text for the terminal: stored data made harmless to print, and the one-line error.

Kept apart from the interfaces so the subcommands (export, remind --check from
cron, ...) print safely without loading the agent.
"""

from __future__ import annotations

import sys


def safe(text: str) -> str:
    """Text with control characters made visible, so stored data cannot drive the terminal."""
    return "".join(ch if ch.isprintable() or ch in "\n\t" else f"\\x{ord(ch):02x}" for ch in text)


def inline(text: str) -> str:
    """safe() for one table cell: line breaks shown as \\n too, so a title never breaks its row."""
    return safe(text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", " "))


def err(message: str) -> None:
    """One line for the user on stderr, control characters made visible (Ollama's and SQLite's text too)."""
    print(f"error: {safe(message)}", file=sys.stderr, flush=True)
