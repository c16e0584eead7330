"""The search context remembers the photo sets of constraint combinations and their time orders:
two wordings of one query (English and Chinese) ask the catalog once, the answers are the same as
without the context's memory, and the memory stays within its bound of photo ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from finegrain.album import engine
from finegrain.album.catalog import open_catalog
from finegrain.album.engine import SearchContext, _SizedLRU, search
from finegrain.album.synthetic import build_synthetic_catalog


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cache") / "synthetic.sqlite"
    build_synthetic_catalog(path, 600, seed=3)
    return path


def test_two_wordings_ask_the_catalog_once_and_answer_alike(catalog: Path) -> None:
    with open_catalog(catalog, create=False) as store:
        ctx = SearchContext(store)
        fresh = [search(store, q, context=SearchContext(store)) for q in ("photos from 2023", "2023年的照片")]
        calls: list[object] = []
        real = store.select_ids

        def counting(where):  # noqa: ANN001, ANN202
            calls.append(where)
            return real(where)

        store.select_ids = counting  # type: ignore[method-assign]
        try:
            remembered = [search(store, q, context=ctx) for q in ("photos from 2023", "2023年的照片")]
        finally:
            del store.select_ids
        assert len(calls) == 1, calls  # the second wording reused the first one's set
        for a, b in zip(fresh, remembered, strict=True):
            assert a.photo_ids == b.photo_ids and a.photo_ids
            assert a.ranked == b.ranked
        assert remembered[0].ranked is remembered[1].ranked  # one time order, shared


def test_the_memory_is_bounded_by_photo_ids() -> None:
    lru: _SizedLRU[str, frozenset[str]] = _SizedLRU(10)
    lru.put("a", frozenset("abcd"), 4)
    lru.put("b", frozenset("efgh"), 4)
    assert lru.get("a") == (True, frozenset("abcd"))  # a is now the most recent
    lru.put("c", frozenset("ijk"), 3)  # 11 > 10: the least recent (b) goes
    assert lru.get("b") == (False, None) and lru.get("a")[0] and lru.get("c")[0]
    lru.put("huge", frozenset(), 11)  # larger than the whole memory: not kept, nothing evicted
    assert lru.get("huge") == (False, None) and lru.get("a")[0]
    assert engine.CACHED_IDS >= 100_000
