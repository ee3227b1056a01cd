"""/tasks, /agenda and /stats as rich tables for the full terminal (tui.py).

The plain modes print the text of commands.py; both are built from the same
rows (`dispatch`, `agenda_sections`, `stats_rows`), so they cannot disagree.
Titles fold inside their column rather than widen the table, so every table
fits a 40-column terminal; a line break in a title is shown as \\n and never
starts a row of its own.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from planner.agent.loop import Agent
from planner.tools import ToolContext
from planner.ui.commands import Stats, stats_footer, stats_rows
from planner.ui.text import inline, safe
from planner.ui.views import agenda_sections, extras, listing, notes_marker, status_cell, when


def _table(*columns: tuple[str, dict[str, Any]]) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for name, options in columns:
        table.add_column(name, **options)
    return table


def task_table(ctx: ToolContext, arg: str) -> Any:
    """/tasks: id, title, due, status (OVERDUE in red), and the rest in the shell's notation."""
    view = listing(ctx, arg.split())  # a Failure is the caller's to show
    if not view.tasks:
        return Text(f"no {'' if view.status == 'all' else view.status + ' '}tasks")
    today = ctx.today().isoformat()
    table = _table(
        ("id", {"justify": "right", "no_wrap": True}),
        ("title", {"ratio": 3, "overflow": "fold", "min_width": 12}),  # a title keeps 12 characters at 40 columns
        ("due", {"no_wrap": True, "overflow": "ellipsis", "min_width": 5}),
        ("status", {"no_wrap": True, "overflow": "ellipsis", "min_width": 4}),
        ("more", {"ratio": 1, "overflow": "fold"}),
    )
    for t in view.tasks:
        cell = status_cell(t, today)
        table.add_row(
            str(t["id"]),
            Text(inline(t["title"]) + notes_marker(t)),
            when(t),
            Text(cell, style="bold red") if cell == "OVERDUE" else cell,
            Text(inline(extras(t))),
        )
    if view.footer:
        table.caption = "\n".join(view.footer)
    return table


def agenda_table(ctx: ToolContext, arg: str) -> Any:
    """/agenda: a heading per day (overdue first, in red) and a table of its tasks."""
    title, sections, footer = agenda_sections(ctx, arg)
    parts: list[Any] = [Text(title, style="bold")]
    for heading, tasks in sections:
        parts.append(Text(heading, style="bold red" if heading == "overdue" else "bold"))
        table = _table(
            ("id", {"justify": "right", "no_wrap": True, "min_width": 4}),
            ("time", {"no_wrap": True, "min_width": 5}),
            ("title", {"ratio": 3, "overflow": "fold"}),
            ("more", {"ratio": 1, "overflow": "fold"}),
        )
        table.show_header = False
        for t in tasks:
            more = "(event)" if t.get("event") else "  ".join(x for x in (extras(t), t.get("note")) if x)
            table.add_row(str(t["id"]), t.get("due_time") or "", Text(inline(t["title"])), Text(inline(more)))
        parts.append(table)
    parts += [Text(line, style="dim") for line in footer]
    return Group(*parts)


def stats_table(agent: Agent, stats: Stats) -> Any:
    """/stats: one row per figure, a column for the last turn and one for this run."""
    header, rows = stats_rows(stats)
    table = _table(
        (header[0], {"no_wrap": True}),  # 18 + 9 + 9 characters and the gaps: 40 columns
        *((name, {"justify": "right", "no_wrap": True}) for name in header[1:]),
    )
    for row in rows:
        table.add_row(*row)
    return Group(table, *(Text(safe(line), style="dim") for line in stats_footer(agent, stats)))
