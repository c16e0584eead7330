"""Events: photos chained in time (PhotoBench Section 3.1.2).

The paper: "Photos exhibiting temporal proximity within a definable window form
an event cluster. In our implementation, we utilize an adaptive 4-hour window
with a minimum cluster size of 3 images." It does not define "adaptive"
further. Here it means:

1. Photos with a time are sorted by (time, photo id).
2. A photo joins the current event when it was taken at most ``window_hours``
   after the *previous photo* of the event (not after the event's first photo):
   the window slides with the event, so an event's length adapts to how the
   person keeps shooting. A day of sightseeing with a photo every hour is one
   event; a gap longer than the window starts a new one. This is single-linkage
   clustering on the time axis with cut-off ``window_hours``.
3. Chains of fewer than ``min_photos`` photos are not events; their photos get
   no event id, and neither do photos without a time.

An event's id is ``ev-YYYYMMDD-HHMM`` from its first photo's time as written
(its own wall-clock time), with ``-2``, ``-3`` ... appended in time order if
two events would share an id (possible only with a window under a minute).

Times must be all naive or all time-zone aware; aware times are compared as
instants, and the id uses each first photo's own wall-clock time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta

from finegrain.errors import FinegrainError

__all__ = ["cluster_events", "event_id"]


def event_id(first: datetime) -> str:
    """The id of an event that starts at ``first``: ``ev-20251004-1640``."""
    return first.strftime("ev-%Y%m%d-%H%M")


def cluster_events(
    times: Sequence[tuple[str, datetime | None]],
    *,
    window_hours: float = 4.0,
    min_photos: int = 3,
) -> dict[str, str]:
    """Photo id -> event id for every photo in an event (see the module docstring).

    ``times`` are ``(photo id, capture time or None)`` pairs in any order; ids
    must be unique. Photos in no event are absent from the result.
    """
    if isinstance(window_hours, bool) or not isinstance(window_hours, (int, float)) or not (
        window_hours >= 0 and math.isfinite(window_hours)
    ):
        raise FinegrainError(f"window_hours must be a non-negative number, got {window_hours!r}", "the paper uses 4.0")
    if isinstance(min_photos, bool) or not isinstance(min_photos, int) or min_photos < 1:
        raise FinegrainError(f"min_photos must be a positive integer, got {min_photos!r}", "the paper uses 3")
    seen: set[str] = set()
    timed: list[tuple[datetime, str]] = []
    aware: bool | None = None
    for pid, t in times:
        if pid in seen:
            raise FinegrainError(f"photo id {pid!r} is listed twice", "pass each photo once")
        seen.add(pid)
        if t is None:
            continue
        if not isinstance(t, datetime):
            raise FinegrainError(f"time of photo {pid!r} is not a datetime: {t!r}", "pass a datetime or None")
        is_aware = t.tzinfo is not None and t.utcoffset() is not None
        if aware is None:
            aware = is_aware
        elif aware != is_aware:
            raise FinegrainError(
                f"photo {pid!r} has a {'time-zone aware' if is_aware else 'naive'} time among "
                f"{'aware' if aware else 'naive'} ones: {t.isoformat()}",
                "make all times naive local times, or all aware (e.g. t.replace(tzinfo=None))",
            )
        timed.append((t, pid))
    timed.sort()
    window = timedelta(hours=window_hours)

    chains: list[list[tuple[datetime, str]]] = []
    for item in timed:
        if chains and item[0] - chains[-1][-1][0] <= window:
            chains[-1].append(item)
        else:
            chains.append([item])

    result: dict[str, str] = {}
    used: dict[str, int] = {}
    for chain in chains:
        if len(chain) < min_photos:
            continue
        base = event_id(chain[0][0])
        used[base] = used.get(base, 0) + 1
        eid = base if used[base] == 1 else f"{base}-{used[base]}"
        for _, pid in chain:
            result[pid] = eid
    return result
