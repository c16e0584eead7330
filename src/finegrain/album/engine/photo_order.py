"""The album's photos in capture order, and sets of photos as sorted positions in that order.

Search answers a metadata query ("photos in Hangzhou in 2019") with a set of photos ranked by
capture time, oldest first. On a 100,000-photo album such a set holds tens of thousands of
ids; building it as Python strings, hashing it and sorting it by time cost more than planning
the query. Here every photo gets its position in one capture order, computed once per catalog
state (:class:`PhotoOrder`):

* dated photos by local capture time (to the second), ties by their row in
  :class:`~finegrain.album.engine.tools.PhotoTimes` (the catalog's id order), then
* undated photos by id.

A set of photos is then a sorted array of positions (:class:`OrderedIds`): ranking it by
time is the array itself, its first ``k`` are its first ``k`` entries, a date range
``[start, end)`` is one contiguous run of positions (two binary searches), and a
constraint (a place, a person, a time tag, an event) is the store's id set for it turned
into positions once and kept (:class:`ConstraintIndex`). Intersections and unions are numpy
operations on those arrays. Ids become strings only for the photos shown.

:meth:`ConstraintIndex.select` answers a :class:`~finegrain.album.engine.catalog.store.PhotoFilter`
with exactly the photos ``store.select_ids`` returns (tested against it on random filters).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

from finegrain.album.engine.catalog.store import CatalogStore, PhotoFilter

if TYPE_CHECKING:
    from finegrain.album.engine.plan.records import TimeRange
    from finegrain.album.engine.tools import PhotoTimes

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_EMPTY = np.zeros(0, dtype=np.int64)


class SizedLRU(Generic[K, V]):
    """A least-recently-used map bounded by the total ``size`` of its values (photo ids held)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._data: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._held = 0

    def get(self, key: K) -> tuple[bool, V | None]:
        entry = self._data.get(key)
        if entry is None:
            return False, None
        self._data.move_to_end(key)
        return True, entry[0]

    def put(self, key: K, value: V, size: int) -> None:
        if size > self.capacity:
            return
        old = self._data.pop(key, None)
        self._held -= old[1] if old else 0
        self._data[key] = (value, size)
        self._held += size
        while self._held > self.capacity:
            _, (_, n) = self._data.popitem(last=False)
            self._held -= n


def _seconds(t: datetime) -> int:
    """Local wall-clock seconds, as :class:`PhotoTimes` counts them (offset and microseconds dropped)."""
    return t.toordinal() * 86400 + t.hour * 3600 + t.minute * 60 + t.second


def _midnight(d: date) -> datetime:
    return datetime(d.year, d.month, d.day)


class PhotoOrder:
    """Every photo of one catalog state at its position in capture order (see the module docstring)."""

    def __init__(self, dated_ids: Iterable[str], seconds: np.ndarray, all_ids: Iterable[str]) -> None:
        """``dated_ids`` with their local ``seconds`` (in the order of ``PhotoTimes``), and every
        photo id of the catalog (the undated ones go last, by id)."""
        dated = tuple(dated_ids)
        secs = np.asarray(seconds, dtype=np.int64)
        by_time = np.argsort(secs, kind="stable")  # stable: ties keep the PhotoTimes (id) order
        known = set(dated)
        undated = sorted(pid for pid in all_ids if pid not in known)
        self.ids: tuple[str, ...] = tuple(dated[i] for i in by_time.tolist()) + tuple(undated)
        self.n_dated = len(dated)
        self.seconds = secs[by_time]  # ascending: the dated positions' times
        self.of_time_row = np.empty(len(dated), dtype=np.int64)  # PhotoTimes row -> position
        self.of_time_row[by_time] = np.arange(len(dated), dtype=np.int64)
        self.position: dict[str, int] = {pid: i for i, pid in enumerate(self.ids)}

    @classmethod
    def from_times(cls, times: Any, store: CatalogStore) -> PhotoOrder:
        return cls(times.ids, times.seconds, store.photo_ids())

    def __len__(self) -> int:
        return len(self.ids)

    def positions(self, ids: Iterable[str]) -> tuple[np.ndarray, tuple[str, ...]]:
        """(sorted positions of the ``ids`` this order knows, the unknown ones sorted)."""
        if not isinstance(ids, list | tuple | set | frozenset):
            ids = list(ids)
        try:  # the common case, every id known: one C-level pass
            arr = np.fromiter(map(self.position.__getitem__, ids), dtype=np.int64, count=len(ids))
        except KeyError:
            pass
        else:
            arr.sort()
            return (arr if isinstance(ids, set | frozenset) else np.unique(arr)), ()
        get = self.position.get
        found: list[int] = []
        unknown: list[str] = []
        for pid in ids:
            i = get(pid)
            if i is None:
                unknown.append(pid)
            else:
                found.append(i)
        arr = np.unique(np.fromiter(found, dtype=np.int64, count=len(found)))
        return arr, tuple(sorted(set(unknown)))

    def time_span(self, start: datetime | None, end: datetime | None) -> tuple[int, int]:
        """Positions ``[lo, hi)`` of the photos taken in ``[start, end)`` (None: open side)."""
        lo = 0 if start is None else int(np.searchsorted(self.seconds, _seconds(start), side="left"))
        hi = self.n_dated if end is None else int(np.searchsorted(self.seconds, _seconds(end), side="left"))
        return lo, max(lo, hi)

    def of(self, ids: Iterable[str]) -> OrderedIds:
        """Any id collection as an :class:`OrderedIds` (ids unknown to this order go last, by id)."""
        if isinstance(ids, OrderedIds) and ids.order is self:
            return ids
        positions, unknown = self.positions(ids)
        return OrderedIds(self, positions, unknown)


class OrderedIds(AbstractSet[str]):
    """A set of photo ids held as sorted positions in a :class:`PhotoOrder`; iterates in capture
    order. Calling it gives the ranked list ``[(id, 1 - rank / n)]`` (oldest first, undated and
    then unknown ids last by id); :meth:`head` gives its first ``k`` without building the rest."""

    __slots__ = ("order", "rows", "unknown")

    def __init__(self, order: PhotoOrder, rows: np.ndarray, unknown: tuple[str, ...] = ()) -> None:
        self.order = order
        self.rows = rows
        self.unknown = unknown

    @classmethod
    def _from_iterable(cls, it: Iterable[Any]) -> frozenset[Any]:  # results of &, |, - are plain sets
        return frozenset(it)

    def __len__(self) -> int:
        return len(self.rows) + len(self.unknown)

    def __contains__(self, pid: object) -> bool:
        i = self.order.position.get(pid) if isinstance(pid, str) else None
        if i is None:
            return pid in self.unknown
        k = int(np.searchsorted(self.rows, i))
        return k < len(self.rows) and int(self.rows[k]) == i

    def __iter__(self) -> Iterator[str]:
        yield from map(self.order.ids.__getitem__, self.rows.tolist())
        yield from self.unknown

    def __repr__(self) -> str:
        return f"OrderedIds({len(self)} photos)"

    def head(self, k: int | None) -> list[tuple[str, float]]:
        """The first ``k`` (all when None) of the ranked list."""
        n = len(self)
        k = n if k is None else max(0, min(k, n))
        ids = [self.order.ids[i] for i in self.rows[:k].tolist()]
        if len(ids) < k:
            ids.extend(self.unknown[: k - len(ids)])
        return list(zip(ids, (1.0 - np.arange(k) / n).tolist())) if n else []

    def __call__(self) -> list[tuple[str, float]]:
        return self.head(None)


def intersect(arrays: list[np.ndarray]) -> np.ndarray:
    """The positions in every one of the sorted ``arrays``."""
    if not arrays:
        return _EMPTY
    arrays = sorted(arrays, key=len)
    out = arrays[0]
    for a in arrays[1:]:
        if not len(out):
            break
        out = out[np.isin(out, a, assume_unique=True)]
    return out


class ConstraintIndex:
    """The positions of each constraint value asked for, from the store's indexed id queries,
    bounded (LRU) by the positions held; answers :class:`PhotoFilter` by array operations."""

    def __init__(self, store: CatalogStore, order: PhotoOrder, times: PhotoTimes,
                 capacity: int = 4_000_000) -> None:
        self.store = store
        self.order = order
        self.times = times
        self._cache: SizedLRU[tuple[str, ...], np.ndarray] = SizedLRU(capacity)

    def _rows(self, key: tuple[str, ...]) -> np.ndarray:
        found, rows = self._cache.get(key)
        if found and rows is not None:
            return rows
        kind, *args = key
        if kind == "place":
            ids = self.store.ids_at_place(args[1], args[0] or None)
        elif kind == "person":
            ids = self.store.ids_with_person(args[0])
        elif kind == "tag":
            ids = self.store.ids_with_tag(args[0])
        else:
            ids = self.store.ids_in_event(args[0])
        rows, _ = self.order.positions(ids)  # every id the store returns is a photo of this state
        rows.setflags(write=False)
        self._cache.put(key, rows, max(1, len(rows)))
        return rows

    def time_rows(self, r: TimeRange) -> np.ndarray:
        """The positions of the photos in ``r``: a plain date range is one run of positions, one
        with ``every_year``, ``hours`` or ``weekdays`` is checked on each photo's time."""
        if not r.every_year and r.hours is None and r.weekdays is None:
            end = None if r.end >= date.max else _midnight(r.end + timedelta(days=1))  # open after 9999-12-31
            lo, hi = self.order.time_span(_midnight(r.start), end)
            return np.arange(lo, hi, dtype=np.int64)
        key = ("time", repr(r))
        found, rows = self._cache.get(key)
        if found and rows is not None:
            return rows
        rows = np.sort(self.order.of_time_row[self.times.mask(r)])
        rows.setflags(write=False)
        self._cache.put(key, rows, max(1, len(rows)))
        return rows

    def select(self, where: PhotoFilter, ranges: Sequence[TimeRange] = ()) -> OrderedIds | None:
        """The photos meeting every constraint of ``where`` and in any of the time ``ranges`` (as
        :func:`~finegrain.album.engine.tools.time_filter` reads them); None when there is no constraint."""
        if not where and not ranges:
            return None
        arrays: list[np.ndarray] = []
        if ranges:
            parts = [self.time_rows(r) for r in ranges]
            arrays.append(parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts)))
        if where.places:
            keys = [("place", *item) if isinstance(item, tuple) else ("place", "", item) for item in where.places]
            parts = [self._rows(("place", level, name.strip())) for _, level, name in keys]
            arrays.append(parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts)))
        arrays.extend(self._rows(("person", p)) for p in where.people)
        arrays.extend(self._rows(("tag", t)) for t in where.tags)
        if where.event_id is not None:
            arrays.append(self._rows(("event", where.event_id)))
        if where.start is not None or where.end is not None:
            lo, hi = self.order.time_span(where.start, where.end)
            if arrays:
                arrays = [a[np.searchsorted(a, lo):np.searchsorted(a, hi)] for a in arrays]
            else:
                arrays = [np.arange(lo, hi, dtype=np.int64)]
        return OrderedIds(self.order, intersect(arrays))
