""""early", "mid" and "late" narrow a year or a month to a third of it, in both languages.

Properties protected:
- "early 2021" / "2021年初" is January-April, "mid-2021" May-August, "late 2021" / "the end of
  2021" / "2021年底" September-December;
- "early June 2021" / "2021年6月初" is June 1-10, "2021年6月中旬" June 11-20, "the end of June
  2021" / "2021年6月底" June 21-30;
- the words are time, not visual text: the query stays M (MF with a person);
- a day part ("early morning") and a festival (2021年中秋) are untouched.
"""

from __future__ import annotations

from datetime import date

import pytest

from finegrain.album.engine.plan import AlbumVocabulary, plan_query

VOCAB = AlbumVocabulary.build(people={"2": ["Marta", "玛尔塔"]}, places={}, latest_date=date(2024, 6, 1))


@pytest.mark.parametrize(("text", "lang", "source", "days"), [
    ("pictures from early 2021", "en", "M", (date(2021, 1, 1), date(2021, 4, 30))),
    ("mid-2021 with Marta", "en", "MF", (date(2021, 5, 1), date(2021, 8, 31))),
    ("late 2021", "en", "M", (date(2021, 9, 1), date(2021, 12, 31))),
    ("the end of 2021", "en", "M", (date(2021, 9, 1), date(2021, 12, 31))),
    ("early June 2021", "en", "M", (date(2021, 6, 1), date(2021, 6, 10))),
    ("the end of June 2021", "en", "M", (date(2021, 6, 21), date(2021, 6, 30))),
    ("2021年初的照片", "zh", "M", (date(2021, 1, 1), date(2021, 4, 30))),
    ("2021年底和玛尔塔的合影", "zh", "MF", (date(2021, 9, 1), date(2021, 12, 31))),
    ("2021年6月初", "zh", "M", (date(2021, 6, 1), date(2021, 6, 10))),
    ("2021年6月中旬拍的", "zh", "M", (date(2021, 6, 11), date(2021, 6, 20))),
    ("2021年6月底的相片", "zh", "M", (date(2021, 6, 21), date(2021, 6, 30))),
])
def test_a_third_of_a_year_or_month(text, lang, source, days):
    plan = plan_query(text, VOCAB, lang=lang)
    assert plan.source == source, plan.explain()
    assert [(r.start, r.end) for r in plan.time_ranges] == [days]
    assert plan.visual_text == ""


def test_day_parts_and_festivals_are_not_thirds():
    (r,) = plan_query("early morning joggers", VOCAB, lang="en").time_ranges
    assert r.hours is not None and r.every_year
    (r,) = plan_query("2021年中秋的照片", VOCAB, lang="zh").time_ranges
    assert r.start.month == 9 and "mid_autumn" in r.rule
