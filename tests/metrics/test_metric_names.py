"""Metric names never lie: every other library's name computes what that library defines, or is refused.

Each alias in ``metrics/spec.py`` is listed here with the library it comes from and the measure that
library defines; a new alias fails :func:`test_every_alias_is_checked_here` until it is added (and
checked). The numbers are checked against the libraries themselves where they are installed.
"""

from __future__ import annotations

import pytest
from tests.metrics.test_metrics_differential import has_relevant, random_case
from tests.metrics.test_metrics_trec_measures import distinct_scores

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.evaluate import evaluate
from finegrain.metrics import metric_values
from finegrain.metrics.spec import _ALIASES, parse_metric, parse_metrics
from finegrain.types import Qrels, Run

# alias -> (a spelling of it, its source, the canonical key it must read as)
CHECKED: dict[str, tuple[str, str, str]] = {
    "ndcg_cut": ("ndcg_cut_10", "trec_eval ndcg_cut_10", "ndcg@10"),
    "p": ("P.5", "trec_eval P_5, ir_measures P@5", "precision@5"),
    "prec": ("prec@5", "precision, abbreviated", "precision@5"),
    "r": ("R@50", "ir_measures R@50", "recall@50"),
    "hitrate": ("hitrate@3", "hit_rate, spelled together", "hit_rate@3"),
    "success": ("success_10", "trec_eval success_10, ir_measures Success@10", "hit_rate@10"),
    "rr": ("RR@10", "ir_measures RR@10", "mrr@10"),
    "recip_rank": ("recip_rank", "trec_eval recip_rank", "mrr"),
    "reciprocal_rank": ("reciprocal_rank", "recip_rank, spelled out", "mrr"),
    "ap": ("AP@100", "ir_measures AP@100 = trec_eval map_cut_100", "map@100"),
    "map_cut": ("map_cut_100", "trec_eval map_cut_100", "map@100"),
    "rprec": ("Rprec", "trec_eval Rprec, ir_measures Rprec", "r_precision"),
    "r-precision": ("R-precision", "R-precision", "r_precision"),
    "medr": ("MedR", "median rank (CLIP retrieval papers)", "median_rank"),
    "set_p": ("set_P", "trec_eval set_P", "set_precision"),
    "setp": ("SetP", "ir_measures SetP", "set_precision"),
    "set_r": ("set_R", "set_recall, abbreviated", "set_recall"),
    "setr": ("SetR(rel=2)", "ir_measures SetR(rel=2)", "set_recall(rel=2)"),
    "set_f": ("set_F", "trec_eval set_F (x = 1)", "set_f1"),
    "setf": ("SetF", "ir_measures SetF (beta = 1)", "set_f1"),
    "rej_p": ("rej_p", "reject_precision, abbreviated", "reject_precision"),
    "rej_r": ("rej_r", "reject_recall, abbreviated", "reject_recall"),
    "rej_f1": ("rej_f1", "reject_f1, abbreviated", "reject_f1"),
    "numret": ("NumRet", "ir_measures NumRet = trec_eval num_ret", "num_ret"),
    "numrel": ("NumRel", "ir_measures NumRel = trec_eval num_rel", "num_rel"),
    "numrelret": ("NumRelRet", "ir_measures NumRelRet = trec_eval num_rel_ret", "num_rel_ret"),
}


def test_every_alias_is_checked_here() -> None:
    assert set(_ALIASES) == set(CHECKED), "an alias added or removed: check it against its source and list it"


@pytest.mark.parametrize("alias", sorted(CHECKED))
def test_each_alias_reads_as_the_measure_its_source_defines(alias: str) -> None:
    spelling, _source, key = CHECKED[alias]
    assert parse_metric(spelling).key == key


@pytest.mark.parametrize(("text", "key"), [
    ("hits@2", "hits@2"),  # ranx: the number of relevant items in the top 2, not hit_rate
    ("NumRet(rel=2)", "num_rel_ret(rel=2)"),  # ir_measures: NumRet with rel counts the relevant ones
    ("IPrec@0.5", "iprec_at_recall_0.50"),
    ("IPrec(rel=2)@0.1", "iprec_at_recall_0.10(rel=2)"),
    ("iprec_at_recall_0.10", "iprec_at_recall_0.10"),
    ("Bpref", "bpref"),
    ("infAP", "infap"),
    ("ERR@20", "err@20"),
    ("gm_map(rel=2)", "gm_map(rel=2)"),
    ("SetF(beta=1.0)", "set_f1"),
    ("success@5", "hit_rate@5"),
    ("ndcg_cut@10", "ndcg@10"),
])
def test_new_names(text: str, key: str) -> None:
    assert parse_metric(text).key == key
    assert parse_metric(key).key == key


@pytest.mark.parametrize(("text", "needle", "fix"), [
    ("hit@2", "ambiguous", "hits@k"),
    ("hit", "ambiguous", "hit_rate@k"),
    ("ndcg_cut", "list of nDCG cutoffs", "ndcg_cut_10"),
    ("map_cut", "list of AP cutoffs", "map_cut_100"),
    ("success", "list of success cutoffs", "hit_rate@10"),
    ("NumQ", "number of queries", "num_q"),
    ("SetF(beta=2.0)", "beta**2 = 2.0", "set_fbeta(beta=1.414"),
    ("SetF(beta=4)", "beta**2 = 4", "set_f2"),
    ("IPrec@0.25", "not one of trec_eval's 11", "iprec_at_recall_0.50"),
    ("iprec_at_recall_1.5", "not one of trec_eval's 11", "IPrec@0.5"),
    ("num_ret(rel=2)", "no option 'rel'", "num_rel_ret(rel=N)"),
    ("err@10(rel=2)", "no option 'rel'", "gains are the grades"),
    ("bpref@10", "takes no cutoff", "without @k"),
])
def test_names_meaning_another_measure_are_refused_with_the_fix(text: str, needle: str, fix: str) -> None:
    with pytest.raises(FinegrainError) as e:
        parse_metric(text)
    assert needle in e.value.message and fix in (e.value.hint or ""), str(e.value)


def test_hits_is_ranx_count_not_hit_rate() -> None:
    qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1, "d5": 1}})
    run = Run.from_dict({"q1": {"d1": 3.0, "d3": 2.5, "d9": 2.0}, "q2": {"d4": 1.5, "d8": 1.0, "d5": 0.5}})
    assert evaluate(qrels, run, ["hits@2", "hit_rate@2"]).to_dict() == {"hits@2": 1.5, "hit_rate@2": 1.0}


def test_a_comma_list_continues_trec_eval_cutoff_lists() -> None:
    assert [s.key for s in parse_metrics(["P.5,10,20", "ndcg_cut.10"])] == [
        "precision@5", "precision@10", "precision@20", "ndcg@10"]
    assert [s.key for s in parse_metrics("iprec_at_recall.0,.5,1")] == [
        "iprec_at_recall_0.00", "iprec_at_recall_0.50", "iprec_at_recall_1.00"]
    with pytest.raises(FinegrainError, match="cannot read metric '10'"):
        parse_metrics("ndcg@5,10")  # a finegrain spec has no list to continue


# --------------------------------------------------------------------------- ir_measures objects and names


def ir_measures_pairs(ir):  # type: ignore[no-untyped-def]
    return [ir.nDCG @ 10, ir.P @ 5, ir.P(rel=2) @ 5, ir.R @ 20, ir.AP, ir.AP @ 10, ir.RR, ir.Rprec,
            ir.Success @ 3, ir.SetP, ir.SetR, ir.SetF, ir.Bpref, ir.infAP, ir.NumRet, ir.NumRel, ir.NumRelRet,
            ir.IPrec @ 0.3, ir.Judged @ 10]


def test_ir_measures_objects_are_accepted_wherever_a_name_is() -> None:
    ir = pytest.importorskip("ir_measures")
    qrels_d, run_d = random_case(2)
    qrels, run = Qrels.from_dict(qrels_d), Run.from_dict(run_d)
    by_object = evaluate(qrels, run, ir_measures_pairs(ir))
    by_string = evaluate(qrels, run, [str(m) for m in ir_measures_pairs(ir)])
    assert by_object.to_dict() == by_string.to_dict() and len(by_object) == len(ir_measures_pairs(ir))
    assert evaluate(qrels, run, ir.nDCG @ 10).to_dict() == {"ndcg@10": by_object["ndcg@10"].value}
    assert by_object[ir.P(rel=2) @ 5] is by_object["precision@5(rel=2)"]
    assert by_object.mean(ir.NumRelRet) == by_object.mean("num_rel_ret")
    with pytest.raises(FinegrainError, match="no option 'dcg'"):
        parse_metric(ir.nDCG(dcg="exp-log2") @ 10)  # gdeval's exponential gains are another measure
    with pytest.raises(FinegrainError, match="no option 'judged_only'"):
        parse_metric(ir.P(judged_only=True) @ 5)


@pytest.mark.parametrize("kind", ["ties", "distinct"])
def test_ir_measures_names_compute_what_ir_measures_computes(kind: str) -> None:
    """Through ir_measures' pytrec_eval provider (its default for these), per query, on every query both score."""
    ir = pytest.importorskip("ir_measures")
    qrels_d, run_d = random_case(4)
    if kind == "distinct":
        run_d = distinct_scores(run_d, 4)
    measures = [m for m in ir_measures_pairs(ir) if m.NAME != "Judged"]  # Judged: test_metric_judged.py
    ref: dict[str, dict[str, float]] = {}
    for m in ir.providers.registry["pytrec_eval"].iter_calc(measures, qrels_d, run_d):
        ref.setdefault(str(m.measure), {})[m.query_id] = m.value
    qrels, run = Qrels.from_dict(qrels_d), Run.from_dict(run_d)
    compared = 0
    for m in measures:
        got = metric_values(qrels, run, m)
        for q, want in ref[str(m)].items():
            if q not in got or got[q] is None:
                # not scored by finegrain: no relevant item (ranking metrics), or an undefined set value
                assert not has_relevant(qrels_d, q, m.params.get("rel", 1)) or m.NAME.startswith("Set"), (m, q)
                continue
            if q not in run_d and m.NAME == "NumRel":
                # ir_measures gives a query missing from the run its default 0; its relevant judgements
                # are still there (trec_eval -c counts them too)
                assert (want, got[q]) == (0.0, sum(g >= 1 for g in qrels_d[q].values()))
                continue
            assert got[q] == pytest.approx(want, abs=1e-9), (str(m), q)
            compared += 1
    assert compared > 500


def test_unknown_names_are_still_unknown() -> None:
    with pytest.raises(UnknownNameError):
        parse_metric("f1@10")  # ranx's f1@k: not implemented, so not mapped to anything
    with pytest.raises(UnknownNameError):
        parse_metric("ndcg_burges@10")
