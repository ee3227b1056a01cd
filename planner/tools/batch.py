"""One question for several calls: the calls of one model reply, the ids of one shell command.

Each call is run dry first: it plans its change set and the gate says what it would change and what of it
needs a yes (planner/storage/gate.py), writing nothing. The rows of all the calls, with those this request
changed already, are one large change or not by the policy's rule (planner/policy.py); everything unmet is
asked in one question. A yes is the request's grant for exactly those rows as they were shown, which the
gate checks again at each call's write; a no or no one to ask refuses the calls whose rows were asked about.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from planner import policy
from planner.policy import Need, Refusal, Verdict
from planner.storage import gate
from planner.storage.gate import Probed
from planner.tools.registry import TOOLS, ToolContext, run_call


@dataclass
class Batch:
    """What the one question decided: the calls it refused (by index) and why."""

    refused: dict[int, tuple[str, Refusal]] = field(default_factory=dict)


def asks(name: Any) -> bool:
    """Whether a call of this tool may need the user's yes (it changes or deletes what the user has)."""
    t = TOOLS.get(name) if isinstance(name, str) else None
    return bool(t and (t.changes_existing or t.destructive))


def confirm(ctx: ToolContext, calls: list[tuple[Any, Any]]) -> Batch:
    """Ask once for everything these calls would need; the grant in `ctx` covers what the user said yes to."""
    probe = dataclasses.replace(ctx, dry=True)
    found: list[Need] = []
    rows: dict[tuple[str, int], tuple[tuple[str, int], str, str, bool]] = {}
    keys_of: dict[int, set[tuple[str, int]]] = {}
    for i, (name, args) in enumerate(calls):
        if not asks(name):
            continue
        try:
            run_call(probe, name, args)  # no Probed: it failed or has nothing to change; it runs as it is
        except Probed as p:
            found += p.needs
            keys_of[i] = {n.key for n in p.needs}
            for c in p.rows:
                if c.existing and c.key is not None:
                    key = (c.table, int(c.key))
                    rows.setdefault(key, (key, c.line, c.version, ctx.mandate.changes(c.before, c.key)))
                    keys_of[i].add(key)
    door = ctx.door()
    recent = gate.recent(ctx.store.conn(), door, set(rows))
    unmet = policy.unmet([*found, *policy.bulk_needs(rows.values(), recent)], door, ctx.grant)
    if not unmet:
        return Batch()
    decision = policy.verdict(unmet, door)
    if decision.verdict is Verdict.ASK and door.ask is not None and door.ask(decision.question):
        ctx.grant.approve(unmet)
        return Batch()
    asked = {n.key for n in unmet}
    if decision.verdict is Verdict.ASK:
        lines = "; ".join(dict.fromkeys(n.line for n in unmet))
        why = (f"the user declined: {lines}. Nothing was changed by this call; do not ask again", Refusal.DECLINED)
    else:
        why = (decision.reason, Refusal.NOBODY)
    return Batch({i: why for i, keys in keys_of.items() if keys & asked})
