"""A Comparison prints as a table and renders to Markdown, LaTeX and a DataFrame; compare() takes ranx's call
compare(qrels, runs, metrics, max_p=...) as well as compare([ev1, ev2])."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest

import finegrain
from finegrain import Run, compare, evaluate
from finegrain.compare.comparison import Comparison
from finegrain.errors import FinegrainError
from finegrain.evaluate import ExcludedQueriesWarning

QRELS = {f"q{i}": {f"d{i}": 1, f"e{i}": 1} for i in range(8)} | {"q8": {"x": 0}}  # q8: no relevant item
GOOD = {f"q{i}": {f"d{i}": 2.0, f"e{i}": 1.0, "z": 0.5} for i in range(8)}  # both relevant on top: 1.0 everywhere
BAD = {f"q{i}": {"z": 2.0, f"d{i}": 1.0} for i in range(8)}  # one relevant item, at rank 2
METRICS = ["ndcg@10", "precision@5", "recall@10", "mrr@10"]


def _cmp(**kw: object) -> Comparison:
    evs = [evaluate(QRELS, Run.from_dict(r, name=n), METRICS, warn=False) for r, n in ((GOOD, "good"), (BAD, "bad"))]
    return compare(evs, n_resamples=2000, **kw)


def test_str_is_the_long_form_table() -> None:
    text = str(_cmp())
    assert not text.startswith("Comparison(") and "mappingproxy" not in text and len(text) < 4000
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert len(rows) == 2 * 4  # one row per system and metric
    bad_recall = next(r for r in rows if "bad" in r and "recall@10" in r)
    cells = [c.strip() for c in bad_recall.strip("│").split("│")]
    # bad finds one of two relevant items: recall 0.5 on every query, -50 points, p = 2/256 exactly (8 queries)
    assert cells[:3] == ["bad", "recall@10", "50.00 [50.00, 50.00]"] and cells[3].startswith("-50.00*")
    assert cells[4] == "0.008"
    assert "good (baseline)" in text and "Fisher's randomization test" in text


def test_repr_is_one_row_per_system_with_the_queries_compared() -> None:
    text = repr(_cmp())
    assert len(text) < 700
    lines = text.splitlines()
    assert lines[0] == "Comparison of 2 systems: means x100, baseline 'good'"
    assert lines[1].split() == ["system", *METRICS]
    assert lines[2].split() == ["good", "(baseline)", "100.00", "40.00", "100.00", "100.00"]
    bad = lines[3].split()
    assert bad[0] == "bad" and bad[3] == bad[4] == "50.00*†"  # recall and mrr 1/2 on every query
    assert lines[4].startswith("queries: 8 compared per metric")
    assert "<table>" in _cmp()._repr_html_()


def test_markdown_and_latex() -> None:
    cmp = _cmp()
    md = cmp.to_markdown().splitlines()
    assert md[0] == "| system | ndcg@10 | precision@5 | recall@10 | mrr@10 |"
    assert md[1] == "| --- | ---: | ---: | ---: | ---: |"
    assert md[3].startswith("| bad |") and r"50.00\*†" in md[3]
    tex = cmp.to_latex()
    assert r"\begin{tabular}{lrrrr}" in tex and r"\toprule" in tex and r"\bottomrule" in tex
    assert r"bad & " in tex and r"50.00$^{*\dagger}$" in tex and "†" not in tex
    ev = evaluate({"q": {"d": 1}, "r": {"e": 1}}, {"q": {"d": 1.0}, "r": {"e": 1.0}}, ["hit_rate@1"], warn=False)
    names = compare([ev, evaluate({"q": {"d": 1}, "r": {"e": 1}}, Run.from_dict({"q": {"d": 1.0}}, name="a_b&c"),
                                  ["hit_rate@1"], warn=False)], n_resamples=10).to_latex()
    assert r"hit\_rate@1" in names and r"a\_b\&c" in names


def test_dataframe_long_form() -> None:
    pytest.importorskip("pandas")
    df = _cmp().to_dataframe()
    assert list(df.columns) == ["system", "metric", "mean", "ci_low", "ci_high", "diff", "p", "significant"]
    assert len(df) == 2 * 4
    row = df[(df.system == "bad") & (df.metric == "recall@10")].iloc[0]
    assert (row["mean"], row["diff"], row["p"], bool(row["significant"])) == (0.5, -0.5, pytest.approx(2 / 256), True)
    base = df[df.system == "good"]
    assert base["diff"].isna().all() and base["p"].isna().all() and not base["significant"].any()
    assert math.isclose(df[(df.system == "good") & (df.metric == "ndcg@10")]["mean"].iloc[0], 1.0)


def test_to_table_is_the_rich_table_compare_prints() -> None:
    from rich.table import Table

    table = _cmp().to_table()
    assert isinstance(table, Table) and [c.header for c in table.columns][:2] == ["system", "metric"]


def test_ranx_call_evaluates_the_runs_first() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cmp = compare(QRELS, runs=[Run.from_dict(GOOD, name="good"), Run.from_dict(BAD, name="bad")],
                      metrics=METRICS, max_p=0.01, n_resamples=2000)
    assert [w.category for w in caught] == [ExcludedQueriesWarning]  # one for both runs
    assert Path(caught[0].filename).resolve() == Path(__file__).resolve()
    same = _cmp(alpha=0.01)
    assert cmp.settings.alpha == 0.01 and cmp.metrics == tuple(METRICS)
    assert cmp.to_json_dict() == same.to_json_dict()
    by_name = compare(qrels=QRELS, runs=[GOOD, BAD], metrics="recall@10", n_resamples=2000, warn=False)
    assert by_name.metrics == ("recall@10",) and by_name.tests["recall@10"]["run (#1)"].mean_diff == -0.5


def test_ranx_call_mistakes_are_named() -> None:
    with pytest.raises(FinegrainError, match="needs the metrics"):
        compare(QRELS, runs=[GOOD, BAD])
    with pytest.raises(FinegrainError, match="qrels given twice"):
        compare(QRELS, runs=[GOOD, BAD], metrics=["ndcg@10"], qrels=QRELS)
    with pytest.raises(FinegrainError, match="max_p is ranx's name for alpha"):
        compare(QRELS, runs=[GOOD, BAD], metrics=["ndcg@10"], alpha=0.1, max_p=0.01)
    with pytest.raises(FinegrainError, match="not a list of results"):
        compare(QRELS)


def test_signatures_are_visible() -> None:
    import inspect

    assert list(inspect.signature(finegrain.compare).parameters)[:4] == ["results", "runs", "metrics", "qrels"]
    assert list(inspect.signature(finegrain.evaluate).parameters)[:3] == ["qrels", "run", "metrics"]
