"""An Evaluation as a Python user meets it: a readable repr with its denominators, float() of a metric, a warning when
strict metrics leave out queries without a relevant item, and save() to a results folder."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest

import finegrain
from finegrain import Qrels, Run, evaluate
from finegrain.errors import FinegrainWarning
from finegrain.evaluate import ExcludedQueriesWarning
from finegrain.results.saved import SavedResults

# q3 has only a grade-0 judgement: strict ranking metrics leave it out, trec_eval averages it as 0
QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1, "d5": 1}, "q3": {"d6": 0}}
RUN = {"q1": {"d1": 3.0, "d3": 2.5, "d9": 2.0}, "q2": {"d4": 1.5, "d8": 1.0, "d5": 0.5}, "q3": {"d6": 1.0}}
METRICS = ["ndcg@10", "precision@5", "recall@10", "mrr@10"]
# by hand: recall@10 is 1 on q1 (d1, d3) and q2 (d4, d5): strict mean 1.0 over 2 queries, trec_eval's 2/3 over 3
# mrr@10 is 1 on q1 and q2


def _quiet(**kw: object) -> object:
    return evaluate(QRELS, Run.from_dict(RUN, name="bm25"), METRICS, warn=False, **kw)


def test_repr_is_a_small_table_with_the_denominators() -> None:
    text = repr(_quiet())
    assert len(text) < 700
    lines = text.splitlines()
    assert lines[0] == "Evaluation of 'bm25': 4 metric(s), values x100, strict"
    assert lines[1].split() == ["metric", "value"]
    assert lines[4].split() == ["recall@10", "100.00"] and lines[5].split() == ["mrr@10", "100.00"]
    assert lines[-1] == "denominators: 2 of 3 queries scored, 1 without a relevant item excluded"
    assert "Denominators(" not in text and "mappingproxy" not in text


def test_repr_names_metrics_whose_denominators_differ_and_values_shown_as_they_are() -> None:
    ev = evaluate(QRELS, RUN, ["recall@10", "median_rank@10", "reject_f1"], warn=False)
    text = repr(ev)
    assert "values x100 (median_rank@10 as is)" in text
    assert text.splitlines()[3].split() == ["median_rank@10", "1"]  # a rank, not 100.00
    assert text.splitlines()[-1] == (
        "denominators: recall@10, median_rank@10: 2 of 3 queries scored, 1 without a relevant item excluded; "
        "reject_f1: 3 of 3 queries scored, 2 undefined (left out of the aggregate)")


def test_trec_eval_mode_says_so_and_counts_the_zero_answer_query() -> None:
    ev = evaluate(QRELS, RUN, ["recall@10"], compat="trec_eval")
    assert float(ev["recall@10"]) == pytest.approx(2 / 3)
    assert "trec_eval rules" in repr(ev)
    assert repr(ev).endswith("3 of 3 queries scored, 1 without a relevant item counted as 0 (trec_eval)")


def test_html_repr_escapes_names() -> None:
    html = evaluate(QRELS, Run.from_dict(RUN, name="<b>x</b>"), ["recall@10"], warn=False)._repr_html_()
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html and "<td>100.00</td>" in html


def test_float_of_a_metric_is_its_aggregate() -> None:
    ev = _quiet()
    assert float(ev["ndcg@10"]) == ev.mean("ndcg@10") and float(ev["recall@10"]) == 1.0
    assert float(ev["nDCG@10"]) == ev.mean("ndcg@10")  # any spelling
    undefined = evaluate({"q": {"d": 0}}, {"q": {"d": 1.0}}, ["recall@10"], warn=False)
    assert undefined.mean("recall@10") is None and math.isnan(float(undefined["recall@10"]))  # never 0


def test_one_warning_per_call_names_the_excluded_queries() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = evaluate(QRELS, RUN, METRICS)
    assert len(caught) == 1
    w = caught[0]
    assert issubclass(w.category, ExcludedQueriesWarning) and issubclass(w.category, FinegrainWarning)
    assert issubclass(w.category, UserWarning)
    assert Path(w.filename).resolve() == Path(__file__).resolve()  # points at the caller's line
    text = str(w.message)
    assert "1 of 3 queries (q3) has no relevant item" in text and "ndcg@10, precision@5, recall@10, mrr@10" in text
    assert "compat='trec_eval'" in text and "warn=False" in text
    assert ev.mean("recall@10") == 1.0  # strict stays the default


def test_the_warning_is_silenced_by_the_argument_or_a_filter_and_absent_when_nothing_is_left_out() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate(QRELS, RUN, METRICS, warn=False)
        evaluate(QRELS, RUN, METRICS, compat="trec_eval")  # trec_eval leaves nothing out
        evaluate({"q1": QRELS["q1"]}, RUN, METRICS)  # every query has a relevant item
        warnings.filterwarnings("ignore", category=FinegrainWarning)
        evaluate(QRELS, RUN, METRICS)


def test_the_callable_package_warns_at_the_callers_line() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        finegrain.evaluate(QRELS, RUN, ["ndcg@10"])
    assert [Path(w.filename).resolve() for w in caught] == [Path(__file__).resolve()]


def test_save_writes_a_results_folder_that_compare_reads(tmp_path: Path) -> None:
    ev = _quiet()
    path = ev.save(tmp_path / "bm25")
    assert path == tmp_path / "bm25" / "results.json"
    saved = SavedResults.load(tmp_path / "bm25")
    assert saved.aggregate == ev.to_dict() and saved.retriever_name == "bm25"
    assert saved.metrics["ndcg@10"].per_query == ev.per_query("ndcg@10")
    assert saved.metrics["ndcg@10"].denominators == ev["ndcg@10"].denominators.to_dict()
    assert ev.to_saved().to_json() == saved.to_json()
    assert ev.to_saved(provenance={"dataset": {"name": "toy"}}).dataset_name == "toy"


def test_saved_results_print_as_the_evaluation_does(tmp_path: Path) -> None:
    ev = _quiet()
    saved = SavedResults.load(ev.save(tmp_path / "a"))
    assert repr(saved).splitlines()[1:] == repr(ev).splitlines()[1:]
    assert repr(saved).startswith("SavedResults of 'bm25': 4 metric(s), values x100")
    assert len(repr(saved)) < 700 and "MetricRecord(" not in repr(saved)
    assert "<table>" in saved._repr_html_()


def test_pytrec_eval_averages_the_excluded_query_as_zero() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    ref = pytrec_eval.RelevanceEvaluator(Qrels.from_dict(QRELS).to_dict(), {"recall.10"}).evaluate(RUN)
    mean = sum(v["recall_10"] for v in ref.values()) / len(ref)
    assert mean == pytest.approx(2 / 3)  # what trec_eval mode gives, and what the warning says
    assert evaluate(QRELS, RUN, ["recall@10"], compat="trec_eval").mean("recall@10") == pytest.approx(mean)
