"""`ScriptedModel`: a deterministic `ChatModel` (base.py) in this process, for tests and scripted eval runs.

Replies are queued per model and answered in order, each a dict:

    model.script("main", {"tool_calls": [{"name": "add_task", "arguments": {"title": "milk"}}]},
                         {"content": "Added."})

A reply may carry "thinking", "done_reason", "prompt_eval_count", "eval_count", or be a fault
that raises the `ModelError` the real client raises for it: {"status": 500, "error": "..."},
{"cut": True} (the stream ended early), {"drop": True} (the connection broke), {"garbage": True}
(a line that is not JSON), {"stream_error": "..."}. `respond_with(model, fn)` answers once the
queue is empty; the critic model, unscripted, answers the smallest reply its request's schema
allows (for the critic's own schema: done). Every request is kept in `requests` with the fields
the ollama client puts in /api/chat's body (`chats()` filters them), so a test reads what the
planner sent exactly as it reads the fake server's.

Where a test could mistake it for Ollama, it answers as tests/fake_ollama.py does: `models` holds
each model's capabilities, and a chat with tools to a model without "tools", with think to one
without "thinking", or to one without "completion" fails in Ollama's words; `sizes` is what
/api/show says of each; a JSON reply that breaks its request's schema (unless cut short by
done_reason "length") is a mistake in the test: it is kept in `violations` and fails the call.

Embeddings are bags of hashed words (`embedding`), so texts that share words are close and texts
that share none are orthogonal; the "search_query: "-style prefixes are dropped first.

Left out on purpose: anything about the wire (chunked streams, HTTP status codes, sockets,
timeouts). Those are tested against tests/fake_ollama.py through the real `ollama` client, which
serves the same scripts and the same embeddings.
"""

from __future__ import annotations

import collections
import copy
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from planner.model.base import (
    BROKEN,
    CUT_SHORT,
    NOT_FOUND,
    UNREADABLE,
    ChatResult,
    ModelError,
    ModelFault,
    Observer,
    clean,
    server_error,
)

Reply = dict[str, Any]
PREFIXES = ("search_document: ", "search_query: ", "passage: ", "query: ")
STOPWORDS = frozenset("the a an i my is to of and in on for what do does me about".split())
DEFAULT_MODELS = {"main": ["completion", "tools"], "critic": ["completion", "tools"], "embed": ["embedding"]}


def embedding(text: str, dim: int = 256) -> list[float]:
    """A unit bag-of-words vector: shared words give a high cosine, no shared word gives 0."""
    for p in PREFIXES:
        text = text.removeprefix(p)
    v = [0.0] * dim
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word not in STOPWORDS:
            v[int(hashlib.md5(word.encode()).hexdigest(), 16) % dim] += 1.0
    norm = sum(x * x for x in v) ** 0.5
    if norm == 0:
        v[0], norm = 1.0, 1.0
    return [x / norm for x in v]


class ScriptedModel:
    """A `ChatModel` answering from scripts, recording every request; thread-safe."""

    def __init__(self, models: dict[str, list[str]] | None = None, embed_dim: int = 256):
        self.models = dict(models or DEFAULT_MODELS)  # name -> capabilities
        self.sizes: dict[str, str] = collections.defaultdict(lambda: "8.0B")  # name -> parameter_size
        self.contexts: dict[str, int] = {}  # name -> context_length /api/show reports (none: not said)
        self.embed_dim = embed_dim
        self.scripts: dict[str, collections.deque[Reply]] = collections.defaultdict(collections.deque)
        self.responders: dict[str, Callable[[dict[str, Any]], Reply]] = {}
        self.requests: list[dict[str, Any]] = []  # {"path": "/api/chat" | "/api/embed" | "/api/show", **body}
        self.embed_inputs: list[str] = []
        self.violations: list[str] = []  # scripted JSON replies Ollama could not have sent (see the docstring)
        self.observer: Observer | None = None
        self.lock = threading.Lock()

    # -- scripting

    def script(self, model: str, *replies: Reply) -> None:
        """Queue replies for a model, answered in order."""
        with self.lock:
            self.scripts[model].extend(replies)

    def respond_with(self, model: str, fn: Callable[[dict[str, Any]], Reply]) -> None:
        """Answer a model's chats with fn(request) once its queue is empty."""
        self.responders[model] = fn

    def chats(self, model: str | None = None) -> list[dict[str, Any]]:
        """The chat requests made, in order, optionally for one model."""
        return [r for r in self.requests if r["path"] == "/api/chat" and model in (None, r["model"])]

    def count(self, path: str) -> int:
        """How many requests of one kind were made ("/api/chat", "/api/embed", "/api/show")."""
        return sum(1 for r in self.requests if r["path"] == path)

    def _record(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        # Without the fields left unset, as the ollama client sends a request (a test may check "think" is absent).
        entry = {"path": path, **copy.deepcopy({k: v for k, v in body.items() if v is not None})}
        with self.lock:
            self.requests.append(entry)
        return entry

    def _reply(self, body: dict[str, Any]) -> Reply:
        model = body["model"]
        if model not in self.models:
            raise ModelError(NOT_FOUND.format(model=model), ModelFault.NOT_FOUND, 404)
        capabilities = self.models[model]
        if "completion" not in capabilities:  # Ollama's words for each, which server_error turns into the lines
            raise server_error(400, f'"{model}" does not support chat', model)
        if body.get("tools") and "tools" not in capabilities:
            raise server_error(400, f"{model} does not support tools", model)
        if body.get("think") and "thinking" not in capabilities:
            raise server_error(400, f'"{model}" does not support thinking', model)
        with self.lock:
            if self.scripts[model]:
                return self.scripts[model].popleft()
        if model in self.responders:
            return self.responders[model](body)
        if model == "critic":  # nothing to say: the smallest answer the request's schema allows
            schema = body.get("format")
            return {"content": json.dumps(smallest(schema) if isinstance(schema, dict) else {"done": True})}
        raise server_error(500, f"no scripted reply left for {model}", model)

    @staticmethod
    def _fault(reply: Reply, model: str) -> None:
        if "status" in reply:
            raise server_error(int(reply["status"]), str(reply.get("error", "fake error")), model)
        if reply.get("cut"):
            raise ModelError(CUT_SHORT, ModelFault.CUT)
        if reply.get("drop"):
            raise ModelError(BROKEN, ModelFault.BROKEN)
        if reply.get("garbage"):
            raise ModelError(UNREADABLE, ModelFault.UNREADABLE)
        if reply.get("stream_error"):
            raise server_error(-1, str(reply["stream_error"]), model)

    def _report(self, model: str, purpose: str, seconds: float, **figures: int) -> None:
        if self.observer:
            self.observer({"model": model, "purpose": purpose, "seconds": seconds, **figures})

    # -- the ChatModel protocol

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
        """The next scripted reply, its content handed to on_token in pieces as a stream would."""
        t0 = time.perf_counter()
        body = {
            "model": model,
            "messages": messages,
            "tools": tools,
            "options": options,
            "think": think,
            "keep_alive": keep_alive,
            "stream": True,
        }
        reply = self._reply(self._record("/api/chat", body))
        content, thinking = str(reply.get("content", "")), str(reply.get("thinking", ""))
        if thinking and on_thinking:
            on_thinking(clean(thinking))
        for i in range(0, len(content), 8):  # pieces, as Ollama streams them; a fault comes mid-reply
            if reply.get("drop") and i >= len(content) // 2:
                break
            if on_token:
                on_token(clean(content[i : i + 8]))
        self._fault(reply, model)
        calls = [
            {"function": {"name": c["name"], "arguments": dict(c.get("arguments") or {})}}
            for c in reply.get("tool_calls", [])
        ]
        result = ChatResult(
            content=clean(content),
            thinking=clean(thinking),
            tool_calls=[clean(c) for c in calls],
            done_reason=reply.get("done_reason", "stop"),
            prompt_eval_count=reply.get("prompt_eval_count", 10),
            eval_count=reply.get("eval_count", 5),
            load_seconds=reply.get("load_duration", 0) / 1e9,
            seconds=time.perf_counter() - t0,
        )
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
        """The next scripted reply, which must be JSON of `schema`'s shape unless cut short (else it fails the test)."""
        t0 = time.perf_counter()
        body = {
            "model": model,
            "messages": messages,
            "format": schema,
            "options": options,
            "think": False,
            "keep_alive": keep_alive,
            "stream": False,
        }
        reply = self._reply(self._record("/api/chat", body))
        self._fault(reply, model)
        content = str(reply.get("content", ""))
        # Ollama's grammar keeps a reply to its schema; only one cut short by num_predict can break it.
        if reply.get("done_reason") != "length" and (problem := schema_problem(content, schema)):
            why = f"the scripted {model} reply does not follow the schema it was asked for: {problem}: {content[:200]}"
            with self.lock:
                self.violations.append(why)
            raise AssertionError(why)
        result = ChatResult(
            content=content,
            done_reason=reply.get("done_reason", "stop"),
            prompt_eval_count=reply.get("prompt_eval_count", 10),
            eval_count=reply.get("eval_count", 5),
            seconds=time.perf_counter() - t0,
        )
        self._report(
            model, purpose, result.seconds, prompt_tokens=result.prompt_eval_count, eval_tokens=result.eval_count
        )
        return result

    def embed(self, model: str, texts: list[str]) -> list[list[float]]:
        """One bag-of-words vector per text."""
        t0 = time.perf_counter()
        self._record("/api/embed", {"model": model, "input": list(texts)})
        if model not in self.models:
            raise ModelError(NOT_FOUND.format(model=model), ModelFault.NOT_FOUND, 404)
        with self.lock:
            self.embed_inputs.extend(texts)
        vectors = [embedding(t, self.embed_dim) for t in texts]
        self._report(model, "embedding", time.perf_counter() - t0, texts=len(texts))
        return vectors

    def facts(self, model: str) -> tuple[str | None, list[str]]:
        """The scripted size and capabilities of a model."""
        self._record("/api/show", {"model": model})
        if model not in self.models:
            raise ModelError(NOT_FOUND.format(model=model), ModelFault.NOT_FOUND, 404)
        return self.sizes[model] or None, list(self.models[model])

    def context_length(self, model: str) -> int | None:
        """The scripted context length of a model (as `Ollama.context_length`); None when not set."""
        return self.contexts.get(model)

    def capabilities(self, model: str) -> list[str]:
        """The model's capabilities (as `Ollama.capabilities`)."""
        return self.facts(model)[1]


def smallest(schema: dict[str, Any]) -> Any:
    """The smallest value a JSON schema allows: required properties only, empty lists and strings, true."""
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object":
        return {k: smallest(schema.get("properties", {}).get(k, {})) for k in schema.get("required", [])}
    return {"array": [], "string": "", "boolean": True, "integer": 0, "number": 0, "null": None}.get(kind, None)


_TYPES: dict[str, type | tuple[type, ...]] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "integer": int,
    "number": (int, float),
    "null": type(None),
}


def schema_problem(content: str, schema: dict[str, Any]) -> str | None:
    """What in `content` breaks the JSON schema, as far as Ollama's `format` grammar enforces it
    (types, required keys, enums, no extra keys where additionalProperties is false); None if nothing."""
    try:
        value = json.loads(content)
    except ValueError:
        return "it is not JSON"
    return _problem(value, schema, "$")


def _problem(value: Any, schema: dict[str, Any], where: str) -> str | None:
    kinds = schema.get("type")
    if kinds is not None:
        allowed = tuple(_TYPES[k] for k in ([kinds] if isinstance(kinds, str) else kinds) if k in _TYPES)
        if allowed and (not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed)):
            return f"{where} is not {kinds}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} is not one of {schema['enum']}"
    if isinstance(value, dict):
        props = schema.get("properties", {})
        missing = [k for k in schema.get("required", []) if k not in value]
        if missing:
            return f"{where} lacks {', '.join(missing)}"
        if schema.get("additionalProperties") is False and set(value) - set(props):
            return f"{where} has keys the schema does not: {', '.join(sorted(set(value) - set(props)))}"
        for k, v in value.items():
            if k in props and (p := _problem(v, props[k], f"{where}.{k}")):
                return p
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            if p := _problem(v, schema["items"], f"{where}[{i}]"):
                return p
    return None
