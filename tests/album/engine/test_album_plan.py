"""The rule-based query planner: hand-made zh and en cases against a small vocabulary."""

from __future__ import annotations

import dataclasses
import json
from datetime import date, datetime

import pytest

from finegrain.album.engine.plan import AlbumVocabulary, PlaceKey, Plan, TimeRange, detect_lang, plan_query
from finegrain.album.engine.plan.time_rules import festival_ranges, find_times
from finegrain.errors import FinegrainError

LATEST = date(2025, 11, 20)
HANGZHOU = PlaceKey("city", "杭州市")
WEST_LAKE = PlaceKey("district", "西湖区")


@pytest.fixture(scope="module")
def vocab() -> AlbumVocabulary:
    return AlbumVocabulary.build(
        people={
            "1": ["me", "myself", "我", "自己"],
            "2": ["Li Xiaotong", "Xiaotong", "Little Li", "李晓彤", "晓彤", "小李"],
            "3": ["Boyfriend", "Chenyang", "Yang Ge", "男友", "晨阳", "阳哥"],
            "9": ["Sister", "Jiejie", "姐姐"],
        },
        places={"hangzhou": HANGZHOU, "杭州": HANGZHOU, "杭州市": HANGZHOU, "xihu district": WEST_LAKE, "西湖区": WEST_LAKE},
        known_places={"beijing": PlaceKey("province", "北京市"), "北京": PlaceKey("province", "北京市")},
        latest_date=LATEST,
    )


def rules_of(plan: Plan) -> list[str]:
    return [rule for rule, _ in plan.explain()]


# ----------------------------------------------------------------- the brief's examples


def test_sister_in_hangzhou_last_may(vocab: AlbumVocabulary) -> None:
    plan = plan_query("photos with my sister in Hangzhou last May", vocab)
    assert plan.lang == "en"
    assert plan.person_ids == ("9",)
    assert [p.place for p in plan.places] == [HANGZHOU]
    (r,) = plan.time_ranges
    assert (r.start, r.end) == (date(2025, 5, 1), date(2025, 5, 31))
    assert plan.visual_text == ""
    assert plan.source == "MF"
    assert ("time: month", "last May") in plan.explain()
    assert ("place: album city", "Hangzhou") in plan.explain()
    assert plan.explain()[-1] == ("source type", "MF")


def test_last_summer_in_hangzhou_with_xiao_li_zh(vocab: AlbumVocabulary) -> None:
    plan = plan_query("去年夏天在杭州和小李的合照", vocab)
    assert plan.lang == "zh"
    (r,) = plan.time_ranges
    assert (r.start, r.end) == (date(2024, 6, 1), date(2024, 8, 31))  # 去年 = 2024, the album ends in 2025
    assert plan.person_ids == ("2",)
    assert [p.place for p in plan.places] == [HANGZHOU]
    assert plan.source == "MF"
    assert "time: relative year" in rules_of(plan) and "person: nickname of 2" in rules_of(plan)


def test_relative_season_depends_on_the_albums_latest_date(vocab: AlbumVocabulary) -> None:
    late = plan_query("last summer", vocab)
    assert (late.time_ranges[0].start, late.time_ranges[0].end) == (date(2025, 6, 1), date(2025, 8, 31))
    july = dataclasses.replace(vocab, latest_date=date(2025, 7, 10))
    early = plan_query("last summer", july)
    assert early.time_ranges[0].start == date(2024, 6, 1)  # summer 2025 has not ended on 2025-07-10
    this = plan_query("this spring", vocab)
    assert this.time_ranges[0].start == date(2025, 3, 1)


@pytest.mark.parametrize(
    ("text", "year"),
    [("photos from the year before last", 2023), ("前年的照片", 2023), ("last year", 2024), ("今年", 2025), ("in 2019", 2019),
     ("2021年拍的", 2021), ("23年", 2023)],
)
def test_years(vocab: AlbumVocabulary, text: str, year: int) -> None:
    (r,) = plan_query(text, vocab).time_ranges
    assert (r.start, r.end) == (date(year, 1, 1), date(year, 12, 31))


def test_specific_dates_and_parts_of_day(vocab: AlbumVocabulary) -> None:
    (r,) = plan_query("photos taken on June 30, 2025", vocab).time_ranges
    assert r.start == r.end == date(2025, 6, 30)
    (r,) = plan_query("25年11月16号下午记录妆容的自拍", vocab).time_ranges
    assert r.start == r.end == date(2025, 11, 16) and r.hours == (12, 17)
    assert r.contains(datetime(2025, 11, 16, 15, 0)) and not r.contains(datetime(2025, 11, 16, 9, 0))
    (r,) = plan_query("8月26日", vocab).time_ranges  # no year: the latest 8-26 up to the album's last date
    assert r.start == date(2025, 8, 26)


def test_months_seasons_halves(vocab: AlbumVocabulary) -> None:
    (r,) = plan_query("2024年8月拍的", vocab).time_ranges
    assert (r.start, r.end) == (date(2024, 8, 1), date(2024, 8, 31))
    (r,) = plan_query("photos from the second half of 2022", vocab).time_ranges
    assert (r.start, r.end) == (date(2022, 7, 1), date(2022, 12, 31))
    # a year and a season constrain the same date: the winter months of calendar 2023
    for text in ("2023年冬季的照片", "winter photos from 2023"):
        jan_feb, dec = plan_query(text, vocab).time_ranges
        assert (jan_feb.start, jan_feb.end) == (date(2023, 1, 1), date(2023, 2, 28))
        assert (dec.start, dec.end) == (date(2023, 12, 1), date(2023, 12, 31))
    (r,) = plan_query("summer of 2024", vocab).time_ranges
    assert (r.start, r.end) == (date(2024, 6, 1), date(2024, 8, 31))
    (r,) = plan_query("fireworks, July", vocab).time_ranges  # a month without a year recurs
    assert r.every_year and r.contains(date(2019, 7, 4)) and not r.contains(date(2019, 8, 1))
    (r,) = plan_query("snow in winter", vocab).time_ranges
    assert r.every_year and r.contains(date(2020, 1, 15)) and r.contains(date(2020, 12, 15)) and not r.contains(date(2020, 6, 1))


# ----------------------------------------------------------------- festivals


def test_festivals_with_a_year(vocab: AlbumVocabulary) -> None:
    zh = plan_query("2025年中秋节的照片", vocab)
    en = plan_query("Mid-Autumn Festival photos from 2025", vocab)
    for plan in (zh, en):
        assert any(r.contains(date(2025, 10, 6)) for r in plan.time_ranges)  # 2025's Mid-Autumn is Oct 6
        assert not any(r.contains(date(2025, 9, 17)) for r in plan.time_ranges)
        assert plan.source == "M"
    (r,) = plan_query("photos taken during National Day in 2024", vocab).time_ranges
    assert (r.start, r.end) == (date(2024, 10, 1), date(2024, 10, 7))
    (r,) = plan_query("过2023年劳动节", vocab).time_ranges
    assert r.contains(date(2023, 5, 1))  # its official days off (from April 29): test_album_holidays.py


def test_festival_without_a_year_recurs(vocab: AlbumVocabulary) -> None:
    (r,) = plan_query("国庆出游", vocab).time_ranges
    assert r.every_year and r.contains(date(2021, 10, 3))
    spring = plan_query("春节的照片", vocab).time_ranges
    assert any(r.contains(date(2024, 2, 10)) for r in spring)  # Lunar New Year 2024
    assert len(festival_ranges("spring_festival", 2025)) == 1


def test_festival_word_before_a_noun_is_visual(vocab: AlbumVocabulary) -> None:
    plan = plan_query("street Christmas tree", vocab)
    assert plan.time_ranges == () and plan.source == "V" and "Christmas" in plan.visual_text
    plan = plan_query("街边圣诞树", vocab)
    assert plan.time_ranges == () and plan.source == "V"
    assert plan_query("Christmas 2024 dinner", vocab).time_ranges[0].start == date(2024, 12, 24)


def test_weekend_narrows_the_range(vocab: AlbumVocabulary) -> None:
    (r,) = plan_query("weekend photos in Hangzhou", vocab).time_ranges
    assert r.weekdays == (5, 6)
    assert r.contains(date(2025, 11, 15)) and not r.contains(date(2025, 11, 17))  # Saturday, Monday


# ----------------------------------------------------------------- people


def test_me_and_several_people_all_present(vocab: AlbumVocabulary) -> None:
    plan = plan_query("photos of me, Xiaotong and Chenyang", vocab)
    assert plan.person_ids == ("1", "2", "3")
    assert plan.source == "F"
    assert ("person: owner", "me") in plan.explain()
    zh = plan_query("我、晓彤、阳哥的照片", vocab)
    assert zh.person_ids == ("1", "2", "3") and zh.source == "F"


def test_xiao_spelling_of_little(vocab: AlbumVocabulary) -> None:
    assert plan_query("photos with Xiao Li", vocab).person_ids == ("2",)
    assert plan_query("photos with Yangge", vocab).person_ids == ("3",)  # "Yang Ge" written together


def test_self_in_other_words_is_not_the_owner(vocab: AlbumVocabulary) -> None:
    plan = plan_query("猫咪自我梳理", vocab)
    assert plan.people == () and plan.source == "V"


def test_selfie_and_roles_need_faces(vocab: AlbumVocabulary) -> None:
    plan = plan_query("selfie with friends in the subway", vocab)
    assert plan.person_ids == ("1",) and plan.roles == ("friends",)
    assert "F" in plan.source and "M" in plan.source
    assert plan_query("和闺蜜嘟嘴卖萌", vocab).source == "VF"


# ----------------------------------------------------------------- visual and places


@pytest.mark.parametrize("text", ["cat under the car", "车底下的小猫", "pink roses and hydrangea bouquet", "golden ginkgo"])
def test_pure_visual_queries(vocab: AlbumVocabulary, text: str) -> None:
    plan = plan_query(text, vocab)
    assert plan.source == "V"
    assert plan.time_ranges == () and plan.places == () and plan.people == ()
    assert plan.visual_text
    assert plan.explain()[-2][0] == "visual: residual text"


def test_visual_with_place_and_known_place(vocab: AlbumVocabulary) -> None:
    plan = plan_query("stone bridge in Xihu District in the morning", vocab)
    assert plan.source == "VM" and [p.place for p in plan.places] == [WEST_LAKE]
    assert plan.visual_text == "stone bridge"
    plan = plan_query("photos taken in Beijing", vocab)
    assert plan.source == "M" and plan.places[0].in_album is False


def test_part_of_day_alone_is_a_soft_visual_constraint(vocab: AlbumVocabulary) -> None:
    plan = plan_query("outdoor light show at night", vocab)
    assert plan.source == "V"
    (r,) = plan.time_ranges
    assert r.hours == (18, 4) and r.contains(datetime(2020, 1, 1, 23)) and not r.contains(datetime(2020, 1, 1, 12))


# ----------------------------------------------------------------- records


def test_plan_is_frozen_and_serialises(vocab: AlbumVocabulary) -> None:
    plan = plan_query("去年夏天在杭州和小李的合照", vocab)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.source = "V"  # type: ignore[misc]
    data = json.loads(plan.to_json())
    assert data["source"] == "MF" and data["people"] == [{"text": "小李", "person_id": "2"}]
    assert data["time_ranges"][0]["start"] == "2024-06-01"
    assert data["explain"][0] == ["time: relative year", "去年"]


def test_errors_name_the_value(vocab: AlbumVocabulary) -> None:
    with pytest.raises(FinegrainError, match="cannot plan the query '  '"):
        plan_query("  ", vocab)
    with pytest.raises(FinegrainError, match="'fr'"):
        plan_query("chat", vocab, lang="fr")
    with pytest.raises(FinegrainError, match="ends .* before it starts"):
        TimeRange(date(2025, 2, 1), date(2025, 1, 1), "x", "test")
    with pytest.raises(FinegrainError, match="unknown source type 'VV'"):
        Plan("q", "en", "VV")


def test_language_detection_and_override(vocab: AlbumVocabulary) -> None:
    assert detect_lang("杭州 2023") == "zh" and detect_lang("Hangzhou 2023") == "en"
    assert plan_query("Hangzhou", vocab, lang="cn").lang == "zh"


def test_find_times_reports_spans() -> None:
    ranges, matches = find_times("2023年夏季拍的", "zh", LATEST)
    assert [m.text for m in matches] == ["2023年", "夏季"]
    assert ranges[0].start == date(2023, 6, 1)


def test_month_words_inside_nicknames_are_names() -> None:
    vocab = AlbumVocabulary.build(people={"2": ["Li Jun", "Jun"], "3": ["May", "小五月"]}, places={}, known_places={},
                                  latest_date=LATEST)

    def read(text: str) -> tuple[list[tuple[date, date]], list[str]]:
        plan = plan_query(text, vocab, lang="en")
        return [(r.start, r.end) for r in plan.time_ranges], [p.person_id for p in plan.people]

    assert read("photos with Li Jun") == ([], ["2"])  # "Jun" inside a longer name is not June
    assert read("Li Jun in May 2024") == ([(date(2024, 5, 1), date(2024, 5, 31))], ["2"])
    ranges, people = read("photos with May last summer")  # a person is expected after "with"
    assert people == ["3"] and ranges == [(date(2025, 6, 1), date(2025, 8, 31))]
    assert read("photos from May 2024") == ([(date(2024, 5, 1), date(2024, 5, 31))], [])  # a month after "from"
    assert not any(rule.startswith("time") for rule in rules_of(plan_query("photos with Li Jun", vocab)))
