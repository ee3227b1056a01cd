"""The plan on the user's phone: its task blocks as events, in a file (`export --plan`) or in a calendar of the
user's choice (PLANNER_CALDAV_PLAN, `/plan publish`, and every `sync` once it is set), and their calendars
read as busy time (PLANNER_CALDAV_CALENDARS, refreshed by `sync`).

Each block is a VEVENT with UID "plan-<task uid>-<n>@planner", RELATED-TO the
task's UID, and the task's title. Publishing writes the plan's blocks, moves
the ones whose time changed (a re-plan keeps most where they were, so most are
"unchanged") and removes those of ours no longer in the plan from its start on
(a task done early); the blocks earlier that day stay, as the day went. Events
the planner did not write are never touched, and the plan's calendar must be
one of its own, not a calendar read as busy time (the blocks would come back as
busy time) nor the task list.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import icalendar

from planner.schedule import Block, Horizon
from planner.storage import calendar, syncstate
from planner.storage.gate import ChangeSet, Op, Refused, event_changes
from planner.storage.ical import uid_of
from planner.sync.dav import Dav, DavError, credentials, password_for, safe_url
from planner.tools import ToolContext
from planner.tools.plan_tools import make_plan, span_of

PREFIX = "plan-"
WINDOW = (7, 90)  # days before and after today read from the user's calendars


class PublishError(Exception):
    """The plan could not be published; the message says why and what to do."""


def block_events(ctx: ToolContext, when: str | None) -> tuple[Horizon, list[tuple[str, icalendar.Event]]]:
    """The time planned, and (UID, VEVENT) for each task block of the plan."""
    span = span_of(ctx, when or "week")
    uids = {task_id: uid for uid, task_id in syncstate.ids_by_uid(ctx.store.conn()).items()}
    out = []
    stamp = dt.datetime.now(dt.UTC)
    for b in make_plan(ctx, span.horizon, span.note).plan.blocks:
        if b.kind != "task" or b.task_id not in uids:
            continue
        out.append(_event(b, uids[b.task_id], stamp))
    return span.horizon, out


def _event(b: Block, task_uid: str, stamp: dt.datetime) -> tuple[str, icalendar.Event]:
    uid = f"{PREFIX}{task_uid.split('@')[0]}-{b.part}@planner"
    e = icalendar.Event()
    e.add("uid", uid)
    e.add("dtstamp", stamp)
    e.add("summary", b.title + (f" ({b.part}/{b.parts})" if b.parts > 1 else ""))
    e.add("dtstart", b.start)
    e.add("dtend", b.end)
    e.add("description", "A block of time the planner set aside for this task; it moves when the plan does.")
    e.add("related-to", uid_of(task_uid))
    e.add("categories", ["planner"])
    e.add("x-planner-task", task_uid)
    return uid, e


def plan_ics(ctx: ToolContext, when: str | None) -> str:
    """`export --plan`: the plan's task blocks as an iCalendar file."""
    cal = icalendar.Calendar()
    cal.add("prodid", "-//planner//plan//EN")
    cal.add("version", "2.0")
    for _, e in block_events(ctx, when)[1]:
        cal.add_component(e)
    return cal.to_ical().decode()


def _as_object(e: icalendar.Event) -> str:
    cal = icalendar.Calendar()
    cal.add("prodid", "-//planner//plan//EN")
    cal.add("version", "2.0")
    cal.add_component(e)
    return cal.to_ical().decode()


def publish(ctx: ToolContext, config: Any, when: str | None = None) -> str:
    """Write the plan's blocks to the plan calendar; a line for the user. Raises PublishError."""
    target = config.caldav_plan
    if safe_url(target).rstrip("/") in {
        safe_url(u).rstrip("/") for u in (*config.caldav_calendars, config.caldav_url or "")
    }:
        raise PublishError(
            f"{safe_url(target)} is read as busy time or holds the tasks; give the plan a calendar of "
            "its own in PLANNER_CALDAV_PLAN"
        )
    user = config.caldav_user or credentials(target)[0]
    dav = Dav(target, user, password_for(user, target, config.caldav_password), deadline=config.caldav_timeout)
    try:
        horizon, blocks = block_events(ctx, when)
        wanted = dict(blocks)
        there = {}
        for r in dav.objects("VEVENT"):
            uid = next(
                (
                    line[4:].strip()
                    for line in r.data.replace("\r\n ", "").splitlines()
                    if line.upper().startswith("UID:")
                ),
                "",
            )
            if uid.startswith(PREFIX) and uid.endswith("@planner"):
                there[uid] = r
        written = removed = 0
        for uid, e in wanted.items():
            data = _as_object(e)
            if uid in there:
                if _same_time(there[uid].data, e):
                    continue
                dav.put(there[uid].href, data, etag=there[uid].etag)
            else:
                dav.put(dav.href_for(uid), data, create=True)
            written += 1
        for uid, r in there.items():
            if uid not in wanted and _starts(r.data) >= horizon.start:  # the day's past blocks stay, as it went
                dav.delete(r.href, r.etag)
                removed += 1
    except DavError as e:
        raise PublishError(f"{e}; the plan was not published") from None
    finally:
        dav.close()
    return (
        f"published the plan to {safe_url(target)}: {written} blocks written, {removed} removed, "
        f"{len(wanted) - written} unchanged"
    )


def _starts(data: str) -> dt.datetime:
    """When one of our blocks starts, in local time (the far future if it cannot be read: it goes)."""
    try:
        event = next(c for c in icalendar.Calendar.from_ical(data).subcomponents if c.name == "VEVENT")
        start = event["dtstart"].dt
    except (ValueError, StopIteration, KeyError):
        return dt.datetime.max
    if isinstance(start, dt.datetime):
        return start.astimezone().replace(tzinfo=None) if start.tzinfo else start
    return dt.datetime.combine(start, dt.time())


def _same_time(data: str, e: icalendar.Event) -> bool:
    try:
        old = next(c for c in icalendar.Calendar.from_ical(data).subcomponents if c.name == "VEVENT")
    except (ValueError, StopIteration):
        return False
    return (
        old.get("dtstart")
        and old["dtstart"].dt == e["dtstart"].dt
        and old.get("dtend") is not None
        and old["dtend"].dt == e["dtend"].dt
        and str(old.get("summary")) == str(e["summary"])
    )


@dataclass(frozen=True)
class CalendarRead:
    """One calendar read: its line for the user, and how many events gone there were kept here (no yes)."""

    line: str
    kept: int = 0


def read_calendars(ctx: ToolContext, config: Any, today: dt.date) -> list[CalendarRead]:
    """Refresh the busy time from the user's calendars (read-only); what each read did."""
    lines: list[CalendarRead] = []
    first = dt.datetime.combine(today - dt.timedelta(days=WINDOW[0]), dt.time())
    last = dt.datetime.combine(today + dt.timedelta(days=WINDOW[1]), dt.time())
    start, end = first.astimezone(dt.UTC), last.astimezone(dt.UTC)
    within = (first.isoformat(timespec="minutes"), last.isoformat(timespec="minutes"))  # as events are stored
    for url in config.caldav_calendars:
        user = config.caldav_user or credentials(url)[0]
        dav = Dav(url, user, password_for(user, url, config.caldav_password), deadline=config.caldav_timeout)
        try:
            found = dav.listing("VEVENT", f"{start:%Y%m%dT%H%M%SZ}", f"{end:%Y%m%dT%H%M%SZ}")
        except DavError as e:
            lines.append(CalendarRead(f"calendar {safe_url(url)} not read: {e}"))
            continue
        finally:
            dav.close()
        items, bad = [], len(found.odd)  # named by the listing without its data (a per-item 404 or 503): unread
        for r in found.resources:
            try:
                got = calendar.objects(r.data)
                for _, _, cal in got:
                    calendar.bounds(cal)  # a start or end that cannot be read fails here, not in the write
            except ValueError:
                got = []
            if not got:  # unparseable, or no event this reader can take (no start, cut short)
                bad += 1
            items += got
        done = _mirror(ctx, safe_url(url), items, within, replace=not bad)  # an unread item states no removal
        line = (
            f"calendar {safe_url(url)}: {len(items)} events ({done.added} new"
            + (f", {len(done.removed)} gone" if done.removed else "")
            + ")"
            + (f"; {bad} could not be read, so none was taken for removed" if bad else "")
            + (f"; kept {len(done.kept)} no longer listed" if done.kept else "")
            + (f"; left {done.unchanged} changed there as they were" if done.unchanged else "")
            + (f" ({done.kept_because})" if done.kept or done.unchanged else "")
        )
        lines.append(CalendarRead(line, len(done.kept) + done.unchanged))
    return lines


def _mirror(ctx: ToolContext, source: str, items: list[Any], within: tuple[str, str], replace: bool) -> Any:
    """The calendar's events in the window read, as the server lists them, through the gate; removals it does
    not allow are kept. An event outside the window is neither listed nor taken for gone."""

    def plan(conn: Any, removing: bool) -> ChangeSet:
        changes, done = event_changes(
            conn, source, items, replace=replace and removing, tool=calendar.MIRROR, within=within
        )
        if not removing:  # changed events need the same yes as the removals (a large change): left as they were
            done.unchanged, done.updated = done.updated, 0
            changes = [c for c in changes if c.op is Op.ADD]
        found.append(done)
        return ChangeSet(tuple(changes), by_user=True)

    found: list[Any] = []
    try:
        ctx.commit(lambda conn: plan(conn, True))
        found[-1].kept_because = ""
    except Refused as e:
        gone = found[-1].removed
        ctx.commit(lambda conn: plan(conn, False))
        found[-1].kept, found[-1].kept_because = gone, str(e)
    return found[-1]
