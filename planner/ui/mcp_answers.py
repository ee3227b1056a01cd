"""The user's answer to an MCP question: what counts as a yes, and the request_state that carries an answer
given in a later round (protocol 2026-07-28) back to the call it was for.

A yes is an accepted elicitation whose `confirm` is the boolean true, as the requested schema says; text
("no", "yes"), a number or a missing field is not. A request_state is signed by this server process, bound to
one call (the tool and its arguments) and to the rows the question showed at their versions, good once and for
STATE_SECONDS: replaying it after an undo, sending it with another call, or forging one asks again.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from typing import Any

from planner.policy import Grant

ANSWER = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Go ahead?", "default": False}},
    "required": ["confirm"],
}
STATE_SECONDS = 600.0  # how long an answer given in a later round may take to come back


def said_yes(reply: Any) -> bool:
    """Only an accepted answer whose `confirm` is the boolean true (the schema's type) is a yes; any other
    value, text like "no" or "yes" included, is not."""
    content = getattr(reply, "content", None) or {}
    return getattr(reply, "action", None) == "accept" and isinstance(content, dict) and content.get("confirm") is True


class States:
    """request_state tokens for answers given in a later round: signed by this server process, bound to one
    call (tool and arguments) and to the rows the question showed at their versions, used once, expiring
    after STATE_SECONDS. A token from another process, an old one, or one used already asks again."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._key = secrets.token_bytes(32)
        self._used: dict[str, float] = {}
        self._clock = clock

    def issue(self, name: str, args: dict[str, Any], grant: Grant) -> str:
        """A token for this call and these rows."""
        body = {
            "call": _call_digest(name, args),
            "rows": [[t, k, v] for (t, k), v in sorted(grant.rows().items())],
            "nonce": secrets.token_hex(12),
            "until": self._clock() + STATE_SECONDS,
        }
        raw = base64.urlsafe_b64encode(json.dumps(body).encode()).decode()
        return raw + "." + self._sign(raw)

    def redeem(self, token: str, name: str, args: dict[str, Any]) -> dict[tuple[str, int], str] | None:
        """The rows a valid token grants, once; None when it is forged, expired, used or for another call."""
        raw, _, sig = token.partition(".")
        if not hmac.compare_digest(sig, self._sign(raw)):
            return None
        try:
            body = json.loads(base64.urlsafe_b64decode(raw.encode()))
        except ValueError:
            return None
        now = self._clock()
        self._used = {n: t for n, t in self._used.items() if t > now}  # what expired is refused anyway
        fresh = body.get("until", 0) >= now and body.get("nonce") not in self._used
        if not fresh or body.get("call") != _call_digest(name, args):
            return None
        self._used[body["nonce"]] = body["until"]
        return {(t, int(k)): v for t, k, v in body.get("rows", [])}

    def _sign(self, raw: str) -> str:
        return hmac.new(self._key, raw.encode(), hashlib.sha256).hexdigest()[:32]


def _call_digest(name: str, args: dict[str, Any]) -> str:
    blob = json.dumps([name, {k: v for k, v in args.items() if k != "confirm"}], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]
