"""The store path loses nothing a question could need; a turn comes with the turns around it; recall knows who
said what; memory's tables are read and written in one module.

The restatement rule is checked over generated pairs with an embedder that scores every pair of
sentences close (as multilingual-e5-small does, 0.8-0.9 for anything): only the rule decides."""

import json
import re
from pathlib import Path

import pytest
from conftest import TODAY, local_embed
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.memory.longterm import LongTermMemory
from planner.memory.vectors import Embedder

ROOT = Path(__file__).resolve().parent.parent
PEOPLE = ["Ana", "Priya", "Henk", "Tomás", "Mei", "Kofi"]
PLACES = ["Lisbon", "Porto", "Zeist", "Ghent"]


def close(model, texts):
    """Every pair of texts scores ~1.0: whether two memories merge is left to the restatement rule alone."""
    return [[1.0, 0.001 * (len(t) % 3)] for t in texts]


def fresh(tmp_path, name):
    from planner.storage.db import Store

    return LongTermMemory(Store(tmp_path / f"{name}.db"), Embedder(close, "close"), today=lambda: TODAY)


sentence = st.builds(
    lambda who, where, n, speaker: (
        f"I had a lovely long dinner with {who} in {where} and we paid {n} euros for the whole evening.",
        speaker,
    ),
    st.sampled_from(PEOPLE),
    st.sampled_from(PLACES),
    st.integers(10, 99),
    st.sampled_from([None, "Elise", "Kate"]),
)


@settings(max_examples=60, deadline=None)
@given(first=sentence, second=sentence)
def test_two_tellings_merge_only_when_names_numbers_and_speaker_are_the_same(tmp_path_factory, first, second):
    mem = fresh(tmp_path_factory.mktemp("m"), "pair")
    a = mem.store_cell(first[0], speaker=first[1], said_on="2026-05-01")
    b = mem.store_cell(second[0], speaker=second[1], said_on="2026-05-02")
    if first == second:  # said again a day later: one memory, said on the newer day, the older day kept
        assert b["updated"]["id"] == a["remembered"]["id"]
        assert [(m["text"], m["said_on"]) for m in mem.all()] == [(first[0], "2026-05-02")]
        old = mem.store.conn().execute("SELECT row FROM memory_history").fetchone()[0]
        assert json.loads(old)["said_on"] == "2026-05-01"
    else:  # another name, place, amount or speaker: both kept, the second linked to the first
        assert b["remembered"]["beside"] == a["remembered"]["id"]
        assert sorted(m["text"] for m in mem.all()) == sorted([first[0], second[0]])


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Yes!", "yes"),  # a reply means what the turn before it said: two replies are two memories
        ("I went to the dentist yesterday.", "I went to the dentist."),  # one names a day, the other none
        ("I went to the dentist yesterday.", "I went to the dentist yesterday."),  # said on two days: two visits
    ],
)
def test_replies_and_events_on_other_days_are_never_merged(tmp_path, first, second):
    mem = fresh(tmp_path, "pair")
    mem.store_cell(first, said_on="2026-05-01")
    assert "remembered" in mem.store_cell(second, said_on="2026-05-09")
    assert len(mem.all()) == 2


TOLD = [
    "I had a lovely long dinner with Ana in Porto and we paid 40 euros for the whole evening.",
    "My sister moved to Lisbon and she loves the food there.",
]


@settings(max_examples=30, deadline=None)
@given(
    said=st.lists(
        st.tuples(st.sampled_from(["Kate", "Elise"]), st.sampled_from(TOLD), st.integers(0, 2)),
        min_size=2,
        max_size=8,
    )
)
def test_every_turn_of_a_conversation_keeps_its_own_row_at_its_place(tmp_path_factory, said):
    # The same words said again later in a conversation are another turn: its place and day are kept, not
    # folded into the first telling (whose place the neighbours and stretches read).
    mem = fresh(tmp_path_factory.mktemp("t"), "turns")
    days = ["2026-05-01", "2026-05-02", "2026-05-03"]
    for n, (who, text, day) in enumerate(said):
        out = mem.store_cell(text, speaker=who, conversation="c1", turn_no=n, said_on=days[day])
        assert "remembered" in out
    rows = mem.store.conn().execute("SELECT turn_no, speaker, text, said_on FROM memories ORDER BY turn_no")
    assert [tuple(r) for r in rows] == [(n, who, text, days[day]) for n, (who, text, day) in enumerate(said)]


@pytest.fixture
def mem(store):
    return LongTermMemory(store, Embedder(local_embed, "embed"), today=lambda: TODAY)


def converse(mem, turns, conversation="c1", day="2026-11-20"):
    """Store (speaker, text) turns as one conversation, in order; their ids."""
    return [
        mem.store_cell(text, speaker=who, conversation=conversation, turn_no=i, said_on=day)["remembered"]["id"]
        for i, (who, text) in enumerate(turns)
    ]


FILLER = [
    "The weather was grey all week.",
    "I finished the report for work.",
    "We should watch that series soon.",
    "My phone battery keeps dying.",
    "The bakery on the corner closed early.",
    "I need new running shoes.",
    "Traffic was terrible this morning.",
    "That song is stuck in my head.",
]


@settings(max_examples=15, deadline=None)
@given(at=st.integers(0, len(FILLER)), rng=st.randoms(use_true_random=False))
def test_a_reply_comes_up_with_the_question_it_answered(tmp_path_factory, at, rng):
    from planner.storage.db import Store

    mem = LongTermMemory(
        Store(tmp_path_factory.mktemp("c") / "c.db"), Embedder(local_embed, "embed"), today=lambda: TODAY
    )
    filler = rng.sample(FILLER, len(FILLER))
    turns = [("Kate", f) for f in filler[:at]]
    turns += [("Kate", "Did you ever make it to the Miami art fair?"), ("Elise", "Yes, twice!")]
    turns += [("Kate", f) for f in filler[at:]]
    ids = converse(mem, turns)
    reply = ids[at + 1]
    hits = mem.search("Did Elise go to the art fair in Miami?", 5)
    hit = next(h for h in hits if h["id"] == reply)  # found although it shares no word with the question
    assert hit["speaker"] == "Elise" and hit["before"]["text"] == "Did you ever make it to the Miami art fair?"
    assert "answering Kate: Did you ever make it" in mem.with_notes("Did Elise go to the art fair in Miami?", 5)


def test_a_search_brings_what_a_person_said_and_the_turns_that_say_she(mem):
    converse(
        mem,
        [
            ("elise", "I just got back from a long hike in the hills."),
            ("Kate", "My sister Ana moved to Porto last month."),
            ("Kate", "She loves the food there."),
            ("elise", "I adore pottery, I go every Thursday."),
            ("Kate", "The bakery on the corner closed early."),
        ],
    )
    while not mem.scenes.refresh():
        pass
    scenes = {s["name"]: {m["text"] for m in mem.all() if m["id"] in s["memories"]} for s in mem.scenes.all()}
    assert "I adore pottery, I go every Thursday." in scenes["Elise"]  # the speaker is a name the turn holds
    assert "She loves the food there." in scenes["Ana"]  # "she" after Ana was named: Ana's scene
    # neither of her turns says "Elise": the speaker's scene brings them
    top = {h["text"] for h in mem.search("What did Elise say?", 2)}
    assert top == {"I adore pottery, I go every Thursday.", "I just got back from a long hike in the hills."}


TOPICS = ["pottery class", "harbour walk", "jazz concert", "ramen place", "book club", "climbing gym"]
SPEAKERS = ["Elise", "kate", "Tomás", "Émile", "Ólafur", "Mei Ling", "Kofi", "Nebraas"]


@settings(max_examples=25, deadline=None)
@given(
    pair=st.lists(st.sampled_from(SPEAKERS), min_size=2, max_size=2, unique=True),
    topic=st.sampled_from(TOPICS),
    case=st.sampled_from([str, str.lower, str.upper]),
    rng=st.randoms(use_true_random=False),
)
def test_a_question_naming_a_person_finds_what_that_person_said(tmp_path_factory, pair, topic, case, rng):
    # The other person's turn says more of the question's words; only who said it tells the asked one apart.
    # Both talk all along, so a name, the speaker of many turns, weighs little as a keyword. Any case.
    from planner.storage.db import Store

    mem = LongTermMemory(
        Store(tmp_path_factory.mktemp("w") / "w.db"), Embedder(local_embed, "embed"), today=lambda: TODAY
    )
    asked, other = pair
    theirs, not_theirs = (asked, f"The {topic} was lovely."), (other, f"The {topic} was lovely, at the harbour.")
    turns = [(who, f) for f in rng.sample(FILLER, 6) for who in pair]
    for turn in rng.sample([theirs, not_theirs], 2):
        turns.insert(rng.randrange(len(turns) + 1), turn)
    ids = converse(mem, turns)
    hits = mem.search(f"What did {case(asked)} think of the {topic} at the harbour?", 3)
    assert hits[0]["id"] == ids[turns.index(theirs)] and hits[0]["speaker"] == asked


def test_what_was_said_about_a_person_counts_as_theirs_and_a_common_word_names_no_one(mem):
    # Kofi sends many turns, so his name, in every one of them as its speaker, weighs little as a keyword
    converse(mem, [("Kofi", f) for f in FILLER] + [("Ana", "The ramen place near the station was lovely, the broth.")])
    mine = mem.store_cell("Kofi liked the ramen place.", said_on="2026-11-21")["remembered"]["id"]
    top = [h["id"] for h in mem.search("what did Kofi say about the ramen place near the station?", 5)]
    assert top[0] == mine  # what was said about him, above another person's turn with more of the words
    # "will" is the word here, not the speaker Will: Ana's turn says the question's words with none added
    will, ana = "The weather in Porto and Lisbon is grey, they all say.", "The weather in Porto and Lisbon is grey."
    converse(mem, [("Will", will), ("Kofi", "Nice."), ("Ana", ana)], "c2")
    assert mem.search("what will the weather be like in Porto and Lisbon?", 1)[0]["text"] == ana
    assert mem.search("Will the weather be grey in Porto and Lisbon?", 1)[0]["text"] == ana  # first word
    assert mem.search("what did Will say about the weather in Porto and Lisbon?", 1)[0]["text"] == will
    # "in June" is the month, not the speaker June (who talks a lot, so her name weighs little as a keyword)
    june, mo = "We went hiking in the Ardennes hills, they all say.", "We went hiking in the Ardennes hills."
    converse(mem, [("June", f) for f in FILLER] + [("June", june), ("Kofi", "Nice."), ("Mo", mo)], "c3")
    assert mem.search("where did we go hiking in June, the Ardennes hills?", 1)[0]["text"] == mo
    assert mem.search("where did June go hiking, the Ardennes hills?", 1)[0]["text"] == june


STRETCH_TURNS = [
    "Have you been to the Italian cooking class again?",
    "Yes, we made fresh pasta in the Italian class.",
    "Which Italian region has the best food?",
    "Tuscany, the Italian food there is wonderful.",
]


@settings(max_examples=20, deadline=None)
@given(at=st.integers(1, 3), where=st.integers(0, 4), rng=st.randoms(use_true_random=False))
def test_a_turn_said_where_the_conversation_was_about_the_question_comes_first(tmp_path_factory, at, where, rng):
    # Two tellings alike but for a number: a few turns into a stretch about the question (the older), and among
    # filler a day later (the newer, which recency alone would put first).
    from planner.storage.db import Store

    mem = LongTermMemory(
        Store(tmp_path_factory.mktemp("s") / "s.db"), Embedder(local_embed, "embed"), today=lambda: TODAY
    )
    told, again = "I am a sucker for Italian spaghetti, 2 plates.", "I am a sucker for Italian spaghetti, 3 plates."
    filler = rng.sample(FILLER, len(FILLER))
    stretch = [("Kate", t) for t in STRETCH_TURNS]
    stretch[at:at] = [("Mo", filler[0]), ("Elise", told), ("Mo", filler[1])]  # no turn of the stretch beside it
    day1 = [("Mo", f) for f in filler[2:5]] + stretch + [("Mo", f) for f in filler[5:]]
    day2 = [("Elise", f) for f in filler[:where]] + [("Elise", again)] + [("Kate", f) for f in filler[where:]]
    ids = [
        mem.store_cell(text, speaker=who, conversation="c1", turn_no=n, said_on=day)["remembered"]["id"]
        for n, (day, (who, text)) in enumerate([("2026-11-19", t) for t in day1] + [("2026-11-20", t) for t in day2])
    ]
    in_stretch, lonely = ids[3 + at + 1], ids[len(day1) + where]
    found = [h["id"] for h in mem.search("What Italian food do you like?", 30)]
    assert found.index(in_stretch) < found.index(lonely)


def test_memory_tables_are_queried_only_in_the_store_module():
    # The rest of planner/memory, and everything above it, gets methods (planner/storage/memories.py); the
    # session history (history.py) owns messages, sessions and summaries.
    tables = r"\b(memories|memory_history|memories_fts|scenes|scene_cells|scene_history|scene_state|memory_jobs|memory_topics)\b"
    offenders = []
    for path in (ROOT / "planner").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel in ("planner/storage/memories.py", "planner/storage/migrations.py"):
            continue
        text = path.read_text()
        for sql in re.findall(r"\"((?:SELECT|INSERT|UPDATE|DELETE|REPLACE)[^\"]*)\"", text):
            if re.search(tables, sql):
                offenders.append((rel, sql[:60]))
    assert offenders == []  # export, counts and undo ask storage/memories.py too
    memory_layer = [p for p in (ROOT / "planner" / "memory").glob("*.py") if p.name != "history.py"]
    assert not [p.name for p in memory_layer if ".conn()" in p.read_text() or ".write()" in p.read_text()]
