"""The edge between the planner and the Ollama server: `Ollama`, the real `ChatModel` (base.py).

Every call to Ollama goes through `Ollama`, which translates transport and
protocol failures into one exception, `ModelError`, whose message is a single
line for the user. Nothing above this module catches httpx, pydantic or ollama
exceptions. Messages are constants so tests can match them.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import httpx
import ollama
import pydantic

from planner.model.base import (
    BROKEN,
    CUT_SHORT,
    NO_SUCH_MODEL,
    PULL_FAILED,
    TIMEOUT,
    TOO_LONG,
    UNREACHABLE,
    UNREADABLE,
    ChatResult,
    ModelError,
    ModelFault,
    Observer,
    clean,
    first_line,
    server_error,
)

__all__ = ["ChatResult", "ModelError", "Ollama", "clean"]  # the first two live in base.py, for every ChatModel

log = logging.getLogger("planner")

REPLY_SECONDS = 900.0  # one model call, start to end: a stream that never ends (or trickles) is stopped
REPLY_CHARS = 200_000  # of text in one reply (num_predict should stop it far sooner)


def _tool_call_dict(call: Any) -> dict[str, Any]:
    fn = call.function
    return {"function": {"name": fn.name, "arguments": dict(fn.arguments or {})}}


class Ollama:
    """The `ChatModel` (base.py) of an Ollama server: an `ollama.Client` whose failures all arrive as `ModelError`."""

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
        self.observer: Observer | None = None
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
            return ModelError(UNREACHABLE.format(host=self.host), ModelFault.UNREACHABLE)
        if isinstance(e, httpx.TimeoutException):
            return ModelError(TIMEOUT.format(seconds=self.timeout), ModelFault.TIMEOUT)
        if isinstance(e, (httpx.RemoteProtocolError, httpx.ReadError, httpx.NetworkError)):
            return ModelError(BROKEN, ModelFault.BROKEN)
        if isinstance(e, ollama.ResponseError):
            return server_error(e.status_code, str(e.error), model)
        if isinstance(e, (json.JSONDecodeError, pydantic.ValidationError, httpx.DecodingError)):
            return ModelError(UNREADABLE, ModelFault.UNREADABLE)
        if isinstance(e, httpx.HTTPError):
            return ModelError(BROKEN, ModelFault.BROKEN)
        raise e  # a bug, not a transport fault: let it surface

    def close(self) -> None:
        """Close the connections kept open to the server (at exit; the client is not used after)."""
        self.client.close()

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
                    raise ModelError(TOO_LONG.format(what=f"over {self.reply_seconds:.0f} s"), ModelFault.CUT)
                msg = chunk.message
                size += len(msg.content or "") + len(msg.thinking or "")
                if size > REPLY_CHARS:
                    raise ModelError(TOO_LONG.format(what=f"over {REPLY_CHARS:,} characters"), ModelFault.CUT)
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
            raise ModelError(CUT_SHORT, ModelFault.CUT)
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
            raise ModelError(UNREADABLE, ModelFault.UNREADABLE)
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

    def context_length(self, model: str) -> int | None:
        """The context the model was built for, as `show()` reports it (model_info's *.context_length)."""
        info = getattr(self._show(model), "modelinfo", None) or {}
        found = [v for k, v in dict(info).items() if k.endswith(".context_length") and isinstance(v, int)]
        return found[0] if found else None

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
                raise ModelError(NO_SUCH_MODEL.format(model=model), ModelFault.NOT_FOUND) from None
            if e.status_code == -1:
                raise ModelError(
                    PULL_FAILED.format(model=model, error=first_line(str(e.error))), ModelFault.HTTP
                ) from None
            raise self._translate(e, model) from None
        except Exception as e:
            raise self._translate(e, model) from None
