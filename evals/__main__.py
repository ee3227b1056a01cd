"""`python -m evals --model NAME`: run the scenario suite against whatever
Ollama OLLAMA_HOST points at and print one row per scenario and a summary.

    python -m evals --model qwen3.5:9b --json qwen9b.json
    python -m evals --model qwen3.5:9b --only conversation     # the multi-turn conversations
    python -m evals --compare before.json after.json
    python -m evals tokens --model main                          # prompt tokens per tool and of the prompt
    python -m evals --model main --tool-groups all                # every tool with every call, to compare

`run` is the suite with the model given, already checked: a test passes a scripted one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evals.runner import SCENARIOS, Outcome, load_scenarios, report, run_suite, summary  # noqa: E402
from planner.model.base import ChatModel  # noqa: E402
from planner.model.client import Ollama  # noqa: E402
from planner.settings import GUARD_PROFILES, TOOL_CHOICES, Config  # noqa: E402
from planner.ui.cli import ensure_models, setup_logging  # noqa: E402

ROW = "{:<26} {:<5} {:>7} {:>5} {:>8} {:>6} {:>7}  {}"


def _row(o: Outcome) -> str:
    why = "; ".join(o.reasons)
    return ROW.format(
        o.id,
        "pass" if o.passed else "FAIL",
        f"{o.replies_passed}/{o.replies_checked}" if o.replies_checked else "-",
        o.model_calls,
        o.prompt_tokens,
        o.eval_tokens,
        f"{o.seconds:.1f}",
        why[:160],
    )


def _summary_line(s: dict, model: str) -> str:
    replies = f" · replies {s['replies_passed']}/{s['replies_checked']}" if s["replies_checked"] else ""
    return (
        f"{model}: passed {s['passed']}/{s['total']} ({s['rate']:.0%}){replies} · {s['model_calls']} model calls · "
        f"{s['prompt_tokens']:,} prompt tokens · {s['eval_tokens']:,} eval tokens · {s['seconds']:.0f} s · "
        f"{s['background_calls']} background calls · {s['corrections']} replies corrected, {s['reasks']} asked again"
    )


def compare(paths: list[Path]) -> int:
    """Print runs side by side: one column per run, one row per scenario."""
    runs = [json.loads(p.read_text()) for p in paths]
    names = [f"{r['model']} ({p.stem})" for r, p in zip(runs, paths, strict=True)]
    ids = list(dict.fromkeys(s["id"] for r in runs for s in r["scenarios"]))
    width = max(14, *(len(n) for n in names))
    print(f"{'scenario':<26} " + " ".join(f"{n:>{width}}" for n in names))
    for sid in ids:
        cells = []
        for r in runs:
            s = next((s for s in r["scenarios"] if s["id"] == sid), None)
            cells.append("-" if s is None else ("pass" if s["passed"] else "FAIL"))
        print(f"{sid:<26} " + " ".join(f"{c:>{width}}" for c in cells))
    rates = [f"{r['summary']['passed']}/{r['summary']['total']} ({r['summary']['rate']:.0%})" for r in runs]
    print(f"{'passed':<26} " + " ".join(f"{c:>{width}}" for c in rates))
    rows = {
        "replies passed": lambda s: (
            f"{s['replies_passed']}/{s['replies_checked']}" if s.get("replies_checked") else "-"
        ),
        "model calls": lambda s: str(s["model_calls"]),
        "prompt tokens": lambda s: f"{s['prompt_tokens']:,}" if "prompt_tokens" in s else "-",
        "background calls": lambda s: str(s.get("background_calls", "-")),
        "replies corrected": lambda s: str(s.get("corrections", "-")),
        "asked again": lambda s: str(s.get("reasks", "-")),
        "time": lambda s: f"{s['seconds']:.0f} s",
    }
    for label, cell in rows.items():
        print(f"{label:<26} " + " ".join(f"{cell(r['summary']):>{width}}" for r in runs))
    return 0


def run(scenarios: list[dict], llm: ChatModel, config: Config, json_path: Path | None = None) -> int:
    """Run the scenarios against a model that is there, printing a row for each and the summary; 0."""
    print(ROW.format("scenario", "", "replies", "calls", "prompt", "eval", "secs", "why it failed"))
    outcomes = run_suite(scenarios, llm, config, on_outcome=lambda o: print(_row(o), flush=True))
    print(_summary_line(summary(outcomes), config.model))
    if json_path:
        json_path.write_text(json.dumps(report(outcomes, config), indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the suite or compare saved runs; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["memory"]:  # the retrieval eval on public data (evals/memory.py)
        from evals import memory

        return memory.main(argv[1:])
    if argv[:1] == ["tokens"]:  # what each tool and the system prompt cost in prompt tokens (evals/tokens.py)
        from evals import tokens

        return tokens.main(argv[1:])
    base = Config.from_env()
    p = argparse.ArgumentParser(prog="python -m evals", description="Score the planner on scenarios against a model.")
    p.add_argument("--model", default=base.model)
    p.add_argument("--critic-model", default=base.critic_model)
    p.add_argument("--embed-model", default=base.embed_model)
    p.add_argument("--no-reflect", dest="reflect", action="store_false", help="skip the critic")
    p.add_argument(
        "--guards", choices=GUARD_PROFILES, default=base.guards, help=f"guard profile (default {base.guards})"
    )
    p.add_argument(
        "--tool-groups", choices=TOOL_CHOICES, default=base.tool_groups, help="tools sent per call (default needed)"
    )
    p.add_argument("--only", default="", help="comma-separated scenario ids or categories to run")
    p.add_argument("--scenarios", type=Path, default=SCENARIOS, help="scenario file")
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--log", type=Path, help="write the agent log here")
    p.add_argument("--compare", type=Path, nargs="+", metavar="RUN.json", help="compare saved runs instead")
    args = p.parse_args(argv)
    if args.compare:
        return compare(args.compare)

    config = base.replace(
        model=args.model,
        critic_model=args.critic_model,
        embed_model=args.embed_model,
        reflect=args.reflect,
        guards=args.guards,
        tool_groups=args.tool_groups,
    )
    scenarios = load_scenarios(args.scenarios)
    if args.only:
        wanted = set(args.only.split(","))
        scenarios = [s for s in scenarios if s["id"] in wanted or s.get("category") in wanted]
    if args.log:
        setup_logging(args.log)
    llm = Ollama(config.host, timeout=config.timeout, reply_seconds=config.reply_timeout)
    try:
        problem, _ = ensure_models(llm, config, interactive=False)
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 1
        return run(scenarios, llm, config, args.json)
    finally:
        llm.close()


if __name__ == "__main__":
    sys.exit(main())
