"""Urgency: one number per open task that orders "what's next" (the default of /tasks, list_tasks, the agenda).

Like Taskwarrior's, it is a sum of terms, each a coefficient times a factor
between 0 and 1, so every term is readable on its own:

    term       coefficient  factor
    due          12.0       1.0 when 7 or more days overdue; 0.2 when due 14 or more days ahead;
                            in between, linear in the days (due today: 0.73); no due date: 0
    priority      6.0       high 1.0, medium 0.65, low 0.3, none 0
    age           2.0       days since it was added / 365, at most 1
    waiting      -3.0       1 when its start date is still ahead (not before then)
    blocked      -5.0       1 while it has open subtasks (they come first)

So an overdue high-priority task (at least 15.2) always comes before a task
due later with low priority (at most 12.6), other things equal; ties go to
the earlier due date, then the lower id. Done and cancelled tasks have no urgency.
The trade-off is Taskwarrior's: a fixed formula is predictable and easy to
explain, where a learned order would need data we do not have.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

DUE, PRIORITY, AGE, WAITING, BLOCKED = 12.0, 6.0, 2.0, -3.0, -5.0
PRIORITY_FACTOR = {"high": 1.0, "medium": 0.65, "low": 0.3}


def due_factor(due: dt.date, today: dt.date) -> float:
    """0.2 (14+ days ahead) .. 1.0 (7+ days overdue), linear in between."""
    overdue = (today - due).days
    if overdue >= 7:
        return 1.0
    if overdue >= -14:
        return 0.2 + 0.8 * (overdue + 14) / 21
    return 0.2


def urgency(task: dict[str, Any], today: dt.date, open_children: int = 0) -> float:
    """The urgency of one task (0 for one that is not open)."""
    if task.get("status", "open") != "open":
        return 0.0
    score = 0.0
    if task.get("due_date"):
        try:
            score += DUE * due_factor(dt.date.fromisoformat(task["due_date"]), today)
        except (ValueError, TypeError):  # a date another tool stored oddly: no urgency from it, still listed
            pass
    score += PRIORITY * PRIORITY_FACTOR.get(task.get("priority") or "", 0.0)
    created = str(task.get("created_at") or "")[:10]
    if created:
        try:
            age = (today - dt.date.fromisoformat(created)).days
        except ValueError:
            age = 0
        score += AGE * min(max(age, 0) / 365, 1.0)
    if task.get("start_date") and task["start_date"] > today.isoformat():
        score += WAITING
    if open_children:
        score += BLOCKED
    return round(score, 2)


def order_key(task: dict[str, Any], today: dt.date, open_children: int = 0) -> tuple[float, str, int]:
    """Sort key for "most urgent first": urgency, then the earlier due date, then the lower id."""
    return (-urgency(task, today, open_children), task.get("due_date") or "9999-99-99", task.get("id") or 0)
