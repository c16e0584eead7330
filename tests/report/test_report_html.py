"""``finegrain report``: one self-contained, escaped HTML page rendered from saved results alone.

Two real results folders are made once with ``finegrain eval`` on the embedded
caption set (bm25-okapi and Lucene bm25); the page is checked for its sections,
its numbers (equal to the comparison's), escaping and the absence of any
network reference.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from finegrain.cli.main import main
from finegrain.compare.comparison import compare
from finegrain.compare.systems import LabelledResults
from finegrain.report import charts
from finegrain.report.html import fmt, load_systems, readable, render_report, write_report
from finegrain.results.files import read_results

pytest.importorskip("jinja2")

NETWORK_ATTR = re.compile(r"""\b(?:src|href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE)


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("report")
    out = []
    for retriever in ("bm25-okapi", "bm25"):
        d = base / retriever
        code = main(["eval", "-d", "embedded/captions-zh", "-r", retriever, "-m", "ndcg@10,recall@10,median_rank",
                     "-o", str(d), "--quiet"])
        assert code == 0
        out.append(d)
    return out[0], out[1]


@pytest.fixture(scope="module")
def page(folders: tuple[Path, Path]) -> str:
    return render_report(load_systems(list(folders)))


def _no_network(html: str) -> None:
    assert not NETWORK_ATTR.search(html), NETWORK_ATTR.search(html)
    low = html.lower()
    assert "<link" not in low and "@import" not in low and "url(" not in low
    # scripts: only the drill-down's inline data block and code (no src), which load nothing
    assert set(re.findall(r"<script[^>]*>", low)) <= {'<script type="application/json" id="drill-data">', "<script>"}
    assert not any(call in low for call in ("fetch(", "xmlhttprequest", "import(", "websocket", "sendbeacon"))
    assert 'src="http' not in low and 'href="http' not in low


def _section(html: str, sid: str) -> str:
    m = re.search(rf'<section id="{sid}">(.*?)</section>', html, re.S)
    assert m, f"section {sid!r} missing"
    return m.group(1)


def test_page_is_self_contained(page: str) -> None:
    _no_network(page)
    assert page.lstrip().startswith("<!DOCTYPE html>")
    assert "<style>" in page


def test_headline_numbers_are_the_saved_ones_with_the_comparisons_intervals(page: str, folders: tuple[Path, Path]) -> None:
    results = [read_results(d) for d in folders]
    cmp = compare(results, folders=[str(d) for d in folders]).to_json_dict()
    head = _section(page, "headline")
    for r in results:
        name = r["provenance"]["retriever"]["name"]
        for key in ("ndcg@10", "recall@10"):
            assert fmt(r["aggregate"][key]) in head
            lo, hi = cmp["summary"][key][name]["ci"]
            assert f"[{fmt(lo)}, {fmt(hi)}]" in head, (name, key)
    t = cmp["tests"]["ndcg@10"]["bm25"]
    assert f"{t['mean_diff'] * 100:+.2f}" in head
    assert "Against the baseline bm25-okapi" in head
    # median_rank's aggregate is a median: shown, but not tested
    assert "median_rank" in head and "Not tested" in head


def test_per_type_rows_and_chart(page: str, folders: tuple[Path, Path]) -> None:
    by_type = _section(page, "by-type")
    rows = re.findall(r'<tr class="type-row" data-type="([^"]+)"><td>([^<]+)</td><td class="num">(\d+)</td>', by_type)
    assert {r[0] for r in rows} == {"entity", "event", "conjunction", "condition"}
    res = read_results(folders[0])
    n = {t: max(c["n"] for c in cells.values()) for t, cells in res["by_type"].items()}
    assert [r[0] for r in rows] == sorted(n)  # the one order of query groups: by name, untyped last
    assert [int(r[2]) for r in rows] == [n[r[0]] for r in rows]
    assert "<svg" in by_type and "ndcg@10 by query type" in by_type
    assert fmt(res["by_type"]["entity"]["ndcg@10"]["value"]) in by_type


def test_type_names_are_readable_words(folders: tuple[Path, Path]) -> None:
    """Types like ``singleton_object`` show as "singleton object" everywhere (table, chart, win/tie/loss)."""
    systems = []
    for s in load_systems(list(folders)):
        r = s.results.to_json()
        r["by_type"]["singleton_object"] = r["by_type"].pop("entity")
        r["by_type"]["complex-condition"] = r["by_type"].pop("condition")
        for q in r["queries"].values():
            q["type"] = {"entity": "singleton_object", "condition": "complex-condition"}.get(q["type"], q["type"])
        systems.append(LabelledResults(s.label, r, s.path))
    html = render_report(systems)
    assert ">singleton object<" in html and ">complex condition<" in html
    assert "singleton object (n=" in html  # chart and win/tie/loss labels
    assert "singleton_object" not in re.sub(r'data-type="[^"]*"', "", html)


def test_win_tie_loss_and_curves(page: str, folders: tuple[Path, Path]) -> None:
    wtl = _section(page, "win-tie-loss")
    results = [read_results(d) for d in folders]
    t = compare(results, folders=[str(d) for d in folders]).to_json_dict()["tests"]["ndcg@10"]["bm25"]
    row = re.search(r"<td>all queries</td><td class=\"num\">(\d+)</td><td class=\"num\">(\d+)</td>"
                    r"<td class=\"num\">(\d+)</td><td class=\"num\">(\d+)</td>", wtl)
    assert row and tuple(int(x) for x in row.groups()) == (t["n"], t["win"], t["tie"], t["loss"])
    assert wtl.count("<svg") == 1
    curves = _section(page, "curves")
    assert curves.count("<svg") == 3 and "ndcg@k" in curves and "recall@k" in curves


def test_error_tags_with_examples(page: str, folders: tuple[Path, Path]) -> None:
    errors = _section(page, "errors")
    for tag in ("literal miss", "semantic miss", "partial condition", "over generalization"):
        assert tag in errors
    saved = read_results(folders[0])["errors"]
    ex = next(e for items in saved["examples"].values() for e in items)
    assert ex["doc_id"] in errors
    assert str(saved["counts"]["semantic_miss"]["items"]) in errors


def test_denominators_and_provenance(page: str, folders: tuple[Path, Path]) -> None:
    den = _section(page, "denominators")
    d = read_results(folders[0])["denominators"]["ndcg@10"]
    assert "excluded no relevant" in den and "missing from run" in den
    assert f'<td class="num">{d["n_universe"]}</td><td class="num">{d["n_scored"]}</td>' in den
    prov = _section(page, "provenance")
    assert "embedded/captions-zh" in prov and "finegrain_version" in prov
    for folder in folders:
        assert str(folder) in prov
        assert hashlib.sha256((folder / "results.json").read_bytes()).hexdigest() in prov


def test_one_folder_has_no_comparison(folders: tuple[Path, Path]) -> None:
    html = render_report(load_systems([folders[0]]))
    _no_network(html)
    assert 'id="win-tie-loss"' not in html and "Against the baseline" not in html and 'id="differences"' not in html
    assert "bootstrap confidence interval" in html and "<svg" in html
    assert re.search(r'class="ci">\[\d+\.\d\d, \d+\.\d\d\]', html)


def test_text_is_escaped(folders: tuple[Path, Path]) -> None:
    systems = []
    for s in load_systems(list(folders)):
        r = s.results.to_json()
        for q in r["queries"].values():
            q["text"] = "<script>alert(1)</script>" + q["text"]
        for items in (r.get("errors") or {}).get("examples", {}).values():
            for e in items:
                e["text"] = '<img src="https://evil.example/x.png">' + e["text"]
        r["provenance"]["retriever"]["name"] = s.label + '<b onmouseover="x()">'
        systems.append(LabelledResults(s.label + "<i>", r, s.path))
    html = render_report(systems)
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img" not in html and "&lt;img src=&#34;https://evil.example" in html
    assert "<i>" not in html and "<b onmouseover" not in html
    _no_network(html)


def test_render_is_deterministic(folders: tuple[Path, Path]) -> None:
    systems = load_systems(list(folders))
    assert render_report(systems) == render_report(systems)


def test_cli_writes_the_page(folders: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sub" / "report.html"
    code = main(["report", str(folders[0]), str(folders[1]), "--out", str(out), "--baseline", "1",
                 "--metric", "recall@10"])
    assert code == 0, capsys.readouterr().err
    html = out.read_text(encoding="utf-8")
    assert f"wrote {out}" in capsys.readouterr().out
    assert "compared against the baseline <strong>bm25</strong>" in html
    assert "Win / tie / loss on recall@10" in html
    _no_network(html)


def test_folder_without_results_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code = main(["report", str(empty), "--out", str(tmp_path / "r.html")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and not (tmp_path / "r.html").exists()
    assert len(err) == 1 and str(empty) in err[0] and "finegrain eval" in err[0]


@pytest.mark.parametrize(("args", "needle"), [
    (["--metric", "ndcg@5"], "shared metrics: ndcg@10, recall@10"),
    (["--baseline", "7"], "out of range"),
    (["--baseline", "nope"], "none of the results folders"),
])
def test_bad_options_are_one_clear_line(folders: tuple[Path, Path], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str], args: list[str], needle: str) -> None:
    code = main(["report", str(folders[0]), str(folders[1]), "--out", str(tmp_path / "r.html"), *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and needle in err[0], err


def test_different_datasets_are_refused(folders: tuple[Path, Path], tmp_path: Path) -> None:
    other = json.loads((folders[1] / "results.json").read_text(encoding="utf-8"))
    other["provenance"]["dataset"]["name"] = "embedded/captions-en"
    d = tmp_path / "other"
    d.mkdir()
    (d / "results.json").write_text(json.dumps(other), encoding="utf-8")
    code = main(["report", str(folders[0]), str(d), "--out", str(tmp_path / "r.html")])
    assert code != 0 and not (tmp_path / "r.html").exists()


# ---------------------------------------------------------------- charts


def test_charts_escape_text_and_mark_missing_values() -> None:
    svg = charts.grouped_bar_chart(["a<b>", "c & d"], [("<sys>", [0.5, None])], title='t"1', axis_label="x")
    assert "<b>" not in svg and "a&lt;b&gt;" in svg and "c &amp; d" in svg and "&lt;sys&gt;" in svg
    assert "n/a" in svg and 't&quot;1' in svg
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    line = charts.line_chart([1, 10, 100], [("s", [0.1, None, 0.3])], title="c", x_label="k", y_label="v")
    assert line.count("<polyline") == 0  # a None breaks the line into single points
    wtl = charts.win_tie_loss_chart([("all", 3, 1, 2), ("none", 0, 0, 0)], title="w")
    assert "no paired queries" in wtl and ">3<" in wtl


def test_charts_refuse_mismatched_series() -> None:
    with pytest.raises(ValueError, match="one value"):
        charts.grouped_bar_chart(["a", "b"], [("s", [0.1])], title="t", axis_label="x")
    with pytest.raises(ValueError, match="log_x"):
        charts.line_chart([0, 1], [("s", [0.1, 0.2])], title="t", x_label="k", y_label="v")


def test_readable() -> None:
    assert readable("singleton_object") == "singleton object"
    assert readable("complex-condition") == "complex condition"
    assert readable(None) == "untyped"


# --------------------------------------------------------------------------- error taxonomy


def test_error_taxonomy_section_shows_saved_shares_chart_and_rules(page: str, folders: tuple[Path, Path]) -> None:
    from markupsafe import escape

    tax = _section(page, "taxonomy")
    saved = [read_results(d)["taxonomy"] for d in folders]
    assert 'href="#taxonomy"' in page
    rows = dict(re.findall(r'<tr class="taxonomy-row" data-tag="([a-z_]+)">(.*?)</tr>', tax, re.DOTALL))
    assert set(rows) == set(saved[0]["counts"])
    for tag, row in rows.items():
        nums = re.findall(r'<td class="num">([^<]*)</td>', row)
        expected = []
        for t in saved:  # count and share of each system, as saved (share x100, one decimal)
            p = t["proportions"][tag]
            expected += [str(t["counts"][tag]), "—" if p is None else f"{p * 100:.1f}%"]
        assert nums[:4] == expected, (tag, nums)
        assert readable(tag) in row
    assert f"{saved[0]['n_failures']} / {saved[0]['n_queries']}" in tax
    assert "<svg" in tax and "Share of failed queries per error type" in tax
    shown = [x for t in saved for items in t["examples"].values() for x in items[:2]]
    assert shown, "the bm25 runs on the embedded set have failures"
    for x in shown:
        assert str(escape(x["rule"])) in tax and (x["wrong_id"] or "—") in tax
    _no_network(page)


def test_error_taxonomy_is_left_out_when_absent_and_noted_when_skipped(folders: tuple[Path, Path]) -> None:
    systems = load_systems(list(folders))
    bare = [LabelledResults(s.label, {k: v for k, v in s.results.to_json().items() if k != "taxonomy"}, s.path) for s in systems]
    html = render_report(bare)
    assert 'id="taxonomy"' not in html and 'href="#taxonomy"' not in html
    skipped = dict(bare[1].results.to_json(), taxonomy={"schema": "finegrain.taxonomy/1", "skipped": "the run is empty"})
    html = render_report([systems[0], LabelledResults(bare[1].label, skipped, bare[1].path)])
    tax = _section(html, "taxonomy")
    assert "no error taxonomy saved (the run is empty)" in tax and systems[0].label in tax


def test_eval_only_page_has_no_probe_sections_and_matches_the_systems_render(folders: tuple[Path, Path],
                                                                              tmp_path: Path) -> None:
    path = write_report(list(folders), tmp_path / "eval-only.html")
    html = path.read_text(encoding="utf-8")
    assert html == render_report(load_systems(list(folders)))  # the folder sorting changes nothing for eval folders
    for sid in ("perturbation", "contrast"):
        assert f'<section id="{sid}">' not in html and f'href="#{sid}"' not in html
    assert "(2 results folders)" in html
    _section(html, "headline")


def test_a_folder_of_unknown_kind_names_the_file_and_the_accepted_kinds(folders: tuple[Path, Path], tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "results.json").write_text(json.dumps({"tool": "something"}), encoding="utf-8")
    code = main(["report", str(folders[0]), str(odd), "--out", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == 2 and str(odd / "results.json") in err
    assert "finegrain eval" in err and "finegrain perturb" in err and "finegrain contrast" in err
