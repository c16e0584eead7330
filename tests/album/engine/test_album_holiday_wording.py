"""The query's wording picks a statutory holiday's reading before the ``holiday=`` option does.

Properties protected:
- words that name the days off ("break", "days off", "long weekend", 小长假, 放假, 假期) select the
  official days off, even when the option says ``day``;
- words that name the day ("the actual day of", "itself", 当日, 那一天) select the day itself, even
  when the option says ``span`` (the default);
- the wording is consumed as time, so the query stays metadata only (M, or MF with a person);
- wording that says neither follows the option;
- "十一" right after a year is National Day, while 十一月 stays November.
Hand-checked 2022 dates: Labor Day off April 30 - May 4, Dragon Boat off June 3-5, Mid-Autumn off
September 10-12 (its day September 10), National Day off October 1-7.
"""

from __future__ import annotations

from datetime import date

import pytest

from finegrain.album.engine.plan import AlbumVocabulary, plan_query

pytest.importorskip("chinese_calendar")  # the official days off (the `time` extra)

VOCAB = AlbumVocabulary.build(people={"2": ["Marta", "玛尔塔"]}, places={}, latest_date=date(2024, 6, 1))
LABOR_OFF = (date(2022, 4, 30), date(2022, 5, 4))
DRAGON_OFF = (date(2022, 6, 3), date(2022, 6, 5))
MOON_OFF, MOON_DAY = (date(2022, 9, 10), date(2022, 9, 12)), (date(2022, 9, 10), date(2022, 9, 10))
NATIONAL_OFF, NATIONAL_DAY = (date(2022, 10, 1), date(2022, 10, 7)), (date(2022, 10, 1), date(2022, 10, 1))


def _plan(text: str, lang: str, holiday: str = "span") -> tuple[str, tuple[date, date]]:
    plan = plan_query(text, VOCAB, lang=lang, holiday=holiday)
    (r,) = plan.time_ranges
    assert r.weekdays is None  # "long weekend" names the days off, not Saturdays and Sundays
    return plan.source, (r.start, r.end)


@pytest.mark.parametrize(("text", "lang", "source", "days"), [
    ("pictures from the 2022 Dragon Boat Festival break", "en", "M", DRAGON_OFF),
    ("the National Day days off in 2022", "en", "M", NATIONAL_OFF),
    ("Marta over the Labor Day long weekend of 2022", "en", "MF", LABOR_OFF),
    ("2022年中秋小长假的照片", "zh", "M", MOON_OFF),
    ("2022年国庆放假期间和玛尔塔的合影", "zh", "MF", NATIONAL_OFF),
])
def test_days_off_wording_selects_the_span_whatever_the_option(text, lang, source, days):
    for holiday in ("span", "day"):
        assert _plan(text, lang, holiday) == (source, days)


@pytest.mark.parametrize(("text", "lang", "source", "days"), [
    ("the actual day of Mid-Autumn 2022", "en", "M", MOON_DAY),
    ("National Day 2022 itself", "en", "M", NATIONAL_DAY),
    ("Marta on the very day of 2022 National Day", "en", "MF", NATIONAL_DAY),
    ("2022年中秋节当日拍的", "zh", "M", MOON_DAY),
    ("2022年国庆节的那一天", "zh", "M", NATIONAL_DAY),
])
def test_day_wording_selects_the_day_whatever_the_option(text, lang, source, days):
    for holiday in ("span", "day"):
        assert _plan(text, lang, holiday) == (source, days)


def test_neutral_wording_follows_the_option():
    assert _plan("Mid-Autumn 2022", "en") == ("M", MOON_OFF)
    assert _plan("Mid-Autumn 2022", "en", "day") == ("M", MOON_DAY)
    assert _plan("2022年中秋的照片", "zh", "day") == ("M", MOON_DAY)


def test_eleven_after_a_year_is_national_day():
    assert _plan("2022年的十一", "zh") == ("M", NATIONAL_OFF)
    assert _plan("2022年十一和玛尔塔拍的", "zh") == ("MF", NATIONAL_OFF)
    assert _plan("2022年十一月的照片", "zh") == ("M", (date(2022, 11, 1), date(2022, 11, 30)))
