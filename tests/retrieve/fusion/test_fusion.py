"""Fusion: hand-computed RRF and convex cases, normalisation, errors, invariances, a naive reference."""

from __future__ import annotations

import random
import time
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain.errors import FinegrainError
from finegrain.ranking import rank_docs
from finegrain.retrieve.fusion.methods import convex, fuse, normalize, rrf
from finegrain.retrieve.registry import RRF_K_MAX, WEIGHT_MAX
from finegrain.types import Run

A = {"q": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
B = {"q": {"d3": 5.0, "d4": 4.0}}  # d1, d2 missing from B; d4 missing from A


def run(data: dict, name: str = "r") -> Run:
    return Run.from_dict(data, name=name)


# --------------------------------------------------------------------------- RRF by hand


def test_rrf_hand_computed_with_missing_documents() -> None:
    fused = rrf([run(A, "a"), run(B, "b")])  # k=60
    want = {"d1": Fraction(1, 61), "d2": Fraction(1, 62), "d3": Fraction(1, 63) + Fraction(1, 61), "d4": Fraction(1, 62)}
    assert set(fused["q"]) == set(want)
    for d, v in want.items():
        assert fused["q"][d] == pytest.approx(float(v), rel=1e-15), d
    # d2 and d4 tie at 1/62: the Run rule puts the larger id first
    assert fused.ranked("q") == ["d3", "d1", "d4", "d2"]
    assert fused.name == "rrf(a,b)"


def test_rrf_weights_and_k() -> None:
    fused = rrf([run(A), run(B)], k=0, weights=[2, 1])
    assert fused.to_dict() == {"q": pytest.approx({"d1": 2.0, "d2": 1.0, "d3": 2 / 3 + 1.0, "d4": 0.5})}
    # weight 0 ignores a run's ranking (its documents stay, at 0)
    only_b = rrf([run(A), run(B)], weights=[0, 1])
    assert only_b.ranked("q")[:2] == ["d3", "d4"]
    assert only_b["q"]["d1"] == 0.0


def test_rrf_ranks_input_ties_by_the_run_rule() -> None:
    # x and y tie in the input: y ranks first (id descending), so y gets 1/61 and x 1/62
    fused = rrf([run({"q": {"x": 1.0, "y": 1.0}})])
    assert fused["q"] == pytest.approx({"y": 1 / 61, "x": 1 / 62})


def test_rrf_depth_keeps_top_of_each_run() -> None:
    fused = rrf([run(A), run(B)], depth=1)
    assert fused.to_dict() == {"q": pytest.approx({"d1": 1 / 61, "d3": 1 / 61})}


def test_queries_are_the_union_and_empty_queries_stay() -> None:
    a = run({"q1": {"x": 1.0}, "q2": {}})
    b = run({"q3": {"y": 2.0}, "q1": {"z": 0.5}})
    for fused in (rrf([a, b]), convex([a, b]), convex([a, b], norm="zscore")):
        assert fused.qids == ("q1", "q2", "q3")
        assert dict(fused["q2"]) == {}
        assert set(fused["q1"]) == {"x", "z"} and set(fused["q3"]) == {"y"}


# --------------------------------------------------------------------------- normalisation and convex by hand


def test_minmax_and_zscore_by_hand() -> None:
    r = run({"q": {"a": 1.0, "b": 2.0, "c": 3.0}, "e": {}})
    assert normalize(r, "minmax").to_dict() == {"q": {"a": 0.0, "b": 0.5, "c": 1.0}, "e": {}}
    z = np.sqrt(1.5)  # population std of 1,2,3 is sqrt(2/3)
    assert normalize(r, "zscore")["q"] == pytest.approx({"a": -z, "b": 0.0, "c": z})
    assert normalize(r, "none") is r


def test_normalisation_of_all_equal_scores_has_no_division_by_zero() -> None:
    r = run({"q": {"a": 2.0, "b": 2.0}, "one": {"x": -7.0}})
    with np.errstate(all="raise"):
        mm = normalize(r, "minmax")
        zs = normalize(r, "zscore")
    assert mm.to_dict() == {"q": {"a": 1.0, "b": 1.0}, "one": {"x": 1.0}}
    assert zs.to_dict() == {"q": {"a": 0.0, "b": 0.0}, "one": {"x": 0.0}}


def test_normalisation_refuses_infinite_scores() -> None:
    with pytest.raises(FinegrainError, match=r"non-finite score inf .*'b'.*'q'"):
        normalize(run({"q": {"a": 1.0, "b": float("inf")}}), "minmax")


def test_convex_minmax_hand_computed_missing_scores_zero() -> None:
    # A -> d1 1, d2 .5, d3 0;  B -> d3 1, d4 0;  missing = 0
    fused = convex([run(A), run(B)], [1, 1])
    assert fused.to_dict() == {"q": {"d1": 1.0, "d2": 0.5, "d3": 1.0, "d4": 0.0}}
    assert fused.ranked("q") == ["d3", "d1", "d2", "d4"]  # d1/d3 tie -> larger id first
    weighted = convex([run(A), run(B)], [0.25, 0.75])
    assert weighted.to_dict() == {"q": pytest.approx({"d1": 0.25, "d2": 0.125, "d3": 0.75, "d4": 0.0})}


def test_convex_zscore_missing_document_gets_the_runs_floor() -> None:
    z = np.sqrt(1.5)
    # A -> d1 z, d2 0, d3 -z (floor -z);  B -> d3 1, d4 -1 (floor -1)
    fused = convex([run(A), run(B)], norm="zscore")
    assert fused["q"] == pytest.approx({"d1": z - 1, "d2": -1.0, "d3": -z + 1, "d4": -z - 1})
    assert fused.ranked("q") == ["d1", "d3", "d2", "d4"]


def test_convex_none_uses_raw_minimum_as_floor() -> None:
    fused = convex([run(A), run(B)], norm="none")
    assert fused.to_dict() == {"q": {"d1": 3.0 + 4.0, "d2": 2.0 + 4.0, "d3": 1.0 + 5.0, "d4": 1.0 + 4.0}}


def test_fuse_by_name() -> None:
    assert fuse([run(A), run(B)], "rrf", k=1).to_dict() == rrf([run(A), run(B)], k=1).to_dict()
    with pytest.raises(FinegrainError, match=r"unknown fusion method 'rfr'"):
        fuse([run(A)], "rfr")


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda: rrf([]), r"no runs to fuse"),
        (lambda: convex([], None), r"no runs to fuse"),
        (lambda: rrf([run(A), run(B)], weights=[1.0]), r"1 weight \[1.0\] for 2 runs"),
        (lambda: convex([run(A), run(B)], [1, 1, 1]), r"3 weights \[1, 1, 1\] for 2 runs"),
        (lambda: rrf([run(A), run(B)], weights=[1, -0.5]), r"weight -0.5 in \[1, -0.5\] is negative"),
        (lambda: convex([run(A), run(B)], [0, 0]), r"all weights \[0, 0\] are 0"),
        (lambda: convex([run(A), run(B)], [1, float("nan")]), r"weight nan .* not a finite number"),
        (lambda: convex([run(A), run(B)], "1,1"), r"not a sequence of numbers"),
        (lambda: rrf([run(A)], k=-1), r"RRF k=-1 is not a finite number >= 0"),
        (lambda: convex([run(A)], norm="l2"), r"unknown normalisation 'l2'.*'minmax'"),
        (lambda: rrf([run(A)], depth=0), r"depth=0 is not a whole number >= 1"),
        (lambda: rrf([A]), r"item 0 .* is a dict, not a Run"),
    ],
)
def test_errors_name_the_bad_value(call, pattern: str) -> None:
    with pytest.raises(FinegrainError, match=pattern):
        call()


def test_rrf_k_and_weights_have_declared_upper_bounds() -> None:
    with pytest.raises(FinegrainError, match=r"RRF: k=1e\+20 is not a number in \[0, 1000000\]"):
        rrf([run(A), run(B)], k=1e20)  # every rank's 1/(k + rank) is the same double: all fused scores tie
    with pytest.raises(FinegrainError, match=r"weight 1e\+300 .* is not in \[0, 1000000\]"):
        rrf([run(A), run(B)], weights=[1e300, 1e300])  # the sum of the two overflows
    with pytest.raises(FinegrainError, match=r"fusion method 'rrf': k=1e\+20 is not a number"):
        fuse([run(A), run(B)], "rrf", k=1e20)
    # at the caps, fused scores stay finite and every rank of a deep run keeps its own score
    deep = Run.from_dict({"q": {f"d{i:04d}": float(1000 - i) for i in range(1000)}})
    fused = rrf([deep, deep], k=RRF_K_MAX, weights=[WEIGHT_MAX, WEIGHT_MAX])
    values = np.asarray(list(fused["q"].values()))
    assert np.isfinite(values).all() and len(np.unique(values)) == 1000
    assert fused.ranked("q") == deep.ranked("q")


# --------------------------------------------------------------------------- invariances


def _shuffled(data: dict, seed: int) -> dict:
    rng = random.Random(seed)
    out = {}
    for q, docs in data.items():
        items = list(docs.items())
        rng.shuffle(items)
        out[q] = dict(items)
    return out


TIES = {
    "q1": {"a": 1.0, "b": 1.0, "c": 0.5, "d": 0.2},
    "q2": {"x": 3.0, "y": 3.0, "z": 3.0},
}
TIES2 = {"q1": {"d": 9.0, "e": 9.0, "b": 1.0}, "q2": {"w": 1.0, "x": 0.0}}


@pytest.mark.parametrize("method", ["rrf", "minmax", "zscore", "none"])
def test_fusion_is_invariant_to_run_order_and_entry_order(method: str) -> None:
    def go(runs: list[Run]) -> Run:
        return rrf(runs) if method == "rrf" else convex(runs, norm=method)

    ref = go([run(TIES, "a"), run(TIES2, "b")])
    for seed in range(5):
        a, b = run(_shuffled(TIES, seed), "a"), run(_shuffled(TIES2, seed + 100), "b")
        for runs in ([a, b], [b, a]):
            got = go(runs)
            assert {q: got.ranked(q) for q in ref} == {q: ref.ranked(q) for q in ref}
            for q in ref:
                assert dict(got[q]) == pytest.approx(dict(ref[q]), abs=1e-12), q


def test_fused_ties_follow_the_run_rule() -> None:
    # symmetric runs: every document gets the same fused score, so the order is id descending
    a = run({"q": {"p": 2.0, "r": 1.0}})
    b = run({"q": {"r": 2.0, "p": 1.0}})
    for fused in (rrf([a, b]), convex([a, b]), convex([a, b], norm="zscore")):
        assert fused["q"]["p"] == fused["q"]["r"]
        assert fused.ranked("q") == ["r", "p"]


# --------------------------------------------------------------------------- properties and a naive reference

doc_ids = st.sampled_from([f"d{i}" for i in range(12)])
scores = st.floats(min_value=-100, max_value=100, allow_nan=False).map(lambda x: round(x, 2))
one_query = st.dictionaries(doc_ids, scores, max_size=10)
runs_data = st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), one_query, min_size=1, max_size=3)


@settings(max_examples=200, deadline=None)
@given(runs_data)
def test_rrf_of_one_run_preserves_its_order(data: dict) -> None:
    r = run(data)
    fused = rrf([r])
    assert {q: fused.ranked(q) for q in r} == {q: r.ranked(q) for q in r}


def _naive(datas: list[dict], weights: list[float], method: str, k: float = 60) -> dict:
    """Straight from the formulas, one query and one document at a time."""
    out: dict = {}
    for q in dict.fromkeys(q for d in datas for q in d):
        docs = dict.fromkeys(d for data in datas for d in data.get(q, {}))
        scores = dict.fromkeys(docs, 0.0)
        for data, w in zip(datas, weights):
            s = data.get(q, {})
            if method == "rrf":
                ranks = {d: i + 1 for i, d in enumerate(rank_docs(s))}
                for d in docs:
                    scores[d] += w / (k + ranks[d]) if d in ranks else 0.0
            else:
                vals = list(s.values())
                if method == "minmax":
                    lo, hi = (min(vals), max(vals)) if vals else (0, 0)
                    norm = {d: (v - lo) / (hi - lo) if hi > lo else 1.0 for d, v in s.items()}
                    floor = 0.0
                else:  # zscore
                    mean = sum(vals) / len(vals) if vals else 0.0
                    std = (sum((v - mean) ** 2 for v in vals) / len(vals)) ** 0.5 if vals else 0.0
                    norm = {d: (v - mean) / std if std > 0 else 0.0 for d, v in s.items()}
                    floor = min(norm.values()) if norm else 0.0
                for d in docs:
                    scores[d] += w * norm.get(d, floor)
        out[q] = scores
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(runs_data, min_size=1, max_size=3), st.sampled_from(["rrf", "minmax", "zscore"]), st.data())
def test_fusion_matches_a_naive_reference(datas: list[dict], method: str, draw) -> None:
    weights = draw.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=len(datas), max_size=len(datas)))
    if not any(weights):
        weights[0] = 1.0
    runs = [run(d, f"r{i}") for i, d in enumerate(datas)]
    fused = rrf(runs, weights=weights) if method == "rrf" else convex(runs, weights, norm=method)
    want = _naive(datas, weights, method)
    assert list(fused) == list(want)
    for q in want:
        assert dict(fused[q]) == pytest.approx(want[q], abs=1e-9), q


def test_fusing_large_runs_is_fast() -> None:
    rng = np.random.default_rng(0)
    nq, per, nd = 20_000, 50, 5_000
    base = rng.permutation(nd)[:per]

    def big(name: str) -> Run:
        codes = np.concatenate([np.roll(base, i % per) + (i % 7) for i in range(nq)])
        offsets = np.arange(nq + 1) * per
        return Run([f"q{i}" for i in range(nq)], offsets, codes, [f"d{i}" for i in range(nd + 7)],
                   rng.random(nq * per), name=name, check=False)

    a, b = big("a"), big("b")
    started = time.perf_counter()
    fused = rrf([a, b])
    fused2 = convex([a, b], norm="zscore")
    assert time.perf_counter() - started < 30
    assert len(fused) == nq and fused.n_entries == fused2.n_entries >= nq * per
