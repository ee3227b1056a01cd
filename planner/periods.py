"""Periods in words, resolved in code into ranges of days, for memory: what a question asks about
("last May", "in 2023", "two weeks ago", "before the move", "the first time") and what day a
statement is about ("I went to Lisbon last week" is about the week before it was said).

    in_question("who did I meet last may?", date(2026, 12, 1))
        -> TimeQuestion(period=Period(2026-05-01, 2026-05-31))
    in_question("what was I going to do after the move?", today)
        -> TimeQuestion(anchor="the move", side="after")      # the memory finds the move's day
    in_question("when did I last see the dentist?", today) -> TimeQuestion(order="last")
    happened("I went to Lisbon last week", date(2026, 3, 12)) -> Period(2026-03-02, 2026-03-08)

dates.py reads due dates, which lie ahead: "friday" is the coming one. A question put to memory
looks back, so here a bare "friday" or "may" is the latest one before today, unless the words
say the future ("will", "going to", "next"). A statement with no tense and no direction word
("I have Wednesdays free") names no day: a habit is not an event. English only, like dates.py;
holidays other than Christmas and relative phrases beyond a year ("in the nineties") are left out.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from dateutil.relativedelta import relativedelta

from planner.dates import MONTHS, NUMBERS, WEEKDAYS

EARLIEST, LATEST = dt.date(1900, 1, 1), dt.date(9000, 12, 31)

_MONTH_NAMES = {name: n for name, n in MONTHS.items() if len(name) > 3 or name == "may"}
_DAY_NAMES = {name: n for name, n in WEEKDAYS.items() if len(name) > 4}
_MON = "|".join(sorted(_MONTH_NAMES, key=len, reverse=True))
# Beside a day number or a year, a short name is a month too ("5 Jan 2024", "Dec. 31, 2023"); alone, "mar"
# and "jun" are left alone.
_MON_ANY = "|".join(sorted(MONTHS, key=len, reverse=True))
_MON_DATED = rf"(?:{_MON_ANY})\.?"
# The words before a month's name that put it in time: "since Jan 5", "in June" (not "Jan 5 euros", not June
# the person).
MONTH_LEAD = r"\b(?:in|of|on|since|before|after|until|till|during|by|from|last|this|next|early|mid|late)\s+$"
_WD = "|".join(sorted(_DAY_NAMES, key=len, reverse=True))
_N = r"\d{1,3}|" + "|".join(sorted(NUMBERS | {"few": 3, "couple": 2, "couple of": 2}, key=len, reverse=True))
_UNIT = r"(day|week|month|year)s?"
SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11), "winter": (12, 2)}

# Words that put a statement (or a question) in the future or the past, when the period itself does not.
FUTURE = re.compile(
    r"\b(will|shall|going to|gonna|plan(?:ning)? to|want to|hope to|intend to|next|tomorrow|upcoming)\b|'ll\b"
)
PAST = re.compile(r"\b(was|were|went|had|did|saw|met|got|came|left|took|made|ago|last|yesterday|\w{3,}ed)\b")
# "every monday", "on mondays", "each may": a habit, not a day.
HABIT = re.compile(rf"\b(every|each)\s+(?:other\s+)?(?:{_WD}|{_MON})|\b(?:{_WD})s\b")

FIRST = re.compile(
    r"\b(first time|for the first time|first ever|at first|initially|originally|earliest|used to|previously|formerly)\b"
)
LAST = re.compile(
    r"\b(last time|most recent(?:ly)?|latest|lately|recently|nowadays|these days|currently|at the moment|anymore|any more|still|now)\b"
    rf"|\blast\s+(?!(?:{_N})\b|{_UNIT}\b|weekend|night|time|{_WD}|{_MON}|spring|summer|autumn|fall|winter|christmas)[a-z]+"
    r"|\blast\s*\?"
)


@dataclass(frozen=True)
class Period:
    """A range of days, both ends included."""

    start: dt.date
    end: dt.date

    def overlaps(self, start: dt.date, end: dt.date) -> bool:
        """Whether the days start..end share a day with this period."""
        return start <= self.end and end >= self.start

    def describe(self) -> str:
        """The period as the model reads it: one day, or 'from .. to ..'."""
        if self.start == self.end:
            return self.start.isoformat()
        if self.start == EARLIEST:
            return f"before {(self.end + dt.timedelta(days=1)).isoformat()}"
        return f"{self.start.isoformat()} to {self.end.isoformat()}"


@dataclass(frozen=True)
class TimeQuestion:
    """What a question says about time: the days it asks about, the first or last match, or an event it is
    relative to ("before the move": anchor "the move", side "before"), whose day only memory can give."""

    period: Period | None = None
    order: str | None = None  # "first" or "last"
    anchor: str | None = None
    side: str | None = None  # "before" or "after" the anchor (or the period's ends)

    def __bool__(self) -> bool:
        return bool(self.period or self.order or self.anchor)


def _n(word: str) -> int:
    word = word.removesuffix(" of")
    return int(word) if word.isdigit() else {"few": 3, "couple": 2}.get(word) or NUMBERS[word]


def _month(year: int, month: int) -> Period:
    first = dt.date(year, month, 1)
    return Period(first, first + relativedelta(day=31))


def _week(day: dt.date) -> Period:
    monday = day - dt.timedelta(days=day.weekday())
    return Period(monday, monday + dt.timedelta(days=6))


def _around(day: dt.date, unit: str) -> Period:
    # "two weeks ago" is a point people place loosely: a margin that grows with the unit.
    margin = {"day": 0, "week": 3, "month": 10, "year": 45}[unit]
    return Period(day - dt.timedelta(days=margin), day + dt.timedelta(days=margin))


def _shift(ref: dt.date, unit: str, n: int) -> dt.date:
    return ref + relativedelta(**{unit + "s": n})


def _named_month(month: int, which: str, year: str | None, ref: dt.date, ahead: bool) -> Period:
    if year:
        return _month(int(year), month)
    if which == "last":  # the latest such month that is over (or this one, for "last may" said in june)
        y = ref.year if month < ref.month else ref.year - 1
    elif which == "next":
        y = ref.year if month > ref.month else ref.year + 1
    elif which == "this":
        y = ref.year
    else:  # a bare month: the nearest one in the direction the words point
        y = (
            (ref.year if month >= ref.month else ref.year + 1)
            if ahead
            else (ref.year if month <= ref.month else ref.year - 1)
        )
    return _month(y, month)


def _season(name: str, which: str, year: str | None, ref: dt.date, ahead: bool) -> Period:
    first, last = SEASONS[name]

    def span(y: int) -> Period:  # winter of Y: December Y to February Y+1
        end_year = y + 1 if first > last else y
        return Period(dt.date(y, first, 1), dt.date(end_year, last, 1) + relativedelta(day=31))

    if year:
        return span(int(year))
    this = span(ref.year if ref.month >= first or first < last else ref.year - 1)
    if which == "last" or (not which and not ahead):
        return this if this.end < ref else span(this.start.year - 1)
    if which == "next" or ahead:
        return this if this.start > ref else span(this.start.year + 1)
    return this


def _weekday(day: int, which: str, ref: dt.date, ahead: bool) -> dt.date:
    """The coming such weekday after ref ("next", or ahead), else the latest one before it."""
    if which == "next" or (ahead and which != "last"):
        return ref + dt.timedelta(days=(day - ref.weekday() - 1) % 7 + 1)
    return ref - dt.timedelta(days=(ref.weekday() - day - 1) % 7 + 1)


# (pattern, reader): each reader gets the match, the reference day and whether the words point ahead,
# and gives a Period. Tried in order at each position; the longest match in the text wins.
_PATTERNS: list[tuple[re.Pattern[str], object]] = []


def _pattern(regex: str):
    def register(fn):
        _PATTERNS.append((re.compile(regex), fn))
        return fn

    return register


@_pattern(r"\b(\d{4})-(\d{2})-(\d{2})\b")
def _iso(m: re.Match[str], ref: dt.date, ahead: bool) -> Period:
    d = dt.date(int(m[1]), int(m[2]), int(m[3]))
    return Period(d, d)


@_pattern(r"\bthe day before yesterday\b|\bday before yesterday\b")
def _day_before_yesterday(m: re.Match[str], ref: dt.date, ahead: bool) -> Period:
    return Period(ref - dt.timedelta(days=2), ref - dt.timedelta(days=2))


@_pattern(r"\b(yesterday|last night|today|tonight|this (?:morning|afternoon|evening)|tomorrow)\b")
def _near_day(m: re.Match[str], ref: dt.date, ahead: bool) -> Period:
    d = ref + dt.timedelta(days={"yesterday": -1, "last night": -1, "tomorrow": 1}.get(m[1], 0))
    return Period(d, d)


@_pattern(rf"\b(?:a\s+)?({_N})\s+{_UNIT}\s+ago\b|\b(a|an)\s+{_UNIT}\s+ago\b")
def _ago(m: re.Match[str], ref: dt.date, ahead: bool) -> Period:
    n, unit = (_n(m[1]), m[2]) if m[1] else (1, m[4])
    return _around(_shift(ref, unit, -n), unit)


@_pattern(r"\bthe\s+(week|month|year)\s+before\s+last\b")
def _before_last(m: re.Match[str], ref: dt.date, ahead: bool) -> Period:
    return _calendar(m[1], _shift(ref, m[1], -2))


@_pattern(rf"\bin\s+({_N})\s+{_UNIT}\b|\b({_N})\s+{_UNIT}\s+from\s+(?:now|today)\b")
def _from_now(m: re.Match[str], ref: dt.date, ahead: bool) -> Period:
    n, unit = (_n(m[1]), m[2]) if m[1] else (_n(m[3]), m[4])
    return _around(_shift(ref, unit, n), unit)


@_pattern(rf"\b(?:the\s+)?(?:last|past|previous)\s+(?:({_N})\s+)?{_UNIT}(?!\s+before)")
def _last_n(m: re.Match[str], ref: dt.date, ahead: bool) -> Period:
    # "last week" is the calendar week before this one; "the last two weeks" the days up to today.
    if m[1] is None and not m[0].startswith(("the", "past")):
        return _calendar(m[2], _shift(ref, m[2], -1))
    return Period(_shift(ref, m[2], -_n(m[1] or "1")), ref)


@_pattern(r"\b(this|next|coming)\s+(week|month|year)\b")
def _this_next(m: re.Match[str], ref: dt.date, ahead: bool) -> Period:
    return _calendar(m[2], ref if m[1] == "this" else _shift(ref, m[2], 1))


@_pattern(r"\b(last|this|next)?\s*weekend\b")
def _weekend(m: re.Match[str], ref: dt.date, ahead: bool) -> Period:
    this = ref + dt.timedelta(days=5 - ref.weekday())  # the Saturday of ref's week
    which = m[1] or ("next" if ahead else "last")
    if which == "last":
        saturday = this if this + dt.timedelta(days=1) < ref else this - dt.timedelta(days=7)
    elif which == "next":
        saturday = this if this > ref else this + dt.timedelta(days=7)
    else:
        saturday = this
    return Period(saturday, saturday + dt.timedelta(days=1))


@_pattern(rf"\b(?:(early|mid|late)\s+)?(?:(last|this|next)\s+)?({_MON})\b(?:\s+(?:of\s+)?((?:19|20)\d\d))?")
def _month_name(m: re.Match[str], ref: dt.date, ahead: bool) -> Period | None:
    if (
        m[3] == "may"
        and not (m[1] or m[2] or m[4])
        and not re.search(r"\b(in|of|since|before|after|until|during|by)\s+$", m.string[: m.start()])
    ):
        return None  # "may" the verb
    p = _named_month(_MONTH_NAMES[m[3]], m[2] or "", m[4], ref, ahead)
    part = {"early": (1, 10), "mid": (11, 20), "late": (21, 31)}.get(m[1] or "")
    if part:
        return Period(p.start.replace(day=part[0]), min(p.end, p.start.replace(day=min(part[1], p.end.day))))
    return p


@_pattern(rf"\b({_MON_DATED})\s+(?:of\s+)?((?:19|20)\d\d)\b")
def _short_month_year(m: re.Match[str], ref: dt.date, ahead: bool) -> Period:
    return _month(int(m[2]), MONTHS[m[1].rstrip(".")])


@_pattern(
    rf"\b({_MON_DATED})\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+((?:19|20)\d\d))?"
    rf"|\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MON_DATED})(?![\w'])(?:,?\s+((?:19|20)\d\d))?"
)
def _month_day(m: re.Match[str], ref: dt.date, ahead: bool) -> Period | None:
    month, day, year = (m[1], m[2], m[3]) if m[1] else (m[5], m[4], m[6])
    if m[1] and month not in _MONTH_NAMES and not (year or month.endswith(".") or re.search(r"\d(st|nd|rd|th)", m[0])):
        # "Jan 20 euros", "did I see Jun 5 times?": a short name before a bare number is not sure to be a
        # month; with a year, a dot or "20th" it is, and after "on", "by", "since"... too.
        if not re.search(MONTH_LEAD, m.string[: m.start()]):
            return None
    base = _named_month(MONTHS[month.rstrip(".")], "", year, ref, ahead)
    try:
        d = base.start.replace(day=int(day))
    except ValueError:
        return None
    if not year and not ahead and d > ref:
        d = d.replace(year=d.year - 1)
    return Period(d, d)


@_pattern(r"\b(?:(last|this|next)\s+)?(spring|summer|autumn|fall|winter)\b(?:\s+(?:of\s+)?((?:19|20)\d\d))?")
def _season_name(m: re.Match[str], ref: dt.date, ahead: bool) -> Period:
    return _season(m[2], m[1] or "", m[3], ref, ahead)


@_pattern(r"\b(?:(last|this|next)\s+)?christmas\b")
def _christmas(m: re.Match[str], ref: dt.date, ahead: bool) -> Period:
    y = ref.year
    if m[1] == "next" or (ahead and not m[1]):
        y = y if ref < dt.date(y, 12, 24) else y + 1
    elif m[1] != "this":
        y = y if ref > dt.date(y, 12, 26) else y - 1
    return Period(dt.date(y, 12, 24), dt.date(y, 12, 26))


@_pattern(rf"\b(?:(last|this|next|on)\s+)?({_WD})\b")
def _day_name(m: re.Match[str], ref: dt.date, ahead: bool) -> Period | None:
    if not m[1] and re.search(r"\b(a|an|any|one|some)\s+$", m.string[: m.start()]):
        return None  # "a Sunday morning tradition", "any monday": no day in particular
    d = _weekday(_DAY_NAMES[m[2]], m[1] if m[1] in ("last", "next") else "", ref, ahead)
    return Period(d, d)


@_pattern(r"\b(?:in|during|of|since|before|after|until|by)\s+((?:19|20)\d\d)\b|\b((?:19|20)\d\d)\b")
def _year(m: re.Match[str], ref: dt.date, ahead: bool) -> Period:
    y = int(m[1] or m[2])
    return Period(dt.date(y, 1, 1), dt.date(y, 12, 31))


def _calendar(unit: str, day: dt.date) -> Period:
    if unit == "week":
        return _week(day)
    if unit == "month":
        return _month(day.year, day.month)
    if unit == "year":
        return Period(dt.date(day.year, 1, 1), dt.date(day.year, 12, 31))
    return Period(day, day)


def _clean(text: str) -> str:
    return " ".join(text.lower().replace("’", "'").split())


def _find(s: str, ref: dt.date, ahead: bool) -> tuple[Period, re.Match[str]] | None:
    """The longest period phrase in the text (the first of equal ones), read against ref."""
    found: list[tuple[int, int, Period, re.Match[str]]] = []
    for regex, read in _PATTERNS:
        for m in regex.finditer(s):
            try:
                p = read(m, ref, ahead)  # type: ignore[operator]
            except (ValueError, OverflowError):  # "february 30", "in 900 years"
                p = None
            if p is not None and EARLIEST <= p.start <= p.end <= LATEST:
                found.append((m.start(), -(m.end() - m.start()), p, m))
    if not found:
        return None
    # Longest first, then leftmost: "last week" over its "week", "may 3" over "may".
    _, _, p, m = min(found, key=lambda f: (f[1], f[0]))
    return p, m


def happened(text: str, said_on: dt.date) -> Period | None:
    """The days a statement said on said_on is about, when its words name them; None for a habit or no date."""
    s = _clean(text)
    if HABIT.search(s):
        return None
    ahead = bool(FUTURE.search(s))
    hit = _find(s, said_on, ahead)
    if hit is None:
        return None
    period, m = hit
    directed = re.search(
        r"\b(ago|last|next|this|yesterday|today|tonight|tomorrow|past|coming|from now|in \w+ \w+)\b|\d", m[0]
    )
    if not directed and not ahead and not PAST.search(s):
        return None  # "i have wednesday afternoons free": no tense, no day
    return period


def _order(s: str) -> str | None:
    return "first" if FIRST.search(s) else "last" if LAST.search(s) else None


def in_question(text: str, today: dt.date) -> TimeQuestion:
    """What a question to memory says about time, read against today (looking back unless it says ahead)."""
    s = _clean(text)
    ahead = bool(FUTURE.search(s)) and not PAST.search(s)
    hit = _find(s, today, ahead)
    if hit:
        period, m = hit
        side = re.search(
            rf"(?:\b({_NEARLY})\s+)?\b(before|after|since|until|till|prior to)\s+(?:the\s+)?$", s[: m.start()]
        )
        if side:
            period = _beside(period, side[2], today, _NEAR_DAYS.get(side[1] or "", 7 if side[1] else 0))
        # The order is read without the period's words: "last may" names a month, not the latest match.
        return TimeQuestion(period=period, order=_order(s[: m.start()] + " " + s[m.end() :]))
    order = _order(s)
    relation = re.search(r"\b(before|after|since|until|till|prior to)\s+", s)
    if relation:
        words = re.split(r"[?.!,;]| and | or | when | did | was ", s[relation.end() :])[0].split()[:5]
        anchor = " ".join(words).strip()
        if anchor and anchor not in ("that", "then", "it", "this"):
            side = "before" if relation[1] in ("before", "prior to", "until", "till") else "after"
            return TimeQuestion(order=order, anchor=anchor, side=side)
    return TimeQuestion(order=order)


# "shortly before 7 Jan": the days just before, not every day before. How many days each qualifier means.
_NEAR_DAYS = {"the day": 1, "a day": 1, "the week": 7, "a week": 7, "a few days": 3, "a couple of days": 2}
_NEARLY = "|".join(["shortly", "just", "right", "soon", "not long", *_NEAR_DAYS])


def _beside(period: Period, word: str, today: dt.date, near: int = 0) -> Period:
    """The days before, until, since or after a period; with `near`, only that many days before or after."""
    day = dt.timedelta(days=1)
    if near and word in ("before", "prior to"):
        return Period(period.start - near * day, period.start - day)
    if near and word == "after":
        return Period(period.end + day, period.end + near * day)
    if word in ("before", "prior to"):
        return Period(EARLIEST, period.start - day)
    if word in ("until", "till"):
        return Period(EARLIEST, period.end)
    if word == "since":
        return Period(period.start, max(today, period.start))
    return Period(period.end + day, max(today, period.end + day))


def around(event: Period, side: str, today: dt.date) -> Period:
    """The days before or after an event (an anchor whose day memory found), up to today."""
    if side == "before":
        return Period(EARLIEST, event.start - dt.timedelta(days=1))
    return Period(event.end + dt.timedelta(days=1), max(today, event.end + dt.timedelta(days=1)))
