"""Before a reply is shown: what the turn did checked against what the user asked and what the reply says.

    unasked        a change that needs the user's yes was refused as no one could answer: said under a reply
                   that does not say so, with what works
    which          a write to one of several tasks the user's words fit alike was refused: the reply is the
                   question which one, unless the model asked it
    done_as_asked  the user's words asked to add, change, plan or remember (request.py `wants`) and no call
                   did: the model is asked once more with a one-line nudge and the group that does it; a
                   small model that still only says what it would do, where the words leave one tool, is
                   asked for that tool's arguments (also after a failed call of the wrong tool); still
                   nothing (or a call that tried and failed), and the user is told plainly under the reply
    checked        the reply claims a change no call made (claims.py): in the small profile the model is
                   asked once more; a claim still unbacked gets a line saying what did change
    showable       a reply that is JSON, tool markup, a list of tools or a promise instead of an answer
                   (replies.py `unshowable`), or an earlier reply word for word (`stale`), is said
                   from the tool results, or the model is asked once more for a sentence

Each asks the model at most once, through `ask` (the loop's one more attempt, with a note said for this
turn only), and a turn asks once at most for a change not made or a claim not true. Split from loop.py:
the loop runs model calls and tools, this decides whether what came of them may be shown as it is.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from planner.agent.claims import unbacked, what_changed, without_tool_talk
from planner.agent.guards import Guards
from planner.agent.replies import PROMISE, STALE, echoes, fallback_reply, stale, unshowable
from planner.agent.request import WANTS, OneTool, an_order, one_tool, wants
from planner.agent.turn import Turn, TurnResult
from planner.policy import Refusal
from planner.prompts import (
    ANSWER_THIS,
    CLAIM_PROMPT,
    NO_ONE_ASKED,
    NOT_DONE,
    NOTHING_DONE,
    NUDGE,
    NUDGE_DONE,
    PROMISED,
    REPHRASE,
    WHICH,
)
from planner.tools import TOOLS, ToolContext

log = logging.getLogger("planner")

# A reply that says a change was not made for want of a yes ("I could not delete it: it needs your confirmation")
_COULD_NOT = re.compile(
    r"\b(?:could ?n[o']?t|can ?n[o']?t|cannot|unable|not (?:been )?(?:deleted|removed|changed|done|made)|"
    r"confirm\w*|your (?:yes|ok|permission|approval)|--yes|terminal)\b",
    re.I,
)


@dataclass
class Finish:
    """The checks on one turn's final reply; `ask(reply, note)` runs one more attempt and returns its reply."""

    turn: Turn
    guards: Guards
    result: TurnResult
    names: set[str]  # the tools this run offers (a reply naming several of them is a tool list)
    ask: Callable[[str, str], str]
    force: Callable[[str, OneTool], str] | None = None  # one more attempt whose model call gives a tool's arguments
    how: str = ToolContext.how  # what works at this door, for a change no one could say yes to
    _claimed: str | None = None  # the correction `checked` set for the reply's claims

    def checked(self, reply: str) -> str:
        """The final reply checked against what ran: a claimed change that did not happen is never shown as true."""
        missing = unbacked(reply, self.turn.calls)
        if (
            any(c.tools for c in missing) and self.guards.small and not self.result.nudged and not self._stale(reply)
        ):  # asked once more (once a turn), with what is not so; a field no result shows is only said; an earlier
            # reply again is asked for an answer to this message (`showable`)
            self.result.reasked = True
            reply = self.ask(reply, CLAIM_PROMPT.format(claim=missing[0].words, none=missing[0].none))
            if echoes(reply, CLAIM_PROMPT.format(claim="", none=missing[0].none)):  # parroted: say what ran
                reply = fallback_reply([c.entry() for c in self.turn.calls])
            missing = unbacked(reply, self.turn.calls)
        if missing and not self.result.correction:
            self.result.correction = self._claimed = what_changed(self.turn.calls, missing)
            log.info("reply claims what did not happen (%s): %s", missing[0].verb, self.result.correction)
        return reply

    def unasked(self, reply: str) -> str:
        """A change that needs the user's yes and was not made because no one could answer is always said,
        with what works: when the reply does not say it could not ("I did nothing."), the line under it does."""
        if any(c.refused is Refusal.NOBODY for c in self.turn.calls) and not _COULD_NOT.search(reply):
            if not self.result.correction:
                self.result.correction = NO_ONE_ASKED.format(how=self.how)
        return reply

    def which(self, reply: str) -> str:
        """After a write refused as a guess among tasks the words fit alike, with nothing else written, the
        user is asked which one they mean (the model's own question stands)."""
        guesses = [c for c in self.turn.calls if c.which]
        if not guesses or reply.rstrip().endswith("?") or any(c.ok and c.ran and c.mutating for c in self.turn.calls):
            return reply
        titles = list(dict.fromkeys(t for c in guesses for t in c.which))
        said = ", ".join(f'"{t}"' for t in titles[:-1]) + f' or "{titles[-1]}"'
        log.info("asked which task: %s", said)
        return WHICH.format(titles=said)

    def done_as_asked(self, reply: str) -> str:
        """A request for a change that ended with none made is not a success (request.py `wants`): when the
        model made no call of the kind at all, it is asked once more, with the group that does it and a
        one-line nudge; if still nothing was done (or a call tried and failed), the user is told plainly under
        the reply. A question back to the user, or a change the user refused, is no miss."""
        missing = self.missing()
        tried = {TOOLS[c.name].group for c in self.turn.calls if isinstance(c.name, str) and c.name in TOOLS}
        asked = [w for w in missing if WANTS[w] not in tried]  # a call that failed had its chance
        tool = self._one_tool(missing)
        if (
            not (asked or tool)  # unless it was the wrong tool ("the milk task" as a list)
            or self.guards.profile == "off"
            or reply.rstrip().endswith("?")
            or self.result.gave_up
        ):
            if missing and not reply.rstrip().endswith("?") and self.guards.profile != "off":
                self.result.correction = " ".join(dict.fromkeys(NOT_DONE[w] for w in missing))
            return reply
        if asked:
            self.result.nudged = True
            note = NUDGE.format(done=NUDGE_DONE[asked[0]])
            self.turn.reached += [WANTS[w] for w in asked]  # the nudge comes with the group that does it
            reply = self.ask(reply, note)
            if echoes(reply, note):  # parroted the nudge: say what ran instead
                reply = fallback_reply([c.entry() for c in self.turn.calls]) if self.turn.calls else ""
            missing = self.missing()
            tool = self._one_tool(missing)
        # the model said it would ("I will add the report."), the user's words are an order ("add ...", "and
        # pay the bill friday" after one), or they give the one task they name a new date ("actually the bank
        # call is on thursday") or say they did it ("I called mum"): one_tool reads those only where the words
        # name one task, and say a date or the task's own verb
        meant = (
            unshowable(reply, self.names, self.turn.text) == PROMISE
            or an_order(self.turn.text, self.turn.recent)
            or (tool is not None and tool.name in ("update_task", "complete_task"))
        )
        if tool and meant and not reply.rstrip().endswith("?") and self.force is not None and self.guards.small:
            # Asked twice and still no call at all: a small model that only says what it would do ("I will
            # add the report") is asked for the one tool's arguments, and that call runs as its own.
            self.result.forced = tool.name
            reply = self.force(reply, tool)
            if self.turn.calls and any(c.ok for c in self.turn.calls):
                reply = fallback_reply([c.entry() for c in self.turn.calls])
            missing = self.missing()
        if missing and not reply.rstrip().endswith("?"):
            self.result.correction = " ".join(dict.fromkeys(NOT_DONE[w] for w in missing))
            log.info("asked for %s, and nothing was done", ", ".join(missing))
        return reply or NOTHING_DONE

    def _one_tool(self, missing: list[str]) -> OneTool | None:
        """The one tool that carries out the first change still missing, when the words leave no choice
        (request.py `one_tool`) and no call of this turn did anything: none ran, or each failed as a call of
        another tool of the same kind, of no tool at all, or of one the guards refused as a misreading. So
        the milk task renamed as a list, or the car service added again for "push it to tomorrow", is no
        chance update_task had; a fact refused as a task ("add to what you know about me") is another reading
        of the words, not a step towards adding one, and a guess among tasks is the user's to settle."""
        if not missing:
            return None
        task = self._one_task()
        title = dict(self.turn.mandate.titles).get(task) if task is not None and self.turn.mandate else None
        tool = one_tool(missing[0], self.turn.text, task, title)
        if tool is None:
            return None
        kind = TOOLS[tool.name].group
        for c in self.turn.calls:
            known = isinstance(c.name, str) and c.name in TOOLS
            other = known and TOOLS[c.name].group != kind and not c.misread
            if c.ok or c.which or c.name == tool.name or other:
                return None
        return tool

    def _one_task(self) -> int | None:
        """The one task the user's words name for a change, if they name exactly one, plainly."""
        m = self.turn.mandate
        named = m.change | m.remove if m is not None else None
        if named is None or len(named.ids) != 1 or named.everything or named.sets or named.alike:
            return None
        return next(iter(named.ids))

    def missing(self) -> list[str]:
        """The changes the user's words asked for that no call of this turn made (none when the user said no)."""
        if any(c.refused and not c.misread for c in self.turn.calls):
            return []  # declined, nobody to ask, a deletion not asked for: not a miss (a call refused as the
            # model's misreading, the car service added again for "push it to tomorrow", is the model's miss)
        done = {c.name for c in self.turn.calls if c.ok and c.ran}
        wrote = any(c.ok and c.ran and c.mutating for c in self.turn.calls)
        out = []
        for want in wants(self.turn.text, self.turn.recent):
            made = {n for n in done if n in TOOLS and TOOLS[n].group == WANTS[want]}
            if not (made if want in ("plan", "remember") else wrote):  # any write stands for an add or a change
                out.append(want)
        return out

    def _stale(self, reply: str) -> bool:
        """The reply is one the planner gave an earlier message, word for word, claiming a change this turn
        made no call for ("I added a new fact about Ana" again, for "where does my sister live?")."""
        return (
            not self.turn.calls
            and bool(unbacked(reply, []))
            and stale(reply, self.turn.answered, self.turn.text, self.turn.recent)
        )

    def showable(self, reply: str) -> str:
        """A reply that is JSON, tool markup, a tool list, a promise or an earlier reply again is never shown as
        it is: it is said from the tool results, or the model is asked once more (an old answer with the user's
        words now); failing that, the reply without its tool talk, or that nothing was done."""
        why = unshowable(reply, self.names, self.turn.text)
        if not why and self._stale(reply):
            why = STALE
        if self.guards.profile == "off" or not why:
            return reply
        log.info("reply not shown as it is (%s): %r", why, reply[:200])
        if any(c.ok for c in self.turn.calls):
            return fallback_reply([c.entry() for c in self.turn.calls])
        if why == PROMISE and self.result.nudged:  # asked once already: the line under the reply says what was not done
            return reply
        if why == STALE and self.result.nudged:  # asked once already: the line under it says what is true
            return reply
        note = {PROMISE: PROMISED, STALE: ANSWER_THIS.format(request=self.turn.text.replace('"', "'"))}.get(
            why, REPHRASE
        )
        again = self.ask(reply, note)
        if not unshowable(again, self.names, self.turn.text) and not echoes(again, note) and not self._stale(again):
            if why == STALE:  # the answer now, its claims checked instead of the old one's
                if self.result.correction == self._claimed:
                    self.result.correction = self._claimed = None
                return self.checked(again)
            return again
        if any(c.ok for c in self.turn.calls):
            return fallback_reply([c.entry() for c in self.turn.calls])
        if why == STALE:  # the old answer once more: shown with the line that says what is true
            return reply
        return without_tool_talk(again, self.names) or NOTHING_DONE
