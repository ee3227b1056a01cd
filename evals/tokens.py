"""`python -m evals tokens --model NAME`: what each tool and the system prompt cost in prompt tokens, counted
by the model's own tokenizer and chat template: the server's prompt_eval_count for requests that differ by
one part (one token of reply each, so a run takes a few minutes even on a CPU).

    tools     sent one more at a time: a tool's cost is what adding it added (the template's own words for
              "you may call these tools" are counted once, on their own line)
    system    the fixed part of the system prompt, and the lines each tool group adds
    groups    what each group's tools cost together, as request.py sends them

Counts depend on the model family's tokenizer (Qwen2.5's here); the ratios carry over to others roughly.

`--dump FILE` asks no model: it writes the first request of every eval line as this checkout builds it
(system prompt, the tools the request gets, the line), and the tool list and system prompt, for
evals/gguf_tokens.py to count offline with the model's own chat template and tokenizer (the same count
the server reports, in seconds instead of an hour on a loaded CPU).
"""

from __future__ import annotations

import argparse
import datetime as dt
import inspect
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from planner.model.base import ChatModel
from planner.model.client import Ollama
from planner.prompts import system_prompt
from planner.settings import Config
from planner.storage.db import Store
from planner.tools import TOOLS, ToolContext, tool_specs

TODAY = dt.date(2026, 12, 1)


def count(llm: ChatModel, model: str, system: str, tools: list[dict[str, Any]]) -> int:
    """Prompt tokens of one request: this system prompt, the user saying "hi", these tools."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "hi"}]
    r = llm.chat_stream(model, messages, tools=tools or None, options={"num_predict": 1, "temperature": 0})
    return r.prompt_eval_count


def measure(llm: ChatModel, model: str) -> dict[str, Any]:
    """Tokens per tool, for the tools header, the system prompt (fixed part and per group) and per group."""
    with tempfile.TemporaryDirectory() as d:
        ctx = ToolContext(store=Store(Path(d) / "t.db"))
        specs = tool_specs(ctx)
        grouped = "groups" in inspect.signature(system_prompt).parameters  # the agent before tool groups had none
        full = system_prompt(TODAY)
        core = system_prompt(TODAY, ()) if grouped else full
        bare = count(llm, model, ".", [])
        out: dict[str, Any] = {"system_full": count(llm, model, full, []) - bare}
        out["system_core"] = count(llm, model, core, []) - bare if grouped else out["system_full"]
        if grouped:
            for g in dict.fromkeys(TOOLS[s["function"]["name"]].group for s in specs):
                out[f"system_{g}"] = count(llm, model, system_prompt(TODAY, (g,)), []) - bare - out["system_core"]
        per: dict[str, int] = {}
        before = count(llm, model, ".", [])
        for k in range(1, len(specs) + 1):
            now = count(llm, model, ".", specs[:k])
            per[specs[k - 1]["function"]["name"]] = now - before
            before = now
        # The first tool's line carried the template's tools header: count that tool again, second.
        first = specs[0]["function"]["name"]
        alone = count(llm, model, ".", [specs[1], specs[0]]) - count(llm, model, ".", [specs[1]])
        out["tools_header"], per[first] = per[first] - alone, alone
        out["tools"] = per
        if hasattr(TOOLS[first], "group"):
            groups: dict[str, int] = {}
            for name, n in per.items():
                groups[TOOLS[name].group] = groups.get(TOOLS[name].group, 0) + n
            out["groups"] = groups
        ctx.store.close()
    return out


def dump(scenarios: list[dict[str, Any]]) -> dict[str, Any]:
    """The first model request of every line of the scenarios, as the agent at this checkout builds it."""
    with tempfile.TemporaryDirectory() as d:
        ctx = ToolContext(store=Store(Path(d) / "t.db"))
        grouped = "groups" in inspect.signature(system_prompt).parameters
        out: dict[str, Any] = {"tools": tool_specs(ctx), "system_full": system_prompt(TODAY), "requests": []}
        if grouped:
            from planner.agent.request import groups_for

            out["system_core"] = system_prompt(TODAY, ())
        for s in scenarios:
            for run in s["runs"]:
                for i, line in enumerate(run):
                    groups = groups_for(line, run[max(0, i - 2) : i]).groups if grouped else None
                    tools = tool_specs(ctx, groups) if groups else out["tools"]
                    system = system_prompt(TODAY, groups) if groups else out["system_full"]
                    messages = [{"role": "system", "content": system}, {"role": "user", "content": line}]
                    out["requests"].append(
                        {"id": s["id"], "category": s.get("category", ""), "line": line, "groups": groups}
                        | {"messages": messages, "tools": tools}
                    )
        ctx.store.close()
    return out


def table(m: dict[str, Any]) -> str:
    """The measurement as markdown tables."""
    lines = ["| tool | group | tokens |", "|---|---|---|"]
    for name, n in m["tools"].items():
        lines.append(f"| `{name}` | {getattr(TOOLS.get(name), 'group', '')} | {n} |")
    lines.append(f"| (the template's tools header) | | {m['tools_header']} |")
    lines.append(f"| **all tools** | | **{sum(m['tools'].values()) + m['tools_header']}** |")
    lines += ["", "| system prompt | tokens |", "|---|---|", f"| all of it | {m['system_full']} |"]
    lines.append(f"| the fixed part | {m['system_core']} |")
    lines += [f"| lines for {k[7:]} | {v} |" for k, v in m.items() if k.startswith("system_") and k[7:] in _GROUPS]
    if "groups" in m:
        lines += ["", "| tool group | tokens |", "|---|---|", *(f"| {g} | {n} |" for g, n in m["groups"].items())]
    return "\n".join(lines)


_GROUPS = ("read", "add", "change", "plan", "memory", "lookup")


def main(argv: list[str] | None = None) -> int:
    """Measure against the server OLLAMA_HOST points at and print the tables."""
    base = Config.from_env()
    p = argparse.ArgumentParser(prog="python -m evals tokens", description=__doc__.splitlines()[0])
    p.add_argument("--model", default=base.model)
    p.add_argument("--dump", type=Path, help="write the requests of the eval lines here instead (no model)")
    args = p.parse_args(argv)
    if args.dump:
        from evals.runner import load_scenarios

        args.dump.write_text(json.dumps(dump(load_scenarios())))
        return 0
    llm = Ollama(base.host, timeout=base.timeout, reply_seconds=base.reply_timeout)
    try:
        print(table(measure(llm, args.model)))
    finally:
        llm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
