"""Commands typed after '/': answered locally, never sent to the model.

Each handler takes the running agent and the text after the command name and
returns what to show, or raises a Failure (outcomes.py) that carries the line to
show and the exit status a one-shot /command ends with. Handlers read and change
the agent's state (session, switches) but never print; the terminal (repl.py,
tui.py) prints what they return.
"""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from planner.agent.loop import Agent, TurnResult
from planner.memory.history import new_session_name, recent_sessions
from planner.memory.longterm import AUTO_RECALL_COSINE, LongTermMemoryError
from planner.model.base import ModelError, ModelFault
from planner.model.client import Ollama
from planner.settings import program
from planner.storage.db import DatabaseError, explain
from planner.storage.tasks import new_turn
from planner.ui import layout
from planner.ui.layout import wrap
from planner.ui.outcomes import Failure, Refused, Usage, UsageError
from planner.ui.traceview import turn_trace
from planner.ui.views import agenda_text, lists_text, tasks_text


@dataclass
class Stats:
    """Totals for this run of the planner, for /stats."""

    turns: int = 0
    model_calls: int = 0
    prompt_tokens: int = 0
    eval_tokens: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    critiques: int = 0
    model_seconds: float = 0.0
    load_seconds: float = 0.0
    tool_seconds: float = 0.0
    prefix_reuse: list[float] = field(default_factory=list)
    last: TurnResult | None = field(default=None, repr=False)

    def add(self, r: TurnResult) -> None:
        """Count one finished turn."""
        self.turns += 1
        self.model_calls += r.model_calls
        self.prompt_tokens += r.prompt_tokens
        self.eval_tokens += r.eval_tokens
        self.tool_calls += len(r.tool_calls)
        self.tool_errors += sum(not c["ok"] for c in r.tool_calls)
        self.critiques += len(r.critiques)
        self.model_seconds += r.model_seconds
        self.load_seconds += r.load_seconds
        self.tool_seconds += r.tool_seconds
        self.prefix_reuse += r.prefix_reuse
        self.last = r


Handler = Callable[[Agent, str, Stats], str]
COMMANDS: dict[str, tuple[str, Handler]] = {}


def command(usage: str) -> Callable[[Handler], Handler]:
    """Register a handler as /NAME, NAME taken from the usage line."""

    def register(fn: Handler) -> Handler:
        COMMANDS[usage.split()[0].lstrip("/")] = (usage, fn)
        return fn

    return register


def run_command(agent: Agent, line: str, stats: Stats) -> str:
    """Run '/name args' and return what to show; raises a Failure that says what went wrong."""
    name, _, arg = line[1:].partition(" ")
    entry = COMMANDS.get(COMMAND_ALIASES.get(name.lower(), name.lower()))
    if entry is None:
        raise UsageError(f"unknown command /{name}; type /help for the list")
    try:
        return entry[1](agent, arg.strip(), stats)
    except DatabaseError as e:  # busy, read-only, full: said, and the session goes on
        raise Failure(str(e)) from None
    except sqlite3.Error as e:
        raise Failure(str(explain(e) or f"the database could not be read ({e})")) from None


EXIT_WORDS = {"exit", "quit", "/exit", "/quit", "/bye"}  # /bye as `ollama run` users type it
COMMAND_ALIASES = {"?": "help"}  # other words for a /command (tools.ALIASES are other names for a tool)


def help_text() -> str:
    """Every command and what it does, aligned: /help, completion and the README all show this."""
    rows = [re.split(r"\s{2,}", usage, maxsplit=1) for usage, _ in COMMANDS.values()]
    rows.append(["exit", "leave (or Ctrl-D; also quit, /bye)"])
    width = max(len(r[0]) for r in rows) + 2
    room = min(layout.width(), 80) - 1
    return "\n".join(wrap(f"{r[0]:<{width}}{r[1] if len(r) > 1 else ''}".rstrip(), room, width) for r in rows)


@command("/help  this list (also /?)")
def _help(agent: Agent, arg: str, stats: Stats) -> str:
    return help_text()


@command("/clear  clear the screen")
def _clear(agent: Agent, arg: str, stats: Stats) -> str:
    return ""  # the full terminal clears itself before this; a pipe has no screen


@command("/tasks [FILTER...]  your tasks, most urgent first (+tag #list due:week)")
def _tasks(agent: Agent, arg: str, stats: Stats) -> str:
    return tasks_text(agent.context, arg.split())


@command("/lists  the lists (projects) and their open tasks")
def _lists(agent: Agent, arg: str, stats: Stats) -> str:
    return lists_text(agent.context)


@command("/agenda [DAYS]     overdue, today and the next days (7)")
def _agenda(agent: Agent, arg: str, stats: Stats) -> str:
    return agenda_text(agent.context, arg)


@command("/plan [DAY|week|publish]  your day in free time, now marked (why, publish)")
def _plan(agent: Agent, arg: str, stats: Stats) -> str:
    from planner.ui.views import plan_text

    if arg.strip().lower().startswith("publish"):
        return publish_plan(agent, arg.strip()[7:].strip() or None)
    words = arg.split()
    why = "why" in words or "--why" in words
    when = " ".join(w for w in words if w not in ("why", "--why")) or None
    return plan_text(agent.context, when, why=why)


@command("/start ID  start the clock on a task")
def _start(agent: Agent, arg: str, stats: Stats) -> str:
    from planner.tools import dispatch

    if not arg.strip().isdigit():
        raise Usage("/start ID")
    result, ok = dispatch(_own_turn(agent), "start_task", {"id": int(arg)})
    if not ok:
        raise Failure(result["error"])
    lines = [f"stopped {result['stopped']['title']} ({result['stopped']['spent']})"] if result.get("stopped") else []
    s = result.get("started") or result["running"]
    return "\n".join(
        [*lines, f"{'started' if 'started' in result else 'running'} {s['title']}, since {s['from'][11:]}"]
    )


@command("/stop [ID] [TIME]  stop the clock (TIME: how long it took)")
def _stop(agent: Agent, arg: str, stats: Stats) -> str:
    from planner.tools import dispatch

    words = arg.split()
    call: dict[str, Any] = {"id": int(words.pop(0))} if words and words[0].isdigit() and len(words[0]) < 9 else {}
    if words:
        call["took"] = " ".join(words)
    result, ok = dispatch(_own_turn(agent), "stop_task", call)
    if not ok:
        raise Failure(result["error"])
    s = result["stopped"]
    return f"stopped {s['title']}: {s['spent']} ({result['spent_in_all']} in all)"


def _own_turn(agent: Agent) -> Any:
    """The agent's tool context with a turn of its own, so /undo takes back this command alone."""
    import dataclasses

    return dataclasses.replace(agent.context, turn=new_turn())


def publish_plan(agent: Agent, when: str | None) -> str:
    """Write the plan's blocks to the calendar PLANNER_CALDAV_PLAN names, after the user's yes."""
    from planner.sync.plan_publish import PublishError, publish

    ctx = agent.context
    if not agent.config.caldav_plan:
        raise Failure("no calendar for the plan is set: set PLANNER_CALDAV_PLAN (or use `export --plan` for a file)")
    if not (ctx.yes or (ctx.confirm and ctx.confirm(f"Write the plan's blocks to {agent.config.caldav_plan}?"))):
        raise Refused("nothing was written to the calendar")
    try:
        return publish(ctx, agent.config, when)
    except PublishError as e:
        raise Failure(str(e)) from None


@command("/undo  undo the last request (again: the one before)")
def _undo(agent: Agent, arg: str, stats: Stats) -> str:
    outcome = agent.undo_last_turn()
    if outcome.refused:
        raise Refused(outcome.refused)
    return "undone:\n  " + "\n  ".join(outcome.lines) if outcome.lines else "nothing to undo"


@command("/redo  make again what /undo took back")
def _redo(agent: Agent, arg: str, stats: Stats) -> str:
    outcome = agent.redo_last_undo()
    if outcome.refused:
        raise Refused(outcome.refused)
    return "redone:\n  " + "\n  ".join(outcome.lines) if outcome.lines else "nothing to redo"


@command("/sync  the tasks with your CalDAV task lists, both ways")
def _sync(agent: Agent, arg: str, stats: Stats) -> str:
    return sync_text(agent)


def sync_text(
    agent: Agent, progress: Callable[[int, int], None] | None = None, ask: Callable[[str], bool] | None = None
) -> str:
    """/sync: one sync, its report in lines (`progress(done, total)` hears it go; `ask` is the y/N)."""
    from planner.policy import Door
    from planner.sync.runner import SyncError, report_lines, sync_config
    from planner.ui.secrets import with_password

    how = f"run `{program()} sync --yes`"
    door = Door("sync", ask=ask or agent.context.confirm, yes=agent.config.yes, how=how)
    config = with_password(agent.config, interactive=False)  # a missing password is named, not asked for here
    try:
        report = sync_config(agent.context.store, config, agent.today, door, progress)
    except SyncError as e:
        raise Failure(str(e)) from None
    return "\n".join(report_lines(agent.config, report))


@command("/memories [WORDS]  what the planner remembers, or a search of it")
def _memories(agent: Agent, arg: str, stats: Stats) -> str:
    memory = agent.memory
    if memory is None:
        return "long-term memory is off"
    if arg:
        try:
            hits = memory.search(arg, 10)
        except LongTermMemoryError as e:
            raise Failure(str(e)) from None
        # The same floor as automatic recall: a keyword hit, or close enough in meaning; not "the best 10".
        hits = [h for h in hits if h["keyword"] or h["cosine"] >= AUTO_RECALL_COSINE]
        shown = [f"[{h['id']}] {h['text']}  ({h['kind']}, said {h['said']}, {h['score']:.2f})" for h in hits]
        return "\n".join(shown) or "nothing matches"
    lines = []
    for r in memory.all():
        about = [r["kind"], r["topic"], f"said {r['said_on']}" if r["said_on"] else ""]
        if r["happened_on"] and (r["happened_on"], r["happened_to"]) != (r["said_on"], r["said_on"]):
            about.append(
                f"about {r['happened_on']}"
                + (f" to {r['happened_to']}" if r["happened_to"] != r["happened_on"] else "")
            )
        lines.append(f"[{r['id']}] {r['text']}  ({', '.join(x for x in about if x)})")
    for sc in memory.scenes.all():  # groupings by name; /forget scene NAME removes one, /undo brings it back
        lines.append(f"scene {sc['name']}: memories {', '.join(map(str, sc['memories']))}. {sc['summary']}")
    return "\n".join(lines) or "no memories yet"


@command("/forget ID|WORDS   forget one memory")
def _forget(agent: Agent, arg: str, stats: Stats) -> str:
    if agent.memory is None:
        return "long-term memory is off"
    if not arg:
        raise Usage("/forget ID or /forget WORDS")
    try:
        gone = agent.memory.forget(arg, turn=new_turn())["forgotten"]  # one /undo brings it back
    except LongTermMemoryError as e:
        raise Failure(str(e)) from None
    return f"forgot [{gone['id']}] {gone['text']} (/undo brings it back)"


@command("/sessions          recent sessions")
def _sessions(agent: Agent, arg: str, stats: Stats) -> str:
    current = agent.session
    lines = [
        f"{'*' if r['name'] == current else ' '} {r['name']:<28} {r['messages']:>5} messages  {r['last'] or ''}"
        for r in recent_sessions(agent.context.store)
    ]
    if not any(line.startswith("*") for line in lines):  # stored with its first message
        lines.insert(0, f"* {current:<28} {0:>5} messages  (nothing said yet)")
    return "\n".join(lines)


def _switch(agent: Agent, name: str) -> str:
    return f"session {name} ({agent.switch_session(name)} messages)"


@command("/session [NAME]    show the session, or switch to (or start) NAME")
def _session(agent: Agent, arg: str, stats: Stats) -> str:
    if not arg:
        return f"session {agent.session}"
    return _switch(agent, arg)


@command("/new               start a new session")
def _new(agent: Agent, arg: str, stats: Stats) -> str:
    return _switch(agent, new_session_name())


@command("/history [N]       the last N messages of this session (10)")
def _history(agent: Agent, arg: str, stats: Stats) -> str:
    try:
        n = int(arg) if arg else 10
    except ValueError:
        raise Usage("/history [N]") from None
    shown = []
    for m in agent.transcript():
        if m["role"] == "user":
            shown.append(f"you> {m['content'].split(chr(10) * 2 + '[Notes from memory')[0]}")
        elif m["role"] == "assistant" and not m.get("tool_calls"):
            shown.append(f"bot> {m['content']}")
    return "\n".join(shown[-n:]) or "nothing said yet"


def _switch_flag(agent: Agent, arg: str, name: str, label: str) -> str:
    if arg not in ("", "on", "off"):
        raise Usage(f"/{label} on|off")
    if arg:
        agent.configure(**{name: arg == "on"})
    return f"{label} is {'on' if getattr(agent.config, name) else 'off'}"


@command("/reflect on|off    the critic after turns that changed data")
def _reflect(agent: Agent, arg: str, stats: Stats) -> str:
    return _switch_flag(agent, arg, "reflect", "reflect")


@command("/think on|off      let a thinking model think")
def _think(agent: Agent, arg: str, stats: Stats) -> str:
    return _switch_flag(agent, arg, "think", "think")


def stats_rows(stats: Stats) -> tuple[list[str], list[tuple[str, ...]]]:
    """/stats as a header and rows (figure, last turn, this run), shared by the text and the table."""
    runs: list[tuple[Any, int, int]] = []
    if stats.last:
        last = stats.last
        runs.append((last, len(last.tool_calls), sum(not c["ok"] for c in last.tool_calls)))
    runs.append((stats, stats.tool_calls, stats.tool_errors))

    def figures(s: Any, tools: int, errors: int) -> list[str]:
        rate = s.eval_tokens / (s.model_seconds - s.load_seconds) if s.model_seconds > s.load_seconds else 0
        reuse = sum(s.prefix_reuse) / len(s.prefix_reuse) if s.prefix_reuse else 0
        return [
            f"{s.model_calls}",
            f"{s.prompt_tokens:,}",
            f"{s.eval_tokens:,}",
            f"{rate:.1f}",
            f"{s.model_seconds:.1f} s",
            f"{s.load_seconds:.1f} s",
            f"{tools}",
            f"{errors}",
            f"{s.tool_seconds * 1000:.0f} ms",
            f"{reuse:.0%}",
            f"{len(s.critiques) if isinstance(s, TurnResult) else s.critiques}",
        ]

    labels = [
        "model calls",
        "prompt tokens",
        "eval tokens",
        "tokens/s",
        "time in the model",
        "  of which loading",
        "tool calls",
        "tool calls failed",
        "time in tools",
        "prompt-cache reuse",
        "critic retries",
    ]
    columns = [figures(*run) for run in runs]
    header = ["", *(["last turn"] if stats.last else []), "this run"]
    return header, [(label, *(c[i] for c in columns)) for i, label in enumerate(labels)]


def stats_footer(agent: Agent, stats: Stats) -> list[str]:
    """The lines under the /stats figures: the models and today."""
    c = agent.config
    return [
        f"this run: {stats.turns} requests",
        f"models: {c.model} (critic {c.critic_model}, embed {c.embed_model})",
        f"today: {agent.today():%A} {agent.today().isoformat()} · {dt.datetime.now():%H:%M}",
        "prompt-cache reuse: how much of each request repeated the last, which Ollama need not read again",
    ]


@command("/trace  the tools and calls of the last request, and why")
def _trace(agent: Agent, arg: str, stats: Stats) -> str:
    return "\n".join(turn_trace(stats.last)) if stats.last else "no request yet in this run"


@command("/stats  model calls, tokens, time in the model and in tools")
def _stats(agent: Agent, arg: str, stats: Stats) -> str:
    header, rows = stats_rows(stats)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(f"{cell:<{widths[0]}}" if i == 0 else f"{cell:>{widths[i]}}" for i, cell in enumerate(r))
        for r in [header, *rows]
    ]
    return "\n".join([*(line.rstrip() for line in lines), *stats_footer(agent, stats)])


@command("/model [main|critic NAME]  show the models, or switch one (it must be pulled)")
def _model(agent: Agent, arg: str, stats: Stats) -> str:
    c = agent.config
    if not arg:
        return f"main {c.model} · critic {c.critic_model} · embed {c.embed_model}"
    role, _, name = arg.partition(" ")
    name = name.strip()
    if role not in ("main", "critic") or not name:
        raise Usage("/model main NAME or /model critic NAME")
    try:
        _, capabilities = agent.llm.facts(name)
    except ModelError as e:
        raise Failure(
            f"{name} is not pulled; /pull {name} first" if e.kind is ModelFault.NOT_FOUND else str(e)
        ) from None
    if role == "main" and capabilities and "tools" not in capabilities:
        raise Failure(f"{name} cannot call tools; choose another main model")
    if role == "critic":
        agent.configure(critic_model=name)
        return f"critic model is now {name}"
    agent.set_model(name)
    return f"main model is now {name} (guards: {agent.guards.profile})"


def server(agent: Agent) -> Ollama | None:
    """The Ollama server the agent's model is, for what is about one server and its files (pulling a model,
    which are loaded), which is no part of `ChatModel`; None for another model (the scripted one)."""
    return agent.llm if isinstance(agent.llm, Ollama) else None


@command("/pull NAME  download a model, with a progress bar in a terminal")
def _pull(agent: Agent, arg: str, stats: Stats) -> str:
    if not arg:
        raise Usage("/pull NAME")
    ollama = server(agent)
    if ollama is None:
        raise Failure("/pull needs an Ollama server")
    try:
        for _ in ollama.pull(arg):
            pass
    except ModelError as e:
        raise Failure(str(e)) from None
    return f"pulled {arg}"
