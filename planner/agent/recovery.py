"""Coping with what small local models send instead of clean tool calls.

Models of a few billion parameters and less often write tool calls as
JSON text in the reply instead of using the tool-calling interface, or as
markup (`<function name="list_tasks" arguments="due_after=tomorrow"/>`,
`<function=...><parameter=...>`, `list_tasks(status="open")`). Each function
here reads one of those as the calls the agent expects, so the loop stays
simple. (A reply that is no call but cannot be shown either, an echoed result
or an empty reply, is replies.py's.) Markup runs only
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


def spans(text: str) -> list[tuple[int, int, str, int]]:
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
    for begin, end, balanced, deepest in spans(text):
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
