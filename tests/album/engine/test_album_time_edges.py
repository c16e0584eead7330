"""Time expressions at the calendar's edges.

An impossible date is a planning fact: the plan says the date does not exist and the engine
abstains with that reason; nothing raises. A catalog with no dated photo still answers,
counting relative dates from today (or ``--today``) and saying so in the plan.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime

import pytest

from finegrain.album.engine.catalog.sqlite import SqliteCatalog
from finegrain.album.engine.outcome import OutcomeKind
from finegrain.album.engine.plan import AlbumVocabulary, plan_query
from finegrain.album.engine.plan.time_rules import find_times, no_such_date
from finegrain.album.engine.records import Photo
from finegrain.album.engine.search import search
from finegrain.cli.main import main

VOCAB = AlbumVocabulary.build(people={}, places={}, latest_date=date(2024, 5, 1))

IMPOSSIBLE = [
    ("2月30日的照片", "2月30日", "February has no day 30"),
    ("2月30号", "2月30号", "February has no day 30"),
    ("photos on February 30", "February 30", "February has no day 30"),
    ("Feb 31st photos", "Feb 31st", "February has no day 31"),
    ("photos on February 30, 2023", "February 30, 2023", "February 2023 has no day 30"),
    ("2023年2月29日", "2023年2月29日", "2023 is not a leap year"),
    ("2023-02-29 at the beach", "2023-02-29", "2023 is not a leap year"),
    ("2023-13-01", "2023-13-01", "no month 13"),
    ("2099年13月45日的照片", "2099年13月45日", "no month 13"),
    ("4月31日下午", "4月31日", "April has no day 31"),
    ("十三月的照片", "十三月", "no month 13"),
    ("13月的照片", "13月", "no month 13"),
    ("十二月三十二日", "十二月三十二日", "December has no day 32"),
    ("99999年的照片", "99999年", "year 99999 is outside the calendar"),
    ("0000年的照片", "0000年", "year 0 is outside the calendar"),
    ("-5年的照片", "-5年", "year -5 is outside the calendar"),
    ("photos from year 0", "year 0", "year 0 is outside the calendar"),
    ("photos from year -44", "year -44", "year -44 is outside the calendar"),
    ("photos from year 123456", "year 123456", "outside the calendar"),
]


@pytest.mark.parametrize(("query", "text", "why"), IMPOSSIBLE)
def test_an_impossible_date_is_in_the_plan_not_a_crash(query: str, text: str, why: str) -> None:
    plan = plan_query(query, VOCAB)
    assert [t.text for t in plan.impossible_times] == [text]
    assert why in plan.impossible_times[0].reason
    assert "M" in plan.source
    assert any(rule.startswith("time: no such date") and t == text for rule, t in plan.explain())
    assert plan.to_dict()["impossible_times"][0]["text"] == text
    # the impossible date does not leak into a range (no "month of 2023" for February 30, 2023)
    assert all(r.start.year != 2024 or r.every_year for r in plan.time_ranges if r.text == text)


@pytest.mark.parametrize("query", ["2月29日", "Feb 29", "2024年2月29日", "2024-02-29", "12月31日", "十二月三十一日",
                                   "9999年12月", "photos from year 9999", "0001年1月1日"])
def test_real_dates_at_the_edges_still_plan(query: str) -> None:
    plan = plan_query(query, VOCAB)
    assert plan.impossible_times == ()
    assert plan.time_ranges


def test_chinese_numerals_and_leap_days() -> None:
    (r,) = plan_query("十二月三十一日", VOCAB).time_ranges
    assert (r.start.month, r.start.day) == (12, 31)
    (r,) = plan_query("2024年2月29日", VOCAB).time_ranges
    assert r.start == r.end == date(2024, 2, 29)
    assert no_such_date(2, 29) is None and no_such_date(2, 29, 2023) and no_such_date(2, 29, 2000) is None
    assert no_such_date(2, 29, 1900)  # not a leap year (divisible by 100, not by 400)


@pytest.mark.parametrize("latest", [date(1, 1, 5), date(1, 3, 1), date(9999, 12, 30), date(2150, 6, 1)])
@pytest.mark.parametrize("query", [
    "last week", "recently", "yesterday", "last month", "last summer", "last winter", "this winter", "last year",
    "the year before last", "last christmas", "spring festival", "last spring festival", "mid-autumn 2023",
    "second half of the year", "上个月", "上周末", "最近", "去年", "前年", "去年春节", "今年冬天", "春节", "中秋",
    "去年的周末下午", "photos from 9999 winter",
])
def test_relative_dates_past_the_calendar_ends_are_explained(latest: date, query: str) -> None:
    vocab = AlbumVocabulary.build(people={}, places={}, latest_date=latest)
    plan = plan_query(query, vocab)  # never raises
    for r in plan.time_ranges:
        assert r.start <= r.end or r.every_year
    for t in plan.impossible_times:
        assert t.text and t.reason


def test_find_times_reports_the_reason_on_the_match() -> None:
    ranges, matches = find_times("2月30日下午", "zh", date(2024, 5, 1))
    assert ranges == ()  # "afternoon" narrows nothing after an impossible date
    assert [(m.text, m.impossible is not None) for m in matches] == [("2月30日", True), ("下午", False)]


def test_lunar_festival_beyond_the_tables_is_explained() -> None:
    pytest.importorskip("lunardate")
    plan = plan_query("9999年春节", VOCAB)
    assert [t.text for t in plan.impossible_times] == ["春节"]


# --------------------------------------------------------------------------- engine, CLI


@pytest.fixture
def dated(tmp_path):
    with SqliteCatalog(tmp_path / "dated.sqlite") as s:
        s.put_photo(Photo(id="a.jpg", path="a.jpg", taken_at=datetime(2024, 2, 29, 10)))
        s.put_photo(Photo(id="b.jpg", path="b.jpg", taken_at=datetime(9999, 12, 31, 23)))
    return tmp_path / "dated.sqlite"


@pytest.fixture
def undated(tmp_path):
    with SqliteCatalog(tmp_path / "undated.sqlite") as s:
        s.put_photo(Photo(id="x.jpg", path="x.jpg"))
        s.put_photo(Photo(id="y.jpg", path="y.jpg"))
    return tmp_path / "undated.sqlite"


@pytest.mark.parametrize("query", ["2月30日的照片", "photos on February 30", "2099年13月45日的照片", "99999年的照片"])
def test_the_engine_abstains_on_an_impossible_date_with_the_reason(dated, query: str) -> None:
    with SqliteCatalog(dated, create=False) as s:
        r = search(s, query)
    assert r.abstained and r.photo_ids == frozenset()
    assert r.outcome is not None and r.outcome.kind is OutcomeKind.IMPOSSIBLE_DATE
    assert r.reason.startswith("no photo can match time" if r.plan.lang == "en" else "没有照片能符合时间")


def test_the_last_day_of_the_calendar_is_searchable(dated) -> None:
    with SqliteCatalog(dated, create=False) as s:
        assert search(s, "9999年12月31日的照片").photo_ids == {"b.jpg"}
        assert search(s, "photos from year 9999").photo_ids == {"b.jpg"}
        assert search(s, "2024年2月29日").photo_ids == {"a.jpg"}


def test_a_catalog_without_dated_photos_answers_from_today(undated) -> None:
    with SqliteCatalog(undated, create=False) as s:
        r = search(s, "photos from last summer")
        steps = dict(r.plan.explain())
        assert "today" in steps["time: 'now' of relative dates"]
        assert date.today().isoformat() in steps["time: 'now' of relative dates"]
        assert r.abstained and "last summer" in r.reason  # no photo is dated, so none matches
        r = search(s, "last summer", today=date(2020, 9, 15))
        (t,) = r.plan.time_ranges
        assert (t.start, t.end) == (date(2020, 6, 1), date(2020, 8, 31))
        assert "2020-09-15 (given as today)" in dict(r.plan.explain())["time: 'now' of relative dates"]


def test_cli_search_on_an_undated_catalog_and_today_option(undated, capsys) -> None:
    assert main(["album", "search", "-c", str(undated), "去年夏天"]) == 0
    out = capsys.readouterr().out
    assert "pass today" not in out and "no matching photos" in out and "today" in out
    assert main(["album", "search", "-c", str(undated), "last summer", "--today", "2020-09-15", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["plan"]["time_ranges"][0]["start"] == "2020-06-01"


def test_cli_today_must_be_a_date(undated, capsys) -> None:
    assert main(["album", "search", "-c", str(undated), "last summer", "--today", "2020-02-30"]) == 2
    err = capsys.readouterr().err
    assert re.search(r"error: .*--today", err) and "Traceback" not in err


@pytest.mark.parametrize("query", ["2月30日的照片", "photos on February 30", "2099年13月45日的照片"])
def test_cli_search_explains_an_impossible_date(dated, query, capsys) -> None:
    assert main(["album", "search", "-c", str(dated), query]) == 0
    out = capsys.readouterr().out
    assert "no matching photos" in out and "no such date" in out


@pytest.mark.parametrize("text", ["my year 12 formal", "year 2 at uni", "year 10 reunion"])
def test_a_school_year_is_not_a_calendar_year(text: str) -> None:
    ranges, matches = find_times(text, "en", date(2025, 6, 1))
    assert ranges == () and matches == ()


def test_a_year_of_thousands_of_digits_is_impossible_not_a_crash() -> None:
    ranges, matches = find_times("photos from year " + "9" * 5000, "en", date(2025, 6, 1))
    assert ranges == () and len(matches) == 1
