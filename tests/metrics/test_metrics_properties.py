"""Property tests (hypothesis): bounds, input-order invariance, monotonicity, ideal rankings,
and agreement with a naive pure-Python reference for every metric family."""

from __future__ import annotations

import math
import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from finegrain.evaluate import evaluate
from finegrain.metrics import metric_values
from finegrain.ranking import rank_order, string_ranks
from finegrain.types import Qrels, Run

DOCS = ["a", "b", "c", "d", "e", "f", "aa", "ab", "b1", "é", "Z", "10", "9"]
QIDS = ["q1", "q2", "q3", "q4", "q5"]
UNIT = [
    "ndcg", "ndcg@1", "ndcg@3", "ndcg@5(rel=2)", "precision@1", "precision@4", "recall", "recall@3",
    "hit_rate@2", "mrr", "mrr@3", "map", "map@4", "r_precision", "fail_rate", "set_precision",
    "set_recall@3", "set_f1", "set_f2", "pair_precision", "pair_recall", "pair_f1",
    "reject_precision", "reject_recall", "reject_f1",
]

scores = st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, -1.0])  # few values: many ties


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict, dict]:
    qids = draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=5, unique=True))
    qrels = {q: draw(st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), max_size=8)) for q in qids}
    run_q = draw(st.lists(st.sampled_from(QIDS), max_size=5, unique=True))
    run = {q: draw(st.dictionaries(st.sampled_from(DOCS), scores, max_size=10)) for q in run_q}
    return qrels, run


def shuffled_run(run: dict, seed: int) -> Run:
    rnd = random.Random(seed)
    records = [(q, d, s) for q, ds in run.items() for d, s in ds.items()]
    rnd.shuffle(records)
    return Run.from_records(records)


def ranked(scores_: dict[str, float]) -> list[str]:
    return [d for d, _ in sorted(scores_.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(cases())
def test_values_are_within_bounds(case: tuple[dict, dict]) -> None:
    qrels, run = case
    e = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), UNIT + ["median_rank"])
    for key in UNIT:
        for v in list(e[key].per_query.values()) + [e[key].value]:
            assert v is None or 0.0 <= v <= 1.0 + 1e-12, (key, v)
    for v in e["median_rank"].per_query.values():
        assert v is None or (v >= 1 and v == int(v))


@FAST
@given(cases(), st.integers(0, 10**6))
def test_values_do_not_depend_on_input_order(case: tuple[dict, dict], seed: int) -> None:
    qrels, run = case
    q = Qrels.from_dict(qrels)
    a = evaluate(q, Run.from_dict(run), UNIT)
    b = evaluate(q, shuffled_run(run, seed), UNIT)
    for key in UNIT:
        assert dict(a[key].per_query) == dict(b[key].per_query), key
        assert a[key].value == b[key].value


@FAST
@given(cases())
def test_cutoff_monotonicity(case: tuple[dict, dict]) -> None:
    qrels, run = case
    q, r = Qrels.from_dict(qrels), Run.from_dict(run)
    keys = [f"{m}@{k}" for m in ("recall", "hit_rate", "map", "mrr") for k in range(1, 12)]
    e = evaluate(q, r, keys + ["recall", "map", "mrr", "hit_rate"])
    for m in ("recall", "hit_rate", "map", "mrr"):
        for qid in e[m].per_query:
            seq = [e[f"{m}@{k}"].per_query[qid] for k in range(1, 12)] + [e[m].per_query[qid]]
            assert all(x <= y + 1e-12 for x, y in zip(seq, seq[1:])), (m, qid, seq)
    # k beyond every ranking equals no cutoff
    for m in ("recall", "map", "mrr", "hit_rate"):
        assert dict(e[f"{m}@11"].per_query) == dict(e[m].per_query)


@FAST
@given(cases())
def test_identities_between_metrics(case: tuple[dict, dict]) -> None:
    qrels, run = case
    q, r = Qrels.from_dict(qrels), Run.from_dict(run)
    e = evaluate(q, r, ["hit_rate@1", "fail_rate", "mrr@1", "precision@1", "hit_rate@3", "mrr@3", "r_precision", "recall"])
    for qid, hit in e["hit_rate@1"].per_query.items():
        assert e["fail_rate@1"].per_query[qid] == 1.0 - hit
        assert e["mrr@1"].per_query[qid] == hit == e["precision@1"].per_query[qid]
        assert e["hit_rate@3"].per_query[qid] == float(e["mrr@3"].per_query[qid] > 0)
        n_rel = sum(g >= 1 for g in qrels[qid].values())
        # R-precision is precision and recall at R
        at_r = metric_values(q, r, f"recall@{n_rel}")[qid]
        assert math.isclose(e["r_precision"].per_query[qid], at_r)


@FAST
@given(st.dictionaries(st.sampled_from(DOCS), st.integers(0, 3), min_size=1, max_size=12), st.data())
def test_ideal_ranking_scores_one(grades: dict[str, int], data: st.DataObject) -> None:
    if not any(g >= 1 for g in grades.values()):
        grades = {**grades, "a": 2}
    extra = data.draw(st.lists(st.sampled_from(["x1", "x2", "x3"]), unique=True))
    # scores = grades: the ideal order (ties are between equal gains); unjudged items go last
    run = {"q": {**{d: float(g) for d, g in grades.items()}, **{d: -1.0 for d in extra}}}
    q, r = Qrels.from_dict({"q": grades}), Run.from_dict(run)
    for key in ["ndcg", "ndcg@1", "ndcg@3", "ndcg@10", "map", "r_precision", "mrr", "recall", "hit_rate@1"]:
        assert math.isclose(metric_values(q, r, key)["q"], 1.0), key


@FAST
@given(cases())
def test_set_and_rejection_metrics_equal_a_naive_reference(case: tuple[dict, dict]) -> None:
    qrels, run = case
    e = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), ["set_precision@2", "set_recall", "set_f1", "pair_f1", "reject_f1"])
    tp_sum = pred_sum = rel_sum = 0
    a = b = c = 0
    f1s = []
    for qid, grades in qrels.items():
        G = {d for d, g in grades.items() if g >= 1}
        P_all = set(run.get(qid, {}))
        P2 = set(ranked(run.get(qid, {}))[:2])
        tp = len(P_all & G)
        want_p2 = len(P2 & G) / len(P2) if P2 else None
        want_r = tp / len(G) if G else None
        want_f1 = 2 * tp / (len(P_all) + len(G)) if (P_all or G) else None
        assert e["set_precision@2"].per_query[qid] == want_p2
        assert e["set_recall"].per_query[qid] == want_r
        got_f1 = e["set_f1"].per_query[qid]
        assert (got_f1 is None and want_f1 is None) or math.isclose(got_f1, want_f1)
        if want_f1 is not None:
            f1s.append(want_f1)
        tp_sum, pred_sum, rel_sum = tp_sum + tp, pred_sum + len(P_all), rel_sum + len(G)
        a += not G and not P_all
        b += bool(G) and not P_all
        c += not G and bool(P_all)
    if f1s:
        assert math.isclose(e["set_f1"].value, sum(f1s) / len(f1s))
    else:
        assert e["set_f1"].value is None
    want_pair = 2 * tp_sum / (pred_sum + rel_sum) if pred_sum + rel_sum else None
    assert e["pair_f1"].value == want_pair or math.isclose(e["pair_f1"].value, want_pair)
    want_rej = 2 * a / (2 * a + b + c) if (2 * a + b + c) else None
    assert e["reject_f1"].value == want_rej or math.isclose(e["reject_f1"].value, want_rej)


@FAST
@given(cases())
def test_ranking_metrics_equal_a_naive_reference(case: tuple[dict, dict]) -> None:
    qrels, run = case
    q, r = Qrels.from_dict(qrels), Run.from_dict(run)
    e = evaluate(q, r, ["ndcg@3", "map", "mrr@2", "precision@2"])
    for qid, grades in qrels.items():
        if not any(g >= 1 for g in grades.values()):
            assert qid not in e["ndcg@3"].per_query
            continue
        order = ranked(run.get(qid, {}))
        rel = [grades.get(d, 0) for d in order]
        dcg = sum(max(g, 0) / math.log2(i + 2) for i, g in enumerate(rel[:3]))
        ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:3]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        assert math.isclose(e["ndcg@3"].per_query[qid], dcg / idcg, abs_tol=1e-12)
        n_rel = sum(g >= 1 for g in grades.values())
        hits, ap = 0, 0.0
        for i, g in enumerate(rel):
            if g >= 1:
                hits += 1
                ap += hits / (i + 1)
        assert math.isclose(e["map"].per_query[qid], ap / n_rel, abs_tol=1e-12)
        first = next((i + 1 for i, g in enumerate(rel[:2]) if g >= 1), None)
        assert e["mrr@2"].per_query[qid] == (1 / first if first else 0.0)
        assert e["precision@2"].per_query[qid] == sum(g >= 1 for g in rel[:2]) / 2


@FAST
@given(
    st.lists(st.tuples(st.integers(0, 3), st.sampled_from([0.0, -0.0, 1.0, 2.5, math.inf, -math.inf]), st.integers(0, 6)), max_size=40),
)
def test_rank_order_is_score_desc_then_doc_id_desc(rows: list[tuple[int, float, int]]) -> None:
    vocab = ["a", "b", "ab", "B", "é", "10", "9"]
    rows = sorted(rows, key=lambda t: t[0])  # segments are contiguous
    seg = np.array([t[0] for t in rows], dtype=np.int64)
    sc = np.array([t[1] for t in rows], dtype=np.float64)
    codes = np.array([t[2] for t in rows], dtype=np.int64)
    got = rank_order(seg, sc, codes, vocab)
    want = np.lexsort((-string_ranks(vocab)[codes], -sc, seg)) if rows else np.empty(0, dtype=np.int64)
    assert got.tolist() == want.tolist()
