"""What one sync did, counted by direction (Report), and the error that stops a sync before anything changed
(SyncError). Shared by caldav_sync.py, writes.py and runner.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class SyncError(Exception):
    """The sync could not run (server unreachable, refused, not a task list); nothing was lost."""

    def __init__(self, message: str, missing: bool = False):
        super().__init__(message)
        self.missing = missing  # the task list is not there: `sync --create` makes it


@dataclass
class Report:
    """What one sync did, counted by direction."""

    sent: int = 0
    received: int = 0
    deleted_here: int = 0
    deleted_there: int = 0
    merged: list[str] = field(default_factory=list)  # tasks changed on both sides, and which fields met
    conflicts: list[str] = field(default_factory=list)  # fields changed on both sides: whose value was kept
    kept: list[str] = field(default_factory=list)  # deletions (or UID changes) not made (no yes): why, once
    problems: list[str] = field(default_factory=list)  # to-dos skipped this time, one line each
    notes: list[str] = field(default_factory=list)  # what the user should know; nothing was skipped for it
    calendars: list[str] = field(default_factory=list)  # the busy time read, and the plan published
    events_kept: int = 0  # events gone from a calendar and kept here, for want of a yes

    def line(self) -> str:
        """The report in one line for the user."""
        text = (
            f"sent {self.sent}, received {self.received}, deleted {self.deleted_there} there "
            f"and {self.deleted_here} here"
        )
        if self.merged:
            text += f"; merged {len(self.merged)} changed on both sides ({'; '.join(self.merged)})"
        if self.conflicts:
            text += f"; {len(self.conflicts)} changed on both sides, the newer kept ({'; '.join(self.conflicts)})"
        return text
