"""The planner's global options, in one place: the main command shows them in its help, and every subcommand
accepts them before or after its name (`planner --model m add milk`, `planner done 3 --yes`), using those
that mean something to it (--db, --today, --now, --yes) and ignoring the rest, as git does with its own.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from planner.settings import GUARD_PROFILES, Config
from planner.ui.text import safe


class Parser(argparse.ArgumentParser):
    """argparse, with a mistake on the command line said in one line that names the help (not the usage
    block): what is wrong, escaped, and where to read more; exit status 2, as argparse's."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, safe(f"{self.prog}: error: {message} (see `{self.prog} --help`)") + "\n")


def add_global(p: argparse.ArgumentParser, defaults: Config, shown: tuple[str, ...] | None = None) -> None:
    """Add the global options to a parser, their defaults from the settings; with `shown`, only those named
    there appear in its help (a subcommand's), the others are accepted and kept out of sight."""

    def hide(dest: str, text: str) -> str:
        return text if shown is None or dest in shown else argparse.SUPPRESS

    p.add_argument("--model", default=defaults.model, help=hide("model", f"main model (default {defaults.model})"))
    p.add_argument(
        "--critic-model",
        default=defaults.critic_model,
        help=hide(
            "critic_model", f"the smaller model: checks turns, extracts memories (default {defaults.critic_model})"
        ),
    )
    p.add_argument(
        "--embed-model",
        default=defaults.embed_model,
        help=hide("embed_model", f"embedding model (default {defaults.embed_model})"),
    )
    p.add_argument(
        "--db",
        type=Path,
        default=defaults.db_path,
        help=hide("db", f"database file (default {defaults.db_path})" if shown is None else "the database file"),
    )
    p.add_argument("--session", default=None, help=hide("session", "resume or start the named session"))
    p.add_argument(
        "-c",
        "--continue",
        dest="resume_last",
        action="store_true",
        help=hide("resume_last", "resume the most recent session"),
    )
    p.add_argument(
        "--think", action="store_true", default=defaults.think, help=hide("think", "let a thinking model think")
    )
    p.add_argument(
        "--guards",
        choices=GUARD_PROFILES,
        default=defaults.guards,
        help=hide(
            "guards",
            f"guard profile: small-model recoveries (small), only user protection (standard), none (off), "
            f"or by the main model's size (auto, below 4B is small) (default {defaults.guards})",
        ),
    )
    p.add_argument(
        "--no-reflect",
        dest="reflect",
        action="store_false",
        default=defaults.reflect,
        help=hide("reflect", "skip the critic"),
    )
    p.add_argument(
        "--yes",
        action="store_true",
        default=defaults.yes,
        help=hide("yes", "run deletions and large changes without asking"),
    )
    p.add_argument(
        "--web",
        action="store_true",
        default=defaults.web,
        help=hide("web", "allow encyclopedia lookups (asks Wikipedia)"),
    )
    p.add_argument(
        "--no-memory",
        dest="memory",
        action="store_false",
        default=defaults.memory,
        help=hide("memory", "run without long-term memory (no embedding model needed)"),
    )
    p.add_argument(
        "--no-auto-memory",
        dest="auto_memory",
        action="store_false",
        default=defaults.auto_memory,
        help=hide("auto_memory", "do not extract memories from each turn"),
    )
    p.add_argument(
        "--num-ctx",
        type=int,
        default=defaults.num_ctx,
        help=hide("num_ctx", f"main model context (default {defaults.num_ctx})"),
    )
    p.add_argument("--today", default=None, help=hide("today", "pretend today is this date (YYYY-MM-DD)"))
    p.add_argument(
        "--now", default=None, metavar="'DATE TIME'", help=hide("now", "pretend it is this moment ('2026-12-01 14:30')")
    )
    p.add_argument("--plain", action="store_true", help=hide("plain", "plain lines, one per turn, even in a terminal"))
    p.add_argument(
        "-q", "--quiet", action="store_true", help=hide("quiet", "hide the trace of tool calls (every mode)")
    )
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help=hide("verbose", "show tokens and timings of every model call: replies, critic, memory, embeddings"),
    )


def value_options() -> set[str]:
    """The global options that take a value, so a value ("--model add") is never read as a subcommand."""
    p = argparse.ArgumentParser(add_help=False)
    add_global(p, Config())
    return {
        flag for action in p._actions if action.nargs is None and action.const is None for flag in action.option_strings
    }
