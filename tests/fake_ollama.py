"""A fake Ollama HTTP server for tests: the real wire protocol, scripted replies.

It listens on 127.0.0.1 and answers /api/chat (streamed as NDJSON over chunked
encoding, or one JSON object), /api/embed, /api/tags, /api/show, /api/ps,
/api/pull and /api/version, so the planner is tested through the real
`ollama` client and httpx. Replies are scripted per model:

    fake.script("main", {"tool_calls": [{"name": "add_task", "arguments": {...}}]},
                        {"content": "Added."})

A reply may instead be a fault: {"status": 500, "error": "..."}, {"cut": True}
(the stream ends without done), {"drop": True} (the connection is closed
mid-stream), {"garbage": True} (a line that is not JSON), {"stall": seconds},
{"hang": True} (no answer at all, until the test is over: only the client's
timeout ends the call), {"endless": True} (tokens until the client hangs up),
{"stream_error": "..."} (an error object inside the stream), {"halt": threading.Event()}
(half the reply is sent, then the event is set and the rest waits until the test is
over: the client is mid-stream for as long as the test likes). A reply with
{"gate": threading.Event()} is held until the test sets the event, so a test
can look at what the planner shows while it waits, without guessing how long.
{"piece": n} streams the content n characters a chunk (8 unless told).

Where a test could mistake the fake for Ollama, it answers as Ollama does
(each of these is a test in test_fake_ollama.py, and every answer's shape is
checked against the `ollama` package's own response types):
  - a pull of a model the library does not have is a 200 stream that ends in
    {"error": "pull model manifest: file does not exist"};
  - a chat with tools to a model without the "tools" capability, or with
    think to one without "thinking", is a 400 in Ollama's words;
  - a chat with `format` (a JSON schema) can only produce a reply that fits
    it: a scripted reply that does not (unless cut short by done_reason
    "length") is a mistake in the test, recorded in `violations`, which the
    `fake` fixture fails the test on;
  - /api/ps names when each loaded model expires and its size in VRAM.

One server can serve many fakes (FakeHub): each attached fake answers under
its own path prefix (http://127.0.0.1:PORT/t7), which the ollama client keeps
in every request, so a test never sees another test's requests and a late
call from an earlier test gets a 404 instead of this test's script. The test
suite shares one hub per session: starting and stopping a server per test was
a third of the suite's time.

Embeddings are deterministic bags of hashed words, so texts that share words
are close and texts that share none are orthogonal. Known task prefixes are
stripped before hashing and recorded in `embed_inputs`.
"""

from __future__ import annotations

import collections
import json
import threading
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from typing import Any

try:  # the tests import this module by its name, bench and evals as tests.fake_ollama
    from fake_ollama_wire import _Handler
except ImportError:
    from tests.fake_ollama_wire import _Handler

from planner.model.scripted import embedding, smallest

# One bag-of-words embedding for the fake server and the scripted model, so both rank alike; and one
# smallest reply (`smallest`) for an unscripted critic.
fake_embedding = embedding


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # a client killed mid-request (the fault tests do that) is not news


class FakeOllama:
    """A scripted Ollama server on 127.0.0.1; use as a context manager."""

    def __init__(self, models: dict[str, list[str]] | None = None, embed_dim: int = 256):
        # model name -> capabilities
        self.models: dict[str, list[str]] = models or {
            "main": ["completion", "tools"],
            "critic": ["completion", "tools"],
            "embed": ["embedding"],
        }
        self.embed_dim = embed_dim
        # /api/show's details.parameter_size per model: a capable size unless a test says otherwise
        self.sizes: dict[str, str] = collections.defaultdict(lambda: "8.0B")
        self.scripts: dict[str, collections.deque] = collections.defaultdict(collections.deque)
        self.responders: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.embed_inputs: list[str] = []
        self.pullable: set[str] = set()
        self.pull_fails: dict[str, str] = {}  # model -> the error its pull ends in, halfway through the download
        self.version = "0.13.0"  # what /api/version says (a test may put anything there)
        self.show_fails: set[str] = set()  # models whose /api/show answers 500
        self.violations: list[str] = []  # scripted replies real Ollama could not have sent (see the docstring)
        self.loaded: set[str] = set()
        self.lock = threading.Lock()
        self.ended = threading.Event()  # set when the test is over: what still hangs lets go
        self.server: ThreadingHTTPServer | None = None
        self.hub: FakeHub | None = None  # set when served by a shared hub under `prefix`
        self.prefix = ""

    # -- scripting

    def script(self, model: str, *replies: dict[str, Any]) -> None:
        """Queue replies for a model, answered in order."""
        self.scripts[model].extend(replies)

    def respond_with(self, model: str, fn: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """Answer a model's chats with fn(request) once its script is empty."""
        self.responders[model] = fn

    def chats(self, model: str | None = None) -> list[dict[str, Any]]:
        """The /api/chat request bodies received, optionally for one model."""
        return [b for p, b in self.requests if p == "/api/chat" and (model is None or b.get("model") == model)]

    def count(self, path: str) -> int:
        """How many requests hit a path."""
        return sum(1 for p, _ in self.requests if p == path)

    def _next_reply(self, body: dict[str, Any]) -> dict[str, Any]:
        model = body.get("model", "")
        with self.lock:
            if self.scripts[model]:
                return self.scripts[model].popleft()
        if model in self.responders:
            return self.responders[model](body)
        if model == "critic":  # nothing to say: the smallest answer the request's schema allows
            schema = body.get("format")
            return {"content": json.dumps(smallest(schema) if isinstance(schema, dict) else {"done": True})}
        return {"status": 500, "error": f"fake: no scripted reply left for {model}"}

    # -- lifecycle

    @property
    def url(self) -> str:
        """The server's base URL, for OLLAMA_HOST."""
        if self.hub:
            return self.hub.url + self.prefix
        assert self.server
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self, port: int = 0) -> FakeOllama:
        """Listen on a free port (or the given one) in a background thread."""
        fake = self

        class Handler(_Handler):
            pass

        Handler.fake = fake
        self.server = _QuietServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        # A short poll: shutdown() waits up to one poll interval, and every test stops a server.
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop listening (on a hub: stop answering under this fake's prefix)."""
        self.ended.set()
        if self.hub:
            self.hub.detach(self)
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class FakeHub:
    """One listening server for many fakes, each under its own path prefix."""

    def __init__(self) -> None:
        self.fakes: dict[str, FakeOllama] = {}
        self.count = 0
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """The shared server's base URL, without a prefix."""
        assert self.server
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeHub:
        """Listen on a free port in a background thread."""

        class Handler(_Handler):
            pass

        Handler.hub = self
        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def attach(self, fake: FakeOllama) -> FakeOllama:
        """Serve `fake` under a new prefix; returns it."""
        self.count += 1
        fake.hub, fake.prefix = self, f"/t{self.count}"
        self.fakes[fake.prefix] = fake
        return fake

    def detach(self, fake: FakeOllama) -> None:
        """Stop serving `fake`: its prefix answers 404 from now on."""
        fake.ended.set()
        self.fakes.pop(fake.prefix, None)

    def stop(self) -> None:
        """Stop listening."""
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
