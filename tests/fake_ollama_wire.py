"""The fake Ollama's wire half (fake_ollama.py is the server and its scripts): each endpoint's request
read and its answer written as Ollama writes it, streamed or whole, faults included, and the checks
that keep a test from scripting what Ollama could not send."""

from __future__ import annotations

import hashlib
import json
import time
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from planner.model.scripted import embedding

if TYPE_CHECKING:
    from fake_ollama import FakeHub, FakeOllama


def now() -> str:
    """An RFC 3339 timestamp as Ollama writes it."""
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())


def format_violation(reply: dict[str, Any], fmt: Any) -> str | None:
    """Why a scripted reply could not come from Ollama under this `format` ("json" or a schema); None if it could."""
    if not fmt or reply.get("done_reason") == "length" or "status" in reply:
        return None  # no constraint, or cut short by num_predict, or not a reply at all
    import jsonschema

    try:
        value = json.loads(reply.get("content", ""))
    except json.JSONDecodeError:
        return f"{reply.get('content', '')[:80]!r} is not JSON, and the request asked for format {fmt!r}"
    if isinstance(fmt, dict):
        try:
            jsonschema.validate(value, fmt)
        except jsonschema.ValidationError as e:
            return f"{reply.get('content', '')[:80]!r} does not fit the request's schema: {e.message}"
    return None


def full_name(model: str) -> str:
    """How Ollama names a library model in its errors: registry.ollama.ai/library/NAME:TAG."""
    return f"registry.ollama.ai/library/{model if ':' in model else model + ':latest'}"


def _details(size: str) -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": "fake",
        "families": ["fake"],
        "parameter_size": size,
        "quantization_level": "Q4_K_M",
    }


def _entry(name: str, size: str = "8.0B") -> dict[str, Any]:
    """A model as /api/tags lists it."""
    return {
        "name": name + ":latest" if ":" not in name else name,
        "model": name + ":latest" if ":" not in name else name,
        "modified_at": now(),
        "size": 1000,
        "digest": hashlib.sha256(name.encode()).hexdigest(),
        "details": _details(size),
    }


def _loaded(name: str, size: str = "8.0B") -> dict[str, Any]:
    """A model as /api/ps lists it: resident until expires_at (keep_alive, 5 minutes by default)."""
    expires = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(time.time() + 300))
    return {**_entry(name, size), "expires_at": expires, "size_vram": 1000, "context_length": 4096}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY, as Ollama's Go server has it: without it a reply's header and body writes wait out the
    # client's delayed ACK, 40 ms a request that real Ollama never adds.
    disable_nagle_algorithm = True
    fake: FakeOllama
    hub: FakeHub | None = None

    def _route(self) -> bool:
        """On a hub, find the fake this request's prefix belongs to and strip the prefix; False: none (404 sent)."""
        if self.hub is None:
            return True
        # "/t7/api/chat" -> fake /t7, path "/api/chat"; "/t7" or "/t7/" -> path "/"
        prefix, slash, rest = self.path.lstrip("/").partition("/")
        fake = self.hub.fakes.get("/" + prefix)
        if fake is None:
            self._json(404, {"error": "fake: no test is served under this prefix"})
            return False
        self.fake = fake
        self.path = slash + rest or "/"
        return True

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, code: int, obj: Any) -> None:
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def _chunk(self, obj: Any, raw: bytes | None = None) -> None:
        b = raw if raw is not None else (json.dumps(obj) + "\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
        self.wfile.flush()

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _model(self, body: dict[str, Any]) -> str:
        name = body.get("model") or body.get("name") or ""
        return name[: -len(":latest")] if name.endswith(":latest") else name

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        if not self._route():
            return
        f = self.fake
        f.requests.append((self.path, {}))
        if self.path == "/":
            return self._json(200, "Ollama is running")
        if self.path == "/api/version":
            return self._json(200, {"version": f.version})
        if self.path == "/api/tags":
            return self._json(200, {"models": [_entry(n, f.sizes[n]) for n in f.models]})
        if self.path == "/api/ps":
            return self._json(200, {"models": [_loaded(n, f.sizes[n]) for n in sorted(f.loaded)]})
        return self._json(404, {"error": "not found"})

    def do_POST(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        if not self._route():
            self.rfile.read(n)
            return
        f = self.fake
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
        except json.JSONDecodeError as e:
            return self._json(400, {"error": str(e)})
        f.requests.append((self.path, body))
        model = self._model(body)
        if self.path == "/api/show":
            if model in f.show_fails:
                return self._json(500, {"error": "llama runner process has terminated"})
            if model not in f.models:
                return self._json(404, {"error": f"model '{model}' not found"})
            return self._json(
                200,
                {
                    "license": "",
                    "modelfile": f"FROM {model}\n",
                    "parameters": "stop <|im_end|>",
                    "template": "{{ .Prompt }}",
                    "details": _details(f.sizes[model]),
                    "model_info": {"general.architecture": "fake", "general.parameter_count": 8_000_000_000},
                    "capabilities": f.models[model],
                    "modified_at": now(),
                },
            )
        if self.path == "/api/pull":
            self._start_stream()
            self._chunk({"status": "pulling manifest"})
            if model not in f.pullable:  # Ollama has already said 200 when it learns the library has no such model
                self._chunk({"error": "pull model manifest: file does not exist"})
                return self._end_stream()
            for done in (0, 500, 1000):
                self._chunk({"status": "pulling abc123", "digest": "sha256:abc123", "total": 1000, "completed": done})
                if model in f.pull_fails:
                    self._chunk({"error": f.pull_fails[model]})
                    return self._end_stream()
            self._chunk({"status": "success"})
            self._end_stream()
            f.models[model] = ["completion", "tools"] if "embed" not in model else ["embedding"]
            return
        if self.path == "/api/embed":
            if model not in f.models:
                return self._json(404, {"error": f'model "{model}" not found, try pulling it first'})
            inputs = body.get("input", "")
            inputs = [inputs] if isinstance(inputs, str) else inputs
            f.embed_inputs.extend(inputs)
            return self._json(
                200,
                {
                    "model": model,
                    "embeddings": [embedding(t, f.embed_dim) for t in inputs],
                    "total_duration": 1000,
                    "load_duration": 0,
                    "prompt_eval_count": len(inputs),
                },
            )
        if self.path != "/api/chat":
            return self._json(404, {"error": "not found"})
        if model not in f.models:
            return self._json(404, {"error": f'model "{model}" not found, try pulling it first'})
        caps = f.models[model]
        if "completion" not in caps:
            return self._json(400, {"error": f'"{model}" does not support chat'})
        if body.get("tools") and "tools" not in caps:
            return self._json(400, {"error": f"{full_name(model)} does not support tools"})
        if body.get("think") not in (None, False) and "thinking" not in caps:
            return self._json(400, {"error": f'"{model}" does not support thinking'})
        f.loaded.add(model)
        reply = f._next_reply(body)
        if why := format_violation(reply, body.get("format")):
            f.violations.append(f"{model}: {why}")
            return self._json(500, {"error": f"fake: {why}"})
        return self._chat(body, reply)

    def _chat(self, body: dict[str, Any], reply: dict[str, Any]) -> None:
        model = body.get("model", "")
        if reply.get("gate") is not None:
            reply["gate"].wait(60)  # the test opens it once it has seen what it wanted to see meanwhile
        if reply.get("hang"):
            self.fake.ended.wait(120)
            self.close_connection = True
            return
        if "status" in reply:
            return self._json(reply["status"], {"error": reply.get("error", "fake error")})
        if reply.get("stall"):
            time.sleep(reply["stall"])
        content = reply.get("content", "")
        calls = [
            {"function": {"name": c["name"], "arguments": c.get("arguments", {})}} for c in reply.get("tool_calls", [])
        ]
        msg: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            msg["tool_calls"] = calls
        final = {
            "model": model,
            "created_at": now(),
            "done": True,
            "done_reason": reply.get("done_reason", "stop"),
            "total_duration": 1_000_000,
            "load_duration": reply.get("load_duration", 0),
            "prompt_eval_count": reply.get("prompt_eval_count", 10),
            "prompt_eval_duration": 1000,
            "eval_count": reply.get("eval_count", 5),
            "eval_duration": 1000,
        }
        if not body.get("stream", True):
            if reply.get("thinking"):
                msg["thinking"] = reply["thinking"]
            return self._json(200, dict(final, message=msg))
        self._start_stream()
        if reply.get("thinking"):
            self._chunk(
                {
                    "model": model,
                    "created_at": now(),
                    "done": False,
                    "message": {"role": "assistant", "content": "", "thinking": reply["thinking"]},
                }
            )
        if reply.get("endless"):  # a stream that never ends, until the client hangs up (at most 60 s)
            end = time.monotonic() + 60
            try:
                while time.monotonic() < end:
                    self._chunk(
                        {
                            "model": model,
                            "created_at": now(),
                            "done": False,
                            "message": {"role": "assistant", "content": "la "},
                        }
                    )
                    time.sleep(reply.get("slow", 0.001))
            except OSError:
                pass
            self.close_connection = True
            return
        size = reply.get("piece", 8)  # characters a chunk: Ollama sends about a token each
        pieces = [content[i : i + size] for i in range(0, len(content), size)]
        for i, piece in enumerate(pieces):
            self._chunk(
                {"model": model, "created_at": now(), "done": False, "message": {"role": "assistant", "content": piece}}
            )
            if reply.get("slow"):
                time.sleep(reply["slow"])
            if reply.get("halt") is not None and i >= len(pieces) // 2:
                self.wfile.flush()
                reply["halt"].set()
                self.fake.ended.wait(120)
                self.close_connection = True
                return
            if reply.get("drop") and i >= len(pieces) // 2:
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)  # the server goes away mid-reply
                return
        if reply.get("garbage"):
            self._chunk(None, raw=b"this is not json\n")
            return self._end_stream()
        if reply.get("stream_error"):
            self._chunk({"error": reply["stream_error"]})
            return self._end_stream()
        if reply.get("cut"):
            return self._end_stream()
        if calls:
            self._chunk(
                {
                    "model": model,
                    "created_at": now(),
                    "done": False,
                    "message": {"role": "assistant", "content": "", "tool_calls": calls},
                }
            )
        self._chunk(dict(final, message={"role": "assistant", "content": ""}))
        self._end_stream()
