"""Names in either language: pinyin keys, edit distance, and the vocabulary's did-you-mean."""

from __future__ import annotations

import random
from datetime import date

import pytest

from finegrain.album.engine.plan.fuzzy import max_edits, name_key, nearest
from finegrain.album.engine.plan.records import PlaceKey
from finegrain.album.engine.plan.rules import plan_query
from finegrain.album.engine.plan.vocabulary import AlbumVocabulary
from finegrain.text.distance import osa_distance

pytest.importorskip("pypinyin")


def _levenshtein_osa_reference(a: str, b: str) -> int:
    """The textbook full-matrix OSA recurrence (Wikipedia, "Damerau–Levenshtein distance")."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


@pytest.mark.parametrize(("a", "b", "d"), [
    ("yantain", "yantian", 1),  # one transposition
    ("kitten", "sitting", 3),
    ("ca", "abc", 3),  # OSA, not unrestricted Damerau (which gives 2)
    ("", "abc", 3),
    ("weiwei", "weiwei", 0),
])
def test_edit_distance_hand_computed(a, b, d):
    assert osa_distance(a, b) == d == osa_distance(b, a)


def test_edit_distance_agrees_with_the_reference_and_its_limit_is_a_floor():
    rng = random.Random(7)
    for _ in range(400):
        a = "".join(rng.choice("abct") for _ in range(rng.randint(0, 7)))
        b = "".join(rng.choice("abct") for _ in range(rng.randint(0, 7)))
        ref = _levenshtein_osa_reference(a, b)
        assert osa_distance(a, b) == ref
        for limit in range(4):
            assert osa_distance(a, b, limit) == min(ref, limit + 1)


def test_name_key_is_pinyin_for_chinese_and_drops_case_and_separators():
    assert name_key("薇薇") == name_key("Weiwei") == name_key("wei wei") == name_key("WEI-WEI") == "weiwei"
    assert name_key("伟伟") == "weiwei"  # homophone typo: distance 0
    assert name_key("Xi'an") == "xian"


def test_thresholds_grow_with_length_and_short_names_need_an_exact_key():
    assert [max_edits(n) for n in (2, 3, 4, 5, 6, 12, 13)] == [0, 0, 1, 1, 2, 2, 3]
    assert nearest("Bo", ["Bob", "Bo b"]) is None  # "bo" vs "bob": 1 edit on 2 letters is too many
    assert nearest("Yantain", ["yan tian", "yantian", "futian"]) == ("yantian", 1)


def test_nearest_does_not_depend_on_candidate_order():
    cands = ["chenyang", "chen yang", "zhang chenyang", "chenyan g", "chengyang"]
    results = set()
    for seed in range(10):
        random.Random(seed).shuffle(cands)
        results.add(nearest("Chenyan", cands))
    assert results == {("chenyang", 1)}


# ---------------------------------------------------------------- the vocabulary (built from data, no album1)


def _vocab(people: dict[str, tuple[str, ...]]) -> AlbumVocabulary:
    places = {
        "盐田区": PlaceKey("district", "盐田区"), "盐田": PlaceKey("district", "盐田区"),
        "yantian": PlaceKey("district", "盐田区"), "yan tian": PlaceKey("district", "盐田区"),
        "yantian district": PlaceKey("district", "盐田区"),
        "深圳市": PlaceKey("city", "深圳市"), "深圳": PlaceKey("city", "深圳市"),
        "shenzhen": PlaceKey("city", "深圳市"), "shenzhen city": PlaceKey("city", "深圳市"),
    }
    known = {"杭州": PlaceKey("city", "杭州市"), "hangzhou": PlaceKey("city", "杭州市")}
    return AlbumVocabulary.build(people=people, places=places, known_places=known, latest_date=date(2025, 6, 1))


ENGLISH = {"1": ("me",), "10": ("Xiaowei", "Weiwei", "Zhou Xiaowei"), "3": ("Chenyang", "Boyfriend")}


def test_a_chinese_alias_on_an_english_catalog_is_matched_and_the_english_names_stay():
    vocab = _vocab({**ENGLISH, "10": (*ENGLISH["10"], "薇薇")})
    zh = plan_query("薇薇的照片", vocab)
    en = plan_query("photos with Weiwei", vocab)
    assert [p.person_id for p in zh.people] == ["10"] and [p.person_id for p in en.people] == ["10"]


def test_a_name_given_only_in_chinese_answers_to_its_pinyin():
    vocab = _vocab({"1": ("我",), "10": ("薇薇", "周小薇"), "5": ("安",)})
    assert [p.person_id for p in plan_query("photos with Weiwei", vocab).people] == ["10"]
    assert [p.person_id for p in plan_query("photos with Zhou Xiaowei", vocab).people] == ["10"]
    assert "an" not in vocab.people  # one syllable is too ambiguous to be a pattern


def test_suggest_person_is_pinyin_and_typo_aware_in_the_query_script():
    vocab = _vocab({**ENGLISH, "10": (*ENGLISH["10"], "薇薇")})
    assert vocab.suggest_person("Weiwie") == "Weiwei"
    assert vocab.suggest_person("伟伟") == "薇薇"
    assert vocab.suggest_person("Chenyan") == "Chenyang"
    assert vocab.suggest_person("Zoe") is None
    assert vocab.suggest_person("mee") is None  # owner words are not suggested
    zh_only = _vocab({"10": ("薇薇",)})
    assert zh_only.suggest_person("Weiwie") == "Weiwei"  # via the pinyin pattern


def test_suggest_place_in_both_languages_with_the_level_word():
    vocab = _vocab(ENGLISH)
    assert vocab.suggest_place("Yantain") == "Yantian District"
    assert vocab.suggest_place("yantain district") == "Yantian District"
    assert vocab.suggest_place("盐天") == "盐田区"
    assert vocab.suggest_place("Shenzen") == "Shenzhen"
    assert vocab.suggest_place("Hangzou") == "Hangzhou"  # a known place without photos, when no album place is near
    assert vocab.suggest_place("Paris") is None
    assert vocab.suggest_place("Shenzhen Bay") is None
