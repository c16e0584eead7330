"""The search context answers constraints from positions in capture order
(finegrain.album.engine.photo_order): the same photos as the store's own SQL (``select_ids``) and the
tools' time filter on random filters, the same ranking as a plain sort by (local time, id) with
undated photos last, each constraint read from the store once, and the same search answers as
the constraint-by-constraint path."""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from finegrain.album.bench.synthetic import build_synthetic_catalog
from finegrain.album.engine import search as engine
from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.catalog.store import PhotoFilter
from finegrain.album.engine.photo_order import OrderedIds, SizedLRU
from finegrain.album.engine.plan.records import TimeRange
from finegrain.album.engine.records import Photo
from finegrain.album.engine.search import SearchContext, search
from finegrain.album.engine.tools import time_filter

QUERIES = (
    "photos from 2023", "2023年的照片", "photos in Hangzhou", "杭州的照片", "winter 2022", "spring in Hangzhou",
    "photos in Hangzhou in 2021", "2021年在杭州的照片", "summer", "photos from last year", "photos in Gongshu District",
    "December 2024", "weekend photos in 2023", "photos at night", "photos in Paris", "photos from 2031",
)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cache") / "synthetic.sqlite"
    build_synthetic_catalog(path, 600, seed=3)
    with open_catalog(path) as store:  # undated photos, which rank last by id
        for pid in ("zz-undated.jpg", "00-undated.jpg", "mm-undated.jpg"):
            store.put_photo(Photo(id=pid, path=pid))
        # two photos taken in the same second: the tie is broken by id
        t = datetime(2022, 5, 1, 10, 0, 0, tzinfo=timezone(timedelta(hours=8)))
        for pid in ("tie-b.jpg", "tie-a.jpg"):
            store.put_photo(Photo(id=pid, path=pid, taken_at=t, tz="+08:00"))
    return path


def _reference_order(store) -> list[str]:  # noqa: ANN001
    photos = list(store.iter_photos())
    dated = sorted((p for p in photos if p.taken_at is not None),
                   key=lambda p: (p.local_time.replace(microsecond=0), p.id))
    return [p.id for p in dated] + sorted(p.id for p in photos if p.taken_at is None)


def _random_range(rng: random.Random) -> TimeRange:
    kind = rng.randrange(4)
    a = date(2018, 1, 1) + timedelta(days=rng.randrange(365 * 8))
    b = a + timedelta(days=rng.randrange(1, 400))
    if kind == 0:
        return TimeRange(a, b, "span", "test")
    if kind == 1:  # every year, possibly wrapping the year end
        return TimeRange(a, a + timedelta(days=rng.randrange(1, 120)), "season", "test", every_year=True)
    if kind == 2:
        first, last = rng.randrange(24), rng.randrange(24)
        return TimeRange(a, b, "hours", "test", hours=(first, last))
    return TimeRange(a, b, "weekend", "test", weekdays=(5, 6))


def test_select_equals_the_store_and_the_time_filter_on_random_filters(catalog: Path) -> None:
    rng = random.Random(7)
    with open_catalog(catalog, create=False) as store:
        ctx = SearchContext(store)
        places = [(level, name) for level, name, _ in store.place_names()]
        people = [p.id for p in store.people()]
        tags = sorted({t for pid in store.photo_ids()[:200] for t in store.get_time_tags(pid)})
        events = [e.id for e in store.events()]
        assert places and people and tags
        checked = nonempty = 0
        for _ in range(300):
            kw: dict = {}
            if rng.random() < 0.6:
                kw["places"] = rng.sample(places, rng.choice((1, 1, 2)))
                if rng.random() < 0.2:  # a bare name matches it at any level
                    kw["places"] = [kw["places"][0][1]]
            if rng.random() < 0.4:
                kw["people"] = rng.sample(people, rng.choice((1, 1, 2)))
            if rng.random() < 0.2:
                kw["tags"] = [rng.choice(tags)]
            if events and rng.random() < 0.1:
                kw["event_id"] = rng.choice(events)
            if rng.random() < 0.4:
                start = datetime(2018, 1, 1) + timedelta(hours=rng.randrange(24 * 365 * 8))
                kw["start"] = start if rng.random() < 0.8 else None
                kw["end"] = start + timedelta(days=rng.randrange(0, 700)) if rng.random() < 0.8 else None
            ranges = [_random_range(rng) for _ in range(rng.choice((0, 0, 1, 2)))]
            where = PhotoFilter(**kw)
            got = ctx.select_ids(where, ranges)
            expected = store.select_ids(where)
            by_time = time_filter(store, ranges)
            if by_time is not None:
                expected = by_time if expected is None else expected & by_time
            if expected is None:
                assert got is None
                continue
            assert isinstance(got, OrderedIds)
            assert set(got) == expected, (where, ranges)
            assert len(got) == len(expected)
            checked += 1
            nonempty += bool(expected)
        assert checked > 200 and nonempty > 60


def test_the_time_order_is_local_time_then_id_with_undated_photos_last(catalog: Path) -> None:
    with open_catalog(catalog, create=False) as store:
        ctx = SearchContext(store)
        reference = _reference_order(store)
        undated = reference[reference.index("00-undated.jpg"):]
        assert undated == sorted(undated) and undated[-1] == "zz-undated.jpg" and "mm-undated.jpg" in undated
        assert reference.index("tie-a.jpg") + 1 == reference.index("tie-b.jpg")
        assert list(ctx.order.ids) == reference
        rng = random.Random(1)
        for size in (0, 1, 5, 100, len(reference)):
            ids = set(rng.sample(reference, size)) | ({"not-in-catalog.jpg"} if size == 5 else set())
            ranked = ctx.time_ranked(ids)()
            expected = [pid for pid in reference if pid in ids] + sorted(ids - set(reference))
            assert [pid for pid, _ in ranked] == expected
            n = len(expected)
            assert [s for _, s in ranked] == [1.0 - i / n for i in range(n)]
            for k in (0, 1, 3, n + 5):
                assert ctx.time_ranked(ids).head(k) == ranked[:k]


def test_ordered_ids_behave_as_a_set(catalog: Path) -> None:
    with open_catalog(catalog, create=False) as store:
        ctx = SearchContext(store)
        some = set(store.photo_ids()[::7])
        o = ctx.time_ranked(some | {"ghost.jpg"})
        assert len(o) == len(some) + 1 and "ghost.jpg" in o
        assert all(pid in o for pid in some) and "tie-a.jpg" not in o - some and 3 not in o  # type: ignore[operator]
        assert o == some | {"ghost.jpg"} and frozenset(some | {"ghost.jpg"}) == o
        assert (o & {"ghost.jpg", "nope"}) == {"ghost.jpg"} and isinstance(o & some, frozenset)
        assert sorted(o) == sorted(some | {"ghost.jpg"})


def test_each_constraint_is_read_once_and_wordings_answer_alike(catalog: Path) -> None:
    with open_catalog(catalog, create=False) as store:
        ctx = SearchContext(store)
        calls: list[tuple] = []
        real = store.ids_at_place

        def counting(name, level=None):  # noqa: ANN001, ANN202
            calls.append((name, level))
            return real(name, level)

        store.ids_at_place = counting  # type: ignore[method-assign]
        try:
            answers = [search(store, q, context=ctx) for q in ("photos in Hangzhou in 2021", "2021年在杭州的照片",
                                                                 "photos in Hangzhou", "杭州的照片")]
        finally:
            del store.ids_at_place
        assert len(calls) == 1, calls  # four queries, one place: read once
        assert answers[0].photo_ids == answers[1].photo_ids and answers[0].photo_ids
        assert answers[0].ranked == answers[1].ranked
        assert answers[0].photo_ids <= answers[2].photo_ids and answers[2].photo_ids == answers[3].photo_ids


def test_the_fast_path_answers_as_the_constraint_by_constraint_path(catalog: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    with open_catalog(catalog, create=False) as store:
        fast = [search(store, q, context=SearchContext(store)) for q in QUERIES]
        monkeypatch.setattr(engine, "_one_query", lambda *a: None)
        slow = [search(store, q, context=SearchContext(store)) for q in QUERIES]
    assert sum(bool(r.photo_ids) for r in fast) >= 8
    for q, a, b in zip(QUERIES, fast, slow, strict=True):
        assert a.abstained == b.abstained and a.outcome == b.outcome, q
        assert set(a.photo_ids) == set(b.photo_ids), q
        assert a.ranked == b.ranked, q
        assert a.head(4) == b.ranked[:4] and b.head(4) == a.ranked[:4], q


def test_the_memory_is_bounded_by_photo_ids() -> None:
    lru: SizedLRU[str, frozenset[str]] = SizedLRU(10)
    lru.put("a", frozenset("abcd"), 4)
    lru.put("b", frozenset("efgh"), 4)
    assert lru.get("a") == (True, frozenset("abcd"))  # a is now the most recent
    lru.put("c", frozenset("ijk"), 3)  # 11 > 10: the least recent (b) goes
    assert lru.get("b") == (False, None) and lru.get("a")[0] and lru.get("c")[0]
    lru.put("huge", frozenset(), 11)  # larger than the whole memory: not kept, nothing evicted
    assert lru.get("huge") == (False, None) and lru.get("a")[0]
