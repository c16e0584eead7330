"""``finegrain caption-corpus`` end to end with a deterministic fake encoder (no model, no cache)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dense_fakes import BagOfWordsEncoder
from finegrain.cli.main import main
from finegrain.compare.comparison import load_comparison
from finegrain.io.trec import read_run
from finegrain.retrieve.dense.encoders import registry

CAPTIONS = {
    "1.jpg": ["a dog runs on grass", "dog running grass", "brown dog on a lawn", "dog plays outside", "a dog"],
    "2.jpg": ["man surfs wave", "surfer riding wave", "man with surfboard", "surfing man", "big wave"],
    "3.jpg": ["girl rides bike", "girl with bicycle", "child riding bike", "bike girl", "small girl"],
    # query #0 of 4.jpg shares six words with 1.jpg's corpus and one with its own: 4.jpg fails, retrieving 1.jpg
    "4.jpg": ["dog running grass brown dog lawn car", "red car parked", "a car", "parked car", "car"],
}


@pytest.fixture
def fake_encoder(monkeypatch: pytest.MonkeyPatch) -> BagOfWordsEncoder:
    enc = BagOfWordsEncoder(dim=512)
    monkeypatch.setattr(registry, "get_encoder", lambda spec, **opts: enc)
    return enc


def _flickr_folder(root: Path, lines: list[str] | None = None) -> Path:
    folder = root / "flickr8k"
    folder.mkdir(parents=True)
    if lines is None:
        lines = [f"{im}#{k}\t{c}" for im, caps in CAPTIONS.items() for k, c in enumerate(caps)]
    (folder / "Flickr8k.token.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "Flickr_8k.testImages.txt").write_text("4.jpg\n1.jpg\n2.jpg\n", encoding="utf-8")
    return folder


def _run(*args: str) -> int:
    return main(["caption-corpus", *args, "--quiet", "--no-cache"])


def test_cli_flickr8k_writes_results_and_run(tmp_path: Path, fake_encoder, monkeypatch, capsys) -> None:
    monkeypatch.setenv("FINEGRAIN_DATA", str(tmp_path))
    _flickr_folder(tmp_path)
    out = tmp_path / "out"
    assert _run("--dataset", "flickr8k", "--split", "all", "--out", str(out)) == 0
    printed = capsys.readouterr().out
    assert "R@1" in printed and "Fails %" in printed and "caption #0" in printed
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["ranks"] == {"1.jpg": 1, "2.jpg": 1, "3.jpg": 1, "4.jpg": 2}
    assert res["aggregate"]["recall@1"] == pytest.approx(0.75)
    assert res["aggregate"]["fail_rate@1"] == pytest.approx(0.25)
    assert res["aggregate"]["mrr"] == pytest.approx((1 + 1 + 1 + 0.5) / 4)
    assert res["n_failures"] == 1
    (f,) = res["failures"]
    assert (f["ground_truth"], f["retrieved"], f["rank"]) == ("4.jpg", "1.jpg", 2)
    assert res["protocol"]["query_index"] == 0 and res["protocol"]["n_corpus_sentences"] == 16
    assert "remaining captions" in res["protocol"]["description"]
    assert res["queries"]["2.jpg"]["text"] == "man surfs wave"
    assert res["per_query"]["recall@1"]["4.jpg"] == 0.0
    run = read_run(out / "run.trec")
    assert run.ranked("4.jpg")[:2] == ["1.jpg", "4.jpg"]
    # the saved results are something `finegrain compare` reads
    cmp = load_comparison([out, out], n_resamples=50).to_json_dict()
    assert "recall@1" in cmp["metrics"] and "median_rank" not in cmp["metrics"]


def test_cli_split_and_query_caption_option(tmp_path: Path, fake_encoder, monkeypatch) -> None:
    monkeypatch.setenv("FINEGRAIN_DATA", str(tmp_path))
    _flickr_folder(tmp_path)
    out = tmp_path / "out"
    assert _run("--dataset", "flickr8k", "--out", str(out), "--query-caption", "4") == 0
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert list(res["ranks"]) == ["4.jpg", "1.jpg", "2.jpg"]  # the test split, in split-file order
    assert res["queries"]["4.jpg"]["text"] == "car"
    assert res["provenance"]["dataset"]["name"] == "caption-corpus:flickr8k/test#q4"
    assert fake_encoder.calls[0] == ("query", ["car", "a dog", "big wave"])


def test_cli_malformed_token_line_is_a_clear_error(tmp_path: Path, fake_encoder, capsys) -> None:
    lines = [f"{im}#{k}\t{c}" for im, caps in CAPTIONS.items() for k, c in enumerate(caps)]
    lines[6] = "2.jpg#1 surfer riding wave"  # a space, not a TAB
    folder = _flickr_folder(tmp_path, lines)
    code = _run("--dataset", "flickr8k", "--folder", str(folder), "--out", str(tmp_path / "out"))
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and "Flickr8k.token.txt:7: expected" in err and "TAB" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--dataset", "coco"], "unknown caption-corpus dataset 'coco'"),
        (["--dataset", "flickr8k", "--split", "val"], "unknown Flickr8k split 'val'"),
        (["--dataset", "flickr8k", "--query-caption", "7"], "has no text #7"),
    ],
)
def test_cli_bad_options(tmp_path: Path, fake_encoder, monkeypatch, capsys, args, message) -> None:
    monkeypatch.setenv("FINEGRAIN_DATA", str(tmp_path))
    _flickr_folder(tmp_path)
    assert _run(*args, "--out", str(tmp_path / "out")) == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow  # 12 s idle, ~40 s on a busy machine: WordNet similarities for every failure
def test_cli_vg100_adds_concept_scores_to_failures(tmp_path: Path, data_root: Path, fake_encoder, monkeypatch) -> None:
    pytest.importorskip("finegrain.diagnose.concepts.metrics")
    from finegrain.diagnose.concepts.metrics import concept_scores
    from finegrain.diagnose.concepts.visual_genome import load_vg_objects, load_vg_regions

    monkeypatch.setenv("FINEGRAIN_DATA", str(data_root))
    out = tmp_path / "vg"
    assert _run("--dataset", "vg100", "--split", "all", "--out", str(out)) == 0
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    regions = load_vg_regions(data_root / "visual_genome_100")
    assert res["protocol"]["n_items"] == 100
    assert res["protocol"]["n_corpus_sentences"] == sum(len(r) - 1 for r in regions.values())
    assert res["queries"]["1"]["text"] == regions[1][0]
    fails = res["failures"]
    assert len(fails) == res["n_failures"] == sum(r != 1 for r in res["ranks"].values()) > 0
    objects = load_vg_objects(data_root / "visual_genome_100")
    f = fails[0]
    want = concept_scores(objects[int(f["ground_truth"])], objects[int(f["retrieved"])]).to_dict()
    assert set(want) == {"ca", "ncs", "ce", "sd", "sd_binary"}
    assert f["concepts"] == pytest.approx(want, nan_ok=True)
    diag = res["concept_diagnosis"]
    assert diag["available"] and diag["n_failures"] == len(fails)
    # the global (Table 3) report pools the same failures: its CA mean is the mean of the per-failure CAs
    from finegrain.diagnose.concepts.report import local_report

    glob = diag["global_query_agnostic"]
    both = [x for x in fails if x["concepts"] is not None]
    assert glob["n_failures"] == len(both)
    hits = sum(local_report(objects[int(x["ground_truth"])], objects[int(x["retrieved"])]).object_hit for x in both)
    assert glob["object_hit"] == hits
    if "ca" in diag["query_agnostic"]:
        cas = [x["concepts"]["ca"] for x in fails if x["concepts"] and x["concepts"].get("ca") is not None]
        assert diag["query_agnostic"]["ca"]["mean"] == pytest.approx(float(np.mean(cas)))
