"""A sync as the settings ask for it (`sync`, `/sync`): every task list they name, one at a time, then the
calendars read as busy time and the plan published; the errors a user can act on, and the report's lines.

The merge of one task list is caldav_sync.Sync. Left out: scheduling syncs (cron or a timer runs
`python agent.py sync`); two syncs of one database never run at once (Store.exclusive).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from planner.policy import Door
from planner.settings import program
from planner.storage.db import Store
from planner.storage.tasks import new_turn
from planner.sync.caldav_sync import Progress, Report, Sync, SyncError
from planner.sync.dav import Dav, DavError, password_for, safe_url
from planner.tools import ToolContext

NO_URL = (
    "no CalDAV task list is set: set PLANNER_CALDAV_URL to its address (and PLANNER_CALDAV_USER, "
    "PLANNER_CALDAV_PASSWORD); see docs/sync.md"
)


def collections(config: Any) -> list[tuple[str, str | None]]:
    """(url, list) for each task list the settings name: the default one, and one per mapped list."""
    out: list[tuple[str, str | None]] = [(config.caldav_url, None)]
    out += [(url, name) for name, url in (config.caldav_lists or {}).items()]
    return out


def sync_config(
    store: Store,
    config: Any,
    today: Callable[[], dt.date] = dt.date.today,
    door: Door | None = None,
    progress: Progress | None = None,
    create: bool = False,
    say: Callable[[str], None] | None = None,
) -> Report:
    """`sync` and /sync: one sync of every task list the settings name; a SyncError when it could not run.

    `say` hears a notice while it waits for another sync of the same database to finish."""
    if not (config.caldav_url or config.caldav_calendars or config.caldav_plan):
        raise SyncError(NO_URL)
    with store.exclusive("sync", wait=0) as free:
        if free:
            return _calendars(store, config, today, door, _sync_all(store, config, today, door, progress, create))
    if say:
        say(f"another sync of this database is running; waiting for it (up to {WAIT_FOR_OTHER:.0f} s)")
    with store.exclusive("sync", wait=WAIT_FOR_OTHER) as mine:
        if not mine:
            raise SyncError("another sync of this database is still running; try again when it has finished")
        return _calendars(store, config, today, door, _sync_all(store, config, today, door, progress, create))


def _calendars(store: Store, config: Any, today: Callable[[], dt.date], door: Door | None, report: Report) -> Report:
    """After the tasks: the busy time from the user's calendars, then the plan's blocks, when the settings name them.
    The sync's door is the calendars' too: its y/N or --yes decides events gone from a calendar, as it does
    to-dos gone from a list."""
    from planner.sync.plan_publish import PublishError, publish, read_calendars
    from planner.tools.plan_tools import hours_of, plan_from

    if not (config.caldav_calendars or config.caldav_plan):
        return report
    asks = {"confirm": door.ask, "yes": door.yes, "how": door.how} if door else {}
    ctx = ToolContext(
        store=store,
        today=today,
        hours=hours_of(config),
        plan_from=plan_from(config) if config.now else None,
        learn_estimates=config.learn_estimates,
        door_name="sync",
        **asks,
    )
    for read in read_calendars(ctx, config, today()):
        report.calendars.append(read.line)
        report.events_kept += read.kept
    if config.caldav_plan:
        try:
            report.calendars.append(publish(ctx, config))
        except PublishError as e:
            report.problems.append(str(e))
    return report


WAIT_FOR_OTHER = 60.0  # seconds a sync waits for another one of the same database


def _sync_all(
    store: Store, config: Any, today: Callable[[], dt.date], door: Door | None, progress: Progress | None, create: bool
) -> Report:
    from planner.sync.dav import credentials

    report = Report()
    if not config.caldav_url:
        return report  # only calendars to read or a plan to publish
    turn = new_turn()
    lists = collections(config)
    others = {name.lower() for _, name in lists if name}
    for url, name in lists:
        user = config.caldav_user or credentials(url)[0]
        dav = Dav(url, user, password_for(user, url, config.caldav_password), deadline=config.caldav_timeout)
        try:
            one = _run_one(store, dav, name, today, door, progress, turn, others, create)
        finally:
            dav.close()
        _add(report, one)
    return report


def sync(store: Store, url: str, user: str | None, password: str | None, **kw: Any) -> Report:
    """One sync with the task list at `url` (sync_config's keywords: today, door, progress, create)."""
    from planner.settings import Config

    return sync_config(store, Config(caldav_url=url, caldav_user=user, caldav_password=password), **kw)


def _run_one(
    store: Store,
    dav: Dav,
    name: str | None,
    today: Callable[[], dt.date],
    door: Door | None,
    progress: Progress | None,
    turn: str,
    others: set[str],
    create: bool,
) -> Report:
    where = dav.url
    try:
        try:
            return Sync(
                store, dav, list_name=name, today=today, door=door, progress=progress, turn=turn, others=others
            ).run()
        except DavError as e:
            if e.kind != "missing" or not create:
                raise
        dav.mkcalendar(name or "Tasks")
        return Sync(
            store, dav, list_name=name, today=today, door=door, progress=progress, turn=turn, others=others
        ).run()
    except DavError as e:
        if e.kind == "auth":
            raise SyncError(
                f"the CalDAV server at {where} refused the user name or password; check "
                "PLANNER_CALDAV_USER and PLANNER_CALDAV_PASSWORD; nothing was changed"
            ) from None
        if e.kind == "missing":
            raise SyncError(
                f"there is no task list at {where}; create it with `{program()} sync --create`, "
                "or check PLANNER_CALDAV_URL; nothing was changed",
                missing=True,
            ) from None
        raise SyncError(f"{e}; nothing more was changed") from None


def _add(total: Report, one: Report) -> None:
    for name in ("sent", "received", "deleted_here", "deleted_there"):
        setattr(total, name, getattr(total, name) + getattr(one, name))
    for name in ("merged", "conflicts", "kept", "problems", "notes"):
        getattr(total, name).extend(getattr(one, name))


def report_lines(config: Any, report: Report) -> list[str]:
    """The report as lines for the user."""
    lines = [f"synced with {safe_url(config.caldav_url)}: {report.line()}"] if config.caldav_url else []
    lines += report.calendars
    lines += [f"  {k}" for k in report.kept]
    lines += [f"  note: {n}" for n in report.notes]
    lines += [f"  not synced: {p}" for p in report.problems]
    return lines
