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


def ask_yes_no(question: str) -> bool:
    """The user's y/N at the terminal (stdin); no answer is no."""
    try:
        return input(f"{safe(question)} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


class Counter:
    """Progress on stderr for work that takes more than a second: "syncing 120/500", on one line."""

    def __init__(self, what: str, quiet: bool = False, after: float = 1.0):
        import time

        self.what, self.clock = what, time.monotonic
        self.start, self.after = self.clock(), after
        self.quiet = quiet or not sys.stderr.isatty()
        self.shown = False

    def show(self, done: int, total: int) -> None:
        """Called as work goes on; prints once a second has passed."""
        if self.quiet or self.clock() - self.start < self.after:
            return
        print(f"\r{self.what} {done}/{total}", end="", file=sys.stderr, flush=True)
        self.shown = True

    def done(self) -> None:
        """End the progress line."""
        if self.shown:
            print("\r\x1b[K", end="", file=sys.stderr, flush=True)
            self.shown = False
