"""How memories are matched: meaningful words, keyword queries, fusion of two ranked lists.

Pure functions over text and (id, score) lists, kept apart from the storage in
longterm.py so the retrieval eval (evals/memory.py) scores exactly what the
planner uses. Trade-off: min-max scaling looks only at the candidates of one
search, so a list of near-ties spreads to 0..1 as if they differed; averaging
with the other list is what keeps that from deciding alone.
"""

from __future__ import annotations

import re

from planner.dates import MONTHS, WEEKDAYS

STOPWORDS = frozenset(
    "a an and are as at be but by do does did for from has have how i i'm in is it its me my of on or our so "
    "that the their them they this to was we what when where which who why will with you your about am".split()
)


SAME_WORDS = 0.6  # a restatement shares this share of the shorter text's meaningful words
FACT_WORDS = 3  # fewer meaningful words than this is a reply, not a fact of its own


def meaningful_words(text: str) -> list[str]:
    """The words of a text that carry meaning, in order (no stop words, no single letters)."""
    return [w for w in re.findall(r"\w+", text.lower()) if w not in STOPWORDS and len(w) > 1]


def word_overlap(a: str, b: str) -> float:
    """The share of the shorter text's meaningful words that the other has too (0..1)."""
    wa, wb = set(meaningful_words(a)), set(meaningful_words(b))
    return len(wa & wb) / min(len(wa), len(wb)) if wa and wb else 0.0


def same_fact(a: str, b: str) -> bool:
    """Whether two texts can state one fact, so the newer may replace the older: most of their words shared
    (SAME_WORDS of the shorter one's), the same names (any case) and the same numbers, and each a statement of
    its own (FACT_WORDS meaningful words at least: "yes, that one" means what the turn before it said, so two
    of them are two memories). Days and speaker are the caller's to compare.

    Trade-off: "my dentist is Dr Okafor" and "my dentist is Dr Okafor, on Main Street" are two memories, the
    second linked to the first; an update that adds a name costs a row, never the older fact."""
    wa, wb = meaningful_words(a), meaningful_words(b)
    if min(len(set(wa)), len(set(wb))) < FACT_WORDS or word_overlap(a, b) < SAME_WORDS:
        return False
    words_a, words_b = (" " + " ".join(re.findall(r"[\w-]+", t.lower())) + " " for t in (a, b))
    names = {" ".join(re.findall(r"[\w-]+", n.lower())) for n in mentioned(a) | mentioned(b)}
    same_names = all(f" {n} " in words_a and f" {n} " in words_b for n in names)  # said in both, any case
    return same_names and set(re.findall(r"\d+", a)) == set(re.findall(r"\d+", b))


# The forms of common irregular English verbs: the Porter stemmer of the word index makes "moved" and
# "move" one word but leaves "took" and "take" apart, so "what did Rui take up?" missed "Rui took up
# salsa". English only, like the stemmer; a form that is also another word ("left", "saw") widens a
# search a little, which the vector list then ranks.
IRREGULAR = [
    forms.split()
    for forms in (
        "go goes went gone",
        "take takes took taken",
        "see sees saw seen",
        "meet meets met",
        "buy buys bought",
        "get gets got gotten",
        "give gives gave given",
        "come comes came",
        "eat eats ate eaten",
        "drink drinks drank drunk",
        "write writes wrote written",
        "tell tells told",
        "say says said",
        "make makes made",
        "leave leaves left",
        "begin begins began begun",
        "bring brings brought",
        "think thinks thought",
        "find finds found",
        "feel feels felt",
        "keep keeps kept",
        "lose loses lost",
        "pay pays paid",
        "run runs ran",
        "sell sells sold",
        "send sends sent",
        "sit sits sat",
        "sleep sleeps slept",
        "speak speaks spoke spoken",
        "spend spends spent",
        "teach teaches taught",
        "win wins won",
        "fly flies flew flown",
        "drive drives drove driven",
        "ride rides rode ridden",
        "swim swims swam swum",
        "sing sings sang sung",
        "break breaks broke broken",
        "choose chooses chose chosen",
        "forget forgets forgot forgotten",
        "grow grows grew grown",
        "know knows knew known",
        "hear hears heard",
        "hold holds held",
        "lend lends lent",
        "wear wears wore worn",
        "build builds built",
        "catch catches caught",
        "fall falls fell fallen",
        "fight fights fought",
        "hide hides hid hidden",
        "steal steals stole stolen",
        "throw throws threw thrown",
        "wake wakes woke woken",
        "understand understands understood",
    )
]
FORMS = {form: forms for forms in IRREGULAR for form in forms}


def fts_words(text: str, forms: bool = True) -> list[str]:
    """The meaningful words of the text, and (forms) the other forms of an irregular verb in it, once each."""
    return list(
        dict.fromkeys(w for word in meaningful_words(text) for w in (word, *(FORMS.get(word, ()) if forms else ())))
    )


def fts_any(words: list[str]) -> str:
    """An FTS5 query matching any of the words."""
    return " OR ".join(f'"{w}"' for w in words)


def fts_query(text: str, forms: bool = True) -> str:
    """An FTS5 query matching any meaningful word of the text, or (forms) another form of an irregular verb in it."""
    return fts_any(fts_words(text, forms))


def minmax(ranked: list[tuple[int, float]]) -> dict[int, float]:
    """{id: score scaled to 0..1 between the list's worst and best} (all 1.0 when they are equal)."""
    if not ranked:
        return {}
    top, low = max(v for _, v in ranked), min(v for _, v in ranked)
    return {i: (v - low) / (top - low) if top > low else 1.0 for i, v in ranked}


def fuse(vec: list[tuple[int, float]], kw: list[tuple[int, float]], kw_weight: float = 1.0) -> dict[int, float]:
    """{id: score in 0..1} from (id, cosine) and (id, BM25) candidate lists: each list min-max
    scaled, then averaged, the keyword list weighing kw_weight (absent from a list counts as its worst).

    Scores, not ranks: reciprocal rank fusion treats a clear keyword hit and a near-tie alike, and on
    public long-conversation data (python -m evals memory) it scored between its two parts; this beats both.
    """
    a, b = minmax(vec), minmax(kw)
    return {i: (a.get(i, 0.0) + kw_weight * b.get(i, 0.0)) / (1 + kw_weight) for i in a.keys() | b.keys()}


# -- names: what scenes are made of, and what a question that refers back borrows from the turn before

# Words that start sentences capitalised and name no one: pronouns and the first words of replies.
NOT_NAMES = frozenset(
    w.title()
    for w in (
        *STOPWORDS,
        *MONTHS,
        *WEEKDAYS,
        *"he she him his hers we us you it if yes no ok okay oh hi hey hello thanks haha lol omg yeah wow".split(),
    )
) | {"I", "I'm", "I've", "I'll", "I'd", "OK"}
SENTENCES = re.compile(r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)(?<=[.!?;:])\s+|\n+")
TOKEN = re.compile(r"[\w'.’-]+")


def _runs(sentence: str) -> list[tuple[int, list[str]]]:
    """(position of its first word, its words) for every longest run of capitalised words in a sentence."""
    words = [w.replace("’", "'").rstrip(".,").removesuffix("'s") for w in TOKEN.findall(sentence)]
    runs: list[tuple[int, list[str]]] = []
    for i, w in enumerate(words):
        if w[:1].isupper() and w not in NOT_NAMES and len(w) > 1:
            if runs and runs[-1][0] + len(runs[-1][1]) == i:
                runs[-1][1].append(w)
            else:
                runs.append((i, [w]))
    return runs


def names_in(text: str) -> set[str]:
    """The names said mid-sentence ("My sister Ana lives in Lisbon." -> Ana, Lisbon): a capitalised word at
    a sentence's start is a name only once it has been said mid-sentence somewhere (see mentioned)."""
    return {" ".join(run) for sentence in SENTENCES.split(text) for i, run in _runs(sentence) if i > 0}


def mentioned(text: str) -> set[str]:
    """Every capitalised name in the text and its parts ("Dr Okafor", "Okafor"), at a sentence's start too:
    what scene names are looked up in."""
    out = set()
    for sentence in SENTENCES.split(text):
        for _, run in _runs(sentence):
            out |= {" ".join(run[i:j]) for i in range(len(run)) for j in range(i + 1, len(run) + 1)}
    return out


REFERS_BACK = re.compile(r"\b(she|he|her|him|his|hers|they|them|their|it|its|that|this|there|those|these)\b", re.I)


def with_context(query: str, recent: list[str], most: int = 6) -> str:
    """The query, plus the names said in the turns before it when it refers back to them ("what did she
    say about it?" after "I had lunch with Ana"); without names there, the last turn's meaningful words."""
    if not recent or not REFERS_BACK.search(query):
        return query
    said = set(meaningful_words(query))
    names = [n for turn in reversed(recent) for n in sorted(names_in(turn)) if n.lower() not in said]
    if not names:
        names = [w for w in meaningful_words(recent[-1]) if w not in said and not REFERS_BACK.fullmatch(w)]
    extra = list(dict.fromkeys(names))[:most]
    return f"{query} ({' '.join(extra)})" if extra else query
