"""The interactive terminal: prompt_toolkit for input, rich for output.

Used when stdin and stdout are terminals (unless TERM=dumb or --plain; NO_COLOR
only turns colour off); otherwise repl.py keeps its plain line-per-turn mode, which scripts
depend on. Like repl.py, this layer only renders what the agent reports
through its events and never decides anything itself.

    you> add milk for tomorrow
      ↳ add_task(title="milk", due_date="2026-12-02") ✓ 3 ms
    bot> Added "milk" for tomorrow.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings
from rich.console import Console, Group
from rich.live import Live
from rich.markdown import Markdown
from rich.markup import escape
from rich.spinner import Spinner
from rich.text import Text

from planner.agent.loop import Agent, TurnResult
from planner.model.base import ModelError
from planner.storage.maintenance import overview
from planner.ui import reminders
from planner.ui.commands import COMMANDS, EXIT_WORDS, Stats, run_command, server
from planner.ui.outcomes import Failure
from planner.ui.tables import agenda_table, stats_table, task_table
from planner.ui.text import safe
from planner.ui.traceview import SideCalls, Trace

if TYPE_CHECKING:
    from planner.model.client import Ollama

ARGUMENTS = {"tasks": ["open", "done", "all"], "reflect": ["on", "off"], "think": ["on", "off"]}
EXAMPLES = [
    "add buy milk for tomorrow and call the dentist on friday",
    "what's on my list this week?",
    "my sister Ana lives in Lisbon",
]


class SlashCompleter(Completer):
    """Tab completion of /commands and their fixed arguments."""

    def get_completions(self, document: Any, complete_event: Any) -> Any:
        """Complete the command name, then its argument."""
        text = document.text_before_cursor
        if not text.startswith("/"):
            return
        name, space, arg = text[1:].partition(" ")
        if not space:
            for cmd in [*COMMANDS, "exit"]:
                if cmd.startswith(name):
                    yield Completion("/" + cmd, start_position=-len(text))
            return
        for option in ARGUMENTS.get(name, []):
            if option.startswith(arg):
                yield Completion(option, start_position=-len(arg))


class TurnView:
    """What the screen shows during one turn: trace lines, then a spinner or the streamed reply."""

    def __init__(
        self, quiet: bool, verbose: bool, side: SideCalls | None = None, clock: Callable[[], float] = time.perf_counter
    ):
        self.trace = Trace(quiet, verbose, side, clock)
        self.lines: list[Text] = []
        self.reply = ""
        self.correction: str | None = None  # what did change, when the reply claimed more (dimmed under it)
        self.status = "thinking…"
        self.loading = False  # the main model was not in memory when the turn began
        self.thinking = ""
        self.show_thinking = True

    def event(self, kind: str, data: dict[str, Any]) -> None:
        """Take one agent event."""
        self.lines += [Text(line, style="dim") for line in self.trace.lines(kind, data)]
        if kind in ("token", "model", "thinking"):
            self.loading = False  # the model answers: it is loaded
        if kind == "token":
            self.reply += data["text"]
        elif kind == "status":
            # While Ollama loads the model, "loading" is the truth; "thinking" only once it answers.
            if not (self.loading and data["text"] == "thinking…"):
                self.status = data["text"]
            self.reply = ""  # a new model call: anything streamed before was not the answer
            self.thinking = ""
        elif kind == "thinking":
            self.thinking += data["text"]
        elif kind == "warning":
            self.lines.append(Text(f"  ! {safe(data['text'])}", style="yellow"))

    def render(self, final: bool = False) -> Group:
        """The current picture: trace, then the reply (Markdown once final) or a spinner."""
        parts: list[Any] = list(self.lines)
        if self.thinking and self.show_thinking:
            # collapsed to one line: the latest of it
            last = " ".join(self.thinking.split())[-100:]
            parts.append(Text(f"  … {safe(last)}", style="dim italic", no_wrap=True, overflow="ellipsis"))
        if self.reply and final:
            parts += [Text("bot>", style="bold cyan"), Markdown(safe(self.reply))]
            if self.correction:
                parts.append(Text(f"  ({safe(self.correction)})", style="dim"))
        elif self.reply:
            parts.append(Text.assemble(("bot> ", "bold cyan"), safe(self.reply)))
        elif not final:
            parts.append(Spinner("dots", text=Text(self.status, style="dim")))
        return Group(*parts)


class TerminalUI:
    """The interactive REPL with line editing, history, completion and live rendering."""

    def __init__(
        self,
        history_path: Path,
        quiet: bool = False,
        verbose: bool = False,
        side: SideCalls | None = None,
        console: Console | None = None,
    ):
        self.agent: Agent  # given to run(); built after this UI so that its confirm() is the agent's
        self.waiting_reminders: list[str] = []  # came due while a reply was on screen
        self.console = console or Console(highlight=False)
        self.quiet = quiet
        self.verbose = verbose
        self.side = side  # model calls besides the replies, shown with --verbose
        self.stats = Stats()
        self.live: Live | None = None
        self.view: TurnView | None = None  # the turn being shown, for confirm()
        self.tables: dict[str, Callable[[str], Any]] = {
            "/tasks": lambda arg: task_table(self.agent.context, arg),
            "/agenda": lambda arg: agenda_table(self.agent.context, arg),
            "/stats": lambda arg: stats_table(self.agent, self.stats),
        }
        bindings = KeyBindings()

        @bindings.add("escape", "enter")  # Esc-Enter or Alt-Enter: a new line instead of sending
        def _(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        self.session: PromptSession = PromptSession(
            history=FileHistory(str(history_path)),
            completer=SlashCompleter(),
            complete_while_typing=False,  # Tab completes: one match is inserted, several open a menu
            key_bindings=bindings,
            enable_history_search=False,  # Ctrl-R searches instead
        )

    def banner(self, db_path: Path) -> None:
        """Models, database, session, and what is waiting."""
        waiting = overview(self.agent.context.store, self.agent.today().isoformat())
        c = self.agent.config
        # Names and paths come from the user and the server: Text, never markup (a session "[/]x" is a name).
        head = f" · {c.model} (critic {c.critic_model}) · session {self.agent.session}"
        self.console.print(Text.assemble(("Planner", "bold"), safe(head)))
        line = (
            f"{db_path} · {waiting['open']} open tasks, {waiting['overdue']} overdue · "
            f"{waiting['memories']} memories · /help for commands"
        )
        self.console.print(Text(safe(line), style="dim"))
        if not waiting["said_anything"]:
            self.console.print("[dim]Try:[/]")
            for example in EXAMPLES:
                self.console.print(f"[dim]  {example}[/]")

    def remind(self, text: str) -> None:
        """Show a reminder that came due (from the watcher's thread): above the prompt while one is
        waiting, else before the next prompt, so a streaming reply is never drawn over."""
        app = self.session.app
        loop = getattr(app, "loop", None)
        if app.is_running and loop is not None:
            loop.call_soon_threadsafe(
                lambda: run_in_terminal(lambda: self.console.print(Text(safe(text), style="bold")))
            )
        else:
            self.waiting_reminders.append(text)

    def confirm(self, question: str) -> bool:
        """y/N for a destructive tool. The trace so far and the question stay on the screen: the live
        view is stopped (its region erased), the trace printed for good, and a fresh live view started
        below the answer, so nothing above it is drawn over."""
        view = self.view
        if self.live:
            self.live.stop()
        for line in view.lines if view else []:
            self.console.print(line)
        if view:
            view.lines.clear()
        answer = ""
        try:
            with view.trace.waiting() if view else contextlib.nullcontext():
                answer = self.console.input(f"[bold]{escape(safe(question))}[/] \\[y/N] ")
        except (EOFError, KeyboardInterrupt):
            self.console.print()  # the prompt line ends here; the next line starts below it
        finally:
            if self.live:
                self.live = Live(
                    view.render() if view else "", console=self.console, refresh_per_second=12, transient=True
                )
                self.live.start()
        return answer.strip().lower() in ("y", "yes")

    def run(self, agent: Agent, db_path: Path) -> int:
        """Show the banner, then read and answer until Ctrl-D, exit, or two Ctrl-C in a row; returns the exit status."""
        self.agent = agent
        self.banner(db_path)
        for text in reminders.due_now(agent.context.store):  # what fell due since last time
            self.console.print(Text(safe(text), style="bold"))
        watcher = reminders.Watcher(agent.context.store, self.remind).start()
        try:
            return self._loop()
        finally:
            watcher.close()

    def _loop(self) -> int:
        """Read and answer until Ctrl-D, exit, or two Ctrl-C in a row."""
        last_interrupt = 0.0
        while True:
            while self.waiting_reminders:
                self.console.print(Text(safe(self.waiting_reminders.pop(0)), style="bold"))
            try:
                line = self.session.prompt("you> ").strip()
            except EOFError:
                return 0
            except KeyboardInterrupt:
                if time.monotonic() - last_interrupt < 2:
                    return 0
                last_interrupt = time.monotonic()
                self.console.print("[dim](Ctrl-C again to quit, or type exit)[/]")
                continue
            if not line:
                continue
            if line.lower() in EXIT_WORDS:
                return 0
            if line.startswith("/"):
                if line.split()[0] == "/clear":
                    self.console.clear()
                    continue
                try:
                    self.command(line)
                except (Failure, ModelError) as e:  # said, and the session goes on
                    said = e.line() if isinstance(e, Failure) else f"error: {e}"
                    self.console.print(safe(said), markup=False, style="red")
                continue
            self.turn(line)

    def command(self, line: str) -> None:
        """A /command: a table where there is one, /sync and /pull with their progress, else its text."""
        name, _, arg = line.partition(" ")
        if name in self.tables:  # the same rows as the text, as tables that fit the terminal
            self.console.print(self.tables[name](arg.strip()))
        elif name == "/sync":
            self.console.print(safe(self.sync()), markup=False)
        elif name == "/pull" and len(line.split()) == 2 and (ollama := server(self.agent)):
            pull_with_progress(ollama, line.split()[1], self.console)
            self.console.print(safe(f"pulled {line.split()[1]}"), markup=False)
        else:
            for out in safe(run_command(self.agent, line, self.stats)).splitlines():
                self.console.print(out, markup=False, style="bold red" if out.endswith("OVERDUE") else None)

    def sync(self) -> str:
        """/sync with a spinner that counts the to-dos as they go; a y/N stops it while the user answers."""
        from planner.ui.commands import sync_text

        live = Live(Spinner("dots", text="syncing…"), console=self.console, refresh_per_second=12, transient=True)

        def progress(done: int, total: int) -> None:
            live.update(Spinner("dots", text=f"syncing {done}/{total}"))

        def ask(question: str) -> bool:
            live.stop()
            try:
                return self.confirm(question)
            finally:
                live.start()

        live.start()
        try:
            return sync_text(self.agent, progress, ask)
        finally:
            live.stop()

    def turn(self, line: str) -> TurnResult:
        """Run one turn with a live view of its progress."""
        view = TurnView(self.quiet, self.verbose, self.side)
        if self._loading():
            view.status, view.loading = f"loading {self.agent.config.model}…", True
        self.view = view
        self.live = Live(view.render(), console=self.console, refresh_per_second=12, transient=True)
        self.live.start()  # confirm() may replace it with a fresh one below its question

        def on_event(kind: str, data: dict[str, Any]) -> None:
            view.event(kind, data)
            if self.live:
                self.live.update(view.render())

        try:
            result = self.agent.run_turn(line, on_event)
        finally:
            if self.live:
                self.live.stop()
            self.live, self.view = None, None
        view.lines += [Text(line, style="dim") for line in view.trace.rest()]
        if result.error:
            self.console.print(view.render(final=True))
            self.console.print(Text.assemble(("error: ", "red"), safe(result.error)))
        else:
            view.reply, view.correction = result.reply, result.correction  # [interrupted] if the user stopped it
            self.console.print(view.render(final=True))
        self.stats.add(result)
        return result

    def _loading(self) -> bool:
        """Whether the main model is not in the server's memory yet (or the server cannot say)."""
        ollama = server(self.agent)
        if ollama is None:
            return False  # a model in this process has nothing to load
        try:
            return self.agent.config.model not in ollama.loaded()
        except ModelError:
            return True


def pull_with_progress(llm: Ollama, name: str, console: Console) -> None:
    """Pull a model with a progress bar (size and speed); raises ModelError when the pull fails. The bar and
    its refresh thread are gone before this returns or raises, so nothing it started outlives it."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    pulling = llm.pull(name)
    try:
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task(f"pulling {name}", total=None)
            for status, done, total in pulling:
                progress.update(task, description=f"{name}: {status[:40]}", completed=done, total=total or None)
    finally:
        pulling.close()  # the download's connection ends here, whichever way the pull ended
