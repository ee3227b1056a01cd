"""The one safety policy: what may run at once, what asks the user first, and what is refused.

Every door the planner has (the terminal's y/N, a one-shot request, an MCP
client, the shell commands, the sync, undo) describes what a call or command
would do as an `Effect`, asks `decide`, and acts on the typed `Decision`:

    Effect                                  Decision (for a door that can ask / has --yes / neither)
    nothing deleted, <= 3 existing changed  RUN
    a deletion (task, memory)               ASK / RUN / REFUSE
    more than 3 existing tasks changed      ASK / RUN / REFUSE     (counted with the last 2 minutes)
    deletions that look like a glitch       ASK / RUN / REFUSE     (an empty listing, a replaced list)
    deletions a sync carries over (<= 3)    RUN                    (the user deleted them elsewhere)

A yes comes only from the user: through the door's own question (y/N,
elicitation) or given in advance (`--yes`, PLANNER_YES). What the model
sends is never a yes. A refusal carries one sentence that says what to do.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from planner.storage.tasks import BULK_LIMIT

# Seconds: changes to existing tasks made this close together (by any process on the file, counted from the
# change log) are one batch for the large-change rule where there is no request to count by (MCP, undo).
BULK_WINDOW = 120.0


class Verdict(enum.Enum):
    """What to do with a call or command."""

    RUN = "run"
    ASK = "ask"
    REFUSE = "refuse"


@dataclass(frozen=True)
class Effect:
    """What a call or command would do, known before it runs (one line per thing)."""

    deletes: tuple[str, ...] = ()  # tasks deleted or memories forgotten
    changes: tuple[str, ...] = ()  # existing tasks changed
    recent: int = 0  # other existing tasks changed in the bulk window (the change log, every process)
    glitch: str = ""  # why deletions look like a fault rather than the user's wish ("the server listed none")
    by_user: bool = False  # the user's own act: a deletion made on another device, their own /undo
    asks: str = ""  # a reason to ask whatever the counts ("it undoes an import of 30 tasks")

    @property
    def changed(self) -> int:
        """Existing tasks this would change, with those changed just before."""
        return len(self.changes) + self.recent


@dataclass(frozen=True)
class Door:
    """How this entry point can hear the user's yes."""

    name: str  # terminal | oneshot | mcp | shell | sync | undo
    ask: Callable[[str], bool] | None = None  # the user's own answer (y/N, elicitation); None: nobody to ask
    yes: bool = False  # the user said yes in advance (--yes, PLANNER_YES)
    how: str = "run it in a terminal, or with --yes"  # what to tell someone refused here


@dataclass(frozen=True)
class Decision:
    """The policy's answer: run, ask this question, or refuse for this reason."""

    verdict: Verdict
    question: str = ""
    reason: str = ""
    why: list[str] = field(default_factory=list)  # the rules that asked, for the log


def needs_yes(effect: Effect) -> list[str]:
    """The rules this effect falls under (empty: it may run at once)."""
    rules = []
    if effect.deletes and effect.glitch:
        rules.append(f"{len(effect.deletes)} deletions while {effect.glitch}")
    elif effect.deletes and not (effect.by_user and len(effect.deletes) <= BULK_LIMIT):
        rules.append("a deletion" if len(effect.deletes) == 1 else f"{len(effect.deletes)} deletions")
    if effect.changed > BULK_LIMIT and effect.changes:
        rules.append(f"{effect.changed} existing tasks changed at once")
    if effect.asks:
        rules.append(effect.asks)
    return rules


def decide(effect: Effect, door: Door, question: str = "") -> Decision:
    """Run, ask or refuse: by what the effect would do and how this door hears a yes."""
    rules = needs_yes(effect)
    if not rules:
        return Decision(Verdict.RUN)
    if door.yes:
        return Decision(Verdict.RUN, why=rules)
    lines = [*effect.deletes, *effect.changes]
    asked = question or _question(effect, lines)
    if door.ask is not None:
        return Decision(Verdict.ASK, question=asked, why=rules)
    what = " and ".join(rules)
    return Decision(
        Verdict.REFUSE, reason=f"{what} needs the user's yes, and no one can answer here; {door.how}", why=rules
    )


def _question(effect: Effect, lines: list[str]) -> str:
    shown = lines[:12] + ([f"… and {len(lines) - 12} more"] if len(lines) > 12 else [])
    head = f"This would change {len(lines)} tasks" if not effect.deletes else "This would delete"
    if effect.asks:
        head = f"{effect.asks[0].upper()}{effect.asks[1:]}; this would"
        head += " delete or change" if effect.deletes else " change"
    if effect.glitch:
        head = f"{effect.glitch[0].upper()}{effect.glitch[1:]}, so this would delete"
    return head + ":\n  " + "\n  ".join(shown) + "\nGo ahead?"


def settle(decision: Decision, door: Door) -> tuple[bool, str]:
    """Carry a decision out at the door: (go ahead?, the reason when not)."""
    if decision.verdict is Verdict.RUN:
        return True, ""
    if decision.verdict is Verdict.REFUSE or door.ask is None:
        return False, decision.reason
    if door.ask(decision.question):
        return True, ""
    return False, "the user said no"
