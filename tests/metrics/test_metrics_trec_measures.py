"""bpref, infAP, gm_map, num_*, iprec_at_recall_*, hits and ERR: hand cases and differential tests.

References: pytrec_eval (trec_eval's code) for the trec_eval measures, ir_measures' gdeval provider
(the TREC Web track's gdeval.pl) for ERR, ranx for hits. Runs are drawn twice: with coarse scores (many
ties, which finegrain, trec_eval and gdeval all break by document id descending) and with distinct
scores. pytrec_eval and gdeval agree with finegrain on both; ranx breaks ties in its own order, so it is
compared on distinct scores only.
"""

from __future__ import annotations

import math
import random
import shutil

import pytest
import pytrec_eval
from tests.metrics.test_metrics_differential import has_relevant, random_case

from finegrain.errors import FinegrainError
from finegrain.evaluate import evaluate
from finegrain.metrics import METRICS, compute, join, metric_values
from finegrain.metrics.spec import IPREC_NAMES, metric_aggregation, metric_names, metric_range
from finegrain.types import Qrels, Run

TOL = 1e-9
SEEDS = range(6)
TREC = ("bpref", "infAP", "gm_map", "num_ret", "num_rel", "num_rel_ret", "iprec_at_recall")


def distinct_scores(run: dict[str, dict[str, float]], seed: int) -> dict[str, dict[str, float]]:
    """The same documents with scores that never tie."""
    rnd = random.Random(seed)
    return {q: {d: rnd.random() + i * 1e-3 for i, d in enumerate(docs)} for q, docs in run.items()}


def cases() -> list[tuple[str, int]]:
    return [(kind, seed) for kind in ("ties", "distinct") for seed in SEEDS]


def case(kind: str, seed: int) -> tuple[dict, dict]:
    qrels, run = random_case(seed)
    return qrels, (run if kind == "ties" else distinct_scores(run, seed))


# --------------------------------------------------------------------------- against pytrec_eval


@pytest.mark.parametrize(("kind", "seed"), cases())
@pytest.mark.parametrize("rel", [1, 2])
def test_trec_eval_measures_equal_pytrec_eval_per_query(kind: str, seed: int, rel: int) -> None:
    qrels_d, run_d = case(kind, seed)
    ref = pytrec_eval.RelevanceEvaluator(qrels_d, set(TREC), relevance_level=rel).evaluate(run_d)
    qrels, run = Qrels.from_dict(qrels_d), Run.from_dict(run_d)
    pairs = [("bpref", "bpref"), ("infap", "infAP"), *((n, n) for n in IPREC_NAMES)]
    compared = 0
    for ours, measure in pairs:
        got = metric_values(qrels, run, f"{ours}(rel={rel})")
        assert set(got) == {q for q in qrels_d if has_relevant(qrels_d, q, rel)}
        for q, v in got.items():
            want = ref[q][measure] if q in run_d else 0.0  # missing from the run: an empty ranking
            assert v == pytest.approx(want, abs=TOL), (ours, q)
            compared += 1
    gm = metric_values(qrels, run, f"gm_map(rel={rel})")  # trec_eval keeps log(max(AP, 1e-5)) per query
    for q, v in gm.items():
        assert v is not None
        assert math.log(max(v, 1e-5)) == pytest.approx(ref[q]["gm_map"] if q in run_d else math.log(1e-5), abs=TOL)
    counts = {n: metric_values(qrels, run, n if n == "num_ret" else f"{n}(rel={rel})")
              for n in ("num_ret", "num_rel", "num_rel_ret")}
    for name, got in counts.items():
        assert set(got) == set(qrels_d)  # counts score every query, those without a relevant item too
        for q in ref:
            assert got[q] == ref[q][name], (name, q)
    assert compared > 300


@pytest.mark.parametrize(("kind", "seed"), cases()[::2])
def test_trec_eval_summaries_equal_pytrec_eval(kind: str, seed: int) -> None:
    """Under --compat trec_eval the aggregates are trec_eval's summary lines: means, sums and a geometric mean."""
    qrels_d, run_d = case(kind, seed)
    ref = pytrec_eval.RelevanceEvaluator(qrels_d, set(TREC)).evaluate(run_d)
    keys = ["bpref", "infap", "gm_map", "num_ret", "num_rel", "num_rel_ret", "iprec_at_recall_0.30"]
    ev = evaluate(Qrels.from_dict(qrels_d), Run.from_dict(run_d), keys, compat="trec_eval")
    per = {m: [ref[q][m] for q in ref] for m in ("bpref", "infAP", "gm_map", "num_ret", "num_rel", "num_rel_ret",
                                                   "iprec_at_recall_0.30")}
    assert ev["bpref"].value == pytest.approx(sum(per["bpref"]) / len(ref), abs=TOL)
    assert ev["infap"].value == pytest.approx(sum(per["infAP"]) / len(ref), abs=TOL)
    assert ev["iprec_at_recall_0.30"].value == pytest.approx(sum(per["iprec_at_recall_0.30"]) / len(ref), abs=TOL)
    assert ev["gm_map"].value == pytest.approx(math.exp(sum(per["gm_map"]) / len(ref)), abs=TOL)
    for n in ("num_ret", "num_rel", "num_rel_ret"):
        assert ev[n].value == sum(per[n])
    assert ev.aggregation()["num_ret"] == "sum" and ev.aggregation()["gm_map"] == "gmean"


# --------------------------------------------------------------------------- hand cases


# One query, relevance level 1. Ranked: a(2) x(unpooled) z(0) p(-1: pooled, unjudged) b(1) c(0) d(1).
# Judged: a 2, b 1, d 1, e 3 (never returned) -> R = 4; z 0, c 0, f 0 -> N = 3; p -1.
HAND_QRELS = {"q": {"a": 2, "b": 1, "d": 1, "e": 3, "z": 0, "c": 0, "f": 0, "p": -1}}
HAND_RUN = {"q": {"a": 7.0, "x": 6.0, "z": 5.0, "p": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}


def hand(metric: str) -> float | None:
    return metric_values(Qrels.from_dict(HAND_QRELS), Run.from_dict(HAND_RUN), metric)["q"]


def test_bpref_by_hand() -> None:
    # a: no judged non-relevant above -> 1; b: z above -> 1 - 1/min(3, 4); d: z, c above -> 1 - 2/3
    assert hand("bpref") == pytest.approx((1 + (1 - 1 / 3) + (1 - 2 / 3)) / 4)


def test_infap_by_hand() -> None:
    e = 1e-5
    # a at rank 1 -> 1.  b at rank 5 (i - 1 = 4 above: a rel, x unpooled, z nonrel, p unjudged):
    #   1/5 + (4/5) * ((1 + 1 + 1) / 4) * ((1 + e) / (1 + 1 + 2e))
    b = 1 / 5 + (4 / 5) * (3 / 4) * ((1 + e) / (2 + 2 * e))
    # d at rank 7 (6 above: a, b rel; z, c nonrel; p unjudged; x unpooled)
    d = 1 / 7 + (6 / 7) * ((2 + 2 + 1) / 6) * ((2 + e) / (4 + 2 * e))
    assert hand("infap") == pytest.approx((1 + b + d) / 4, abs=1e-12)


def test_infap_on_fully_judged_qrels_is_ap() -> None:
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "d": 0}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    q, r = Qrels.from_dict(qrels), Run.from_dict(run)
    assert metric_values(q, r, "infap")["q"] == pytest.approx(metric_values(q, r, "map")["q"], abs=1e-5)


def test_iprec_by_hand() -> None:
    # relevant returned at ranks 1 (a), 5 (b), 7 (d): precisions 1, 2/5, 3/7; R = 4 (e never returned).
    # c(x) = floor(4x + 0.9): 0.0 -> 0, 0.1 -> 1, 0.3 -> 2, 0.5 -> 2, 0.6 -> 3, 0.8 -> 4 (> 3 returned: 0)
    assert hand("iprec_at_recall_0.00") == 1.0
    assert hand("iprec_at_recall_0.10") == 1.0
    assert hand("iprec_at_recall_0.30") == pytest.approx(3 / 7)  # max(2/5, 3/7)
    assert hand("iprec_at_recall_0.60") == pytest.approx(3 / 7)
    assert hand("iprec_at_recall_0.80") == 0.0
    assert hand("iprec_at_recall_1.00") == 0.0


def test_counts_by_hand_and_their_sums() -> None:
    assert (hand("num_ret"), hand("num_rel"), hand("num_rel_ret")) == (7.0, 4.0, 3.0)
    assert (hand("num_rel(rel=2)"), hand("num_rel_ret(rel=2)"), hand("hits@3"), hand("hits@5(rel=2)")) == (2, 1, 1, 1)
    qrels = {**HAND_QRELS, "q2": {"a": 1}, "q3": {"b": 0}}
    ev = evaluate(Qrels.from_dict(qrels), Run.from_dict({**HAND_RUN, "q3": {"b": 1.0}}),
                  ["num_ret", "num_rel", "num_rel_ret", "hits@7"])
    assert ev.to_dict() == {"num_ret": 8.0, "num_rel": 5.0, "num_rel_ret": 3.0, "hits@7": 1.5}
    assert ev["num_ret"].denominators.n_scored == 3  # q3 (no relevant item) counts, q2 returned nothing
    assert ev["hits@7"].denominators.n_scored == 2  # hits is a ranking metric: q3 is excluded


def test_gm_map_is_the_geometric_mean_of_ap_with_the_floor() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"a": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 2.0, "a": 1.0}, "q3": {"b": 1.0}}  # AP 1, 1/2, 0
    ev = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), ["gm_map", "map"])
    assert ev["gm_map"].per_query == ev["map"].per_query == {"q1": 1.0, "q2": 0.5, "q3": 0.0}
    assert ev["gm_map"].value == pytest.approx((1.0 * 0.5 * 1e-5) ** (1 / 3))
    assert ev["map"].value == pytest.approx(0.5)


def test_err_by_hand_and_its_grade_scale() -> None:
    qrels = {"q": {"a": 4, "b": 0, "c": 2, "d": 1}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    r = {g: (2**g - 1) / 16 for g in range(5)}
    want = r[4] + (1 - r[4]) * r[2] / 3 + (1 - r[4]) * (1 - r[2]) * r[1] / 4
    q, rn = Qrels.from_dict(qrels), Run.from_dict(run)
    assert metric_values(q, rn, "err")["q"] == pytest.approx(want, abs=1e-15)
    assert metric_values(q, rn, "ERR@2")["q"] == pytest.approx(r[4], abs=1e-15)
    with pytest.raises(FinegrainError, match="grade 5, above ERR's scale 0..4"):
        metric_values(Qrels.from_dict({"q": {"a": 5}}), rn, "err@10")


# --------------------------------------------------------------------------- against ir_measures and ranx


def numeric_case(seed: int, kind: str) -> tuple[dict, dict]:
    """Numeric query ids and grades 0..4 (what gdeval reads); ranks 1..n as the run's scores."""
    rnd = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi in range(40):
        docs = [f"d{j}" for j in rnd.sample(range(200), rnd.randint(3, 40))]
        qrels[str(100 + qi)] = {d: rnd.choice([0, 0, 0, 1, 2, 3, 4]) for d in docs[: rnd.randint(1, len(docs))]}
        ranked = docs[rnd.randint(0, 2):]
        run[str(100 + qi)] = {d: (round(rnd.random() * 4) / 4 if kind == "ties" else rnd.random()) for d in ranked}
    return qrels, run


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval (ir_measures' ERR) runs on perl")
@pytest.mark.parametrize("kind", ["ties", "distinct"])
@pytest.mark.parametrize("k", [1, 5, 20])
def test_err_equals_ir_measures_gdeval(kind: str, k: int) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels_d, run_d = numeric_case(k, kind)
    want = {m.query_id: m.value for m in ir_measures.providers.registry["gdeval"].iter_calc(
        [ir_measures.ERR @ k], qrels_d, run_d)}
    got = metric_values(Qrels.from_dict(qrels_d), Run.from_dict(run_d), ir_measures.ERR @ k)
    assert set(got) == {q for q in qrels_d if has_relevant(qrels_d, q)} and len(got) > 20
    for q, v in want.items():
        if q in got:
            assert got[q] == pytest.approx(v, abs=6e-6), q  # gdeval prints 5 decimals
        else:
            assert v == 0.0  # gdeval skips a topic without a positive judgement; ir_measures fills in 0


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_hits_equals_ranx(seed: int) -> None:
    ranx = pytest.importorskip("ranx")
    qrels_d, run_d = random_case(seed)
    run_d = distinct_scores(run_d, seed)
    qrels_d = {q: {d: g for d, g in ds.items() if g >= 0} for q, ds in qrels_d.items() if has_relevant(qrels_d, q)}
    run_d = {q: ds for q, ds in run_d.items() if q in qrels_d and ds}
    qrels_d = {q: ds for q, ds in qrels_d.items() if q in run_d}
    names = ["hits@2", "hits@10", "hits"]
    rq, rr = ranx.Qrels(qrels_d), ranx.Run(run_d)
    per_query = ranx.evaluate(rq, rr, names, return_mean=False)
    means = ranx.evaluate(rq, rr, names)
    ev = evaluate(Qrels.from_dict(qrels_d), Run.from_dict(run_d), names)
    for name in names:
        want = dict(zip(list(rr.keys()), (float(v) for v in per_query[name])))
        assert dict(ev[name].per_query) == pytest.approx(want), name
        assert ev[name].value == pytest.approx(means[name]), name


# --------------------------------------------------------------------------- declarations


def test_every_metric_returns_its_declared_rule_and_range() -> None:
    qrels_d, run_d = random_case(1)
    qrels_d = {q: {d: min(g, 4) for d, g in ds.items()} for q, ds in qrels_d.items()}  # ERR's grade scale
    joined = join(Qrels.from_dict(qrels_d), Run.from_dict(run_d))
    assert set(METRICS.names()) == set(metric_names())
    for name in metric_names():
        spec = {"precision": "precision@5", "set_fbeta": "set_fbeta(beta=0.5)"}.get(name, name)
        qv = compute(joined, spec)
        assert qv.rule == metric_aggregation(name), name
        lo, hi = metric_range(name)
        vals = qv.values[qv.scored & ~(qv.values != qv.values)]
        assert ((vals >= lo) & (vals <= hi)).all(), name
