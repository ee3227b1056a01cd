"""Work done after the reply is shown: memories extracted from each turn,
conversation summaries, topic summaries.

Small local models rarely call `remember`, so after every turn the critic
model reads the exchange and picks out lasting facts as typed cells (JSON
schema output), whatever the main model did or said. When the critic keeps
nothing from a message that states a fact about the user (states_fact: first
person, a person, a preference) and no memory holds it yet, the main model is
asked the same once more: a 0.5B critic misses facts a larger model keeps.
Each extraction's outcome (what was stored, or why nothing) goes to
`observer`, which --verbose shows. When the history window drops old messages, the critic folds
them into a rolling summary. Both run on one background thread, so the user
never waits for them, and both are restartable: a finished turn is first
written to `memory_jobs` (deleted once done), and a summary is redone from
the raw messages, which are never deleted. On exit the queue is drained for a
few seconds; what is left runs at the next start. What the critic is asked, and the
schemas of its answers, are in planner/prompts.py with the planner's other prompts.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from planner.memory.history import latest_summary, messages_before_window, save_summary
from planner.memory.longterm import KINDS, LongTermMemory, LongTermMemoryError, without_attached
from planner.memory.scoring import SAME_WORDS, meaningful_words, word_overlap
from planner.memory.worker import Worker
from planner.model.base import ChatModel, ModelError
from planner.prompts import EXTRACT_PROMPT, EXTRACT_SCHEMA, SCENE_PROMPT, SUMMARY_PROMPT, TEXT_SCHEMA, TOPIC_PROMPT
from planner.settings import Config
from planner.storage.db import Store

log = logging.getLogger("planner")

MAX_ATTEMPTS = 3

SCENE_SUMMARIES = 3  # scenes re-summarised by the model per refresh; the rest keep their memories joined


# A message that states a lasting fact about the user, and is neither a question nor a request for a change.
_STATES = re.compile(
    r"\b(?:i'?m|i am|i have|i've got|i (?:really )?(?:like|love|hate|prefer|enjoy|live|work|study|play|own|drive|eat)"
    r"|i was born|i (?:usually|always|never)|my (?:name|birthday|favou?rite)|allergic|vegetarian|vegan"
    r"|my (?:wife|husband|partner|sister|brother|mother|mom|mum|father|dad|son|daughter|friend|boss|colleague|kids?"
    r"|child|children|cat|dog|doctor|dentist|neighbou?r|aunt|uncle|cousin|grand\w+|family|team|manager)\b"
    r"|my \w+ (?:is|are|was|lives|works|likes|loves|hates|prefers|has)\b)",
    re.I,
)
_ASKS = re.compile(
    r"^\s*(?:please\s+)?(?:add|remind|list|show|move|delete|remove|mark|complete|finish|rename|change|update|"
    r"schedule|put|set|find|search|what|when|where|who|why|how|which|can|could|would|will|do|does|did|is|are)\b",
    re.I,
)


def states_fact(text: str) -> bool:
    """Whether a message tells something lasting about the user: themselves, a person, a preference."""
    return not text.rstrip().endswith("?") and not _ASKS.match(text) and bool(_STATES.search(text))


# The assistant speaking to the user: "I know you have a dentist appointment...", "I will add it to your tasks"
_ASSISTANT = re.compile(r"^\s*(?:i|i'?ve|i'?ll|i'?m|let me)\b.*\byou(?:r|rs)?\b", re.I)
COPIED = 0.8  # a memory sharing this share of its meaningful words with a turn, and the turn of its, copies it


def _copies(text: str, turn: str) -> bool:
    # Most of each one's words in the other: a copy of the turn, not a fact a longer turn also holds ("remind me
    # to call mum, she's in hospital" holds "Mum is in hospital", which is no copy of the order).
    a, b = set(meaningful_words(text)), set(meaningful_words(turn))
    return bool(a and b) and len(a & b) >= COPIED * max(len(a), len(b))


def not_a_memory(text: str, user_text: str, reply: str) -> bool:
    """A memory a small extractor wrote that is no fact about the user: the user's order copied ("rename the
    milk task to buy oat milk", seen on the 0.5B critic), or the assistant's own sentence ("I will add the
    report to your tasks"). Judged against the exchange, never by a first word alone: "Will is the user's
    brother" and "I will visit Ana on saturday", copied from the user, are facts and kept, and so is a fact an
    order holds beside it ("remind me to call mum, she's in hospital")."""
    said = _copies(text, user_text)
    order = bool(_ASKS.match(user_text)) and not user_text.rstrip().endswith("?") and not states_fact(user_text)
    if said and order and not text.lower().startswith("the user"):
        return True
    return bool(_ASSISTANT.match(text)) and _copies(text, reply) and not said


@dataclass(frozen=True)
class Extraction:
    """What the extraction of one exchange did, for --verbose: what it stored, or why nothing."""

    stored: list[str]  # the memories stored or updated, as written
    why: str  # when nothing was stored: why not
    models: list[str]  # the models asked, in order


def clean_cells(raw: Any) -> list[dict[str, Any]]:
    """The cells worth storing from the extractor's JSON; junk and malformed ones dropped."""
    cells = raw.get("memories") if isinstance(raw, dict) else None
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for c in cells if isinstance(cells, list) else []:
        if not isinstance(c, dict) or not isinstance(c.get("text"), str):
            continue
        text = " ".join(c["text"].split())
        low = text.lower()
        if not 8 <= len(text) <= 300 or "{" in text or low.startswith(("the assistant", "assistant")) or low in seen:
            continue
        if text.rstrip().endswith("?"):  # a question is no memory
            continue
        try:
            salience = float(c.get("salience", 0.5))
        except (TypeError, ValueError):
            salience = 0.5
        if salience < 0.2:
            continue
        replaces = c.get("replaces")
        seen.add(low)
        out.append(
            {
                "text": text,
                "kind": c.get("kind") if c.get("kind") in KINDS else "fact",
                "salience": min(1.0, max(0.0, salience)),
                "topic": str(c.get("topic") or "")[:40],
                "replaces": replaces if isinstance(replaces, int) and not isinstance(replaces, bool) else None,
            }
        )
    return out


class MemoryKeeper:
    """Queues and runs memory extraction and summaries for one running planner."""

    def __init__(
        self, store: Store, llm: ChatModel, config: Config, memory: LongTermMemory, worker: Worker | None = None
    ):
        self.store = store
        self.llm = llm
        self.config = config
        self.memory = memory
        self.worker = worker or Worker()
        self.options = {"num_ctx": config.critic_num_ctx, "num_predict": 512}
        self.observer: Callable[[Extraction], None] | None = None  # told each extraction's outcome (--verbose)

    def _ask(self, system: str, user: str, schema: dict[str, Any], purpose: str, main: bool = False) -> Any:
        # The main model with the options of the agent's own calls: others would make Ollama reload it.
        model, options, keep = (
            (
                self.config.model,
                {"num_ctx": self.config.num_ctx, "num_predict": self.config.num_predict},
                self.config.keep_alive,
            )
            if main
            else (self.config.critic_model, self.options, self.config.critic_keep_alive)
        )
        r = self.llm.chat_json(
            model,
            [{"role": "system", "content": system}, {"role": "user", "content": user}],
            schema=schema,
            options=options,
            keep_alive=keep,
            purpose=purpose,
        )
        return json.loads(r.content)

    # -- memories from turns

    def after_turn(self, session: str, user_text: str, reply: str, today: str) -> None:
        """Record a finished turn for extraction, then extract it in the background."""
        self.memory.db.add_job(session, user_text, reply, today)
        self.worker.submit(self.run_pending)
        self.worker.submit(self.refresh_scenes)

    def run_pending(self) -> None:
        """Extract every pending turn, oldest first; stop at the first model failure."""
        for job in self.memory.db.pending_jobs(MAX_ATTEMPTS):
            try:
                topics = self.extract(job["user_text"], job["reply"], job["today"])
            except (ModelError, LongTermMemoryError) as e:
                log.warning("memory extraction postponed: %s", e)
                self.memory.db.job_failed(job["id"])
                return
            self.memory.db.job_done(job["id"])
            self.refresh_topics(topics)

    def extract(self, user_text: str, reply: str, today: str) -> list[str]:
        """Store the memory cells found in one exchange; returns the topics touched."""
        existing = self.memory.search(user_text, 5) if self.memory.count() else []
        shown = "\n".join(f"[{h['id']}] {h['text']} (topic: {h['topic'] or 'none'})" for h in existing) or "(none)"
        user = f"Today is {today}.\nExisting memories:\n{shown}\n\nUser: {user_text}\nAssistant: {reply}"
        cells, why = self._cells(user, main=False)
        models = [self.config.critic_model]
        if not cells and states_fact(user_text):
            known = next((h["text"] for h in existing if word_overlap(user_text, h["text"]) >= SAME_WORDS), None)
            if known:
                why = f"already remembered: {known}"
            else:  # a fact the critic missed: the main model reads it once more
                cells, why = self._cells(user, main=True)
                models.append(self.config.model)
        elif not cells:
            why += "; the message states no fact about the user"
        kept = [c for c in cells if not not_a_memory(c["text"], user_text, reply)]
        if cells and not kept:
            why = "its memories copied the request or the reply"
        topics, stored = [], []
        for cell in kept:
            self.memory.store_cell(source="auto", said_on=today, **cell)
            topics.append(cell["topic"].strip().lower())
            stored.append(cell["text"])
            log.info("auto memory %s: %s", cell["kind"], cell["text"])
        if not stored:
            log.info("memory extraction stored nothing: %s", why)
        if self.observer:
            self.observer(Extraction(stored, "" if stored else why, models))
        return topics

    def _cells(self, user: str, main: bool) -> tuple[list[dict[str, Any]], str]:
        """The cells one model extracts from an exchange, and why there are none when there are none."""
        name = self.config.model if main else self.config.critic_model
        try:
            raw = self._ask(EXTRACT_PROMPT, user, EXTRACT_SCHEMA, "memory extraction", main=main)
        except ValueError:  # not JSON: nothing usable this time
            log.warning("memory extraction returned no JSON")
            return [], f"{name} answered no JSON"
        cells = clean_cells(raw)
        found = raw.get("memories") if isinstance(raw, dict) else None
        if cells or not found:
            return cells, f"{name} found nothing worth keeping"
        return cells, f"{name}'s memories were unusable (too short, too long, JSON or about the assistant)"

    def refresh_topics(self, topics: list[str]) -> None:
        """Re-summarise each topic that has two or more memories."""
        for topic in dict.fromkeys(t for t in topics if t):
            texts = self.memory.db.topic_texts(topic)
            if len(texts) < 2:
                continue
            try:
                summary = self._ask(
                    TOPIC_PROMPT,
                    f"Topic: {topic}\nMemories:\n" + "\n".join(f"- {t}" for t in texts),
                    TEXT_SCHEMA,
                    "topic summary",
                )["text"]
            except (ModelError, ValueError, KeyError, TypeError) as e:
                log.warning("topic summary for %s failed: %s", topic, e)
                continue
            self.memory.db.save_topic_summary(topic, str(summary)[:600], len(texts))

    # -- scenes (scenes.py): grouped in code, summarised by the critic

    def refresh_scenes(self) -> None:
        """Group new and changed memories into scenes, a chunk per job; the critic writes the summaries of
        up to SCENE_SUMMARIES changed scenes, the others keep their memories joined until a later refresh."""
        asked = 0

        def summarise(name: str, texts: list[str]) -> str | None:
            nonlocal asked
            if asked >= SCENE_SUMMARIES:
                return None
            asked += 1
            try:
                text = self._ask(
                    SCENE_PROMPT,
                    f"About: {name}\nMemories:\n" + "\n".join(f"- {t}" for t in texts[:20]),
                    TEXT_SCHEMA,
                    "scene summary",
                )["text"]
            except (ModelError, ValueError, KeyError, TypeError) as e:
                log.warning("scene summary for %s postponed: %s", name, e)
                return None
            return text if isinstance(text, str) and text.strip() else None

        try:
            done = self.memory.scenes.refresh(summarise)
        except ModelError as e:  # the embedding server: the next refresh picks the same scenes up
            log.warning("scenes not refreshed: %s", e)
            return
        # An older database's first pass: the next chunk after whatever else is queued, unless the planner
        # is closing (then the next start goes on from here, and nothing runs while the file is closed).
        if not done and not self.worker.draining.is_set():
            self.worker.submit(self.refresh_scenes)

    # -- conversation summaries

    def summarize_later(self, session: str, on_done: Callable[[], None] | None = None) -> None:
        """Fold messages that left the window into the session's summary, in the background."""

        def job() -> None:
            if self.summarize(session) and on_done:
                on_done()

        self.worker.submit(job)

    def summarize(self, session: str) -> bool:
        """Fold messages before the window into a new summary; True if one was written."""
        last = latest_summary(self.store, session)
        msgs = messages_before_window(self.store, session, last["last_message_id"] if last else 0)
        if not msgs:
            return False
        lines = []
        for m in msgs:
            if m["role"] == "tool":
                lines.append(f"(tool result) {without_attached(m['content'])[0][:200]}")
            elif m["tool_calls"]:
                lines.append(f"(assistant called tools) {without_attached(m['tool_calls'])[0][:200]}")
            else:
                lines.append(f"{m['role']}: {without_attached(m['content'])[0][:500]}")  # never the planner's notes
        previous = last["summary"] if last else "(none yet)"
        try:
            text = self._ask(
                SUMMARY_PROMPT,
                f"Previous summary: {previous}\n\nNew messages:\n" + "\n".join(lines),
                TEXT_SCHEMA,
                "conversation summary",
            )["text"]
        except (ModelError, ValueError, KeyError, TypeError) as e:
            log.warning("conversation summary postponed: %s", e)
            return False
        if not isinstance(text, str) or not text.strip():
            return False
        save_summary(
            self.store,
            session,
            text.strip()[:2000],
            last["first_message_id"] if last else msgs[0]["id"],
            msgs[-1]["id"],
            (last["message_count"] if last else 0) + len(msgs),
        )
        log.info("summarised %d messages of %s", len(msgs), session)
        return True

    def resume(self, session: str) -> None:
        """At start-up: retry pending extraction and any summary left undone."""
        if self.memory.db.has_jobs():
            self.worker.submit(self.run_pending)
        self.worker.submit(self.refresh_scenes)
        self.summarize_later(session)
