"""The one seam between the planner and any model: `ChatModel`.

Everything above this layer (the agent loop, the critic, the memory keeper,
the embedder) talks to a model only through these four methods. Two classes
implement it: `client.Ollama`, the real server over HTTP, and
`scripted.ScriptedModel`, a deterministic model in this process for tests and
scripted eval runs. A `ChatResult` is the one shape a finished call takes;
every failure is a `ModelError` whose message is one line for the user.

Left out on purpose: listing, pulling and loading models (`models()`,
`pull()`, `loaded()`, `version()`) are about one server and its files, so the
terminal and `doctor` ask `Ollama` for them directly.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

MAX_DEPTH = 16  # nesting kept in tool arguments; deeper parts become text

# What a user reads when a model call fails: one line, what happened and what to do. Constants, so tests
# match them; the scripted model raises the same lines for the same faults.
UNREACHABLE = "Cannot reach Ollama at {host}. Start it with `ollama serve` (or set OLLAMA_HOST to where it runs)."
NOT_FOUND = "Model {model!r} is not available on the Ollama server. Pull it with `ollama pull {model}`."
CUT_SHORT = "Ollama's reply stopped before it was complete (the server may have restarted). Try again."
BROKEN = "The connection to Ollama broke during the reply (the server may have restarted). Try again."
TIMEOUT = "Ollama did not answer within {seconds:.0f} s. Check that the server is not stuck, then try again."
UNREADABLE = "Ollama sent a reply that could not be read. Try again; if it keeps happening, update Ollama."
HTTP_ERROR = "Ollama answered with an error: {error} (HTTP {status}). Try again."
IN_REPLY = "Ollama stopped with an error: {error}. Try again; if it keeps happening, see Ollama's log."
NO_TOOLS = "Model {model!r} cannot call tools, which the planner needs. Choose one that can with --model."
NO_THINKING = "Model {model!r} cannot think. Run without --think, or choose a thinking model with --model."
NO_CHAT = "Model {model!r} cannot chat (it may be an embedding model). Choose another with --model."
NO_SUCH_MODEL = (
    "There is no model {model!r} in the Ollama library. Check the name and tag at https://ollama.com/library."
)
PULL_FAILED = "Pulling {model!r} failed: {error}. Check that the Ollama server can reach the internet, then try again."
BUSY = "Ollama is busy (its queue is full). Wait a moment and try again."
TOOL_PARSE = "The model wrote a tool call Ollama could not parse. Try rephrasing the request."
TOO_LONG = "The model's reply went on too long ({what}) and was stopped. Try again, or ask for something shorter."


class ModelFault(enum.StrEnum):
    """Which way a model call failed: what a caller decides on (retry, offer a pull, give up), never the message.

    A StrEnum, so a value reads as its name in logs and JSON (a trajectory) and compares equal to it.
    """

    UNREACHABLE = "unreachable"  # nothing listens at the host
    NOT_FOUND = "not_found"  # the model is not on the server (or, for a pull, not in the library)
    CUT = "cut"  # the reply stopped early: the stream ended, or it ran too long and was stopped
    BROKEN = "broken"  # the connection broke during the reply
    TIMEOUT = "timeout"  # no answer within the timeout
    UNREADABLE = "unreadable"  # a reply that is not the protocol's JSON
    HTTP = "http"  # the server answered with an error (its status, when there is one, in `status`)
    TOOL_PARSE = "tool_parse"  # the server could not parse the tool call the model wrote: worth one retry
    CANNOT = "cannot"  # the model lacks a capability the call needs (tools, thinking, chat)
    OTHER = "other"  # none of these


class ModelError(Exception):
    """A failed call to a model; str() is one line for the user, `kind` which way it failed."""

    def __init__(self, message: str, kind: ModelFault = ModelFault.OTHER, status: int | None = None):
        super().__init__(message)
        self.kind = ModelFault(kind)  # a stray string raises here, not in a comparison that is never true
        self.status = status


def server_error(status: int, text: str, model: str) -> ModelError:
    """The line for an error the server answered with (HTTP status, or -1 for one inside a 200 stream)."""
    for missing, message in (("tools", NO_TOOLS), ("thinking", NO_THINKING), ("chat", NO_CHAT)):
        if text.endswith(f"does not support {missing}"):
            return ModelError(message.format(model=model), ModelFault.CANNOT, status)
    if status == 404 or "not found" in text and "model" in text:
        return ModelError(NOT_FOUND.format(model=model), ModelFault.NOT_FOUND, status)
    if "error parsing tool call" in text:
        return ModelError(TOOL_PARSE, ModelFault.TOOL_PARSE, status)
    if status == 503:
        return ModelError(BUSY, ModelFault.HTTP, 503)
    if status == -1:  # an error object inside a 200 stream: there is no HTTP status to show
        return ModelError(IN_REPLY.format(error=first_line(text)), ModelFault.HTTP)
    return ModelError(HTTP_ERROR.format(error=first_line(text), status=status), ModelFault.HTTP, status)


def first_line(text: str) -> str:
    """The first line of what a server said, at most 200 characters."""
    return text.strip().splitlines()[0][:200] if text.strip() else "no details"


@dataclass
class ChatResult:
    """One finished model call: the assistant message and the server's counters."""

    content: str = ""
    thinking: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # [{"function": {"name", "arguments"}}]
    done_reason: str | None = None
    prompt_eval_count: int = 0
    eval_count: int = 0
    load_seconds: float = 0.0
    seconds: float = 0.0


def clean(value: Any, depth: int = 0) -> Any:
    """What the model sent, made safe to store and send back: lone surrogates become U+FFFD,
    NaN and infinities their text, and nesting past MAX_DEPTH the text '(nested too deeply)'.

    A value that cannot be encoded as UTF-8 or as strict JSON would break every later request
    of the session; the tool that reads it reports a type error the model can act on.
    """
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict | list):
        if depth >= MAX_DEPTH:
            return "(nested too deeply)"
        if isinstance(value, dict):
            return {clean(k, depth + 1): clean(v, depth + 1) for k, v in value.items()}
        return [clean(v, depth + 1) for v in value]
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


Observer = Callable[[dict[str, Any]], None]  # {"model", "purpose", "seconds", tokens or "texts"}


@runtime_checkable
class ChatModel(Protocol):
    """What the planner needs of a model server: chat (streamed), JSON chat, embeddings, and the facts."""

    observer: Observer | None  # hears every finished call, from the thread that made it (--verbose)

    def chat_stream(
        self,
        model: str,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        options: dict[str, Any] | None = None,
        think: bool | None = None,
        keep_alive: str | None = None,
        on_token: Callable[[str], None] | None = None,
        on_thinking: Callable[[str], None] | None = None,
    ) -> ChatResult:
        """One chat call, its text streamed to on_token (and thinking to on_thinking) as it arrives."""
        ...

    def chat_json(
        self,
        model: str,
        messages: list[dict[str, Any]],
        *,
        schema: dict[str, Any],
        options: dict[str, Any] | None = None,
        keep_alive: str | None = None,
        purpose: str = "json",
    ) -> ChatResult:
        """One call whose content is JSON following `schema`, thinking off; `purpose` names it for the observer."""
        ...

    def embed(self, model: str, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...

    def facts(self, model: str) -> tuple[str | None, list[str]]:
        """The model's size ('9.0B'; None if not said) and capabilities ('tools', 'thinking', ...)."""
        ...

    def context_length(self, model: str) -> int | None:
        """The context the model holds, as its server reports it; None if not said."""
        ...
