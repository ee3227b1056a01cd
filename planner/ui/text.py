"""Text for the terminal: stored data made harmless to print, and the one-line error.

Kept apart from the interfaces so the subcommands (export, remind --check from
cron, ...) print safely without loading the agent.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading


def safe(text: str) -> str:
    """Text with control characters made visible, so stored data cannot drive the terminal."""
    return "".join(ch if ch.isprintable() or ch in "\n\t" else f"\\x{ord(ch):02x}" for ch in text)


def inline(text: str) -> str:
    """safe() for one table cell: line breaks shown as \\n too, so a title never breaks its row."""
    return safe(text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", " "))


def plural(n: int, word: str, many: str | None = None) -> str:
    """ "1 task", "2 tasks", "0 tasks"; `many` for a word that does not just take an s ("memories")."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def err(message: str) -> None:
    """One line for the user on stderr, control characters made visible (Ollama's and SQLite's text too)."""
    print(f"error: {safe(message)}", file=sys.stderr, flush=True)


def prompted_line(prompt: str) -> str:
    """`input(prompt)` without its Ctrl-C race: raises KeyboardInterrupt or EOFError as input() does.

    input() writes the prompt and then blocks in read(); a Ctrl-C that lands between the two is
    handled at once (a flag is set) but wakes nothing, so the read waits on and the key seems to do
    nothing. Here the signal also writes to a pipe (signal.set_wakeup_fd) that the wait watches with
    the terminal, so a Ctrl-C is seen whenever it comes. The terminal stays in cooked mode: the line
    is edited by the terminal as before. Where this cannot work or is not needed (not a terminal, not
    the main thread, Windows) it is plain input().
    """
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):
        return input(prompt)
    if os.name == "nt" or not os.isatty(fd) or threading.current_thread() is not threading.main_thread():
        return input(prompt)  # a pipe may hold many lines, which sys.stdin's own buffer must keep
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    old = signal.set_wakeup_fd(wake_w)
    try:
        sys.stdout.write(prompt)
        sys.stdout.flush()
        got = b""
        while True:
            ready, _, _ = select.select([fd, wake_r], [], [])
            if wake_r in ready:
                os.read(wake_r, 512)  # the signal's handler runs now and raises KeyboardInterrupt for Ctrl-C
            if fd in ready:
                chunk = os.read(fd, 4096)
                if not chunk and not got:
                    raise EOFError
                got += chunk
                if not chunk or got.endswith(b"\n"):
                    return got.decode("utf-8", "replace").rstrip("\n")
    finally:
        signal.set_wakeup_fd(old)
        os.close(wake_r)
        os.close(wake_w)


def ask_yes_no(question: str) -> bool:
    """The user's y/N at the terminal (stdin); no answer is no."""
    try:
        return prompted_line(f"{safe(question)} [y/N] ").strip().lower() in ("y", "yes")
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
