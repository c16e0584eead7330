"""Time tags: seasons, parts of day, weekends, China's festivals and holidays, other countries."""

from __future__ import annotations

from datetime import date, datetime

import pytest

pytest.importorskip("lunardate", reason="needs the time extra: pip install 'finegrain[time]'")
pytest.importorskip("chinese_calendar", reason="needs the time extra: pip install 'finegrain[time]'")
pytest.importorskip("holidays", reason="needs the time extra: pip install 'finegrain[time]'")

from finegrain.album.engine.profile.timetags import festival_dates, find_festival, time_tags  # noqa: E402
from finegrain.errors import FinegrainError, UnknownNameError  # noqa: E402


def keys(tags) -> set[str]:
    return {t.key for t in tags}


def test_mid_autumn_2024() -> None:
    tt = time_tags(datetime(2024, 9, 17, 20, 30))
    assert "mid_autumn" in keys(tt.festivals)
    mid = next(t for t in tt.festivals if t.key == "mid_autumn")
    assert (mid.en, mid.zh) == ("Mid-Autumn Festival", "中秋节")
    assert "mid-autumn festival" in mid.aliases and "中秋" in mid.aliases
    assert "mid_autumn_holiday" in keys(tt.holidays) and tt.is_day_off is True
    assert "中秋节" in tt.words() and "mid-autumn festival" in tt.words()


def test_spring_festival_and_eve_2025() -> None:
    tt = time_tags(datetime(2025, 1, 29, 10, 0))
    assert "spring_festival" in keys(tt.festivals)
    assert next(t for t in tt.festivals if t.key == "spring_festival").zh == "春节"
    eve = time_tags(datetime(2025, 1, 28, 19, 0))
    assert "chuxi" in keys(eve.festivals) and "除夕" in eve.words()
    assert "spring_festival_holiday" in keys(eve.holidays)


def test_national_day_and_golden_week() -> None:
    tt = time_tags(datetime(2024, 10, 1, 9, 0))
    assert "national_day" in keys(tt.festivals) and "national_day_holiday" in keys(tt.holidays)
    assert next(t for t in tt.festivals if t.key == "national_day").zh == "国庆节"
    later = time_tags(datetime(2024, 10, 5, 15, 0))  # inside the week, not the festival day
    assert not later.festivals and "national_day_holiday" in keys(later.holidays)
    assert festival_dates("golden week", 2024) == [date(2024, 10, d) for d in range(1, 8)]
    # 2025: Mid-Autumn (Oct 6) fell inside the National Day week: one period of eight days
    assert festival_dates("国庆假期", 2025) == [date(2025, 10, d) for d in range(1, 9)]
    assert {"national_day_holiday", "mid_autumn_holiday"} <= keys(time_tags(datetime(2025, 10, 6)).holidays)


def test_weekend_and_makeup_workday() -> None:
    sat = time_tags(datetime(2024, 3, 16, 11, 30))
    assert sat.is_weekend and sat.weekday == 5 and sat.weekday_tag.zh == "星期六" and sat.is_day_off
    mon = time_tags(datetime(2024, 3, 18, 11, 30))
    assert not mon.is_weekend and mon.weekday_tag.en == "Monday" and mon.is_day_off is False
    makeup = time_tags(datetime(2024, 4, 7, 10, 0))  # a Sunday China made a workday after Qingming
    assert makeup.is_weekend and makeup.is_day_off is False


@pytest.mark.parametrize(
    ("month", "season"),
    [(12, "winter"), (1, "winter"), (2, "winter"), (3, "spring"), (5, "spring"), (6, "summer"),
     (8, "summer"), (9, "autumn"), (11, "autumn")],
)
def test_meteorological_seasons(month: int, season: str) -> None:
    assert time_tags(datetime(2023, month, 10, 12)).season.key == season


@pytest.mark.parametrize(
    ("hour", "minute", "part"),
    [(0, 0, "night"), (4, 59, "night"), (5, 0, "morning"), (10, 59, "morning"), (11, 0, "noon"),
     (12, 59, "noon"), (13, 0, "afternoon"), (16, 59, "afternoon"), (17, 0, "evening"),
     (20, 59, "evening"), (21, 0, "night"), (23, 59, "night")],
)
def test_parts_of_day(hour: int, minute: int, part: str) -> None:
    assert time_tags(datetime(2024, 5, 8, hour, minute)).part_of_day.key == part


def test_fixed_and_lunar_festivals() -> None:
    assert "christmas" in keys(time_tags(datetime(2023, 12, 25, 18)).festivals)
    assert "valentines" in keys(time_tags(datetime(2024, 2, 14, 18)).festivals)
    assert "halloween" in keys(time_tags(datetime(2024, 10, 31, 18)).festivals)
    assert "dragon_boat" in keys(time_tags(datetime(2024, 6, 10, 12)).festivals)
    assert "qixi" in keys(time_tags(datetime(2024, 8, 10, 12)).festivals)
    assert "double_ninth" in keys(time_tags(datetime(2024, 10, 11, 12)).festivals)
    assert "lantern" in keys(time_tags(datetime(2024, 2, 24, 19)).festivals)
    assert "qingming" in keys(time_tags(datetime(2024, 4, 4, 9)).festivals)


def test_festival_dates_by_any_name() -> None:
    assert festival_dates("Mid-Autumn Festival", 2024) == [date(2024, 9, 17)]
    assert festival_dates("中秋节", 2025) == [date(2025, 10, 6)]
    assert festival_dates("mid_autumn", 2023) == [date(2023, 9, 29)]
    assert festival_dates("chinese new year", 2024) == [date(2024, 2, 10)]
    assert festival_dates("除夕", 2024) == festival_dates("new_years_eve_lunar", 2024) == [date(2024, 2, 9)]
    assert festival_dates("中秋假期", 2024) == [date(2024, 9, 15), date(2024, 9, 16), date(2024, 9, 17)]
    assert festival_dates("端午节", 2025) == [date(2025, 5, 31)]
    assert festival_dates("Christmas", 2030) == [date(2030, 12, 25)]
    assert festival_dates("端午假期", 2024) == [date(2024, 6, 8), date(2024, 6, 9), date(2024, 6, 10)]
    assert find_festival("Moon Festival") == "mid_autumn"
    with pytest.raises(UnknownNameError, match="did you mean"):
        festival_dates("mid-autum festival", 2024)
    with pytest.raises(FinegrainError, match="out of range"):
        festival_dates("中秋节", 1800)


def test_other_countries_and_none() -> None:
    us = time_tags(datetime(2024, 7, 4, 12), country="US")
    assert any("Independence" in h.en for h in us.holidays) and us.is_day_off
    assert "mid_autumn" in keys(time_tags(datetime(2024, 9, 17, 12), country="JP").festivals)
    jp = time_tags(datetime(2024, 1, 8, 12), country="jp")
    assert jp.country == "JP" and any(h.en == "Coming of Age Day" for h in jp.holidays)
    plain = time_tags(datetime(2024, 10, 1, 12), country=None)
    assert plain.holidays == () and "national_day" in keys(plain.festivals)
    with pytest.raises(FinegrainError, match="alpha-2"):
        time_tags(datetime(2024, 1, 1), country="China")
    with pytest.raises(UnknownNameError):
        time_tags(datetime(2024, 1, 1), country="QQ")
    with pytest.raises(FinegrainError, match="datetime"):
        time_tags(date(2024, 1, 1))  # type: ignore[arg-type]


def test_year_outside_chinese_calendar() -> None:
    tt = time_tags(datetime(2035, 10, 1, 12))
    assert tt.is_day_off is None and tt.holidays == () and "national_day" in keys(tt.festivals)
