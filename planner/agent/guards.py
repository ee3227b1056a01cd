"""What stands between the model's reply and the tools, in profiles.

    off        nothing but mechanical repairs (identical calls in one reply run once, a
               reply that is only tool-call JSON or markup runs as the call); for evaluating
    standard   off, plus what protects the user whatever the model: a deletion needs the
               user's words in this request (and their y/N, in the tool), a change to more
               than 3 existing tasks asks first (toolrun.py), a call repeating an argument
               the tool refused drops it (said in the result)
    small      standard, plus recoveries from what models below ~4B parameters do: writes
               on a plain question, invented fields, filters and dates, a task put in notes,
               a reminder saved as a memory, the same call again and again, JSON echoed as
               the reply, tool names told to the user. Each looks at the recent conversation,
               and each says in the call's result what it did, so the model can set it right;
               the notes are worded so that a model reading them out tells the user no lie.
    auto       small when Ollama reports the main model below 4B parameters, else standard.

The agent calls one seam per model reply, `Guards.review`, and each call is
screened once there. Whatever a guard changed it says in that call's result;
when the model sends a value again after a guard changed it (on an update), the
value stands: a capable model that meant it is never overruled twice.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from planner.agent import intent
from planner.agent.claims import talks_tools, without_tool_talk
from planner.agent.intent import Intent
from planner.agent.recovery import looks_like_call, parse_markup, parse_text_tool_calls
from planner.agent.replies import echoes, fallback_reply, is_json_echo, plain
from planner.agent.request import wants
from planner.agent.turn import READ_ONLY_TOOLS, ToolCall, Turn, key
from planner.dates import dates_in
from planner.policy import Refusal
from planner.prompts import NOTHING_DONE, RETRY_PROMPT
from planner.settings import GUARD_PROFILES
from planner.tools import TOOLS, ToolError, validate

log = logging.getLogger("planner")

PROFILES = GUARD_PROFILES
# Writes aimed at one task: checked against the tasks the user's words name.
TARGETED = frozenset({"delete_task", "complete_task", "update_task", "cancel_task", "reopen_task", "schedule_task"})
SMALL_BELOW = 4.0  # billions of parameters: under this, auto picks the small profile


def parameter_billions(size: str | None) -> float | None:
    """Ollama's parameter_size ('9.0B', '494.03M', '1.5B') in billions; None if unreadable."""
    m = re.fullmatch(r"\s*([\d.]+)\s*([KMBT])\s*", size or "", re.I)
    if not m:
        return None
    try:
        value = float(m.group(1))
    except ValueError:
        return None
    return value * {"K": 1e-6, "M": 1e-3, "B": 1.0, "T": 1e3}[m.group(2).upper()]


def pick_profile(setting: str, parameter_size: str | None) -> str:
    """The profile in force: `setting` unless it is auto, then by the model's size (unknown: standard)."""
    if setting != "auto":
        return setting
    billions = parameter_billions(parameter_size)
    return "small" if billions is not None and billions < SMALL_BELOW else "standard"


# ---------------------------------------------------------------- what the user's words say

_QUESTION_START = {
    "what",
    "which",
    "when",
    "where",
    "who",
    "whom",
    "whose",
    "why",
    "how",
    "do",
    "does",
    "did",
    "is",
    "are",
    "am",
    "was",
    "were",
    "have",
    "has",
    "had",
}
# Word stems: "moving", "rescheduled" and "deletes" are requests as much as "move".
_ACTION_WORDS = re.compile(
    r"\b(add|remind|mark|delet|remov|drop|mov|renam|chang|complet|finish|schedul|creat|updat|put|set|"
    r"forget|forgot|rememb|note|sav|cancel|clear|push|postpon|reschedul|plan|book|shift|bump|swap|tick|check off)\w*",
    re.I,
)
_REQUEST_START = re.compile(r"^\s*(how about|what about|what if|why not|why don'?t you|could|can|would|will)\b", re.I)
_DATE_WORDS = re.compile(
    r"\d|\b(today|tonight|tomorrow|tmrw|yesterday|week|weekend|month|year|next|this|end|day|days|morning|afternoon|"
    r"evening|noon|midnight|mon|tue|wed|thu|fri|sat|sun|mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|"
    r"saturdays?|sundays?|jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|"
    r"july|august|september|october|november|december|christmas|xmas|easter|new year|by|before|until|due|soon|"
    r"later)\b",
    re.I,
)
# A date said relative to another ("back a week", "2 days before the 20th"): the model's arithmetic stands.
_RELATIVE = re.compile(
    r"\b(before|after|earlier|later|back|forward|ahead|prior|postpone|delay|push|bump|following|previous)\b", re.I
)
# What the user must have said for an optional task field to be theirs and not the model's invention.
# (A 0.5B model filled every field of add_task: a time, a priority, a weekly repeat, tags and notes.)
_FIELD_WORDS = {
    "due_time": re.compile(r"\d\s*(am|pm|h)\b|\d:\d\d|\b(noon|midnight|morning|evening|tonight|o'clock|at \d)", re.I),
    "priority": re.compile(r"\b(priority|urgent|important|asap|critical|high|medium|low|top)\b", re.I),
    "tags": re.compile(r"\b(tag|tags|tagged|label|labels|labelled|category|categories)\b|[#+]\w", re.I),
    "notes": re.compile(r"\b(note|notes|detail|details|description)\b", re.I),
    "repeat": re.compile(
        r"\b(every|each|daily|weekly|monthly|yearly|annually|fortnightly|biweekly|repeat|repeats|repeating|"
        r"recurring|weekdays|weekends|routine|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|"
        r"mornings|evenings|nights)\b",
        re.I,
    ),
    # (parent="Groceries" failed four times in a row on a 1.5B; the others stood unchecked)
    "list": re.compile(r"\b(list|lists|project|projects|folder|category)\b|#\w", re.I),
    "estimate": re.compile(r"\b(hours?|hrs?|minutes?|mins?|takes?|taking|took|long|estimate[sd]?|quick)\b", re.I),
    "remind": re.compile(r"\b(remind|reminder|reminders|alert|notify|ping|nudge)\b", re.I),
    "start_date": re.compile(r"\b(start|starting|starts|begin|beginning|from|not before|no earlier)\b", re.I),
    "parent": re.compile(r"\b(subtask|sub-task|subtasks|step|steps|part of|under|inside|belongs? to|child)\b", re.I),
}
_SEARCH_WORDS = re.compile(
    r"\b(find|search|about|containing|contains|called|named|mention|mentions|with the words?)\b", re.I
)
_FILTER_WORDS = {
    "tag": _FIELD_WORDS["tags"],
    "priority": _FIELD_WORDS["priority"],
    "overdue": re.compile(r"\b(overdue|late|past due|missed|behind)\b", re.I),
    "due_before": _DATE_WORDS,
    "due_after": _DATE_WORDS,
}


def asks_only(text: str) -> bool:
    """Whether a message is a plain question that asks for no change."""
    words = re.findall(r"[a-z']+", text.lower())
    return (
        text.rstrip().endswith("?")
        and bool(words)
        and words[0] in _QUESTION_START
        and not _REQUEST_START.search(text)
        and not _ACTION_WORDS.search(text)
    )


def mentions_date(text: str) -> bool:
    """Whether a message says anything that could be a date."""
    return bool(_DATE_WORDS.search(text))


# ---------------------------------------------------------------- repeats


def call_key(name: Any, arguments: Any) -> str:
    """A call's identity with arguments normalised as dispatch reads them.

    Unknown arguments are left out, so `add_task(title, status)` is the same
    call as `add_task(title)`: small models retry a call that worked with an
    extra argument added.
    """
    t = TOOLS.get(name) if isinstance(name, str) else None
    args = arguments if isinstance(arguments, dict) else {}
    if t is not None:
        known = {k: v for k, v in args.items() if k in t.parameters["properties"]}
        try:
            args = validate(t, known)
        except ToolError:
            args = known
    return key(name, args)


def drop_unknown(name: Any, args: Any) -> tuple[Any, list[str]]:
    """Arguments without those the tool does not take, and the names dropped."""
    t = TOOLS.get(name) if isinstance(name, str) else None
    if t is None or not isinstance(args, dict):
        return args, []
    props = t.parameters["properties"]
    return {k: v for k, v in args.items() if k in props}, [k for k in args if k not in props]


def dedupe(calls: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int]]:
    """Each distinct call once, with how many times the reply sent it (a model looping inside one reply)."""
    counts: dict[str, int] = {}
    first: dict[str, dict[str, Any]] = {}
    for c in calls:
        k = json.dumps(c, sort_keys=True, default=str)
        counts[k] = counts.get(k, 0) + 1
        first.setdefault(k, c)
    return [(first[k], n) for k, n in counts.items()]


# ---------------------------------------------------------------- the seam


@dataclass
class Review:
    """What to do with one model reply: calls to run (screened), or the turn's answer."""

    calls: list[ToolCall] = field(default_factory=list)
    reply: str | None = None  # set when there is nothing to run: the answer, as the user should see it


class Guards:
    """The guards of one profile (small, standard or off; resolve auto with pick_profile first)."""

    def __init__(self, profile: str = "standard"):
        if profile not in PROFILES or profile == "auto":
            raise ValueError(f"guard profile must be small, standard or off, not {profile!r}")
        self.profile = profile

    @property
    def small(self) -> bool:
        """Whether the small-model recoveries are on."""
        return self.profile == "small"

    def review(
        self, tool_calls: list[dict[str, Any]], content: str, shown: bool, turn: Turn, names: set[str]
    ) -> Review:
        """Screen one model reply: the calls it asks for, each screened once, or its final text."""
        asked = tool_calls
        if not asked and (self.small or looks_like_call(content)):
            # Written as text: small models put calls anywhere in prose; others only as the whole reply.
            asked = parse_text_tool_calls(content, names)
        markup = None if asked else parse_markup(content, names)
        if markup:  # tags or name(arguments) text: run when it reads one way, else say that nothing was done
            if not (markup.readable and markup.calls):
                return Review(reply=markup.rest or NOTHING_DONE)
            asked = markup.calls
        calls = []
        for raw, times in dedupe(asked):
            fn = raw.get("function") or {}
            c = ToolCall(name=fn.get("name"), sent=fn.get("arguments"))
            if times > 1:
                c.notes.append(f"asked for {times} times at once and done once")
            self.screen(c, turn)
            calls.append(c)
        if calls and self.small and all(c.result is not None for c in calls):
            # Only repeats of work already done: answer from the latest results instead of looping.
            return Review(reply=fallback_reply([c.entry() for c in turn.calls]))
        if calls:
            return Review(calls=calls)
        text = content.strip()
        if self.small and turn.critiques and echoes(text, RETRY_PROMPT.format(critique="")):
            return Review(reply=fallback_reply([c.entry() for c in turn.calls]))  # parroted the retry
        if self.small and talks_tools(text, turn.text, names):  # instructions meant for the model, not the user
            said = fallback_reply([c.entry() for c in turn.calls]) if turn.calls else without_tool_talk(text, names)
            return Review(reply=said or NOTHING_DONE)
        if shown:
            return Review(reply=text)
        if not text or (self.small and turn.calls and is_json_echo(text)):
            return Review(reply=fallback_reply([c.entry() for c in turn.calls]))  # nothing useful said
        return Review(reply=text)

    def screen(self, c: ToolCall, turn: Turn) -> None:
        """Check one call against the turn: sets c.args, c.notes, c.refusal, or c.result for a repeat."""
        if self.profile == "off":
            return
        name = c.name
        failed = {key(p.name, p.sent) for p in turn.calls if not p.ok and p.ran}
        if key(name, c.sent) in failed:
            # The same failing call again: models loop on an extra argument; drop it this time.
            c.args, dropped = drop_unknown(name, c.args)
            if dropped:
                c.notes.append(f"ignored arguments this tool does not take: {', '.join(dropped)}")
        if name in ("forget", "delete_task"):
            # What the user's own words ask (intent.py): a deletion needs them, a maybe asks the user.
            before = turn.recent[-1] if turn.recent else None
            said = intent.forgetting(turn.text, before) if name == "forget" else intent.deletion(turn.text, before)
            if said is Intent.NO:
                c.refused = Refusal.NOT_ASKED
                c.refusal = (
                    "the user did not ask to forget anything in this request, so nothing was forgotten. "
                    "Only forget a memory when the user asks for it."
                    if name == "forget"
                    else "the user did not ask to delete anything in this request, so nothing was deleted. "
                    "To mark a task as finished, use complete_task; to delete, the user must ask for it."
                )
                return
            c.unsure = said is Intent.UNSURE
        if self._a_tool_name(c, turn):
            return
        self._order_in_title(c, turn)
        if self._other_task(c, turn) or self._a_guess(c, turn) or self._copy_of_open(c, turn):
            return
        if self.small:
            self._small(c, turn)

    def _a_tool_name(self, c: ToolCall, turn: Turn) -> bool:
        """A title or fact that is a tool's name ("add_task" as the task, seen on the real 1.5B asked for
        add_task's arguments): the model's words about the call, not the user's. Not run, unless the user
        said that name."""
        if not isinstance(c.args, dict) or c.name in READ_ONLY_TOOLS:
            return False
        for f in _WORDS_OF_THE_USER:
            value = c.args.get(f)
            name = value.strip().strip("`\"'").lower() if isinstance(value, str) else ""
            if name in TOOLS and name not in turn.text.lower():
                c.refusal = (
                    f'the {f} "{value}" is the name of a tool, not what the user said; nothing was written. '
                    f"Call it again with the {f} in the user's own words."
                )
                return True
        return False

    def _order_in_title(self, c: ToolCall, turn: Turn) -> None:
        """A title that is the user's whole message, order word and all ("add visit Ana on saturday", seen on the
        real 1.5B): the task is what follows the order word. Said in the call's result."""
        title = c.args.get("title") if c.name == "add_task" and isinstance(c.args, dict) else None
        said, own = _ORDER_WORD.match(turn.text), _ORDER_WORD.match(title) if isinstance(title, str) else None
        if not (said and own and title[own.end() :].strip()) or not plain(turn.text).startswith(plain(title)):
            return
        c.args = {**c.args, "title": title[own.end() :].strip()}
        c.notes.append(
            f'"{title[: own.end()].strip()}" was taken out of the title: it is the user\'s order, not the task'
        )

    def _other_task(self, c: ToolCall, turn: Turn) -> bool:
        """A write to a task other than the ones the user's words name (intent.py, the reading the gate's
        --yes goes by): not run, and the result says which tasks the words fit, so the model can correct it."""
        m = turn.mandate
        if m is None or c.name not in TARGETED or c.task_id is None or c.task_id in _added(turn):
            return False  # a task made this turn ("add bread and set it to high") is the user's new one
        words = m.remove if c.name == "delete_task" else m.change | m.remove
        # Only where the words name exactly one task: a list or a range ("t0 to t3") may hold more than it shows.
        if len(words.ids) != 1 or words.everything or words.sets or c.task_id in words.ids:
            return False
        fits = ", ".join(f'task {i} "{t}"' for i, t in m.titles if i in words.ids) or "other tasks"
        c.refused, c.misread = Refusal.NOT_ASKED, True
        c.refusal = (
            f"the user's words name {fits}, not task {c.task_id}; nothing was changed. "
            "Call it again with the task they meant, or ask which one."
        )
        return True

    def _a_guess(self, c: ToolCall, turn: Turn) -> bool:
        """A write to one of several tasks the user's words fit equally ("mark the call as done" with "call
        mom" and "call dad"): which one is the user's to say. Not run; the result names them all, and the
        user is asked which (finish.py)."""
        m = turn.mandate
        if m is None or c.name not in TARGETED or c.task_id is None:
            return False
        words = m.remove if c.name == "delete_task" else m.change | m.remove
        # only the tasks this call could act on: a finished "call mom" is no choice for completing a call
        alike = words.alike if c.name in ("reopen_task", "delete_task") else words.alike & set(turn.open_titles)
        if c.task_id not in alike or len(alike) < 2 or words.everything or words.sets:
            return False
        c.which = tuple(t for i, t in m.titles if i in alike)
        fits = ", ".join(f'task {i} "{t}"' for i, t in m.titles if i in alike)
        c.refused = Refusal.NOT_ASKED
        c.refusal = f"the user's words fit {fits} alike; nothing was changed. Ask the user which one they mean."
        return True

    def _copy_of_open(self, c: ToolCall, turn: Turn) -> bool:
        """A new task with the title of one already open, where the user's words did not ask to add anything
        ("I bought the milk", "push the car service to tomorrow"), or asked to add another task ("and pay the
        electricity bill on friday", after "add call the bank"): a model that reaches for add_task with the
        task they have. Not run; the result names the open task, so the model can use it."""
        if c.name != "add_task" or not isinstance(c.args, dict):
            return False
        title = _undated(c.args.get("title"))
        same = [(i, t) for i, t in turn.open_titles.items() if title and _undated(t) == title]
        if not same:
            return False
        i, t = same[0]
        if "add" in wants(turn.text, turn.recent):
            other = _own_words(turn.text) - _own_words(t)
            if len(other) < 2 or len(other) < len(_own_words(turn.text)):  # "add it again", "add milk again"
                return False
            c.refused, c.misread = Refusal.NOT_ASKED, True
            c.refusal = (
                f'task {i} "{t}" is already open, and the user\'s words name another task; nothing was added. '
                "Call add_task again with the title in the user's words."
            )
            return True
        c.refused, c.misread = Refusal.NOT_ASKED, True
        c.refusal = (
            f'task {i} "{t}" is already open, and the user did not ask to add another; nothing was added. '
            f"To mark it done call complete_task with id {i}; to change it, update_task with id {i}."
        )
        return True

    # -- the small-model recoveries

    def _small(self, c: ToolCall, turn: Turn) -> None:
        name, current = c.name, turn.text
        recent = " ".join(turn.user_messages[-2:])  # this message and the one before (a date given a turn earlier)
        if isinstance(name, str) and name in TOOLS and name not in READ_ONLY_TOOLS and asks_only(current):
            c.refusal = (
                "the user asked a question and did not ask to change anything; nothing was changed. "
                "Answer the question (call list_tasks or recall if you need data)."
            )
            return
        remembers = re.search(r"\b(remember|note that|keep in mind|don'?t forget that)\b", current, re.I)
        if name == "remember" and not remembers and re.search(r"\bremind me\b|^\s*(add|schedule)\b", current, re.I):
            c.refusal = (
                "this is a task or reminder, not a fact about the user: use add_task (with a due_date if one was given)"
            )
            return
        args = c.args if isinstance(c.args, dict) else None
        if args is None:
            return
        if name == "add_task" and not _text(args.get("title")) and _text(args.get("notes")):
            # Seen on a 0.5B model: the whole task in notes and no title, then the same call again and again.
            args = {**{k: v for k, v in args.items() if k not in ("notes", "title")}, "title": args["notes"]}
            c.notes.append("the notes were used as the title: a task needs a title")
        if name == "list_tasks":
            args = self._unasked(c, turn, args, _FILTER_WORDS, recent, "filter")
            if isinstance(args.get("list"), str) and _EVERY_LIST.fullmatch(args["list"]):
                args = self._leave_out(c, turn, args, "list", "filter")
        if name in ("add_task", "update_task"):
            args = self._unasked(c, turn, args, _FIELD_WORDS, recent, "field")
        if name in ("add_task", "update_task") and args.get("due_date") and not mentions_date(recent):
            # (A 0.5B model asked to delete a task it was refused gave the task an invented date instead.)
            if not self._insisted(turn, c, "due_date", args["due_date"]):
                args = self._leave_out(c, turn, args, "due_date", "field")
        args = self._check_date(c, turn, args)
        c.args = args
        self._mark_repeat(c, turn)

    def _unasked(self, c: ToolCall, turn: Turn, args: dict, words: dict, recent: str, what: str) -> dict:
        """Leave out optional fields (or filters) the recent conversation never mentions, and say so."""
        invented = [f for f, w in words.items() if args.get(f) not in (None, "", False) and not w.search(recent)]
        if what == "filter" and _text(args.get("text")) and not _SEARCH_WORDS.search(recent):
            # A text filter is the user's when it is a few of their words ("the dentist task": text="dentist"),
            # not their whole question copied ("What is coming up?").
            said = set(re.findall(r"\w+", recent.lower()))
            words = re.findall(r"\w+", args["text"].lower())
            if not (words and len(words) <= 3 and set(words) <= said):
                invented.append("text")
        for f in invented:
            if not self._insisted(turn, c, f, args[f]):
                args = self._leave_out(c, turn, args, f, what)
        return args

    def _leave_out(self, c: ToolCall, turn: Turn, args: dict, f: str, what: str) -> dict:
        # Phrased so that a model reading the note out to the user says nothing false or technical.
        turn.overridden.add(_override(c.name, f, args[f]))
        value = _said(args[f])
        if what == "filter":
            note = f"the list was not narrowed {_FILTER_PHRASES[f].format(value)}: the request did not ask for that"
        elif f == "due_date":
            note = f"no date was set ({value} was not used): the request gave none; say a date to set one"
        else:
            note = f"the {_FIELD_NAMES.get(f, f)} {value} was not set: the request did not ask for it; say so to set it"
        c.notes.append(note)
        log.info("left out %s=%r (%s not asked for)", f, args[f], what)
        return {k: v for k, v in args.items() if k != f}

    def _check_date(self, c: ToolCall, turn: Turn, args: dict) -> dict:
        """A YYYY-MM-DD the model worked out, checked against the one date the user's words name (a task's due
        date, the day a plan is for: the real 1.5B planned today for "what does my day look like tomorrow?")."""
        f = _DAY_ARG.get(c.name) if isinstance(c.name, str) else None
        due = args.get(f) if f else None
        if not (isinstance(due, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", due.strip())):
            return args
        words = next((s for s in reversed(turn.user_messages[-2:]) if mentions_date(s)), "")
        if not words or _RELATIVE.search(words) or self._insisted(turn, c, f, due):
            return args  # no date said, or one said relative to another: the model's arithmetic stands
        meant = dates_in(words, turn.today)
        if len(meant) != 1 or due.strip() in {d.isoformat() for d in meant}:
            return args
        fixed = next(iter(meant)).isoformat()
        turn.overridden.add(_override(c.name, f, due))
        c.notes.append(f"the date is {next(iter(meant)):%A} {fixed}, the day the request names, not {due.strip()}")
        log.info("%s %s corrected to %s from the user's words", f, due, fixed)
        return {**args, f: fixed}

    def _insisted(self, turn: Turn, c: ToolCall, f: str, value: Any) -> bool:
        # Sent again to the same tool after a guard changed it: the model means it. Not for add_task, where
        # the same call again is the small-model loop that adds duplicates (the repeat screen catches it),
        # and not through another tool: a priority left out of add_task and sent again through update_task
        # is the same invention.
        return c.name != "add_task" and _override(c.name, f, value) in turn.overridden

    def _mark_repeat(self, c: ToolCall, turn: Turn) -> None:
        """A call that repeats one that succeeded this turn is not run again; its result says so."""
        k = call_key(c.name, c.args)
        for earlier in reversed(turn.calls):
            if earlier.ok and earlier.ran and earlier.mutating and not c.mutating:
                return  # a read after a write is new information, never a repeat
            if earlier.ok and call_key(earlier.name, earlier.args) == k:
                c.result = {
                    "repeat": "this was already done a moment ago in this request, so it was not done twice",
                    "earlier_result": earlier.result,
                }
                c.ok = True
                return


# The plain words for fields and filters in guard notes (a model reads notes out to the user).
_FIELD_NAMES = {
    "due_time": "time",
    "notes": "note",
    "remind": "reminder",
    "start_date": "start date",
    "parent": "parent task",
}
_FILTER_PHRASES = {
    "tag": "to the tag {}",
    "priority": "to {} priority",
    "overdue": "to overdue tasks",
    "due_before": "to tasks due before {}",
    "due_after": "to tasks due after {}",
    "text": "to tasks mentioning {}",
    "list": "to a list called {}",
}
# A list filter that means every list ("all", the 1.5B's answer to "what's on my list?"): no list by that name
_EVERY_LIST = re.compile(r"\s*(?:all|any|every|everything|\*|all (?:lists|tasks))\s*", re.I)


_ASKING_WORDS = frozenset("add create put remind need must should new second another copy do again".split())


_DAY_ARG = {"add_task": "due_date", "update_task": "due_date", "plan_day": "date"}  # the day a call is about
_ORDER_WORD = re.compile(r"^\s*(?:please\s+)?(?:add|create|put|remind me to|new task:?)\s+", re.I)


def _added(turn: Turn) -> set[int]:
    """The ids of the tasks this turn added."""
    out = set()
    for c in turn.calls:
        task = c.result.get("added") if c.ok and c.name == "add_task" and isinstance(c.result, dict) else None
        if isinstance(task, dict) and isinstance(task.get("id"), int):
            out.add(task["id"])
    return out


_WORDS_OF_THE_USER = ("title", "fact", "text", "name")  # fields that hold what the user said, never a tool's name


def _own_words(text: str) -> set[str]:
    """The words of a message that say what a task is (not "add", "again", dates or small words)."""
    return {w for w in re.findall(r"\w+", text.casefold()) if w not in _ASKING_WORDS and w not in intent._STOP}


_DATED = re.compile(
    r"(?:\s+(?:on|by|due|for|this|next))?\s+(?:today|tonight|tomorrow|week|weekend|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday|mon|tue|wed|thu|fri|sat|sun)$"
)


def _undated(value: Any) -> str:
    """A title as its words without a day said at its end: "Call the bank tomorrow" is "call the bank"."""
    words = _words(value)
    return _DATED.sub("", words) or words


def _words(value: Any) -> str:
    """A title as its words, for comparing: "Buy milk." and "buy  milk" are the same."""
    return " ".join(re.findall(r"\w+", value.casefold())) if isinstance(value, str) else ""


def _said(value: Any) -> str:
    """A value as a person would read it in a note: text quoted, a list as its items."""
    if isinstance(value, list):
        return ", ".join(_said(v) for v in value)
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value)


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _override(name: Any, f: str, value: Any) -> str:
    return f"{name}:{f}=" + json.dumps(value, sort_keys=True, default=str)
