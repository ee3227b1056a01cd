"""The merge by field of one task that is on both sides: what each side changed since they last agreed.

    merge(ours, theirs, base, ours_at, theirs_at) -> Merged(fields, met, lost_here, lost_there)

A field changed on one side takes that side's value; a field changed on both
sides, differently, keeps the newer side's value (ours_at: our change log's
newest entry; theirs_at: LAST-MODIFIED, trusted only up to now, see remote.py)
and names the field, so the caller puts the other value in the change log.
Pure: it reads and writes nothing.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from planner.sync.remote import SYNCED


@dataclass
class Merged:
    """The fields both sides will hold, and where they met."""

    fields: dict[str, Any]
    met: list[str] = field(default_factory=list)  # changed on both sides, differently
    lost_here: list[str] = field(default_factory=list)  # ours gave way (theirs was newer)
    lost_there: list[str] = field(default_factory=list)  # theirs gave way


def merge(
    ours: dict[str, Any], theirs: dict[str, Any], base: dict[str, Any], ours_at: dt.datetime, theirs_at: dt.datetime
) -> Merged:
    """Merge two versions of the synced fields against what both sides agreed on (`base`, {} when unknown)."""
    out = Merged({})
    for k in SYNCED:
        a, b, was = ours.get(k), theirs.get(k), base.get(k, ours.get(k) if base else None)
        if a == b or b == was:
            out.fields[k] = a
        elif a == was:
            out.fields[k] = b
        else:  # changed on both sides, differently: the newer side's value
            newer_theirs = theirs_at > ours_at
            out.fields[k] = b if newer_theirs else a
            (out.lost_here if newer_theirs else out.lost_there).append(k)
            out.met.append(k)
    return out
