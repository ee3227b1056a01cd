"""The memory eval's three data sets as one shape: users, what each said (in order, with the day), and the
questions asked of it with their evidence.

- bfcl: BFCL v4's memory category (evals/bfcl.py), five users, single facts;
- lifelog: five generated lives (evals/lifelog.py), six kinds of question;
- realtalk: REALTALK (evals/realtalk.py), ten real conversations between two people, three kinds;
  a part of it (`tuning` or `held`) at a time.

Evidence is a list of groups, one per fact a question needs; a group holds the texts or the turn keys
("D3:24") of the sentences that state it, any one of them being enough.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from evals import lifelog, realtalk
from evals.bfcl import SCENARIOS, evidence_ids, evidence_sentences, sentences

BFCL_SAID, BFCL_TODAY = dt.date(2026, 1, 1), dt.date(2026, 1, 2)  # BFCL's turns carry no days


@dataclass
class Question:
    """A question to one user's memories: its kind, the evidence groups (texts or turn keys), answers,
    context, today."""

    kind: str
    question: str
    evidence: list[set[str]]
    answer: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)
    today: dt.date = BFCL_TODAY


@dataclass(frozen=True)
class Said:
    """One thing said: its text, topic, day; for a conversation's turn, who said it, where, and its key."""

    text: str
    topic: str
    day: dt.date
    speaker: str | None = None
    conversation: str | None = None
    turn_no: int | None = None
    key: str | None = None


@dataclass
class User:
    """What one user (or one conversation) said, in order, and the questions asked of it."""

    name: str
    said: list[Said]
    questions: list[Question]


def bfcl_users(data: tuple, unit: str = "sentence") -> list[User]:
    """BFCL's five users: their turns (or the turns' sentences) and questions, all single facts."""
    turns, questions = data
    users = []
    for scenario in SCENARIOS:
        said = {i: t["text"] for i, t in enumerate(turns[scenario])}
        texts = [
            Said(x, t["topic"], BFCL_SAID)
            for t in turns[scenario]
            for x in (sentences(t["text"]) if unit == "sentence" else [t["text"]])
        ]
        asked = []
        for q in (q for q in questions if q["scenario"] == scenario):
            turn_ids = evidence_ids(q["evidence"], said)
            if unit == "sentence":  # the sentences of the evidence turn that hold the answer
                group = set().union(*(evidence_sentences(q["evidence"], said[i]) for i in turn_ids))
            else:
                group = {said[i] for i in turn_ids}
            asked.append(Question("single", q["question"], [group], q.get("answer", [])))
        users.append(User(scenario, texts, asked))
    return users


def lifelog_users(seeds: tuple[int, ...] = lifelog.SEEDS) -> list[User]:
    """The generated lives: every sentence with the day it was said, the questions asked on lifelog.ASKED."""
    users = []
    for seed in seeds:
        log = lifelog.generate(seed)
        by_key: dict[str, set[str]] = {}
        for s in log.said:
            if s.key:
                by_key.setdefault(s.key, set()).add(s.text)
        questions = [
            Question(
                q.kind,
                q.question,
                [set().union(*(by_key[k] for k in g)) for g in q.evidence],
                q.answer,
                q.context,
                lifelog.ASKED,
            )
            for q in log.questions
        ]
        users.append(User(f"life {seed}", [Said(s.text, "", s.day) for s in log.said], questions))
    return users


def realtalk_users(directory: Path, part: str = "tuning") -> list[User]:
    """REALTALK's conversations of one part, each a user: every turn with its speaker, day and place, and the
    questions about it, asked the day after its last turn; each evidence turn is a group of its own."""
    users = []
    for conv in realtalk.load(directory, part):
        said = [Said(t.text, "", t.day, t.speaker, conv.name, n, t.key) for n, t in enumerate(conv.turns)]
        questions = [
            Question(q.kind, q.question, [{k} for k in dict.fromkeys(q.evidence)], [q.answer], [], conv.asked_on)
            for q in conv.questions
        ]
        users.append(User(conv.name, said, questions))
    return users
