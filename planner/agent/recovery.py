"""Coping with what small local models send instead of clean tool calls.

Models of a few billion parameters and less often (a) write tool calls as
JSON text in the reply instead of using the tool-calling interface, or as
markup (`<function name="list_tasks" arguments="due_after=tomorrow"/>`,
`<function=...><parameter=...>`, `list_tasks(status="open")`), (b) send the
same call many times in one reply, and (c) end a turn with an empty reply or
with the tool result echoed back as JSON. Each function here turns one of
those into what the agent expects, so the loop stays simple. Markup runs only
when it reads one way (a named tool, every argument named, or the one
required one); the guards answer other markup with a sentence saying nothing
was done, so markup never reaches the user.
"""

from __future__ import annotations

import html
import json
import logging
import math
import re
from dataclasses import dataclass
from typing import Any

from planner.agent.turn import READ_ONLY_TOOLS
from planner.tools import ALIASES, TOOLS

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
            args = loads(args)
        except ValueError:
            return None
    return {"function": {"name": name, "arguments": args if isinstance(args, dict) else {}}}


MAX_DEPTH = 16  # nesting deeper than any tool call: such text is not parsed (no RecursionError)


def _finite_float(text: str) -> float | str:
    value = float(text)
    return value if math.isfinite(value) else text  # 1e999 stays the text the model wrote


# A decoder that never yields NaN or infinities: they cannot be sent back to Ollama, so a call holding one
# would break every later request of the session. They stay text, and the tool's validation says what to fix.
DECODER = json.JSONDecoder(parse_constant=str, parse_float=_finite_float)


def loads(text: str) -> Any:
    """JSON text as values, with non-finite numbers kept as text; raises ValueError for anything unreadable."""
    depth, deepest = 0, 0
    for ch in text:  # a cheap upper bound on the nesting (brackets in strings count too)
        depth += (ch in "{[") - (ch in "}]")
        deepest = max(deepest, depth)
    if deepest > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return DECODER.decode(text)


def _spans(text: str) -> list[tuple[int, int, str, int]]:
    """Each top-level bracketed span in one pass: (start, end, its text balanced, deepest nesting).

    Balanced as a small model's call with a wrong closing bracket needs ('{"name": ..., {...}]}'): each
    closing bracket closes the innermost open one, and missing ones are added at the end. Quotes count
    only inside a span, so an apostrophe in prose does not hide a call after it.
    """
    pairs, out = {"{": "}", "[": "]"}, []
    stack: list[str] = []
    buf: list[str] = []
    begin = deepest = 0
    in_string = escaped = False
    for k, ch in enumerate(text):
        if not stack:
            if ch in pairs:
                stack, buf, begin, deepest, in_string = [pairs[ch]], [ch], k, 1, False
            continue
        buf.append(ch)
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in pairs:
            stack.append(pairs[ch])
            deepest = max(deepest, len(stack))
        elif ch in "}]":
            buf[-1] = stack.pop()
            if not stack:
                out.append((begin, k + 1, "".join(buf), deepest))
    if stack:
        out.append((begin, len(text), "".join(buf) + "".join(reversed(stack)), deepest))
    return out


def _json_values(text: str, level: int = 0) -> list[Any]:
    """Every top-level JSON object or array in the text; linear in its length (times MAX_DEPTH at most)."""
    out = []
    for begin, end, balanced, deepest in _spans(text):
        if deepest > MAX_DEPTH:
            continue  # nested deeper than any call: text
        try:
            value, _ = DECODER.raw_decode(balanced)
            out.append(value)
        except ValueError:
            if level < MAX_DEPTH:  # not JSON as a whole: a call may sit inside ("{ see {"name": ...} }")
                out += _json_values(text[begin + 1 : end - 1], level + 1)
    return out


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


def is_json_echo(reply: str) -> bool:
    """Whether a reply is nothing but a JSON value (an echoed tool result)."""
    text = reply.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    if not text or text[0] not in "{[":
        return False
    # One or more JSON values and nothing else (small models echo each result on a line).
    spans = _spans(text)
    if any(deepest > MAX_DEPTH for *_, deepest in spans):
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
    just completed still open), and repeats that did not run add nothing.
    """
    calls = [c for c in calls if c["result"] is not None and "repeat" not in c["result"]]
    last_write = max(
        (i for i, c in enumerate(calls) if c["name"] not in READ_ONLY_TOOLS and "error" not in c["result"]), default=-1
    )
    calls = [c for i, c in enumerate(calls) if i >= last_write or c["name"] not in READ_ONLY_TOOLS]
    ok = [c for c in calls if "error" not in c["result"]]
    lines = list(dict.fromkeys(_sentence(describe(c["name"], c["result"])) for c in ok or calls))
    return " ".join(lines) if lines else "Sorry, I have no answer to that."


def looks_like_call(text: str) -> bool:
    """While streaming: whether to hold text back because it may turn out to be a tool call."""
    head = text.lstrip()[:12]
    # JSON, a fence, a tag, or a snake_case name that may open "list_tasks(...)"
    return head == "" or head[0] in "{[<" or head.startswith("```") or bool(_NAME_START.fullmatch(head))


_NAME_START = re.compile(r"[a-z]+(?:_[a-z_]*(?:\(.*)?)?", re.S)

# ---------------------------------------------------------------- tool markup that is not JSON

MAX_MARKUP = 8000  # characters: a reply longer than this is not a call, and is not searched for one
_WRAPPER = re.compile(r"</?(?:tools|tool_calls?|function_calls|tool_use|calls)\b[^<>]*>|```[\w-]*", re.I)
_ATTR = re.compile(r"""([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s<>"'/]+))""")
_PARAM = re.compile(
    r"""<(?P<tag>parameter|param|argument|arg)(?:\s+name\s*=\s*["']?(?P<a>[\w.-]+)["']?|=(?P<b>[\w.-]+))\s*>"""
    r"(?P<v>.*?)</(?P=tag)\s*>",
    re.S | re.I,
)
_CHILD = re.compile(r"<(?P<k>[a-z_][\w-]*)>(?P<v>[^<]*)</(?P=k)\s*>", re.I)
_PAIR = re.compile(
    r"""\s*([A-Za-z_]\w*)\s*[=:]\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\[[^\]]*\]|[^,;&\s][^,;&]*?|)\s*(?:[,;&]|$)"""
)
_TEXT_CALL = re.compile(r"\s*(?:functions?\.|tools?\.)?([A-Za-z_]\w*)\s*\(([^()]*)\)\s*[;,]?")


@dataclass
class Markup:
    """Tool-call markup found in a reply: the calls it spells, whether each read one way, the text around it."""

    calls: list[dict[str, Any]]
    readable: bool  # every call names a tool and its arguments have one reading: safe to run
    rest: str  # the reply without the markup


def _unquote(value: str) -> Any:
    value = value.strip()
    if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1:
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    if value.startswith("["):
        try:
            return loads(value)
        except ValueError:
            return [_unquote(v) for v in value.strip("[]").split(",") if v.strip()]
    return value


def _pairs(text: str) -> dict[str, Any] | None:
    """'due_after=tomorrow, status="open"' as arguments; None unless the whole text is such pairs."""
    out: dict[str, Any] = {}
    i, text = 0, text.strip()
    while i < len(text):
        m = _PAIR.match(text, i)
        if not m or m.end() == i:
            return None
        out[m.group(1)] = _unquote(m.group(2))
        i = m.end()
    return out


def _arguments(text: str) -> dict[str, Any] | None:
    """A call's arguments written as JSON, parameter tags, child tags or name=value pairs; None if unreadable."""
    text = html.unescape(text or "").strip()
    if not text:
        return {}
    if text.startswith("{"):
        try:
            value = loads(text)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None
    for pattern in (_PARAM, _CHILD):
        found = list(pattern.finditer(text))
        if found and not pattern.sub("", text).strip():
            return {
                (m.group("a") or m.group("b")) if pattern is _PARAM else m.group("k"): _unquote(m.group("v"))
                for m in found
            }
    return _pairs(text)


def _positional(name: str, text: str) -> dict[str, Any] | None:
    """add_task("buy milk"): one value, for a tool with exactly one required argument, is that argument."""
    required = TOOLS[name].parameters["required"] if name in TOOLS else []
    value = text.strip()
    if len(required) != 1 or not re.fullmatch(r'"[^"]*"|\'[^\']*\'|\d+', value):
        return None
    return {required[0]: _unquote(value)}


def parse_markup(content: str, names: set[str]) -> Markup | None:
    """Tool calls a model wrote as XML-like tags or as name(arguments) text; None when the reply has none."""
    if len(content) > MAX_MARKUP or ("<" not in content and "(" not in content):
        return None
    text = _WRAPPER.sub(" ", content).replace("`", " ")
    known = names | INVENTED
    calls, readable = [], True
    if re.fullmatch(r"(?:\s*(?:functions?\.|tools?\.)?\w+\s*\([^()]*\)\s*[;,]?)+\s*", text):
        for name, args in _TEXT_CALL.findall(text):  # the whole reply is name(...) calls
            if name not in known:
                return None  # prose that happens to hold brackets
            parsed = _pairs(args) if "=" in args or not args.strip() else _positional(name, args)
            readable = readable and parsed is not None
            calls.append({"function": {"name": name, "arguments": parsed or {}}})
        return Markup(calls, readable, "")
    if "<" not in text:
        return None
    tags = "|".join(sorted(map(re.escape, {"function", "invoke", "tool", "call", "function_call", *known}), key=len))
    element = re.compile(
        rf"<(?P<tag>{tags})(?:=(?P<eq>[\w.-]+))?(?P<attrs>(?:\s+{_ATTR.pattern})*)\s*"
        rf"(?:/>|>(?P<body>.*?)(?:</(?P=tag)\s*>|$))",
        re.S | re.I,
    )
    for m in element.finditer(text):
        attrs = {a[0].lower(): a[1] or a[2] or a[3] for a in _ATTR.findall(m.group("attrs") or "")}
        tag = m.group("tag")
        if tag in known:
            name, args = tag, (_arguments(m.group("body")) if (m.group("body") or "").strip() else {})
            if args is not None:
                args = {**{k: _unquote(v) for k, v in attrs.items()}, **args}
        else:
            name = m.group("eq") or attrs.pop("name", None) or attrs.pop("function", None) or attrs.pop("tool", None)
            given = next((attrs[k] for k in ("arguments", "args", "parameters", "params") if k in attrs), None)
            args = _arguments(given if given is not None else m.group("body") or "")
        readable = readable and name in known and args is not None
        calls.append({"function": {"name": name, "arguments": args or {}}})
    if not calls:
        return None
    return Markup([c for c in calls if c["function"]["name"] in known], readable, element.sub(" ", text).strip())
