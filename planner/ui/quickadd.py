"""The shell's notation, read in code (no model): quick add, edit and the filters of `tasks`.

    add call the dentist friday 3pm +health !high ~30m #personal every 6 months start:monday
        title     what is left: "call the dentist"
        a date    the longest run of words that is a date (dates.py): "friday 3pm"; due:PHRASE to be explicit
        +tag      a tag (a letter after +: "+1 555 ..." stays in the title)
        #list     the list (a letter after #: "C# meetup", "#1" stay)
        !high     priority: !high !medium !low (!h !m !l); "!important" stays
        ~30m      an estimate (~2h, ~1h30m: durations.py); "~approx" stays
        every ..  a repeat (the longest "every ..." that is one: repeats.parse_repeat)
        start:PHRASE, remind:PHRASE   not before; when to remind
        list:NAME tag:NAME pri:high est:30m due:PHRASE   the same, for shells where # starts a comment
                  (bash) and ! recalls history: quote those words, or write them this way
        \\word     a word kept as it is, even if it looks like any of the above

A single word that is a date only by accident stays in the title: a bare
number or year, "2nd", "morning", "sun"/"sat"/"wed"..., unless a word like
"on", "by", "due", "next" or "this" goes with it ("on sat"). The phrases go to
the tool as written, and its result says what each became, so the user sees
every guess.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from planner.dates import AmbiguousDate, DateError, resolve, resolve_remind, time_only
from planner.durations import DurationError, minutes
from planner.repeats import parse_repeat

PRIORITY = {"high": "high", "h": "high", "medium": "medium", "med": "medium", "m": "medium", "low": "low", "l": "low"}
KEYS = ("due", "start", "remind", "rec", "list", "project", "pri", "priority", "est", "tag")
LONE = re.compile(
    r"\d+|\d+(st|nd|rd|th)|morning|evening|noon|midnight|now|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun",
    re.I,
)  # alone, these are more often part of a title than a date
MAX_DATE_WORDS = 6
FREQUENCIES = ("daily", "weekly", "monthly", "yearly", "annually", "biweekly")  # a repeat without "every"


class NotationError(ValueError):
    """Words that cannot be read; the message says which and how to write them."""


@dataclass
class Reading:
    """What a line of the notation says: tool arguments (the tool says what each phrase became) and the title."""

    args: dict[str, Any] = field(default_factory=dict)  # the tool's arguments, the phrases as written
    title: str = ""
    notes: list[str] = field(default_factory=list)  # words that looked like notation and stayed in the title


def _is_date(words: list[str], today: dt.date) -> Any:
    phrase = " ".join(words)
    if len(words) == 1 and LONE.fullmatch(phrase):
        return None
    try:
        return resolve(phrase, today)
    except AmbiguousDate as e:
        shown = " or ".join(f"{d:%A} {d.isoformat()}" for d in e.readings)
        raise NotationError(f"{phrase!r} could mean {shown}; write the date, e.g. due:{e.readings[0]}") from None
    except DateError:
        return None


def _longest(words: list[str], start: int, ok: Any, most: int = MAX_DATE_WORDS) -> tuple[int, Any]:
    """The end of the longest run from `start` that `ok` accepts, and what it gave (end == start: none)."""
    best, got = start, None
    for end in range(start + 1, min(len(words), start + most) + 1):
        value = ok(words[start:end])
        if value is not None:
            best, got = end, value
    return best, got


def read(words: list[str], today: dt.date, free_date: bool = True) -> Reading:
    """Read a line of the notation (the words of `add` or `edit`); raises NotationError."""
    tokens = [w for word in words for w in word.split()]
    out = Reading()
    keep: list[str] = []
    i = 0
    due_given = False
    while i < len(tokens):
        w = tokens[i]
        low = w.lower()
        if w.startswith("\\") and len(w) > 1:
            keep.append("\\" + w[1:])  # escaped: unescaped when the title is made
        elif re.fullmatch(r"\+[^\W\d_][\w-]*", w):
            out.args.setdefault("tags", []).append(w[1:])
        elif re.fullmatch(r"#[^\W\d_][\w-]*", w):
            out.args["list"] = w[1:]
        elif low.startswith("!") and low[1:] in PRIORITY:
            out.args["priority"] = PRIORITY[low[1:]]
        elif re.fullmatch(r"~\S+", w) and _estimate(w[1:]) is not None:
            out.args["estimate"] = w  # "~30m": the tool reads the ~ too, and says what it read
        elif low == "every" or low in FREQUENCIES:
            end, rule = _longest(tokens, i, _repeat, most=6)
            # "every ..." is a repeat whenever a rule follows; "monthly" only with the rest of a rule
            # ("rent monthly on the 1st"): alone it is as often a word of the title ("the weekly report").
            if rule is not None and (low == "every" or end - i > 1):
                out.args["repeat"] = " ".join(tokens[i:end])
                i = end
                continue
            keep.append(w)
            said = "a repeat is written e.g. every monday" if low == "every" else f"for a repeat write {_every(low)}"
            out.notes.append(f"{w!r} stays in the title; {said}")
        elif ":" in w and low.split(":", 1)[0] in KEYS and w.split(":", 1)[1]:
            key, first = w.split(":", 1)
            i = _keyed(key.lower(), [first, *tokens[i + 1 :]], out, today) + i
            due_given |= key.lower() == "due"
            continue
        else:
            keep.append(w)
        i += 1
    if free_date and not due_given:
        keep = _free_date(keep, out, today)
    out.title = " ".join(w[1:] if w.startswith("\\") else w for w in keep).strip()
    return out


def _every(frequency: str) -> str:
    """The "every ..." form of a frequency word, which the notation reads alone."""
    unit = {"daily": "day", "weekly": "week", "monthly": "month", "yearly": "year", "annually": "year"}
    return f"every {unit[frequency]}" if frequency in unit else "every 2 weeks"


def _estimate(text: str) -> int | None:
    try:
        return minutes(text)
    except DurationError:
        return None


def _repeat(run: list[str]) -> str | None:
    try:
        return parse_repeat(" ".join(run))
    except DateError:
        return None


def _keyed(key: str, rest: list[str], out: Reading, today: dt.date) -> int:
    """Read key:PHRASE, the phrase as long as it stays one; returns how many tokens it took."""
    if key in ("list", "project"):  # list:work: what a shell that reads #work as a comment can say
        out.args["list"] = rest[0]
        return 1
    if key == "tag":
        out.args.setdefault("tags", []).append(rest[0])
        return 1
    if key in ("pri", "priority"):  # pri:high, for shells where !high is history expansion
        if rest[0].lower() not in PRIORITY:
            raise NotationError(f"cannot read {key}:{rest[0]!r}; write pri:high, pri:medium or pri:low")
        out.args["priority"] = PRIORITY[rest[0].lower()]
        return 1
    if key == "est":
        if _estimate(rest[0]) is None:
            raise NotationError(f"cannot read est:{rest[0]!r} as an estimate; write e.g. est:30m or est:1h30m")
        out.args["estimate"] = rest[0]
        return 1
    if key == "rec":
        words = [_spaced(w) for w in rest]  # rec:every-2-weeks, one word for the shell
        end, rule = _longest(words, 0, _repeat)
        if rule is not None:
            out.args["repeat"] = " ".join(words[:end])
            return end
        from planner.storage.todotxt import from_rec

        try:  # todo.txt's short form: rec:2w, rec:+1m, rec:1b (weekdays)
            out.args["repeat"] = parse_repeat(from_rec(rest[0]))
        except (ValueError, DateError):
            raise NotationError(
                f"cannot read rec:{rest[0]!r} as a repeat; write e.g. rec:weekly, rec:every-2-weeks or rec:2w"
            ) from None
        return 1
    if key == "remind":
        # A word written with dashes for spaces (remind:1-hour-before, remind:at-due) is the whole reminder
        # when it reads as one, so the words after it stay the line's own ("remind:at-due friday 3pm": the due
        # date is friday 3pm); else the longest run that is one (remind:1 hour before, remind:2026-12-04 08:00).
        # Checked against a stand-in due date: the tool reads it again against the real one.
        spaced = [_spaced(w) for w in rest]
        dashed = spaced[0] != rest[0] and _reminder(spaced[:1]) is not None
        end = 1 if dashed else _longest(spaced, 0, _reminder)[0]
        if end == 0:
            raise NotationError(f"cannot read remind:{rest[0]!r}; write e.g. remind:1-hour-before or remind:friday-8am")
        out.args["remind"] = " ".join(_spaced(w) for w in rest[:end])
        return end
    end, when = _longest(rest, 0, lambda run: _when(run, today))
    if when is None:
        raise NotationError(f"cannot read {key}:{rest[0]!r} as a date; write e.g. {key}:friday or {key}:2026-12-04")
    phrase = " ".join(rest[:end])
    out.args["due_date" if key == "due" else "start_date"] = phrase
    return end


def _spaced(word: str) -> str:
    """A word of key:PHRASE with its dashes as spaces ("1-hour-before"), except inside a date (2026-12-04)."""
    return re.sub(r"(?<!\d)-|-(?!\d)", " ", word)


def _reminder(run: list[str]) -> Any:
    try:
        return resolve_remind(" ".join(run), dt.date(2026, 1, 1), "2026-06-30", "12:00")
    except DateError:
        return None


def _when(run: list[str], today: dt.date) -> Any:
    try:
        return resolve(" ".join(run), today)
    except DateError:
        return None


def _free_date(words: list[str], out: Reading, today: dt.date) -> list[str]:
    """Take the longest date phrase among the plain words (the rightmost of equals); the rest is the title."""
    best: tuple[int, int, Any] | None = None
    for start in range(len(words)):
        if words[start].startswith("\\"):
            continue
        end, when = _longest(
            words, start, lambda run: None if any(w.startswith("\\") for w in run) else _is_date(run, today)
        )
        if when is not None and (best is None or end - start >= best[1] - best[0]):
            best = (start, end, when)
    if best is None:
        return words
    start, end, when = best
    phrase = " ".join(words[start:end])
    timed = _with_time(words, start, end, today) if when.time is None else None
    if timed:  # a time beside the day is its time, before or after it: "lunch noon tomorrow"
        start, end, phrase = timed
    rest = words[:start] + words[end:]
    if time_only(phrase):  # "at 5pm tomorrow": a time and, elsewhere in the words, its day
        day = _free_date_span(rest, today)
        if day is not None:
            combined = f"{' '.join(rest[day[0] : day[1]])} {phrase}"
            try:
                when, phrase, rest = resolve(combined, today), combined, rest[: day[0]] + rest[day[1] :]
            except DateError:
                pass
    out.args["due_date"] = phrase
    return rest


def _with_time(words: list[str], start: int, end: int, today: dt.date) -> tuple[int, int, str] | None:
    """A time of day right after or before the date's words ("tomorrow noon", "noon tomorrow", "at 9 friday"):
    the span they make together and the phrase in the order the date reader takes (the day, then the time)."""
    for lo, hi in ((end, end + 2), (end, end + 1), (start - 2, start), (start - 1, start)):
        near = words[max(lo, 0) : hi]
        if lo < 0 or hi > len(words) or any(w.startswith("\\") for w in near) or not time_only(" ".join(near)):
            continue
        phrase = " ".join([*words[start:end], *near])
        try:
            if resolve(phrase, today).time is not None:
                return min(start, lo), max(end, hi), phrase
        except DateError:
            continue
    return None


def _free_date_span(words: list[str], today: dt.date) -> tuple[int, int] | None:
    """The longest run of the words that is a date with no time of its own."""
    best = None
    for start in range(len(words)):
        end, when = _longest(
            words, start, lambda run: None if any(w.startswith("\\") for w in run) else _is_date(run, today)
        )
        if when is not None and when.time is None and (best is None or end - start > best[1] - best[0]):
            best = (start, end)
    return best


STATUSES = ("open", "waiting", "done", "cancelled", "all")
DUE_WORDS = ("overdue", "today", "tomorrow", "week")  # `tasks overdue` is `tasks due:overdue`


def filters(words: list[str], today: dt.date) -> dict[str, Any]:
    """`tasks` filters, in any order: a status (open, waiting, done, cancelled, all), overdue, today, tomorrow,
    week (the same as due:WORD), +tag (tag:), #list (list:), !priority (pri:), due:today|tomorrow|week|overdue|
    PHRASE, start:PHRASE; other words are searched in titles and notes, and \\word searches for a word that is
    one of these."""
    args: dict[str, Any] = {}
    text: list[str] = []
    for w in [w for word in words for w in word.split()]:
        low = w.lower()
        if w.startswith("\\") and len(w) > 1:
            text.append(w[1:])
        elif low in STATUSES:
            if args.get("status", low) != low:
                raise NotationError(f"give one status, not {args['status']} and {low}")
            args["status"] = low
        elif low in DUE_WORDS:
            args.update(_due_filter(low, today))
        elif re.fullmatch(r"(\+|tag:)[^\W\d_][\w-]*", w, re.I):
            args["tag"] = w.split(":", 1)[1] if ":" in w else w[1:]
        elif re.fullmatch(r"(#|list:|project:)[^\W\d_][\w-]*", w, re.I):
            args["list"] = w.split(":", 1)[1] if ":" in w else w[1:]
        elif low.startswith("!") and low[1:] in PRIORITY:
            args["priority"] = PRIORITY[low[1:]]
        elif low.startswith(("pri:", "priority:")):  # bash reads !high as history
            if low.split(":", 1)[1] not in PRIORITY:
                raise NotationError(f"cannot read {w!r}: write pri:high, pri:medium or pri:low")
            args["priority"] = PRIORITY[low.split(":", 1)[1]]
        elif low.startswith("due:"):
            args.update(_due_filter(low[4:], today))
        elif low.startswith("start:"):
            when = _when([low[6:]], today)
            if when is None:
                raise NotationError(f"cannot read {w!r}: write e.g. start:friday")
            args["start_before"] = when.date.isoformat()
        else:
            text.append(w)
    if text:
        args["text"] = " ".join(text)
    return args


def _due_filter(value: str, today: dt.date) -> dict[str, Any]:
    if value == "overdue":
        return {"overdue": True}
    if value in ("week", "thisweek"):
        return {
            "due_after": today.isoformat(),
            "due_before": (today + dt.timedelta(days=6 - today.weekday())).isoformat(),
        }
    when = _when([value.replace("-", " ") if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) else value], today)
    if when is None:
        raise NotationError(
            f"cannot read due:{value!r}: write due:today, due:tomorrow, due:week, due:overdue or a date"
        )
    return {"due_after": when.date.isoformat(), "due_before": when.date.isoformat()}
