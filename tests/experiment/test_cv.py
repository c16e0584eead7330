"""``finegrain eval --cv``: k-fold cross-validation of a retriever's tunable options (finegrain.experiment.tuning.cv)."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from finegrain.cli.main import main
from finegrain.compare.comparison import load_comparison
from finegrain.errors import FinegrainError
from finegrain.experiment.tuning.cv import CVSpec, assemble, choose, grid_points, parse_cv, tunables
from finegrain.experiment.tuning.folds import fold_of
from finegrain.experiment.tuning.grid import cross_validate
from finegrain.retrieve.fusion.hybrid import hybrid_retriever
from finegrain.types import Corpus, Document, Qrels, Queries, Query, Run

HIT, MISS = {"rel": 2.0, "other": 1.0}, {"rel": 1.0, "other": 2.0}
QRELS = Qrels.from_dict({q: {"rel": 1} for q in ("q1", "q2", "q3", "q4")})
FOLDS = {"q1": 0, "q2": 0, "q3": 1, "q4": 1}
INV = 1 / math.log2(3)  # ndcg@10 of the one relevant item at rank 2


def _run(hits: dict[str, bool], name: str) -> Run:
    return Run.from_dict({q: dict(HIT if h else MISS) for q, h in hits.items()}, name=name)


A = _run({"q1": True, "q2": True, "q3": True, "q4": False}, "A")  # ndcg@1 mean 0.75
B = _run({"q1": False, "q2": True, "q3": True, "q4": True}, "B")  # ndcg@1 mean 0.75


def _hand() -> object:
    return choose(QRELS, [A, B], A, ["ndcg@1", "ndcg@10"], CVSpec(2, 0, "ndcg@1"), queries=["q1", "q2", "q3", "q4"],
                  points=[{"w": 0.0}, {"w": 1.0}], default_setting={"w": 0.0}, assignment=FOLDS, n_resamples=200)


def test_hand_computed_choices_and_out_of_fold_values() -> None:
    # fold 0 is fitted on {q3, q4}: A 0.5, B 1.0 -> B; scored on q1 (B misses) and q2 (B hits) = 0.5
    # fold 1 is fitted on {q1, q2}: A 1.0, B 0.5 -> A; scored on q3 (A hits) and q4 (A misses) = 0.5
    cv = _hand()
    assert [dict(f.setting) for f in cv.folds] == [{"w": 1.0}, {"w": 0.0}]
    assert [f.fitted_value for f in cv.folds] == [1.0, 1.0]
    assert [f.held_out_value for f in cv.folds] == [0.5, 0.5]
    assert dict(cv.evaluation["ndcg@1"].per_query) == {"q1": 0.0, "q2": 1.0, "q3": 1.0, "q4": 0.0}
    m1 = cv.metrics["ndcg@1"]
    assert m1.mean == 0.5 and m1.default_mean == 0.75 and m1.diff == -0.25 and m1.n == 4
    assert m1.fold_values == (0.5, 0.5)
    m10 = cv.metrics["ndcg@10"]  # reported on the settings chosen for the objective, ndcg@1
    assert m10.mean == pytest.approx((INV + 1 + 1 + INV) / 4)
    assert m10.default_mean == pytest.approx((1 + 1 + 1 + INV) / 4)
    # the folds split 1-1: the consensus is the first in grid order; in-sample A and B tie at 0.75 -> the default A
    assert dict(cv.consensus) == {"w": 0.0}
    assert dict(cv.in_sample) == {"w": 0.0} and cv.in_sample_value == 0.75
    # the out-of-fold run holds each query's results from its fold's choice
    assert cv.run.to_dict() == {"q1": B["q1"], "q2": B["q2"], "q3": A["q3"], "q4": A["q4"]}
    assert m1.ci is not None and m1.ci[0] <= m1.mean <= m1.ci[1]


def test_json_sections_are_plain_data() -> None:
    cv = _hand()
    prov, body = cv.provenance(), cv.to_json_dict()
    json.dumps(prov), json.dumps(body)
    assert [f["setting"] for f in prov["per_fold"]] == [{"w": 1.0}, {"w": 0.0}]
    assert prov["consensus"] == {"w": 0.0} and prov["objective"] == "ndcg@1"
    assert body["default_per_query"]["ndcg@1"] == {"q1": 1.0, "q2": 1.0, "q3": 1.0, "q4": 0.0}
    assert body["fold_of"] == FOLDS


def test_ties_prefer_the_default_then_grid_order() -> None:
    same = choose(QRELS, [A, A], A, ["ndcg@1"], CVSpec(2, 0), queries=list(FOLDS), points=[{"w": 0}, {"w": 1}],
                  default_setting={"w": 1}, assignment=FOLDS, n_resamples=10)
    assert [dict(f.setting) for f in same.folds] == [{"w": 1}, {"w": 1}]
    first = choose(QRELS, [A, A], A, ["ndcg@1"], CVSpec(2, 0), queries=list(FOLDS), points=[{"w": 0}, {"w": 1}],
                   default_setting={"w": 5}, assignment=FOLDS, n_resamples=10)
    assert [dict(f.setting) for f in first.folds] == [{"w": 0}, {"w": 0}]


def test_stratified_folds_deal_each_type_in_proportion() -> None:
    sizes = {"object": 23, "place": 11, "complex": 7, None: 4}
    types = {f"{t}-{i}": t for t, n in sizes.items() for i in range(n)}
    qids = list(types)
    folds = fold_of(qids, 5, 3, types)
    assert sorted(folds) == sorted(qids)
    per_fold = Counter(folds.values())
    assert max(per_fold.values()) - min(per_fold.values()) <= 1
    for t, n in sizes.items():
        got = Counter(folds[q] for q in qids if types[q] == t)
        assert all(n // 5 <= got.get(f, 0) <= -(-n // 5) for f in range(5)), (t, got)
    assert folds == fold_of(qids, 5, 3, types)
    assert folds != fold_of(qids, 5, 4, types)
    assert fold_of(qids, 5, 3) == fold_of(qids, 5, 3, None)  # no strata: the sweep's deal, unchanged


def _random_case(seed: int, n_q: int = 40, n_points: int = 6) -> tuple[Qrels, list[Run], dict[str, str]]:
    rng = np.random.default_rng(seed)
    qids = [f"q{i}" for i in range(n_q)]
    qrels = Qrels.from_dict({q: {f"d{j}": int(rng.integers(1, 3)) for j in rng.choice(20, 3, replace=False)}
                             for q in qids})
    runs = [Run.from_dict({q: {f"d{j}": float(rng.random()) for j in range(20)} for q in qids}, name=f"p{p}")
            for p in range(n_points)]
    types = {q: ("a", "b", "c")[i % 3] for i, q in enumerate(qids)}
    return qrels, runs, types


def test_a_fold_choice_never_depends_on_its_own_qrels() -> None:
    qrels, runs, types = _random_case(7)
    points = [{"i": i} for i in range(len(runs))]
    spec = CVSpec(5, 11, "ndcg@10")
    base = choose(qrels, runs, runs[0], ["ndcg@10"], spec, queries=list(qrels), points=points, strata=types,
                  n_resamples=10)
    rng = np.random.default_rng(0)
    changed_any = False
    for f in range(5):
        mine = [q for q, k in base.fold_of.items() if k == f]
        data = qrels.to_dict()
        for q in mine:  # new judgements for fold f only
            data[q] = {f"d{j}": int(rng.integers(1, 3)) for j in rng.choice(20, 4, replace=False)}
        other = choose(Qrels.from_dict(data), runs, runs[0], ["ndcg@10"], spec, queries=list(qrels), points=points,
                       strata=types, n_resamples=10)
        assert other.fold_of == base.fold_of
        assert other.folds[f].point == base.folds[f].point  # fold f's own choice is blind to fold f
        changed_any |= any(other.folds[g].point != base.folds[g].point for g in range(5) if g != f)
        assert other.folds[f].fitted_value == base.folds[f].fitted_value
    assert changed_any  # the test can fail: other folds do look at fold f's qrels


def test_same_seed_same_result_other_seed_other_folds() -> None:
    qrels, runs, types = _random_case(3)
    points = [{"i": i} for i in range(len(runs))]
    a, b, c = (choose(qrels, runs, runs[0], ["ndcg@5", "ndcg@10"], CVSpec(5, s), queries=list(qrels), points=points,
                      strata=types, n_resamples=50) for s in (1, 1, 2))
    assert a.provenance() == b.provenance() and a.to_json_dict() == b.to_json_dict()
    assert dict(a.fold_of) != dict(c.fold_of)


def test_assemble_keeps_each_query_from_its_source() -> None:
    r1 = Run.from_dict({"a": {"x": 1.0, "y": 0.5}, "b": {"z": 3.0}}, name="r1")
    r2 = Run.from_dict({"a": {"w": 2.0}, "c": {"x": 1.0}}, name="r2")
    out = assemble([r2, r1, r1], ["a", "b", "c"], name="oof")
    assert out.to_dict() == {"a": {"w": 2.0}, "b": {"z": 3.0}, "c": {}}


def test_parse_cv() -> None:
    assert parse_cv("5") == CVSpec(5, 0, None)
    assert parse_cv("3, metric=NDCG@5 ,seed=2") == CVSpec(3, 2, "ndcg@5")
    for bad in ("1", "x", "5,foo=1", "5,seed=a"):
        with pytest.raises(FinegrainError):
            parse_cv(bad)


@pytest.mark.parametrize("bad, match", [("5,seed=1,seed=2", "given twice"), ("5,seed=-1", "negative"),
                                        ("5,metric=ndcg@10,metric=map", "given twice")])
def test_parse_cv_refuses_a_repeated_part_and_a_negative_seed(bad: str, match: str) -> None:
    with pytest.raises(FinegrainError, match=match):  # the last one used to win silently; --seed is >= 0
        parse_cv(bad)


def test_declared_grids() -> None:
    hybrid = {t.key: t for t in tunables("hybrid", {})}
    assert set(hybrid) == {"weights", "k"} and hybrid["k"].default == 60
    assert hybrid["weights"].values[:2] == ((0.0, 1.0), (0.1, 0.9)) and len(hybrid["weights"].values) == 11
    assert [t.key for t in tunables("hybrid", {"k": 60.0})] == ["weights"]  # --set fixes an option
    assert [t.key for t in tunables("hybrid", {"fusion": "convex"})] == ["weights"]  # convex has no k
    assert len(tunables("hybrid", {"parts": ("bm25-okapi", "e5", "bm25")})[0].values) == 66
    assert [t.key for t in tunables("e5", {})] == ["prf_depth", "rocchio_beta"]  # dense: vector PRF
    assert tunables("e5", {"prf_depth": 0, "rocchio_beta": 0.6}) == ()
    assert len(grid_points(tunables("bm25-okapi", {}))) == 16


CORPUS = Corpus([Document(f"d{i}", t) for i, t in enumerate([
    "red apple on a table", "green apple tree", "a red car on the road", "blue car and red bus", "apple pie recipe",
    "a dog on the road", "red dog toy", "the green bus", "table and chairs", "a tree by the road"])])
QUERIES = Queries([Query(f"q{i}", t, ("x", "y")[i % 2]) for i, t in enumerate(
    ["red apple", "car road", "green bus", "dog", "apple tree", "red table"])])
QRELS_T = Qrels.from_dict({"q0": {"d0": 1}, "q1": {"d2": 1}, "q2": {"d7": 1}, "q3": {"d5": 1, "d6": 1},
                           "q4": {"d1": 1}, "q5": {"d0": 1, "d8": 1}})


def test_hybrid_grid_runs_equal_one_retrieval_per_setting() -> None:
    h = hybrid_retriever(parts=("bm25-okapi", "bm25"), **{"bm25.tokenizer": "capretrieval"})
    settings = [{"weights": (0.2, 0.8), "k": 10.0}, {"weights": None, "k": 60}, {"weights": (1.0, 0.0), "k": 30.0}]
    grid = h.retrieve_grid(settings, CORPUS, QUERIES, lang="en", top_k=5, show_progress=False)
    for s, run in zip(settings, grid):
        one = hybrid_retriever(parts=("bm25-okapi", "bm25"), **{"bm25.tokenizer": "capretrieval"},
                               **{k: v for k, v in s.items() if v is not None})
        assert run.to_dict() == one.retrieve(CORPUS, QUERIES, lang="en", top_k=5, show_progress=False).to_dict()
    with pytest.raises(FinegrainError, match="depth"):
        h.retrieve_grid([{"depth": 3}], CORPUS, QUERIES, lang="en", top_k=5)


def test_a_hybrid_grid_fuses_each_run_when_read_and_keeps_one() -> None:
    """A grid of many weight vectors holds the parts' runs and one fused run, not one per point."""
    h = hybrid_retriever(parts=("bm25-okapi", "bm25"), **{"bm25.tokenizer": "capretrieval"})
    settings = [{"weights": (0.2, 0.8), "k": 10.0}, {"weights": (1.0, 0.0), "k": 30.0}, {"weights": None, "k": 60}]
    grid = h.retrieve_grid(settings, CORPUS, QUERIES, lang="en", top_k=5, show_progress=False)
    first = grid[0]
    assert grid[0] is first  # the last run read is kept
    second = grid[1]
    again = grid[0]  # fused anew: the first was dropped when the second was read
    assert again is not first and again.to_dict() == first.to_dict() and second.to_dict() != first.to_dict()
    assert len(grid) == 3 and len(grid[1:]) == 2 and grid[-1].to_dict() == grid[2].to_dict()
    assert grid[1:][0].to_dict() == second.to_dict()
    with pytest.raises(IndexError):
        grid[3]


def test_cross_validate_bm25_end_to_end() -> None:
    cv = cross_validate("bm25-okapi", {"k1": 1.5}, CORPUS, QUERIES, QRELS_T, lang="en", metrics=["ndcg@10"],
                        spec=CVSpec(2, 0), strata=QUERIES.types())
    assert [t.key for t in cv.tuned] == ["b"] and len(cv.points) == 4
    assert dict(cv.default_setting) == {"b": 0.75}
    assert Counter(cv.fold_of.values()) == Counter({0: 3, 1: 3})
    for f in (0, 1):  # stratified: each fold gets the x and y queries in proportion
        assert Counter(QUERIES[q].type for q, k in cv.fold_of.items() if k == f) in (Counter(x=2, y=1),
                                                                                     Counter(x=1, y=2))
    with pytest.raises(FinegrainError, match="nothing to tune"):
        cross_validate("bm25-okapi", {"k1": 1.5, "b": 0.75}, CORPUS, QUERIES, QRELS_T, lang="en",
                       metrics=["ndcg@10"], spec=CVSpec(2, 0))


def test_cli_eval_cv_saves_choices_and_compares(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "-d", "embedded/captions-en", "-r", "bm25-okapi", "-q"]
    assert main([*args, "--set", "k1=1.5", "--cv", "3", "--seed", "1", "-o", str(tmp_path / "cv")]) == 0
    printed = capsys.readouterr().out
    assert "3-fold CV on ndcg@10" in printed and "consensus" in printed
    saved = json.loads((tmp_path / "cv" / "results.json").read_text())
    prov = saved["provenance"]["cv"]
    assert len(prov["per_fold"]) == 3 and prov["grid"] == {"b": [0.4, 0.6, 0.75, 0.9]}
    assert saved["cv"]["metrics"]["ndcg@10"]["mean"] == pytest.approx(saved["aggregate"]["ndcg@10"])
    assert main([*args, "-o", str(tmp_path / "plain")]) == 0
    cmp = load_comparison([tmp_path / "plain", tmp_path / "cv"])
    assert cmp.tests["ndcg@10"]  # paired over queries
    assert main(["eval", "-d", "embedded/captions-en", "-r", "e5", "--set", "prf_depth=0", "--set", "rocchio_beta=0.6",
                 "--cv", "5", "-o", str(tmp_path / "x")]) != 0
    assert "nothing to tune" in capsys.readouterr().err


def test_a_named_fusion_tunes_one_weight_per_part() -> None:
    """A grid that depends on other options sees the retriever's own defaults: ``hybrid-sparse``
    fuses three parts, so every weight vector has three entries (it used to get hybrid's two)."""
    by_key = {t.key: t for t in tunables("hybrid-sparse", {})}
    assert {len(w) for w in by_key["weights"].values} == {3}
    assert len(by_key["weights"].values) == 66  # multiples of 0.1 over three parts summing to 1
    two = {t.key: t for t in tunables("hybrid-sparse", {"parts": ["bm25-okapi", "e5"]})}
    assert {len(w) for w in two["weights"].values} == {2}


@pytest.mark.parametrize("text", ["1_0", "٣", "５", "5,seed=1_0", "5,seed=99999999999999999999999"])
def test_cv_numbers_follow_the_one_number_grammar(text: str) -> None:
    with pytest.raises(FinegrainError, match="--cv"):
        parse_cv(text)
