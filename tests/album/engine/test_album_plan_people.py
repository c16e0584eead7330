"""People named by role or kinship: kinship nicknames, role words, shared nicknames, stated roles.

Hand-made albums (no PhotoBench query): a family album whose people are nicknamed "Dad",
"Mom", "honey", "Nephew", "宝宝", two people sharing a nickname, children known only by the
user's statement, and an album of friends with no family at all.
"""

from __future__ import annotations

from datetime import date, datetime

import pytest

from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.outcome import OutcomeKind
from finegrain.album.engine.plan import AlbumVocabulary, plan_query
from finegrain.album.engine.plan.people import ROLE_WORDS_EN, ROLE_WORDS_ZH, Role, parse_role, role_word
from finegrain.album.engine.plan.records import AnyOfPeople, PeopleReason
from finegrain.album.engine.plan_catalog import vocabulary_from_catalog
from finegrain.album.engine.records import FaceOccurrence, Person, Photo
from finegrain.album.engine.search import search
from finegrain.album.engine.tools import restrict_plan
from finegrain.errors import FinegrainError

LATEST = date(2024, 8, 31)


@pytest.fixture(scope="module")
def family() -> AlbumVocabulary:
    """Lily and Tom by name; Dad, Mom, honey, Nephew and 宝宝 by kinship nicknames; two people
    both nicknamed "Xiao Chen"/"小陈"; Mia and Leo are children by the user's statement."""
    return AlbumVocabulary.build(
        people={
            "1": ["me", "我"],
            "2": ["Lily", "莉莉"],
            "3": ["Tom", "汤姆"],
            "4": ["Dad", "老爸", "爸爸"],
            "5": ["Mom", "妈妈"],
            "6": ["honey", "老婆"],
            "7": ["Nephew", "侄子"],
            "8": ["Baobao", "宝宝"],
            "10": ["Chen Yu", "Xiao Chen", "陈宇", "小陈"],
            "11": ["Chen Hao", "Xiao Chen", "陈浩", "小陈"],
            "12": ["Mia", "米娅"],
            "13": ["Leo", "乐乐"],
        },
        roles={"12": ["daughter"], "13": ["son"]},
        places={},
        latest_date=LATEST,
    )


@pytest.fixture(scope="module")
def friends() -> AlbumVocabulary:
    """An album of friends: nobody is known as a child, parent, partner or grandparent."""
    return AlbumVocabulary.build(
        people={"1": ["me", "我"], "2": ["Lily", "莉莉"], "3": ["Tom", "汤姆"]}, places={}, latest_date=LATEST
    )


def groups(plan, reason=None) -> list[AnyOfPeople]:
    return [g for g in plan.people_any if reason is None or g.reason is reason]


# ------------------------------------------------------------------ kinship nicknames are people


@pytest.mark.parametrize("query", [
    "Lily, Tom and dad at the zoo", "dad at the beach", "Dad at the beach", "my dad cooking", "with dad",
    "Dad's birthday", "dad's birthday cake", "DAD at the park", "at the park with my Dad",
])
def test_a_kinship_nickname_is_the_person_in_any_case_and_position(family, query):
    """'dad' is Dad wherever it stands: never a visual word or an unresolved social role."""
    plan = plan_query(query, family, lang="en")
    assert "4" in plan.person_ids
    assert "dad" not in plan.visual_text.lower() and not plan.roles
    assert "F" in plan.source


def test_several_kinship_nicknames_and_names_together(family):
    plan = plan_query("mom and dad with honey and my nephew at dinner", family, lang="en")
    assert set(plan.person_ids) == {"4", "5", "6", "7"}
    assert plan.visual_text == "dinner" and plan.source == "VF"


@pytest.mark.parametrize(("query", "pid"), [
    ("爸爸在海边", "4"), ("和老爸吃饭", "4"), ("我老爸的生日", "4"), ("我老婆在做饭", "6"), ("我的宝宝在睡觉", "8"),
    ("妈妈和宝宝在公园", "5"), ("侄子踢足球", "7"),
])
def test_a_chinese_kinship_nickname_is_the_person_and_wo_before_it_is_my(family, query, pid):
    """"我老婆" is "my wife", one person: 我 there is not the owner."""
    plan = plan_query(query, family, lang="zh")
    assert pid in plan.person_ids
    assert "1" not in plan.person_ids
    assert not plan.roles


# ------------------------------------------------------------------ a shared nickname is ambiguous


@pytest.mark.parametrize(("query", "lang"), [("Xiao Chen at the beach", "en"), ("小陈在海边", "zh")])
def test_a_shared_nickname_is_reported_ambiguous_with_both_people(family, query, lang):
    plan = plan_query(query, family, lang=lang)
    (g,) = groups(plan)
    assert g.reason is PeopleReason.SHARED_NICKNAME
    assert g.person_ids == ("10", "11")
    assert plan.person_ids == ()  # neither is picked
    assert plan.people_groups == (("10", "11"),)
    explained = " ".join(rule for rule, _ in plan.explain())
    assert "ambiguous" in explained and "10 (Chen Yu)" in explained and "11 (Chen Hao)" in explained
    assert plan.source == "VF"
    assert plan.to_dict()["people_any"][0]["reason"] == "shared_nickname"


def test_a_name_only_one_person_has_still_picks_that_person(family):
    assert plan_query("Chen Hao at the beach", family, lang="en").person_ids == ("11",)
    assert groups(plan_query("Chen Hao at the beach", family, lang="en")) == []


# ------------------------------------------------------------------ role words name a set of people


@pytest.mark.parametrize(("query", "lang", "ids"), [
    ("kids at the beach", "en", ("7", "8", "12", "13")),  # the nephew is one of the kids
    ("feeding the kids", "en", ("7", "8", "12", "13")),
    ("the kids' birthday party", "en", ("7", "8", "12", "13")),
    ("feeding the baby", "en", ("8", "12", "13")),  # but not a baby, a son or a daughter
    ("my son at the park", "en", ("8", "13")),  # 宝宝 has no gender: a son may be that child
    ("our daughter's first day at school", "en", ("8", "12")),
    ("孩子们在海边", "zh", ("7", "8", "12", "13")),
    ("喂婴儿吃饭", "zh", ("8", "12", "13")),
    ("儿子在公园", "zh", ("8", "13")),
    ("爸妈在公园", "zh", ("4", "5")),
    ("parents at the park", "en", ("4", "5")),
    ("my wife at the beach", "en", ("6",)),
])
def test_a_role_word_is_an_any_of_face_constraint(family, query, lang, ids):
    plan = plan_query(query, family, lang=lang)
    (g,) = groups(plan, PeopleReason.ROLE)
    assert g.person_ids == ids
    assert plan.people_groups == (ids,)
    assert "F" in plan.source
    assert g.text.lower() not in plan.visual_text.lower()


def test_grandparents_with_the_kids_is_two_groups():
    vocab = AlbumVocabulary.build(
        people={"1": ["me"], "2": ["Nana"], "3": ["Grandpa Joe"], "4": ["Sam"]},
        roles={"3": ["grandfather"], "4": ["kid"]}, places={}, latest_date=LATEST)
    plan = plan_query("grandparents with the kids at the lake", vocab, lang="en")
    assert plan.people_groups == (("2", "3"), ("4",))
    assert plan.source == "VF"


def test_family_is_anyone_known_by_a_kin_role(family):
    plan = plan_query("一家人的合照", family, lang="zh")
    (g,) = groups(plan, PeopleReason.ROLE)
    assert g.person_ids == ("4", "5", "6", "7", "8", "12", "13")
    assert plan.source == "F"


def test_a_role_word_does_not_take_a_person_of_the_other_gender():
    vocab = AlbumVocabulary.build(people={"1": ["me"], "4": ["Dad"]}, places={}, latest_date=LATEST)
    plan = plan_query("mom at the park", vocab, lang="en")
    assert plan.person_ids == () and plan.people_groups == ()
    assert plan.roles == ("mom",)  # one relative the album has not named: a social role, as before


# ------------------------------------------------------------------ nobody in the role: the plan says so


@pytest.mark.parametrize(("query", "lang", "role"), [
    ("kids at the beach", "en", "child"), ("feeding the baby", "en", "child"),
    ("grandparents at the lake", "en", "grandparent"), ("family dinner", "en", "family member"),
    ("孩子们在海边", "zh", "child"), ("爸妈在公园", "zh", "parent"), ("一家人在吃饭", "zh", "family member"),
])
def test_a_role_nobody_has_stays_visual_and_the_plan_says_so(friends, query, lang, role):
    plan = plan_query(query, friends, lang=lang)
    (g,) = groups(plan)
    assert g.reason is PeopleReason.NO_ONE_IN_ROLE and g.person_ids == () and g.role == role
    assert plan.source == "V"
    assert any(f"no person in the album is known as a {role}" in rule for rule, _ in plan.explain())
    assert g.text in plan.visual_text


def test_one_relative_nobody_has_stays_a_social_role(friends):
    for query, lang in (("with mom at the park", "en"), ("和妈妈在公园", "zh"), ("three sisters at the temple", "en")):
        plan = plan_query(query, friends, lang=lang)
        assert plan.roles and plan.source == "VF", query


# ------------------------------------------------------------------ the table and stated roles


def test_the_tables_hold_kin_words_of_both_languages():
    assert role_word("Dad").role == Role("parent", "m")
    assert role_word("my wife").role == Role("partner", "f")
    assert role_word("我家宝宝").role == Role("child")
    assert role_word("Lily") is None
    assert {"kids", "baby", "son", "daughter", "parents", "family", "grandparents"} <= set(ROLE_WORDS_EN)
    assert {"孩子", "宝宝", "儿子", "女儿", "爸妈", "一家人", "老婆", "老公"} <= set(ROLE_WORDS_ZH)


def test_a_stated_role_is_checked():
    assert parse_role("child") == Role("child") and parse_role("妈妈") == Role("parent", "f")
    with pytest.raises(FinegrainError, match="unknown role 'cat'"):
        parse_role("cat")
    with pytest.raises(FinegrainError, match="person '9', who is not in the album"):
        AlbumVocabulary.build(people={"1": ["me"]}, roles={"9": ["son"]}, places={}, latest_date=LATEST)


# ------------------------------------------------------------------ the engine: an any-of face constraint


@pytest.fixture
def store(tmp_path):
    """Four photos: Mia alone, Leo alone, both with Dad, Dad alone; Mia and Leo are the owner's
    children by their nicknames "daughter" and "son" (what `album people --name` adds)."""
    with open_catalog(tmp_path / "family.sqlite") as s:
        faces = {"a.jpg": ["p2"], "b.jpg": ["p3"], "c.jpg": ["p2", "p3", "p4"], "d.jpg": ["p4"]}
        for i, (name, people) in enumerate(faces.items()):
            s.put_photo(Photo(name, f"/p/{name}", 1, 1.0, name, datetime(2024, 5, 1 + i), None, None, None))
            s.set_faces(name, [FaceOccurrence(name, p, None, k) for k, p in enumerate(people)])
        s.put_person(Person("p1", ("me",), is_me=True))
        s.put_person(Person("p2", ("Mia", "daughter")))
        s.put_person(Person("p3", ("Leo", "son")))
        s.put_person(Person("p4", ("Dad", "Xiao Wang")))
        s.put_person(Person("p5", ("Uncle Wang", "Xiao Wang")))
        yield s


def test_search_takes_any_of_the_people_a_role_word_names(store):
    assert vocabulary_from_catalog(store).people_in_role(Role("child")) == ("p2", "p3")
    r = search(store, "photos of the kids")
    assert r.outcome.kind is OutcomeKind.FOUND
    assert r.photo_ids == {"a.jpg", "b.jpg", "c.jpg"}
    r = search(store, "photos of the kids with dad")
    assert r.photo_ids == {"c.jpg"}


def test_search_with_a_shared_nickname_takes_either_person(store):
    r = search(store, "photos with Xiao Wang")
    assert r.plan.people_groups == (("p4", "p5"),)
    assert r.photo_ids == {"c.jpg", "d.jpg"}  # p5 has no photo; p4's photos count


def test_without_the_face_tool_the_group_is_dropped(family):
    plan = plan_query("kids at the beach", family, lang="en")
    restricted = restrict_plan(plan, ["V", "M"])
    assert restricted.people_groups == ()
    assert any(rule.endswith("dropped person") and text == "kids" for rule, text in restricted.explain())



# ------------------------------------------------------------------ words that only ask for a person's photos


@pytest.mark.parametrize(("query", "lang"), [
    ("photos showing Lily", "en"), ("shots with Lily in them", "en"), ("Lily and me in the same photo", "en"),
    ("photos featuring dad", "en"), ("包含莉莉的照片", "zh"), ("莉莉出镜的照片", "zh"), ("包含老爸的照片", "zh"),
])
def test_a_query_that_only_asks_for_people_is_faces_alone(family, query, lang):
    """"showing", "in them", "the same photo", 包含, 出镜 ask for the person's photos: nothing visual."""
    plan = plan_query(query, family, lang=lang)
    assert plan.visual_text == "" and plan.source == "F"
