"""Whether a reply claims a change that the turn did not make.

After the model's final reply the turn knows which calls succeeded. A reply
that says something was added, saved, remembered, completed, moved, renamed or
deleted, in a turn where no call that does that succeeded, tells the user what
the tool results do not show. The check is deterministic: the claim verbs in
CLAIM_VERBS, the sentence forms in which they claim, and the turn's outcomes.

    "I added buy milk."                  claim: add      backed by add_task or remember
    "Noted: Ana lives in Lisbon."        claim: save     backed by remember, add_task or update_task
    "Got it, I'll remember that."        claim: remember backed by remember
    "The task has been moved."           claim: change   backed by update_task
    "I haven't added anything."          no claim (negated)
    "Shall I delete it?"                 no claim (a question)
    "milk, which I added earlier"        no claim about this turn (an earlier one, taken on trust)
    "You finished 3 tasks."              no claim (the user did it)
    'Your list: "Deleted scenes"'        no claim (quoted text is a title, not a verb)

What it leaves out: it reads English; it checks the kind of change, not which
task changed (a reply naming the wrong task is the critic's to catch); "I'll
add it" is a promise, not a claim, and only remembering is read in the future
tense ("I'll remember that" is how models say they saved a fact).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from planner.agent.recovery import INVENTED
from planner.agent.replies import describe
from planner.agent.turn import ToolCall

_ADD = frozenset({"add_task", "remember", "add_event", "add_preference"})
_STATUS = frozenset({"complete_task", "cancel_task", "reopen_task"})
_UPDATE = frozenset({"update_task", "schedule_task"})
_TRACK = frozenset({"start_task", "stop_task"})  # tracked time: "noted, three hours on the report"
_WRITE = _ADD | _STATUS | _UPDATE | {"rename_list"} | _TRACK
_DONE = frozenset({"complete_task"})

# The claim verbs: each past form, the calls that make it true, and what the user is told when none ran.
CLAIM_VERBS: dict[str, tuple[frozenset[str], str]] = {
    "added": (_ADD, "nothing was added"),
    "created": (_ADD, "nothing was added"),
    "saved": (_WRITE, "nothing was saved"),
    "stored": (_WRITE, "nothing was saved"),
    "recorded": (_WRITE, "nothing was saved"),
    "noted": (_WRITE, "nothing was saved"),
    "remembered": (frozenset({"remember"}), "nothing was remembered"),
    "memorized": (frozenset({"remember"}), "nothing was remembered"),
    "memorised": (frozenset({"remember"}), "nothing was remembered"),
    "completed": (_DONE, "no task was marked done"),
    "finished": (_DONE, "no task was marked done"),
    "ticked off": (_DONE, "no task was marked done"),
    "checked off": (_DONE, "no task was marked done"),
    "cancelled": (frozenset({"cancel_task"}), "no task was cancelled"),
    "canceled": (frozenset({"cancel_task"}), "no task was cancelled"),
    "reopened": (frozenset({"reopen_task"}), "no task was reopened"),
    "marked": (_STATUS | {"update_task"}, "no task was changed"),
    "moved": (_UPDATE, "no task was changed"),
    "rescheduled": (_UPDATE, "no task was changed"),
    "postponed": (_UPDATE, "no task was changed"),
    "pinned": (frozenset({"schedule_task"}), "no task was pinned"),
    "planned": (frozenset({"plan_day", "schedule_task"}), "nothing was planned"),
    "planed": (frozenset({"plan_day", "schedule_task"}), "nothing was planned"),  # as the 1.5B spells it
    "booked": (frozenset({"schedule_task", "add_event"}), "nothing was booked"),
    "blocked": (frozenset({"schedule_task", "add_event", "add_preference"}), "nothing was blocked out"),
    "renamed": (_UPDATE | {"rename_list"}, "nothing was renamed"),
    "changed": (_UPDATE | _STATUS | {"rename_list", "add_preference"}, "nothing was changed"),
    "edited": (_UPDATE, "no task was changed"),
    "updated": (_UPDATE | {"remember", "rename_list"}, "nothing was changed"),
    "set": (_UPDATE | _ADD, "nothing was set"),
    "scheduled": (_UPDATE | {"add_task", "add_event"}, "nothing was scheduled"),
    "deleted": (frozenset({"delete_task", "forget"}), "nothing was deleted"),
    "removed": (frozenset({"delete_task", "forget", "update_task", "cancel_task"}), "nothing was removed"),
    "forgot": (frozenset({"forget"}), "nothing was forgotten"),
    "forgotten": (frozenset({"forget"}), "nothing was forgotten"),
    # undo_last_change is offered to MCP clients only: in the terminal undoing is the user's /undo.
    "undid": (frozenset({"undo_last_change"}), "nothing was undone"),
    "undone": (frozenset({"undo_last_change"}), "nothing was undone"),
    "reverted": (frozenset({"undo_last_change"}), "nothing was undone"),
}
# "I'll remember that": the one future form read as a claim.
_FUTURE_REMEMBER = (_WRITE, "nothing was remembered")

_VERB = "|".join(sorted((re.escape(v).replace(r"\ ", r"\s+") for v in CLAIM_VERBS), key=len, reverse=True))
_ADVERBS = r"(?:\s+(?:just|now|also|already|successfully|quickly|gone\s+ahead\s+and|went\s+ahead\s+and))*"
_ACK = r"(?:(?:ok(?:ay)?|done|great|sure|got\s+it|alright|all\s+set|perfect|no\s+problem|yes|and|then)\W+)*"
# The sentence forms that claim: "I (have) added", "Added ...", "Task added", "has been added", "is now added".
_FORMS = [
    re.compile(rf"\bI(?:'ve|\s+have|\s+had)?{_ADVERBS}\s+(?P<verb>{_VERB})\b", re.I),
    re.compile(rf"^\W*{_ACK}(?P<verb>{_VERB})\b", re.I),
    re.compile(rf"^\W*{_ACK}(?:the\s+|your\s+)?(?:task|tasks|reminder|memory|fact|note)\s+(?P<verb>{_VERB})\b", re.I),
    re.compile(rf"\b(?:has|have|had)\s+(?:now\s+|also\s+)?been\s+(?:\w+\s+)?(?P<verb>{_VERB})\b", re.I),
    re.compile(rf"\b(?:is|are|was|were)\s+(?:now|successfully|just)\s+(?P<verb>{_VERB})\b", re.I),
]
# "Added milk and deleted the gym task": a claim verb joined to a claim before it in the sentence.
_CHAINED = re.compile(rf"(?:,|\band|\bthen|\balso)\s+(?:I(?:'ve|\s+have)?\s+)?(?:also\s+)?(?P<verb>{_VERB})\b", re.I)
_REMEMBER = re.compile(
    r"\bI(?:'ll|\s+will|'m\s+going\s+to|\s+am\s+going\s+to){_adv}\s+(?P<verb>remember|keep\s+(?:that|this|it)\s+in\s+mind"
    r"|make\s+a\s+note)\b".replace("{_adv}", _ADVERBS),
    re.I,
)
_NEGATION = re.compile(r"\b(?:not|never|no|nothing|none|neither|nor|cannot|unable|failed|without|n't)\b|n't\b", re.I)
_CONTRAST = re.compile(r"\b(?:but|however|although|though|instead|while)\b", re.I)
_CONDITION = re.compile(r"\b(?:if|once|unless|whether|when\s+you|after\s+you)\b", re.I)
# The sentence speaks of an earlier turn: trusted, since this turn cannot see what earlier ones did.
_EARLIER = re.compile(
    r"\b(?:earlier|before|previously|already|last\s+time|yesterday|ago|in\s+(?:the|our)\s+(?:last|previous)"
    r"|you\s+asked\s+me\s+to)\b",
    re.I,
)
# A participle used as an adjective: "your completed tasks", "added items".
_ADJECTIVE = re.compile(r"\s+(?:tasks|items|ones|memories|facts|things|reminders)\b", re.I)
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”|‘[^’\n]*’|`[^`\n]*`|(?<!\w)\'[^\'\n]*\'(?!\w)')
_SENTENCE = re.compile(r"[^.!?;\n]+[.!?;]*")


@dataclass(frozen=True)
class Claim:
    """One change a reply says happened: the words that say it, and what backs it."""

    words: str  # the sentence, as the reply says it
    verb: str  # the claim verb in it ("added")
    tools: frozenset[str]  # a successful call of one of these makes it true
    none: str  # what is true when none ran: "nothing was added"


def claims(reply: str) -> list[Claim]:
    """Every change the reply says this turn made, in order."""
    text = _QUOTED.sub(" ", reply.replace("’", "'").replace("*", ""))
    out = []
    for m in _SENTENCE.finditer(text):
        sentence = m.group().strip()
        if not sentence or sentence.endswith("?") or _EARLIER.search(sentence):
            continue
        found: list[Claim] = []
        for form in [*_FORMS, _REMEMBER, _CHAINED]:
            if form is _CHAINED and not found:
                break
            for hit in form.finditer(sentence):
                claim = _claim(sentence, hit, form is _REMEMBER)
                if claim and claim.verb not in {c.verb for c in found}:
                    found.append(claim)
        out += found
    return out


def _claim(sentence: str, hit: re.Match[str], future: bool) -> Claim | None:
    before = sentence[: hit.start("verb")]
    scope = _CONTRAST.split(before)[-1]  # "I couldn't find it, but I added one": only what follows "but"
    scope = re.sub(r"\bno\s+problem\b", "", scope, flags=re.I)
    after = sentence[hit.end("verb") :]
    if _NEGATION.search(scope) or _CONDITION.search(scope) or re.match(r"\W*(?:nothing|no|none)\b", after, re.I):
        return None
    if not future and _ADJECTIVE.match(after):
        return None
    verb = "remember" if future else " ".join(hit.group("verb").lower().split())
    tools, none = _FUTURE_REMEMBER if future else CLAIM_VERBS[verb]
    return Claim(sentence, verb, tools, none)


# "and set its priority to high", "with high priority": a priority the reply says a task has.
_PRIORITY = re.compile(
    r"\bpriority(?:\s*:\s*|\s+(?:(?:is|was)\s+(?:now\s+)?|to\s+|of\s+|as\s+)?)(?P<a>high|medium|low)\b"
    r"|\b(?P<b>high|medium|low)[\s-]+priority\b",
    re.I,
)


def _priorities(value: Any, depth: int = 0) -> set[str]:
    # Every priority a tool result shows, however deep (a task, a list of tasks).
    if depth > 6:
        return set()
    if isinstance(value, dict):
        own = {value["priority"]} if isinstance(value.get("priority"), str) else set()
        return own.union(*(_priorities(v, depth + 1) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_priorities(v, depth + 1) for v in value))
    return set()


def _field_claims(reply: str, calls: list[ToolCall]) -> list[Claim]:
    """A priority the reply says this turn gave a task, that no tool result of this turn shows (the real 1.5B
    said "and set its priority to high" of a task the guards had added without the priority nobody asked
    for). Only in a sentence that claims a change: "your high priority task" or an offer claims nothing."""
    shown = set().union(*(_priorities(c.result) for c in calls if c.ok)) if calls else set()
    out = []
    text = re.sub(r"[\"'“”‘’](high|medium|low)[\"'“”‘’]", r"\1", reply, flags=re.I)  # 'set to "high"': a value
    for m in _SENTENCE.finditer(_QUOTED.sub(" ", text)):
        sentence = m.group().strip()
        if not claims(sentence):
            continue
        for hit in _PRIORITY.finditer(sentence):
            said = (hit["a"] or hit["b"]).lower()
            if said not in shown:
                out.append(Claim(sentence, "priority", frozenset(), f"no result shows a {said} priority"))
                break
    return out


def unbacked(reply: str, calls: list[ToolCall]) -> list[Claim]:
    """The reply's claims that no successful call of this turn backs, and priorities no result shows."""
    done = {c.name for c in calls if c.ok}
    return [c for c in claims(reply) if not (c.tools & done)] + _field_claims(reply, calls)


def what_changed(calls: list[ToolCall], missing: list[Claim]) -> str:
    """One line for the user: what the unbacked claims got wrong, and what the turn did change."""
    writes = [c for c in calls if c.ok and c.ran and c.mutating and isinstance(c.result, dict)]
    if not writes:
        return "Nothing was changed."
    said = "; ".join(dict.fromkeys(c.none for c in missing)) or "nothing else was changed"
    did = " ".join(dict.fromkeys(describe(str(c.name), _plain(c.result)) for c in writes))
    return f"{said[0].upper()}{said[1:]}. What did change: {did}"


def _plain(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "note"}


# ---------------------------------------------------------------- tool names in a reply

_ARG_WORDS = {"title", "due_date", "due_time", "priority", "tags", "notes", "repeat", "remind", "fact", "id", "status"}
_ABOUT_TOOLS = re.compile(r"\b(?:tools?|functions?|api)\b", re.I)


def _tool_talk(names: set[str]) -> re.Pattern[str]:
    words = "|".join(sorted(map(re.escape, names | INVENTED), key=len, reverse=True))
    args = "|".join(sorted(map(re.escape, _ARG_WORDS), key=len, reverse=True))
    return re.compile(
        rf"\b[a-z]+_[a-z_]+\b|[`\"']?\b(?:{words})\b[`\"']?\s+(?:tool|function)\b|[`\"'](?:{words})[`\"']"
        rf"|\b(?:call|calling|use|using|run|invoke)\s+(?:the\s+)?[`\"']?(?:{words})\b"
        rf"|[`\"'](?:{args}|\w+)[`\"']\s+(?:field|argument|parameter)s?\b|\b(?:{args})\s+(?:argument|parameter)s?\b",
    )


def talks_tools(reply: str, request: str, names: set[str]) -> bool:
    """Whether a reply tells the user tool or argument names (update_task, the "priority" field) unasked."""
    if _ABOUT_TOOLS.search(request) or any(re.search(rf"\b{re.escape(n)}\b", request) for n in names if "_" in n):
        return False
    said = set(re.findall(r"\b[a-z]+_[a-z_]+\b", request.lower()))  # the user's own snake_case words may come back
    return any(m.group() not in said for m in _tool_talk(names).finditer(reply))


def without_tool_talk(reply: str, names: set[str]) -> str:
    """The reply without its sentences that name tools or arguments."""
    talk = _tool_talk(names)
    kept = [s.strip() for s in re.findall(r"[^.!?\n]+[.!?]*", reply) if s.strip() and not talk.search(s)]
    return " ".join(kept)
