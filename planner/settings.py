"""One place for settings: the Config dataclass, its PLANNER_* environment
variables and the data directory. How the interface shows things (quiet,
verbose, plain, a one-shot request) is not a setting of the planner: those
are `Options` in planner/ui/cli.py.

Precedence is flag > environment > default. The environment is read only in
`Config.from_env`, so tests can pass a dict instead of patching os.environ.
`OLLAMA_HOST` belongs to the Ollama client; we read it only to show the user
which server we tried.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

VERSION = "0.10.0"
DEFAULT_HOST = "http://127.0.0.1:11434"
GUARD_PROFILES = ("auto", "small", "standard", "off")  # planner/agent/guards.py says what each does
TOOL_CHOICES = ("needed", "all")  # the tools sent with each model call (planner/agent/request.py)


def program() -> str:
    """How the user called the planner, so what it tells them to type is what works: `planner` once installed
    (the console script), else `python agent.py` (a checkout). Read from sys.argv[0], not a setting."""
    import sys

    return "planner" if Path(sys.argv[0]).name == "planner" else "python agent.py"


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The planner's data directory: $PLANNER_HOME, else $XDG_DATA_HOME/planner."""
    env = os.environ if env is None else env
    if env.get("PLANNER_HOME"):
        return Path(env["PLANNER_HOME"]).expanduser()
    xdg = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg).expanduser() / "planner"


@dataclass
class Config:
    """Every setting of the planner; one default and one line of doc per field."""

    model: str = "qwen3.5:9b"  # main model: plans, calls tools, answers
    critic_model: str = (
        "qwen3.5:4b"  # the smaller model: checks turns that changed data, and extracts memories and writes summaries
    )
    embed_model: str = "nomic-embed-text"  # embedding model for long-term memory
    host: str = DEFAULT_HOST  # Ollama server (OLLAMA_HOST)
    db_path: Path = field(default_factory=lambda: data_dir() / "planner.db")  # the SQLite file
    session: str | None = None  # session name to resume or start; None = a new one
    resume_last: bool = False  # -c: resume the most recent session
    think: bool = False  # let a thinking main model think (never the critic)
    guards: str = "auto"  # guard profile: auto (by model size), small, standard or off (planner/agent/guards.py)
    # The tools each model call gets: the groups the request needs (agent/request.py), or all of them
    # (PLANNER_TOOL_GROUPS=all, to compare).
    tool_groups: str = "needed"
    reflect: bool = True  # run the critic after turns that changed data
    memory: bool = True  # long-term memory: remember, recall, notes attached to messages (PLANNER_MEMORY, --no-memory)
    auto_memory: bool = True  # extract memories and summaries in the background after each turn
    yes: bool = False  # run destructive tools and large changes without asking (non-interactive use)
    # MCP: let `confirm: true` from a client that cannot ask its user stand for the user's yes (PLANNER_MCP_CONFIRM)
    mcp_confirm: bool = False
    web: bool = False  # offer the model the lookup tool, which asks Wikipedia (PLANNER_WEB=1, --web)
    web_url: str = "https://en.wikipedia.org"  # the encyclopedia lookup asks (PLANNER_WEB_URL)
    web_timeout: float = 5.0  # seconds a lookup may take
    caldav_url: str | None = None  # the CalDAV task list `sync` keeps in step (PLANNER_CALDAV_URL)
    caldav_user: str | None = None  # its user name (PLANNER_CALDAV_USER)
    caldav_password: str | None = field(default=None, repr=False)  # its password (PLANNER_CALDAV_PASSWORD), never shown
    # Lists with a task list (collection) of their own: {list: url} (PLANNER_CALDAV_LISTS="work=URL home=URL").
    caldav_lists: dict[str, str] = field(default_factory=dict)
    caldav_timeout: float = 60.0  # seconds one CalDAV request may take, start to end (PLANNER_CALDAV_TIMEOUT)
    caldav_calendars: tuple[
        str, ...
    ] = ()  # calendars read as busy time by `sync` (PLANNER_CALDAV_CALENDARS), read-only
    caldav_plan: str | None = None  # the calendar the plan's blocks are published to (PLANNER_CALDAV_PLAN)
    # When tasks may be planned: "mon-fri 09:00-17:00; sat 10:00-12:00" (PLANNER_WORK_HOURS).
    work_hours: str = "mon-fri 09:00-17:00"
    min_block: int = 15  # minutes: the shortest part a split task gets (PLANNER_MIN_BLOCK)
    break_minutes: int = 0  # minutes kept free between blocks (PLANNER_BREAK)
    max_steps: int = 8  # model calls per attempt before giving up (PLANNER_MAX_STEPS; PLANNER_MAX_TURNS also read)
    max_reflections: int = 1  # critic-requested retries per user turn
    num_ctx: int = 8192  # main model context window (never changed mid-session)
    num_predict: int = 1024  # main model reply cap, in tokens
    critic_num_ctx: int = 4096  # critic context window
    critic_num_predict: int = 256  # critic reply cap
    keep_alive: str = "30m"  # how long Ollama keeps the main model loaded after a call
    critic_keep_alive: str = "10m"  # how long Ollama keeps the critic model loaded
    history_messages: int = 200  # most messages of history sent to the model
    timeout: float = 300.0  # seconds to wait for Ollama to start answering (a large model may be loading)
    reply_timeout: float = 900.0  # seconds one model call may take from start to end (a stream that never ends)
    today: dt.date | None = None  # fixed "today" (PLANNER_TODAY), for reproducible runs
    now: dt.datetime | None = None  # fixed "now", a local date and time (PLANNER_NOW, --now); sets today too
    learn_estimates: bool = (
        True  # plans correct estimates by the time tracked on finished tasks (PLANNER_LEARN_ESTIMATES)
    )

    @property
    def log_path(self) -> Path:
        """agent.log, beside the database."""
        return self.db_path.parent / "agent.log"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Config:
        """Defaults overridden by PLANNER_* variables (and OLLAMA_HOST)."""
        env = os.environ if env is None else env
        c = cls(db_path=data_dir(env) / "planner.db")
        strings = {
            "PLANNER_MODEL": "model",
            "PLANNER_CRITIC_MODEL": "critic_model",
            "PLANNER_EMBED_MODEL": "embed_model",
            "PLANNER_KEEP_ALIVE": "keep_alive",
            "PLANNER_CRITIC_KEEP_ALIVE": "critic_keep_alive",
            "OLLAMA_HOST": "host",
            "PLANNER_WEB_URL": "web_url",
            "PLANNER_CALDAV_URL": "caldav_url",
            "PLANNER_CALDAV_USER": "caldav_user",
            "PLANNER_CALDAV_PASSWORD": "caldav_password",
            "PLANNER_CALDAV_PLAN": "caldav_plan",
            "PLANNER_WORK_HOURS": "work_hours",
        }
        for var, name in strings.items():
            if env.get(var):
                setattr(c, name, env[var])
        ints = {
            "PLANNER_NUM_CTX": "num_ctx",
            "PLANNER_NUM_PREDICT": "num_predict",
            "PLANNER_CRITIC_NUM_CTX": "critic_num_ctx",
            "PLANNER_MAX_TURNS": "max_steps",  # its old name, read first so that the new one wins
            "PLANNER_MAX_STEPS": "max_steps",
            "PLANNER_MIN_BLOCK": "min_block",
            "PLANNER_BREAK": "break_minutes",
        }
        for var, name in ints.items():
            if env.get(var):
                try:
                    setattr(c, name, int(env[var]))
                except ValueError:
                    raise ConfigError(f"{var} must be a whole number, not {env[var]!r}") from None
        if env.get("PLANNER_CALDAV_CALENDARS"):
            c.caldav_calendars = tuple(env["PLANNER_CALDAV_CALENDARS"].replace(",", " ").split())
        if env.get("PLANNER_WORK_HOURS"):
            parse_hours(env["PLANNER_WORK_HOURS"])  # refused here, in one line, when it cannot be read
        if env.get("PLANNER_CALDAV_LISTS"):
            c.caldav_lists = parse_lists(env["PLANNER_CALDAV_LISTS"])
        for var, name in (
            ("PLANNER_TIMEOUT", "timeout"),
            ("PLANNER_REPLY_TIMEOUT", "reply_timeout"),
            ("PLANNER_CALDAV_TIMEOUT", "caldav_timeout"),
        ):
            if env.get(var):
                try:
                    setattr(c, name, float(env[var]))
                except ValueError:
                    raise ConfigError(f"{var} must be a number of seconds, not {env[var]!r}") from None
        if env.get("PLANNER_GUARDS"):
            value = env["PLANNER_GUARDS"].strip().lower()
            if value not in GUARD_PROFILES:
                raise ConfigError(
                    f"PLANNER_GUARDS must be one of {', '.join(GUARD_PROFILES)}, not {env['PLANNER_GUARDS']!r}"
                )
            c.guards = value
        if env.get("PLANNER_TOOL_GROUPS"):
            value = env["PLANNER_TOOL_GROUPS"].strip().lower()
            if value not in TOOL_CHOICES:
                raise ConfigError(f"PLANNER_TOOL_GROUPS must be needed or all, not {env['PLANNER_TOOL_GROUPS']!r}")
            c.tool_groups = value
        if env.get("PLANNER_DB"):
            c.db_path = Path(env["PLANNER_DB"]).expanduser()
        if env.get("PLANNER_TODAY"):
            c.today = parse_today(env["PLANNER_TODAY"], "PLANNER_TODAY")
        if env.get("PLANNER_NOW"):
            c.now = parse_now(env["PLANNER_NOW"], "PLANNER_NOW")
            c.today = same_day(c.now, c.today, "PLANNER_NOW", "PLANNER_TODAY")
        for var, name in (
            ("PLANNER_YES", "yes"),
            ("PLANNER_WEB", "web"),
            ("PLANNER_AUTO_MEMORY", "auto_memory"),
            ("PLANNER_MEMORY", "memory"),
            ("PLANNER_MCP_CONFIRM", "mcp_confirm"),
            ("PLANNER_LEARN_ESTIMATES", "learn_estimates"),
        ):
            if env.get(var):
                setattr(c, name, parse_bool(env[var], var))
        return c

    def replace(self, **changes) -> Config:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)


class ConfigError(ValueError):
    """A setting the user gave cannot be used; the message says which and why."""


TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def parse_bool(value: str, source: str) -> bool:
    """A yes/no setting: 1/0, true/false, yes/no or on/off; anything else is a ConfigError."""
    v = value.strip().lower()
    if v in TRUE or v in FALSE:
        return v in TRUE
    raise ConfigError(f"{source} must be one of 1/0, true/false, yes/no, on/off, not {value!r}")


DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def parse_hours(value: str) -> list[list[tuple[dt.time, dt.time]]]:
    """PLANNER_WORK_HOURS: "mon-fri 09:00-17:00; sat 10:00-12:00" as 7 lists of windows, Monday first.

    A day may have several windows ("mon 09:00-12:00 13:00-17:00"); a day not named has none.
    """
    week: list[list[tuple[dt.time, dt.time]]] = [[] for _ in DAY_NAMES]
    for part in value.replace(",", ";").split(";"):
        words = part.split()
        if not words:
            continue
        days = words[0].lower()
        try:
            if "-" in days:
                a, b = days.split("-")
                chosen = range(DAY_NAMES.index(a[:3]), DAY_NAMES.index(b[:3]) + 1)
            else:
                chosen = [DAY_NAMES.index(d[:3]) for d in days.split("+")]
            windows = []
            for w in words[1:]:
                start, end = w.split("-")
                t0, t1 = dt.time.fromisoformat(start), dt.time.fromisoformat("00:00" if end == "24:00" else end)
                if t1 <= t0 and t1 != dt.time(0):
                    raise ValueError
                windows.append((t0, t1))
            if not windows:
                raise ValueError
        except ValueError:
            raise ConfigError(
                f"PLANNER_WORK_HOURS takes days and times like 'mon-fri 09:00-17:00; sat 10:00-12:00', "
                f"not {part.strip()!r}"
            ) from None
        for d in chosen:
            week[d] = windows
    return week


def parse_lists(value: str) -> dict[str, str]:
    """PLANNER_CALDAV_LISTS: `list=URL` pairs separated by spaces or commas."""
    out = {}
    for pair in value.replace(",", " ").split():
        name, sep, url = pair.partition("=")
        if not sep or not name or not url.startswith(("http://", "https://")):
            raise ConfigError(f"PLANNER_CALDAV_LISTS takes list=URL pairs (work=https://...), not {pair!r}")
        out[name] = url
    return out


def parse_today(value: str, source: str) -> dt.date:
    """Parse a fixed 'today' (YYYY-MM-DD)."""
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ConfigError(f"{source} must be a date like 2026-12-01, not {value!r}") from None


def parse_now(value: str, source: str) -> dt.datetime:
    """Parse a fixed 'now': a local date and time (2026-12-01 14:30, or 2026-12-01T14:30)."""
    try:
        now = dt.datetime.fromisoformat(value.strip().replace(" ", "T", 1))
    except ValueError:
        now = None
    if now is None or now.tzinfo is not None or len(value.strip()) < 16:
        raise ConfigError(f"{source} must be a local date and time like 2026-12-01 14:30, not {value!r}")
    return now.replace(second=0, microsecond=0)


def same_day(now: dt.datetime, today: dt.date | None, now_from: str, today_from: str) -> dt.date:
    """The day a fixed 'now' sets; a fixed 'today' on another day is refused (which one would a plan use?)."""
    if today is not None and today != now.date():
        raise ConfigError(
            f"{now_from} ({now:%Y-%m-%d %H:%M}) and {today_from} ({today.isoformat()}) are different days"
        )
    return now.date()


def clock(today: str | None, now: str | None, base: Config) -> dict[str, Any]:
    """`today` and `now` from the flags over the settings: --now sets the day too; --today alone, on another
    day than PLANNER_NOW, wins over it (a flag over the environment)."""
    day = parse_today(today, "--today") if today else None
    moment = parse_now(now, "--now") if now else None
    if moment is not None:
        return {"now": moment, "today": same_day(moment, day, "--now", "--today")}
    if day is not None:
        return {"today": day, "now": base.now if base.now and base.now.date() == day else None}
    return {"today": base.today, "now": base.now}
