"""Spans of time in words, resolved in code like dates: an event's start and end, a part of a day, a weekly window.

    span("tomorrow 2-3pm", today)           -> Span(2026-12-02 14:00, 15:00)
    span("friday 10:00 for 90 minutes")     -> Span(2026-12-04 10:00, 11:30)
    span("dec 24 all day")                  -> Span(2026-12-24 00:00, 2026-12-25 00:00, all_day=True)
    part_of_day("tomorrow afternoon", today)-> (2026-12-02 12:00, 17:00)
    weekly("wednesday afternoons")          -> Weekly(weekdays=(2,), 12:00, 17:00)

The model passes the user's words; an event's times, the afternoon a task is
moved into and the windows of a preference ("mornings for deep work", "no
meetings on Fridays") are worked out here, never by its arithmetic. Parts of
a day: morning 08-12, afternoon 12-17, evening 17-21, night 21-24. English
only, like dates.py; what cannot be read is a DateError that says the forms.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from planner.dates import WEEKDAYS, DateError, check_time, plain_iso, resolve
from planner.durations import DurationError, minutes

PARTS = {
    "morning": ("08:00", "12:00"),
    "afternoon": ("12:00", "17:00"),
    "evening": ("17:00", "21:00"),
    "night": ("21:00", "24:00"),
    "lunchtime": ("12:00", "14:00"),
    "day": ("00:00", "24:00"),
}
DEFAULT_EVENT_MINUTES = 60
EXAMPLES = "tomorrow 2-3pm, friday 10:00-11:30, monday 9am for 2 hours, dec 24 all day"
_TIME = r"\d{1,2}(?::\d{2})?\s*(?:am|pm|h)?|noon|midnight"
# A range of times ("2-3pm", "10:00 to 11:30"), never a piece of a date ("12-31" in 2026-12-31, "12/24").
_RANGE = re.compile(rf"(?:from\s+)?(?<![\w/.:-])({_TIME})\s*(?:-|to|until|till)\s*({_TIME})(?![\w/.:-])")


class SpanError(DateError):
    """Words that are not a span of time; the message says what would be."""


@dataclass(frozen=True)
class Span:
    """A stretch of local time: an event's, or a window to look for time in."""

    start: dt.datetime
    end: dt.datetime
    all_day: bool = False
    guessed: str = ""  # what was assumed ("an hour, as no end was given")


@dataclass(frozen=True)
class Weekly:
    """A window that comes back every week: the weekdays (0 Monday; all when empty) and the hours."""

    weekdays: tuple[int, ...]
    start: dt.time
    end: dt.time


def _clock(text: str, half: str | None = None) -> dt.time:
    """A time of day; `half` (am/pm) applies to a bare hour ("2" in "2-3pm")."""
    t = text.strip()
    if half and re.fullmatch(r"\d{1,2}(?::\d{2})?", t):
        t += half
    if t in ("24:00", "midnight") and half is None:
        return dt.time(0, 0)
    try:
        return dt.time.fromisoformat(check_time(t))
    except DateError:
        raise SpanError(f"{text.strip()!r} is not a time of day") from None


def _day(words: str, today: dt.date) -> dt.date:
    if not words.strip():
        return today
    return resolve(words, today).date


def span(phrase: str, today: dt.date) -> Span:
    """An event's start and end from the user's words; raises SpanError (or AmbiguousDate)."""
    s = " ".join(plain_iso(phrase).lower().replace("–", "-").replace("—", "-").split()).strip(" .")
    if not s:
        raise SpanError(f"the time is empty; write e.g. {EXAMPLES}")
    if m := re.fullmatch(r"(.*?)\s*all[- ]day", s):
        day = _day(m[1], today)
        return Span(
            dt.datetime.combine(day, dt.time()),
            dt.datetime.combine(day + dt.timedelta(days=1), dt.time()),
            all_day=True,
        )
    rng = _RANGE.search(s)
    if rng:
        day = _day((s[: rng.start()] + " " + s[rng.end() :]).replace(" at ", " "), today)
        half = re.search(r"(am|pm)\s*$", rng[2])
        first = _clock(rng[1], half[1] if half and not re.search(r"am|pm", rng[1]) else None)
        last = _clock(rng[2])
        start, end = dt.datetime.combine(day, first), dt.datetime.combine(day, last)
        if end <= start:
            end += dt.timedelta(days=1)  # "10pm-1am"
        return Span(start, end)
    length = re.search(r"\bfor\s+(.+)$", s)
    rest = s[: length.start()].strip() if length else s
    try:
        when = resolve(rest, today)
    except DateError:
        raise SpanError(f"cannot read {phrase.strip()!r} as a time; use a phrase like {EXAMPLES}") from None
    if when.time is None:
        if length:
            raise SpanError(f"{phrase.strip()!r} has a length but no start; say when it starts (9am)")
        day = when.date
        return Span(
            dt.datetime.combine(day, dt.time()),
            dt.datetime.combine(day + dt.timedelta(days=1), dt.time()),
            all_day=True,
        )
    start = dt.datetime.combine(when.date, dt.time.fromisoformat(when.time))
    if length:
        try:
            n = minutes(length[1])
        except DurationError as e:
            raise SpanError(str(e)) from None
        return Span(start, start + dt.timedelta(minutes=n))
    return Span(
        start,
        start + dt.timedelta(minutes=DEFAULT_EVENT_MINUTES),
        guessed=f"an hour from {start:%H:%M}, as no end was given",
    )


def part_of_day(phrase: str, today: dt.date) -> Span:
    """A window from the user's words: "the afternoon", "tomorrow morning", "friday 2-4pm", "after 3pm"."""
    s = " ".join(plain_iso(phrase).lower().split()).strip(" .")
    s = re.sub(r"\b(the|this|in the|during the)\b", " ", s)
    s = " ".join(s.split())
    if re.search(r"all[- ]day$", s):  # a whole day, not its part named "day"
        return span(s, today)
    if m := re.fullmatch(rf"(after|before)\s+(.+?)\s+(?:at\s+)?({_TIME})", s):  # "after 2026-12-31 14:00"
        s = f"{m[2]} {m[1]} {m[3]}"
    for part, (a, b) in PARTS.items():
        if m := re.fullmatch(rf"(.*?)\s*{part}s?", s):
            day = _day(m[1].replace("tonight", "today"), today)
            end = dt.datetime.combine(day, dt.time()) + dt.timedelta(hours=int(b[:2]), minutes=int(b[3:]))
            return Span(dt.datetime.combine(day, dt.time.fromisoformat(a)), end)
    if m := re.fullmatch(rf"(.*?)\s*(after|before)\s+({_TIME})", s):
        day = _day(m[1], today)
        at = dt.datetime.combine(day, _clock(m[3]))
        if m[2] == "after":
            return Span(at, dt.datetime.combine(day + dt.timedelta(days=1), dt.time()))
        return Span(dt.datetime.combine(day, dt.time()), at)
    return span(phrase, today)


def weekly(phrase: str) -> Weekly:
    """A weekly window: "wednesday afternoons", "mornings", "fridays", "weekday mornings", "weekends 10-12"."""
    s = " ".join(phrase.lower().replace("–", "-").split()).strip(" .")
    s = re.sub(r"\b(on|every|the|in|during|of)\b", " ", s)
    s = " ".join(s.split())
    days: list[int] = []
    if re.search(r"\bweekdays?\b|\bworkdays?\b", s):
        days, s = [0, 1, 2, 3, 4], re.sub(r"\b(weekdays?|workdays?)\b", " ", s)
    if re.search(r"\bweekends?\b", s):
        days, s = days + [5, 6], re.sub(r"\bweekends?\b", " ", s)
    names = "|".join(sorted(WEEKDAYS, key=len, reverse=True))
    for m in re.finditer(rf"\b({names})s?\b", s):
        days.append(WEEKDAYS[m[1]])
    s = re.sub(rf"\b({names})s?\b|\band\b|,", " ", s).strip()
    start, end = dt.time(0), dt.time(23, 59)
    if s:
        part = next((p for p in PARTS if re.fullmatch(rf"{p}s?", s)), None)
        if part:
            a, b = PARTS[part]
            start, end = dt.time.fromisoformat(a), dt.time(23, 59) if b == "24:00" else dt.time.fromisoformat(b)
        elif m := re.fullmatch(rf"({_TIME})\s*(?:-|to)\s*({_TIME})", s):
            half = re.search(r"(am|pm)\s*$", m[2])
            start, end = _clock(m[1], half[1] if half and not re.search(r"am|pm", m[1]) else None), _clock(m[2])
        else:
            raise SpanError(
                f"cannot read {phrase.strip()!r} as a weekly time; write e.g. wednesday afternoons, "
                "weekday mornings, fridays, weekends 10-12"
            )
    if not days and s == "" and start == dt.time(0):
        raise SpanError(f"cannot read {phrase.strip()!r} as a weekly time; name the days or the part of the day")
    return Weekly(tuple(sorted(set(days))), start, end)
