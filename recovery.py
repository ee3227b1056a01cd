"""Coping with what small local models send instead of clean tool calls.

Models of a few billion parameters and less often (a) write tool calls as
JSON text in the reply instead of using the tool-calling interface, (b) send
the same call many times in one reply, and (c) end a turn with an empty reply
or with the tool result echoed back as JSON. Each function here turns one of
those into what the agent expects, so the loop stays simple.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections.abc import Callable
from typing import Any

from dates import dates_in
from tools import ALIASES, READ_ONLY_TOOLS, TOOLS, ToolError, validate

log = logging.getLogger("planner")

INVENTED = {alias for aliases in ALIASES.values() for alias in aliases}

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCED = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def _as_call(obj: Any, names: set[str]) -> dict[str, Any] | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):  # {"function": {"name", "arguments"}}
        obj = obj["function"]
    name = obj.get("name") or obj.get("tool")
    args = obj.get("arguments", obj.get("parameters", obj.get("args")))
    # A known name, or anything shaped like a call ({"name": ..., "arguments": {...}}): an
    # invented name is run so that its error tells the model which real tool to use.
    if not isinstance(name, str) or (name not in names and name not in INVENTED and not isinstance(args, dict)):
        return None
    args = {} if args is None else args
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return None
    return {"function": {"name": name, "arguments": args if isinstance(args, dict) else {}}}


def _json_values(text: str) -> list[Any]:
    # Every top-level JSON object or array that appears in the text.
    decoder, out, i = json.JSONDecoder(), [], 0
    while True:
        starts = [p for p in (text.find("{", i), text.find("[", i)) if p >= 0]
        if not starts:
            return out
        j = min(starts)
        try:
            value, end = decoder.raw_decode(text, j)
            out.append(value)
            i = end
        except json.JSONDecodeError:
            try:  # a small model's call with a wrong closing bracket ('{"name": ..., {...}]}')
                fixed = _balance(text[j:])
                value, end = decoder.raw_decode(fixed)
                out.append(value)
                i = j + min(end, len(text) - j)
            except json.JSONDecodeError:
                i = j + 1


def _balance(text: str) -> str:
    """JSON text with each mismatched closing bracket replaced by the right one and missing ones added.

    Same length up to the end, so positions still match the original text.
    """
    pairs, stack, chars, in_string, escaped = {"{": "}", "[": "]"}, [], list(text), False, False
    for k, ch in enumerate(chars):
        if in_string:
            escaped, in_string = (not escaped and ch == "\\"), in_string and not (ch == '"' and not escaped)
            continue
        if ch == '"':
            in_string = True
        elif ch in pairs:
            stack.append(pairs[ch])
        elif ch in "}]":
            if not stack:
                return "".join(chars[:k])  # the value ended before this
            chars[k] = stack.pop()
            if not stack:
                return "".join(chars[: k + 1])
    return "".join(chars) + "".join(reversed(stack))


def parse_text_tool_calls(content: str, names: set[str]) -> list[dict[str, Any]]:
    """Tool calls a model wrote as JSON text that name an offered tool (or a known invented one)."""
    if not content or ("{" not in content):
        return []
    blocks = _TAGGED.findall(content) or _FENCED.findall(content) or [content]
    calls = []
    for block in blocks:
        for value in _json_values(block):
            for obj in value if isinstance(value, list) else [value]:
                call = _as_call(obj, names)
                if call:
                    calls.append(call)
    return calls


def dedupe_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The calls with exact repeats dropped (a model looping inside one reply)."""
    seen: set[str] = set()
    out = []
    for c in calls:
        key = json.dumps(c, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def call_key(name: Any, arguments: Any, raw: bool = False) -> str:
    """A call's identity, with arguments normalised as dispatch would read them.

    Unknown arguments are left out, so `add_task(title, status)` is the same
    call as `add_task(title)`: small models retry a call that worked with an
    extra argument added. With raw=True the arguments are taken as sent.
    """
    t = TOOLS.get(name) if isinstance(name, str) else None
    args = arguments if isinstance(arguments, dict) else {}
    if raw:  # exactly as sent
        return json.dumps([name, args], sort_keys=True, default=str)
    if t is not None:
        known = {k: v for k, v in args.items() if k in t.parameters["properties"]}
        try:
            args = validate(t, known)
        except ToolError:
            args = known
    return json.dumps([name, args], sort_keys=True, default=str)


def new_calls(
    calls: list[dict[str, Any]], done: list[dict[str, Any]], adjust: Callable[[Any, Any], Any] | None = None
) -> list[dict[str, Any]]:
    """The calls that do not repeat one that already succeeded this turn.

    `done` holds {"name", "arguments", "ok"} entries, arguments as they ran;
    `adjust(name, arguments)` gives the arguments a new call would run with. A
    small model that sees a result often asks for the same call again, adding
    a duplicate task each time; re-running it is never what the user asked for.
    """
    succeeded = {call_key(d["name"], d["arguments"]) for d in done if d["ok"]}
    out = []
    for c in calls:
        name, args = c["function"].get("name"), c["function"].get("arguments")
        if call_key(name, adjust(name, args) if adjust else args) not in succeeded:
            out.append(c)
    return out


def is_json_echo(reply: str) -> bool:
    """Whether a reply is nothing but a JSON value (an echoed tool result)."""
    text = reply.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    if not text or text[0] not in "{[":
        return False
    # One or more JSON values and nothing else (small models echo each result on a line).
    decoder, i = json.JSONDecoder(), 0
    while i < len(text):
        try:
            _, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            return False
        while i < len(text) and text[i].isspace():
            i += 1
    return True


def echoes(reply: str, prompt: str) -> bool:
    """Whether a reply mostly repeats a prompt we sent (small models parrot instructions)."""
    said = set(re.findall(r"[a-z]+", reply.lower()))
    given = set(re.findall(r"[a-z]+", prompt.lower()))
    return bool(said) and len(said & given) / len(said) >= 0.7


def _task_words(task: dict[str, Any]) -> str:
    due = f", due {task['due_date']}" if task.get("due_date") else ""
    return f'"{task.get("title")}" (id {task.get("id")}{due})'


def describe(name: str, result: dict[str, Any]) -> str:
    """One tool result in plain words."""
    if "error" in result:
        return f"{name} failed: {result['error']}"
    if "added" in result:
        return f"Added {_task_words(result['added'])}."
    if "completed" in result:
        return f"Marked {_task_words(result['completed'])} as done."
    if "already_done" in result:
        return f"{_task_words(result['already_done'])} was already done."
    if "updated" in result and "before" in result:
        return f"Updated {_task_words(result['updated'])}."
    if "deleted" in result:
        return f"Deleted {_task_words(result['deleted'])}."
    if "tasks" in result:
        if not result["tasks"]:
            return f"You have no {'' if result.get('status') == 'all' else result.get('status', '') + ' '}tasks."
        items = "; ".join(_task_words(t) for t in result["tasks"][:20])
        more = f" and {len(result['tasks']) - 20} more" if len(result["tasks"]) > 20 else ""
        return f"Your {'' if result.get('status') == 'all' else result.get('status', '') + ' '}tasks: {items}{more}."
    for key in ("remembered", "updated", "superseded"):
        if key in result and "text" in result[key]:
            return f"I'll remember that: {result[key]['text']}"
    if "forgotten" in result:
        return f"I forgot: {result['forgotten']['text']}"
    if "memories" in result:
        if not result["memories"]:
            return "I have nothing saved about that."
        return "I remember: " + "; ".join(m["text"] for m in result["memories"]) + "."
    if "weekday" in result:
        return f"Today is {result['weekday']}, {result['date']}."
    if "days" in result and "overdue" in result:  # agenda
        parts = [f"overdue: {'; '.join(_task_words(t) for t in result['overdue'])}"] if result["overdue"] else []
        parts += [f"{d['label']}: {'; '.join(_task_words(t) for t in d['tasks'])}" for d in result["days"]]
        return ("Coming up - " + " | ".join(parts)) if parts else "Nothing is due in the coming days."
    if "columns" in result and "rows" in result:  # query_planner
        if not result["rows"]:
            return "The query found nothing."
        if result["row_count"] == 1 and len(result["columns"]) == 1:
            return f"The answer is {result['rows'][0][0]}."
        rows = "; ".join(", ".join(str(v) for v in row) for row in result["rows"][:10])
        return f"Found {result['row_count']} rows: {rows}."
    if "summary" in result and "url" in result:  # lookup
        return f"{result['summary']} ({result['url']})"
    if "ambiguous" in result:
        return f"{result['ambiguous']} could mean: {', '.join(result.get('options') or [])}. Which one?"
    return json.dumps(result, ensure_ascii=False)


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else text + "."


def fallback_reply(calls: list[dict[str, Any]]) -> str:
    """A reply in words built from this turn's tool calls ({"name", "result"} each).

    Errors are left out when something succeeded: they are usually the
    model's own false starts, already corrected.
    """
    ok = [c for c in calls if "error" not in c["result"]]
    lines = list(dict.fromkeys(_sentence(describe(c["name"], c["result"])) for c in ok or calls))
    return " ".join(lines) if lines else "Sorry, I have no answer to that."


# ---------------------------------------------------------------- calls the user did not ask for

_QUESTION_START = {
    "what", "which", "when", "where", "who", "whom", "whose", "why", "how",
    "do", "does", "did", "is", "are", "am", "was", "were", "have", "has", "had",
}  # fmt: skip
_ACTION_WORDS = re.compile(
    r"\b(add|remind|mark|delete|remove|drop|move|rename|change|complete|finish|schedule|create|update|put|set|"
    r"forget|remember|note|save|cancel|clear|push|postpone|reschedule|plan)\b",
    re.I,
)
_DELETE_WORDS = re.compile(r"\b(delete|remove|drop|erase|cancel|get rid|scrap|trash|clear out|discard)\b", re.I)
_DATE_WORDS = re.compile(
    r"\d|\b(today|tonight|tomorrow|tmrw|yesterday|week|weekend|month|year|next|this|end|day|days|morning|afternoon|"
    r"evening|noon|midnight|mon|tue|wed|thu|fri|sat|sun|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|august|"
    r"september|october|november|december|christmas|xmas|easter|new year|by|before|until|due|soon|later)\b",
    re.I,
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
        r"recurring|weekdays|weekends|routine)\b",
        re.I,
    ),
}


_FILTER_WORDS = {
    "tag": _FIELD_WORDS["tags"],
    "priority": _FIELD_WORDS["priority"],
    "text": re.compile(
        r"\b(find|search|about|containing|contains|called|named|mention|mentions|with the words?)\b", re.I
    ),
    "overdue": re.compile(r"\b(overdue|late|past due|missed|behind)\b", re.I),
    "due_before": _DATE_WORDS,
    "due_after": _DATE_WORDS,
}


def asks_only(text: str) -> bool:
    """Whether a message is a plain question that asks for no change."""
    words = re.findall(r"[a-z']+", text.lower())
    return (
        text.rstrip().endswith("?") and bool(words) and words[0] in _QUESTION_START and not _ACTION_WORDS.search(text)
    )


def mentions_date(text: str) -> bool:
    """Whether a message says anything that could be a date."""
    return bool(_DATE_WORDS.search(text))


def screen_call(
    name: str, args: Any, said: list[str], today: dt.date | None = None
) -> tuple[Any, str | None, str | None]:
    """Check a call against what the user said this turn (and the turn before).

    Returns (arguments to use, refusal or None, note for the result or None).
    Small models change data when asked a question, delete when told a task
    is finished, and invent due dates; these are refused or corrected here,
    with a message that tells the model what to do instead.
    """
    current = said[-1] if said else ""
    if name in TOOLS and name not in READ_ONLY_TOOLS and asks_only(current):
        return (
            args,
            (
                "the user asked a question and did not ask to change anything; nothing was changed. "
                "Answer the question (call list_tasks or recall if you need data)."
            ),
            None,
        )
    if name == "delete_task" and not any(_DELETE_WORDS.search(s) for s in said[-2:]):
        return (
            args,
            (
                "the user did not ask to delete anything, so nothing was deleted. "
                "To mark a task as finished, use complete_task."
            ),
            None,
        )
    if name == "remember" and re.search(r"\bremind me\b|^\s*(add|schedule)\b", current, re.I):
        return (
            args,
            "this is a task or reminder, not a fact about the user: use add_task (with a due_date if one was given)",
            None,
        )
    if (
        name == "add_task"
        and isinstance(args, dict)
        and not (isinstance(args.get("title"), str) and args["title"].strip())
        and isinstance(args.get("notes"), str)
        and args["notes"].strip()
    ):
        # Seen on a 0.5B model: the whole task in notes and no title, then the same call again and again.
        args = {**{k: v for k, v in args.items() if k not in ("notes", "title")}, "title": args["notes"]}
        return screen_call(name, args, said, today)[0], None, "the notes were used as the title: a task needs a title"
    notes = []
    if name == "list_tasks" and isinstance(args, dict):
        invented = [
            f
            for f, words in _FILTER_WORDS.items()
            if args.get(f) not in (None, "", False) and not words.search(current)
        ]
        if invented:  # a small model filled every filter ("tag": "personal") and listed nothing
            args = {k: v for k, v in args.items() if k not in invented}
            log.info("left out filters %s: the user did not ask for them", ", ".join(invented))
    if name in ("add_task", "update_task") and isinstance(args, dict):
        invented = [f for f, words in _FIELD_WORDS.items() if args.get(f) and not words.search(current)]
        if invented:
            # Logged, not told: the model copied such a note into a task title. The result shows what was stored.
            args = {k: v for k, v in args.items() if k not in invented}
            log.info("left out %s: the user did not say any", ", ".join(invented))
    if name == "add_task" and isinstance(args, dict) and args.get("due_date") and not mentions_date(current):
        args = {k: v for k, v in args.items() if k != "due_date"}
        notes.insert(0, "due_date left out: the user gave no date")
    due = args.get("due_date") if isinstance(args, dict) and name in ("add_task", "update_task") else None
    if today and isinstance(due, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", due.strip()):
        # The model did the date arithmetic (small ones get it wrong): check it against the user's words.
        meant = dates_in(current, today)
        if len(meant) == 1 and due.strip() not in {d.isoformat() for d in meant}:
            fixed = next(iter(meant)).isoformat()
            log.info("due_date %s corrected to %s from the user's words", due, fixed)
            args = {**args, "due_date": fixed}
            notes.append(f"due_date is {fixed}, the date the user gave")
    return args, None, "; ".join(notes) or None


def drop_unknown(name: str, args: Any) -> tuple[Any, list[str]]:
    """Arguments without those the tool does not take, and the names dropped."""
    t = TOOLS.get(name) if isinstance(name, str) else None
    if t is None or not isinstance(args, dict):
        return args, []
    props = t.parameters["properties"]
    return {k: v for k, v in args.items() if k in props}, [k for k in args if k not in props]


def looks_like_call(text: str) -> bool:
    """While streaming: whether to hold text back because it may turn out to be a tool call."""
    head = text.lstrip()[:12]
    return head == "" or head[0] in "{[" or head.startswith(("```", "<tool_call"))
