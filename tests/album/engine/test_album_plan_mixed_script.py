"""Chinese queries that write a name in Latin letters: a catalog imported in English answers
"Weiwei的照片" and "在Yantian District拍的", while Latin letters that are no name (brands,
short words) stay visual text and an English query never matches Chinese aliases."""

from __future__ import annotations

from datetime import date

import pytest

from finegrain.album.engine.plan import AlbumVocabulary, PlaceKey, plan_query


@pytest.fixture(scope="module")
def vocab() -> AlbumVocabulary:
    return AlbumVocabulary.build(
        people={"1": ["me"], "10": ["Weiwei", "Wei"], "11": ["Yaoge", "Yo"]},
        places={"Yantian District": PlaceKey("district", "盐田区")},
        latest_date=date(2025, 6, 1),
    )


@pytest.mark.parametrize("text, person", [("Weiwei的照片", "10"), ("和weiwei一起吃饭", "10"), ("Yaoge和我", "11")])
def test_a_latin_name_in_a_chinese_query_is_the_person(vocab: AlbumVocabulary, text: str, person: str) -> None:
    plan = plan_query(text, vocab)
    assert plan.lang == "zh" and person in plan.person_ids, plan.explain()


def test_a_latin_place_in_a_chinese_query_is_the_place(vocab: AlbumVocabulary) -> None:
    plan = plan_query("和Weiwei在Yantian District拍的", vocab)
    assert {"10", "1"} >= set(plan.person_ids) >= {"10"} and plan.source == "MF", plan.explain()
    assert [p.place.name for p in plan.places] == ["盐田区"]


@pytest.mark.parametrize("text", ["展柜上的Kuromi毛绒玩具", "两瓶RIO逆光特写", "Weiweiland的门票", "Yo的照片"])
def test_other_latin_letters_stay_visual(vocab: AlbumVocabulary, text: str) -> None:
    """A brand, a longer word that contains a name, and a name under 3 letters are not people."""
    plan = plan_query(text, vocab)
    assert "10" not in plan.person_ids and "11" not in plan.person_ids, plan.explain()
