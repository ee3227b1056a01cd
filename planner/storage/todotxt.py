"""todo.txt (github.com/todotxt/todo.txt): one task per line, read and written.

    x 2026-12-02 2026-11-30 call the bank +money @phone due:2026-12-04 t:2026-12-03 rec:1w uid:...
    ^ done       ^ created  ^ title        ^ list ^ tag   ^ due         ^ start      ^ repeat

    todo.txt          task field
    x DATE            done, completed when
    (A) (B) (C)       priority high, medium, low (pri: on a done line, which drops the parentheses)
    +project          list (the first); further projects are kept and written back after it
    @context          tags
    due: time:        due date and time
    t:                start date (the threshold extension: hidden until then)
    est:              estimate (30m, 1h30m)
    rec:              repeat (1w, 2m, 1b for weekdays, or an RRULE)
    remind:           the reminder (2026-12-04T14:00, local time)
    parent:           the uid of the task this one is a step of
    uid:              the task's uid

todo.txt has no escapes and no place for notes, so notes are left out (write()
says so), and a title word todo.txt would read as metadata (+word, @word,
due:...) is written with a backslash in front, which this reader removes. A
title a line cannot hold as it is (a tab, two spaces, a line break of any
kind) is written as its words, plus `title:` with the exact title
percent-encoded (RFC 3986), a key:value extension; reading takes it while the
words are still its words, so an edit in another tool wins. A line from another
program has no uid, so it gets one from a hash of the line (and, for the 2nd
identical line, its count), so the same file imports once and two identical
lines are two tasks. Unknown key:value words stay in the title as written.
"""

from __future__ import annotations

import hashlib
import re
import urllib.parse
from typing import Any

from planner.durations import DurationError, minutes, short

PRIORITY = {"high": "A", "medium": "B", "low": "C"}
KEYS = ("due", "time", "rec", "uid", "pri", "t", "est", "title", "remind", "parent")
_META = re.compile(rf"[+@]\S|(?:{'|'.join(KEYS)}):\S|\\")  # a title word todo.txt would misread
_LEAD = re.compile(r"x|\([A-Z]\)|\d{4}-\d{2}-\d{2}")  # a first word read as done, priority or date
_REC_UNITS = {"d": "DAILY", "w": "WEEKLY", "m": "MONTHLY", "y": "YEARLY"}


def to_rec(rule: str) -> str:
    """A repeat rule in todo.txt's common rec: form (1w, 2m, 1b) where it has one, else the RRULE itself."""
    parts = dict(p.partition("=")[::2] for p in rule.split(";"))
    n = parts.pop("INTERVAL", "1")
    freq = parts.pop("FREQ", "")
    if parts == {"BYDAY": "MO,TU,WE,TH,FR"} and freq == "WEEKLY" and n == "1":
        return "1b"  # business days
    unit = {v: k for k, v in _REC_UNITS.items()}.get(freq)
    return f"{n}{unit}" if unit and not parts else rule


def from_rec(value: str) -> str:
    """todo.txt's rec: value (1w, +2m, 1b, or an RRULE) as an RRULE."""
    m = re.fullmatch(r"\+?(\d{1,3})([dwmyb])", value.strip().lower())
    if not m:
        return value  # an RRULE, or something parse_repeat will explain
    n, unit = int(m[1]), m[2]
    if n < 1:
        return f"FREQ={_REC_UNITS.get(unit, 'DAILY')};INTERVAL=0"  # refused by the row check: it never comes round
    if unit == "b":
        return "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR" if n == 1 else f"FREQ=DAILY;INTERVAL={n}"
    return f"FREQ={_REC_UNITS[unit]}" + (f";INTERVAL={n}" if n > 1 else "")


def _title(title: str) -> str:
    """A title on one line, with each word todo.txt would read as metadata escaped by a backslash."""
    words = title.split()
    return " ".join("\\" + w if _META.match(w) or (i == 0 and _LEAD.fullmatch(w)) else w for i, w in enumerate(words))


def _word(text: str) -> str:
    return "-".join(text.split())  # a list or tag name as one todo.txt word


def write(tasks: list[dict[str, Any]]) -> str:
    """One todo.txt line per task (cancelled ones as done lines marked with status:cancelled)."""
    lines = []
    for t in tasks:
        parts = []
        pri = PRIORITY.get(t["priority"] or "")
        closed = t["status"] in ("done", "cancelled")
        if closed:
            parts += ["x", (t["completed_at"] or t["created_at"] or "")[:10]]
        elif pri:
            parts.append(f"({pri})")
        if t["created_at"]:
            parts.append(t["created_at"][:10])
        parts.append(_title(t["title"]))
        if t.get("list"):
            parts.append(f"+{_word(t['list'])}")
        more = (t.get("extra") or {}).get("todotxt_projects")
        parts += [f"+{_word(p)}" for p in more if isinstance(p, str) and p.split()] if isinstance(more, list) else []
        parts += [f"@{tag}" for tag in t["tags"]]
        for key, value in (("due", t["due_date"]), ("time", t["due_time"]), ("t", t.get("start_date"))):
            if value:
                parts.append(f"{key}:{value}")
        if t.get("estimate_minutes"):
            parts.append(f"est:{short(t['estimate_minutes'])}")
        if t["repeat"]:
            parts.append(f"rec:{to_rec(t['repeat'])}")
        if t.get("remind_at"):
            parts.append(f"remind:{t['remind_at']}")
        if t.get("parent"):
            parts.append(f"parent:{t['parent']}")
        if closed and pri:
            parts.append(f"pri:{pri}")  # the spec drops (A) from done tasks; keep it as a key
        if t["status"] == "cancelled":
            parts.append("status:cancelled")
        if " ".join(t["title"].split()) != t["title"]:
            parts.append(f"title:{urllib.parse.quote(t['title'], safe='')}")  # the words alone would change it
        parts.append(f"uid:{t['uid']}")
        lines.append(" ".join(p for p in parts if p))
    return "".join(line + "\n" for line in lines)


def parse_line(line: str) -> dict[str, Any]:
    """One todo.txt line as an import row (without a uid when the line has none)."""
    words = line.split()
    row: dict[str, Any] = {"status": "open", "tags": []}
    projects: list[str] = []
    if words and words[0] == "x":
        row["status"] = "done"
        words.pop(0)
        if words and re.fullmatch(r"\d{4}-\d{2}-\d{2}", words[0]):
            row["completed_at"] = words.pop(0)
    if words and re.fullmatch(r"\([A-Z]\)", words[0]):
        row["priority"] = {"A": "high", "B": "medium"}.get(words.pop(0)[1], "low")
    if words and re.fullmatch(r"\d{4}-\d{2}-\d{2}", words[0]):
        row["created_at"] = words.pop(0)
    title = []
    for w in words:
        key, sep, value = w.partition(":")
        if w.startswith("\\"):  # escaped by _title: part of the title as written
            title.append(w[1:])
        elif w[:1] == "+" and len(w) > 1:
            projects.append(w[1:])
        elif w[:1] == "@" and len(w) > 1:
            row["tags"].append(w[1:])
        elif w == "status:cancelled" and row["status"] == "done":
            row["status"] = "cancelled"
        elif sep and value and key in KEYS and _read_key(row, key, value):
            pass
        else:
            title.append(w)
    row["title"] = " ".join(title)
    exact = row.pop("title_exact", None)
    if exact is not None:
        if " ".join(exact[1].split()) == row["title"]:
            row["title"] = exact[1]
        else:  # not (or no longer) this line's title: the word stays in the title as written
            row["title"] = f"{row['title']} {exact[0]}".strip()
    if projects:
        row["list"] = projects[0]
        if projects[1:]:
            row["extra"] = {"todotxt_projects": projects[1:]}
    return row


def _read_key(row: dict[str, Any], key: str, value: str) -> bool:
    """Read one key:value into the row; False leaves the word in the title (an estimate that is not one)."""
    if key == "title":
        row["title_exact"] = (f"{key}:{value}", urllib.parse.unquote(value))
        return True
    if key == "est":
        try:
            row["estimate_minutes"] = minutes(value)
        except DurationError:
            return False
        return True
    name = {"due": "due_date", "time": "due_time", "rec": "repeat", "uid": "uid", "pri": "priority", "t": "start_date"}
    name |= {"remind": "remind_at", "parent": "parent"}
    row[name[key]] = {"A": "high", "B": "medium"}.get(value, "low") if key == "pri" else value
    if key == "rec":
        row["repeat"] = from_rec(value)
    return True


def parse(text: str) -> list[tuple[str, Any]]:
    """(where, row or ValueError) pairs, one per non-empty line; a line from another program gets a uid from
    its text."""
    rows = []
    seen: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = parse_line(line)
        except (ValueError, TypeError, OverflowError) as e:  # a word no reader expected: this line only
            rows.append((f"line {n}", ValueError(f"it cannot be read ({e})")))
            continue
        if not row.get("uid"):
            digest = hashlib.sha256(" ".join(line.split()).encode("utf-8", "surrogatepass")).hexdigest()[:20]
            seen[digest] = seen.get(digest, 0) + 1
            row["uid"] = f"todotxt-{digest}" + (f"-{seen[digest]}" if seen[digest] > 1 else "")
        rows.append((f"line {n}", row))
    return rows
