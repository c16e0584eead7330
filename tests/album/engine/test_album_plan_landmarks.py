"""Landmarks and sights: a named thing one visits and sees is where the photo was taken *and* what
it shows, so the query is M+V like a venue; addresses and areas stay metadata, a place the album
knows stays that place, a person stays a person, and a typo of an album place still gets its
did-you-mean. Synthetic queries (made-up sights) on a hand-made vocabulary."""

from __future__ import annotations

from datetime import date

import pytest

from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.outcome import OutcomeKind
from finegrain.album.engine.plan import plan_query
from finegrain.album.engine.plan.landmarks import is_landmark, pinyin_shaped
from finegrain.album.engine.plan.records import PlaceKey
from finegrain.album.engine.plan.vocabulary import AlbumVocabulary
from finegrain.album.engine.records import Person, Photo
from finegrain.album.engine.search import search

pytest.importorskip("jieba", reason="Chinese sights are found on jieba's words")

QINGSHANHU = PlaceKey("district", "青山湖区")


@pytest.fixture(scope="module")
def vocab() -> AlbumVocabulary:
    # an album district named like a sight (its name ends in 湖, "lake"), and a person nicknamed
    # like one (小岛, "islet")
    places = {"hangzhou": PlaceKey("city", "杭州市"), "杭州": PlaceKey("city", "杭州市"),
              "qingshanhu district": QINGSHANHU, "qingshanhu": QINGSHANHU, "青山湖区": QINGSHANHU, "青山湖": QINGSHANHU}
    return AlbumVocabulary.build(people={"1": ["me"], "2": ["Lily", "莉莉"], "3": ["Xiaodao", "小岛"]}, places=places,
                                 latest_date=date(2024, 6, 1))


def _sights(plan) -> list[str]:
    return [p.text for p in plan.places if p.place.level == "poi"]


@pytest.mark.parametrize("query, sight", [
    # a sight word after the name, in a frame or alone
    ("photos at Silver Crane Tower", "Silver Crane Tower"),
    ("Jade Mirror Island photos", "Jade Mirror Island"),
    ("visiting Willowmere Beach", "Willowmere Beach"),
    ("photos at Fushimori Shrine", "Fushimori Shrine"),
    ("Old Kiln Alley", "Old Kiln Alley"),
    # the sight word first
    ("Pavilion of the Golden Moon photos", "Pavilion of the Golden Moon"),
    ("at Temple of Azure Clouds", "Temple of Azure Clouds"),
    ("the Park Ostrava", "Park Ostrava"),
    # a foreign name with no sight word: in a venue frame, or alone after "the" or hyphenated
    ("photos at Villa Bruckner", "Villa Bruckner"),
    ("the Alcazaba photos", "Alcazaba"),
    ("Akebono-dera", "Akebono-dera"),
    # Chinese: one word that is a name and ends in a sight word, in any frame or none
    ("在银鹤楼的照片", "银鹤楼"),
    ("逛玉镜屿", "玉镜屿"),
    ("去白云寺的照片", "白云寺"),
    ("金顶寺", "金顶寺"),
    # a name part, then the sight word as a word of its own, in a place frame
    ("游青石巷子", "青石巷子"),
    ("在星巴克拍的照片", "星巴克"),  # a venue named alone in a venue frame
])
def test_a_sight_is_metadata_and_visual(vocab, query, sight):
    plan = plan_query(query, vocab)
    assert plan.source == "VM", plan.explain()
    assert _sights(plan) == [sight] and not plan.unknown
    assert any(rule.startswith(f"place: no gazetteer entry for {sight}") for rule, _ in plan.explain())


@pytest.mark.parametrize("query, source", [("Lily at Silver Crane Tower", "VMF"), ("和莉莉在银鹤楼的照片", "VMF"),
                                           ("Lily in front of the Silver Crane Tower", "VMF"),
                                           ("photos at Jade Mirror Island in Hangzhou", "VM")])
def test_a_sight_beside_a_person_or_a_city(vocab, query, source):
    plan = plan_query(query, vocab)
    assert plan.source == source and len(_sights(plan)) == 1, plan.explain()


@pytest.mark.parametrize("query", ["Silver Crane Tower roof tiles", "银鹤楼的屋檐瓦片"])
def test_a_sight_beside_other_visual_words_is_what_is_seen(vocab, query):
    # as for venues: not said as where the photo was taken, the name describes what is seen
    plan = plan_query(query, vocab)
    assert plan.source == "V" and not _sights(plan), plan.explain()


@pytest.mark.parametrize("query, name", [
    ("photos on Xinhua Road", "Xinhua Road"),  # an address
    ("photos at Chongwenmen", "Chongwenmen"),  # a Chinese locality in pinyin
    ("东华门拍的", "东华门"),  # 门: as often a neighbourhood or a station as a gate
])
def test_an_address_or_a_chinese_locality_stays_metadata(vocab, query, name):
    plan = plan_query(query, vocab)
    assert plan.source == "M" and _sights(plan) == [name], plan.explain()


@pytest.mark.parametrize("query, name", [("photos at Qingshan Lake", "Qingshan Lake"), ("在青山湖拍的", "青山湖"),
                                         ("Qingshanhu District photos", "Qingshanhu District")])
def test_an_album_place_named_like_a_sight_is_that_place(vocab, query, name):
    # "Qingshan Lake" is 青山湖 word for word: the album's district, not a sight
    plan = plan_query(query, vocab)
    assert plan.source == "M", plan.explain()
    assert [(p.text, p.place, p.in_album) for p in plan.places] == [(name, QINGSHANHU, True)]


@pytest.mark.parametrize("query, name, suggestion", [
    ("photos at Qingshen Lake", "Qingshen Lake", "Qingshanhu District"),
    ("在青杉湖拍的", "青杉湖", "青山湖区"),
])
def test_a_typo_of_an_album_place_keeps_its_did_you_mean(vocab, query, name, suggestion):
    plan = plan_query(query, vocab)
    assert [(u.kind, u.text, u.suggestion) for u in plan.unknown] == [("place", name, suggestion)], plan.explain()
    assert not _sights(plan)


@pytest.mark.parametrize("query, source", [
    ("photos with Park Minji", "F"),  # a person, though "Park" is a sight word
    ("小岛的照片", "F"),  # the album's person, though 岛 is a sight word
    ("Daisy Duck", "V"),  # capitalised words alone: a character as often as a sight
    ("在教学楼拍的", "V"),  # a common noun in a sight word
    ("冷蓝色海滩", "V"),  # an adjective and a sight word, said as what is seen
])
def test_people_characters_and_common_nouns_are_no_sights(vocab, query, source):
    plan = plan_query(query, vocab)
    assert plan.source == source and not _sights(plan), plan.explain()


@pytest.mark.parametrize("query", ["photos at May Fourth Square", "Spring Lake Park"])
def test_a_month_or_season_inside_a_sight_name_is_no_time(vocab, query):
    plan = plan_query(query, vocab)
    assert not plan.time_ranges and plan.source == "VM", plan.explain()


@pytest.mark.parametrize("name, lang, expected", [
    ("Yellow Crane Tower", "en", True), ("Xinhua Road", "en", False), ("Pedestrian Street", "en", False),
    ("Nanjing Pedestrian Street", "en", True), ("Beijing Station", "en", False), ("Tower", "en", False),
    ("黄鹤楼", "zh", True), ("新华路", "zh", False), ("南京路步行街", "zh", True), ("东华门", "zh", False), ("楼", "zh", False),
])
def test_head_words_tell_sights_from_addresses(name, lang, expected):
    assert is_landmark(name, lang) is expected


@pytest.mark.parametrize("name, expected", [("Chongwenmen", True), ("Xi'an", True), ("Fan Yutong", True),
                                            ("Montmartre", False), ("Sagrada Familia", False), ("Kiyomizu-dera", False)])
def test_pinyin_shaped(name, expected):
    assert pinyin_shaped(name) is expected


def test_the_engine_searches_a_sight_instead_of_saying_no_such_place(tmp_path):
    store = open_catalog(tmp_path / "sights.sqlite")
    store.put_person(Person("1", ("me",), True))
    store.put_photo(Photo(id="a.jpg", path="a.jpg"))
    for query in ("photos at Silver Crane Tower", "在银鹤楼的照片", "the Alcazaba photos"):
        result = search(store, query)
        # no embeddings to check the sight against: the engine says so, not "no such place"
        assert result.outcome.kind is OutcomeKind.VISUAL_UNCHECKABLE, (query, result.reason)
    store.close()
