"""The edge between the planner and the Ollama server.

Every call to Ollama goes through `Ollama`, which translates transport and
protocol failures into one exception, `ModelError`, whose message is a single
line for the user. Nothing above this module catches httpx, pydantic or ollama
exceptions. Messages are constants so tests can match them.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import ollama
import pydantic

log = logging.getLogger("planner")

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

REPLY_SECONDS = 900.0  # one model call, start to end: a stream that never ends (or trickles) is stopped
REPLY_CHARS = 200_000  # of text in one reply (num_predict should stop it far sooner)
MAX_DEPTH = 16  # nesting kept in tool arguments; deeper parts become text


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


class ModelError(Exception):
    """A failed call to Ollama; str() is one line for the user."""

    def __init__(self, message: str, kind: str = "error", status: int | None = None):
        super().__init__(message)
        self.kind = kind  # unreachable | not_found | cut | broken | timeout | unreadable | http | tool_parse
        #                   | cannot (the model lacks a capability the call needs)
        self.status = status


@dataclass
class ChatResult:
    """One finished model call: the assistant message and Ollama's counters."""

    content: str = ""
    thinking: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # [{"function": {"name", "arguments"}}]
    done_reason: str | None = None
    prompt_eval_count: int = 0
    eval_count: int = 0
    load_seconds: float = 0.0
    seconds: float = 0.0


def _first_line(text: str) -> str:
    """The first line of what a server said, at most 200 characters."""
    return text.strip().splitlines()[0][:200] if text.strip() else "no details"


def _tool_call_dict(call: Any) -> dict[str, Any]:
    fn = call.function
    return {"function": {"name": fn.name, "arguments": dict(fn.arguments or {})}}


class Ollama:
    """An `ollama.Client` whose failures all arrive as `ModelError`."""

    def __init__(self, host: str, timeout: float = 300.0, reply_seconds: float = REPLY_SECONDS):
        self.host = host
        self.timeout = timeout
        self.reply_seconds = reply_seconds  # a whole call; `timeout` is per read
        # connect fails fast; read waits long enough for a large model to load.
        # Plain http needs no certificates; loading them costs ~30 ms at start-up.
        tls = {} if host.lower().startswith("https") else {"verify": False}
        self.client = ollama.Client(host=host, timeout=httpx.Timeout(timeout, connect=5.0), **tls)
        # Called after each successful call, from the thread that made it (the UI's --verbose):
        # {"model", "purpose", "seconds", and "prompt_tokens" + "eval_tokens", or "texts" for embeddings}
        self.observer: Callable[[dict[str, Any]], None] | None = None
        # What show() said of each model: asked once per model for the life of this client (start-up checks the
        # main model's capabilities, the guards its size); forgotten when the model is pulled again.
        self._shown: dict[str, Any] = {}

    def _report(self, model: str, purpose: str, seconds: float, **figures: int) -> None:
        if self.observer:
            self.observer({"model": model, "purpose": purpose, "seconds": seconds, **figures})

    def _translate(self, e: BaseException, model: str = "") -> ModelError:
        if isinstance(e, ModelError):
            return e
        if isinstance(e, ConnectionError) or isinstance(e, httpx.ConnectError):
            return ModelError(UNREACHABLE.format(host=self.host), "unreachable")
        if isinstance(e, httpx.TimeoutException):
            return ModelError(TIMEOUT.format(seconds=self.timeout), "timeout")
        if isinstance(e, (httpx.RemoteProtocolError, httpx.ReadError, httpx.NetworkError)):
            return ModelError(BROKEN, "broken")
        if isinstance(e, ollama.ResponseError):
            text = str(e.error)
            for missing, message in (("tools", NO_TOOLS), ("thinking", NO_THINKING), ("chat", NO_CHAT)):
                if text.endswith(f"does not support {missing}"):
                    return ModelError(message.format(model=model), "cannot", e.status_code)
            if e.status_code == 404 or "not found" in text and "model" in text:
                return ModelError(NOT_FOUND.format(model=model), "not_found", e.status_code)
            if "error parsing tool call" in text:
                return ModelError(TOOL_PARSE, "tool_parse", e.status_code)
            if e.status_code == 503:
                return ModelError(BUSY, "http", 503)
            if e.status_code == -1:  # an error object inside a 200 stream: there is no HTTP status to show
                return ModelError(IN_REPLY.format(error=_first_line(text)), "http")
            return ModelError(HTTP_ERROR.format(error=_first_line(text), status=e.status_code), "http", e.status_code)
        if isinstance(e, (json.JSONDecodeError, pydantic.ValidationError, httpx.DecodingError)):
            return ModelError(UNREADABLE, "unreadable")
        if isinstance(e, httpx.HTTPError):
            return ModelError(BROKEN, "broken")
        raise e  # a bug, not a transport fault: let it surface

    def chat_stream(
        self,
        model: str,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        options: dict[str, Any] | None = None,
        think: bool | None = None,
        keep_alive: str | None = None,
        on_token: Any = None,
        on_thinking: Any = None,
    ) -> ChatResult:
        """Stream one chat call; on_token(text) and on_thinking(text) see the pieces as they arrive."""
        t0 = time.perf_counter()
        result = ChatResult()
        parts: list[str] = []
        thinking: list[str] = []
        done = False
        stream = None
        try:
            stream = self.client.chat(
                model=model,
                messages=messages,
                tools=tools,
                options=options,
                think=think,
                keep_alive=keep_alive,
                stream=True,
            )
            size, deadline = 0, t0 + self.reply_seconds
            for chunk in stream:
                if time.perf_counter() > deadline:
                    raise ModelError(TOO_LONG.format(what=f"over {self.reply_seconds:.0f} s"), "cut")
                msg = chunk.message
                size += len(msg.content or "") + len(msg.thinking or "")
                if size > REPLY_CHARS:
                    raise ModelError(TOO_LONG.format(what=f"over {REPLY_CHARS:,} characters"), "cut")
                if msg.thinking:
                    thinking.append(msg.thinking)
                    if on_thinking:
                        on_thinking(clean(msg.thinking))
                if msg.content:
                    parts.append(msg.content)
                    if on_token:
                        on_token(clean(msg.content))
                for call in msg.tool_calls or []:
                    result.tool_calls.append(_tool_call_dict(call))
                if chunk.done:
                    done = True
                    result.done_reason = chunk.done_reason
                    result.prompt_eval_count = chunk.prompt_eval_count or 0
                    result.eval_count = chunk.eval_count or 0
                    result.load_seconds = (chunk.load_duration or 0) / 1e9
        except Exception as e:
            raise self._translate(e, model) from None
        finally:
            if stream is not None and hasattr(stream, "close"):
                stream.close()  # on Ctrl-C this closes the HTTP response
        if not done:
            raise ModelError(CUT_SHORT, "cut")
        result.content = clean("".join(parts))
        result.thinking = clean("".join(thinking))
        result.tool_calls = [clean(c) for c in result.tool_calls]
        result.seconds = time.perf_counter() - t0
        self._report(
            model, "reply", result.seconds, prompt_tokens=result.prompt_eval_count, eval_tokens=result.eval_count
        )
        return result

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
        """One non-streamed call constrained to a JSON schema, thinking off; `purpose` names it for the observer."""
        t0 = time.perf_counter()
        try:
            r = self.client.chat(
                model=model,
                messages=messages,
                format=schema,
                options=options,
                think=False,
                keep_alive=keep_alive,
                stream=False,
            )
        except Exception as e:
            raise self._translate(e, model) from None
        result = ChatResult(
            content=r.message.content or "",
            done_reason=r.done_reason,
            prompt_eval_count=r.prompt_eval_count or 0,
            eval_count=r.eval_count or 0,
            seconds=time.perf_counter() - t0,
        )
        self._report(
            model, purpose, result.seconds, prompt_tokens=result.prompt_eval_count, eval_tokens=result.eval_count
        )
        return result

    def embed(self, model: str, texts: list[str]) -> list[list[float]]:
        """Embed a batch of texts in one request."""
        t0 = time.perf_counter()
        try:
            r = self.client.embed(model=model, input=texts)
        except Exception as e:
            raise self._translate(e, model) from None
        vectors = [list(v) for v in r.embeddings]
        if len(vectors) != len(texts):
            raise ModelError(UNREADABLE, "unreadable")
        self._report(model, "embedding", time.perf_counter() - t0, texts=len(texts))
        return vectors

    def version(self) -> str:
        """The Ollama server's version ('0.12.3')."""
        try:
            r = self.client._client.get("/api/version")  # the client has no wrapper for it
            r.raise_for_status()
            return str(r.json().get("version") or "unknown")
        except Exception as e:
            raise self._translate(e) from None

    def models(self) -> set[str]:
        """Names of the models the server has (both `name` and `name:latest`)."""
        try:
            r = self.client.list()
        except Exception as e:
            raise self._translate(e) from None
        names: set[str] = set()
        for m in r.models:
            if m.model:
                names.add(m.model)
                if m.model.endswith(":latest"):
                    names.add(m.model[: -len(":latest")])
        return names

    def _show(self, model: str) -> Any:
        """`show()` for a model, asked of the server once; a failure is not kept, so the next call asks again."""
        if model not in self._shown:
            try:
                self._shown[model] = self.client.show(model)
            except Exception as e:
                raise self._translate(e, model) from None
        return self._shown[model]

    def capabilities(self, model: str) -> list[str]:
        """What `show()` says the model can do (e.g. 'tools'); [] if not said."""
        return list(getattr(self._show(model), "capabilities", None) or [])

    def facts(self, model: str) -> tuple[str | None, list[str]]:
        """What `show()` says of a model: its size ('9.0B', '494.03M'; None if not said) and capabilities."""
        r = self._show(model)
        details = getattr(r, "details", None)
        return getattr(details, "parameter_size", None) or None, list(getattr(r, "capabilities", None) or [])

    def loaded(self) -> set[str]:
        """Models resident in memory now (`ps()`), with and without ':latest'."""
        try:
            names = {m.model or m.name or "" for m in self.client.ps().models}
        except Exception as e:
            raise self._translate(e) from None
        return names | {n[: -len(":latest")] for n in names if n.endswith(":latest")}

    def pull(self, model: str) -> Iterator[tuple[str, int, int]]:
        """Pull a model, yielding (status, completed bytes, total bytes)."""
        self._shown.pop(model, None)  # a new version may say other things
        try:
            for p in self.client.pull(model, stream=True):
                yield p.status or "", p.completed or 0, p.total or 0
        except ollama.ResponseError as e:
            # Ollama answers 200 before it asks the library, so what went wrong comes inside the stream.
            if "file does not exist" in str(e.error):
                raise ModelError(NO_SUCH_MODEL.format(model=model), "not_found") from None
            if e.status_code == -1:
                raise ModelError(PULL_FAILED.format(model=model, error=_first_line(str(e.error))), "http") from None
            raise self._translate(e, model) from None
        except Exception as e:
            raise self._translate(e, model) from None
