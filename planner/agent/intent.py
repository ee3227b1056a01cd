"""Whether the user's own words ask to delete a task or forget a memory: read once, by a small rule set.

A deletion needs the user's request in this message (or a short yes to one
just made) and then their y/N. The rules, in order, for each clause of the
message (split at . ! ? ; and at "but", "then", "just", "instead"):

 1. A verb of deleting in its plain form: delete, remove, erase, drop, scrap,
    trash, discard, get rid of (forget, stop remembering, unlearn for
    memories). "removed" or "deleted" tell of the past and ask nothing.
 2. Not when a negation stands before it in the clause: not, n't, never, no,
    nothing, none, without, stop, under no circumstances, whatever happens.
    A negation that ends its fragment ("do not, whatever a task says,
    delete") reaches across the commas; "no," or "never mind," opening the
    clause answers a question and negates nothing.
 3. Not in senses that delete nothing: "drop me a line / a note / a summary",
    "drop by", "drop off", "remove" or "delete" with "nothing"/"none" as
    its object, and not words reported ("the task that says delete all").
 4. A question about the past ("did you delete", "why was it removed") asks
    nothing; one about what the user should do ("should I delete") is
    UNSURE, and so is a verb that may or may not mean deleting (clear, clean
    up, wipe, purge, empty).

    ASKED   the user asked for it: the deletion may go on to their y/N
    UNSURE  it may be meant: the user is asked even under --yes, and where
            no one can be asked it is refused
    NO      nothing in the words asks for it: refused, the model told why

English only, like dates.py; words in other languages read as NO, so the
planner refuses rather than deletes. tests/data/deletion_phrases.json holds
the tricky sentences this was written against, each a test.
"""

from __future__ import annotations

import enum
import re

_CLAUSE = re.compile(r"[.!?;]+|\b(?:but|then|just|instead|and then)\b", re.I)
_DELETE = re.compile(r"\b(delete|remove|erase|drop|scrap|trash|discard|get rid of|throw away|throw out)\b", re.I)
_FORGET = re.compile(r"\b(forget|unlearn|stop remembering|no longer remember|don'?t remember)\b", re.I)
_MAYBE = re.compile(r"\b(clear|clean up|clean out|wipe|purge|empty|nuke|cancel everything)\b", re.I)
_NEGATION = re.compile(
    r"\b(not|never|no|nothing|none|without|stop|under no circumstances|whatever happens|no matter what)\b"
    r"|n't\b",
    re.I,
)
# A negation reaches past its comma when nothing but these follows it in its fragment ("please do not,
# whatever it says, delete"; "under no circumstances should you, ..., delete"), not when it has a verb of
# its own ("I do not want it any more, delete it").
_DANGLING = re.compile(
    r"(\b(not|never|no)|n't)((\s+(should|shall|would|will|could|can|must|you|we|i|ever|at|all|please|circumstances"
    r"|case|any|be|to|do|does|did|ever))*)\s*$",
    re.I,
)
_ANSWER = re.compile(r"^\s*(no|nope|never mind|nevermind|no worries|not that one|not this one)\s*[,:-]", re.I)
_NOT_DELETING = re.compile(
    r"\bdrop\s+(me|us|him|her|them)\b|\bdrop\s+(by|in|off|a line|a note|a message)\b"
    r"|\b(delete|remove|erase|drop)\s+(nothing|none)\b",
    re.I,
)
_PAST = re.compile(r"^\s*(did|didn'?t|why|when|was|were|has|have|had|who)\b", re.I)  # asks about what happened
_ADVICE = re.compile(r"^\s*(should|shall|do i need)\b|\b(should|could|must) (i|we)\b", re.I)  # asks what to do
_REPORTED = re.compile(r"\b(says?|said|saying|called|named|titled|reads?|writes?|wrote)\s*[\"'“‘:]?\s*$", re.I)
_YES = re.compile(r"^\s*(y|yes|yeah|yep|sure|ok|okay|please|please do|do it|go ahead|confirm\w*|correct)\b", re.I)


class Intent(enum.Enum):
    """What the words say about deleting."""

    ASKED = "asked"
    UNSURE = "unsure"
    NO = "no"


def _clauses(text: str) -> list[str]:
    return [c for c in _CLAUSE.split(text) if c and c.strip()]


def _negated(clause: str, verb_at: int) -> bool:
    """A negation before the verb in its comma fragment, or ending an earlier fragment (and so reaching on)."""
    head = clause[:verb_at]
    if _ANSWER.match(head):
        head = _ANSWER.sub("", head, count=1)
    *earlier, own = head.split(",")
    return bool(_NEGATION.search(own)) or any(_DANGLING.search(f) for f in earlier)


def reading(text: str, verbs: re.Pattern[str] = _DELETE) -> Intent:
    """ASKED, UNSURE or NO for one message, by the rules above."""
    found = Intent.NO
    for clause in _clauses(text):
        cleaned = _NOT_DELETING.sub(" ", clause)
        for m in verbs.finditer(cleaned):
            if _negated(cleaned, m.start()) or _REPORTED.search(cleaned[: m.start()]):
                continue  # negated, or words reported ("the task that says delete everything")
            if _PAST.match(cleaned):
                continue
            if _ADVICE.search(cleaned[: m.start()]):
                found = Intent.UNSURE if found is Intent.NO else found
                continue
            return Intent.ASKED
        if found is Intent.NO and verbs is _DELETE:
            maybe = _MAYBE.search(cleaned)
            if maybe and not _negated(cleaned, maybe.start()):
                found = Intent.UNSURE
    return found


def deletion(text: str, before: str | None = None) -> Intent:
    """Whether this message asks to delete a task; a short yes counts when the message before asked for it."""
    said = reading(text)
    if said is Intent.NO and before is not None and short_yes(text):
        return reading(before)
    return said


def forgetting(text: str, before: str | None = None) -> Intent:
    """Whether this message asks to forget a memory (a deletion of one counts too)."""
    said = max(reading(text, _FORGET), reading(text), key=_rank)
    if said is Intent.NO and before is not None and short_yes(text):
        return max(reading(before, _FORGET), reading(before), key=_rank)
    return said


def short_yes(text: str) -> bool:
    """A short yes ("yes", "ok do it"): an answer to the question just asked."""
    return bool(_YES.match(text)) and len(text.split()) <= 6 and not _DELETE.search(text)


def _rank(intent: Intent) -> int:
    return {Intent.NO: 0, Intent.UNSURE: 1, Intent.ASKED: 2}[intent]
