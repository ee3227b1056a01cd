"""Keeping a turn inside the model's context: calls per reply capped, results trimmed, the window watched.

    the window     min(num_ctx the planner asks for, the context length the server reports for the model)
    each call      the prompt so far is known exactly after a call (prompt_eval_count); what was added since
                   is estimated (about 4 characters a token, counted high), plus the reply's room (num_predict)
    too full       the turn ends with a sentence built from its results, before the prompt would overflow

A model of 1.5B parameters answered "hello!" with 19 calls in one reply and grew one turn past its
8,192-token context; the user got "the connection to Ollama broke". Here a reply runs at most
MAX_CALLS calls (the rest are answered with an error saying so), a result the model reads is cut to
MAX_RESULT characters (lists first, saying how many were left out), and the loop asks `Window.fits`
before each model call.

Trade-off: the estimate is rough (JSON and non-English text take more tokens a character); it is
anchored on the server's own count after every call, and counts 3 characters a token for what was added
since, so it errs towards stopping a step early rather than overflowing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_CALLS = 8  # tool calls run from one model reply
MAX_RESULT = 4000  # characters of one tool result the model reads
_CHARS_PER_TOKEN = 3  # for what the server has not counted yet: high, so the check errs early


def tokens(value: Any) -> int:
    """A high estimate of the tokens a message, tool list or text takes."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return len(text) // _CHARS_PER_TOKEN + 4


@dataclass
class Window:
    """The context one turn works in, and what its prompt took at the last call."""

    size: int  # tokens the model can hold (prompt and reply)
    reply_room: int  # tokens kept for the reply (num_predict)
    counted: int = 0  # prompt tokens of the last call, as the server counted them
    counted_messages: int = 0  # how many messages that prompt held
    counted_tools: int = 0  # the estimate of its tool list

    def fits(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> bool:
        """Whether a call with these messages and tools leaves room for the reply. The turn's first call
        always goes: the history budget sized it to fit, and there is no count yet to go on."""
        return not self.counted or self.estimate(messages, tools) + self.reply_room <= self.size

    def estimate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
        """The prompt tokens of a call: the last count, plus what was added since (or all, before the first)."""
        if not self.counted or len(messages) < self.counted_messages:
            return sum(tokens(m) for m in messages) + tokens(tools)
        added = sum(tokens(m) for m in messages[self.counted_messages :])
        return self.counted + added + max(0, tokens(tools) - self.counted_tools)

    def saw(self, prompt_tokens: int, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> None:
        """Take the server's count for a call just made."""
        if prompt_tokens:
            self.counted, self.counted_messages, self.counted_tools = prompt_tokens, len(messages), tokens(tools)


def trimmed(result: dict[str, Any], limit: int = MAX_RESULT) -> dict[str, Any]:
    """A tool result cut to about `limit` characters of JSON for the model: the longest lists lose their
    last items first, and a note says how many; a long text is cut with an ellipsis. Small results pass as
    they are."""
    if len(json.dumps(result, ensure_ascii=False, default=str)) <= limit:
        return result
    out = dict(result)
    cut: dict[str, int] = {}
    while len(json.dumps(out, ensure_ascii=False, default=str)) > limit:
        lists = [(len(json.dumps(v, default=str)), k) for k, v in out.items() if isinstance(v, list) and v]
        if lists:
            _, k = max(lists)
            out[k] = out[k][:-1]
            cut[k] = cut.get(k, 0) + 1
            continue
        texts = [(len(v), k) for k, v in out.items() if isinstance(v, str) and len(v) > 200]
        if not texts:
            break
        _, k = max(texts)
        out[k] = out[k][: max(200, len(out[k]) // 2)] + "…"
    if cut:
        out["left_out"] = "; ".join(f"{n} more {k} not shown" for k, n in cut.items())
    return out
