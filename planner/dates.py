"""Dates in code, so the model only has to pass on what the user said (repeat rules: repeats.py).

Small models get date arithmetic wrong ("the second Friday of next month"),
so tools take a phrase and this module resolves it against today:

    resolve("friday 3pm", today)   -> When(date(2026, 12, 4), "15:00")
    resolve("next friday", Tuesday) -> AmbiguousDate: readings 2026-12-04, 2026-12-11

A small grammar over python-dateutil (relativedelta for calendar arithmetic,
its parser for written-out dates, rrule for repeats) beat dateparser on our
table of phrases (tests/data/date_phrases.json, measured by bench/dates.py):
dateparser has no "end of month", "the 15th" or "second friday of", and
cannot say a phrase is ambiguous. The trade-off is English only.

Conventions (the phrase table pins them down): a weekday or "the 15th" means
the next one after today; "next <weekday>" is ambiguous when the coming one
is still in this week; "end of week" is Sunday; a time alone means today.
Times are local wall-clock times, stored without a zone, so a repeat at 09:00
stays at 09:00 across daylight-saving changes.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from dateutil import rrule
from dateutil.relativedelta import relativedelta

WEEKDAYS = {
    "monday": 0,
    "mon": 0,
    "tuesday": 1,
    "tue": 1,
    "tues": 1,
    "wednesday": 2,
    "wed": 2,
    "thursday": 3,
    "thu": 3,
    "thur": 3,
    "thurs": 3,
    "friday": 4,
    "fri": 4,
    "saturday": 5,
    "sat": 5,
    "sunday": 6,
    "sun": 6,
}
MONTHS = {
    "january": 1,
    "jan": 1,
    "february": 2,
    "feb": 2,
    "march": 3,
    "mar": 3,
    "april": 4,
    "apr": 4,
    "may": 5,
    "june": 6,
    "jun": 6,
    "july": 7,
    "jul": 7,
    "august": 8,
    "aug": 8,
    "september": 9,
    "sep": 9,
    "sept": 9,
    "october": 10,
    "oct": 10,
    "november": 11,
    "nov": 11,
    "december": 12,
    "dec": 12,
}
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
NUMBERS |= {"eight": 8, "nine": 9, "ten": 10, "other": 2}
ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": -1}
UNITS = {"day": "days", "week": "weeks", "month": "months", "year": "years"}
NAMED_TIMES = {"noon": "12:00", "midday": "12:00", "midnight": "00:00", "morning": "09:00", "evening": "18:00"}

WEEKDAY_WORDS = "|".join(sorted(WEEKDAYS, key=len, reverse=True))
_MON = "|".join(sorted(MONTHS, key=len, reverse=True))
NUMBER_WORDS = r"\d+|" + "|".join(NUMBERS)

EXAMPLES = "tomorrow, friday, next week, in 3 days, the 15th, end of month, dec 24, friday 3pm or YYYY-MM-DD"


class DateError(ValueError):
    """A phrase that is not a date; the message says what would be."""


class AmbiguousDate(DateError):
    """A phrase with more than one reading; `readings` lists them."""

    def __init__(self, phrase: str, readings: list[dt.date]):
        self.readings = readings
        shown = " or ".join(f"{d:%A} {d.isoformat()}" for d in readings)
        super().__init__(f"{phrase!r} could mean {shown}; ask the user which, then pass the date as YYYY-MM-DD")


@dataclass(frozen=True)
class When:
    """A resolved due date, with a time (HH:MM) if the phrase gave one."""

    date: dt.date
    time: str | None = None

    def describe(self, phrase: str) -> str:
        """The echo the model and the user see: what the phrase was read as."""
        at = f" {self.time}" if self.time else ""
        return f"{phrase.strip()!r} -> {self.date:%A} {self.date.isoformat()}{at}"


# An ISO 8601 date, with a time if given: 2026-12-31, 2026-12-31 10:00, 2026-12-31T10:00:00, ...Z, ...+01:00.
# A zone is read only after a "T" (the form programs write): with a space, "10:00-11:00" is a range of times.
ISO = re.compile(
    r"(?<![\w/.:-])(\d{4}-\d{2}-\d{2})"
    r"(?:[tT](\d{2}:\d{2})(?::\d{2}(?:[.,]\d{1,9})?)?(z|Z|[+-]\d{2}(?::?\d{2})?)?"
    r"| (\d{2}:\d{2})(?::\d{2}(?:[.,]\d{1,9})?)?)?(?![\w/.:-])"
)


def plain_iso(text: str) -> str:
    """Text with each ISO date and time in it written as this module reads it: "2026-12-31 10:00", local time.

    Seconds are dropped (a due time is to the minute); a time with a zone ("Z", "+01:00") becomes the
    same moment in local time, as an imported file's does (storage/exchange.py). A reader that looks for
    a span or a range ("10-11am") reads the text after this, so "12-31" inside a date is never a range."""

    def local(m: re.Match[str]) -> str:
        day, clock, zone = m[1], m[2] or m[4], m[3]
        if clock is None:
            return day
        if zone is None:
            return f"{day} {clock}"
        offset = "+00:00" if zone in ("z", "Z") else zone
        try:
            moment = dt.datetime.fromisoformat(f"{day}T{clock}{offset}").astimezone().replace(tzinfo=None)
        except ValueError:  # no such day or time: the readers after this say so
            return f"{day} {clock}"
        return f"{moment.date().isoformat()} {moment:%H:%M}"

    return ISO.sub(local, text)


def number_word(word: str) -> int:
    return int(word) if word.isdigit() else NUMBERS[word]


def _split_time(s: str) -> tuple[str, str | None]:
    """('friday', '15:00') from 'friday at 3pm'; a bare number without am/pm, ':' or 'at' is not a time."""
    for word, hhmm in NAMED_TIMES.items():
        m = re.search(rf"(?:^|\s)(?:at\s+|in the\s+)?{word}$", s)
        if m:
            return s[: m.start()].strip(), hhmm
    m = re.search(r"(?:^|\s)(?:(at|@)\s*)?(\d{1,2})(?::(\d{2}))?\s*(am|pm|h)?$", s)
    if not m or not (m.group(1) or m.group(3) or m.group(4)):
        return s, None
    hour, minute, half = int(m.group(2)), int(m.group(3) or 0), m.group(4)
    if half in ("am", "pm"):
        if not 1 <= hour <= 12:
            raise DateError(f"{hour}{half} is not a time of day")
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or minute > 59:
        raise DateError(f"{m.group(0).strip()!r} is not a time of day")
    return s[: m.start()].strip(), f"{hour:02d}:{minute:02d}"


def time_only(phrase: str) -> bool:
    """Whether a phrase is a time of day and no date ("at 5pm", "noon")."""
    try:
        rest, time = _split_time(" ".join(phrase.lower().split()))
    except DateError:
        return False
    return time is not None and rest in ("", "at")


def _next_weekday(today: dt.date, weekday: int) -> dt.date:
    """The first such weekday after today."""
    return today + dt.timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> dt.date | None:
    """The nth (or last, n=-1) given weekday of a month; None if the month has no such day."""
    # From the 1st forwards for the nth; from the month's last day backwards for the last.
    start = relativedelta(day=31) if n < 0 else relativedelta()
    day = dt.date(year, month, 1) + start + relativedelta(weekday=rrule.weekdays[weekday](n))
    return day if day.month == month else None


def _month_ref(ref: str, today: dt.date) -> tuple[int, int]:
    """(year, month) for 'the month', 'this month', 'next month' or a month name (the next one)."""
    ref = ref.removeprefix("the ").strip()
    if ref in ("month", "this month"):
        return today.year, today.month
    if ref == "next month":
        d = today + relativedelta(months=1)
        return d.year, d.month
    if ref in MONTHS:
        month = MONTHS[ref]
        return (today.year if month >= today.month else today.year + 1), month
    raise DateError(f"{ref!r} is not a month")


def _day_month(day: int, month: int, year: int | None, today: dt.date, phrase: str) -> dt.date:
    """A day of a month; without a year, the next one from today."""
    try:
        d = dt.date(year or today.year, month, day)
        if year is None and d < today:
            d = dt.date(today.year + 1, month, day)
    except ValueError:
        raise DateError(f"{phrase!r} is not a real calendar date") from None
    return d


def _date(s: str, today: dt.date, phrase: str) -> dt.date:
    """The date part of a phrase (already lower-cased, trimmed, without its time)."""
    if s in ("", "today", "tonight", "now"):
        return today
    simple = {"tomorrow": 1, "day after tomorrow": 2, "the day after tomorrow": 2, "yesterday": -1}
    if s in simple:
        return today + dt.timedelta(days=simple[s])
    if m := re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", s):
        try:
            return dt.date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            raise DateError(f"{phrase!r} is not a real calendar date") from None
    if m := re.fullmatch(r"(\d{1,2})[/.](\d{1,2})(?:[/.](\d{2}|\d{4}))?", s):
        a, b = int(m[1]), int(m[2])
        year = (int(m[3]) + (2000 if len(m[3]) == 2 else 0)) if m[3] else None
        readings = []
        for day, month in ((a, b), (b, a)):  # day first (most of the world), then month first
            if 1 <= month <= 12:
                try:
                    readings.append(_day_month(day, month, year, today, phrase))
                except DateError:
                    pass
        readings = sorted(set(readings))
        if len(readings) > 1:
            raise AmbiguousDate(phrase, readings)
        if readings:
            return readings[0]
        raise DateError(f"{phrase!r} is not a real calendar date")
    if m := re.fullmatch(rf"(?:in\s+)?({NUMBER_WORDS})\s+(day|week|month|year)s?(?:\s+from\s+(?:now|today))?", s):
        if s.startswith("in") or "from" in s:
            return today + relativedelta(**{UNITS[m[2]]: number_word(m[1])})
    if m := re.fullmatch(rf"(this\s+|next\s+|coming\s+)?({WEEKDAY_WORDS})", s):
        day = _next_weekday(today, WEEKDAYS[m[2]])
        if (m[1] or "").strip() == "next" and day.isocalendar()[1] == today.isocalendar()[1]:
            raise AmbiguousDate(phrase, [day, day + dt.timedelta(days=7)])
        return day
    if s in ("next week", "beginning of next week", "start of next week"):
        return today + relativedelta(weekday=rrule.MO(+1), days=1)
    if s in ("this weekend", "weekend", "the weekend"):
        return today if today.weekday() == 5 else _next_weekday(today, 5)
    if s in ("next month", "beginning of next month", "start of next month"):
        return today + relativedelta(months=1, day=1)
    if s in ("next year", "beginning of next year", "start of next year"):
        return dt.date(today.year + 1, 1, 1)
    if m := re.fullmatch(r"end of (?:the |this )?(next )?(week|month|year)", s):
        later = 1 if m[1] else 0
        if m[2] == "week":
            return today + relativedelta(weekday=rrule.SU(+1), weeks=later)
        if m[2] == "month":
            return today + relativedelta(months=later, day=31)
        return dt.date(today.year + later, 12, 31)
    if m := re.fullmatch(rf"end of ({_MON})", s):
        year, month = _month_ref(m[1], today)
        return dt.date(year, month, 1) + relativedelta(day=31)
    if m := re.fullmatch(r"(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)(?:\s+of\s+(?:the|this)\s+month)?", s):
        day = int(m[1])
        for ahead in range(0, 3):
            first = today + relativedelta(months=ahead, day=1)
            try:
                d = first.replace(day=day)
            except ValueError:
                continue  # this month has no 31st
            if d > today:
                return d
        raise DateError(f"{phrase!r} is not a day of a month")
    if m := re.fullmatch(rf"(?:the\s+)?({'|'.join(ORDINALS)})\s+({WEEKDAY_WORDS})\s+(?:of|in)\s+(.+)", s):
        year, month = _month_ref(m[3], today)
        d = _nth_weekday(year, month, WEEKDAYS[m[2]], ORDINALS[m[1]])
        if d is None:
            raise DateError(f"{phrase!r}: that month has no such day")
        return d
    if m := re.fullmatch(rf"({_MON})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?", s):
        return _day_month(int(m[2]), MONTHS[m[1]], int(m[3]) if m[3] else None, today, phrase)
    if m := re.fullmatch(rf"(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MON})\.?(?:,?\s+(\d{{4}}))?", s):
        return _day_month(int(m[1]), MONTHS[m[2]], int(m[3]) if m[3] else None, today, phrase)
    if not re.search(r"\b\d{4}\b", s):  # without a year, dateutil would fill in this year's month and day
        raise DateError(f"cannot read {phrase!r} as a date; use a phrase like {EXAMPLES}")
    from dateutil import parser as du_parser  # only here: it is the slowest part of dateutil to import

    try:  # written-out dates with a year in other shapes ("thursday december 24 2026", "2026/12/24")
        parsed = du_parser.parse(s, default=dt.datetime(today.year, today.month, today.day))
    except (ValueError, OverflowError):
        raise DateError(f"cannot read {phrase!r} as a date; use a phrase like {EXAMPLES}") from None
    return parsed.date()


def resolve(phrase: str, today: dt.date) -> When:
    """A date phrase (or YYYY-MM-DD) read against today; raises DateError or AmbiguousDate."""
    s = " ".join(plain_iso(phrase).lower().replace(",", " ").split())
    s = re.sub(r"^(?:on|by|due|before|until)\s+", "", s).rstrip(".!")
    if not s:
        raise DateError(f"the date is empty; use a phrase like {EXAMPLES}")
    rest, time = _split_time(s)
    if m := re.fullmatch(r"(\d{4}-\d{1,2}-\d{1,2})[ t](\d{1,2}):(\d{2})", s):  # ISO date and time
        rest, time = m[1], f"{int(m[2]):02d}:{m[3]}"
    rest = re.sub(r"\s+(?:at|@)$", "", rest)
    try:
        return When(check_year(_date(rest, today, phrase.strip())), time)
    except DateError:
        raise
    except (OverflowError, ValueError):  # arithmetic past year 9999 ("in 10000 years")
        raise DateError(f"{phrase.strip()!r} is out of range; {RANGE}") from None


MIN_YEAR, MAX_YEAR = 1900, 9000  # every format we write (ICS, todo.txt) and rrule can hold these, with room
RANGE = f"use a date between {MIN_YEAR} and {MAX_YEAR}"


def check_year(d: dt.date) -> dt.date:
    """The date, or a DateError when it is outside MIN_YEAR..MAX_YEAR."""
    if not MIN_YEAR <= d.year <= MAX_YEAR:
        raise DateError(f"{d.isoformat()} is out of range; {RANGE}")
    return d


def check_time(value: str) -> str:
    """A due time as HH:MM from '15:00', '3pm' or 'noon'; raises DateError."""
    s = " ".join(value.lower().split())
    if s in NAMED_TIMES:
        return NAMED_TIMES[s]
    rest, time = _split_time(s if re.search(r"[:ahp]|^at\b", s) else s + ":00")
    if time is None or rest:
        raise DateError(f"{value!r} is not a time of day; use HH:MM (24-hour)")
    return time


def dates_in(text: str, today: dt.date, longest: int = 6) -> set[dt.date]:
    """Every date a run of up to `longest` words in the text can mean (all readings of an ambiguous one).

    Used to check a date a model worked out against what the user said. Only
    the longest runs count ("January 5th", not its "5th"); a time alone
    ("at 3pm") or a bare number is not a date.
    """
    words = re.findall(r"[\w/:.-]+", text.lower())
    spans: list[tuple[int, int, set[dt.date]]] = []
    for i in range(len(words)):
        for j in range(i + 1, min(len(words), i + longest) + 1):
            phrase = " ".join(words[i:j]).strip(".")
            if phrase.isdigit() or phrase in NUMBERS or phrase in ("on", "by", "the", "at", "a", "now"):
                continue
            try:
                rest, _ = _split_time(phrase)
                if not rest or rest in ("at", "on"):
                    continue  # a time of day only
                spans.append((i, j, {resolve(phrase, today).date}))
            except AmbiguousDate as e:
                spans.append((i, j, set(e.readings)))
            except DateError:
                continue
    found: set[dt.date] = set()
    for i, j, dates in spans:
        if not any(a <= i and j <= b and (a, b) != (i, j) for a, b, _ in spans):
            found |= dates
    return found


# ---------------------------------------------------------------- reminders

DEFAULT_REMIND_TIME = "09:00"  # the time of a reminder for a day without one ("the day before")
UNIT_MINUTES = {"minute": 1, "min": 1, "hour": 60, "day": 1440, "week": 10080}
_TIME = r"\d{1,2}(?::\d{2})?\s*(?:am|pm|h)?|noon|midnight|morning|evening"
_SOFT_TIMES = {"morning": "09:00", "evening": "18:00"}


def _remind_time(value: str | None) -> str:
    if not value:
        return DEFAULT_REMIND_TIME
    return _SOFT_TIMES.get(value) or check_time(value)


def resolve_remind(phrase: str, today: dt.date, due_date: str | None, due_time: str | None) -> dt.datetime | None:
    """When to remind, from the user's words: before the task ("an hour before", "at 9 the day before",
    "on the day"), or a moment of its own ("friday 8am"). None for "none"; raises DateError.

    A task without a time is taken as due at DEFAULT_REMIND_TIME for "an hour before"."""
    s = " ".join(phrase.lower().replace(",", " ").split()).rstrip(".!")
    s = re.sub(r"^(?:remind(?: me)?|at)\s+(?=\S)", lambda m: "at " if m.group(0).startswith("at") else "", s)
    if s in ("", "none", "no", "never", "off", "no reminder"):
        return None
    due = None
    if due_date:
        due = dt.datetime.combine(
            dt.date.fromisoformat(due_date), dt.time.fromisoformat(due_time or DEFAULT_REMIND_TIME)
        )
    relative = re.fullmatch(
        rf"(\d+|{'|'.join(NUMBERS)})?\s*(minute|min|hour|day|week)s?\s+(?:before|earlier|ahead)(?: it)?", s
    )
    day_before = re.fullmatch(
        rf"(?:at\s+({_TIME})\s+)?(?:on\s+)?the\s+(day|morning|evening|night)\s+before(?:\s+at\s+({_TIME}))?", s
    )
    same_day = re.fullmatch(
        rf"(?:at\s+({_TIME})\s+)?(?:on\s+)?the\s+(?:same\s+)?day(?:\s+at\s+({_TIME}))?|that\s+(morning)", s
    )
    at_due = re.fullmatch(r"(?:at\s+)?(?:the\s+)?due(?:\s+time)?|when\s+(?:it\s+is\s+)?due|on\s+time", s)
    if relative or day_before or same_day or at_due:
        if due is None:
            raise DateError(f"{phrase.strip()!r} needs the task's due date; give one, or a moment like 'friday 8am'")
        if at_due:
            return due
        if relative:
            count = number_word(relative.group(1)) if relative.group(1) else 1
            return due - dt.timedelta(minutes=count * UNIT_MINUTES[relative.group(2)])
        if day_before:
            soft = {"evening": "evening", "night": "evening"}.get(day_before.group(2))
            at = _remind_time(day_before.group(1) or day_before.group(3) or soft)
            return dt.datetime.combine(due.date() - dt.timedelta(days=1), dt.time.fromisoformat(at))
        at = _remind_time(same_day.group(1) or same_day.group(2) or same_day.group(3))
        return dt.datetime.combine(due.date(), dt.time.fromisoformat(at))
    when = resolve(re.sub(r"^at\s+", "", s), today)
    return dt.datetime.combine(when.date, dt.time.fromisoformat(when.time or DEFAULT_REMIND_TIME))
