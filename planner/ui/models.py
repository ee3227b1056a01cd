"""The models a conversation needs: checked at start, offered for pulling in a terminal, missing ones
all named at once with the command that gets them."""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING

from planner.settings import Config

if TYPE_CHECKING:
    from planner.model.client import Ollama


def missing_models(names: list[str], config: Config) -> str:
    """One message for every missing model: the pull line for each, and the flag that runs without it."""
    roles = {config.model: "main", config.critic_model: "critic", config.embed_model: "embedding"}
    without = []
    if config.critic_model in names and config.critic_model != config.model:
        without.append("--no-reflect --no-auto-memory run without the critic")
    if config.embed_model in names:
        without.append("--no-memory runs without long-term memory and the embedding model")
    lines = [f"{len(names)} model{'s are' if len(names) > 1 else ' is'} not pulled:"]
    width = max(len(n) for n in names)
    lines += [f"  ollama pull {n:<{width}}  # {roles.get(n, 'model')}" for n in names]
    return "\n".join(lines + [f"  ({w})" for w in without])


def ensure_models(llm: Ollama, config: Config, interactive: bool) -> tuple[str | None, bool]:
    """Check the server and models; offer pulls. Returns (an error line or None, whether memory can run).

    The embedding model is needed only for long-term memory: without it the planner starts with
    memory off (the caller says so) rather than not at all.
    """
    from planner.model.client import ModelError

    try:
        have = llm.models()
    except ModelError as e:
        return str(e), False
    # The critic also writes memories and summaries in the background.
    wanted = [config.model] + ([config.critic_model] if config.reflect or config.auto_memory else [])
    embed = [config.embed_model] if config.memory else []
    pulled = lambda n: n in have or f"{n}:latest" in have  # noqa: E731
    missing = [n for n in dict.fromkeys(wanted) if not pulled(n)]
    memory_ok = all(pulled(n) for n in embed)
    if missing and not interactive:
        return missing_models(missing, config), memory_ok
    offered = [*missing, *(n for n in embed if interactive and not pulled(n) and n not in missing)]
    for name in offered:
        answer = input(f"Model {name!r} is not pulled. Pull it now? [Y/n] ").strip().lower()
        if answer not in ("", "y", "yes"):
            if name in embed and name not in missing:
                continue  # memory off, said by the caller
            return missing_models([name], config), memory_ok
        try:
            show_pull(llm, name)
        except ModelError as e:
            return f"could not pull {name!r}: {e}", memory_ok
        memory_ok = memory_ok or name in embed
    try:
        caps = llm.capabilities(config.model)
    except ModelError as e:
        return str(e), memory_ok
    if caps and "tools" not in caps:
        return (
            f"model {config.model!r} cannot call tools; choose one that can (e.g. qwen3.5 or llama3.1) with --model"
        ), memory_ok
    return None, memory_ok


def show_pull(llm: Ollama, name: str) -> None:
    """Pull a model, showing progress on stderr (a progress bar in a real terminal)."""
    from planner.model.client import ModelError
    from planner.ui.repl import rich_terminal

    if rich_terminal(os.environ, sys.stderr):
        from rich.console import Console

        from planner.ui.tui import pull_with_progress

        pull_with_progress(llm, name, Console(stderr=True))  # ModelError when it fails
        print(f"pulled {name}", file=sys.stderr)
        return
    last = 0.0
    pulling = llm.pull(name)
    try:
        for status, done, total in pulling:
            now = time.monotonic()
            if total and now - last > 0.2:
                last = now
                print(f"\r{status}: {done / total:6.1%} of {total / 1e9:.2f} GB", end="", file=sys.stderr, flush=True)
    except ModelError:
        print(file=sys.stderr)  # the error starts a line of its own, not after the progress
        raise
    finally:
        pulling.close()
    print(f"\rpulled {name}{' ' * 30}", file=sys.stderr, flush=True)
