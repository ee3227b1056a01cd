"""Estimates in words, resolved in code like dates: "takes about 2 hours", "~30m", "1h30m" -> minutes.

    minutes("about 2 hours")        -> 120
    minutes("~1h30m")               -> 90
    minutes("half an hour")         -> 30
    minutes("an hour and a half")   -> 90
    minutes("PT1H30M")              -> 90    (ISO 8601, as iCalendar and Taskwarrior write it)
    short(90)                       -> "1h30m"   (the notation `add ... ~1h30m` and the tables use)

The model passes the user's words as `estimate` and this module reads them, so
a small model never converts "an hour and a half" itself. English only, like
dates.py; anything it cannot read is a DurationError that lists the forms it
can. Estimates are whole minutes from 1 minute to 30 days: a planner places
tasks into days, so a longer estimate is a project, not a task.
"""

from __future__ import annotations

import re

MAX_MINUTES = 30 * 24 * 60
EXAMPLES = "30m, 2h, 1h30m, 90 minutes, half an hour, an hour and a half, 2 days"

_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_WORDS |= {"seven": 7, "eight": 8, "nine": 9, "ten": 10, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40}
_UNITS = {
    "m": 1,
    "min": 1,
    "mins": 1,
    "minute": 1,
    "minutes": 1,
    "h": 60,
    "hr": 60,
    "hrs": 60,
    "hour": 60,
    "hours": 60,
    "d": 1440,
    "day": 1440,
    "days": 1440,
}
_NUMBER = r"\d+(?:\.\d+)?|(?<![a-z])(?:" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")\b"
_PART = re.compile(rf"({_NUMBER})\s*({'|'.join(sorted(_UNITS, key=len, reverse=True))})(?![a-z])")
_FILLER = re.compile(
    r"^(?:(?:it\s+)?(?:takes?|taking|needs?|lasts?|for|about|around|roughly|approx|approximately)\b\.?|~|≈)\s*"
)


class DurationError(ValueError):
    """Words that are not an estimate; the message says what would be."""


def _number(word: str) -> float:
    return float(word) if word[0].isdigit() else float(_WORDS[word])


def minutes(text: str) -> int:
    """An estimate in words as whole minutes; raises DurationError."""
    s = " ".join(str(text).lower().replace(",", " ").split())
    while True:  # "it takes about ~2h": every filler word in front
        stripped = _FILLER.sub("", s, count=1).strip()
        if stripped == s:
            break
        s = stripped
    s = s.rstrip(".")
    total: float | None = None
    if s in ("half an hour", "half hour", "a half hour"):
        total = 30
    elif m := re.fullmatch(r"(an?|one|\d+)\s+hours?\s+and\s+a\s+half", s):
        total = (_number(m[1]) + 0.5) * 60
    elif m := re.fullmatch(r"(an?|one|\d+)\s+and\s+a\s+half\s+hours?", s):
        total = (_number(m[1]) + 0.5) * 60
    elif re.fullmatch(r"\d+", s):
        total = float(s)  # a bare number is minutes, as in "~45"
    elif (m := re.fullmatch(r"p(?:(\d+)d)?(?:t(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?)?", s)) and s not in ("p", "pt"):
        total = sum(int(g or 0) * k for g, k in zip(m.groups(), (1440, 60, 1, 1 / 60), strict=True))  # ISO 8601
    elif s:
        parts = list(_PART.finditer(s))
        rest = _PART.sub("", s).replace("and", "").strip()
        if parts and not rest:
            total = sum(_number(p[1]) * _UNITS[p[2]] for p in parts)
    if total is None:
        raise DurationError(f"cannot read {str(text).strip()[:60]!r} as an estimate; use a form like {EXAMPLES}")
    whole = round(total)
    if not 1 <= whole <= MAX_MINUTES:
        raise DurationError(f"an estimate must be between 1 minute and 30 days, not {str(text).strip()[:60]!r}")
    return whole


def short(total: int) -> str:
    """Minutes in the compact notation: 45m, 2h, 1h30m, 2d3h."""
    days, rest = divmod(total, 1440)
    hours, mins = divmod(rest, 60)
    out = (f"{days}d" if days else "") + (f"{hours}h" if hours else "") + (f"{mins}m" if mins else "")
    return out or "0m"


def iso(total: int) -> str:
    """Minutes as an RFC 5545 / ISO 8601 duration (PT1H30M, P1DT2H)."""
    days, rest = divmod(total, 1440)
    hours, mins = divmod(rest, 60)
    time = (f"{hours}H" if hours else "") + (f"{mins}M" if mins else "")
    return "P" + (f"{days}D" if days else "") + (f"T{time}" if time else "") if total else "PT0M"
