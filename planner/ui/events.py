"""`events` and `event delete ID`: the calendar's events (busy time for `plan`), listed and removed one at a time,
without the model. Removing asks first (the policy's rule for a deletion) and is one /undo.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys

from planner.policy import Door, Refusal
from planner.settings import Config
from planner.storage import calendar
from planner.storage.db import Store
from planner.storage.gate import Change, Op, Refused, commit, one
from planner.storage.tasks import new_turn
from planner.ui.subcommands import EXIT_OK, EXIT_REFUSED, EXIT_USAGE
from planner.ui.text import ask_yes_no, err, safe


def _where(source: str) -> str:
    return "said" if source == "said" else source.removeprefix("file:")


def listing(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """events: every event, soonest first: id, when, title, whether it repeats, where it came from."""
    rows = calendar.listing(store.conn())
    if not rows:
        print("no events (import an .ics file, or set PLANNER_CALDAV_CALENDARS and sync)")
        return EXIT_OK
    for e in rows:
        when = e["first"][:10] if e["all_day"] else e["first"].replace("T", " ")
        more = " (repeats)" if e["repeats"] else ""
        print(safe(f"{e['id']:>4}  {when:<16}  {e['title']}{more}  [{_where(e['source'])}]"))
    return EXIT_OK


def delete(store: Store, args: argparse.Namespace, today: dt.date) -> int:
    """event delete ID: remove one event, after the user's yes."""
    event = next((e for e in calendar.listing(store.conn()) if e["id"] == args.id), None)
    if event is None:
        err(f"no event with id {args.id}; `events` lists them")
        return EXIT_USAGE
    what = (
        f'event {event["id"]} "{event["title"]}" ({event["first"].replace("T", " ")}, from {_where(event["source"])})'
    )
    door = Door(
        "shell",
        ask=ask_yes_no if sys.stdin.isatty() else None,
        yes=args.yes or Config.from_env().yes,
        how="run `event delete ID --yes` to allow it",
        turn=new_turn(),
    )
    try:
        commit(store, lambda conn: one(Change(Op.DELETE, args.id, tool="event delete", table="events")), door)
    except Refused as e:
        err(f"{what} was not deleted: {'you said no' if e.kind is Refusal.DECLINED else e}")
        return EXIT_REFUSED
    print(safe(f"deleted {what}; undo brings it back"))
    if not event["source"].startswith(("file", "said")):
        print(safe("  it is in a CalDAV calendar: the next sync reads it again unless it is removed there"))
    return EXIT_OK
