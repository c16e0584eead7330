"""Set, pair and rejection metrics on hand-computed cases, including the 0/0 edge cases.

An undefined value is None (JSON null), never a division error and never a silent 0.
"""

from __future__ import annotations

import json

import pytest

from finegrain.errors import DuplicateIdError
from finegrain.evaluate import evaluate
from finegrain.types import Qrels, Run

SETS = ["set_precision", "set_recall", "set_f1", "set_f2", "pair_precision", "pair_recall", "pair_f1"]
REJECT = ["reject_precision", "reject_recall", "reject_f1"]


def ev(qrels: dict, run: dict, metrics: list[str], queries: list[str] | None = None, **kw):
    return evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics, queries=queries, **kw)


# --------------------------------------------------------------------------- set metrics

# q1: G = {a, b}, P = {a, c, d}       TP 1, FP 2, FN 1
# q2: G = {},     P = {x}             TP 0, FP 1, FN 0   (zero-answer query, answered)
# q3: G = {c},    P = {} (absent)     TP 0, FP 0, FN 1
# q4: G = {},     P = {} (absent)     correct rejection: everything undefined
QRELS = {"q1": {"a": 1, "b": 2, "z": 0}, "q2": {"y": 0}, "q3": {"c": 1}, "q4": {}}
RUN = {"q1": {"a": 0.9, "c": 0.8, "d": 0.7}, "q2": {"x": 0.5}}


def test_set_metrics_per_query_by_hand() -> None:
    e = ev(QRELS, RUN, SETS)
    assert dict(e["set_precision"].per_query) == {"q1": pytest.approx(1 / 3), "q2": 0.0, "q3": None, "q4": None}
    assert dict(e["set_recall"].per_query) == {"q1": 0.5, "q2": None, "q3": 0.0, "q4": None}
    # F1 = 2TP / (2TP + FN + FP); 0 when only one of P and R is defined; None when both are not
    assert dict(e["set_f1"].per_query) == {"q1": pytest.approx(2 / 5), "q2": 0.0, "q3": 0.0, "q4": None}
    # F2 = 5TP / (5TP + 4FN + FP) = 5 / (5 + 4 + 2)
    assert e["set_f2"].per_query["q1"] == pytest.approx(5 / 11)
    # pair_* per-query values are the per-query ratios
    assert dict(e["pair_precision"].per_query) == dict(e["set_precision"].per_query)


def test_set_metrics_aggregate_over_defined_values_and_count_the_undefined() -> None:
    e = ev(QRELS, RUN, SETS)
    assert e["set_precision"].value == pytest.approx((1 / 3 + 0) / 2)
    assert e["set_recall"].value == pytest.approx((0.5 + 0) / 2)
    assert e["set_f1"].value == pytest.approx(0.4 / 3)
    d = e["set_precision"].denominators
    assert (d.n_universe, d.n_scored, d.n_excluded_no_relevant, d.n_undefined, d.n_missing_from_run) == (4, 4, 0, 2, 2)
    assert e["set_recall"].denominators.n_undefined == 2
    assert e["set_f1"].denominators.n_undefined == 1


def test_pair_metrics_are_micro_averages() -> None:
    e = ev(QRELS, RUN, SETS)
    # sum TP = 1, sum |P| = 3 + 1 = 4, sum |G| = 2 + 1 = 3
    assert e["pair_precision"].value == pytest.approx(1 / 4)
    assert e["pair_recall"].value == pytest.approx(1 / 3)
    assert e["pair_f1"].value == pytest.approx(2 / 7)


def test_set_metrics_with_cutoff_use_the_ranked_top_k() -> None:
    # q1 top 2 by score: a, c -> P = 1/2, R = 1/2; ties broken by id descending
    e = ev(QRELS, RUN, ["set_precision@2", "set_recall@2", "set_f1@2"])
    assert e["set_precision@2"].per_query["q1"] == 0.5
    assert e["set_recall@2"].per_query["q1"] == 0.5
    tie = ev({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}, ["set_precision@1"])
    assert tie["set_precision@1"].per_query["q"] == 0.0  # "b" ranks before "a" on a tie


def test_set_metrics_rel_threshold() -> None:
    e = ev(QRELS, RUN, ["set_recall(rel=2)", "set_precision(rel=2)"])
    assert e["set_recall(rel=2)"].per_query == {"q1": 0.0, "q2": None, "q3": None, "q4": None}
    assert e["set_precision(rel=2)"].per_query["q1"] == 0.0


def test_set_fbeta_interpolates() -> None:
    e = ev(QRELS, RUN, ["set_fbeta(beta=1)", "set_f1", "set_fbeta(beta=0.5)"])
    assert e["set_fbeta(beta=1)"].per_query == e["set_f1"].per_query
    # F0.5 = 1.25 TP / (1.25 TP + 0.25 FN + FP) = 1.25 / (1.25 + 0.25 + 2)
    assert e["set_fbeta(beta=0.5)"].per_query["q1"] == pytest.approx(1.25 / 3.5)


def test_all_empty_predictions_leave_precision_undefined() -> None:
    e = ev({"q1": {"a": 1}, "q2": {"b": 0}}, {}, SETS)
    assert e["set_precision"].value is None
    assert e["set_precision"].denominators.n_undefined == 2
    assert e["pair_precision"].value is None
    assert e["set_recall"].value == 0.0
    assert e["pair_recall"].value == 0.0
    assert e["set_f1"].value == 0.0 and e["set_f1"].denominators.n_undefined == 1
    assert e["pair_f1"].value == 0.0


# --------------------------------------------------------------------------- rejection


def test_photobench_hand_case() -> None:
    # q1, q2 have no answer; the system returns nothing for q2 and q3 -> A=1 (q2), B=1 (q3), C=1 (q1)
    qrels = {"q1": {"x": 0}, "q2": {"y": 0}, "q3": {"a": 1}, "q4": {"b": 1}, "q5": {"c": 2}}
    run = {"q1": {"x": 0.9}, "q4": {"b": 0.9}, "q5": {"z": 0.8}}
    e = ev(qrels, run, REJECT, queries=["q1", "q2", "q3", "q4", "q5"])
    assert e.aggregate() == {"reject_precision": 0.5, "reject_recall": 0.5, "reject_f1": 0.5}
    assert e["reject_precision"].per_query == {"q1": None, "q2": 1.0, "q3": 0.0, "q4": None, "q5": None}
    assert e["reject_recall"].per_query == {"q1": 0.0, "q2": 1.0, "q3": None, "q4": None, "q5": None}
    assert e["reject_f1"].per_query == {"q1": 0.0, "q2": 1.0, "q3": 0.0, "q4": None, "q5": None}


def test_rejection_counts_from_a_bigger_case() -> None:
    # A = 2 (z1, z2), B = 3 (n1, n2, n3), C = 1 (z3), D = 1 (n4)
    qrels = {"z1": {}, "z2": {"a": 0}, "z3": {}, "n1": {"a": 1}, "n2": {"a": 1}, "n3": {"a": 3}, "n4": {"b": 1}}
    run = {"z3": {"q": 1.0}, "n1": {}, "n4": {"c": 1.0}}
    e = ev(qrels, run, REJECT)
    assert e["reject_precision"].value == pytest.approx(2 / 5)
    assert e["reject_recall"].value == pytest.approx(2 / 3)
    assert e["reject_f1"].value == pytest.approx(4 / (4 + 3 + 1))
    assert e["reject_f1"].denominators.n_missing_from_run == 4  # z1, z2, n2, n3


def test_rejection_uses_the_rel_threshold() -> None:
    # with rel=2, q (grade 1 only) is a zero-answer query: an empty prediction is a correct rejection
    e = ev({"q": {"a": 1}, "r": {"b": 2}}, {"r": {"b": 1.0}}, ["reject_precision(rel=2)", "reject_recall(rel=2)"])
    assert e["reject_precision(rel=2)"].value == 1.0
    assert e["reject_recall(rel=2)"].value == 1.0


def test_all_rejected_zero_answer_universe_is_perfect() -> None:
    e = ev({"q1": {}, "q2": {"a": 0}}, {}, REJECT)
    assert e.aggregate() == {"reject_precision": 1.0, "reject_recall": 1.0, "reject_f1": 1.0}


def test_all_rejected_with_answers_everywhere() -> None:
    # A = 0, B = 2, C = 0: precision 0, recall 0/0 undefined, F1 = 0
    e = ev({"q1": {"a": 1}, "q2": {"b": 2}}, {}, REJECT)
    assert e.aggregate() == {"reject_precision": 0.0, "reject_recall": None, "reject_f1": 0.0}
    assert e["reject_recall"].denominators.n_undefined == 2


def test_never_rejecting_on_zero_answer_universe() -> None:
    # A = B = 0, C = 2: precision undefined, recall 0, F1 0
    e = ev({"q1": {}, "q2": {}}, {"q1": {"a": 1.0}, "q2": {"b": 1.0}}, REJECT)
    assert e.aggregate() == {"reject_precision": None, "reject_recall": 0.0, "reject_f1": 0.0}


def test_nothing_to_reject_and_nothing_rejected_is_all_undefined() -> None:
    e = ev({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, REJECT)
    assert e.aggregate() == {"reject_precision": None, "reject_recall": None, "reject_f1": None}
    text = json.dumps(e.to_json_dict(), allow_nan=False)
    assert '"reject_f1": null' in text


# --------------------------------------------------------------------------- ranking edge cases


def test_zero_answer_only_universe_leaves_ranking_metrics_undefined() -> None:
    e = ev({"q1": {"a": 0}, "q2": {}}, {"q1": {"a": 1.0}}, ["ndcg@10", "mrr", "median_rank", "recall@5"])
    for key in ["ndcg@10", "mrr", "median_rank", "recall@5"]:
        assert e[key].value is None
        assert e[key].per_query == {}
        d = e[key].denominators
        assert (d.n_universe, d.n_scored, d.n_excluded_no_relevant) == (2, 0, 2)


def test_empty_universe_is_undefined_everywhere() -> None:
    e = ev({}, {"q": {"a": 1.0}}, ["ndcg@10", "set_f1", "reject_f1", "pair_f1"])
    assert set(e.aggregate().values()) == {None}
    assert e["ndcg@10"].denominators.n_ignored_run_queries == 1


def test_median_rank_of_mostly_unfound_queries_is_infinite() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    run = {"q1": {"x": 2.0, "a": 1.0}, "q2": {"x": 1.0}}
    e = ev(qrels, run, ["median_rank", "median_rank@1"])
    assert e["median_rank"].per_query == {"q1": 2.0, "q2": None, "q3": None}
    assert e["median_rank"].value == float("inf")
    assert e.to_json_dict()["aggregate"]["median_rank"] is None  # JSON has no infinity
    e2 = ev(qrels, {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"x": 1.0}}, ["median_rank"])
    assert e2["median_rank"].value == 1.0


def test_missing_and_ignored_queries_are_counted() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 0}}
    run = {"q1": {"a": 1.0}, "other": {"a": 1.0}}
    e = ev(qrels, run, ["ndcg@10"])
    assert e["ndcg@10"].per_query == {"q1": 1.0, "q2": 0.0}
    assert e["ndcg@10"].value == 0.5
    d = e["ndcg@10"].denominators
    assert (d.n_universe, d.n_scored, d.n_excluded_no_relevant, d.n_missing_from_run, d.n_ignored_run_queries) == (3, 2, 1, 1, 1)


def test_queries_list_defines_the_universe() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q9": {}}
    e = ev(qrels, run, ["ndcg@10", "reject_recall"], queries=["q1", "q9", "q7"])
    assert e["ndcg@10"].per_query == {"q1": 1.0}  # q2 is outside, q9/q7 have no relevant item
    d = e["ndcg@10"].denominators
    assert (d.n_universe, d.n_excluded_no_relevant, d.n_ignored_run_queries) == (3, 2, 1)
    # q9 returned nothing, q7 is absent: both correct rejections; q1 answered
    assert e["reject_recall"].per_query == {"q1": None, "q9": 1.0, "q7": 1.0}


def test_duplicate_query_in_the_list_is_an_error() -> None:
    with pytest.raises(DuplicateIdError, match="'q1'"):
        ev({"q1": {"a": 1}}, {}, ["ndcg"], queries=["q1", "q1"])


# --------------------------------------------------------------------------- result views


def test_by_group_consumes_per_query_values() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {}}
    run = {"q1": {"a": 1.0}, "q2": {"x": 1.0, "b": 0.5}, "q3": {"x": 1.0}, "q4": {}}
    types = {"q1": "visual", "q2": "visual", "q3": "meta", "q4": None}
    e = ev(qrels, run, ["mrr", "reject_recall"], query_types=types)
    groups = e.by_group(types)
    assert list(groups) == ["meta", "visual", "untyped"]
    assert groups["visual"]["mrr"] == {"value": 0.75, "n": 2}
    assert groups["meta"]["mrr"] == {"value": 0.0, "n": 1}
    assert groups["untyped"]["mrr"] == {"value": None, "n": 0}
    assert groups["untyped"]["reject_recall"] == {"value": 1.0, "n": 1}
    body = e.to_json_dict()
    assert set(body) == {"aggregate", "per_query", "by_type", "denominators"}
    assert body["by_type"] == groups
    assert body["denominators"]["mrr"]["n_excluded_no_relevant"] == 1
    json.dumps(body, allow_nan=False)


def test_evaluation_is_a_mapping_of_frozen_results() -> None:
    e = ev(QRELS, RUN, ["ndcg@10", "nDCG@10", "set_f1"])
    assert list(e) == ["ndcg@10", "set_f1"]  # duplicates computed once
    with pytest.raises(TypeError):
        e["ndcg@10"].per_query["q1"] = 0.0  # type: ignore[index]
    with pytest.raises(AttributeError):
        e["ndcg@10"].key = "x"  # type: ignore[misc]
    assert "by_type" not in e.to_json_dict()
