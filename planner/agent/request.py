"""What a user's message asks of the planner, read in code: which tool groups it needs, and whether it
asks for a change.

    "add milk tomorrow"                    read, change     (a verb of adding; a date)
    "what's on my list?"                   read             (a plain question)
    "plan my day tomorrow"                 read, plan       (asks: plan)
    "my sister Ana lives in Lisbon"        read, memory     (tells a fact about the user)
    "how many tasks did I finish in May?"  read, lookup     (counts past work)
    "and the gym on thursday"              read, change     (goes on from the request before)

The groups are the registry's (tools/registry.py GROUPS): reading tasks is always sent; the others when
the words call for them, like dates are read in code (dates.py): deterministic and tested over a corpus
of phrasings (tests/test_request.py, tests/data/request_phrases.json). Each group chosen carries the
reason, which /trace shows. A model that calls a tool of a group not sent gets an error naming it, and
the next step sends that group (agent/loop.py), so a reading that misses costs one step, not the request.

`wants` says which changes a message asks for (add, change, plan, remember), so that a request that
ends with none made is not taken for a success (agent/loop.py asks the model once more).

Trade-offs, admitted: English only, like dates.py; the rules err towards sending a group (a tool too
many costs tokens, a tool missing costs a step); a plain question never gets the change group, so a
question that is really a request ("can you add milk?") is read by its verb, not its question mark.
The safety gate's reading of which task the words name (agent/intent.py) is meant to sit beside these.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

ALWAYS = "read"

# -- the words, by what they ask for (stems: "moving", "rescheduled" and "deletes" ask as much as "move")

_ADD = re.compile(
    r"\b(add|create|new task|put|remind me|note down|jot|i need to|i have to|i must|i should|don'?t let me forget|"
    r"to-?do|book|sign up|register|schedul)\w*",
    re.I,
)
_CHANGE = re.compile(
    r"\b(mark|tick|check off|finish|complet|done with|delet|remov|drop|cancel|reopen|renam|call it|mov|chang|"
    r"updat|edit|push|postpon|reschedul|shift|bump|swap|set\b|clear|instead|actually|not .* but|undo)\w*",
    re.I,
)
# A task's fields: with a verb of adding they are the new task's ("add the report, due friday, about 2 hours"),
# without one they change a task ("the report is due friday")
_FIELDS = re.compile(
    r"\b(due\b|priorit|urgent|tag|label|repeat|every\b|estimat|takes?|will take|hours?|minutes?|subtask|step of)\w*",
    re.I,
)
_ESTIMATE = re.compile(r"^(?:hours?|minutes?|took)$")  # plan words that, with a verb of adding, are its estimate
# "I bought the milk", "we paid the rent", "called mum": telling that something is done
_DID = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|so|well|yes|oh|and)\W+)*(?:i|we)\s+(?:just\s+|already\s+|finally\s+)?"
    r"((?!(?:need|feed|speed|seed|bleed|breed|proceed|succeed|exceed)\b)\w{2,}ed|bought|did|paid|sent|wrote|got|"
    r"made|went|took|rang|read|ate|fed|gave|sold|met|saw|spoke|ran|"
    r"found|brought|picked up|handed in|dropped off)\b",
    re.I,
)
_PLAN = re.compile(
    r"\b(plan|plans|planned|planning|schedul\w*|free time|free slots?|find time|time for|slots?|calendar|"
    r"appointments?|meetings?|events?|busy|block|pin|my day|my week|day look|week look|prefer\w*|avoid|fit|"
    r"when can i|when am i free|free|"
    r"starting|start (?:on|working|the)|working on|i'?m on|clock|track\w*|took|hours?|minutes?|stop(?:ped|ping)?|"
    r"working hours|mornings?|afternoons?|evenings?|focus|deep work|at \d\w*|\d\s*(?:am|pm)|\d:\d\d)\b",
    re.I,
)
_REMEMBER = re.compile(
    r"\b(remember|forget|recall|note that|keep in mind|don'?t forget that|know about me|about me|"
    r"what do you know|who am i|who is my|who's my|what'?s my|where does my|where do i|my (?:\w+ )?"
    r"(?:is|are|was|were|lives?|works?|likes?|loves?|hates?|has|had|called|named)|i(?:'m| am) "
    r"(?:allergic|vegetarian|vegan|married|from|a|an)|i (?:like|love|hate|prefer|live|work|moved|always|never|"
    r"usually|can'?t|cannot|don'?t eat|don'?t like)|my (?:birthday|favourite|favorite|allergy|address|partner|"
    r"wife|husband|sister|brother|mum|mom|dad|mother|father|friend|boss|dentist|doctor|son|daughter|kids?|"
    r"family|name))\b",
    re.I,
)
_LOOKUP = re.compile(
    r"\b(how many|how much|how often|count|number of|when did i|last time|history|statistic|average|total|"
    r"most|least|look up|wikipedia|encyclop|who was|who invented|capital of|what is an?|tell me about|"
    r"what did i (?:do|finish|complete)|did i finish)\w*",
    re.I,
)
_DATE = re.compile(
    r"\d|\b(today|tonight|tomorrow|tmrw|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun|next week|this week|weekend|january|february|march|april|"
    r"june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|"
    r"end of|noon|midnight|morning|afternoon|evening)\b",
    re.I,
)
_QUESTION = re.compile(
    r"^\s*(what|which|when|where|who|whom|whose|why|how|do|does|did|is|are|am|was|were|have|has|had|any|anything)"
    r"\b",
    re.I,
)
_ASKING = re.compile(
    r"^\s*(could|can|would|will|please|pls|kindly|how about|what about|what if|why not|why don'?t you)\b"
    r"|\b(can|could|would) you\b",
    re.I,
)
_GOES_ON = re.compile(
    r"^\s*(?:(?:and|also|plus|oh|ok(?:ay)?|so|well|hmm|um|now|then|actually|wait|sorry|no|yes|yeah)\b[\s,!.-]*)+", re.I
)
_SMALL_TALK = re.compile(
    r"^\s*(hi|hello|hey|hiya|good (morning|afternoon|evening)|thanks?|thank you|cheers|bye|goodbye|ok|okay|"
    r"great|cool|nice|perfect|no|nope|yes|yep|sure)\b[\s\w,!.'?]{0,30}$",
    re.I,
)
# The words of small talk a request may open with ("ok add milk", "great, plan my day", "no, move it to monday")
_OPENER = re.compile(
    r"^\s*(?:(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening)|thanks?|thank you|cheers|ok(?:ay)?|great|"
    r"cool|nice|perfect|no|nope|yes|yep|yeah|sure|oh|so|well|and)\b[\s,!.]*)+",
    re.I,
)


def _small_talk(text: str) -> bool:
    """Small talk and nothing more: "thanks!", "ok cool", "no thanks"; not "ok add milk" or "okay I called dad",
    where what follows the opening words asks for something of its own."""
    if not _SMALL_TALK.match(text):
        return False
    rest = _OPENER.sub("", text, count=1)
    return rest == text or not rest.strip() or not wants(rest)


_TASK_WORDS = re.compile(
    r"\b(tasks?|list|to-?\s?dos?|due|overdue|agenda|week|today|tomorrow|tonight|finish\w*|done|open|left|"
    r"coming up|have to do|plans?|day|busy|free)\b",
    re.I,
)


_WH = re.compile(r"^\s*(what|which|when|where|who|whom|whose|why|how)\b", re.I)


def _question(text: str) -> bool:
    """A plain question: it asks about things, it asks no one to do anything. Without a question mark only
    a question word counts ("and which of them are urgent"): "do the dishes" is no question."""
    sentences = [p for p in re.split(r"(?<=[.?!])\s+", text.strip()) if p.strip()] or [text]
    return all(_asks(_GOES_ON.sub("", p)) for p in sentences)  # "what's on tomorrow? plan it": a request


def _asks(text: str) -> bool:
    asks = text.rstrip().endswith("?") and bool(_QUESTION.match(text)) or bool(_WH.match(text))
    return asks and not _ASKING.search(text)


@dataclass(frozen=True)
class Selection:
    """The tool groups one model call gets, each with why (for /trace)."""

    groups: tuple[str, ...]  # in GROUPS order
    why: dict[str, str] = field(default_factory=dict)

    def line(self) -> str:
        """One line for /trace: 'read (always), change (the words ask: "add")'."""
        return ", ".join(f"{g} ({self.why.get(g, '')})" if self.why.get(g) else g for g in self.groups)


def _found(pattern: re.Pattern[str], text: str) -> str | None:
    m = pattern.search(text)
    return m.group(0).strip().lower() if m else None


# Where a message says several things: "add milk, and tag the report work"
_CLAUSES = re.compile(r"[,;.!]+\s*|\s+(?:and|then|also)\s+", re.I)
# Adding to a task that is there, not a new task: "add a note to the dentist task", "put the report on friday"
_TO_A_TASK = re.compile(
    r"\b(?:add|put)\s+(?:a |an |the )?(?:tags?|notes?|labels?|estimates?|subtasks?|steps?|due date|deadline|"
    r"priority|reminders?|\d+\s*(?:minutes?|mins?|hours?|hrs?))\b|\b(?:add|put)\b.*\b(?:to|on|onto|into)\s+"
    r"(?:the|my|that|this)\s+\w+",
    re.I,
)


_NAMES_A_TASK = re.compile(r"\b(?:the|my|that|this|our)\s+\w+", re.I)


def _beside_adding(text: str) -> str:
    """Of a message that adds a task, the clauses about a task that is there: beside a verb of adding, a
    clause that names a task ("and tag the report work") speaks of one that is there; one that does not
    ("it will take about 2 hours", "due thursday", "urgent"), of the new task's fields."""
    clauses = [c for c in _CLAUSES.split(text) if c.strip()] or [text]
    return " ".join(c for c in clauses if not _ADD.search(c) and _NAMES_A_TASK.search(c))


def _reasons(text: str) -> dict[str, str]:
    """The groups the words of one message call for (besides read), each with the words that did."""
    out: dict[str, str] = {}
    question = _question(text)
    add = None if question else _found(_ADD, text)
    other = _beside_adding(text) if add else text
    if not question:
        if add:
            out["add"] = f'the words ask: "{add}"'
        if said := _found(_CHANGE, text) or _found(_FIELDS, other) or (_found(_TO_A_TASK, text) if add else None):
            out["change"] = f'the words ask: "{said}"'
        elif add:  # a verb of adding and no change: the dates and fields are the new task's own
            pass
        elif (did := _DID.search(text)) is not None:
            out["change"] = f'tells of something done: "{did.group(1).lower()}"'
        elif _DATE.search(text) and not _small_talk(text) and not _PLAN_ASK.search(text):
            out["add"] = out["change"] = f'a date: "{_found(_DATE, text)}"'  # a new task's, or one's new date
    plan = _found(_PLAN, other) or _found(_PLAN_ASK, text)
    if not plan and (said := _found(_PLAN, text)) and not _ESTIMATE.match(said):  # "about 2 hours": its estimate
        plan = said
    if plan:
        out["plan"] = f'the words ask: "{plan}"'
    if said := _found(_REMEMBER, text):
        out["memory"] = f'about the user: "{said}"'
    elif question and not _TASK_WORDS.search(text) and not _small_talk(text):
        out["memory"] = "a question the task list may not answer"
    if said := _found(_LOOKUP, text):
        out["lookup"] = f'the words ask: "{said}"'
    if not out and not question and not _small_talk(text):  # "water the plants": a task, said bare
        out["add"] = out["change"] = "a request, not a question"
    for want in wants(text):  # what the words ask to do always comes with the tools that do it
        out.setdefault(WANTS[want], f"the words ask to {want}")
    if "change" in out and "add" not in out and (new := _a_new_task(text)):
        # a change may need a task made first ("dentist friday 3pm, then move it"); a change alone does not get
        # add_task, which a small model reached for with the task it was asked to move ("push the car service")
        out["add"] = f'a clause is a new task: "{_short(new)}"'
    return out


def _a_new_task(text: str) -> str | None:
    """The first clause of a message of several that, read alone, says a new task ("dentist friday 3pm")."""
    clauses = [c.strip() for c in _CLAUSES.split(text) if c and c.strip()]
    if len(clauses) < 2:
        return None
    said = [c for c in clauses if len(_OPENER.sub("", c).split()) >= 2]  # "oh and it's due ...": "oh" says none
    return next((c for c in said if "add" in _reasons(c)), None)


def groups_for(text: str, recent: Sequence[str] = (), called: Sequence[str] = ()) -> Selection:
    """The tool groups a model call needs: read always, the groups the message's words call for, those of
    the message before when this one goes on from it ("and the gym on thursday", "yes", "the second one"),
    and the groups of tools the model asked for this turn (so the next step sends a tool it reached for)."""
    from planner.tools import GROUPS

    why = {ALWAYS: "always"}
    for group, reason in _reasons(text).items():
        why.setdefault(group, reason)
    words = len(re.findall(r"\w+", text))
    goes_on = bool(_GOES_ON.match(text)) or (words <= 3 and not _SMALL_TALK.match(text))
    if recent and goes_on and not _question(text) and len(why) == 1:  # nothing of its own: the one before's
        before = recent[-1]
        for group in _reasons(before):
            why.setdefault(group, f'goes on from "{_short(before)}"')
    for group in called:
        why.setdefault(group, "the model asked for a tool of it")
    return Selection(tuple(g for g in GROUPS if g in why), {g: why[g] for g in GROUPS if g in why})


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:39] + "…"


# ---------------------------------------------------------------- asked for a change

# What each kind of request is, and the tool groups that carry it out.
WANTS = {"add": "add", "change": "change", "plan": "plan", "remember": "memory"}
_PLAN_ASK = re.compile(
    r"\b(plan (?:my|the|out|for)|plan it|make (?:me )?a plan|find (?:me )?(?:some )?time|block (?:out|off)|"
    r"schedule (?:my|the) (?:day|week))\b",
    re.I,
)
_REMEMBER_ASK = re.compile(r"\b(remember (?:that|this|:)|note that|keep in mind|don'?t forget that)\b", re.I)
_ADD_ASK = re.compile(
    r"\b(add|create|put|remind me|new task|note down|jot down|schedule|i need to|i have to|i must)\b|^\s*(?:i have|i've got) an? (?:\w+ )?"
    r"(?:appointment|meeting|call|event|class|lesson|flight|interview)\b",
    re.I,
)
_CHANGE_ASK = re.compile(
    r"\b(mark|tick|check off|complet\w*|finish\w*|delet\w*|remov\w*|cancel\w*|reopen\w*|renam\w*|"
    r"mov(?:e|es|ing)|chang\w*|updat\w*|push\w*|postpon\w*|reschedul\w*|shift\w*|bump\w*|set|done with|urgent|"
    r"priority)\b|\bi'?m done\b|\b(?:it'?s|is) (?:now )?(?:due|on)\b|\bactually\b.*\b(?:on|to|at|due)\b",
    re.I,
)


_PLAN_DAY = re.compile(
    r"\bplan (?:out )?(?:my|the) (?:day|morning|afternoon|evening)\b|\bplan it\b|"
    r"\bplan (?:for )?(?:today|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    re.I,
)
# A new date for a task: "move the report to friday", "push it to next week", "actually it's on thursday"
_MOVE = re.compile(
    r"\b(move|moved|push|pushed|postpone\w*|reschedule\w*|bump|(?:is|it'?s) (?:now )?(?:due|on))\b", re.I
)
# Words that ask for another change too, or take the request back: no one tool then
_NOT_ONE = re.compile(
    r"\b(delet\w*|remov\w*|cancel\w*|complet\w*|finish\w*|mark\w*|done|renam\w*|tag\w*|priorit\w*|urgent|"
    r"don'?t|do not|never ?mind|no need|not|nothing|instead|or)\b|\?",
    re.I,
)


# A new name for a task, as the order the message opens with: "rename the milk task to buy oat milk", "now
# rename it to Q4 report", "change the name of the report to Q4 report", "change its title to ...". Not "move the
# rename files task", "change the date of the title deed task", "call it a day".
_RENAME = re.compile(
    r"^\W*(?:(?:and|also|oh|ok(?:ay)?|so|now|please|just|then)\W+)*(?P<ask>renam\w*\b.*?|change (?:the |its )?"
    r"(?:name|title)(?: of\b.*?)?|change\b.*?'s (?:name|title))\s+to\s+(?P<new>\S.*)$",
    re.I,
)
# After the new name, words that take it back or ask for more: it is not one plain rename then
_TAKEN_BACK = re.compile(
    r"[.?!;]\s*\S|\.\.\.|\b(?:no wait|wait|never ?mind|actually|don'?t|do not|leave it|forget it|instead|or not|"
    r"and then|and also|as well)\b",
    re.I,
)


def renamed(text: str) -> tuple[str, str] | None:
    """(the asking part, the new name) of a message that is one plain order to rename a task, else None."""
    m = _RENAME.match(text.strip())
    if not m:
        return None
    new = m["new"].strip().rstrip(".!").strip("\"'“”‘’ ")
    return (m["ask"], new) if new and not _TAKEN_BACK.search(new) else None


@dataclass(frozen=True)
class OneTool:
    """The one tool that carries out a request, for the last ask of a small model that answered it twice
    with words and no call (agent/finish.py): the arguments it may have (no other is asked of the model),
    those it must have, and those the user's words already fixed (the one task they name, by the reading
    the gate's --yes goes by)."""

    name: str
    fields: tuple[str, ...]
    must: tuple[str, ...] = ()
    fixed: tuple[tuple[str, Any], ...] = ()
    what: str = ""  # what the arguments are, in words (a tool's name in the ask came back as the task's title)


_ONE_TOOL = {
    "add": OneTool("add_task", ("title", "due_date", "due_time", "estimate"), ("title",), what="the task to add"),
    "remember": OneTool("remember", ("fact",), ("fact",), what="the fact to remember"),
    "plan": OneTool("plan_day", ("date",), ("date",), what="the day to plan"),
}


# A message that opens with the verb of what it asks ("add ...", "actually move ...", "plan my day ..."): an
# order, not "I have to say, this planner is great"
_ORDER = re.compile(
    r"^\W*(?:(?:and|also|oh|ok(?:ay)?|so|actually|please|now)\W+)*(?:add|create|remind me|put|schedule|plan|move|"
    r"push|postpone|reschedule|bump|remember)\b",
    re.I,
)


_AND = re.compile(r"^\W*(?:(?:oh|ok(?:ay)?|so)\W+)*(?:and|also|plus)\b", re.I)


def _after_question(text: str) -> str:
    """The order a message ends with after a question ("what does my day look like tomorrow? plan it for me"),
    or the message as it is."""
    rest = text.rsplit("?", 1)[-1]
    return rest if "?" in text and _ORDER.match(rest) else text


def an_order(text: str, recent: Sequence[str] = ()) -> bool:
    """The message opens with the verb of what it asks, or says it after a question ("what does my day look
    like? plan it for me"), or goes on with "and ..." from a message that did ("add call the bank tomorrow",
    then "and pay the electricity bill on friday"): an order to the planner."""
    if _ORDER.match(_after_question(text)):
        return True
    return bool(recent and _AND.match(text) and _ORDER.match(recent[-1]) and wants(text, recent))


_PAST = {
    "bought": "buy", "paid": "pay", "sent": "send", "wrote": "write", "got": "get", "made": "make", "went": "go",
    "took": "take", "rang": "ring", "read": "read", "ate": "eat", "fed": "feed", "gave": "give", "sold": "sell",
    "met": "meet", "saw": "see", "spoke": "speak", "ran": "run", "found": "find", "brought": "bring", "did": "do",
}  # fmt: skip


def tells_done(text: str) -> bool:
    """The message tells that the user did something ("I called mum", "we paid the rent")."""
    return bool(_DID.search(text))


def did_the_task(text: str, title: str) -> bool:
    """The message tells that the user did what the task's title says to do: "I called mum" of "call mum",
    "we paid the rent" of "pay rent". Its first verb in the past, the title's first word in the present."""
    m = _DID.search(text)
    if not m or not title.split():
        return False
    done, first = m.group(1).lower().split()[0], title.split()[0].lower().strip(".,:;!")
    if done in _PAST:
        return _PAST[done] == first
    if not done.endswith("ed"):
        return False
    stem = done[:-2]
    forms = {stem, stem + "e", stem[:-1] + "y" if stem.endswith("i") else stem}
    if len(stem) > 2 and stem[-1] == stem[-2]:  # "dropped": drop
        forms.add(stem[:-1])
    return first in forms


def one_tool(want: str, text: str, task: int | None = None, title: str | None = None) -> OneTool | None:
    """The one tool that carries out this kind of request, when the words leave no choice of tool: adding a
    task, remembering, planning a day (not finding time, not an event), moving the one task the words name
    (`task`, titled `title`) to a date they say, and completing it when they tell that the user did what
    its title says ("I called mum" of "call mum"; "I spoke to mum" says no more than that), and renaming it
    ("rename the milk task to buy oat milk", the new name as the user wrote it, when the message is that one
    order and takes nothing back). Left out is a
    message that asks for something else too, takes it back ("don't add it") or asks a question (other
    than before the order it ends with)."""
    said = _after_question(text)  # a question before the order asks nothing more
    if want == "change" and task is not None and (rename := renamed(said)):
        ask = re.sub(r"\brenam\w*|\bchange\b|\b(?:name|title)\b", "", rename[0], flags=re.I)
        if _NOT_ONE.search(ask) or wants(ask) or wants(rename[1]):
            return None  # asks for more than the one name ("... and delete the milk"), or takes it back
        # the new name is the user's words, read here: the model's call may give no other
        fixed = (("id", task), ("title", rename[1]))
        return OneTool("update_task", ("id", "title"), ("id", "title"), fixed, "the task's new name")
    if _NOT_ONE.search(said) or len(wants(said)) > 1:
        return None
    if want == "plan" and not _PLAN_DAY.search(said):
        return None
    if want == "change" and task is not None and title and did_the_task(said, title):
        return OneTool("complete_task", ("id",), ("id",), (("id", task),), "the task the user did")
    if want == "change":  # the date in the words of the order, not in a question before it
        if task is None or not _MOVE.search(said) or not _DATE.search(said):
            return None
        return OneTool("update_task", ("id", "due_date"), ("id", "due_date"), (("id", task),), "the task's new date")
    return _ONE_TOOL.get(want)


# A verb of asking said not to be done: "don't remind me", "no need to add it", "I don't need to buy milk"
_NEGATED = re.compile(r"\b(?:don'?t|do not|no need to|never|stop)\b(?:\s+(?!(?:forget)\b)\w+){0,2}", re.I)


def wants(text: str, recent: Sequence[str] = ()) -> tuple[str, ...]:
    """The changes a message asks the planner to make: add, change, plan, remember (none for a question,
    small talk, or a fact merely told, which the memory keeper picks up on its own)."""
    if _question(text) or _small_talk(text) or _small_talk(_GOES_ON.sub("", text)):
        return ()  # "and thanks!" goes on from the request before, but asks for nothing
    text = _NEGATED.sub(" ", text)  # "please don't remind me about the dentist anymore" asks to add nothing
    out = []
    if _REMEMBER_ASK.search(text):
        out.append("remember")
    if _PLAN_ASK.search(text):
        out.append("plan")
    if _ADD_ASK.search(text) and "remember" not in out:
        out.append("add")
    said = _beside_adding(text) if "add" in out else text  # "add milk, urgent" asks for no change
    if _CHANGE_ASK.search(said) or _DID.search(said):
        out.append("change")
    if not out and recent and _GOES_ON.match(text) and (_DATE.search(text) or len(text.split()) <= 6):
        out += [w for w in wants(recent[-1]) if w in ("add", "change")] or (["change"] if _DATE.search(text) else [])
    return tuple(dict.fromkeys(out))
