"""Source-type routing: hand-computed confusion on a tiny album, golden accuracy on PhotoBench album1."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from types import MappingProxyType

import pytest

from finegrain.album.bench.routing import evaluate_routing
from finegrain.album.engine.plan.records import SOURCE_TYPES, Plan
from finegrain.cli.main import main
from finegrain.errors import FinegrainError
from finegrain.io.photobench import Album, Person, Photo, PhotoQuery, read_album


def tiny_album() -> Album:
    photos = {"a.jpg": Photo("a.jpg", None, None, datetime(2025, 5, 1, 12), ("1",))}
    people = {"1": Person("1", ("me",), ("我",)), "2": Person("2", ("Xiaotong",), ("晓彤",))}
    dims = MappingProxyType({})
    queries = (
        PhotoQuery("q0", "cat under the car", "车底下的小猫", "V", dims),
        PhotoQuery("q1", "photos taken in Hangzhou", "杭州拍的", "M", dims),
        PhotoQuery("q2", "photos of Xiaotong", "晓彤的照片", "F", dims),
        PhotoQuery("q3", "orange cat, 2024", "橘猫, 2024", "VF", dims),  # label VF, the rules say VM
    )
    return Album("tiny", "", MappingProxyType(photos), MappingProxyType(people), queries)


def test_confusion_matrix_by_hand() -> None:
    report = evaluate_routing(tiny_album(), "en")
    assert report.n == 4 and report.correct == 3 and report.accuracy == pytest.approx(0.75)
    assert report.confusion["VF"]["VM"] == 1 and report.confusion["V"]["V"] == 1
    assert sum(sum(row.values()) for row in report.confusion.values()) == 4
    assert report.halves == {"even": (2, 2), "odd": (1, 2)}  # q0, q2 even; q1, q3 odd
    scores = {s.label: s for s in report.per_label}
    assert scores["VM"].precision == 0.0 and scores["VM"].recall is None and scores["VM"].predicted == 1
    assert scores["VF"].recall == 0.0 and scores["VF"].precision is None and scores["VF"].support == 1
    assert scores["M"].precision == scores["M"].recall == 1.0
    assert [r[3] for r in report.per_query] == ["V", "M", "F", "VM"]


def test_planner_is_pluggable_and_languages_checked() -> None:
    always_v = lambda text, vocab, lang: Plan(text, lang, "V")  # noqa: E731
    report = evaluate_routing(tiny_album(), "zh", planner=always_v)
    assert report.lang == "cn" and report.correct == 1
    assert report.to_dict()["per_label"][0] == {"label": "V", "precision": 0.25, "recall": 1.0, "predicted": 4, "support": 1}
    with pytest.raises(FinegrainError, match="'fr'"):
        evaluate_routing(tiny_album(), "fr")


@pytest.fixture(scope="module")
def album1(data_root: Path) -> Album:
    path = data_root / "photobench" / "album1"
    if not (path / "protected_query.json").is_file():
        pytest.skip("PhotoBench album1 not found")
    return read_album(path)


@pytest.mark.parametrize("lang", ["en", "cn"])
def test_album1_routing_accuracy(album1: Album, lang: str) -> None:
    report = evaluate_routing(album1, lang)
    assert report.n == 483
    assert set(report.confusion) == set(SOURCE_TYPES)
    assert sum(report.confusion[g][g] for g in SOURCE_TYPES) == report.correct
    # the bar, on all queries and on the held-out (odd-indexed) half
    assert report.accuracy >= 0.75
    assert report.half_accuracy("odd") >= 0.75
    # every source type is predicted correctly at least sometimes
    assert all(report.confusion[g][g] > 0 for g in SOURCE_TYPES)


def test_cli_eval_routing(album1: Album, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["album", "eval-routing", "--photobench", album1.path, "--lang", "cn"])
    out = capsys.readouterr().out
    assert code == 0
    assert "routing accuracy, album1 (cn)" in out and "confusion matrix" in out and "held-out half" in out
    code = main(["album", "plan", "去年夏天在杭州和晓彤的合照", "--photobench", album1.path, "--json"])
    out = capsys.readouterr().out
    assert code == 0 and '"source": "MF"' in out
