"""Which tasks the user's own message names, and whether it asks to remove them: read once, by a small rule
set, in code. The safety gate takes the answer as the request's mandate (planner/policy.py): `--yes` covers
a deletion, or a change that loses what the user wrote, only on the tasks named here.

For each clause of the message (split at . ! ? ; and at "but", "then", "instead", and "just" where it does
not follow a negation):

 1. A verb of removing in its plain form: delete, remove, erase, drop, scrap, trash, discard, get rid of,
    throw away (forget, stop remembering, unlearn for memories); clear, clean up, wipe, purge, empty only
    maybe ("clear my list" may mean done).
 2. Not a request when, before the verb in its clause:
      a negation stands (not, n't, never, no, nobody, nothing, without, stop, forbid, under no
      circumstances...; a negation ending an earlier comma fragment reaches on),
      a condition ("if any task tells you to delete...", "whenever"),
      the words are reported or talked about ("the note says to delete", "an instruction to delete",
      "tells you to"),
      the verb is part of what to add ("remind me to delete old emails", "add a task: delete photos"),
      or the clause asks how ("how do I delete a task?") or about the past ("why did you delete it?");
    and not when its object is nothing ("delete no tasks", "remove nothing"), or a field of a task ("remove
    the due date from the passport task": that task is named for a change, not for removal).
    "should I delete..." is a maybe.
 3. What it names: task ids ("task 3", "#3", "tasks 3, 4 and 5"), a set ("all", "everything", "my tasks",
    "#work", "in the work list", "the done ones"), "it"/"that"/"them" (the tasks the conversation just
    talked about, and those the message names elsewhere), or title words (the tasks whose titles hold them).

Tasks named for a change are read the same way from clauses with a verb of changing (move, rename, mark,
set, clear...). English only, like dates.py: other languages name nothing, so the gate asks (or refuses)
rather than takes --yes for them. tests/data/deletion_phrases.json holds the sentences this was written
against, and tests/test_intent.py generates more.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass

from planner.agent.request import did_the_task, tells_done
from planner.policy import NOTHING, Among, Mandate, Named

_CLAUSE = re.compile(r"[.!?;]+|\b(?:but|then|instead|and then)\b|(?<!n't )(?<!not )(?<!ever )\bjust\b", re.I)
_DELETE = re.compile(
    r"\b(delete|remove|erase|drop|scrap|trash|discard|get rid of|throw away|throw out|bin|ditch)\b", re.I
)
_FORGET = re.compile(r"\b(forget|unlearn|stop remembering|no longer remember|don'?t remember)\b", re.I)
_MAYBE = re.compile(r"\b(clear|clean up|clean out|wipe|purge|empty|nuke|cancel everything)\b", re.I)
# Verbs of changing a task that is there (not of adding one: "add a task to buy bread" names no task).
_CHANGE = re.compile(
    r"\b(mark|delet|remov|drop|mov|renam|chang|complet|finish|reschedul|updat|put|set|edit|cancel|clear|push|"
    r"postpon|shift|bump|swap|tick|check off|erase|empty|wipe|fix|correct|retitle|call it|get rid|reopen|undo|"
    r"pin|unpin|untag|done)\w*",
    re.I,
)
_NEGATION = re.compile(
    r"\b(not|never|no|nothing|none|nobody|no one|noone|without|stop|under no circumstances|whatever happens|"
    r"no matter what|forbid\w*|prohibit\w*|ban|banned|refuse|refuses|disallow\w*|prevent)\b|n't\b",
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
    r"|\b(delete|remove|erase|drop|trash|discard|scrap|clear|wipe)\s+(nothing|none|no|zero)\b",
    re.I,
)
_CONDITION = re.compile(r"\b(if|whenever|in case|unless|suppose|supposing|should any|should a)\b", re.I)
_REPORTED = re.compile(
    r"(\b(says?|said|saying|called|named|titled|reads?|writes?|wrote|tells?|told|asks?|asked|instructs?"
    r"|instructed|orders?|ordered|commands?|requests?|instructions?|demands?|wants you|tries to get you)"
    r"(\s+(you|me|us|the planner|the assistant))?(\s+to)?\s*[\"'“‘:]?\s*$)",
    re.I,
)
_CONTENT = re.compile(
    r"\b(remind(s|ed)?\s+(me|us|him|her|them)(\s+to)?|(add|create|make|new|put|write|note|schedule)\s+(down\s+)?"
    r"(a |an |the |one )?(task|todo|to-do|reminder|item|note|entry|event)s?(\s+(to|called|named|titled|saying|that "
    r"says|for))?|to-?do:|task:|reminder:|note:)",
    re.I,
)
_PAST = re.compile(r"^\s*(did|didn'?t|why|when|was|were|has|have|had|who)\b", re.I)  # asks about what happened
_HOW = re.compile(r"^\s*(how|where|what happens|what would happen|is it possible|can i|could i|may i|can we)\b", re.I)
_ADVICE = re.compile(r"^\s*(should|shall|do i need)\b|\b(should|could|must) (i|we)\b", re.I)  # asks what to do
_YES = re.compile(r"^\s*(y|yes|yeah|yep|sure|ok|okay|please|please do|do it|go ahead|confirm\w*|correct)\b", re.I)
_FIELD = re.compile(
    r"^\s*(the |a |an |my |its |this |that |any |every |all )?(due dates?|due times?|dates?|deadlines?|times?|"
    r"reminders?|alarms?|notes?|tags?|labels?|priority|priorities|estimates?|repeats?|recurrences?|start dates?|"
    r"descriptions?|locations?|annotations?|subtasks?|pins?|links?|urls?)\b",
    re.I,
)
_IDS = re.compile(r"(?:\b(?:tasks?|ids?|numbers?|no\.?)\s*|#)((?:\d+)(?:\s*(?:,|and|&|or)\s*#?\d+)*)\b", re.I)
_EVERYTHING = re.compile(
    r"\b(all|everything|every\s+(?:single\s+)?(?:task|one|item|to-?do)|each|the whole list|whole list|the lot|"
    r"(?:my|the|our)\s+(?:tasks|list|to-?dos|to-?do list|task list))\b",
    re.I,
)
_LISTS = re.compile(
    r"(?:[#+]|\b(?:list|tag|project):)([\w-]+)|\b(?:in|on|from|under|tagged|of)\s+(?:the\s+|my\s+)?"
    r"([\w-]+)\s+(?:list|project|tag)\b|\btagged\s+([\w-]+)",
    re.I,
)
_STATUS_SET = re.compile(
    r"\b(done|completed|finished|ticked|cancelled|canceled)\s+(?:tasks|ones|items|to-?dos)\b"
    r"|\b(?:tasks|ones|items|to-?dos)\s+(?:that are |i've |i have |already )*(done|completed|finished|cancelled|canceled)\b",
    re.I,
)
_WHERE = re.compile(r"\b(?:from|in|on|off)\s+(?:my|the|our)\s+(?:tasks|list|to-?dos|to-?do list|task list)\b", re.I)
_STATUS = {
    "done": "done",
    "completed": "done",
    "finished": "done",
    "ticked": "done",
    "cancelled": "cancelled",
    "canceled": "cancelled",
}
_PRONOUN = re.compile(r"\b(it|that|this|them|those|these|both|that one|this one|the other one|the other)\b", re.I)
_STOP = frozenset(
    """a an the my our your his her their its this that these those one ones some any all every each of to from in
    on at for by with and or task tasks todo todos to-do to-dos item items list lists entry entries please
    for me now too also again just thing things stuff old new it them thing called named titled about
    off out up away rid get throw i you we can could would will should do does is are be been was were the
    there here which what one's today tomorrow week day have has had having doesn't don't didn't isn't aren't
    won't can't not no anymore any more need needs want wants like let lets make it's that's there's i'm
    date dates due deadline deadlines time times reminder reminders note notes tag tags label labels priority
    estimate repeat start description location monday tuesday wednesday thursday friday saturday sunday
    mon tue tues wed thu thur thurs fri sat sun january february march april may june july august september
    october november december jan feb mar apr jun jul aug sep sept oct nov dec morning afternoon evening tonight
    noon midnight next last this weekend month year am pm as done finished completed""".split()
)
# Words that talk about a field of a task: a message that says "the report has no deadline any more" asks to
# change the report, though it has no verb of changing.
_FIELDWORD = re.compile(
    r"\b(due|dates?|deadlines?|times?|reminders?|alarms?|notes?|tags?|labels?|priority|estimates?|repeats?|"
    r"recurrences?|start dates?|descriptions?|locations?|titles?|names?)\b",
    re.I,
)
# A new day said of a task, without a field word: "actually the bank call is on thursday", "it's now on the 12th".
_NEW_DAY = re.compile(
    r"\b(?:is|are|it's|its|'s)\s+(?:now\s+|actually\s+)?on\s+(?:the\s+)?(?:\d|(?:today|tomorrow|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun|next|this|"
    r"january|february|march|april|may|june|july|august|september|october|november|december)\b)",
    re.I,
)
_WORD = re.compile(r"[\w'-]+", re.UNICODE)
_OWNERS = frozenset({"my", "the", "our", "your", "this", "that", "a", "an", "their", "his", "her"})
# A task named in passing: "the gym task", "task 3", a quoted title.
_MENTION = re.compile(
    r"\bthe\s+([\w' -]{1,40}?)\s+(?:task|to-?do|item|reminder|one)\b|[\"“']([^\"”']{2,80})[\"”']", re.I
)


class Intent(enum.Enum):
    """What the words say about deleting."""

    ASKED = "asked"
    UNSURE = "unsure"
    NO = "no"


@dataclass(frozen=True)
class Removal:
    """One clause that asks to remove something: its verb, what follows it, and how sure the verb is."""

    verb: str
    obj: str
    sure: bool
    field: bool = False  # the object is a field of a task ("the due date from X"): a change, not a removal


def _clauses(text: str) -> list[str]:
    return [c for c in _CLAUSE.split(text) if c and c.strip()]


def _negated(clause: str, verb_at: int) -> bool:
    """A negation before the verb in its comma fragment, or ending an earlier fragment (and so reaching on)."""
    head = clause[:verb_at]
    if _ANSWER.match(head):
        head = _ANSWER.sub("", head, count=1)
    *earlier, own = head.split(",")
    return bool(_NEGATION.search(own)) or any(_DANGLING.search(f) for f in earlier)


def _not_a_request(clause: str, at: int) -> bool:
    """Rule 2: words before the verb that make it no request (negated, conditional, reported, content, how)."""
    head = clause[:at]
    return bool(
        _negated(clause, at)
        or _CONDITION.search(head)
        or _REPORTED.search(head)
        or _CONTENT.search(head)
        or _PAST.match(clause)
        or _HOW.match(clause)
    )


def removals(text: str, verbs: re.Pattern[str] = _DELETE) -> tuple[list[Removal], bool]:
    """The clauses that ask to remove something, and whether one only asks whether to (advice: a maybe)."""
    found: list[Removal] = []
    advice = False
    for clause in _clauses(text):
        cleaned = _NOT_DELETING.sub(lambda m: " " * len(m.group(0)), clause)
        hits = [(m, True) for m in verbs.finditer(cleaned)]
        if verbs is _DELETE:
            hits += [(m, False) for m in _MAYBE.finditer(cleaned)]
        for m, sure in sorted(hits, key=lambda h: h[0].start()):
            if _not_a_request(cleaned, m.start()):
                continue
            if _ADVICE.search(cleaned[: m.start()]):
                advice = True
                continue
            obj = re.split(r",(?!\s*(?:and\s+)?#?\d)|\band then\b", cleaned[m.end() :], maxsplit=1)[0]
            found.append(Removal(m.group(0).lower(), obj.strip(), sure, bool(_FIELD.match(obj))))
    return found, advice


def reading(text: str, verbs: re.Pattern[str] = _DELETE) -> Intent:
    """ASKED, UNSURE or NO for one message: does it ask to remove something (not a field of one)?"""
    found, advice = removals(text, verbs)
    asked = [r for r in found if not r.field]
    if any(r.sure for r in asked):
        return Intent.ASKED
    if asked or advice:
        return Intent.UNSURE
    return Intent.NO


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


# ---------------------------------------------------------------- which tasks


Titles = dict[int, str]  # task id -> title


def named(phrase: str, tasks: Titles, recent: Iterable[int] = (), sure: bool = True) -> Named:
    """The tasks one phrase names: ids, a set (all, #list, done), pronouns (the recent ones), or title words."""
    ids = {int(n) for group in _IDS.findall(phrase) for n in re.findall(r"\d+", group)}
    lists = frozenset(n for m in _LISTS.findall(phrase) if (n := next(g for g in m if g).lower()) not in _OWNERS)
    statuses = frozenset(_STATUS[next(g for g in m if g).lower()] for m in _STATUS_SET.findall(phrase))
    everything = bool(_EVERYTHING.search(_WHERE.sub(" ", phrase)))  # "milk from my list" is not all of it
    if lists or statuses:
        return Named(frozenset(ids), sets=(Among(lists, statuses),), sure=sure)
    if everything:
        return Named(frozenset(ids), everything=True, sure=sure)
    pronoun = bool(_PRONOUN.search(phrase))
    if pronoun:
        ids |= set(recent)
    rest = re.sub(r"(?:[#+]|\b(?:list|tag|project):)[\w-]+", " ", _IDS.sub(" ", phrase))
    said = [w for w in _WORD.findall(rest.lower()) if _significant(w)]
    alike: set[int] = set()
    if said:
        found, alike = _by_title({_stem(w) for w in said}, tasks)
        # "the calls", "both", an id or "that" say which (or that all of them are meant): no guess is left
        if ids or pronoun or any(_stem(w) != w.strip("'-") for w in said):
            alike = set()
        ids |= found
    return Named(frozenset(ids), sure=sure, alike=frozenset(alike)) if ids else Named(sure=sure)


def _by_title(wanted: set[str], tasks: Titles) -> tuple[set[int], set[int]]:
    """The tasks whose titles hold the most of these words, if that is at least half of them; and of those,
    the ones the words cannot tell apart ("the call" with "call mom" and "call dad": each title holds the
    same of the words, and the titles differ). "call mom and call dad" tells each apart."""
    held = {tid: wanted & {_stem(w) for w in _WORD.findall(title.lower())} for tid, title in tasks.items()}
    best = max(map(len, held.values()), default=0)
    if best == 0 or best * 2 < len(wanted):
        return set(), set()
    found = {tid for tid, words in held.items() if len(words) == best}
    alike: set[int] = set()
    for words in {frozenset(held[tid]) for tid in found}:
        same = {tid for tid in found if held[tid] == words}
        # one title said whole ("complete call mom" beside "call mom back") is that one, no guess
        whole = [
            tid for tid in same if {_stem(w) for w in _WORD.findall(tasks[tid].lower()) if _significant(w)} <= wanted
        ]
        if len({" ".join(_WORD.findall(tasks[tid].lower())) for tid in same}) > 1 and len(whole) != 1:
            alike |= same
    return found, alike


def _significant(word: str) -> bool:
    return bool(word) and word not in _STOP and not word.isdigit()


def _stem(word: str) -> str:
    word = word.strip("'-")
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def mandate(text: str, tasks: Titles, recent: Iterable[int] = (), before: str | None = None) -> Mandate:
    """What this message names: tasks for removal, tasks for a change (a short yes takes the message before).

    "it" and "that" are the tasks the message names in passing ("I do not want the gym task anymore, delete
    it"), else those the conversation just talked about (`recent`)."""
    if before is not None and short_yes(text) and not removals(text)[0]:
        return mandate(before, tasks, recent)
    passing = _mentioned(text, tasks)
    context = sorted(passing) or list(recent)
    found, _ = removals(text)
    remove, change = NOTHING, NOTHING
    for r in found:
        n = named(r.obj, tasks, context, sure=r.sure)
        if r.field:
            change = change | n
        else:
            remove = remove | n
    for clause in _clauses(text):
        if _CONDITION.search(clause) or _REPORTED.search(clause) or _quoted_order(clause):
            continue  # a clause about what someone else says or what might happen names nothing to change
        verbs = [m for m in _CHANGE.finditer(clause) if not _not_a_request(clause, m.start())]
        if verbs:
            change = change | named(clause[verbs[0].end() :], tasks, context)
        elif _FIELDWORD.search(clause) and not _HOW.match(clause):
            change = change | named(clause, tasks, context)  # "the report has no deadline any more"
        elif (day := _NEW_DAY.search(clause)) and not _HOW.match(clause):
            change = change | _titled(clause[: day.start()], tasks)  # "actually the bank call is on thursday"
    if not change.ids and tells_done(text):  # "I called mum": the one task whose own verb it tells was done
        change = change | _titled(text, tasks, done=True)
    forgets = [r for r in removals(text, _FORGET)[0] if not r.field]
    forget = bool(forgets) or any(r.sure and not r.field for r in found)
    shown = tuple((i, tasks[i]) for i in sorted(remove.ids | change.ids) if i in tasks)
    return Mandate(remove=remove, change=change, said=text, forget=forget, titles=shown)


def _titled(phrase: str, tasks: Titles, done: bool = False) -> Named:
    """The one task whose whole title the phrase says, in any order ("the bank call" of "Call the bank"), or
    with `done` whose first word the phrase tells was done and the rest of it said ("I called mum" of "call
    mum"); nothing when no task or more than one is. Never all, a set or a pronoun: a message that only
    tells something ("my birthday is on friday", "I got the flu") names no task it shares a word with."""
    said = {_stem(w) for w in _WORD.findall(phrase.lower()) if _significant(w)}
    fits = []
    for tid, title in tasks.items():
        own = [_stem(w) for w in _WORD.findall(title.lower()) if _significant(w)]
        if done:
            if own and did_the_task(phrase, title) and set(own[1:]) <= said:
                fits.append(tid)
        elif own and set(own) <= said:
            fits.append(tid)
    return Named(frozenset(fits)) if len(fits) == 1 else NOTHING


def _mentioned(text: str, tasks: Titles) -> set[int]:
    """Tasks the message names in passing: by id, "the gym task", or a quoted title."""
    ids = {int(n) for group in _IDS.findall(text) for n in re.findall(r"\d+", group)}
    for m in _MENTION.finditer(text):
        phrase = next(g for g in m.groups() if g)
        wanted = {_stem(w) for w in _WORD.findall(phrase.lower()) if _significant(w)}
        if wanted:
            ids |= _by_title(wanted, tasks)[0]
    return {i for i in ids if i in tasks}


def _quoted_order(clause: str) -> bool:
    """A clause whose removal verb was turned down as reported, conditional or negated: it names nothing."""
    return any(_not_a_request(clause, m.start()) for m in _DELETE.finditer(clause))
