"""One user turn as values: the tool calls (as sent, as run, outcome) and what the turn did.

    Turn(text="move the dentist to friday", recent=["add dentist 2026-12-10"], id="t-…")
      .calls   [ToolCall(name="update_task", sent={"id": 1, "due_date": "friday"},
                         args={...as run...}, notes=[...guards said...], result={...}, ok=True)]
      .approved {("update_task", 1), ...}   changes the user approved in a large-change list
      .declined {("delete_task", 2), ...}   changes the user said no to in this request

The agent reports what it does as events, `on_event(kind, data)`, one of
EventKind (data shapes beside it), and returns a TurnResult.

The agent makes one Turn per user message and passes it to the guards
(guards.py) and the tool runner (toolrun.py); nothing else keeps turn state.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from planner.agent.budget import Window
from planner.agent.request import OneTool
from planner.policy import Mandate, Refusal
from planner.tools import CHANGES_EXISTING, READ_ONLY_TOOLS  # the tool facts, as each tool declared them

# What the agent reports while a turn runs, and the data each kind carries.
EventKind = Literal[
    "status",  # {"text"}: what it is doing now ("thinking…", "checking the work…"); a new model call starts
    "token",  # {"text"}: a piece of the reply as it streams
    "thinking",  # {"text"}: a piece of a thinking model's thoughts
    "model",  # {"model", "prompt_tokens", "eval_tokens", "seconds", "load_seconds", ...}: one main-model call ended
    "tool_start",  # {"id", "name", "arguments"}: a tool call begins
    "tool_end",  # {"id", "name", "ok", "result", "ms", ...}: it ended
    "critic",  # {"done", "critique"}: the critic's verdict on a turn that changed data
    "warning",  # {"text"}: something the user should know (a message cut, a retry)
    "tools",  # {"groups", "why", "tools"}: the tool groups the next model call gets, when they change
]
EVENT_KINDS: tuple[str, ...] = get_args(EventKind)
Event = Callable[[EventKind, dict[str, Any]], None]


@dataclass
class ToolCall:
    """One call the model asked for: as sent, as run, and what came of it."""

    name: Any  # the tool name as sent (may be invented or not a string)
    sent: Any  # the arguments as the model sent them
    args: Any = None  # the arguments that run: `sent` unless a guard changed them (and said so in notes)
    notes: list[str] = field(default_factory=list)  # what guards did, told to the model in the result
    refusal: str | None = None  # set: the call does not run, and the model reads this as its error
    result: dict[str, Any] | None = None  # what the model reads back
    ok: bool = False
    ran: bool = False  # the tool function was called (False: refused, a repeat, or cancelled)
    # Why the user's yes was missing, when it was (declined, no one could answer, the user's words did not
    # ask for it, declined earlier in this request); None otherwise.
    refused: Refusal | None = None
    unsure: bool = False  # the user's words may not ask for this deletion: they are asked even under --yes
    which: tuple[str, ...] = ()  # refused as a guess among tasks the words fit alike: the user is asked which
    # refused as the model's misreading of the words (another task than they name, a copy of an open task for
    # words that add nothing): what the user asked is still to do, unlike a deletion nobody asked for
    misread: bool = False

    def __post_init__(self) -> None:
        if self.args is None:
            self.args = self.sent

    @property
    def message(self) -> dict[str, Any]:
        """The call as stored in history, exactly as the model sent it."""
        return {"function": {"name": self.name, "arguments": self.sent}}

    @property
    def task_id(self) -> int | None:
        """The id of the task the call changes, when it names one."""
        tid = self.args.get("id") if isinstance(self.args, dict) else None
        if isinstance(tid, str) and tid.strip().lstrip("+-").isdigit():
            tid = int(tid)
        return tid if isinstance(tid, int) and not isinstance(tid, bool) else None

    @property
    def mutating(self) -> bool:
        """Whether the tool writes (a known tool that is not read-only)."""
        return isinstance(self.name, str) and self.name not in READ_ONLY_TOOLS

    def entry(self) -> dict[str, Any]:
        """The call as TurnResult.tool_calls shows it: {"name", "arguments", "sent", "ok", "result"}."""
        return {
            "name": self.name,
            "arguments": self.args,
            "sent": self.sent,
            "ok": self.ok,
            "result": self.result,
            "refused": self.refused.value if self.refused else None,
        }


def key(name: Any, args: Any) -> str:
    """A call's identity for comparing calls: the name and the arguments as given."""
    return json.dumps([name, args if isinstance(args, dict) else {}], sort_keys=True, default=str)


@dataclass
class Turn:
    """Everything one user turn knows and did."""

    text: str  # the user's message now, without the notes the planner attached
    recent: list[str] = field(default_factory=list)  # the user's earlier messages, oldest first
    answered: list[str] = field(default_factory=list)  # the planner's replies to them, oldest first
    id: str | None = None  # task_events.turn: the turn's task changes are one /undo
    today: dt.date = field(default_factory=dt.date.today)  # the date the user's words are read against
    calls: list[ToolCall] = field(default_factory=list)  # every call this turn, in order
    approved: set[tuple[str, int]] = field(default_factory=set)  # (tool, task id) approved in a large-change list
    declined: set[tuple[str, int]] = field(default_factory=set)  # (tool, task id) the user said no to
    overridden: set[str] = field(default_factory=set)  # guard changes the model may insist on (guards.py)
    critiques: list[str] = field(default_factory=list)
    reached: list[str] = field(default_factory=list)  # tool groups the model reached for (a tool not sent)
    groups: tuple[str, ...] = ()  # the tool groups sent with the latest model call (agent/request.py)
    forced: OneTool | None = None  # the next model call gives this tool's arguments, as JSON to its schema
    window: Window = field(default_factory=lambda: Window(8192, 1024))  # the context it works in (budget.py)
    mandate: Mandate | None = None  # which tasks the user's words name (intent.py), once read
    open_titles: dict[int, str] = field(default_factory=dict)  # the open tasks when the request began

    @property
    def user_messages(self) -> list[str]:
        """What the user said: the earlier messages, then this one."""
        return [*self.recent, self.text]

    def changed_tasks(self) -> set[int]:
        """Distinct existing tasks this turn changed (successful calls only)."""
        return {c.task_id for c in self.calls if c.ok and c.name in CHANGES_EXISTING and c.task_id is not None}

    def changed(self, since: int = 0) -> bool:
        """Whether a call that writes succeeded (from call index `since` on): a declined or failed call is no change."""
        return any(c.ok and c.ran and c.mutating for c in self.calls[since:])


@dataclass
class TurnResult:
    """What one user turn did."""

    reply: str = ""
    error: str | None = None  # one line for the user when the turn failed
    interrupted: bool = False
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {"name", "arguments", "ok", "result", "refused"}
    gave_up: bool = False  # the model used every step it had and did not answer
    model_calls: int = 0
    prompt_tokens: int = 0
    eval_tokens: int = 0
    critiques: list[str] = field(default_factory=list)
    correction: str | None = None  # the reply claimed a change that did not happen: what did change, for the user
    reasked: bool = False  # the model was asked once more because its reply claimed what did not happen
    model_seconds: float = 0.0  # waiting on the main model (including loading it)
    load_seconds: float = 0.0  # of which Ollama spent loading the model
    tool_seconds: float = 0.0  # running tools
    prefix_reuse: list[float] = field(
        default_factory=list
    )  # per main-model call: share of the request repeating the last one
    steps: list[dict[str, Any]] = field(default_factory=list)  # per main-model call: {"groups", "why", "tools",
    #                                                             "prompt_tokens"} (what /trace shows)
    nudged: bool = False  # the request asked for a change none was made: the model was asked once more
    forced: str | None = None  # still none after that: the small model was asked for this tool's arguments
    context_full: bool = False  # the turn ended before the prompt would outgrow the model's context
