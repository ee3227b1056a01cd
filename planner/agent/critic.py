"""Reflection: after a turn that changed data, a smaller model checks the work.

The critic sees the request, the calls with their results and the reply, and
answers {"critique": str, "done": bool} under a JSON schema, the critique
written first so the verdict follows from it. What the agent gets is one typed
value, `Verdict`: done, or redo with the one sentence to fix. A critique beside
"done" is dropped (a 0.5B critic wrote "not fully and correctly carried out",
the prompt's own words, and done=true), and "not done" with nothing to fix is
done: there is nothing to act on. It fails open: a critic that is down, slow
or writes broken JSON accepts the turn, because a missing check is better than
a turn that never ends (small critics truncate their JSON now and then; the log
records each).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import dataclass

from planner.agent.turn import ToolCall
from planner.model.base import ChatModel, ModelError
from planner.prompts import CRITIC_PROMPT, CRITIC_SCHEMA
from planner.settings import Config
from planner.tools import to_json

log = logging.getLogger("planner")


@dataclass(frozen=True)
class Verdict:
    """What the critic decided: done, or not with the one thing to fix; and whether a model answered."""

    done: bool
    critique: str = ""  # what to fix; empty when done
    answered: bool = False  # a model answered (False: no critic, or it failed and the turn was accepted)


class Critic:
    """Asks the critic model whether one attempt did what the user asked."""

    def __init__(self, llm: ChatModel, config: Config):
        self.llm = llm
        self.config = config  # read at each check: /model critic NAME switches it
        # Fixed for the whole session: changing options makes Ollama reload the model.
        self.options = {"num_ctx": config.critic_num_ctx, "num_predict": config.critic_num_predict}

    def check(self, today: dt.date, request: str, calls: list[ToolCall], reply: str) -> Verdict:
        """The critic's verdict on one attempt; done when the critic fails."""
        work = "\n".join(
            f"- {c.name}({json.dumps(c.args, ensure_ascii=False, default=str)}) -> {to_json(c.result or {})}"
            for c in calls
        )
        user = f"Today: {today.isoformat()}\nRequest: {request}\nTool calls:\n{work}\nReply: {reply}"
        answered = False
        try:
            r = self.llm.chat_json(
                self.config.critic_model,
                [{"role": "system", "content": CRITIC_PROMPT}, {"role": "user", "content": user}],
                schema=CRITIC_SCHEMA,
                options=self.options,
                keep_alive=self.config.critic_keep_alive,
                purpose="critic",
            )
            answered = True
            verdict = json.loads(r.content)
            done, critique = verdict["done"], verdict["critique"]
            if not isinstance(done, bool) or not isinstance(critique, str):
                raise TypeError("done must be a boolean and critique a string")
        except (ModelError, ValueError, KeyError, TypeError) as e:
            log.warning("critic failed, accepting the turn: %s", e)
            return Verdict(True, "", answered)
        log.info("critic done=%s critique=%s", done, critique)
        if done or not critique.strip():  # one value: a note beside done, or "not done" with nothing to fix, is done
            return Verdict(True, "", answered)
        return Verdict(False, critique.strip(), answered)
