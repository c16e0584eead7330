"""Events by adaptive temporal clustering (PhotoBench 3.1.2: 4-hour window, at least 3 photos)."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from finegrain.album.engine.profile.events import cluster_events
from finegrain.errors import FinegrainError
from finegrain.io.photobench import read_album

T0 = datetime(2025, 10, 4, 16, 40, 41)


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def test_chain_within_window_is_one_event_even_if_longer_than_window() -> None:
    times = [("a", at(0)), ("b", at(3.5)), ("c", at(7.0)), ("d", at(10.9))]  # each gap < 4 h, span 10.9 h
    assert cluster_events(times) == {p: "ev-20251004-1640" for p in "abcd"}


def test_gap_splits_and_exact_window_chains() -> None:
    times = [("a", at(0)), ("b", at(1)), ("c", at(5)),  # gap of exactly 4 h chains
             ("d", at(9.01)), ("e", at(9.5)), ("f", at(10))]  # gap 4.01 h splits
    ev = cluster_events(times)
    assert ev["a"] == ev["b"] == ev["c"] == "ev-20251004-1640"
    assert ev["d"] == ev["e"] == ev["f"] == "ev-20251005-0141"


def test_small_chains_and_untimed_photos_are_in_no_event() -> None:
    times = [("a", at(0)), ("b", at(1)),  # a chain of 2: no event
             ("c", at(30)), ("d", at(30.1)), ("e", at(30.2)),
             ("x", None), ("y", None)]
    assert cluster_events(times) == {"c": "ev-20251005-2240", "d": "ev-20251005-2240", "e": "ev-20251005-2240"}
    assert cluster_events(times, min_photos=2)["a"] == "ev-20251004-1640"
    assert cluster_events([("x", None)]) == {}
    assert cluster_events([]) == {}


def test_window_parameter() -> None:
    times = [("a", at(0)), ("b", at(1.5)), ("c", at(3)), ("d", at(4.5))]
    assert len(set(cluster_events(times).values())) == 1
    assert cluster_events(times, window_hours=1.0) == {}


def test_order_does_not_matter() -> None:
    rng = random.Random(7)
    times = [(f"p{i}", at(rng.uniform(0, 200)) if i % 9 else None) for i in range(300)]
    want = cluster_events(times)
    for _ in range(5):
        rng.shuffle(times)
        assert cluster_events(times) == want


def test_same_minute_ids_are_made_unique() -> None:
    times = [(c, T0 + timedelta(seconds=i)) for i, c in enumerate("abcdef")]
    ev = cluster_events(times, window_hours=0.0)  # nothing chains
    assert ev == {}
    ev = cluster_events(times, window_hours=1 / 3600, min_photos=1)  # one chain
    assert set(ev.values()) == {"ev-20251004-1640"}
    m = T0.replace(second=0)
    split = [("a", m), ("b", m + timedelta(seconds=10)), ("c", m + timedelta(seconds=20))]
    assert cluster_events(split, window_hours=1 / 3600 / 2, min_photos=1) == {
        "a": "ev-20251004-1640", "b": "ev-20251004-1640-2", "c": "ev-20251004-1640-3",
    }


def test_aware_times_and_bad_input() -> None:
    cst = timezone(timedelta(hours=8))
    aware = [("a", T0.replace(tzinfo=cst)), ("b", at(1).replace(tzinfo=UTC) - timedelta(hours=8)), ("c", at(2).replace(tzinfo=cst))]
    assert len(set(cluster_events(aware).values())) == 1
    with pytest.raises(FinegrainError, match="naive"):
        cluster_events([("a", T0), ("b", T0.replace(tzinfo=cst))])
    with pytest.raises(FinegrainError, match="twice"):
        cluster_events([("a", T0), ("a", T0)])
    with pytest.raises(FinegrainError, match="window_hours"):
        cluster_events([], window_hours=-1)
    with pytest.raises(FinegrainError, match="min_photos"):
        cluster_events([], min_photos=0)


def test_album1_events(data_root: Path) -> None:
    folder = data_root / "photobench" / "album1"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found")
    album = read_album(folder)
    times = [(p.id, p.time) for p in album.photos.values()]
    ev = cluster_events(times)
    sizes = Counter(ev.values())
    print(f"\nalbum1: {len(sizes)} events covering {len(ev)} of {len(times)} photos; largest {sizes.most_common(3)}")
    assert all(n >= 3 for n in sizes.values())
    assert not any(album.photos[p].time is None for p in ev)
    assert 50 <= len(sizes) <= 200  # 1,069 photos over 2018-2025
    assert 0.7 * 1056 <= len(ev) <= 1056  # most photos belong to some event
    # every event's consecutive photos are at most 4 h apart, consecutive events more than 4 h
    by_event: dict[str, list[datetime]] = {}
    for p, e in ev.items():
        by_event.setdefault(e, []).append(album.photos[p].time)
    spans = sorted((min(ts), max(ts)) for ts in by_event.values())
    for ts in by_event.values():
        ts.sort()
        assert all(b - a <= timedelta(hours=4) for a, b in zip(ts, ts[1:]))
    assert all(b[0] - a[1] > timedelta(hours=4) for a, b in zip(spans, spans[1:]))
