"""Run the benchmarks and print their tables: `python -m bench [speed|dates|faults|plan|files] [--quick]`.

Numbers are medians on this machine, measured side by side in one process;
compare rows of one run, not runs on different days. --quick uses small sizes
so CI can prove the scripts run; its numbers mean little.
"""

from __future__ import annotations

import argparse
import os
import sys

# As the planner runs (planner/memory/vectors.py), before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


from bench import agent, dates, faults, files, plan, recall  # noqa: E402

# (benchmark, n) -> target ms per query
TARGETS = {
    ("recall, VectorIndex", 100_000): 30.0,
    ("recall, CompactIndex", 1_000_000): 150.0,
}


# one recall against the bare scan (x scan) or the search as it was before time and scenes (x before)
RECALL_TARGETS = {
    "one recall": ("scan", 1.2),
    "one recall, a month named": ("before", 1.0),
    "one recall, a scene named": ("before", 1.0),
}


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark table."""
    p = argparse.ArgumentParser(prog="python -m bench")
    p.add_argument(
        "what",
        nargs="?",
        choices=["all", "speed", "faults", "dates", "plan", "files"],
        default="all",
        help="which tables (all)",
    )
    p.add_argument("--quick", action="store_true", help="tiny sizes, to check the scripts run")
    p.add_argument(
        "--full", action="store_true", help="include 1,000,000 memories (a 3 GB temporary database; minutes)"
    )
    args = p.parse_args(argv)
    if args.what in ("all", "speed"):
        speed(args)
    if args.what in ("all", "dates"):
        print()
        dates.table(dates.run())
    if args.what in ("all", "plan"):
        print()
        plan.table(plan.run(args.quick))
    if args.what in ("all", "files"):
        print()
        files.table(args.quick)
    if args.what in ("all", "faults"):
        print()
        held = faults.table(faults.run(args.quick))
        print()
        held = faults.process_table(faults.process_faults(args.quick)) and held
        if not held:
            return 1  # a fault scenario lost or broke something: unlike a slow run, never noise
    return 0


def speed(args: argparse.Namespace) -> None:
    """The recall and agent tables."""
    if args.quick:
        sizes, loops = [1_000], [1_000]
    else:
        sizes, loops = [1_000, 10_000, 100_000] + ([1_000_000] if args.full else []), [1_000, 10_000]
    rows = recall.run(sizes, loops, repeats=5 if args.quick else 30)
    print(
        f"{'benchmark':<28} {'n':>10} {'ms/query':>9} {'load ms':>8} {'resident MB':>12} {'agree@10':>9} {'target':>14}"
    )
    for r in rows:
        target = TARGETS.get((r["what"], r["n"]))
        mark = "" if target is None else (f"<= {target:.0f} ms " + ("ok" if r["ms"] <= target else "MISSED"))
        load = f"{r['load_ms']:.0f}" if r["load_ms"] is not None else "-"
        mb = f"{r['mb']:.0f}" if r["mb"] is not None else "-"
        agree = f"{r['agree']:.2f}" if r["agree"] is not None else "-"
        print(f"{r['what']:<28} {r['n']:>10,} {r['ms']:>9.2f} {load:>8} {mb:>12} {agree:>9} {mark:>14}")
    print()
    n = 1_000 if args.quick else 100_000
    scan = recall.recall_vs_scan(n, repeats=5 if args.quick else 40)
    before = next(r["ms"] for r in scan if r["what"].startswith("one recall as before"))
    print(
        f"{'recall against a bare scan, same matrix':<44} {'n':>8} {'ms':>8} {'x scan':>7} {'x before':>9} {'target':>16}"
    )
    for r in scan:
        target = RECALL_TARGETS.get(r["what"])
        mark = ""
        if target:
            value = r["ratio"] if target[0] == "scan" else r["ms"] / before
            mark = f"<= {target[1]:g}x {target[0]} " + ("ok" if value <= target[1] else "MISSED")
        print(f"{r['what']:<44} {r['n']:>8,} {r['ms']:>8.2f} {r['ratio']:>7.2f} {r['ms'] / before:>9.2f} {mark:>16}")
    print()
    print(f"{'benchmark':<48} {'value':>10} {'unit':<18} {'target':>16}")
    for r in agent.run(args.quick):
        t = r["target"]
        if t is None:
            mark = ""
        else:
            ok = r["value"] >= t if r.get("higher") else r["value"] <= t
            mark = f"{'>=' if r.get('higher') else '<='} {t:g} " + ("ok" if ok else "MISSED")
        print(f"{r['what']:<48} {r['value']:>10.3g} {r['unit']:<18} {mark:>16}")


if __name__ == "__main__":
    sys.exit(main())
