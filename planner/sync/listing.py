"""What a server's answer states about a task list, and nothing more: the to-dos it holds (one per UID), the
ones it named without giving them (unknown this time), and the deletions it states.

    read(dav, state)                    the listing: Seen(remote by uid, unknown, problems, notes, hold)
    proven(dav, state, missing, changes)   which missing to-dos the server says are gone; the rest unknown
    renamed(state, missing, new)        to-dos the server gave a new UID (same href, or the same content)
    continued(local, remote, state, new)   a repeat completed elsewhere whose next one came under a new UID

The rule (docs/sync.md): a to-do is deleted elsewhere only when the server
says so for it: a sync-collection report with our valid token lists its href
as removed, or a request on its href answers 404 or 410. A listing that left
it out, a per-item error, an object without data, an href on another server:
it is *unknown*, nothing happens to it, the report names it, the next sync
looks again. Identity is the UID: a UID at a new href is the same to-do; one
UID at two hrefs is one task (the copy synced last time, or else the newest,
with the fields the other copy changed) and the duplicate is named.

Trade-off: a direct request per missing to-do costs a round trip each; after
CHECKS that the server says are still there, the rest are taken as unknown
(the listing looks incomplete), so a glitch that lists nothing costs a few
requests, not one per task.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

from planner.storage import ical
from planner.sync.dav import Changes, Dav
from planner.sync.remote import SYNCED, Remote, raw_uid, read_remote

CHECKS = 5  # missing to-dos the server says it still has before the rest are taken as unknown unasked


@dataclass
class Seen:
    """A listing, read."""

    remote: dict[str, Remote] = field(default_factory=dict)  # uid -> the to-do (one per UID)
    unknown: dict[str, str] = field(default_factory=dict)  # uid (ours) -> why it is neither there nor gone now
    odd: list[str] = field(default_factory=list)  # hrefs named but not read, whose UID is not known
    problems: list[str] = field(default_factory=list)  # to-dos not synced this time, one line each
    notes: list[str] = field(default_factory=list)  # what the user should know, nothing was skipped for it


def read(dav: Dav, state: dict[str, dict[str, Any]], now: dt.datetime | None = None) -> Seen:
    """The server's to-dos by UID, and what it named without giving whole; nothing is inferred from absence."""
    seen = Seen()
    listing = dav.listing("VTODO")
    at_href = {last["href"]: uid for uid, last in state.items()}
    copies: dict[str, list[Remote]] = {}
    for resource in listing.resources:
        try:
            item = read_remote(resource, now)
        except ical.ReadError as e:
            written = raw_uid(resource.data)
            seen.problems.append(f"to-do {written or resource.href} not read: {e}")
            uid = ical.local_uid(written) if written else at_href.get(resource.href)
            if uid:
                seen.unknown[uid] = "it could not be read"
            else:
                seen.odd.append(resource.href)
            continue
        copies.setdefault(item.uid, []).append(item)
    for odd in listing.odd:
        seen.problems.append(f"to-do at {odd.href} not read: {odd.why}")
        if odd.href in at_href:
            seen.unknown[at_href[odd.href]] = odd.why
        else:
            seen.odd.append(odd.href)
    for uid, items in copies.items():
        seen.remote[uid] = _one_of(uid, items, state.get(uid), seen)
        if seen.remote[uid].future:
            item = seen.remote[uid]
            seen.notes.append(
                f'"{item.row["title"]}": its LAST-MODIFIED {item.future} is in the future (a clock set wrong); '
                "taken as now"
            )
    for uid in list(seen.unknown):
        if uid in seen.remote:  # read at another href: it is there (moved), the odd copy is the duplicate
            del seen.unknown[uid]
    return seen


def _one_of(uid: str, items: list[Remote], last: dict[str, Any] | None, seen: Seen) -> Remote:
    """One UID at several hrefs is one to-do: the copy synced last time (else the newest), with the fields a
    copy modified later changed against what both sides agreed on; the others are named, never deleted."""
    if len(items) == 1:
        return items[0]
    items = sorted(items, key=lambda r: (r.resource.href != (last or {}).get("href"), -r.modified.timestamp()))
    main, others = items[0], items[1:]
    base = (last or {}).get("fields")
    if base:
        mine = main.fields
        for other in others:
            if other.modified <= main.modified:
                continue  # a copy of an older version (stale), not an edit made on it
            theirs = other.fields
            for k in SYNCED:
                if mine[k] == base.get(k) and theirs[k] != base.get(k):
                    main.row[k] = other.row.get(k)  # the synced fields are named as the import row's keys
                    main.patched = True
                    mine = main.fields
    seen.notes.append(
        f"to-do {uid} is on the server {len(items)} times ({', '.join(r.resource.href for r in items)}); synced as "
        f"one (the copy at {main.resource.href}), the others left as they are"
    )
    return main


def proven(
    dav: Dav, state: dict[str, dict[str, Any]], missing: list[str], changes: Changes | None
) -> tuple[set[str], dict[str, str]]:
    """Of the to-dos synced before and not listed now: those the server states are gone, and why each other
    one is unknown."""
    gone: set[str] = set()
    unknown: dict[str, str] = {}
    still_there = 0
    for uid in missing:
        href = state[uid]["href"]
        if changes is not None and changes.valid and href in changes.removed:
            gone.add(uid)  # the server's own change list says so
            continue
        if still_there >= CHECKS:
            unknown[uid] = "the listing left it out and looks incomplete (others it left out are still there)"
            continue
        there = dav.exists(href)
        if there is False:
            gone.add(uid)  # 404 or 410 on its own address
        elif there is True:
            still_there += 1
            unknown[uid] = "the listing left it out, but the server still has it"
        else:
            unknown[uid] = "the listing left it out, and the server did not say whether it is gone"
    return gone, unknown


def renamed(state: dict[str, dict[str, Any]], missing: list[str], new: dict[str, Remote]) -> list[tuple[str, str]]:
    """(old uid, new uid) for each to-do the server now holds under another UID: at the href the old one had,
    or with exactly the fields both sides agreed on last time. One to one."""
    pairs = []
    free = dict(new)
    for uid in missing:
        last = state[uid]
        match = next((r for r in free.values() if r.resource.href == last["href"]), None)
        if match is None and last.get("fields"):
            match = next((r for r in free.values() if r.fields == last["fields"]), None)
        if match is not None:
            pairs.append((uid, match.uid))
            del free[match.uid]
    return pairs


def continued(
    local: dict[str, dict[str, Any]],
    remote: dict[str, Remote],
    state: dict[str, dict[str, Any]],
    new: dict[str, Remote],
) -> dict[str, str]:
    """uid of a repeating task completed elsewhere -> uid of the next occurrence that app saved as a new to-do
    (todoman 4 completes the original and saves the next one under a new UID; other apps keep the rule on the
    completed one). The next one: open, the same title, due after the completed one."""
    out: dict[str, str] = {}
    free = dict(new)
    for uid in sorted(set(local) & set(remote) & set(state)):
        mine, theirs = local[uid], remote[uid]
        if not (mine["status"] == "open" and mine.get("repeat") and theirs.row["status"] == "done"):
            continue
        after = theirs.row.get("due_date") or mine.get("due_date") or ""
        options = [
            r
            for r in free.values()
            if r.row["status"] == "open"
            and r.row["title"] == theirs.row["title"]
            and (r.row.get("due_date") or "") > after
        ]
        if options:
            nxt = min(options, key=lambda r: (r.row.get("due_date") or "", r.uid))
            out[uid] = nxt.uid
            del free[nxt.uid]
    return out


def remember_odd(hrefs: list[str]) -> str:
    """The odd hrefs of this listing, as kept for the next one."""
    return json.dumps(sorted(set(hrefs)))


def new_odd(hrefs: list[str], before: str | None) -> list[str]:
    """Odd hrefs that were not odd last time: one of them may be a to-do of ours that moved."""
    try:
        known = set(json.loads(before or "[]"))
    except ValueError:
        known = set()
    return [h for h in hrefs if h not in known]
