"""Places below the district: a venue, campus, store or landmark no gazetteer lists is kept as a
place constraint searched as text (M+V when it is named by a venue word), with the reason in the
plan, never an unknown place the engine abstains on. Synthetic queries on a hand-made vocabulary."""

from __future__ import annotations

from datetime import date

import pytest

from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.outcome import OutcomeKind
from finegrain.album.engine.plan import plan_query
from finegrain.album.engine.plan.records import PlaceKey
from finegrain.album.engine.plan.vocabulary import AlbumVocabulary
from finegrain.album.engine.records import Person, Photo
from finegrain.album.engine.search import search

pytest.importorskip("jieba", reason="Chinese venues are found on jieba's words")


@pytest.fixture(scope="module")
def vocab() -> AlbumVocabulary:
    places = {"hangzhou": PlaceKey("city", "杭州市"), "杭州": PlaceKey("city", "杭州市"),
              "yantian district": PlaceKey("district", "盐田区"), "yantian": PlaceKey("district", "盐田区"),
              "盐田区": PlaceKey("district", "盐田区")}
    return AlbumVocabulary.build(people={"1": ["me"], "2": ["Lily", "莉莉"]}, places=places,
                                 latest_date=date(2024, 6, 1))


def _venues(plan) -> list[str]:
    return [p.text for p in plan.places if p.place.level == "poi"]


@pytest.mark.parametrize("query, venue", [
    ("photos at the Apple Store", "Apple Store"),
    ("the expo garden", "expo garden"),
    ("photos at the Summer Palace", "Summer Palace"),  # "Summer" is part of the name, not a season
    ("pictures from Zhejiang University", "Zhejiang University"),
    ("在浙江大学紫金港校区拍的照片", "浙江大学紫金港校区"),
    ("故宫的照片", "故宫"),
    ("颐和园的照片", "颐和园"),
    ("在苹果店拍的照片", "苹果店"),
])
def test_a_venue_no_gazetteer_lists_is_metadata_and_visual(vocab, query, venue):
    plan = plan_query(query, vocab)
    assert plan.source == "VM", plan.explain()
    assert _venues(plan) == [venue]
    assert not plan.unknown and not plan.time_ranges
    assert any(rule.startswith(f"place: no gazetteer entry for {venue}") for rule, _ in plan.explain())


def test_a_venue_with_a_person_and_a_city(vocab):
    plan = plan_query("Lily at the Apple Store in Hangzhou", vocab)
    assert plan.source == "VMF"
    assert _venues(plan) == ["Apple Store"]
    assert [p.place for p in plan.places if p.place.level != "poi"] == [PlaceKey("city", "杭州市")]


@pytest.mark.parametrize("query", ["Nike Store neon sign at night", "咖啡店招牌灯"])
def test_a_venue_beside_other_visual_words_is_what_is_seen(vocab, query):
    plan = plan_query(query, vocab)
    assert "M" not in plan.source and not _venues(plan), plan.explain()


@pytest.mark.parametrize("query", ["photos at the garden", "photos at the campus", "在公园拍的照片", "花园里的猫"])
def test_a_common_noun_is_no_venue(vocab, query):
    assert not _venues(plan_query(query, vocab))


@pytest.mark.parametrize("query, name", [("photos at Starbucks", "Starbucks"), ("在星巴克拍的照片", "星巴克")])
def test_a_bare_name_at_a_venue_is_kept_as_text_not_an_unknown_place(vocab, query, name):
    plan = plan_query(query, vocab)
    assert not plan.unknown and _venues(plan) == [name] and "M" in plan.source
    assert any(rule.startswith(f"place: no gazetteer entry for {name}") for rule, _ in plan.explain())


@pytest.mark.parametrize("query, name", [("photos at Yantain", "Yantain"), ("photos in Springfield", "Springfield"),
                                         ("在巴黎拍的照片", "巴黎")])
def test_a_typo_an_area_or_a_city_stays_an_unknown_place(vocab, query, name):
    # a near album place ("Yantian District"), "in" (an area) and a city abroad are not venues
    plan = plan_query(query, vocab)
    assert [(u.kind, u.text) for u in plan.unknown] == [("place", name)] and not _venues(plan)


def test_the_engine_searches_a_venue_instead_of_saying_no_such_place(tmp_path):
    store = open_catalog(tmp_path / "venues.sqlite")
    store.put_person(Person("1", ("me",), True))
    store.put_photo(Photo(id="a.jpg", path="a.jpg"))
    for query in ("photos at the Apple Store", "故宫的照片", "photos at Starbucks"):
        result = search(store, query)
        # no embeddings to check the text against: the engine says so, not "no such place"
        assert result.outcome.kind is OutcomeKind.VISUAL_UNCHECKABLE, (query, result.reason)
    store.close()
