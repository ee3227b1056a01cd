"""Repeat rules in code: a phrase as an RFC 5545 RRULE, the next and first occurrence, the rule in words.

    parse_repeat("every 2 weeks")  -> "FREQ=WEEKLY;INTERVAL=2"
    next_due(rule, due)            -> the occurrence after `due`

python-dateutil's rrule does the calendar; this module only reads the phrases (English, as
dates.py) and keeps a rule to what a planner task can repeat by (no HOURLY). A stored rule that
another app wrote and iCalendar cannot hold is kept as text elsewhere (ical.py), not here.
"""

from __future__ import annotations

import datetime as dt
import re

from dateutil import rrule

from planner.dates import MAX_YEAR, NUMBER_WORDS, WEEKDAY_WORDS, WEEKDAYS, DateError, number_word

REPEAT_EXAMPLES = (
    "every day, every weekday, every monday, every 2 weeks, every other friday, monthly on the 1st, yearly"
)
_DAY_CODES = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
FREQS = ("DAILY", "WEEKLY", "MONTHLY", "YEARLY")  # what a planner task can repeat by (not HOURLY)


def parse_repeat(text: str) -> str:
    """A repeat phrase as an RRULE ('FREQ=WEEKLY;BYDAY=MO'); raises DateError with the forms understood."""
    raw = re.sub(r"^(?:RRULE:)", "", "".join(text.split()).upper())
    if raw.startswith("FREQ="):
        # An RRULE as stored and exported: its lists keep their commas (BYDAY=MO,TH).
        parts = dict(p.partition("=")[::2] for p in raw.split(";"))
        if parts.get("FREQ") not in FREQS:
            raise DateError(f"{text!r}: repeats can be DAILY, WEEKLY, MONTHLY or YEARLY")
        try:
            rrule.rrulestr(raw, dtstart=dt.datetime(2026, 1, 1))
        except (ValueError, TypeError, OverflowError):
            raise DateError(f"{text!r} is not a valid RRULE") from None
        return raw
    s = " ".join(text.lower().replace(",", " ").split())
    s = re.sub(r"^(?:repeat|repeats|repeating|recurring)\s+", "", s)
    plain = {
        "daily": "FREQ=DAILY",
        "every day": "FREQ=DAILY",
        "weekly": "FREQ=WEEKLY",
        "every week": "FREQ=WEEKLY",
        "monthly": "FREQ=MONTHLY",
        "every month": "FREQ=MONTHLY",
        "yearly": "FREQ=YEARLY",
        "annually": "FREQ=YEARLY",
        "every year": "FREQ=YEARLY",
        "biweekly": "FREQ=WEEKLY;INTERVAL=2",
        "every weekday": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
        "weekdays": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
        "every weekend": "FREQ=WEEKLY;BYDAY=SA,SU",
    }
    if s in plain:
        return plain[s]
    if m := re.fullmatch(rf"every\s+({NUMBER_WORDS})\s+(day|week|month|year)s?", s):
        n = number_word(m[1])
        freq = {"day": "DAILY", "week": "WEEKLY", "month": "MONTHLY", "year": "YEARLY"}[m[2]]
        return f"FREQ={freq}" + (f";INTERVAL={n}" if n > 1 else "")
    if m := re.fullmatch(
        rf"every\s+(?:({NUMBER_WORDS})\s+)?((?:{WEEKDAY_WORDS})s?(?:\s*(?:and|&)?\s*(?:{WEEKDAY_WORDS})s?)*)", s
    ):
        days = [WEEKDAYS[w] for w in re.findall(rf"({WEEKDAY_WORDS})s?", m[2])]
        n = number_word(m[1]) if m[1] else 1
        byday = ",".join(_DAY_CODES[d] for d in sorted(set(days)))
        return "FREQ=WEEKLY" + (f";INTERVAL={n}" if n > 1 else "") + f";BYDAY={byday}"
    if m := re.fullmatch(
        r"(?:monthly|every month)\s+on\s+the\s+(\d{1,2})(?:st|nd|rd|th)|on\s+the\s+(\d{1,2})(?:st|nd|rd|th)\s+of\s+every\s+month",
        s,
    ):
        day = int(m[1] or m[2])
        if not 1 <= day <= 31:
            raise DateError(f"{text!r}: a month has no day {day}")
        # A day a month may lack (29-31) falls on the month's last day instead of skipping the month.
        return f"FREQ=MONTHLY;BYMONTHDAY={day}" if day <= 28 else f"FREQ=MONTHLY;BYMONTHDAY={day},-1;BYSETPOS=1"
    if re.fullmatch(r"(?:monthly|every month)\s+on\s+the\s+last\s+day|on\s+the\s+last\s+day\s+of\s+every\s+month", s):
        return "FREQ=MONTHLY;BYMONTHDAY=-1"
    raise DateError(f"cannot read {text!r} as a repeat; use one of: {REPEAT_EXAMPLES}")


def next_due(rule: str, due: dt.date, today: dt.date | None = None) -> dt.date | None:
    """The first occurrence of a repeat rule after `due`; done late (today after `due`), the first from today on,
    today included when the rule allows it: a weekday standup due Tuesday and done on Wednesday is due again
    Wednesday, not Thursday, and the days missed do not pile up.

    None when the rule has no more dates (COUNT or UNTIL reached, or past MAX_YEAR): the series is finished.
    """
    late = today is not None and today > due
    start = dt.datetime.combine(due, dt.time())
    try:
        r = rrule.rrulestr(rule, dtstart=start)
        nxt = r.after(dt.datetime.combine(today if late else due, dt.time()), inc=late)  # type: ignore[arg-type]
    except (ValueError, TypeError, OverflowError):
        return None
    return nxt.date() if nxt is not None and nxt.year <= MAX_YEAR else None


def first_due(rule: str, today: dt.date) -> dt.date | None:
    """The first date of a repeat that starts today: today itself when the rule allows it ("every week"
    said on a Tuesday is due today, then every Tuesday), else its next date ("every monday")."""
    start = dt.datetime.combine(today, dt.time())
    try:
        first = rrule.rrulestr(rule, dtstart=start).after(start, inc=True)
    except (ValueError, TypeError, OverflowError):
        return None
    return first.date() if first is not None and first.year <= MAX_YEAR else None


def describe_repeat(rule: str) -> str:
    """An RRULE in words, for listings."""
    parts = dict(p.split("=", 1) for p in rule.split(";") if "=" in p)
    n = int(parts.get("INTERVAL", "1"))
    unit = {"DAILY": "day", "WEEKLY": "week", "MONTHLY": "month", "YEARLY": "year"}.get(parts.get("FREQ", ""), "?")
    text = f"every {n} {unit}s" if n > 1 else f"every {unit}"
    if "BYDAY" in parts:
        names = {c: d for c, d in zip(_DAY_CODES, ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"], strict=True)}
        days = parts["BYDAY"].split(",")
        on = "weekdays" if days == _DAY_CODES[:5] else ", ".join(names.get(d, d) for d in days)
        text += f" on {on}"
    if "BYMONTHDAY" in parts:
        day = parts["BYMONTHDAY"].split(",")[0]
        text += " on the last day" if day == "-1" else f" on day {day}"
    return text
