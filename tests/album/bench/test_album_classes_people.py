"""Album eval's derived classes tell people named by name, by role or kinship, and by a shared
nickname, from the planner's own reading (hand-made vocabularies, no PhotoBench query)."""

from __future__ import annotations

from datetime import date

import pytest

from finegrain.album.bench.classes import derive_classes
from finegrain.album.engine.plan import AlbumVocabulary, plan_query

LATEST = date(2024, 8, 31)


@pytest.fixture(scope="module")
def family() -> AlbumVocabulary:
    return AlbumVocabulary.build(
        people={"1": ["me", "我"], "2": ["Lily", "莉莉"], "4": ["Dad", "爸爸"], "5": ["Mom", "妈妈"],
                "10": ["Chen Yu", "Xiao Chen", "小陈"], "11": ["Chen Hao", "Xiao Chen", "小陈"], "12": ["Mia"]},
        roles={"12": ["daughter"]}, places={}, latest_date=LATEST,
    )


@pytest.fixture(scope="module")
def friends() -> AlbumVocabulary:
    return AlbumVocabulary.build(people={"1": ["me"], "2": ["Lily"]}, places={}, latest_date=LATEST)



@pytest.mark.parametrize(("query", "lang", "expected"), [
    ("dad at the beach", "en", {"people:role"}), ("kids at the beach", "en", {"people:role"}),
    ("爸妈在公园", "zh", {"people:role"}), ("Xiao Chen at the beach", "en", {"people:shared"}),
    ("小陈在海边", "zh", {"people:shared"}), ("Lily at the beach", "en", {"people:name"}),
])
def test_derived_classes_tell_people_by_name_role_and_shared_nickname(family, query, lang, expected):
    plan = plan_query(query, family, lang=lang)
    assert {c for c in derive_classes(plan, zero=False) if c.startswith("people:")} == expected


def test_a_role_nobody_has_is_no_people_class(friends):
    plan = plan_query("kids at the beach", friends, lang="en")
    assert not [c for c in derive_classes(plan, zero=False) if c.startswith("people:")]
