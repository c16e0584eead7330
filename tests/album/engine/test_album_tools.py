"""The four PhotoBench tools over real catalogs (album1) and a captioned synthetic one."""

from __future__ import annotations

from datetime import date

import pytest

from album_search_fixtures import KITE
from dense_fakes import BagOfWordsEncoder
from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.photobench import import_photobench
from finegrain.album.engine.plan import PlaceKey, PlaceMatch, Plan, TimeRange
from finegrain.album.engine.plan_catalog import vocabulary_from_catalog
from finegrain.album.engine.tools import (
    PhotoTimes,
    compose,
    face_search,
    metadata_filter,
    vector_search,
    vector_search_hits,
)
from finegrain.errors import FinegrainError


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def store(request, album_dir, tmp_path_factory):
    target = (tmp_path_factory.mktemp("tools") / "album1-en.sqlite" if request.param == "sqlite"
              else request.getfixturevalue("postgres_server").new_database("tools"))
    s = open_catalog(target)
    import_photobench(album_dir, s, lang="en")
    yield s
    s.close()


def _plan(**kw) -> Plan:
    return Plan(query="q", lang="en", source="M", **kw)


# --------------------------------------------------------------------------- T_S
def test_compose_and_or_not():
    a, b, c = {"1", "2", "3"}, {"2", "3", "4"}, {"3"}
    assert compose("and", a, b) == {"2", "3"}
    assert compose("or", a, b, c) == {"1", "2", "3", "4"}
    assert compose("not", a, b) == {"1"}
    assert compose("not", a, c, {"1"}) == {"2"}
    assert compose("or") == set()
    assert compose("and", a) == a and compose("and", a) is not a


def test_compose_rejects_unknown_op_and_empty_and():
    with pytest.raises(FinegrainError, match="unknown set operation 'xor'"):
        compose("xor", {"1"})
    with pytest.raises(FinegrainError, match="at least one set"):
        compose("and")


# --------------------------------------------------------------------------- T_F
def test_face_search_all_people_present(store, album):
    expected = {p.id for p in album.photos.values() if {"1", "10"} <= set(p.faces)}
    assert expected  # album1 has photos of the owner with person 10
    assert face_search(store, ["1", "10"]) == expected
    assert face_search(store, ["10"]) == {p.id for p in album.photos.values() if "10" in p.faces}
    assert face_search(store, []) is None
    assert face_search(store, ["no-such-person"]) == set()


# --------------------------------------------------------------------------- T_M
def test_metadata_filter_month_is_the_album_photos_of_that_month(store, album):
    plan = _plan(time_ranges=(TimeRange(date(2024, 5, 1), date(2024, 5, 31), "May 2024", "month"),))
    expected = {p.id for p in album.photos.values() if p.time and (p.time.year, p.time.month) == (2024, 5)}
    assert metadata_filter(store, plan) == expected == {"IMG_7898.JPG"}


def test_metadata_filter_every_year_hours_and_weekdays_match_timerange_contains(store, album):
    r = TimeRange(date(2000, 12, 1), date(2000, 2, 28), "winter nights", "test", every_year=True, hours=(18, 4),
                  weekdays=(5, 6))
    expected = {p.id for p in album.photos.values() if p.time is not None and r.contains(p.time)}
    assert expected
    assert metadata_filter(store, _plan(time_ranges=(r,))) == expected
    times = PhotoTimes.load(store)
    assert metadata_filter(store, _plan(time_ranges=(r,)), times=times) == expected


def test_metadata_filter_places_any_level_nested_narrow_others_unite(store):
    yantian = PlaceMatch("Yantian District", PlaceKey("district", "盐田区"))
    assert metadata_filter(store, _plan(places=(yantian,))) == store.ids_at_place("盐田区")
    assert len(store.ids_at_place("盐田区")) == 6
    keqiao = PlaceMatch("Keqiao", PlaceKey("district", "柯桥区"))
    shaoxing = PlaceMatch("Shaoxing", PlaceKey("city", "绍兴市"))
    assert metadata_filter(store, _plan(places=(keqiao, shaoxing))) == store.ids_at_place("柯桥区")
    assert store.ids_at_place("柯桥区") < store.ids_at_place("绍兴市")
    both = metadata_filter(store, _plan(places=(yantian, keqiao)))
    assert both == store.ids_at_place("盐田区") | store.ids_at_place("柯桥区")
    tokyo = PlaceMatch("Tokyo", PlaceKey("city", "东京"), in_album=False)
    assert metadata_filter(store, _plan(places=(tokyo,))) == set()


def test_metadata_filter_none_without_constraint_and_time_and_place_intersect(store, album):
    assert metadata_filter(store, _plan(visual_text="cat")) is None
    r = TimeRange(date(2025, 10, 5), date(2025, 10, 5), "Oct 5 2025", "date")
    yantian = PlaceMatch("Yantian", PlaceKey("district", "盐田区"))
    got = metadata_filter(store, _plan(time_ranges=(r,), places=(yantian,)))
    day = {p.id for p in album.photos.values() if p.time and p.time.date() == date(2025, 10, 5)}
    assert got == day & store.ids_at_place("盐田区") and got


def test_event_words_are_not_metadata_when_no_event_is_named(store):
    assert metadata_filter(store, _plan(event_words=("museum",))) is None


def test_vocabulary_from_catalog(store):
    vocab = vocabulary_from_catalog(store)
    assert vocab.latest_date == store.latest_time().date() == date(2025, 12, 7)
    assert vocab.people["me"] == "1" and vocab.people["xiao zhou"] == "10"
    assert vocab.places["yantian district"] == PlaceKey("district", "盐田区")
    assert vocab.places["盐田区"] == PlaceKey("district", "盐田区")
    assert vocab.places["hangzhou"] == PlaceKey("city", "杭州市")
    assert vocab.known_places["tokyo"] == PlaceKey("city", "东京")


# --------------------------------------------------------------------------- T_V


def test_vector_search_finds_the_captioned_photo_first(captioned):
    s, enc = captioned
    hits = vector_search(s, "red kite sandy beach", enc, k=3)
    assert hits[0][0] == KITE
    assert hits[0][1] == pytest.approx(4 / (2 * 6 ** 0.5), abs=1e-6)  # 4 shared words of 4 and 6
    assert len(hits) == 3 and hits[0][1] > hits[1][1]


def test_vector_search_threshold_candidates_and_tie_break(captioned):
    s, enc = captioned
    assert vector_search(s, "red kite sandy beach", enc, threshold=0.8) == [(KITE, pytest.approx(0.8165, abs=1e-4))]
    assert vector_search(s, "red kite sandy beach", enc, candidates={"photo_001.jpg", "photo_002.jpg"}, k=5)[0][0] in {
        "photo_001.jpg", "photo_002.jpg"}
    zero = vector_search(s, "zzz_unknown_word", enc)
    scores = [sc for _, sc in zero]
    ids = [pid for pid, sc in zero if sc == scores[0]]
    assert ids == sorted(ids)  # equal scores: photo id order


def test_vector_search_says_when_there_are_no_embeddings(store):
    enc = BagOfWordsEncoder()
    assert vector_search(store, "cat", enc) == []
    hits = vector_search_hits(store, "cat", enc)
    assert hits.n_embedded == 0 and "no caption or image embeddings" in hits.note
    assert "no caption or image embeddings" in vector_search_hits(store, "cat", None).note
