"""The planner agent: a hand-written ReAct loop with planning and reflection.

    user line -> [system, history..., user] + the tools the request needs (offer.py, request.py) -> model
      model asks for tools -> at most MAX_CALLS run, concurrently -> results (trimmed) -> model ...
        a tool not sent -> an error naming it, and its group is sent with the next step
        the next call would not fit the model's context -> the turn ends with a sentence (budget.py)
      model answers in words -> if data changed, a critic checks the turn
        critic says "not done" -> its critique goes back to the model (once)
      -> what the turn did checked before the reply is shown (finish.py):
        a change asked for and none made -> the model is nudged once, else the user is told
        a claimed change that did not happen -> in small, asked once more; else a line says what did change
        JSON, markup or a tool list -> said from the results, or the model asked once more
      -> reply

The Agent never prints or reads input; it reports progress through an
`on_event(kind, data)` callback that the terminal layer (planner/ui) renders,
and it asks for confirmations through a callback too. Run `python agent.py`.

Prompt caching: the system prompt and tool list are byte-identical all day for
the same tool groups (and a list with more groups starts as one with fewer),
the history window only moves in chunks (memory.py), and the options sent to
each model never change, so Ollama can reuse the prompt prefix. Trade-off: a
request that needs other groups than the one before re-reads the history
after the first differing tool; measured in docs/evals.md.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import logging
import time
from typing import Any

from planner.agent import intent, offer
from planner.agent.budget import Window, trimmed
from planner.agent.critic import Critic
from planner.agent.finish import Finish
from planner.agent.guards import Guards, pick_profile
from planner.agent.recovery import looks_like_call
from planner.agent.replies import fallback_reply
from planner.agent.request import OneTool, wants
from planner.agent.toolrun import ToolRunner
from planner.agent.turn import Event, ToolCall, Turn, TurnResult
from planner.memory.history import Budget, History, Message, estimate_tokens, prefix_share, session_messages
from planner.memory.keeper import MemoryKeeper
from planner.memory.longterm import LongTermMemory, LongTermMemoryError
from planner.model.base import ChatModel, ChatResult, ModelError, ModelFault, clean
from planner.policy import ALL, Grant
from planner.prompts import (
    CONTEXT_FULL,
    FORCED,
    INTERRUPTED,
    MEMORY_NOTES,
    RETRY_PROMPT,
    SYSTEM_PROMPT,
    TOO_MANY_STEPS,
    system_prompt,
)
from planner.settings import Config
from planner.storage.db import DatabaseError
from planner.storage.tasks import new_turn, open_titles, titles
from planner.tools import TOOLS, ToolContext, to_json, tool_specs
from planner.tools.undo import Outcome, redo_newest, undo_newest

log = logging.getLogger("planner")

MAX_INPUT = 20_000  # characters of one user message
CHANGEABLE = frozenset({"reflect", "think", "critic_model"})  # settings configure() may change mid-session


# ---------------------------------------------------------------- the agent


class Agent:
    """Runs user turns against a model (any `ChatModel`) with tools, history and reflection."""

    def __init__(
        self, llm: ChatModel, config: Config, history: History, context: ToolContext, keeper: MemoryKeeper | None = None
    ):
        self.llm = llm  # Ollama in use, the scripted model in tests: the agent needs only base.ChatModel
        self.config = config  # the settings in force: read them here, change them with configure or set_model
        self.history = history
        self.context = context  # what the tools work with: store, long-term memory, today, confirm, web
        self.keeper = keeper  # background memory extraction and summaries; None to skip
        self._facts: tuple[Guards, list[str], int] | None = None  # guards, capabilities, context window
        self._turn_start = 0  # len(history.messages) once this turn's request is stored
        self._scratch: list[tuple[int, Message]] = []
        self._last_request: list[Message] = []  # the previous request's messages, for prefix reuse
        self.tool_specs = tool_specs(context)  # every tool this run offers (lookup only with --web)
        self.tool_names = {s["function"]["name"] for s in self.tool_specs}
        self._specs: dict[tuple[str, ...], list[dict[str, Any]]] = {}  # per set of groups: the same bytes each time
        self.runner = ToolRunner(context, ask_bulk=config.guards != "off")
        # Fixed for the whole session: changing options makes Ollama reload the model.
        self.options = {"num_ctx": config.num_ctx, "num_predict": config.num_predict}
        self.critic = Critic(llm, config)

    def close(self, drain_seconds: float = 3.0) -> None:
        """Wait for running tools, give background memory work a few seconds, release the pool."""
        self.runner.close()
        if self.context.web:
            self.context.web.close()
        if self.keeper and not self.keeper.worker.close(drain_seconds):
            log.info("background work left for the next start")
        if self.context.memory:
            self.context.memory.close()

    def resume_background(self) -> None:
        """Start memory work a previous run left undone (extraction, a summary), in the background."""
        if self.keeper:
            self.keeper.resume(self.history.session)

    def today(self) -> dt.date:
        """The date the agent works with."""
        return self.context.today()

    # -- one turn

    def run_turn(self, text: str, on_event: Event | None = None) -> TurnResult:
        """Answer one user message; never raises for model or tool faults."""
        result = TurnResult()
        partial: list[str] = []  # the reply streamed so far, kept if the user interrupts

        def emit(kind: str, data: dict[str, Any]) -> None:
            if kind == "token":
                partial.append(data["text"])
            elif kind == "status":
                partial.clear()  # a new model call starts
            if on_event:
                on_event(kind, data)

        if len(text) > MAX_INPUT:  # a 10 MB paste would be sent and stored whole on every later turn
            emit("warning", {"text": f"your message was cut to its first {MAX_INPUT:,} characters"})
            text = text[:MAX_INPUT]
        text = clean(text)  # undecodable input read with errors="surrogateescape" cannot be stored
        self.history.refresh_summary()
        earlier = [m["content"] for m in self.history.messages if m["role"] == "user"][-2:]
        # what the user said before (without attached notes) and now, for the guards
        turn = Turn(text=text, recent=[m.split("\n\n" + MEMORY_NOTES)[0] for m in earlier], today=self.today())
        said = [m["content"] for m in self.history.messages if m["role"] == "assistant" and m["content"]]
        turn.answered = [m.split("\n\n(")[0] for m in said[-2:]]  # as the model said them, without a correction
        if self.context.memory is not None:
            self.context.memory.begin_turn(turn.recent)  # "what did she say?" is searched with who she is
        self.runner.start(turn)  # a new turn id: its task changes are one /undo
        # What the user's words name (intent.py): --yes covers a deletion or an overwrite only there.
        conn = self.context.store.conn()
        before = turn.recent[-1] if turn.recent else None
        known = titles(conn)
        # "it" in "add bread and set it to high" is the new task, not one named before
        recent = talked_about(self.history.messages) or (said_before(before, known) if "add" not in wants(text) else [])
        self.context.mandate = intent.mandate(text, known, recent, before)
        turn.mandate = self.context.mandate
        turn.open_titles = open_titles(conn)
        try:
            self.history.append([{"role": "user", "content": self._with_memories(text)}])
        except DatabaseError as e:  # busy, disk full, read-only: nothing was sent or stored
            result.error, result.reply = str(e), f"(no reply: {e})"
            return result
        self._turn_start = len(self.history.messages)
        self._scratch: list[tuple[int, Message]] = []  # (position in the turn, message) sent but not stored
        try:
            guards = self.guards
            turn.window = Window(self._model_facts()[2], self.config.num_predict)
            for attempt in range(self.config.max_reflections + 1):
                first = len(turn.calls)
                reply = self._attempt(turn, guards, result, emit)
                # Only a change that happened counts: a declined or failed call changed nothing.
                if not (self.config.reflect and turn.changed(first)) or attempt == self.config.max_reflections:
                    break
                emit("status", {"text": "checking the work…"})
                verdict = self.critic.check(self.today(), text, turn.calls[first:], reply)
                result.model_calls += verdict.answered
                emit("critic", {"done": verdict.done, "critique": verdict.critique})
                if verdict.done:
                    break
                critique = verdict.critique
                turn.critiques.append(critique)
                result.critiques.append(critique)
                # The retry sees: request, first attempt, its reply, the critique, then its own calls and results.
                at = len(self.history.messages) - self._turn_start
                self._scratch += [
                    (at, {"role": "assistant", "content": reply}),
                    (at, {"role": "user", "content": RETRY_PROMPT.format(critique=critique)}),
                ]
            ask = functools.partial(self._ask_again, turn, guards, result, emit)
            force = functools.partial(self._force, turn, guards, result, emit)
            finish = Finish(turn, guards, result, self.tool_names, ask, force, self.context.how)
            reply = finish.which(reply)
            reply = finish.done_as_asked(reply)
            reply = finish.checked(reply)
            result.reply = finish.unasked(finish.showable(reply))
        except _ContextFull:
            result.context_full = True
            said = fallback_reply([c.entry() for c in turn.calls]) if turn.calls else ""
            result.reply = (said + " " + CONTEXT_FULL).strip()
            emit("token", {"text": result.reply})
        except (ModelError, DatabaseError) as e:
            log.warning("turn failed: %s", e)
            result.error = str(e)
            result.reply = f"(no reply: {e})"
        except KeyboardInterrupt:
            result.interrupted = True
            result.reply = ("".join(partial).strip() + " " + INTERRUPTED).strip()
        result.tool_calls = [c.entry() for c in turn.calls]
        self._scratch = []
        said = result.reply + (f"\n\n({result.correction})" if result.correction else "")  # as the user saw it
        try:
            self.history.append([{"role": "assistant", "content": said}])
            trimmed = self.history.end_turn()
        except DatabaseError as e:  # the reply is shown but not stored; the history stays valid without it
            log.warning("reply not stored: %s", e)
            result.error = result.error or str(e)
            return result
        if self.keeper:
            if not (result.error or result.interrupted):
                self.keeper.after_turn(self.history.session, text, said, self.today().isoformat())
            if trimmed:
                self.keeper.summarize_later(self.history.session)
        return result

    @property
    def guards(self) -> Guards:
        """The guards in force: the configured profile, or for auto the one the main model's size calls for."""
        return self._model_facts()[0]

    def _model_facts(self) -> tuple[Guards, list[str], int]:
        """The guards, the main model's capabilities and its context window, from what its server says of
        the model (`facts`, `context_length`): the window is num_ctx, or less when the model holds less.

        Asked once, at the first turn (building an agent connects to nothing), and again after set_model.
        """
        if self._facts is None:
            size, capabilities, window = None, [], self.config.num_ctx
            try:
                size, capabilities = self.llm.facts(self.config.model)
                held = self.llm.context_length(self.config.model) if hasattr(self.llm, "context_length") else None
                window = min(window, held or window)
            except ModelError as e:  # the turn itself will say what is wrong with the server
                log.info("model facts unknown (%s)", e)
            guards = Guards(pick_profile(self.config.guards, size))
            log.info("guard profile %s (setting %s, %s)", guards.profile, self.config.guards, size or "size unknown")
            self._facts = (guards, capabilities, window)
        return self._facts

    def _think(self) -> bool | None:
        """`think` for the main model: True with --think; False to keep a thinking model from thinking;
        left out (None) for a model that cannot think, since some Ollama versions reject it there."""
        if self.config.think:
            return True
        return False if "thinking" in self._model_facts()[1] else None

    def set_model(self, name: str) -> None:
        """Use another main model from the next turn; the auto guard profile is picked again for it."""
        self.config.model = name
        self._facts = None

    # -- what the interface may read and change, between turns

    def configure(self, **changes: Any) -> None:
        """Change settings that may change mid-session: reflect, think, critic_model."""
        unknown = set(changes) - CHANGEABLE
        if unknown:
            raise ValueError(f"cannot change {', '.join(sorted(unknown))} mid-session")
        for name, value in changes.items():
            setattr(self.config, name, value)

    @property
    def session(self) -> str:
        """The session's name."""
        return self.history.session

    def switch_session(self, name: str) -> int:
        """Go on in session `name` (started if new) from the next turn; returns how many messages it has."""
        self.history = History(self.context.store, name, history_budget(self.config, self.context))
        return len(session_messages(self.context.store, name))

    def transcript(self) -> list[Message]:
        """Every stored message of this session, oldest first."""
        return session_messages(self.context.store, self.history.session)

    @property
    def memory(self) -> LongTermMemory | None:
        """Long-term memory, or None when it is off."""
        return self.context.memory

    def undo_last_turn(self) -> Outcome:
        """Revert the newest turn's changes (tools/undo.py: asks first when it is a large one).

        The session's history gets the /undo and what it did, so the model
        does not go on believing the reverted changes happened.
        """
        return self._remember_command("/undo", "Undone", undo_newest(self._own_request()))

    def redo_last_undo(self) -> Outcome:
        """Make again what the last undo took back (tools/undo.py)."""
        return self._remember_command("/redo", "Redone", redo_newest(self._own_request()))

    def _own_request(self) -> ToolContext:
        """The tool context of a command the user typed (/undo, /redo): its own request, no yes given yet."""
        return dataclasses.replace(self.context, turn=new_turn(), grant=Grant(), mandate=ALL)

    def _remember_command(self, command: str, done: str, outcome: Outcome) -> Outcome:
        if outcome.lines:
            self.history.append(
                [
                    {"role": "user", "content": command},
                    {"role": "assistant", "content": f"{done}: " + "; ".join(outcome.lines) + "."},
                ]
            )
            self.history.end_turn()
        return outcome

    def _with_memories(self, text: str) -> str:
        """The user's message with relevant memories attached, so most questions need no recall call.

        Attached to the message rather than the system prompt, so the cached
        prompt prefix survives; stored as sent, so later turns repeat it exactly.
        """
        memory = self.context.memory
        if memory is None:
            return text
        try:
            return memory.with_notes(text, 3)
        except LongTermMemoryError as e:  # embedding failed: answer without notes
            log.warning("automatic recall skipped: %s", e)
            return text

    def _messages(self, turn: Turn | None = None) -> list[Message]:
        """[system, *history, *this turn] with the turn's unstored messages (a critique) where they were said."""
        context = self.history.context()
        own = len(self.history.messages) - self._turn_start  # this turn's stored messages after the request
        system = system_prompt(self.today(), turn.groups if turn else None)
        out = [{"role": "system", "content": system}, *context[: len(context) - own]]
        mine = context[len(context) - own :]
        for i in range(own + 1):
            out += [m for at, m in self._scratch if at == i]
            if i < own:
                out.append(mine[i])
        return out

    def _attempt(self, turn: Turn, guards: Guards, result: TurnResult, emit: Event) -> str:
        """Model calls and tool runs until the model answers in words."""
        for _ in range(self.config.max_steps):
            tools = self._offer(turn, result, emit)
            messages = self._messages(turn)
            if not turn.window.fits(messages, tools):
                log.info(
                    "context nearly full (%d of %d tokens): ending the turn", turn.window.counted, turn.window.size
                )
                raise _ContextFull
            emit("status", {"text": "thinking…"})
            reply, shown = self._call_model(messages, tools, result, emit, turn.forced)
            turn.forced = None
            turn.window.saw(reply.prompt_eval_count, messages, tools)
            review = guards.review(reply.tool_calls, reply.content, shown, turn, self.tool_names)
            if review.reply is not None:
                if not shown:  # held back in case it was a tool call
                    emit("token", {"text": review.reply})
                return review.reply
            offer.screen(turn, review.calls, {t["function"]["name"] for t in tools}, self.tool_names)
            self._run_tools(turn, review.calls, result, emit)
        result.gave_up = True
        return TOO_MANY_STEPS.format(n=self.config.max_steps)

    def _offer(self, turn: Turn, result: TurnResult, emit: Event) -> list[dict[str, Any]]:
        """The tools for the next model call (offer.py), the same bytes for the same groups."""
        selection = offer.selection(turn, self.config.tool_groups)
        if selection.groups not in self._specs:
            self._specs[selection.groups] = tool_specs(self.context, selection.groups)
        tools = self._specs[selection.groups]
        if selection.groups != turn.groups:
            emit("tools", {"groups": list(selection.groups), "why": selection.line(), "tools": len(tools)})
            log.info("tool groups: %s", selection.line())
        turn.groups = selection.groups
        result.steps.append({"groups": list(selection.groups), "why": selection.line(), "tools": len(tools)})
        return tools

    def _ask_again(self, turn: Turn, guards: Guards, result: TurnResult, emit: Event, reply: str, note: str) -> str:
        """One more attempt after a note to the model (said for this turn only, never stored)."""
        at = len(self.history.messages) - self._turn_start
        self._scratch += [(at, {"role": "assistant", "content": reply}), (at, {"role": "user", "content": note})]
        return self._attempt(turn, guards, result, emit)

    def _force(self, turn: Turn, guards: Guards, result: TurnResult, emit: Event, reply: str, tool: OneTool) -> str:
        """One more attempt whose first model call must give `tool`'s arguments (the JSON of its schema, as
        a server's grammar keeps it): for a small model that was asked twice and still only said what it
        would do. The call is the model's own, and runs through the guards and the gate like any other."""
        turn.forced = tool
        # the user's words and what to give, in words: a tool's name in the ask came back as the task's title
        note = FORCED.format(what=tool.what or "the arguments", request=turn.text.replace('"', "'"))
        return self._ask_again(turn, guards, result, emit, reply, note)

    def _call_model(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        result: TurnResult,
        emit: Event,
        forced: OneTool | None = None,
    ) -> tuple[ChatResult, bool]:
        """One streamed model call; returns the reply and whether its text was already shown. With `forced`,
        one call for that tool's arguments instead, read as the model calling it."""
        held: list[str] = []
        streaming = False

        def on_token(token: str) -> None:
            nonlocal streaming
            if streaming:
                emit("token", {"text": token})
                return
            held.append(token)
            if not looks_like_call("".join(held)):
                streaming = True
                emit("token", {"text": "".join(held)})

        # How much of this request repeats the last one: what Ollama's cache can skip.
        result.prefix_reuse.append(prefix_share(self._last_request, messages))
        self._last_request = messages
        kwargs = dict(
            on_thinking=lambda text: emit("thinking", {"text": text}),  # shown, never stored
            tools=tools,
            options=self.options,
            think=self._think(),
            keep_alive=self.config.keep_alive,
        )
        try:
            if forced is not None:
                reply = self._forced_call(messages, forced)
            else:
                reply = self.llm.chat_stream(self.config.model, messages, on_token=on_token, **kwargs)
        except ModelError as e:
            if e.kind is not ModelFault.TOOL_PARSE or streaming:
                raise
            log.info("retrying after a tool-call parse error")
            held.clear()
            reply = self.llm.chat_stream(self.config.model, messages, on_token=on_token, **kwargs)
        result.model_calls += 1
        if result.steps:
            result.steps[-1]["prompt_tokens"] = reply.prompt_eval_count
        result.prompt_tokens += reply.prompt_eval_count
        result.eval_tokens += reply.eval_count
        result.model_seconds += reply.seconds
        result.load_seconds += reply.load_seconds
        figures = dict(model=self.config.model, seconds=reply.seconds, load_seconds=reply.load_seconds)
        figures.update(prompt_tokens=reply.prompt_eval_count, eval_tokens=reply.eval_count)
        line = "model %(model)s %(seconds).2fs prompt=%(prompt_tokens)d eval=%(eval_tokens)d done_reason=%(why)s"
        log.info(line, {**figures, "why": reply.done_reason})
        emit("model", figures)
        if reply.done_reason == "length":
            emit("warning", {"text": "the reply hit the length limit (num_predict) and was cut off"})
        window = self._model_facts()[2]
        if reply.prompt_eval_count >= window:
            text = f"the prompt filled the whole context ({window} tokens); Ollama may have dropped its start"
            emit("warning", {"text": text})
        return reply, streaming

    def _forced_call(self, messages: list[Message], forced: OneTool) -> ChatResult:
        # The arguments as JSON to the tool's own schema, with the fields it must have, and those the user's
        # words fixed held to their one value; anything else is a reply in words, as it was.
        tool, given = forced.name, TOOLS[forced.name].parameters["properties"]
        properties = {k: dict(given[k]) for k in forced.fields}  # only these: no field nobody asked for
        for k, v in forced.fixed:
            properties[k]["enum"] = [v]
        for k in forced.must:
            if properties[k].get("type") == "string":
                properties[k]["minLength"] = 1  # an empty date would clear one, an empty title is no task
        schema = {
            "type": "object",
            "properties": properties,
            "required": list(forced.must),
            "additionalProperties": False,
        }
        reply = self.llm.chat_json(
            self.config.model,
            messages,
            schema=schema,
            options=self.options,
            keep_alive=self.config.keep_alive,
            purpose="call",
        )
        try:
            args = json.loads(reply.content)
        except ValueError:
            return reply
        if isinstance(args, dict):
            log.info("asked for the arguments of %s", tool)
            return dataclasses.replace(reply, content="", tool_calls=[{"function": {"name": tool, "arguments": args}}])
        return reply

    def _run_tools(self, turn: Turn, calls: list[ToolCall], result: TurnResult, emit: Event) -> None:
        """Run calls (toolrun.py) and store them with their results in call order, straight away,
        so a crash or Ctrl-C keeps what ran."""
        t0, waited = time.perf_counter(), 0.0
        confirm = self.context.confirm
        if confirm is not None:

            def timed(question: str) -> bool:  # time spent waiting for the user's y/N is not tool time
                nonlocal waited
                t = time.perf_counter()
                try:
                    return confirm(question)
                finally:
                    waited += time.perf_counter() - t

            self.context.confirm = timed
        try:
            self.runner.run(turn, calls, emit)
        finally:
            self.context.confirm = confirm
            result.tool_seconds += time.perf_counter() - t0 - waited
            msgs: list[Message] = [{"role": "assistant", "content": "", "tool_calls": [c.message for c in calls]}]
            msgs += [
                {"role": "tool", "content": to_json(trimmed(c.result or {})), "tool_name": str(c.name)} for c in calls
            ]
            self.history.append(msgs)


class _ContextFull(Exception):
    """The next model call would not fit the model's context: the turn ends with a sentence."""


def history_budget(config: Config, tools: ToolContext | None = None) -> Budget:
    """A history budget that fits num_ctx next to the system prompt, tools (as offered in `tools`) and reply."""
    fixed = estimate_tokens({"content": json.dumps(tool_specs(tools))}) + estimate_tokens({"content": SYSTEM_PROMPT})
    fixed += 300  # the conversation summary, once there is one
    tokens = max(500, config.num_ctx - fixed - config.num_predict)
    return Budget(messages=config.history_messages, tokens=tokens)


def talked_about(messages: list[Message], turns: int = 1) -> list[int]:
    """The ids of the tasks the last turn's tool results showed, newest first: what "it" may mean next."""
    ids: list[int] = []
    for m in reversed(messages):
        if m.get("role") == "user":
            turns -= 1
            if turns < 0:
                break
        elif m.get("role") == "tool":
            try:
                found = json.loads(m.get("content") or "")
            except ValueError:
                continue
            ids += [i for i in _task_ids(found) if i not in ids]
    return ids


def said_before(before: str | None, known: dict[int, str]) -> list[int]:
    """The one task the user's message before named for a change, when no tool result showed one: "rename
    the milk task to buy oat milk" (and the call failed), then "oh and it's due tomorrow"."""
    if not before:
        return []
    m = intent.mandate(before, known)
    named = m.change | m.remove
    return sorted(named.ids) if len(named.ids) == 1 and not (named.everything or named.sets or named.alike) else []


def _task_ids(value: Any, depth: int = 0) -> list[int]:
    if depth > 6:
        return []
    if isinstance(value, dict):
        own = [value["id"]] if isinstance(value.get("id"), int) and "title" in value else []
        return own + [i for v in value.values() for i in _task_ids(v, depth + 1)]
    if isinstance(value, list):
        return [i for v in value for i in _task_ids(v, depth + 1)]
    return []
