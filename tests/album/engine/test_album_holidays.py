"""Statutory holidays read as their official days off (``span``, the default) or their own day (``day``).

Properties protected:
- with a year, a statutory holiday covers the official days off, weekend joined, across a
  year end (New Year's Day 2023 starts on December 31, 2022) and merged with another
  holiday (Mid-Autumn and National Day 2023: September 29 - October 6);
- ``day`` keeps the holiday's own day (lunar ones by the lunar calendar), with or without a year;
- a year the tables do not cover falls back to the usual days and says so in the rule;
- the option reaches search and ``album eval`` (a hand-made album whose gold set holds
  every day off) and the command line (``--holiday``), and a wrong value is one error line.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from finegrain.album.bench.evaluation import evaluate_album
from finegrain.album.engine.plan import AlbumVocabulary, plan_query
from finegrain.album.engine.plan.holidays import DEFAULT_HOLIDAY_READING, official_span
from finegrain.album.engine.plan.time_rules import find_times
from finegrain.cli.main import main
from finegrain.errors import FinegrainError

pytest.importorskip("chinese_calendar")  # the official days off (the `time` extra)

LATEST = date(2026, 6, 1)
VOCAB = AlbumVocabulary.build(people={}, places={}, latest_date=LATEST)


def _span(text: str, lang: str = "en", holiday: str = DEFAULT_HOLIDAY_READING) -> tuple[date, date]:
    (r,) = plan_query(text, VOCAB, lang=lang, holiday=holiday).time_ranges
    assert not r.every_year
    return r.start, r.end


def test_span_is_the_default() -> None:
    assert DEFAULT_HOLIDAY_READING == "span"
    assert _span("National Day 2021") == (date(2021, 10, 1), date(2021, 10, 7))
    assert _span("2021年国庆节的照片", "zh") == (date(2021, 10, 1), date(2021, 10, 7))


@pytest.mark.parametrize(("text", "lang", "span"), [
    ("Labor Day photos from 2023", "en", (date(2023, 4, 29), date(2023, 5, 3))),  # the days off start before May 1
    ("New Year's Day photos from 2023", "en", (date(2022, 12, 31), date(2023, 1, 2))),  # across the year end
    ("2023年元旦的照片", "zh", (date(2022, 12, 31), date(2023, 1, 2))),
    ("National Day 2023", "en", (date(2023, 9, 29), date(2023, 10, 6))),  # Mid-Autumn joined the week
    ("2025年国庆节拍的", "zh", (date(2025, 10, 1), date(2025, 10, 8))),
    ("Dragon Boat Festival 2024", "en", (date(2024, 6, 8), date(2024, 6, 10))),  # the weekend before Monday's holiday
])
def test_official_days_off(text: str, lang: str, span: tuple[date, date]) -> None:
    assert _span(text, lang) == span


def test_day_keeps_the_holidays_own_day() -> None:
    assert _span("National Day 2021", holiday="day") == (date(2021, 10, 1), date(2021, 10, 1))
    assert _span("celebrating Labor Day in 2023", holiday="day") == (date(2023, 5, 1), date(2023, 5, 1))
    assert _span("2023年元旦的照片", "zh", holiday="day") == (date(2023, 1, 1), date(2023, 1, 1))
    pytest.importorskip("lunardate")
    assert _span("2024年春节的照片", "zh", holiday="day") == (date(2024, 2, 10), date(2024, 2, 10))
    assert _span("Chinese New Year 2024") == (date(2024, 2, 10), date(2024, 2, 17))


def test_day_without_a_year_recurs_on_the_day() -> None:
    (r,) = plan_query("国庆出游", VOCAB, lang="zh", holiday="day").time_ranges
    assert r.every_year and r.contains(date(2019, 10, 1)) and not r.contains(date(2019, 10, 2))
    (r,) = plan_query("国庆出游", VOCAB, lang="zh").time_ranges
    assert r.every_year and r.contains(date(2019, 10, 2))


def test_a_year_without_tables_falls_back_to_the_usual_days() -> None:
    assert official_span("national_day", 1990) is None
    (r,) = plan_query("National Day 1990", VOCAB, lang="en").time_ranges
    assert (r.start, r.end) == (date(1990, 10, 1), date(1990, 10, 7)) and "usual days" in r.rule


def test_other_festivals_are_not_statutory_holidays() -> None:
    for holiday in ("span", "day"):
        (r,) = plan_query("Christmas 2021", VOCAB, lang="en", holiday=holiday).time_ranges
        assert (r.start, r.end) == (date(2021, 12, 24), date(2021, 12, 25))


def test_unknown_reading_is_refused() -> None:
    with pytest.raises(FinegrainError, match="'week'"):
        plan_query("National Day 2021", VOCAB, lang="en", holiday="week")
    with pytest.raises(FinegrainError, match="'week'"):
        find_times("National Day 2021", "en", LATEST, holiday="week")


# ---------------------------------------------------------------------- engine, album eval, CLI


def _album(root: Path) -> Path:
    """Photos on October 1, 3 and 5, 2021 and one on October 9 (after the days off); the query's
    gold set holds the three inside 2021's National Day days off."""
    root.mkdir(parents=True)
    times = {"a.jpg": "2021-10-01T10:00:00", "b.jpg": "2021-10-03T10:00:00", "c.jpg": "2021-10-05T10:00:00",
             "d.jpg": "2021-10-09T10:00:00"}
    meta = {k: {"latitude": None, "longitude": None, "time": t} for k, t in times.items()}
    (root / "metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    q = {"query_en": "National Day photos from 2021", "query_cn": "2021年国庆节的照片", "Source": "M", "Location": None,
         "Time": "cognitive", "Person": None, "Object": None, "Concept": None, "Genre": None,
         "ground_truth": ["a.jpg", "b.jpg", "c.jpg"], "ground_truth_count": 3}
    (root / "samples_query.json").write_text(json.dumps([q], ensure_ascii=False), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def album(tmp_path_factory) -> Path:
    return _album(tmp_path_factory.mktemp("holiday") / "tiny")


@pytest.mark.parametrize("lang", ["en", "cn"])
def test_album_eval_span_and_day(album: Path, lang: str) -> None:
    span = evaluate_album(album, lang)
    assert span["settings"]["holiday"] == "span"
    (q,) = span["per_query"]
    assert q["predicted"] == ["a.jpg", "b.jpg", "c.jpg"] and q["metrics"]["set_f1"] == 1.0
    day = evaluate_album(album, lang, holiday="day")
    (q,) = day["per_query"]
    assert q["predicted"] == ["a.jpg"] and q["metrics"]["set_recall"] == pytest.approx(1 / 3)
    assert day["settings"]["holiday"] == "day"


def test_cli_plan_and_eval_take_holiday(album: Path, capsys) -> None:
    assert main(["album", "plan", "National Day 2021", "--today", "2025-06-01", "--json", "--holiday", "day"]) == 0
    (r,) = json.loads(capsys.readouterr().out)["time_ranges"]
    assert (r["start"], r["end"]) == ("2021-10-01", "2021-10-01")
    assert main(["album", "plan", "National Day 2021", "--today", "2025-06-01", "--json"]) == 0
    (r,) = json.loads(capsys.readouterr().out)["time_ranges"]
    assert (r["start"], r["end"]) == ("2021-10-01", "2021-10-07")
    assert main(["album", "eval", "--photobench", str(album), "--lang", "en", "--holiday", "week"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "'week'" in err and "Traceback" not in err
