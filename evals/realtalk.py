"""REALTALK as the memory eval reads it: real conversations between people, their questions and evidence.

REALTALK (Lee, Maharana, Pujara, Ren, Barbieri, 2025, arXiv 2502.13270) is ten messaging-app
conversations between real people over 21 days: 18-25 sessions each, 410-1,548 turns, 8,944 in all,
and 728 memory-probing questions, each with the turns that hold its answer ("D3:24": session 3,
turn 24) and one of three kinds: multi-hop (1), temporal (2), open-domain (3). No one on this
project wrote them, and their turns are what people type: short replies, typos, "haha", pronouns
for people named a session before.

Where it comes from: the REALTALK repository on GitHub (danny911kr/REALTALK, commit b903e06), its
`data/Chat_*.json` files; `data/locomo/` beside them is LoCoMo and is never read (LoCoMo is held out
to check this work from outside). The repository carries no licence file: the data is read from a
local copy for measurement only, never committed or shipped. There is no package of it on a
registry, so the eval cannot fetch it: put the ten files (or a checkout) in the cache,
~/.cache/planner-evals/realtalk/, or pass `--data DIR`; each file is checked against its sha256.

Two parts, fixed once: the conversations are ordered by sha256("planner-37/" + file name) and the
first four are held aside (`held`), the other six tune (`tuning`). Tuning looks only at `tuning`;
`--part held` is for the final check.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.bfcl import cache_dir

COMMIT = "b903e06a9770bf4e5fe9018c3e132889666d3b4a"
FILES = {
    "Chat_1_Emi_Elise.json": "4e947998a751a1ba2c3710fc873b90fbcbc234fda7a5e4e75db2b762e0f25a36",
    "Chat_2_Kevin_Elise.json": "4ac6e319c206731aa9a025c93325eb1edb43686cf39473f058c87ae7deb2d62a",
    "Chat_3_Kevin_Paola.json": "10c9208016538cbe7a28aafa6cfd72587b072677964c36ec242159fdf58961f2",
    "Chat_4_Emi_Paola.json": "80aa012ed6a918f5b317bd942b4d4811a158d27a6e07b7a5c6182994107a9367",
    "Chat_5_Nicolas_Nebraas.json": "32dd7c45786b1a26861dc1574a1bb698a855196fd2ae3fc0c091f3c9ab2d6d06",
    "Chat_6_Vanessa_Nicolas.json": "9d5ee072ab5a0667ef71d5644d7cd3a4c6777a1e6e2252bf306f310d982e40ac",
    "Chat_7_Nebraas_Vanessa.json": "b5716bb093217980e747dec0d98996829b569febc09587a025efc6b79806e9ce",
    "Chat_8_Akib_Muhhamed.json": "814f64ad7e8a46f0398f550fe84184e2ba495a292290b9ff96ffc95448280800",
    "Chat_9_Fahim_Akib.json": "05b9b4331bf0e25a2a64dc89c404622c83a61ab5e7c935fb7d844449caf6dd39",
    "Chat_10_Fahim_Muhhamed.json": "26135a9e3482f40bea4c71de570a2d994a361848111067e60587be1dd82a0127",
}
KINDS = {1: "multi-hop", 2: "temporal", 3: "open-domain"}
SPLIT_SEED = "planner-37/"
HELD = 4  # conversations held aside


@dataclass(frozen=True)
class Turn:
    """One message: who sent it, when, its text (a shared photo's caption after it) and its label ("D3:24")."""

    key: str
    speaker: str
    day: dt.date
    text: str
    session: int


@dataclass(frozen=True)
class Question:
    """A question about the conversation, its answer, its kind and the turns that hold the answer."""

    kind: str
    question: str
    answer: str
    evidence: list[str]  # turn labels


@dataclass
class Conversation:
    """One conversation between two people: its turns in order and the questions asked about it."""

    name: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    @property
    def asked_on(self) -> dt.date:
        """The day the questions are taken to be asked: the day after the last turn."""
        return max(t.day for t in self.turns) + dt.timedelta(days=1)


def part_of(name: str) -> str:
    """Which part a conversation belongs to ("held" or "tuning"), from a seeded hash of its file name."""
    order = sorted(FILES, key=lambda n: hashlib.sha256((SPLIT_SEED + n).encode()).hexdigest())
    return "held" if order.index(name) < HELD else "tuning"


def _day(stamp: str) -> dt.date:
    # "29.12.2023, 22:42:04"
    return dt.datetime.strptime(stamp.split(",")[0].strip(), "%d.%m.%Y").date()


def parse(name: str, data: dict[str, Any]) -> Conversation:
    """A conversation from one REALTALK file's JSON."""
    conv = Conversation(name.removesuffix(".json"))
    sessions = sorted(
        (int(m[1]), key) for key in data if (m := re.fullmatch(r"session_(\d+)", key)) and isinstance(data[key], list)
    )
    for number, key in sessions:
        for t in data[key]:
            text = " ".join(str(t.get("clean_text", "")).split())
            if t.get("blip_caption"):
                text = f"{text} [photo: {t['blip_caption']}]"
            if text:
                conv.turns.append(Turn(t["dia_id"], t["speaker"], _day(t["date_time"]), text, number))
    known = {t.key for t in conv.turns}
    for q in data.get("qa", []):
        kind = KINDS.get(q.get("category"))
        evidence = [e for e in q.get("evidence", []) if e in known]
        if kind and evidence:  # a question whose labels name no turn cannot be scored for recall
            conv.questions.append(Question(kind, q["question"], str(q.get("answer", "")), evidence))
    return conv


def fetch(data: Path | None = None) -> Path:
    """The directory holding the ten files, checked: `data` (copied into the cache) or the cache itself."""
    target = cache_dir() / "realtalk"
    if data is not None:
        source = data / "data" if (data / "data" / next(iter(FILES))).exists() else data
        target.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            if (source / name).exists():
                shutil.copyfile(source / name, target / name)
    missing = [n for n in FILES if not (target / n).exists()]
    if missing:
        raise SystemExit(
            f"error: REALTALK is not in {target} ({len(missing)} of its files missing); put data/Chat_*.json of "
            f"the REALTALK repository (danny911kr/REALTALK on GitHub, commit {COMMIT[:7]}) there, "
            "or pass --data DIR"
        )
    for name, digest in FILES.items():
        if hashlib.sha256((target / name).read_bytes()).hexdigest() != digest:
            raise SystemExit(f"error: {target / name} is not the file this eval was written for (sha256 differs)")
    return target


def load(directory: Path, part: str = "tuning") -> list[Conversation]:
    """The conversations of one part ("tuning", "held" or "all"), in file order."""
    names = [n for n in FILES if part == "all" or part_of(n) == part]
    return [parse(n, json.loads((directory / n).read_text())) for n in names]
