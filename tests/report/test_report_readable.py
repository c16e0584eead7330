"""The report people read: the saved grades of the top k (``judged``), the
headline metric rule, the forest plot and the histogram of per-query differences (numbers drawn = numbers
given), the drill-down data (escaped JSON), system labels in every table, and words shown as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from finegrain.cli.main import main
from finegrain.compare.comparison import compare
from finegrain.compare.systems import LabelledResults
from finegrain.diagnose.errors import analyse_errors
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.experiment.run import judged_section
from finegrain.report.diff_charts import ForestRow, _nice_step, difference_histogram, forest_plot, histogram_bins
from finegrain.report.drilldown import json_script
from finegrain.report.format import fmt
from finegrain.report.headline import headline_metric
from finegrain.report.html import load_systems, render_report
from finegrain.results.files import read_saved_run
from finegrain.results.saved import SavedResults
from finegrain.types import Corpus, Document, Qrels, Queries, Query, Run


def _run(rankings: dict[str, list[str]]) -> Run:
    return Run.from_dict({q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in rankings.items()})


def _minimal(**extra: object) -> dict[str, object]:
    return {"aggregate": {"ndcg@10": 0.5}, "per_query": {"ndcg@10": {"q1": 0.5}}, **extra}


# --------------------------------------------------------------------------- judged


def test_judged_section_holds_the_grades_of_the_top_k_only() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 2, "b": 0, "z": 1}, "q2": {"c": 1}})
    run = _run({"q1": ["b", "x", "a", "z"], "q2": ["y"]})
    sec = judged_section(qrels, run, ["q1", "q2", "q3"], k=3)
    assert sec["grades"] == {"q1": {"b": 0, "a": 2}, "q2": {}, "q3": {}}  # z is rank 4: outside the top 3
    assert sec["n_relevant"] == {"q1": 2, "q2": 1, "q3": 0}
    saved = SavedResults.from_json(_minimal(judged=sec))
    assert saved.judged is not None and saved.judged.k == 3
    assert saved.judged.grade("q1", "a") == 2 and saved.judged.grade("q1", "x") is None
    assert SavedResults.from_json(saved.to_json()).judged == saved.judged  # round trip
    assert "judged" not in saved.extra


def test_fully_judged_reads_an_absent_document_as_zero() -> None:
    sec = judged_section(Qrels.from_dict({"q1": {"a": 1}}), _run({"q1": ["a", "x"]}), ["q1"], fully_judged=True)
    j = SavedResults.from_json(_minimal(judged=sec)).judged
    assert j is not None and j.grade("q1", "x") == 0 and j.grade("q1", "a") == 1


def test_older_files_without_judged_still_read_and_a_bad_section_is_refused() -> None:
    assert SavedResults.from_json(_minimal()).judged is None
    with pytest.raises(DataFormatError, match="judged"):
        SavedResults.from_json(_minimal(judged={"k": 10, "grades": {"q1": {"a": "two"}}}))


# --------------------------------------------------------------------------- charts of differences

SVG = "{http://www.w3.org/2000/svg}"


def _svg(markup: str) -> object:
    import xml.etree.ElementTree as ET

    return ET.fromstring(markup)


def _axis_map(root: object, cls: str, coord: str) -> tuple[float, float]:
    """(scale, offset) of the linear map value -> pixel, fitted on two tick marks (their number and position)."""
    ticks = [(float(t.get("data-tick")), float(t.get(coord))) for t in root.iter(f"{SVG}text")  # type: ignore[attr-defined]
             if t.get("class") == cls]
    assert len(ticks) >= 2, "fewer than two ticks"
    (v0, p0), (v1, p1) = ticks[0], ticks[-1]
    scale = (p1 - p0) / (v1 - v0)
    for v, p in ticks:  # every tick on the same line
        assert p == pytest.approx(p0 + scale * (v - v0), abs=0.02)
    return scale, p0 - scale * v0


def test_forest_plot_draws_each_interval_and_point_at_its_values() -> None:
    rows = [ForestRow("e5", 0.0312, -0.0105, 0.0731, "p = 0.041 *", "#E69F00"),
            ForestRow("bm25 <b>", -0.052, -0.121, -0.004, "p = 0.200", "#009E73"),
            ForestRow("mteb only", None, None, None)]
    root = _svg(forest_plot(rows, title="Δ ndcg@10 vs bm25-okapi", axis_label="Δ ndcg@10 (x100)"))
    scale, offset = _axis_map(root, "tick", "x")
    whiskers = [e for e in root.iter(f"{SVG}line") if e.get("class") == "whisker"]  # type: ignore[attr-defined]
    points = [e for e in root.iter(f"{SVG}circle") if e.get("class") == "point"]  # type: ignore[attr-defined]
    assert len(whiskers) == len(points) == 2  # the row without numbers draws none
    for row, w, pt in zip(rows, whiskers, points):
        assert float(w.get("x1")) == pytest.approx(scale * row.low + offset, abs=0.02)
        assert float(w.get("x2")) == pytest.approx(scale * row.high + offset, abs=0.02)
        assert float(pt.get("cx")) == pytest.approx(scale * row.value + offset, abs=0.02)
    zero = next(e for e in root.iter(f"{SVG}line") if e.get("class") == "zero")  # type: ignore[attr-defined]
    assert float(zero.get("x1")) == pytest.approx(offset, abs=0.02)
    texts = "".join(root.itertext())  # type: ignore[attr-defined]
    assert "+3.12 [-1.05, +7.31]  p = 0.041 *" in texts and "n/a" in texts and "bm25 <b>" in texts
    assert "Δ ndcg@10 (x100)" in texts


def test_histogram_bins_hold_every_value_once_with_ties_in_the_middle() -> None:
    values = [0.0, 0.0, 0.0, 0.25, -0.25, 1.0, -0.6309, 0.04]
    edges, counts = histogram_bins(values)
    assert len(counts) == 21 and len(edges) == 22 and sum(counts) == len(values)
    assert counts[10] == 4  # 0, 0, 0 and 0.04 (within half a bin of 0)
    for v in values:
        i = next(i for i in range(len(counts)) if edges[i] <= v < edges[i + 1] or (i == 20 and v == edges[-1]))
        assert counts[i] > 0, v
    assert edges[0] <= -1.0 and edges[-1] >= 1.0 and edges[10] < 0 < edges[11]
    assert histogram_bins([])[1] == [0] * 21


@pytest.mark.parametrize("top", [2.0539125955565396e-15, 1e-15, 3e-16, 7e-200, 5e-324, 1e-300, 1.5e300, 123.456])
def test_histogram_bins_cover_tiny_and_huge_differences_and_return(top: float) -> None:
    """A per-query difference of float noise (2e-15) once made the bin-width loop spin forever: the tick step
    compared with an absolute slack of 1e-15. Guarded by an alarm so that a regression fails, not hangs."""
    import signal

    def stuck(signum, frame):
        raise TimeoutError("histogram_bins did not return")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(5)
    try:
        edges, counts = histogram_bins([0.0, top, -top / 3, 0.0])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert sum(counts) == 4 and edges[-1] >= top and edges[0] <= -top / 3
    assert _nice_step(top * 10, 10) * 10 >= top * 10 * (1 - 1e-9)  # a step never falls short of the span


def test_histogram_bar_heights_are_the_counts() -> None:
    values = [0.0] * 7 + [0.1] * 3 + [-0.3, 0.5, 0.5]
    root = _svg(difference_histogram(values, title="e5 - bm25", x_label="Δ ndcg@10 per query (x100)"))
    yscale, yoff = _axis_map(root, "ytick", "y")
    xscale, xoff = _axis_map(root, "xtick", "x")
    bars = [e for e in root.iter(f"{SVG}rect") if e.get("class") == "bar"]  # type: ignore[attr-defined]
    edges, counts = histogram_bins(values)
    assert [int(b.get("data-count")) for b in bars] == [c for c in counts if c]
    for b in bars:
        c = int(b.get("data-count"))
        assert float(b.get("y")) == pytest.approx(yscale * c + yoff, abs=0.02)  # the top at its count
        assert float(b.get("y")) + float(b.get("height")) == pytest.approx(yoff, abs=0.02)  # from 0
        lo, hi = float(b.get("data-low")), float(b.get("data-high"))
        assert sum(lo <= v < hi for v in values) == c
        assert float(b.get("x")) == pytest.approx(xscale * lo + xoff + 0.5, abs=0.02)


# --------------------------------------------------------------------------- headline metric


def _results(keys: list[str], aggregation: dict[str, str] | None = None) -> SavedResults:
    value = {k: 2.0 if k.startswith("median_rank") else 0.5 for k in keys}  # a rank is >= 1, a fraction in [0, 1]
    body: dict[str, object] = {"aggregate": dict(value), "per_query": {k: {"q1": v} for k, v in value.items()}}
    if aggregation:
        body["aggregation"] = {k: aggregation.get(k, "mean") for k in keys}
    return SavedResults.from_json(body)


@pytest.mark.parametrize(("keys", "expected"), [
    (["ndcg@1", "ndcg@10", "recall@10"], "ndcg@10"),  # the largest cutoff, first at it (not ndcg@1)
    (["recall@100", "ndcg@10"], "recall@100"),
    (["set_f1", "reject_f1", "mrr@10", "ndcg@5"], "mrr@10"),  # set and rejection metrics are not ranking metrics
    (["median_rank@100", "ndcg@10"], "ndcg@10"),  # a median is not testable: a mean first
    (["median_rank@100"], "median_rank@100"),
    (["set_f1", "set_precision"], "set_f1"),  # no ranking metric: the first shared one
    (["map", "mrr"], "map"),  # no cutoff at all: the first ranking metric
])
def test_headline_is_the_first_ranking_metric_at_the_largest_shared_cutoff(keys: list[str], expected: str) -> None:
    assert headline_metric([_results(keys)]) == expected


def test_headline_uses_only_shared_metrics_and_the_one_asked_for() -> None:
    a, b = _results(["ndcg@10", "recall@100"]), _results(["ndcg@10", "recall@10"])
    assert headline_metric([a, b]) == "ndcg@10"  # recall@100 is not in b
    assert headline_metric([a, b], "nDCG@10") == "ndcg@10"  # --metric, canonical key
    with pytest.raises(FinegrainError, match="not in every results folder"):
        headline_metric([a, b], "recall@100")
    with pytest.raises(FinegrainError, match="share no metric"):
        headline_metric([_results(["ndcg@10"]), _results(["recall@10"])])


# --------------------------------------------------------------------------- words as written


def test_error_analysis_shows_the_query_words_as_written_and_keeps_the_stems() -> None:
    corpus = Corpus([Document("a", "Kitchen ranges and tables for sale"), Document("b", "a table in the garden"),
                     Document("g", "gas range")])
    queries = Queries([Query("q", "Gas Ranges on the Tables", "condition")])
    an = analyse_errors(corpus, queries, Qrels.from_dict({"q": {"g": 1}}), _run({"q": ["a", "b"]}), lang="en")
    q = an["q"]
    assert q.terms == ("ga", "rang", "tabl") and q.words == ("Gas", "Ranges", "Tables")  # match by stem, show words
    fn = q.false_negatives[0]
    assert fn.matched == ("Gas", "Ranges") and fn.stems == ("ga", "rang")
    assert fn.rule == "only 2 of 3 query terms present: Gas | Ranges"
    body = an.to_json_dict()
    items = [*body["per_query"]["q"]["false_negatives"], *body["per_query"]["q"]["false_positives"],
             *(x for xs in body["examples"].values() for x in xs)]
    assert items
    shown = [w for it in items for w in (*re.findall(r"\w+", it["rule"]), *it["matched"])]
    shown += body["per_query"]["q"]["terms"] + body["per_query"]["q"]["parts"]
    assert not {"ga", "rang", "tabl"} & set(shown), shown  # stems only under 'stems'
    assert body["per_query"]["q"]["terms"] == ["Gas", "Ranges", "Tables"]
    assert body["per_query"]["q"]["stems"] == ["ga", "rang", "tabl"]


def test_shared_terms_rule_names_words_not_stems() -> None:
    corpus = Corpus([Document("x", "the ranges were quiet"), Document("y", "a dog")])
    queries = Queries([Query("q", "Ranges", None)])
    an = analyse_errors(corpus, queries, Qrels.from_dict({"q": {"y": 1}}), _run({"q": ["x"]}), lang="en")
    fp = an["q"].false_positives[0]
    assert fp.tag == "over_generalization"
    assert "rang" not in fp.rule.replace("Ranges", "") and fp.matched in (("Ranges",), ("ranges",))


# --------------------------------------------------------------------------- the page


@pytest.fixture(scope="module")
def two_folders(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    base = tmp_path_factory.mktemp("readable")
    out = []
    for retriever in ("bm25-okapi", "bm25"):
        d = base / retriever
        assert main(["eval", "-d", "embedded/captions-zh", "-r", retriever, "-m", "ndcg@1,ndcg@10,recall@10",
                     "-o", str(d), "--quiet"]) == 0
        out.append(d)
    return out


def _section(html: str, sid: str) -> str:
    m = re.search(rf'<section id="{sid}">(.*?)</section>', html, re.S)
    assert m, f"section {sid!r} missing"
    return m.group(1)


def test_page_headline_is_ndcg10_and_the_forest_plot_holds_the_comparisons_interval(two_folders: list[Path]) -> None:
    html = render_report(load_systems(two_folders))
    assert "headline metric of the charts" in html and "<strong>ndcg@10</strong>" in html  # not ndcg@1
    sec = _section(html, "vs-baseline")
    t = compare([SavedResults.load(d) for d in two_folders]).tests["ndcg@10"]["bm25"]
    whisker = re.search(r'class="whisker" data-low="([^"]+)" data-high="([^"]+)"', sec)
    point = re.search(r'class="point" data-value="([^"]+)"', sec)
    assert whisker and point
    assert float(whisker.group(1)) == pytest.approx(t.diff_ci.low) and float(whisker.group(2)) == pytest.approx(t.diff_ci.high)
    assert float(point.group(1)) == pytest.approx(t.mean_diff)
    counts = [int(c) for c in re.findall(r'class="bar"[^>]*data-count="(\d+)"', sec)]
    assert sum(counts) == t.n  # every paired query in the histogram once
    assert 'data-system="bm25"' in sec


def _header_labels(html: str, table_class: str) -> str:
    m = re.search(rf'<table class="{table_class}">(.*?)</thead>', html, re.S)
    assert m, table_class
    return re.sub(r"<[^>]+>", " ", m.group(1))


def test_every_table_with_a_value_per_system_names_the_systems(two_folders: list[Path]) -> None:
    html = render_report(load_systems(two_folders))
    # tables whose columns are per system: each system's label is in the header
    for table in ("by-type", "error-tags", "error-types", "taxonomy", "taxonomy-types", "per-query"):
        head = _header_labels(html, table)
        assert "bm25-okapi" in head and re.search(r"\bbm25\b(?!-)", head), table
    # the two tables: one header cell per system under each tag, with its label
    for table in ("error-types", "taxonomy-types"):
        m = re.search(rf'<table class="{table}">.*?<tr class="system-labels">(.*?)</tr>', html, re.S)
        assert m, table
        labels = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<th[^>]*>(.*?)</th>", m.group(1))]
        assert labels[:2] == ["bm25-okapi", "bm25"] and len(labels) % 2 == 0, (table, labels)
    # tables with a row per system carry the label in the row's first cell
    for table in ("headline", "versus", "denominators"):
        body = re.search(rf'<table class="{table}">.*?<tbody>(.*?)</tbody>', html, re.S)
        assert body, table
        firsts = [re.sub(r"<[^>]+>", "", c).replace("baseline", "").strip()
                  for c in re.findall(r"<tr[^>]*>\s*<td[^>]*>(.*?)</td>", body.group(1), re.S)]
        assert firsts and set(firsts) <= {"bm25-okapi", "bm25"}, (table, firsts)


def test_drilldown_data_is_escaped_json_with_lists_and_grades(two_folders: list[Path]) -> None:
    import json

    evil = "</script><!--<script>x()</script>&amp;\u2028"
    text = json_script({"q": evil})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"q": evil}

    html = render_report(load_systems(two_folders))
    block = re.search(r'<script type="application/json" id="drill-data">(.*?)</script>', html, re.S)
    assert block
    data = json.loads(block.group(1))
    assert data["metric"] == "ndcg@10" and [s["label"] for s in data["systems"]] == ["bm25-okapi", "bm25"]
    assert all(s["hasGrades"] and s["hasRun"] for s in data["systems"])
    run = read_saved_run(two_folders[1])
    judged = SavedResults.load(two_folders[1]).judged
    assert judged is not None
    q = data["queries"][0]
    assert [it[0] for it in q["lists"][1]["items"]] == run.ranked(q["qid"], 10)
    assert [it[1] for it in q["lists"][1]["items"]] == [judged.grade(q["qid"], d) for d in run.ranked(q["qid"], 10)]

    # an older results.json without 'judged': lists without grades, and the page says so
    older = []
    for s in load_systems(two_folders):
        body = s.results.to_json()
        body.pop("judged")
        older.append(LabelledResults(s.label, SavedResults.from_json(body), s.path))
    html = render_report(older)
    data = json.loads(re.search(r'id="drill-data">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    assert not any(s["hasGrades"] for s in data["systems"]) and all(s["hasRun"] for s in data["systems"])
    assert all("grades not saved" in s["note"] for s in data["systems"])
    assert all(it[1] is None for q in data["queries"] for lst in q["lists"] for it in lst["items"])


def test_per_query_rows_show_each_query_text_values_and_difference(two_folders: list[Path]) -> None:
    html = render_report(load_systems(two_folders))
    table = re.search(r'<table class="per-query">.*?<tbody>(.*?)</tbody>', html, re.S)
    assert table
    rows = re.findall(r'<tr class="q-row"[^>]*data-qid="([^"]+)"[^>]*>(.*?)</tr>', table.group(1), re.S)
    a, b = (SavedResults.load(d) for d in two_folders)
    pa, pb = a.metrics["ndcg@10"].per_query or {}, b.metrics["ndcg@10"].per_query or {}
    assert [q for q, _ in rows] == [q for q in pa if q in pb]
    for qid, cells_html in rows:
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", cells_html, re.S)]
        d = (pb[qid] or 0) - (pa[qid] or 0)
        assert cells == [a.queries[qid].text, a.queries[qid].type, fmt(pa[qid]), fmt(pb[qid]),
                         "0.00" if d == 0 else f"{d * 100:+.2f}"], qid
