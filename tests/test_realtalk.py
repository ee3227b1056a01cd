"""REALTALK as the memory eval reads it, on conversations generated here in its format (the data itself is
never in the repository): turns, evidence, the fixed split, the checked download, and one run of
`python -m evals memory --set realtalk` through its entry point against the fake server."""

import hashlib
import json
import re

import pytest
from conftest import ROOT, clean_env
from helpers import in_process

from evals import realtalk

WORDS = "pasta hiking Morocco library skiing tiramisu museum concert beach sunset".split()


def conversation(seed: int, sessions: int = 3, turns: int = 6) -> dict:
    """A conversation in REALTALK's format: sessions of alternating turns, a shared photo, and questions whose
    evidence names turns (one names a turn that does not exist, as a few of REALTALK's do)."""
    data = {"name": {"speaker_1": "Kate", "speaker_2": "elise"}, "qa": []}
    for s in range(1, sessions + 1):
        stamp = f"{10 + s:02d}.01.2024, 20:00:00"
        data[f"session_{s}_date_time"] = stamp
        data[f"session_{s}"] = [
            {
                "clean_text": f"Session {s} turn {t}: I talked about {WORDS[(seed + s * turns + t) % len(WORDS)]}.",
                "speaker": "Kate" if t % 2 == 0 else "elise",
                "date_time": stamp,
                "dia_id": f"D{s}:{t + 1}",
                **({"blip_caption": "a cat on a bed"} if t == 3 else {}),
            }
            for t in range(turns)
        ]
        data[f"events_session_{s}"] = {}
    data["qa"] = [
        {"question": "What did Kate say about pasta?", "answer": "She loves it", "evidence": ["D1:1"], "category": 1},
        {"question": "When did Elise go skiing?", "answer": "12 January, 2024", "evidence": ["D2:2"], "category": 2},
        {"question": "What do they share?", "answer": "Food", "evidence": ["D3:1", "D3:3"], "category": 3},
        {"question": "Lost label?", "answer": "x", "evidence": ["D9:99"], "category": 1},
        {"question": "Adversarial?", "answer": "x", "evidence": ["D1:1"], "category": 5},
    ]
    return data


def test_a_conversation_is_read_in_order_with_its_days_photos_and_labelled_questions():
    conv = realtalk.parse("Chat_1_Kate_Elise.json", conversation(1))
    assert [t.key for t in conv.turns[:7]] == ["D1:1", "D1:2", "D1:3", "D1:4", "D1:5", "D1:6", "D2:1"]
    assert conv.turns[3].text.endswith("[photo: a cat on a bed]") and conv.turns[1].speaker == "elise"
    assert conv.turns[6].day.isoformat() == "2024-01-12" and conv.asked_on.isoformat() == "2024-01-14"
    # kinds 1-3 kept; a question whose labels name no turn, and LoCoMo's kinds 4-5, are not scored
    assert [(q.kind, q.evidence) for q in conv.questions] == [
        ("multi-hop", ["D1:1"]),
        ("temporal", ["D2:2"]),
        ("open-domain", ["D3:1", "D3:3"]),
    ]


def test_the_split_is_fixed_by_a_seeded_hash_and_the_docs_name_the_held_conversations():
    held = [n for n in realtalk.FILES if realtalk.part_of(n) == "held"]
    expect = sorted(realtalk.FILES, key=lambda n: hashlib.sha256(("planner-37/" + n).encode()).hexdigest())
    assert held == [n for n in realtalk.FILES if n in expect[: realtalk.HELD]] and len(held) == 4
    page = (ROOT / "docs" / "memory.md").read_text()
    named = re.search(r"held aside: ([^.]+)\.", page)[1]
    assert sorted(re.findall(r"Chat_\d+_\w+", named)) == sorted(n.removesuffix(".json") for n in held)


def test_the_data_is_checked_and_a_missing_or_other_file_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_EVALS_CACHE", str(tmp_path / "cache"))
    with pytest.raises(SystemExit, match="REALTALK is not in .*10 of its files missing"):
        realtalk.fetch()
    source = tmp_path / "checkout" / "data"
    source.mkdir(parents=True)
    for name in realtalk.FILES:
        (source / name).write_text("{}")
    with pytest.raises(SystemExit, match="is not the file this eval was written for"):
        realtalk.fetch(tmp_path / "checkout")


@pytest.mark.slow
def test_the_eval_stores_each_conversation_both_ways_and_scores_each_kind(fake, tmp_path, monkeypatch):
    from evals.__main__ import main

    source = tmp_path / "data"
    source.mkdir()
    files = {}
    for i, name in enumerate(("Chat_1_Kate_Elise.json", "Chat_2_Kate_Elise.json")):
        (source / name).write_text(json.dumps(conversation(i)))
        files[name] = hashlib.sha256((source / name).read_bytes()).hexdigest()
    monkeypatch.setattr(realtalk, "FILES", files)
    monkeypatch.setattr(realtalk, "HELD", 0)
    env = clean_env(OLLAMA_HOST=fake.url, PLANNER_HOME=str(tmp_path), PLANNER_EVALS_CACHE=str(tmp_path / "cache"))
    out = tmp_path / "out.json"
    args = ["memory", "--set", "realtalk", "--realtalk", str(source), "--path", "both", "--json", str(out)]
    p = in_process(args, env, main=main, program=ROOT / "evals" / "__main__.py")
    assert p.returncode == 0, p.stderr
    results = json.loads(out.read_text())
    assert [(r["dataset"], r["path"]) for r in results] == [("realtalk/tuning", "store"), ("realtalk/tuning", "raw")]
    for r in results:
        assert r["memories"] == 36 and r["unmatched"] == 0  # every turn stored, every question's evidence found
        assert r["kinds"] == {"multi-hop": 2, "temporal": 2, "open-domain": 2}
        assert all(0 <= v <= 1 for kinds in r["by_kind"].values() for kind in kinds.values() for v in kind.values())
    assert "realtalk/tuning, raw" in p.stdout


@pytest.mark.parametrize("part", ["tuning", "held"])
def test_the_figures_on_the_page_are_the_result_files(part):
    from evals.memory import doc_table

    results = json.loads((ROOT / "evals" / "results" / f"memory-realtalk-{part}-e5.json").read_text())
    page = (ROOT / "docs" / "memory.md").read_text()
    for line in doc_table(results).splitlines()[1:]:
        assert line in page, line
