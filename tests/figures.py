"""Figures in the docs, checked against the result files they come from (tests/test_doc_figures.py).

A page names the source of what it shows in an HTML comment right after the block that shows it (a
paragraph, a list, a table or a fenced block); rendered, the page shows nothing of it. Four kinds:

1. Values from a JSON result file. The first line names the file; each line after it is a template, the
   text as the page writes it with `{PATH:FORMAT}` where a figure stands. The template is filled in from
   the file and must appear, character for character, in the block above:

       | Qwen2.5-Coder-1.5B | `off` | 15/35 (43%) | 77 | 160,365 | 192 s |
       <!-- figures evals/results/qwen2.5-coder-1.5b-off.json
       | `off` | {summary.passed}/{summary.total} ({summary.rate:.0%}) | {summary.model_calls} | {summary.prompt_tokens:,} |
       -->

   PATH walks the JSON: `summary.passed`; `[...]` for a key with dots or spaces (`recall[fused, before]`),
   a list index (`scenarios[0]`) or the first list item whose fields have these values
   (`[embedder=test embedder]`, `[dataset=bfcl&embedder=test embedder]`);
   `[*]` every item of a list (every value of an object); a leading `#` counts (`{#scenarios}`) and `+` adds up
   (`{+answers[*].contained}`). FORMAT is Python's (`.2f`, `,`, `.0%`), and a trailing `z` drops
   the leading zero (`{x:.2fz}` is `.86`). Keep literal text around a figure that could appear twice.
   Several files: `<!-- figures before=A.json after=B.json` and `{before.summary.passed}`. A figure worked
   out from others is written as the sum: `{off.summary.model_calls - small.summary.model_calls}`.

2. A table a command printed, kept as text: `<!-- output bench/results/plan.txt -->`. Every line of the
   fenced block above (a `$ command` line apart) is a line of that file, in the same order; the page may
   leave lines out.

3. Files and their lengths: `<!-- lines -->` under a table whose rows start with a file in backticks and
   a number N: N is the file's line count to the nearest ten, and a row `| all | N |` the sum's (so an
   edit of a few lines does not fail it, a new concern in a file does).

4. `<!-- unchecked: WHY -->` for a block whose figures have no result file yet, and `<!-- example -->`
   for one that measures nothing (a session, a rule table). Said, not silent: a table (a fenced text
   block or Markdown table rows) with digits outside code on a figure-bearing page and none of these
   fails test_doc_figures. Prose is the author's to mark.

To add a figure: save the run's result under evals/results/ or bench/results/ (the command that made it
in the page), put the comment under the block, run `pytest tests/test_doc_figures.py`.
"""

from __future__ import annotations

import ast
import json
import re
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"<!--\s*(figures|output|lines|unchecked|example)\b(.*?)-->", re.S)
SEGMENT = re.compile(r"\[([^\]]*)\]|([^.\[\]]+)")


@dataclass
class Block:
    """A block of a page (what a reader sees: its text without the markers) and the markers after it."""

    line: int  # 1-based, where the block starts
    text: str
    markers: list[tuple[str, str]]  # (kind, what follows the kind in the comment)


def blocks(page: str) -> list[Block]:
    """A Markdown page as blocks: runs of lines between blank lines, a fenced block whole. A comment alone
    between blank lines belongs to the block before it."""
    out: list[Block] = []
    lines = page.split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        start, chunk = i, []
        fenced = False
        while i < len(lines) and (fenced or lines[i].strip() or _open_comment(chunk)):
            if lines[i].lstrip().startswith("```"):
                fenced = not fenced
            chunk.append(lines[i])
            i += 1
        text = "\n".join(chunk)
        found = list(_markers(text))
        markers = [(m.group(1), m.group(2).strip()) for m in found]
        body = text
        for m in reversed(found):
            body = body[: m.start()] + body[m.end() :]
        body = body.strip()
        if not body and out:  # only markers: they are about the block above
            out[-1].markers += markers
        else:
            out.append(Block(start + 1, body, markers))
    return out


def _markers(text: str):  # noqa: ANN202  (an iterator of re.Match)
    """The markers of a block: not those shown as code (in a fenced block, or between backticks)."""
    fence = re.compile(r"^\s*```.*?^\s*```[^\n]*$", re.S | re.M)
    shown = fence.sub(lambda m: " " * len(m.group(0)), text)  # same offsets, fences blanked
    for m in MARKER.finditer(shown):
        line = shown[shown.rfind("\n", 0, m.start()) + 1 : m.start()]
        if line.count("`") % 2 == 0:  # an odd count: the comment is inside a code span
            yield m


def _open_comment(chunk: list[str]) -> bool:
    """Whether the lines so far open a comment they have not closed (a marker may hold blank lines)."""
    text = "\n".join(chunk)
    return text.count("<!--") > text.count("-->")


def resolve(document: Any, path: str) -> Any:
    """The value at PATH in a JSON document (see the module's docstring)."""
    total = path[:1] if path[:1] in "#+" else ""
    value = _walk(document, [b if p == "" else p for b, p in SEGMENT.findall(path[len(total) :])])
    return len(value) if total == "#" else sum(value) if total == "+" else value


def _walk(value: Any, keys: list[str]) -> Any:
    for i, key in enumerate(keys):
        if key == "*" and isinstance(value, dict):  # every value: the rest of the path in each
            return [_walk(v, keys[i + 1 :]) for v in value.values()]
        if isinstance(value, list):
            if key == "*":  # every item: the rest of the path in each
                return [_walk(v, keys[i + 1 :]) for v in value]
            if "=" in key:  # the first item with these values: [dataset=bfcl&embedder=test embedder]
                conditions = [c.split("=", 1) for c in key.split("&")]
                value = next(v for v in value if isinstance(v, dict) and all(str(v.get(f)) == w for f, w in conditions))
            else:
                value = value[int(key)]
        else:
            value = value[key]
    return value


PATH = re.compile(r"[#+]?(?:[A-Za-z_]\w*|\[[^\]]*\])(?:\.\w+|\[[^\]]*\])*")


def evaluate(document: Any, expression: str) -> Any:
    """A PATH, or arithmetic (+ - * /) over PATHs and numbers: `off.summary.model_calls - small.summary.model_calls`."""
    expression = expression.strip()
    if PATH.fullmatch(expression):
        return resolve(document, expression)
    values: list[Any] = []

    def name(m: re.Match) -> str:
        values.append(resolve(document, m.group(0)))
        return f"v{len(values) - 1}"

    return _arithmetic(ast.parse(PATH.sub(name, expression), mode="eval").body, values)


OPERATORS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b}
OPERATORS[ast.Div] = lambda a, b: a / b


def _arithmetic(node: ast.AST, values: list[Any]) -> Any:
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_arithmetic(node.left, values), _arithmetic(node.right, values))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_arithmetic(node.operand, values)
    if isinstance(node, ast.Name) and re.fullmatch(r"v\d+", node.id):
        return values[int(node.id[1:])]
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    raise ValueError(f"not arithmetic over figures: {ast.unparse(node)}")


class _Filler(string.Formatter):
    def __init__(self, document: Any):
        self.document = document

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, str]:
        return evaluate(self.document, field_name), field_name

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec.endswith("z"):  # .86 for 0.86, as tables of shares write them
            text = format(value, format_spec[:-1])
            return text[1:] if text.startswith("0.") else text
        return format(value, format_spec)


def fill(template: str, document: Any) -> str:
    """A template with its `{PATH:FORMAT}` fields filled in from the document."""
    return _Filler(document).format(template)


def problems(page_path: Path, root: Path = ROOT) -> list[str]:
    """Every way the figures of one page disagree with their files (named from `root`), or lack one: [] if none."""
    out = []
    name = page_path.relative_to(root) if page_path.is_relative_to(root) else page_path
    for block in blocks(page_path.read_text(encoding="utf-8")):
        where = f"{name}:{block.line}"
        for kind, rest in block.markers:
            if kind == "figures":
                out += _figures(where, block.text, rest, root)
            elif kind == "output":
                out += _output(where, block.text, rest, root)
            elif kind == "lines":
                out += _lines(where, block.text, root)
        if _shows_figures(block.text) and re.search(r"\d", re.sub(r"`[^`\n]*`", "", block.text)) and not block.markers:
            out.append(
                f"{where}: a table of figures without a source (<!-- figures FILE ... -->, see tests/figures.py)"
            )
    return out


def _figures(where: str, text: str, rest: str, root: Path) -> list[str]:
    source, *templates = [line.strip() for line in rest.splitlines() if line.strip()]
    files = dict(part.split("=", 1) for part in source.split()) if "=" in source else {"": source}
    missing = [f for f in files.values() if not (root / f).exists()]
    if missing:
        return [f"{where}: {', '.join(missing)} does not exist"]
    documents = {name: json.loads((root / f).read_text(encoding="utf-8")) for name, f in files.items()}
    document = documents[""] if "" in documents else documents  # several files: {NAME.PATH}
    out = []
    flat = " ".join(text.split())
    for template in templates:
        try:
            shown = fill(template, document)
        except (KeyError, IndexError, StopIteration, ValueError, TypeError) as e:
            out.append(f"{where}: {template!r} does not fit {source} ({type(e).__name__}: {e})")
            continue
        if shown not in text and " ".join(shown.split()) not in flat:
            out.append(f"{where}: {source} gives {shown!r}, which the page does not show")
    return out


def _output(where: str, text: str, rest: str, root: Path) -> list[str]:
    source = rest.strip()
    path = root / source
    if not path.exists():
        return [f"{where}: {source} does not exist"]
    saved = [line.rstrip() for line in path.read_text(encoding="utf-8").splitlines()]
    shown = [line.rstrip() for line in text.splitlines() if not line.startswith(("```", "$ "))]
    at = 0
    for line in (x for x in shown if x.strip()):
        try:
            at = saved.index(line, at) + 1
        except ValueError:
            return [f"{where}: {source} has no line {line!r} (after line {at})"]
    return []


def _lines(where: str, text: str, root: Path) -> list[str]:
    out, total = [], 0
    rows = re.findall(r"^\|\s*`([^`]+)`\s*\|\s*([\d,]+)\s*\|", text, re.M)
    for name, shown in rows:
        path = root / name
        if not path.exists():
            out.append(f"{where}: {name} does not exist")
            continue
        n = len(path.read_text(encoding="utf-8").splitlines())
        total += n
        if int(shown.replace(",", "")) != round(n, -1):
            out.append(f"{where}: {name} has {n} lines; write {round(n, -1):,}")
    for shown in re.findall(r"^\|\s*all\s*\|\s*([\d,]+)\s*\|", text, re.M):
        if int(shown.replace(",", "")) != round(total, -1):
            out.append(f"{where}: the files have {total} lines together; write {round(total, -1):,}")
    if not rows:
        out.append(f"{where}: <!-- lines --> under a table without | `PATH` | N | rows")
    return out


def _shows_figures(text: str) -> bool:
    """A table: a fenced text block, or Markdown table rows."""
    return text.startswith("```text") or text.lstrip().startswith("|")
