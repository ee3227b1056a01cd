"""The MCP server's stdin and stdout: every request with an id gets an answer, even one the SDK cannot read.

The SDK's stdio transport drops a line it cannot validate, so a client that
sent a lone surrogate, a 5,000-digit number, non-object params, "jsonrpc":
"1.0", a batch or deep nesting waits for ever. Here each line is checked
first: what the SDK can read goes on to it; for anything else the request's
id (found by a reader that cannot be made to fail) gets a JSON-RPC error
that says what was wrong (-32700 parse error, -32600 invalid request).
Notifications and stray responses that cannot be read are dropped, as
JSON-RPC says. Writes are one line at a time under a lock, so an error line
never cuts into a line the SDK writes.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from io import TextIOWrapper
from typing import Any

import anyio
import mcp_types as types

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
_ID = re.compile(r'"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,18})\s*[,}]')


class Writer:
    """stdout for the SDK: each write a whole line, flushed, under a lock."""

    def __init__(self, out: Any):
        self.out = out
        self.lock = anyio.Lock()

    async def write(self, text: str) -> None:
        """Write and flush one piece (the SDK writes a message and its newline at once)."""
        async with self.lock:
            await self.out.write(text)
            await self.out.flush()

    async def flush(self) -> None:
        """Already flushed by write."""


class Reader:
    """stdin for the SDK: the lines it can read; an error answer for each request it could not."""

    def __init__(self, lines: Any, out: Writer):
        self.lines, self.out = lines, out

    def __aiter__(self) -> AsyncIterator[str]:
        return self._checked()

    async def _checked(self) -> AsyncIterator[str]:
        async for line in self.lines:
            if not line.strip():
                continue
            answer = refusal(line)
            if answer is None:
                yield line
            elif answer:
                await self.out.write(answer + "\n")


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message[:300]}}


def refusal(line: str) -> str | None:
    """None when the SDK can read the line; else the error answer to send ("" when nothing is owed)."""
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except Exception as e:  # pydantic's ValidationError, or worse: the line is not a message the SDK reads
        why = _why(e)
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        found = _ID.search(line)
        request_id = json.loads(found[1]) if found else None
        return json.dumps(_error(request_id, PARSE_ERROR, f"the message is not JSON the server can read ({why})"))
    if isinstance(value, list):
        owed = [
            _error(v["id"], INVALID_REQUEST, "batches are not supported; send one request at a time")
            for v in value
            if isinstance(v, dict) and "id" in v and "method" in v
        ]
        return json.dumps(owed) if owed else ""
    if isinstance(value, dict) and "id" in value and "method" in value:
        request_id = value["id"] if isinstance(value["id"], str | int) and not isinstance(value["id"], bool) else None
        if isinstance(request_id, int) and abs(request_id) >= 2**63:
            request_id = None
        return json.dumps(
            _error(request_id, INVALID_REQUEST, f"the request is not valid JSON-RPC 2.0 ({why})"), ensure_ascii=True
        )
    return ""  # a notification or a response that cannot be read: nothing is owed


def _why(e: Exception) -> str:
    errors = getattr(e, "errors", None)
    try:
        first = errors()[0] if callable(errors) else None
    except Exception:
        first = None
    if first:
        where = ".".join(str(p) for p in first.get("loc", ())[-2:])
        return f"{where}: {first.get('msg', '')}".strip(": ")
    return type(e).__name__


def streams() -> tuple[Reader, Writer]:
    """The process's stdin and stdout, wrapped for stdio_server."""
    out = Writer(anyio.wrap_file(TextIOWrapper(sys.stdout.buffer, encoding="utf-8", line_buffering=False)))
    src = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    return Reader(src, out), out
