"""Replies in words: tool results said as sentences, and what a reply must not be.

When the model's own reply cannot be shown (empty, an echoed tool result, a
parroted instruction, JSON, a tool list), the planner answers from the turn's
tool results instead: `describe` says one result in plain words and
`fallback_reply` a whole turn's. Split from recovery.py, which reads calls a
model wrote as text; this module writes what the user reads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from planner.agent.recovery import DECODER, MAX_DEPTH, spans
from planner.agent.turn import READ_ONLY_TOOLS


def is_json_echo(reply: str) -> bool:
    """Whether a reply is nothing but a JSON value (an echoed tool result)."""
    text = reply.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    if not text or text[0] not in "{[":
        return False
    # One or more JSON values and nothing else (small models echo each result on a line).
    if any(deepest > MAX_DEPTH for *_, deepest in spans(text)):
        return False
    i = 0
    while i < len(text):
        try:
            _, i = DECODER.raw_decode(text, i)
        except ValueError:
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
    for key, words in (
        ("cancelled", "Cancelled {}."),
        ("already_cancelled", "{} was already cancelled."),
        ("reopened", "Reopened {}."),
        ("already_open", "{} was already open."),
    ):
        if key in result:
            return words.format(_task_words(result[key]))
    if "pinned" in result:
        return f'Pinned "{result["pinned"]["title"]}" at {result["pinned"]["start"]}-{result["pinned"]["end"][-5:]}.'
    if "unpinned" in result:
        return f'"{result["unpinned"]["title"]}" is no longer pinned.'
    if "event" in result:
        e = result["event"]
        when = e["start"][:10] + " (all day)" if e.get("all_day") else f"{e['start']}-{e['end'][-5:]}"
        return f'Added "{e["title"]}" to the calendar: {when}.'
    if "preference" in result:
        p = result["preference"]
        return (
            f"Noted: {p['kind']} {p['days']} {p['from']}-{p['to']}"
            + (f" for {', '.join(p['tasks'])}" if p.get("tasks") else "")
            + "."
        )
    if "renamed" in result and "to" in result:
        return f'Renamed the list "{result["renamed"]}" to "{result["to"]}" ({result["tasks"]} tasks).'
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
    if "blocks" in result or ("days" in result and "unscheduled" in result):  # plan_day
        days = result.get("days") or [result]
        parts = [
            f"{d['day']}: "
            + ("; ".join(f"{b['start'][-5:]}-{b['end'][-5:]} {b['title']}" for b in d["blocks"]) or "nothing planned")
            for d in days
        ]
        if result.get("unscheduled"):
            parts.append("not placed: " + "; ".join(f"{n['title']} ({n['reason']})" for n in result["unscheduled"]))
        return "Your plan - " + " | ".join(parts)
    if "slots" in result and "minutes" in result:  # find_time
        if not result["slots"]:
            return f"There is no free slot of {result['minutes']} minutes in that time."
        slots = "; ".join(f"{s['weekday']} {s['start']}-{s['end'][-5:]}" for s in result["slots"])
        return f"Free for {result['minutes']} minutes: {slots}."
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
    model's own false starts, already corrected. Reads made before the last
    write are left out too: they show the data as it was (a list with the task
    just completed still open), and repeats that did not run add nothing. When
    nothing succeeded the reply says so in plain words: a tool's error is
    written for the model, never shown as the reply.
    """
    calls = [c for c in calls if c["result"] is not None and "repeat" not in c["result"]]
    last_write = max(
        (i for i, c in enumerate(calls) if c["name"] not in READ_ONLY_TOOLS and "error" not in c["result"]), default=-1
    )
    calls = [c for i, c in enumerate(calls) if i >= last_write or c["name"] not in READ_ONLY_TOOLS]
    ok = [c for c in calls if "error" not in c["result"]]
    if calls and not ok:
        return failed_reply([c["result"]["error"] for c in calls])
    lines = list(dict.fromkeys(_sentence(describe(c["name"], c["result"])) for c in ok))
    return " ".join(lines) if lines else "Sorry, I have no answer to that."


_TECHNICAL = re.compile(r"\b[a-z]+_[a-z_]+\b|[={}\[\]]|\bcall\b|\bargument|\btool", re.I)


def failed_reply(errors: list[str]) -> str:
    """What the user reads when every call failed: that nothing was done, and why when the error says it
    in plain words (one without tool or argument names)."""
    if any(e.startswith("the user declined") for e in errors):
        return "You said no, so nothing was changed."
    plain = [e.split(";")[0].split(". ")[0].strip().rstrip(".") for e in errors]
    why = next((e for e in plain if e and not _TECHNICAL.search(e)), None)
    return "That did not work, so nothing was changed" + (f": {why}." if why else ".")


_MARKUP = re.compile(r"<\s*/?\s*(?:tools?|tool_calls?|function(?:_calls?)?|invoke|parameters?)\b|<\|im_", re.I)
_SNAKE = re.compile(r"\b[a-z]+_[a-z_]+\b")


def unshowable(reply: str, names: set[str], request: str = "") -> str | None:
    """Why a reply cannot be shown as it is (JSON, tool markup, a list of tools), or None when it can.
    What the user asked for is shown: JSON when the request says JSON, tool names when it asks about tools."""
    text = reply.strip()
    if not text:
        return None
    if (is_json_echo(text) or (text[0] in "{[" and _json_share(text) > 0.5)) and not _ASKS_JSON.search(request):
        return "a JSON document"
    if _MARKUP.search(text):
        return "tool markup"
    named = {w for w in _SNAKE.findall(text) if w in names and w not in request}
    if len(named) >= 2 and not _ASKS_TOOLS.search(request):
        return "a list of tools"
    said = _INTERJECTION.sub("", text)
    one = len(said) <= 120 and not re.search(r"[.!]\s+\S", said) and "?" not in said  # a question is the user's
    if one and _PROMISE.match(said) and not _TO_THE_USER.search(said):
        return PROMISE
    return None


PROMISE = "a promise, not an answer"
STALE = "an earlier answer again"


def plain(text: str) -> str:
    """The words of a text, lowercase, one space apart (for comparing what was said)."""
    return " ".join(re.findall(r"[\w']+", text.lower()))


def stale(reply: str, earlier: Sequence[str], request: str, asked_before: Sequence[str]) -> bool:
    """A reply that is word for word one of the planner's earlier replies, to a message the user had not
    said before: an answer to an earlier message. The real 1.5B answered "where does my sister live?" with
    its reply to the fact told before it ("I added a new fact about Ana living in Lisbon now."). Short
    replies ("You're welcome!") may rightly come again; a repeated question may get the same answer."""
    said = plain(reply)
    if len(said.split()) < 5 or plain(request) in {plain(m) for m in asked_before}:
        return False
    return said in {plain(e) for e in earlier}


# "I will list all tasks.", "Let me check your calendar.", "To add a task for the report, ...": one sentence
# saying what would be done, said instead of doing it (seen on the real 1.5B, docs/evals.md). "I'll remember
# that" is left alone: the memory keeper saves a fact told without any call.
_TO_THE_USER = re.compile(
    r"\b(tell me|let me know|just|you can|you could|you need|you should|if you)\b", re.I
)  # "To add a task, just tell me its title."
_INTERJECTION = re.compile(r"^\s*(?:(?:sure|ok(?:ay)?|alright|of course|certainly)\b\W*)+", re.I)
_PROMISE = re.compile(
    r"^\s*(?:i will|i'll|i am going to|i'm going to|let me|"
    r"i need to|to)\s+(?:now\s+)?(?:list|show|check|look|add|create|plan|mark|move|change|update|delete|remove|"
    r"complete|find|get|fetch|schedule|set|see|display|go through|retrieve|search|summari[sz]e|review|go over|"
    r"outline|give you|provide|compile|prepare|organi[sz]e|pull up|bring up|rename|cancel|reopen|remind)\b",
    re.I,
)


_ASKS_JSON = re.compile(r"\bjson\b", re.I)
_ASKS_TOOLS = re.compile(r"\b(tools?|functions?|commands?|api)\b", re.I)


def _json_share(text: str) -> float:
    """How much of the text is JSON values."""
    total = 0
    for begin, end, balanced, deepest in spans(text):
        if deepest <= MAX_DEPTH:
            try:
                DECODER.raw_decode(balanced)
                total += end - begin
            except ValueError:
                pass
    return total / max(1, len(text))
