"""The report's probe sections in headless Chromium: contrastive-pool retrieval, pair cosines, the CCD
ablation table and caption-corpus perturbation, as the browser lays them out.

The folders are made by the real commands on cheap inputs: ``finegrain contrast --pool`` on a small
pairs file with the deterministic bag-of-words encoder of ``tests/dense_fakes.py`` in place of a model,
and ``finegrain perturb --dataset caption-corpus:flickr8k/test`` on a five-image Flickr8k folder written
here, with the same fake encoder. The page is opened from disk over the DevTools protocol; the test
reads the rendered tables and charts back and compares them with the saved results.json, and checks
that the sections are visible (laid out with a size) and the page fetched nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chromium import DevToolsPage, find_chromium
from dense_fakes import BagOfWordsEncoder
from finegrain.cli.main import main
from finegrain.retrieve.dense.encoders import registry

pytest.importorskip("jinja2")

PAIRS = [
    {"id": "a1", "category": "add_att", "target": "a red car on the road", "contrastive": "a red car on the green road",
     "queries": ["red car parked", "a red car"], "ccd_category": "entity attribute"},
    {"id": "a2", "category": "add_att", "target": "a green door", "contrastive": "a green wooden door",
     "queries": ["green door", "the door is green"], "ccd_category": "entity attribute"},
    {"id": "b1", "category": "swap_obj", "target": "dog chases cat", "contrastive": "cat chases dog",
     "queries": ["a dog chases a cat"], "ccd_category": "event attribute"},
    {"id": "c1", "category": "replace_obj", "target": "two apples on a plate", "contrastive": "two pears on a plate",
     "queries": ["two apples", "apples on a plate"], "ccd_category": "entity type"},
]
CAPTIONS = {
    "1.jpg": ["a red dog runs on grass", "dog running grass", "brown dog on a lawn", "dog plays outside"],
    "2.jpg": ["a big man surfs a wave", "surfer riding wave", "man with surfboard", "surfing man"],
    "3.jpg": ["a small girl rides a white bike", "girl with bicycle", "child riding bike", "bike girl"],
    "4.jpg": ["a black dog sits on grass", "black dog", "a dog sitting", "dog on the grass"],
    "5.jpg": ["an old man smiles", "elderly man", "man smiling", "a happy old man"],
}


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    binary = find_chromium("the probe report browser test")
    base = tmp_path_factory.mktemp("probes_browser")
    pairs = base / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(p) + "\n" for p in PAIRS), encoding="utf-8")
    flickr = base / "data" / "flickr8k"
    flickr.mkdir(parents=True)
    (flickr / "Flickr8k.token.txt").write_text(
        "".join(f"{im}#{k}\t{c}\n" for im, caps in CAPTIONS.items() for k, c in enumerate(caps)), encoding="utf-8")
    (flickr / "Flickr_8k.testImages.txt").write_text("".join(f"{im}\n" for im in CAPTIONS), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(registry, "get_encoder", lambda spec, **kw: BagOfWordsEncoder(64, model_id=f"fake/{spec}"))
        mp.setenv("FINEGRAIN_DATA", str(base / "data"))
        mp.setenv("FINEGRAIN_CACHE", str(base / "cache"))
        assert main(["contrast", "--pairs", str(pairs), "--encoder", "bow", "--pool", "--no-cache",
                     "--resamples", "200", "--out", str(base / "contrast"), "-q"]) == 0
        assert main(["perturb", "--dataset", "caption-corpus:flickr8k/test", "--retriever", "minilm",
                     "--family", "color-all,size,negation", "--resamples", "200", "--out", str(base / "perturb"),
                     "-q"]) == 0
    out = base / "report.html"
    assert main(["report", str(base / "contrast"), str(base / "perturb"), "--out", str(out)]) == 0
    with DevToolsPage(binary, base / "profile", width=1280, height=1600) as tab:
        tab.goto(out.resolve().as_uri())
        dom = tab.eval("document.documentElement.outerHTML")
        read = tab.eval("""(() => {
          const cells = sel => [...document.querySelectorAll(sel)].map(r => [...r.children].map(c => c.innerText.trim()));
          const size = sel => { const e = document.querySelector(sel); if (!e) return null;
                                const r = e.getBoundingClientRect(); return [r.width, r.height]; };
          return {pool: cells('table.contrast-pool tbody tr'), cosine: cells('table.contrast-cosine tbody tr'),
                  ablation: cells('table.contrast-ablation tbody tr'),
                  ablationHead: cells('table.contrast-ablation thead tr'),
                  paper: cells('table.perturb-paper tbody tr'), paperHead: cells('table.perturb-paper thead tr'),
                  protocol: (document.querySelector('.perturb-protocol') || {}).innerText || '',
                  sizes: ['table.contrast-pool', 'table.contrast-cosine', 'table.contrast-ablation',
                          'table.perturb-paper'].map(size),
                  svgTitles: [...document.querySelectorAll('svg title, svg text')].map(t => t.textContent),
                  resources: performance.getEntriesByType('resource').map(e => e.name)};
        })()""")
        tab.screenshot(base / "report.png")
    return {"dom": dom, "read": read, "base": base,
            "contrast": json.loads((base / "contrast" / "results.json").read_text()),
            "perturb": json.loads((base / "perturb" / "results.json").read_text())}


def test_pool_table_shows_both_settings_and_the_change_as_saved(page: dict[str, Any]) -> None:
    saved = page["contrast"]["pool"]["directions"][0]
    (row,) = page["read"]["pool"]
    assert row[0] == "bow" and row[1] == str(saved["n_units"])
    assert row[2] == f"{saved['without_negatives']['n_candidates']} → {saved['with_negatives']['n_candidates']}"
    r1_without, r1_with, r1_change = row[3], row[4], row[5]
    assert r1_without.startswith(f"{100 * saved['without_negatives']['recall@1']['value']:.2f}")
    assert r1_with.startswith(f"{100 * saved['with_negatives']['recall@1']['value']:.2f}")
    assert r1_change.startswith(f"{100 * saved['change']['recall@1']['delta']:+.2f}")
    assert saved["with_negatives"]["recall@1"]["value"] <= saved["without_negatives"]["recall@1"]["value"]
    titles = " ".join(page["read"]["svgTitles"])
    assert "Contrastive-pool retrieval, text->text" in titles and "R@1 with negatives" in titles


def test_cosine_table_has_overall_each_category_and_ccd_category(page: dict[str, Any]) -> None:
    pc = page["contrast"]["pool"]["directions"][0]["pair_cosine"]
    rows = {r[1]: r for r in page["read"]["cosine"]}
    assert set(rows) == {"overall", *(c["name"] for c in pc["by_category"]), *(c["name"] for c in pc["by_ccd_category"])}
    for c in pc["by_category"]:
        assert rows[c["name"]][2:4] == [str(c["n_pairs"]), f"{c['mean']:.3f}"]


def test_ablation_table_lists_all_nine_ccd_categories_with_empty_and_sparse_cells(page: dict[str, Any]) -> None:
    a = page["contrast"]["ablation"][0]
    head = page["read"]["ablationHead"][0]
    assert head == ["CCD category", *a["columns"], "all"]
    rows = {r[0]: r[1:] for r in page["read"]["ablation"]}
    assert len(rows) == 10 and "style & presentation" in rows and "all" in rows
    assert rows["scene type"] == ["·"] * (len(a["columns"]) + 1)  # no pair: an empty row, still shown
    col = a["columns"].index("add_att")
    cell = a["cells"][a["rows"].index("entity attribute")][col]
    assert cell["n_pairs"] == 2 and cell["sparse"]
    assert rows["entity attribute"][col] == f"2* {100 * cell['fg_cda']:.1f}"
    assert rows["all"][-1].startswith(str(a["total"]["n_pairs"]))
    assert "3 of 9 CCD categories have pairs" in page["dom"]


def test_caption_corpus_perturbation_shows_the_plain_protocol_and_the_paper_table(page: dict[str, Any]) -> None:
    r = page["perturb"]
    assert page["read"]["paperHead"][0] == ["queries", "R@1", "R@10", "MRR@10", "MRR@all", "Fails %"]
    paper = {row[0]: row[1:] for row in page["read"]["paper"]}
    assert list(paper) == ["original", "color-all", "size", "negation"]
    assert paper["original"][0] == f"{100 * r['original']['recall@1']:.2f}"
    assert paper["negation"][4] == f"{100 * r['families']['negation']['metrics']['fail_rate@1']['dataset_perturbed']:.2f}"
    assert f"R@1 {100 * r['protocol']['plain_protocol']['recall@1']:.2f}" in page["read"]["protocol"]


def test_new_sections_are_laid_out_and_nothing_is_fetched(page: dict[str, Any]) -> None:
    for size in page["read"]["sizes"]:
        assert size is not None and size[0] > 200 and size[1] > 40, size
    assert all(u.startswith("file:") for u in page["read"]["resources"]), page["read"]["resources"]
    shot = page["base"] / "report.png"
    assert shot.is_file() and shot.stat().st_size > 20_000
