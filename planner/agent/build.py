"""Wiring an agent from its parts, as `python agent.py`, the evals and the benchmarks do.

Building connects to nothing: the first model call happens in the first turn. The model is any
`ChatModel` (planner/model/base.py): the Ollama client in use, the scripted model in tests; the
same one chats, checks, extracts memories and embeds.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from planner.agent.loop import Agent, history_budget
from planner.memory.history import History
from planner.memory.keeper import MemoryKeeper
from planner.memory.longterm import LongTermMemory
from planner.memory.vectors import Embedder
from planner.model.base import ChatModel
from planner.settings import Config
from planner.storage.db import Store
from planner.tools import ToolContext
from planner.tools.plan_tools import hours_of, plan_from
from planner.tools.wikipedia import Web


def build_agent(
    config: Config,
    store: Store,
    llm: ChatModel,
    session: str,
    confirm: Callable[[str], bool] | None,
    on_progress: Callable[[int, int], None] | None = None,
) -> Agent:
    """Wire an agent from its parts, as `python agent.py` and the evals do."""
    today: Callable[[], dt.date] = (lambda: config.today) if config.today else dt.date.today
    memory = (
        LongTermMemory(store, Embedder(llm.embed, config.embed_model), on_progress=on_progress, today=today)
        if config.memory
        else None
    )
    web = Web(config.web_url, config.web_timeout) if config.web else None
    ctx = ToolContext(
        store=store,
        memory=memory,
        today=today,
        confirm=confirm,
        web=web,
        yes=config.yes,
        hours=hours_of(config),
        plan_from=plan_from(config),
        learn_estimates=config.learn_estimates,
    )
    keeper = MemoryKeeper(store, llm, config, memory) if config.auto_memory and memory is not None else None
    return Agent(llm, config, History(store, session, history_budget(config, ctx)), ctx, keeper)
