"""The one safety policy: which changes need the user's yes, how each door hears it, and what is refused.

Every change to the user's data is a change set, applied by one function, `planner.storage.gate.commit`.
Inside the write's transaction the gate asks this module what in the change set needs a yes that was not
given (`unmet`), with the rows as they are at that moment; nothing is written until that list is empty.

    rule        fires on                                                   --yes grants it
    DELETE      a task deleted, a memory forgotten, an event removed       on rows the user's words name
    OVERWRITE   what the user wrote lost (a field cleared, notes dropped,  never: only an answer does
                a title replaced by unrelated words) on a row the
                user's words do not name
    BULK        more than 3 existing rows changed together (this request  on rows the user's words name
                or, where there is no request, the last 2 minutes)
    GLITCH      deletions while the other side looks wrong (sync)          yes
    ASKS        a change that asks for a reason of its own (open           on rows the user's words name
                subtasks, undoing an import)

A yes comes only from the user: their answer to the door's own question (y/N, elicitation), or given in
advance (`--yes`, PLANNER_YES) for the rows their own words name. An answer grants the rows it showed, at the
versions it showed (`Grant`): if a row changed before the write, the gate finds the need unmet again and the
user is asked again. What a model sends is never a yes. A refusal carries one sentence that says what works.

Doors: terminal and one-shot (the agent), shell commands, MCP, sync, import, undo and redo, reminders. The
user's words (`Mandate`) are read by the door that has them (the agent: planner/agent/intent.py); a door
whose command itself names what it does (a shell command's ids, an import's file) names everything it does.

The older description by lines (`Effect`, `decide`, `settle`) is still used by the CalDAV sync's deletion
question; its rules are the same ones.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

BULK_LIMIT = 3  # more existing rows than this changed together asks the user first
# Seconds: changes to existing tasks made this close together (by any process on the file, counted from the
# change log) are one batch for the large-change rule where there is no request to count by (MCP).
BULK_WINDOW = 120.0

# What the user wrote on a task: losing any of it is an overwrite (the status and the planner's own
# bookkeeping are not: done, reopened and unpinned tasks are changed, not emptied).
USER_FIELDS = (
    "title",
    "notes",
    "annotations",
    "due_date",
    "due_time",
    "start_date",
    "priority",
    "list",
    "tags",
    "estimate_minutes",
    "recurrence",
    "remind_at",
    "parent_uid",
    "extra",
)
# Columns whose change alone is bookkeeping, not a change the user would count (a reminder shown).
BOOKKEEPING = frozenset({"reminded_at", "ical"})


class Rule(enum.Enum):
    """Why a change needs the user's yes."""

    DELETE = "a deletion"
    OVERWRITE = "overwriting what the user wrote"
    BULK = "many existing tasks changed at once"
    GLITCH = "deletions while the other side looks wrong"
    ASKS = "a change that asks first"


class Refusal(enum.Enum):
    """Why the user's yes was missing."""

    DECLINED = "declined"  # the user said no
    NOBODY = "nobody"  # no one could be asked here
    CHANGING = "changing"  # the rows kept changing while the user was asked
    NOT_ASKED = "not_asked"  # the user's words did not ask for it (the agent's guards)
    ALREADY_DECLINED = "already_declined"  # the user said no to it earlier in this request


class Verdict(enum.Enum):
    """What to do with a call or command."""

    RUN = "run"
    ASK = "ask"
    REFUSE = "refuse"


# ---------------------------------------------------------------- what the user's words name


@dataclass(frozen=True)
class Among:
    """A set of tasks the words name by what they are: on a list or tagged so, done or cancelled."""

    lists: frozenset[str] = frozenset()  # "everything in #old": a list or a tag of that name
    statuses: frozenset[str] = frozenset()  # "the done tasks"

    def covers(self, row: Mapping[str, Any]) -> bool:
        """Whether this row is in the set."""
        if self.lists:
            names = {str(row.get("list") or "").lower(), *(str(t).lower() for t in row.get("tags") or [])}
            if not names & self.lists:
                return False
        return not self.statuses or row.get("status") in self.statuses


@dataclass(frozen=True)
class Named:
    """Tasks named by the user's words: by id or title (ids), all of them, or sets ("#work", "the done ones")."""

    ids: frozenset[int] = frozenset()
    everything: bool = False
    sets: tuple[Among, ...] = ()
    sure: bool = True  # the verb surely means it ("delete"), not maybe ("clear", "clean up")
    alike: frozenset[int] = frozenset()  # of ids, those the words fit equally ("the call": call mom, call dad)

    def covers(self, row: Mapping[str, Any] | None, key: int | None = None) -> bool:
        """Whether this row is among the named ones."""
        if key is not None and key in self.ids:
            return True
        if row is None:
            return False
        return row.get("id") in self.ids or self.everything or any(s.covers(row) for s in self.sets)

    def __or__(self, other: Named) -> Named:
        if not self:
            return other
        if not other:
            return self
        return Named(
            self.ids | other.ids,
            self.everything or other.everything,
            self.sets + other.sets,
            self.sure and other.sure,
            self.alike | other.alike,
        )

    def __bool__(self) -> bool:
        return bool(self.ids or self.everything or self.sets)


NOTHING = Named()
EVERYTHING = Named(everything=True)


@dataclass(frozen=True)
class Mandate:
    """What the user's own message names: rows to remove, and rows to change (a removal names them for both)."""

    remove: Named = EVERYTHING
    change: Named = EVERYTHING
    said: str = ""  # the words, for the log and for telling the model what they fit
    forget: bool = True  # the words ask to forget a memory
    titles: tuple[tuple[int, str], ...] = ()  # the tasks named by id or title, as (id, title), to tell the model

    def changes(self, row: Mapping[str, Any] | None, key: int | None = None) -> bool:
        """The words name this row for a change (or for removing it)."""
        return self.change.covers(row, key) or self.remove.covers(row, key)


ALL = Mandate()  # a command that names what it does: a shell command's ids, an import's file, a sync


# ---------------------------------------------------------------- doors


@dataclass(frozen=True)
class Door:
    """How an entry point hears the user's yes, and what the user's words there name."""

    name: str  # terminal | oneshot | mcp | shell | sync | import | undo | reminders
    ask: Callable[[str], bool] | None = None  # the user's own answer (y/N, elicitation); None: nobody to ask
    yes: bool = False  # the user said yes in advance (--yes, PLANNER_YES), for the rows their words name
    how: str = "run it in a terminal, or with --yes"  # what works, for someone refused here
    mandate: Mandate = ALL  # what the user's own words name (the agent reads them; a command names its rows)
    turn: str | None = None  # the request whose changes count together for BULK
    window: float | None = None  # where there is no request: seconds of the change log that count together
    clock: Callable[[], dt.datetime] | None = None  # the time now (UTC) the window counts back from; None: now
    dry: bool = False  # only find out what the change would need (one question for several calls); write nothing


class Grant:
    """The rows the user said yes to, each at the version the question showed."""

    def __init__(self, rows: Mapping[tuple[str, int], str] | None = None):
        self._rows: dict[tuple[str, int], str] = dict(rows or {})

    def approve(self, needs: Iterable[Need]) -> None:
        """The user said yes to these needs, as shown."""
        for n in needs:
            self._rows[n.key] = n.version

    def add(self, key: tuple[str, int], version: str) -> None:
        """The user said yes to this row at this version (a question asked by lines: the sync's deletions)."""
        self._rows[key] = version

    def covers(self, need: Need) -> bool:
        """Whether the user's yes covers this row at this version."""
        return self._rows.get(need.key) == need.version

    def moved(self, key: tuple[str, int], old: str, new: str) -> None:
        """A row this grant covers was written by the change the grant approved: its yes follows the new
        version (a request that changes one task twice is not asked twice)."""
        if self._rows.get(key) == old:
            self._rows[key] = new

    def rows(self) -> dict[tuple[str, int], str]:
        """The approved rows and their versions (for a token that carries them: MCP's request_state)."""
        return dict(self._rows)


# ---------------------------------------------------------------- what a change set needs


@dataclass(frozen=True)
class Changed:
    """One row of a change set, as the policy sees it."""

    table: str
    key: int | None  # None: a new row
    before: Mapping[str, Any] | None  # None: it is added
    after: Mapping[str, Any] | None  # None: it is deleted
    line: str  # the change in words, for a question ('delete task 3 "old draft"')
    version: str = ""  # the row's version before the change (what an answer is bound to)

    @property
    def deletes(self) -> bool:
        """Removes a row that exists."""
        return self.before is not None and self.after is None

    @property
    def existing(self) -> bool:
        """Changes or removes a row that exists (beyond bookkeeping)."""
        if self.before is None:
            return False
        if self.after is None:
            return True
        return any(self.before.get(k) != self.after.get(k) for k in self.after if k not in BOOKKEEPING)


@dataclass(frozen=True)
class Need:
    """One row that needs the user's yes, and why."""

    rule: Rule
    key: tuple[str, int]
    line: str
    version: str
    named: bool  # the user's words name the row: --yes may grant it
    reason: str = ""  # ASKS, GLITCH: the reason, in words
    total: int = 0  # BULK: the rows changed together, these and the others before them


def lost(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """What the user wrote that this change would lose: fields cleared, notes dropped, a title replaced by
    unrelated words, tags removed, another app's fields dropped (empty: nothing lost)."""
    out = []
    for f in USER_FIELDS:
        if f not in after:
            continue
        old, new = before.get(f), after.get(f)
        if _empty(old) or old == new:
            continue
        if _empty(new):
            out.append(f"{_field_name(f)} removed")
        elif f == "title" and not (_words(old) & _words(new)):
            out.append(f"title replaced ({_short(old)} → {_short(new)})")
        elif f == "notes" and _squash(str(old)) not in _squash(str(new)):
            out.append("notes replaced")
        elif f in ("annotations", "extra") and not _kept(old, new):
            out.append(f"{_field_name(f)} dropped")
        elif f == "tags" and set(old) - set(new or []):
            out.append("tags " + ", ".join(sorted(set(old) - set(new or []))) + " removed")
    return out


def needs(
    changes: Iterable[Changed],
    mandate: Mandate = ALL,
    recent: int = 0,
    by_user: bool = False,
    glitch: str = "",
    asks: str = "",
    made: frozenset[int] = frozenset(),
) -> list[Need]:
    """Everything in a change set that needs a yes, whoever may give it.

    `recent`: other existing rows changed together with these (the request's, or the window's);
    `by_user`: the change is the user's own act elsewhere (a deletion on another device, their own undo), so
    a few deletions need no question; `glitch`: why its deletions look like a fault; `asks`: a reason of its
    own to ask (open subtasks, an import undone); `made`: rows this request added, which it names as its own
    ("add the dentist on friday, then move it to tuesday")."""
    rows = list(changes)
    out: list[Need] = []
    existing = [c for c in rows if c.existing and c.key is not None]
    deletions = [c for c in existing if c.deletes]
    per_table: dict[str, set[int]] = {}
    for c in existing:
        per_table.setdefault(c.table, set()).add(int(c.key))  # type: ignore[arg-type]
    for c in existing:
        key = (c.table, int(c.key))  # type: ignore[arg-type]
        own = c.table == "tasks" and c.key in made
        named_change = own or _names(mandate, c, remove=False)
        bulk = is_bulk(len(per_table[c.table]), recent if c.table == "tasks" else 0)
        if c.deletes and glitch:
            out.append(Need(Rule.GLITCH, key, c.line, c.version, True, glitch))
        elif c.deletes and not (by_user and len(deletions) <= BULK_LIMIT):
            out.append(Need(Rule.DELETE, key, c.line, c.version, own or _names(mandate, c, remove=True)))
        elif (
            c.table == "tasks" and not c.deletes and not named_change and (gone := lost(c.before or {}, c.after or {}))
        ):
            out.append(Need(Rule.OVERWRITE, key, f"{c.line} ({'; '.join(gone)})", c.version, False))
        elif bulk:
            total = len(per_table[c.table]) + (recent if c.table == "tasks" else 0)
            out.append(Need(Rule.BULK, key, c.line, c.version, named_change, total=total))
        elif asks:
            out.append(Need(Rule.ASKS, key, c.line, c.version, named_change, asks))
    if asks and not out:  # a reason to ask whatever the rows (an undo that only puts back what was deleted)
        out = [Need(Rule.ASKS, (c.table, int(c.key)), c.line, c.version, True, asks) for c in rows if c.key is not None]
    return out


def is_bulk(rows: int, recent: int = 0) -> bool:
    """Whether changing `rows` existing rows, with `recent` others changed together, is a large change."""
    return rows + recent > BULK_LIMIT


def bulk_needs(rows: Iterable[tuple[tuple[str, int], str, str, bool]], recent: int = 0) -> list[Need]:
    """The large-change rule for rows known before their changes are planned (the calls of one model reply,
    the ids of one shell command), so one question covers them all: (key, line, version, named) each."""
    rows = list({r[0]: r for r in rows}.values())
    if not is_bulk(len(rows), recent):
        return []
    return [Need(Rule.BULK, key, line, ver, named, total=len(rows) + recent) for key, line, ver, named in rows]


def _names(mandate: Mandate, c: Changed, remove: bool) -> bool:
    """Whether the user's words name this row: a task by id, title or set; a memory when they ask to forget;
    another table's rows (events, preferences, tracked time) only when the words name everything (a command's
    own rows), since no words name them one by one."""
    if c.table == "tasks":
        if remove:
            return mandate.remove.covers(c.before, c.key) and mandate.remove.sure
        return mandate.changes(c.before, c.key)
    if c.table == "memories":
        return mandate.forget
    return mandate.remove.everything if remove else (mandate.change.everything or mandate.remove.everything)


def unmet(found: Iterable[Need], door: Door, grant: Grant | None = None) -> list[Need]:
    """The needs neither the user's answer (`grant`) nor their yes in advance covers."""
    out = []
    for n in found:
        if grant is not None and grant.covers(n):
            continue
        if door.yes and (n.named or n.rule is Rule.GLITCH):
            continue
        out.append(n)
    return out


@dataclass(frozen=True)
class Decision:
    """The policy's answer: run, ask this question, or refuse for this reason."""

    verdict: Verdict
    question: str = ""
    reason: str = ""
    why: list[str] = field(default_factory=list)  # the rules that asked, for the log


def verdict(
    open_needs: list[Need], door: Door, notes: Iterable[str] = (), doing: str = "", reason: str = ""
) -> Decision:
    """Run when nothing is unmet; else ask (a door that can) or refuse with a sentence that says what works."""
    if not open_needs:
        return Decision(Verdict.RUN)
    why = sorted({n.rule.value for n in open_needs})
    if door.ask is not None:
        return Decision(Verdict.ASK, question=question(open_needs, door, notes, doing, reason), why=why)
    return Decision(Verdict.REFUSE, reason=refusal(open_needs, door), why=why)


def question(open_needs: list[Need], door: Door, notes: Iterable[str] = (), doing: str = "", reason: str = "") -> str:
    """The question for these needs: each row once, as it is now, then what else the user should know.
    `doing`: what makes the change, when it is not the request itself ("undo", "redo", "the import")."""
    lines = list(dict.fromkeys(n.line for n in open_needs))
    extra = [x for x in notes if x]
    rules = {n.rule for n in open_needs}
    if len(lines) == 1 and rules == {Rule.DELETE}:  # 'Delete task 3 "old draft"?'
        line = "Delete " + lines[0][7:] if lines[0].startswith("DELETE ") else lines[0][0].upper() + lines[0][1:]
        return f"{line}?" + "".join(f" {x}" for x in extra)
    reason = reason or next((n.reason for n in open_needs if n.reason), "")
    total = max((n.total for n in open_needs if n.rule is Rule.BULK), default=0)
    noun = _noun(open_needs)
    if Rule.GLITCH in rules:
        head = f"{reason[0].upper()}{reason[1:]}, so this would delete:"
    elif reason:
        head = f"{reason[0].upper()}{reason[1:]}; this would:"
    elif Rule.BULK in rules and doing:
        head = f"{doing[0].upper()}{doing[1:]} would change {total} {noun}:"
    elif Rule.BULK in rules:
        scope = f"in {door.window / 60:g} minutes" if door.window else "in one request" if door.turn else "at once"
        head = f"This would change {total} {noun} {scope}:"
    elif Rule.OVERWRITE in rules:
        head = "This would replace or remove what was written on tasks the request did not name:"
    elif rules == {Rule.DELETE}:
        head = f"This would delete {len(lines)} {noun}:"
    else:
        head = f"This would make {len(lines)} changes:"
    shown = lines[:12] + ([f"… and {len(lines) - 12} more"] if len(lines) > 12 else [])
    return head + "\n  " + "\n  ".join(shown) + "".join(f"\n{x}" for x in extra) + "\nGo ahead?"


def refusal(open_needs: list[Need], door: Door) -> str:
    """One sentence: what was not done, why it needs a yes, and what works."""
    rules = {n.rule for n in open_needs}
    count = len({n.key for n in open_needs})
    noun = _noun(open_needs)
    what = open_needs[0].line if count == 1 else f"these {count} {'changes' if noun == 'rows' else noun}"
    verb = "needs" if count == 1 else "need"
    if Rule.OVERWRITE in rules:
        why = "it would lose what the user wrote on a task their words did not name"
    elif Rule.DELETE in rules and not all(n.named for n in open_needs):
        why = "it deletes what the user's words did not name"
    elif Rule.DELETE in rules:
        why = "a deletion"
    elif Rule.BULK in rules:
        total = max((n.total for n in open_needs if n.rule is Rule.BULK), default=0)
        why = f"{total} {_noun(open_needs)} changed, more than {BULK_LIMIT} at once"
    elif Rule.GLITCH in rules:
        why = "deletions while " + next(n.reason for n in open_needs if n.rule is Rule.GLITCH)
    else:
        why = next((n.reason for n in open_needs if n.reason), "it asks first")
    unnamed = any(not n.named and n.rule is not Rule.GLITCH for n in open_needs)
    how = "run it in a terminal to be asked" if unnamed and door.yes else door.how
    return f"{what} {verb} the user's yes ({why}), and no one can answer here, so nothing was changed; {how}"


NOUNS = {"worklog": "tracked times"}  # each table by its name, but this one


def _noun(needs: list[Need]) -> str:
    """What the rows are, in words: "tasks" when they are all tasks, "events" when all events, else "rows"."""
    tables = {n.key[0] for n in needs}
    return NOUNS.get(next(iter(tables)), next(iter(tables))) if len(tables) == 1 else "rows"


# ---------------------------------------------------------------- the description by lines (sync)


@dataclass(frozen=True)
class Effect:
    """What a command would do, in lines, for a door that asks before it knows its rows (the sync's deletions)."""

    deletes: tuple[str, ...] = ()  # tasks deleted or memories forgotten
    changes: tuple[str, ...] = ()  # existing tasks changed
    recent: int = 0  # other existing tasks changed in the bulk window
    glitch: str = ""  # why deletions look like a fault rather than the user's wish ("the server listed none")
    by_user: bool = False  # the user's own act: a deletion made on another device, their own /undo
    asks: str = ""  # a reason to ask whatever the counts ("it undoes an import of 30 tasks")

    @property
    def changed(self) -> int:
        """Existing tasks this would change, with those changed just before."""
        return len(self.changes) + self.recent


def needs_yes(effect: Effect) -> list[str]:
    """The rules an effect by lines falls under (empty: it may run at once); the same rules as `needs`."""
    rows = [Changed("tasks", i, {"line": x}, None, x) for i, x in enumerate(effect.deletes)]
    rows += [Changed("tasks", len(rows) + i, {"line": x}, {"line": ""}, x) for i, x in enumerate(effect.changes)]
    found = needs(rows, ALL, effect.recent, effect.by_user, effect.glitch, effect.asks)
    rules = []
    if any(n.rule is Rule.GLITCH for n in found):
        rules.append(f"{len(effect.deletes)} deletions while {effect.glitch}")
    elif any(n.rule is Rule.DELETE for n in found):
        rules.append("a deletion" if len(effect.deletes) == 1 else f"{len(effect.deletes)} deletions")
    if any(n.rule is Rule.BULK for n in found):
        rules.append(f"{effect.changed} existing tasks changed at once")
    if effect.asks:
        rules.append(effect.asks)
    return rules


def decide(effect: Effect, door: Door, question_text: str = "") -> Decision:
    """Run, ask or refuse, for an effect described by lines."""
    rules = needs_yes(effect)
    if not rules:
        return Decision(Verdict.RUN)
    if door.yes:
        return Decision(Verdict.RUN, why=rules)
    lines = list(dict.fromkeys([*effect.deletes, *effect.changes]))
    asked = question_text or _lines_question(effect, lines)
    if door.ask is not None:
        return Decision(Verdict.ASK, question=asked, why=rules)
    what = " and ".join(rules)
    verb = "needs" if len(rules) == 1 and not rules[0][:1].isdigit() else "need"
    return Decision(
        Verdict.REFUSE, reason=f"{what} {verb} the user's yes, and no one can answer here; {door.how}", why=rules
    )


def _lines_question(effect: Effect, lines: list[str]) -> str:
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


# ---------------------------------------------------------------- helpers


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {} or value in ("[]", "{}")


_WORD = re.compile(r"\w+", re.UNICODE)


def _words(value: Any) -> set[str]:
    return {w.lower() for w in _WORD.findall(str(value or ""))}


def _squash(text: str) -> str:
    return " ".join(text.split())


def _kept(old: Any, new: Any) -> bool:
    """Whether everything in `old` (a JSON list or object, or its text) is still in `new`."""
    a, b = _json(old), _json(new)
    if isinstance(a, list) and isinstance(b, list):
        return all(x in b for x in a)
    if isinstance(a, dict) and isinstance(b, dict):
        return all(k in b for k in a)
    return a == b


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _short(value: Any) -> str:
    text = str(value)
    return json.dumps(text if len(text) <= 40 else text[:39] + "…", ensure_ascii=False)


def _field_name(f: str) -> str:
    return {
        "due_date": "due date",
        "due_time": "due time",
        "start_date": "start date",
        "estimate_minutes": "estimate",
        "recurrence": "repeat",
        "remind_at": "reminder",
        "parent_uid": "parent",
        "extra": "other apps' fields",
    }.get(f, f)
