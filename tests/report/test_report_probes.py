"""``finegrain report`` with perturbation and contrast folders: the probe sections, from saved files alone.

Real folders are made by the real commands on cheap inputs: ``finegrain perturb``
with bm25-okapi on the embedded English captions, ``finegrain contrast`` on a
small pairs file with the deterministic bag-of-words encoder of
``tests/dense_fakes.py`` standing in for a model (patched into the encoder
registry, so the command writes its own JSON layout), and ``finegrain eval``.
The page is checked against the numbers in the results files (and, for FG-CDA,
against a count over the saved per-(pair, query) records), chart geometry,
escaping and the absence of any network reference.
"""

from __future__ import annotations

import html as htmlmod
import json
import math
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from dense_fakes import BagOfWordsEncoder
from finegrain.cli.main import main
from finegrain.report.probe_charts import interval_chart, share_chart
from finegrain.retrieve.dense.encoders import registry

pytest.importorskip("jinja2")

NETWORK_ATTR = re.compile(r"""\b(?:src|href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE)

PAIRS = [
    {"id": "a1", "category": "colour", "target": "a red car on the road", "contrastive": "a blue car on the road",
     "queries": ["red car parked", "a red car", "car that is red on a road"]},
    {"id": "a2", "category": "colour", "target": "a green door", "contrastive": "a yellow door",
     "queries": ["green door", "the door is green"]},
    {"id": "a3", "category": "colour", "target": "white cat sleeping", "contrastive": "black cat sleeping",
     "queries": ["a black and white photo of a cat", "sleeping cat"]},
    {"id": "b1", "category": "<i>order</i>", "target": "dog chases cat", "contrastive": "cat chases dog",
     "queries": ["a dog chases a cat", "the dog runs after the cat"]},
    {"id": "b2", "category": "<i>order</i>", "target": "man rides horse", "contrastive": "horse near man",
     "queries": ["a man rides a horse", "man riding"]},
    {"id": "c1", "category": "count", "target": "two apples on a plate", "contrastive": "three apples on a plate",
     "queries": ["two apples", "a plate with two apples", "apples"]},
]


def _run(args: list[str]) -> None:
    assert main(args) == 0, args


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("probes")
    _run(["perturb", "--dataset", "embedded/captions-en", "--retriever", "bm25-okapi", "--out",
          str(base / "perturb"), "-q"])
    _run(["eval", "-d", "embedded/captions-en", "-r", "bm25-okapi", "-m", "ndcg@10", "-o", str(base / "eval"),
          "--quiet"])
    pairs = base / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(p) + "\n" for p in PAIRS), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        dims = {"bow-64": 64, "bow-8": 8}  # the 8-bucket one collides often: a second, worse system
        mp.setattr(registry, "get_encoder",
                   lambda spec, **kw: BagOfWordsEncoder(dims[spec], model_id=f"fake/{spec}"))
        for spec in dims:
            _run(["contrast", "--pairs", str(pairs), "--encoder", spec, "--out", str(base / spec), "--no-cache",
                  "--resamples", "300", "-q"])
    return {"perturb": base / "perturb", "eval": base / "eval", "c64": base / "bow-64", "c8": base / "bow-8",
            "base": base}


def _results(d: Path) -> dict[str, Any]:
    return json.loads((d / "results.json").read_text(encoding="utf-8"))


def _render(dirs: list[Path], out: Path) -> str:
    _run(["report", *map(str, dirs), "--out", str(out)])
    return out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def page(made: dict[str, Path]) -> str:
    return _render([made["eval"], made["perturb"], made["c64"], made["c8"]], made["base"] / "mixed.html")


def _section(page: str, sid: str) -> str:
    m = re.search(rf'<section id="{sid}">(.*?)</section>', page, re.DOTALL)
    assert m, f"section {sid!r} missing"
    return m.group(1)


def _cells(row_html: str) -> list[str]:
    return [htmlmod.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row_html, re.DOTALL)]


def _no_network(page: str) -> None:
    assert not NETWORK_ATTR.search(page), NETWORK_ATTR.search(page)
    low = page.lower()
    assert "<link" not in low and "@import" not in low and "url(" not in low
    # scripts: only the drill-down's inline data block and code (no src), which load nothing
    assert set(re.findall(r"<script[^>]*>", low)) <= {'<script type="application/json" id="drill-data">', "<script>"}
    assert not any(call in low for call in ("fetch(", "xmlhttprequest", "import(", "websocket", "sendbeacon"))


def test_mixed_page_has_every_section_and_no_network(page: str) -> None:
    _no_network(page)
    for sid in ("headline", "by-type", "perturbation", "contrast", "denominators", "provenance"):
        _section(page, sid)
    assert '<a href="#perturbation">' in page and '<a href="#contrast">' in page
    assert "(4 results folders)" in page


def test_perturbation_tables_show_the_saved_counts_percentages_and_deltas(page: str, made: dict[str, Path]) -> None:
    r = _results(made["perturb"])
    sec = _section(page, "perturbation")
    t4 = re.search(r'<table class="perturb-ranks">(.*?)</table>', sec, re.DOTALL).group(1)
    ranks = {m.group(1): _cells(m.group(2)) for m in re.finditer(r'<tr data-family="([^"]+)">(.*?)</tr>', t4, re.DOTALL)}
    assert set(ranks) == set(r["families"])
    for fam, e in r["families"].items():
        rc = e["rank_change"]
        want = [fam, str(e["n_perturbed"]), f"{100 * e['share_of_queries']:.2f}", str(rc["n"])]
        for k in ("lower", "same", "higher"):
            p = rc["percent"][k]
            want.append(f"{rc[k]} {p:.2f}%" if p is not None else f"{rc[k]} —")
        assert ranks[fam] == want
        assert rc["lower"] + rc["same"] + rc["higher"] == rc["n"]  # the saved counts partition n
    table5 = re.search(r'<table class="perturb-deltas">(.*?)</table>', sec, re.DOTALL).group(1)
    rows = [_cells(m) for m in re.findall(r"<tr data-family[^>]*>(.*?)</tr>", table5, re.DOTALL)]
    assert len(rows) == len(r["families"]) * len(r["metrics"])
    by_key = {(c[0], c[1]): c[2:] for c in rows}
    for fam, e in r["families"].items():
        for m in r["metrics"]:
            d = e["metrics"][m]
            if d["delta"] is None:
                assert by_key[fam, m] == [str(d["n"]), "—", "—", "—", "—"]
                continue
            assert by_key[fam, m] == [str(d["n"]), f"{100 * d['original']:.2f}", f"{100 * d['perturbed']:.2f}",
                                      f"{100 * d['delta']:+.2f}",
                                      f"[{100 * d['ci_low']:+.2f}, {100 * d['ci_high']:+.2f}]"]
            assert d["ci_low"] <= d["delta"] <= d["ci_high"]


def test_perturbation_charts_draw_the_saved_shares_and_intervals(page: str, made: dict[str, Path]) -> None:
    r = _results(made["perturb"])
    sec = _section(page, "perturbation")
    assert sec.count("<svg") == 2
    for fam, e in r["families"].items():
        rc = e["rank_change"]
        if rc["n"] == 0:
            continue
        widths = {}
        for part, key in (("moved lower", "lower"), ("same rank", "same"), ("moved higher", "higher")):
            m = re.search(rf'<rect [^>]*width="([\d.]+)"[^>]*><title>{re.escape(fam)} \(n={rc["n"]}\) · {part}: '
                          rf'{rc[key]} of {rc["n"]} \(([\d.]+)%\)</title>', sec)
            if rc[key] == 0:
                assert m is None
                continue
            assert m, (fam, part)
            assert m.group(2) == f"{rc['percent'][key]:.1f}"
            widths[key] = float(m.group(1))
        total = sum(widths.values())
        for key, w in widths.items():  # bar lengths are the counts' shares
            assert w / total == pytest.approx(rc[key] / rc["n"], abs=0.01)
        d = e["metrics"][r["metrics"][0]]
        label = f"{d['delta'] * 100:+.2f} [{d['ci_low'] * 100:+.2f}, {d['ci_high'] * 100:+.2f}]"
        assert f"{fam} (n={rc['n']}) · {r['metrics'][0]}: {label}" in sec
    assert 'class="reference"' in sec and "perturbed − original (x100)" in htmlmod.unescape(sec)


def test_perturbation_examples_come_from_perturbations_jsonl(page: str, made: dict[str, Path]) -> None:
    sec = _section(page, "perturbation")
    table = re.search(r'<table class="examples perturb-examples">(.*?)</table>', sec, re.DOTALL).group(1)
    first: dict[str, dict[str, Any]] = {}
    for line in (made["perturb"] / "perturbations.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        first.setdefault(rec["family"], rec)
    texts = htmlmod.unescape(re.sub(r"<[^>]+>", "", table))
    ranks = _results(made["perturb"])["families"]
    for fam, rec in first.items():
        assert rec["original"] in texts and rec["perturbed"] in texts
        before, after = ranks[fam]["best_relevant_rank"][rec["qid"]]
        assert f"{before if before is not None else '—'} → {after if after is not None else '—'}" in texts
        if rec["word"] and rec["replacement"]:
            assert f"{rec['word']} → {rec['replacement']}" in texts
            assert f'<mark class="old">{htmlmod.escape(rec["word"])}</mark>' in table


def test_contrast_section_shows_fg_cda_per_category_for_both_encoders(page: str, made: dict[str, Path]) -> None:
    sec = _section(page, "contrast")
    assert sec.count("<svg") == 1  # one direction (text->text), one chart
    for key in ("c64", "c8"):
        r = _results(made[key])
        assert r["schema"] == "finegrain.contrast/1"
        label = r["encoder"]["spec"]
        assert f'</span> {label}</th>' in sec
        (d,) = r["directions"]
        recs = r["records"][d["direction"]]
        for a in d["by_category"]:
            mine = [x for x in recs if x["category"] == a["name"]]
            correct = sum(x["target_score"] > x["contrastive_score"] for x in mine)  # recount from the records
            assert (correct, len(mine)) == (a["correct"], a["n"])
            lo, hi = a["fg_cda_ci"]
            assert f"{correct} / {len(mine)}</td><td class=\"num\"><strong>{100 * correct / len(mine):.2f}</strong>" in sec
            assert f"[{100 * lo:.2f}, {100 * hi:.2f}]" in sec
            chart_label = f"{100 * a['fg_cda']:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"
            pairs = max(b["n_pairs"] for k in ("c64", "c8") for b in _results(made[k])["directions"][0]["by_category"]
                        if b["name"] == a["name"])
            assert htmlmod.escape(f"{a['name']} (pairs={pairs}) · {label}: {chart_label}") in sec
    # category names from the pairs file are escaped text, never markup
    assert "<i>order</i>" not in sec and "&lt;i&gt;order&lt;/i&gt;" in sec


def test_probe_only_page_skips_the_evaluation_sections(made: dict[str, Path]) -> None:
    html = _render([made["perturb"], made["c64"]], made["base"] / "probes.html")
    _no_network(html)
    _section(html, "perturbation")
    _section(html, "contrast")
    for sid in ("headline", "by-type", "denominators", "provenance"):
        assert f'<section id="{sid}">' not in html
    assert "embedded/captions-en" in html.split("</title>")[0]
    assert "(2 results folders)" in html


def test_kinds_not_given_give_no_section(made: dict[str, Path]) -> None:
    only_contrast = _render([made["c8"]], made["base"] / "c.html")
    assert '<section id="perturbation">' not in only_contrast and "#perturbation" not in only_contrast
    only_perturb = _render([made["perturb"]], made["base"] / "p.html")
    assert '<section id="contrast">' not in only_perturb and "#contrast" not in only_perturb


def test_unknown_schema_is_one_clear_error(made: dict[str, Path], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "results.json").write_text(json.dumps({"schema": "something.else/3", "x": 1}), encoding="utf-8")
    code = main(["report", str(made["perturb"]), str(odd), "--out", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == 2 and not (tmp_path / "r.html").exists()
    assert "error:" in err and str(odd / "results.json") in err and "something.else/3" in err
    for kind in ("finegrain.results/1", "finegrain.perturb/1", "finegrain.contrast/1"):
        assert kind in err
    assert "Traceback" not in err


def test_examples_are_escaped_and_optional(made: dict[str, Path], tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(made["perturb"] / "results.json", bare / "results.json")
    html = _render([bare], tmp_path / "b.html")
    assert "No perturbations.jsonl beside this results.json" in html and "perturb-examples" not in html
    odd = tmp_path / "odd"
    odd.mkdir()
    shutil.copy(made["perturb"] / "results.json", odd / "results.json")
    rec = {"qid": "q", "family": "typo", "original": "a <b>bold</b> cat", "perturbed": "a <b>bold</b> cta",
           "word": "cat", "replacement": "cta", "start": 14, "end": 17}
    (odd / "perturbations.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    html = _render([odd], tmp_path / "e.html")
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html
    assert '<mark class="old">cat</mark>' in html and '<mark class="new">cta</mark>' in html


def test_interval_chart_geometry_and_escaping() -> None:
    svg = interval_chart(["<x>", "y"], [("s&t", [(0.5, 0.25, 0.75), None])], title="t<", axis_label="a",
                         reference=0.5, reference_label="chance", domain=(0.0, 1.0), fmt="{:.1f}")
    assert "<x>" not in svg and "&lt;x&gt;" in svg and "s&amp;t" in svg and "n/a" in svg
    (cx,) = [float(v) for v in re.findall(r'<circle cx="([\d.]+)"', svg)]
    xs = sorted({float(v) for v in re.findall(r'<line x1="([\d.]+)" y1="[\d.]+" x2="\1" y2="[\d.]+" stroke="#0072B2"', svg)})
    assert len(xs) == 2 and cx == pytest.approx((xs[0] + xs[1]) / 2, abs=0.1)  # 0.5 midway in [0.25, 0.75]
    ref = float(re.search(r'class="reference" x1="([\d.]+)"', svg).group(1))
    assert ref == pytest.approx(cx, abs=0.1)  # the reference 0.5 sits under the dot
    assert "50.0 [25.0, 75.0]" in svg
    with pytest.raises(ValueError, match="intervals for 2 categories"):
        interval_chart(["a", "b"], [("s", [None])], title="t", axis_label="a")


def test_share_chart_widths_follow_counts() -> None:
    svg = share_chart([("f", [3, 1, 0], [75.0, 25.0, 0.0]), ("empty", [0, 0, 0], [None, None, None])], title="t",
                      empty="nothing here")
    widths = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)" height="20.0"', svg)]
    assert len(widths) == 2 and widths[0] == pytest.approx(3 * widths[1], rel=0.01)
    assert "75.0% (3)" in svg and "nothing here" in svg


@pytest.mark.parametrize("big", [1.7e306, 1e300, sys.float_info.max])
def test_interval_chart_draws_a_huge_value_at_the_end_of_the_axis(big: float) -> None:
    """x100 of a saved value may leave the floats, or round out to an axis end that does: the value sits at the
    end of a finite axis and is written as it is."""
    svg = interval_chart(["huge", "small"], [("s", [(big, -big, big), (0.1, 0.0, 0.2)])], title="t", axis_label="a")
    assert "+10.00 [+0.00, +20.00]" in svg
    xs = [float(v) for v in re.findall(r'<circle cx="([-\d.e+]+)"', svg)]
    assert len(xs) == 2 and all(math.isfinite(x) for x in xs) and xs[0] > xs[1]
