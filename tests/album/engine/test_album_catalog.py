"""The album catalog, on both stores (SQLite and Postgres with pgvector, the ``catalog_target`` fixture):
round trips, filters, people naming, transactions, schema checks, and the two stores agreeing."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from finegrain.album.bench.synthetic import build_synthetic_catalog
from finegrain.album.engine.catalog import CatalogStore, PhotoFilter, SqliteCatalog, open_catalog
from finegrain.album.engine.catalog.sqlite import SCHEMA_VERSION
from finegrain.album.engine.indexer import Profiler
from finegrain.album.engine.records import FaceOccurrence, Person, Photo, PhotoPlace
from finegrain.errors import FinegrainError, UnknownNameError

CST = timezone(timedelta(hours=8))
KEQIAO = PhotoPlace(
    country_en="China", country_zh="中国", province_en="Zhejiang", province_zh="浙江省",
    city_en="Shaoxing", city_zh="绍兴市", district_en="Keqiao District", district_zh="柯桥区", country_code="CN",
    aliases=(("district", "keqiao"), ("district", "柯桥")),
)
PARIS = PhotoPlace(country_en="France", city_en="Paris", country_code="FR")


@pytest.fixture
def store(catalog_target):
    with open_catalog(catalog_target) as s:
        yield s


def _photos() -> list[Photo]:
    return [
        Photo("a.jpg", "/p/a.jpg", 10, 1.0, "aa", datetime(2023, 3, 1, 9, 0, tzinfo=CST), "+08:00", 30.1, 120.5,
              "Apple iPhone 13", 640, 480, "a red boat", ("boat", "lake")),
        Photo("b.jpg", "/p/b.jpg", 20, 2.0, "bb", datetime(2023, 3, 31, 23, 30), None, 48.85, 2.35),
        Photo("c.jpg", "/p/c.jpg", 30, 3.0, "cc", None, None, None, None),
    ]


def test_is_a_catalog_store_in_wal_mode_or_with_pgvector_columns(store, catalog_target):
    assert isinstance(store, CatalogStore)
    if isinstance(store, SqliteCatalog):
        mode = sqlite3.connect(catalog_target).execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"
    else:
        kinds = dict(store._all("SELECT table_name || '.' || column_name, udt_name FROM information_schema.columns "
                                "WHERE udt_name = 'vector'"))
        assert kinds == {"embeddings.vector": "vector", "faces.embedding": "vector"}
    assert store.get_meta("schema_version") == SCHEMA_VERSION


def test_photo_round_trip_keeps_every_field(store):
    for p in _photos():
        store.put_photo(p)
    assert list(store.iter_photos()) == _photos()
    got = store.get_photo("a.jpg")
    assert got.taken_at.utcoffset() == timedelta(hours=8) and got.local_time == datetime(2023, 3, 1, 9, 0)
    assert store.find_by_path("/p/b.jpg").id == "b.jpg"
    assert store.get_photo("nope") is None and store.count_photos() == 3


def test_time_filter_uses_local_wall_clock_time(store):
    for p in _photos():
        store.put_photo(p)
    march = store.ids_taken_between(datetime(2023, 3, 1), datetime(2023, 4, 1))
    assert march == {"a.jpg", "b.jpg"}  # c has no time; a is 09:00 local although 01:00 UTC
    assert store.ids_taken_between(datetime(2023, 3, 1, 9, 0), None) == {"a.jpg", "b.jpg"}
    assert store.ids_taken_between(None, datetime(2023, 3, 1, 9, 0)) == set()
    assert store.latest_time() == datetime(2023, 3, 31, 23, 30)


def test_places_are_shared_and_matched_by_any_name_or_alias(store):
    for p in _photos():
        store.put_photo(p)
    store.set_place("a.jpg", KEQIAO)
    store.set_place("b.jpg", PARIS)
    assert store.get_place("a.jpg") == KEQIAO
    assert store.ids_at_place("柯桥区") == {"a.jpg"}
    assert store.ids_at_place("keqiao district") == {"a.jpg"}  # case-insensitive
    assert store.ids_at_place("柯桥", level="district") == {"a.jpg"}
    assert store.ids_at_place("柯桥", level="city") == set()
    assert store.ids_at_place("paris") == {"b.jpg"}
    names = {(lv, n): c for lv, n, c in store.place_names()}
    assert names[("province", "浙江省")] == 1 and names[("city", "paris")] == 1
    store.set_place("a.jpg", None)
    assert store.get_place("a.jpg") is None and store.ids_at_place("柯桥区") == set()
    with pytest.raises(FinegrainError, match="level"):
        store.ids_at_place("x", level="street")
    with pytest.raises(FinegrainError, match="'zzz.jpg'"):
        store.set_place("zzz.jpg", PARIS)


def test_time_tags(store):
    store.put_photo(_photos()[0])
    store.set_time_tags("a.jpg", ["season:spring", "year:2023", "season:spring"])
    assert store.get_time_tags("a.jpg") == ("season:spring", "year:2023")
    assert store.ids_with_tag("season:spring") == {"a.jpg"}


def test_faces_people_naming_and_me(store):
    for p in _photos():
        store.put_photo(p)
    embs = [np.arange(128, dtype=np.float32), None]
    store.set_faces("a.jpg", [FaceOccurrence("a.jpg", None, (1, 5, 6, 2), 0), FaceOccurrence("a.jpg", None, None, 1)], embs)
    store.set_faces("b.jpg", [FaceOccurrence("b.jpg", None, (3, 9, 9, 3), 0)], [np.ones(128, np.float32)])
    keys, matrix = store.face_embeddings()
    assert keys == [("a.jpg", 0), ("b.jpg", 0)] and matrix.shape == (2, 128) and matrix[0, 5] == 5.0
    store.put_person(Person("p1"))
    store.put_person(Person("p2"))
    store.assign_faces({("a.jpg", 0): "p1", ("b.jpg", 0): "p1", ("a.jpg", 1): "p2"})
    assert store.person_photo_counts() == {"p1": 2, "p2": 1}
    assert store.ids_with_person("p1") == {"a.jpg", "b.jpg"}
    assert store.name_person("p1", ["Mum", " Mom ", "Mum"]) == Person("p1", ("Mum", "Mom"))
    store.set_me("p2")
    store.set_me("p1")
    assert [p for p in store.people() if p.is_me] == [Person("p1", ("Mum", "Mom"), True)]
    with pytest.raises(UnknownNameError, match="did you mean 'p1'"):
        store.name_person("p11", ["x"])
    with pytest.raises(FinegrainError, match="2 faces but 1 embeddings"):
        store.set_faces("a.jpg", [FaceOccurrence("a.jpg", None), FaceOccurrence("a.jpg", None, None, 1)], [None])
    assert store.faces("a.jpg")[0] == FaceOccurrence("a.jpg", "p1", (1, 5, 6, 2), 0)


def test_events_are_replaced_as_a_whole(store):
    for p in _photos():
        store.put_photo(p)
    store.set_events({"a.jpg": "e1", "b.jpg": "e1", "c.jpg": None})
    [event] = store.events()
    assert (event.id, event.n_photos, event.start) == ("e1", 2, datetime(2023, 3, 1, 9, 0))
    assert store.ids_in_event("e1") == {"a.jpg", "b.jpg"}
    store.set_events({"b.jpg": "e2"})
    assert [e.id for e in store.events()] == ["e2"] and store.get_photo("a.jpg").event_id is None


def test_embeddings_round_trip_as_float32(store):
    for p in _photos():
        store.put_photo(p)
    store.put_embedding("b.jpg", "m", np.array([0.6, 0.8], dtype=np.float64))
    store.put_embedding("a.jpg", "m", np.array([1.0, 0.0]))
    ids, matrix = store.get_embeddings("m")
    assert ids == ["a.jpg", "b.jpg"] and matrix.dtype == np.float32
    np.testing.assert_allclose(matrix, [[1, 0], [0.6, 0.8]], rtol=1e-6)
    assert store.embedding_models() == ["m"]
    store.delete_photo("a.jpg")
    assert store.get_embeddings("m")[0] == ["b.jpg"] and store.get_photo("a.jpg") is None


def test_a_failed_transaction_leaves_nothing(store):
    store.put_photo(_photos()[0])
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.put_photo(_photos()[1])
            store.set_place("b.jpg", PARIS)
            raise RuntimeError("stop")
    assert store.photo_ids() == ["a.jpg"] and store.place_names() == []
    store.put_photo(_photos()[1])
    store.set_place("b.jpg", PARIS)  # the rolled-back place row is created again
    assert store.get_place("b.jpg") == PARIS


def test_reopen_keeps_data_and_roots(catalog_target):
    path = catalog_target
    with open_catalog(path) as s:
        s.put_photo(_photos()[0])
        s.add_root("/photos")
        s.add_root("/photos")
        before = s.dump()
    with open_catalog(path, create=False) as s:
        assert s.dump() == before and s.roots() == ["/photos"]


def test_bad_catalog_files_are_refused_with_the_path(tmp_path):
    with pytest.raises(FinegrainError, match="no catalog at"):
        open_catalog(tmp_path / "missing.sqlite", create=False)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(FinegrainError, match="junk.sqlite"):
        SqliteCatalog(junk)
    newer = tmp_path / "newer.sqlite"
    with open_catalog(newer) as s:
        s.set_meta("schema_version", SCHEMA_VERSION + 1)
    with pytest.raises(FinegrainError, match="newer"):
        open_catalog(newer)


def test_filters_use_indexes(tmp_path):
    """The time, place and person filters are index look-ups, not table scans (SQLite; Postgres:
    tests/album/engine/test_album_catalog_postgres.py)."""
    with open_catalog(tmp_path / "c.sqlite") as store:
        _assert_index_plans(store._db)


def _assert_index_plans(db) -> None:  # noqa: ANN001
    plans = {
        "time": "SELECT id FROM photos WHERE taken_local >= '2023' AND taken_local < '2024'",
        "place": "SELECT id FROM photos WHERE place_id IN (SELECT place_id FROM place_names WHERE name='x')",
        "person": "SELECT photo_id FROM faces WHERE person_id='p1'",
        "tag": "SELECT photo_id FROM time_tags WHERE tag='season:summer'",
    }
    for name, sql in plans.items():
        detail = " ".join(r[-1] for r in db.execute("EXPLAIN QUERY PLAN " + sql))
        assert "USING" in detail and "SCAN photos" not in detail and "SCAN faces" not in detail, (name, detail)


def test_select_ids_intersects_constraints_in_the_store(store):
    for p in _photos():
        store.put_photo(p)
    store.set_place("a.jpg", KEQIAO)
    store.set_place("b.jpg", PARIS)
    store.put_person(Person("p1"))
    store.put_person(Person("p2"))
    store.set_faces("a.jpg", [FaceOccurrence("a.jpg", "p1"), FaceOccurrence("a.jpg", "p2", None, 1)])
    store.set_faces("b.jpg", [FaceOccurrence("b.jpg", "p1")])
    store.set_time_tags("b.jpg", ["season:spring"])
    store.set_events({"a.jpg": "e1"})
    assert store.select_ids(PhotoFilter()) is None
    assert store.select_ids(PhotoFilter(people=["p1"])) == {"a.jpg", "b.jpg"}
    assert store.select_ids(PhotoFilter(people=["p1", "p2"])) == {"a.jpg"}  # all present
    assert store.select_ids(PhotoFilter(places=["paris", ("district", "柯桥")])) == {"a.jpg", "b.jpg"}  # any of
    assert store.select_ids(PhotoFilter(places=[("city", "柯桥")])) == set()
    assert store.select_ids(PhotoFilter(start=datetime(2023, 3, 15), people=["p1"])) == {"b.jpg"}
    assert store.select_ids(PhotoFilter(tags=["season:spring"], places=["keqiao"])) == set()
    assert store.select_ids(PhotoFilter(event_id="e1", people=["p2"])) == {"a.jpg"}
    # the same answers as intersecting the single filters
    assert store.select_ids(PhotoFilter(start=datetime(2023, 1, 1), end=datetime(2024, 1, 1), places=["中国"])) == (
        store.ids_taken_between(datetime(2023, 1, 1), datetime(2024, 1, 1)) & store.ids_at_place("中国")
    )


def test_synthetic_catalog_is_deterministic_and_select_ids_agrees_with_set_algebra(tmp_path, catalog_target):
    """The same synthetic album built twice (a SQLite file, then the store under test) dumps equal;
    select_ids in each store agrees with the single filters intersected, and the two stores agree."""
    import random

    plain = Profiler()  # built-in place table, no time tags: fast and independent of the profile package
    summary = build_synthetic_catalog(tmp_path / "a.sqlite", 800, seed=3, profiler=plain)
    build_synthetic_catalog(catalog_target, 800, seed=3, profiler=plain)
    with open_catalog(tmp_path / "a.sqlite") as a, open_catalog(catalog_target) as b:
        assert a.dump() == b.dump()
        assert a.count_photos() == summary.photos == 800 and len(a.people()) == summary.people
        assert [p.id for p in a.people() if p.is_me] == ["1"]
        rng = random.Random(0)
        cities = sorted({n for lv, n, _ in a.place_names() if lv == "city"})
        people = [p.id for p in a.people()]
        for _ in range(40):
            start = datetime(rng.randint(2019, 2025), rng.randint(1, 12), 1)
            end = start + timedelta(days=rng.choice([31, 365, 900]))
            place = [rng.choice(cities)] if rng.random() < 0.6 else []
            who = rng.sample(people, rng.randint(0, 2))
            expected = a.ids_taken_between(start, end)
            for name in place:
                expected &= a.ids_at_place(name)
            for person in who:
                expected &= a.ids_with_person(person)
            where = PhotoFilter(start=start, end=end, places=place, people=who)
            assert a.select_ids(where) == expected == b.select_ids(where)
        assert a.place_names() == b.place_names() and a.people() == b.people() and a.events() == b.events()
    with pytest.raises(FinegrainError, match="already exists"):
        build_synthetic_catalog(tmp_path / "a.sqlite", 10)
