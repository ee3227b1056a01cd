"""Task titles without their date: "buy milk for tomorrow" given with due_date "tomorrow" is "buy milk".

The model passes the user's words for a date, a repeat or a reminder, and often
leaves the same words at the end of the title as well: the task would read
"buy milk for tomorrow" for ever, also the day after. When a title ends with the
phrase the same call gives as due_date, repeat or remind (after a joining word
such as for, on, by or due), the phrase is cut from the title and the result
says so, in every guard profile: it is what the user meant.

A day said in other words than the due date's ("call the bank tomorrow" with
due_date 2026-12-02, tomorrow) is cut too when it names the same day (`cut_day`):
a relative day, a weekday, or "this"/"next" and a weekday, read against today;
not when it is part of a name or a phrase ("Black Friday", "Watch Today",
"every Wednesday", "after Friday").

Left out: a phrase inside the title ("call mom tomorrow about the trip" stays),
a date in numbers ("read chapter 12" due the 12th keeps its 12), and a title
that would be left empty.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from planner.dates import DateError, resolve

# Words that join a date, repeat or reminder to the rest of a title.
_JOIN = r"(?:(?:due|for|on|by|at|until|till|before|from|starting|remind\s+me|reminder|reminded)\s+)*"
_WHAT = {"due_date": "the due date", "repeat": "the repeat", "remind": "the reminder"}


def cut_title(title: Any, **phrases: str | None) -> tuple[Any, dict[str, str]]:
    """The title without a trailing due_date, repeat or remind phrase of the same call, and the result field saying so.

    `phrases` are the call's due_date, repeat and remind as sent; the field is
    {"title_cut": ...} when something was cut, else {}.
    """
    if not isinstance(title, str):
        return title, {}
    for name, phrase in phrases.items():
        if not isinstance(phrase, str) or not phrase.strip() or phrase.strip().isdigit():  # "3": chapter 3, not a date
            continue
        words = r"\s+".join(map(re.escape, phrase.split()))
        m = re.search(rf"[\s,;:(-]+{_JOIN}(?<!\w){words}\W*$", title, re.I)
        if m and re.search(r"\w", title[: m.start()]):
            cut = title[m.start() :].strip(" ,;:(-")
            return title[: m.start()].rstrip(" ,;:(-"), {
                "title_cut": f'"{cut}" was taken out of the title: it is {_WHAT.get(name, "the " + name)}'
            }
    return title, {}


_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_DAY = re.compile(rf"[\s,;:(-]+{_JOIN}(?<!\w)(?P<day>today|tonight|tomorrow|(?:(?:this|next)\s+)?{_WEEKDAY})\W*$", re.I)


# Words before a day that make it part of the title, not the due day: "every Wednesday", "after Friday".
_NOT_A_DUE_DAY = frozenset("every each after except since past from until till than or and".split())


def cut_day(title: Any, due: str | None, today: dt.date) -> tuple[Any, dict[str, str]]:
    """The title without a trailing day that names the task's due day (YYYY-MM-DD) in words, and the result
    field saying so: "Call the bank tomorrow", due tomorrow, would read "tomorrow" for ever, also once moved."""
    m = _DAY.search(title) if isinstance(title, str) and due else None
    if not m or not re.search(r"\w", title[: m.start()]):
        return title, {}
    before = re.findall(r"[\w']+", title[: m.start()])
    joined = bool(title[m.start() : m.start("day")].strip(" ,;:(-"))  # "on", "for", "by" before the day
    if before[-1].lower() in _NOT_A_DUE_DAY or (not joined and len(before) > 1 and before[-1][0].isupper()):
        return title, {}  # "Bins out every Wednesday", "Call mum after Friday", "Prepare for Black Friday"
    if m["day"][0].isupper() and m["day"].lower() in ("today", "tonight", "tomorrow"):
        return title, {}  # "Watch Today": a name
    try:
        same = resolve(m["day"], today).date.isoformat() == due
    except DateError:
        return title, {}
    if not same:
        return title, {}
    cut = title[m.start() :].strip(" ,;:(-")
    return title[: m.start()].rstrip(" ,;:(-"), {"title_cut": f'"{cut}" was taken out of the title: it is the due date'}
