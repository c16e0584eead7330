"""Threshold retrieval with a cross-validated threshold (finegrain.experiment.tuning.threshold).

Hand-computed curve and cross-validation on three queries (one fold each), a check that a
fold's threshold never depends on that fold's judgements, normalisation invariance, the
CLI, and capretrieval/en bm25-okapi against the retriever's own threshold option.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from finegrain.cli.main import main
from finegrain.errors import FinegrainError
from finegrain.evaluate.evaluate import evaluate
from finegrain.experiment.tuning.threshold import cut_at, fit_scale, fold_of, parse_sweep, sweep_thresholds
from finegrain.types import Qrels, Run

# q1: two relevant (a, c); q2: no answer; q3: one relevant (b)
QRELS = {"q1": {"a": 1, "c": 1, "b": 0}, "q2": {"a": 0}, "q3": {"b": 1}}
RUN = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"a": 2.5}, "q3": {"b": 1.5, "a": 0.5}}
QUERIES = ["q1", "q2", "q3"]


def _sweep(qrels=QRELS, run=RUN, metrics=("pair_f1", "reject_f1", "set_f1"), spec="threshold=0:3:1,folds=3"):
    return sweep_thresholds(Qrels.from_dict(qrels), Run.from_dict(run), list(metrics), parse_sweep(spec), queries=QUERIES)


def test_parse_sweep_grid_and_options() -> None:
    s = parse_sweep("threshold=0:1:0.25")
    assert s.thresholds() == (0.0, 0.25, 0.5, 0.75, 1.0)
    assert (s.norm, s.folds, s.seed) == ("none", 5, 0)
    assert len(parse_sweep("threshold=0:30:1").thresholds()) == 31
    assert parse_sweep("threshold=0:1:0.1").thresholds()[-1] == 1.0  # no float drift past STOP
    s = parse_sweep("threshold=-1:1:0.5, norm=MinMax, folds=4, seed=7")
    assert (s.thresholds(), s.norm, s.folds, s.seed) == ((-1.0, -0.5, 0.0, 0.5, 1.0), "minmax", 4, 7)


@pytest.mark.parametrize("text, match", [
    ("threshold=0:1", "START:STOP:STEP"),
    ("thresh=0:1:1", "START:STOP:STEP"),
    ("threshold=0:1:0", "STEP must be a positive"),
    ("threshold=2:1:0.5", "STOP 1 is below START 2"),
    ("threshold=0:1:0.5,folds=1", "at least 2 folds"),
    ("threshold=0:1:0.5,folds=x", "not a whole number"),
    ("threshold=0:1:0.5,k=3", "unknown part"),
    ("threshold=0:1:0.5,norm=minmx", "did you mean 'minmax'"),
    ("threshold=0:100000:1", "at most"),
])
def test_parse_sweep_refuses_bad_specs(text: str, match: str) -> None:
    with pytest.raises(FinegrainError) as e:
        parse_sweep(text)
    assert match in str(e.value) + str(e.value.hint)


def test_fit_scale_by_hand() -> None:
    s = np.array([1.0, 3.0, 5.0])
    mm = fit_scale(s, "minmax")
    assert (mm.shift, mm.scale) == (1.0, 4.0)
    assert mm.apply(s).tolist() == [0.0, 0.5, 1.0]
    z = fit_scale(s, "zscore")
    assert z.shift == 3.0 and z.scale == pytest.approx(np.sqrt(8 / 3))
    assert fit_scale(np.array([2.0, 2.0]), "minmax").scale == 1.0  # constant run: defined
    assert fit_scale(s, "none").apply(s).tolist() == s.tolist()


def test_cut_at_keeps_scores_at_or_above_and_empty_queries() -> None:
    run = Run.from_dict(RUN)
    cut = cut_at(run, np.asarray(run.values, dtype=float), 2.0)
    assert cut.to_dict() == {"q1": {"a": 3.0, "b": 2.0}, "q2": {"a": 2.5}, "q3": {}}
    assert cut.ranked("q1") == ["a", "b"]


def test_curve_by_hand() -> None:
    sw = _sweep()
    assert sw.thresholds == (0.0, 1.0, 2.0, 3.0)
    # pair_f1 = 2 sum TP / (sum |P| + sum |G|), |G| = 2 + 0 + 1
    assert sw.curve["pair_f1"] == pytest.approx((6 / 9, 6 / 8, 2 / 6, 2 / 4))
    # reject_f1 = 2A / (2A + B + C): only t=3 rejects q2 (A) and q3 (B)
    assert sw.curve["reject_f1"] == pytest.approx((0.0, 0.0, 0.0, 2 / 3))
    # set_f1, mean per query: t=0 q1 4/5, q2 0, q3 2/3
    assert sw.curve["set_f1"][0] == pytest.approx((0.8 + 0 + 2 / 3) / 3)
    assert sw.mean_returned == pytest.approx((2.0, 5 / 3, 1.0, 1 / 3))
    assert sw.rejected == (0, 0, 1, 2)
    assert sw.max_returned == 3


def test_cross_validation_by_hand() -> None:
    sw = _sweep()
    folds = fold_of(QUERIES, 3, 0)
    assert sorted(folds.values()) == [0, 1, 2]  # one query per fold
    cv = sw.cv["pair_f1"]
    # threshold fitted on the other two queries (see the module's tie rule: lowest wins):
    #   without q1: t=1 (2/3); without q2: t=1 (6/7); without q3: t=0, 1 and 3 tie at 2/3 -> 0
    want = {"q1": (1.0, 2 / 3, 4 / 5), "q2": (1.0, 6 / 7, 0.0), "q3": (0.0, 2 / 3, 2 / 3)}
    for q, (t, fitted, held) in want.items():
        f = cv.folds[folds[q]]
        assert (f.threshold, f.n_queries) == (t, 1), q
        assert f.fitted_value == pytest.approx(fitted) and f.held_out_value == pytest.approx(held), q
    # pooled out of fold: q1 at 1 (TP 2, |P| 3, |G| 2), q2 at 1 (0, 1, 0), q3 at 0 (1, 2, 1)
    assert cv.value == pytest.approx(6 / 9)
    assert (cv.in_sample_threshold, cv.in_sample_value) == (1.0, pytest.approx(0.75))
    assert cv.threshold == 1.0  # median of 1, 1, 0
    d = sw.to_json_dict()
    assert d["cross_validation"]["pair_f1"]["value"] == pytest.approx(6 / 9)
    assert "never looks at the fold it is scored on" in d["method"]
    json.dumps(d)


def test_a_folds_threshold_ignores_that_folds_judgements() -> None:
    """Rewriting the qrels of one fold's queries changes its held-out score, never its own threshold."""
    rng = np.random.default_rng(3)
    docs = [f"d{i}" for i in range(12)]
    queries = [f"q{i}" for i in range(20)]
    run = {q: {d: float(rng.integers(0, 10)) for d in docs} for q in queries}
    qrels = {q: {d: int(rng.random() < 0.3) for d in docs} for q in queries}
    spec = parse_sweep("threshold=0:9:1,folds=4,seed=1")
    before = sweep_thresholds(Qrels.from_dict(qrels), Run.from_dict(run), ["pair_f1", "set_f1"], spec, queries=queries)
    folds = fold_of(queries, 4, 1)
    changed = {q: ({d: 1 - g for d, g in j.items()} if folds[q] == 2 else j) for q, j in qrels.items()}
    after = sweep_thresholds(Qrels.from_dict(changed), Run.from_dict(run), ["pair_f1", "set_f1"], spec, queries=queries)
    for m in ("pair_f1", "set_f1"):
        assert after.cv[m].folds[2].threshold == before.cv[m].folds[2].threshold
        assert after.cv[m].folds[2].held_out_value != before.cv[m].folds[2].held_out_value
        assert after.curve[m] != before.curve[m]


def test_minmax_makes_a_threshold_mean_the_same_for_a_rescaled_run() -> None:
    scaled = {q: {d: 10 * s + 5 for d, s in r.items()} for q, r in RUN.items()}
    spec = "threshold=0:1:0.125,folds=3,norm=minmax"
    a, b = _sweep(spec=spec), _sweep(run=scaled, spec=spec)
    for m in a.metrics:
        assert a.curve[m] == pytest.approx(b.curve[m])
        assert a.cv[m].thresholds == b.cv[m].thresholds
    raw = _sweep(run=scaled, spec="threshold=0:1:0.125,folds=3")
    assert raw.curve["pair_f1"] != pytest.approx(a.curve["pair_f1"])  # raw scores: the threshold moved


def test_curve_equals_evaluate_on_the_cut_run() -> None:
    sw = _sweep()
    for i, t in enumerate(sw.thresholds):
        cut = {q: {d: s for d, s in r.items() if s >= t} for q, r in RUN.items()}
        ev = evaluate(Qrels.from_dict(QRELS), Run.from_dict(cut), ["pair_f1", "reject_f1", "set_f1"], queries=QUERIES)
        for m in sw.metrics:
            assert sw.curve[m][i] == pytest.approx(ev[m].value), (m, t)


def test_too_few_queries_for_the_folds() -> None:
    with pytest.raises(FinegrainError, match="3 queries cannot be dealt into 5 folds"):
        _sweep(spec="threshold=0:3:1")


def test_eval_cli_prints_the_curve_and_the_cross_validated_threshold(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s"
    assert main(["eval", "-d", "embedded/captions-zh", "-r", "bm25-okapi", "-m", "pair_f1,reject_f1",
                 "--sweep", "threshold=0:6:0.5,folds=3", "-o", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "threshold sweep" in text and "cross-validated threshold" in text
    assert "never on the fold it is scored on" in text
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))["threshold_sweep"]
    assert saved["metrics"] == ["pair_f1", "reject_f1"] and len(saved["thresholds"]) == 13
    assert saved["folds"] == 3 and len(saved["cross_validation"]["pair_f1"]["folds"]) == 3


def test_eval_cli_refuses_a_bad_sweep_before_retrieving(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "-d", "embedded/captions-zh", "-r", "bm25-okapi", "-m", "pair_f1",
                 "--sweep", "threshold=5:1:1", "-o", str(tmp_path / "x"), "--quiet"]) != 0
    assert "below START" in capsys.readouterr().err
    assert not (tmp_path / "x" / "results.json").exists()


def test_capretrieval_sweep_matches_the_retrievers_own_threshold(tmp_path: Path, with_data_root: Path) -> None:
    """capretrieval/en, bm25-okapi: the sweep's pair_f1 at 8 equals an eval with --set threshold=8."""
    assert main(["eval", "-d", "capretrieval/en", "-r", "bm25-okapi", "-m", "pair_f1,set_f1",
                 "--sweep", "threshold=0:30:1", "-o", str(tmp_path / "s"), "--quiet"]) == 0
    assert main(["eval", "-d", "capretrieval/en", "-r", "bm25-okapi", "-m", "pair_f1,set_f1", "--set", "threshold=8",
                 "-o", str(tmp_path / "t"), "--quiet"]) == 0
    sweep = json.loads((tmp_path / "s" / "results.json").read_text(encoding="utf-8"))["threshold_sweep"]
    own = json.loads((tmp_path / "t" / "results.json").read_text(encoding="utf-8"))["aggregate"]
    i = sweep["thresholds"].index(8.0)
    for m in ("pair_f1", "set_f1"):
        assert sweep["curve"][m][i] == pytest.approx(own[m], abs=1e-12)
    cv = sweep["cross_validation"]["pair_f1"]
    assert cv["value"] <= cv["in_sample_value"] + 1e-12  # out of fold is no better than the best in sample
    assert sweep["n_queries"] == 404


@pytest.mark.parametrize("text", ["threshold=0:1:0.1,folds=1_0", "threshold=0:1:0.1,seed=٣",
                                  "threshold=0:1:0.1,folds=99999999999999999999999"])
def test_sweep_numbers_follow_the_one_number_grammar(text: str) -> None:
    with pytest.raises(FinegrainError, match="--sweep"):
        parse_sweep(text)


@pytest.mark.parametrize("text, match", [
    ("threshold=0:1e20:1e-5", "at most"),  # 1e25 thresholds: counted, never made (it used to hang)
    ("threshold=-1e308:1e308:1e-300", "at most"),  # the count overflows a double
    ("threshold=٠:١:0.5", "START:STOP:STEP"),  # Arabic-Indic digits: ASCII only, as every number
    ("threshold=0:１:0.5", "START:STOP:STEP"),
    ("threshold=0:1:0.5,folds=3,folds=4", "given twice"),
    ("threshold=0:1:0.5,seed=-1", "negative"),
])
def test_parse_sweep_refuses_what_the_fuzzer_found(text: str, match: str) -> None:
    with pytest.raises(FinegrainError) as e:
        parse_sweep(text)
    assert match in str(e.value) + str(e.value.hint)
