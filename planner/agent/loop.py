"""The planner agent: a hand-written ReAct loop with planning and reflection.

    user line -> [system, history..., user] -> model
      model asks for tools -> run them all concurrently -> results -> model ...
      model answers in words -> if data changed, a critic checks the turn
        critic says "not done" -> its critique goes back to the model (once)
      -> the reply's claims checked against the calls that succeeded (claims.py)
        a claimed change that did not happen -> in small, the model is asked once more;
        still so -> the reply comes with one line saying what did change
      -> reply

The Agent never prints or reads input; it reports progress through an
`on_event(kind, data)` callback that the terminal layer (planner/ui) renders,
and it asks for confirmations through a callback too. Run `python agent.py`.

Prompt caching: the system prompt and tool list are byte-identical all day,
the history window only moves in chunks (memory.py), and the options sent to
each model never change, so Ollama can reuse the prompt prefix every turn.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from typing import Any

from planner.agent.budget import MAX_CALLS, Window, trimmed
from planner.agent.claims import unbacked, what_changed, without_tool_talk
from planner.agent.critic import Critic
from planner.agent.guards import Guards, pick_profile
from planner.agent.recovery import looks_like_call
from planner.agent.replies import echoes, fallback_reply, unshowable
from planner.agent.request import WANTS, Selection, groups_for, wants
from planner.agent.toolrun import ToolRunner
from planner.agent.turn import Event, ToolCall, Turn, TurnResult
from planner.memory.history import Budget, History, Message, estimate_tokens, prefix_share, session_messages
from planner.memory.keeper import MemoryKeeper
from planner.memory.longterm import LongTermMemory, LongTermMemoryError
from planner.model.base import ChatModel, ChatResult, ModelError, clean
from planner.prompts import (
    CLAIM_PROMPT,
    CONTEXT_FULL,
    INTERRUPTED,
    MEMORY_NOTES,
    NOT_DONE,
    NOTHING_DONE,
    NUDGE,
    NUDGE_DONE,
    REPHRASE,
    RETRY_PROMPT,
    SYSTEM_PROMPT,
    TOO_MANY_STEPS,
    system_prompt,
)
from planner.settings import Config
from planner.storage.db import DatabaseError
from planner.tools import GROUPS, TOOLS, ToolContext, suggest_tool, to_json, tool_specs
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
        if self.context.memory is not None:
            self.context.memory.begin_turn(turn.recent)  # "what did she say?" is searched with who she is
        self.runner.start(turn)  # a new turn id: its task changes are one /undo
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
            reply = self._done_as_asked(turn, guards, result, emit, reply)
            reply = self._checked(turn, guards, result, emit, reply)
            result.reply = self._showable(turn, guards, result, emit, reply)
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
        return self._remember_command("/undo", "Undone", undo_newest(self.context))

    def redo_last_undo(self) -> Outcome:
        """Make again what the last undo took back (tools/undo.py)."""
        return self._remember_command("/redo", "Redone", redo_newest(self.context))

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
            reply, shown = self._call_model(messages, tools, result, emit)
            turn.window.saw(reply.prompt_eval_count, messages, tools)
            review = guards.review(reply.tool_calls, reply.content, shown, turn, self.tool_names)
            if review.reply is not None:
                if not shown:  # held back in case it was a tool call
                    emit("token", {"text": review.reply})
                return review.reply
            self._screen_offered(turn, review.calls, tools)
            self._run_tools(turn, review.calls, result, emit)
        result.gave_up = True
        return TOO_MANY_STEPS.format(n=self.config.max_steps)

    def _offer(self, turn: Turn, result: TurnResult, emit: Event) -> list[dict[str, Any]]:
        """The tools for the next model call: the groups the request needs (request.py), or all with
        PLANNER_TOOL_GROUPS=all; the groups only grow within a turn, so its calls share their prefix."""
        if self.config.tool_groups == "all":
            selection = Selection(tuple(GROUPS), {g: "all tools (PLANNER_TOOL_GROUPS=all)" for g in GROUPS})
        else:
            selection = groups_for(turn.text, turn.recent, turn.reached)
            kept = {g: "sent earlier this request" for g in turn.groups if g not in selection.groups}
            if kept:
                why = {**selection.why, **kept}
                selection = Selection(tuple(g for g in GROUPS if g in why), {g: why[g] for g in GROUPS if g in why})
        if selection.groups not in self._specs:
            self._specs[selection.groups] = tool_specs(self.context, selection.groups)
        tools = self._specs[selection.groups]
        if selection.groups != turn.groups:
            emit("tools", {"groups": list(selection.groups), "why": selection.line(), "tools": len(tools)})
            log.info("tool groups: %s", selection.line())
        turn.groups = selection.groups
        result.steps.append({"groups": list(selection.groups), "why": selection.line(), "tools": len(tools)})
        return tools

    def _screen_offered(self, turn: Turn, calls: list[ToolCall], tools: list[dict[str, Any]]) -> None:
        """Calls beyond MAX_CALLS in one reply, and calls of tools not sent, answered with an error instead of
        running: the error names the tool to use, and its group is sent with the next step."""
        offered = {t["function"]["name"] for t in tools}
        todo = [c for c in calls if c.result is None and not c.refusal]
        for c in todo[MAX_CALLS:]:
            c.refusal = (
                f"not run: at most {MAX_CALLS} calls are run from one reply; if the user asked for more, "
                "make the rest in your next reply"
            )
        for c in todo[:MAX_CALLS]:
            if isinstance(c.name, str) and c.name in offered:
                continue
            name = c.name if isinstance(c.name, str) else json.dumps(c.name, default=str)[:40]
            real = c.name if c.name in self.tool_names else suggest_tool(name)
            if real not in self.tool_names:
                c.refusal = f"there is no tool named {name!r}; use one of the tools you were given"
                continue
            turn.reached.append(TOOLS[real].group)
            c.refusal = (
                f"{name} was not among the tools for this request, so it did not run; it is offered now: "
                "call it again if the user asked for this"
                if real == c.name
                else f"there is no tool named {name!r}. Use {real} instead (offered now)."
            )

    def _checked(self, turn: Turn, guards: Guards, result: TurnResult, emit: Event, reply: str) -> str:
        """The final reply checked against what ran: a claimed change that did not happen is never shown as true."""
        missing = unbacked(reply, turn.calls)
        if missing and guards.small and not result.nudged:  # asked once more (once a turn), with what is not so
            result.reasked = True
            at = len(self.history.messages) - self._turn_start
            note = CLAIM_PROMPT.format(claim=missing[0].words, none=missing[0].none)
            self._scratch += [(at, {"role": "assistant", "content": reply}), (at, {"role": "user", "content": note})]
            reply = self._attempt(turn, guards, result, emit)
            if echoes(reply, CLAIM_PROMPT.format(claim="", none=missing[0].none)):  # parroted: say what ran
                reply = fallback_reply([c.entry() for c in turn.calls])
            missing = unbacked(reply, turn.calls)
        if missing and not result.correction:
            result.correction = what_changed(turn.calls, missing)
            log.info("reply claims what did not happen (%s): %s", missing[0].verb, result.correction)
        return reply

    def _done_as_asked(self, turn: Turn, guards: Guards, result: TurnResult, emit: Event, reply: str) -> str:
        """A request for a change that ended with none made is not a success (request.py `wants`): when the
        model made no call of the kind at all, it is asked once more, with the group that does it and a
        one-line nudge; if still nothing was done (or a call tried and failed), the user is told plainly under
        the reply. A question back to the user, or a change the user refused, is no miss."""
        missing = self._missing(turn)
        tried = {TOOLS[c.name].group for c in turn.calls if isinstance(c.name, str) and c.name in TOOLS}
        asked = [w for w in missing if WANTS[w] not in tried]  # a call that failed had its chance
        if not asked or guards.profile == "off" or reply.rstrip().endswith("?"):
            if missing and not reply.rstrip().endswith("?") and guards.profile != "off":
                result.correction = " ".join(dict.fromkeys(NOT_DONE[w] for w in missing))
            return reply
        result.nudged = True
        at = len(self.history.messages) - self._turn_start
        note = NUDGE.format(done=NUDGE_DONE[asked[0]])
        self._scratch += [(at, {"role": "assistant", "content": reply}), (at, {"role": "user", "content": note})]
        turn.reached += [WANTS[w] for w in asked]
        reply = self._attempt(turn, guards, result, emit)
        if echoes(reply, note):  # parroted the nudge: say what ran instead
            reply = fallback_reply([c.entry() for c in turn.calls]) if turn.calls else ""
        missing = self._missing(turn)
        if missing and not reply.rstrip().endswith("?"):
            result.correction = " ".join(dict.fromkeys(NOT_DONE[w] for w in missing))
            log.info("asked for %s, and nothing was done", ", ".join(missing))
        return reply or NOTHING_DONE

    def _missing(self, turn: Turn) -> list[str]:
        """The changes the user's words asked for that no call of this turn made (none when the user said no)."""
        if any(c.refused for c in turn.calls):  # declined, nobody to ask, not asked: the user's call, not a miss
            return []
        done = {c.name for c in turn.calls if c.ok and c.ran}
        wrote = any(c.ok and c.ran and c.mutating for c in turn.calls)
        out = []
        for want in wants(turn.text, turn.recent):
            group = WANTS[want]
            made = {n for n in done if n in TOOLS and TOOLS[n].group == group}
            if not (made if want in ("plan", "remember") else wrote):
                out.append(want)
        return out

    def _showable(self, turn: Turn, guards: Guards, result: TurnResult, emit: Event, reply: str) -> str:
        """A reply that is JSON, tool markup or a tool list is never shown as it is: it is said from the tool
        results, or the model is asked once more; failing that, the reply without its tool talk."""
        why = unshowable(reply, self.tool_names, turn.text)
        if guards.profile == "off" or not why:
            return reply
        log.info("reply not shown as it is (%s): %r", why, reply[:200])
        if any(c.ok for c in turn.calls):
            return fallback_reply([c.entry() for c in turn.calls])
        at = len(self.history.messages) - self._turn_start
        self._scratch += [(at, {"role": "assistant", "content": reply}), (at, {"role": "user", "content": REPHRASE})]
        again = self._attempt(turn, guards, result, emit)
        if not unshowable(again, self.tool_names, turn.text) and not echoes(again, REPHRASE):
            return again
        if any(c.ok for c in turn.calls):
            return fallback_reply([c.entry() for c in turn.calls])
        return without_tool_talk(again, self.tool_names) or NOTHING_DONE

    def _call_model(
        self, messages: list[Message], tools: list[dict[str, Any]], result: TurnResult, emit: Event
    ) -> tuple[ChatResult, bool]:
        """One streamed model call; returns the reply and whether its text was already shown."""
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
            reply = self.llm.chat_stream(self.config.model, messages, on_token=on_token, **kwargs)
        except ModelError as e:
            if e.kind != "tool_parse" or streaming:
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
