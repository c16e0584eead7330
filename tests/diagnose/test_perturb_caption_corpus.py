"""``finegrain perturb`` on the caption-corpus protocol: names, the rank tables by hand, and the
unperturbed row equal to ``finegrain caption-corpus`` (the same fake encoder on both, and the
real Flickr8k test split)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dense_fakes import BagOfWordsEncoder
from finegrain.cli.main import main
from finegrain.diagnose.caption_corpus import build_caption_corpus, run_caption_corpus
from finegrain.diagnose.perturb import PerturbConfig, caption_corpus, run_perturbation
from finegrain.diagnose.perturb.caption_corpus import (
    CAPTION_METRICS,
    encoder_for,
    parse_name,
    rank_table,
    run_caption_perturbation,
)
from finegrain.errors import FinegrainError
from finegrain.retrieve.dense.encoders import registry

ITEMS = [
    ("1.jpg", ["a red dog runs on grass", "dog running grass", "brown dog on a lawn", "dog plays outside"]),
    ("2.jpg", ["a big man surfs a wave", "surfer riding wave", "man with surfboard", "surfing man"]),
    ("3.jpg", ["a small girl rides a white bike", "girl with bicycle", "child riding bike", "bike girl"]),
    ("4.jpg", ["a black dog sits on grass", "black dog", "a dog sitting", "dog on the grass"]),
    ("5.jpg", ["an old man smiles", "elderly man", "man smiling", "a happy old man"]),
]


@pytest.mark.parametrize(("name", "want"), [
    ("caption-corpus:flickr8k/test", ("flickr8k", "test", 0)),
    ("caption-corpus:flickr8k", ("flickr8k", "test", 0)),
    ("caption-corpus:flickr8k/dev#q2", ("flickr8k", "dev", 2)),
    ("caption-corpus:vg100", ("vg100", "all", 0)),
])
def test_names(name: str, want: tuple[str, str, int]) -> None:
    n = parse_name(name)
    assert (n.source, n.split, n.query_index) == want
    assert n.canonical == f"caption-corpus:{want[0]}/{want[1]}#q{want[2]}"


@pytest.mark.parametrize(("name", "message"), [
    ("caption-corpus:coco/test", "unknown caption-corpus source 'coco'"),
    ("caption-corpus:flickr8k#x", "cannot read"),
])
def test_bad_names(name: str, message: str) -> None:
    with pytest.raises(FinegrainError, match=message):
        parse_name(name)


def test_retriever_names_the_encoder_and_only_encoder_options_apply() -> None:
    assert encoder_for("minilm", {"batch_size": 8}) == ("minilm", {"batch_size": 8})
    assert encoder_for("dense", {"encoder": "e5"}) == ("e5", {})
    with pytest.raises(FinegrainError, match="retriever 'bm25-okapi' cannot run it"):
        encoder_for("bm25-okapi", {})
    with pytest.raises(FinegrainError, match="--set lowercase does not apply"):
        encoder_for("minilm", {"lowercase": True})


def test_rank_tables_by_hand() -> None:
    # originals: a rank 1, b rank 3, c rank 2; the family perturbs a (-> 2) and c (-> 2)
    fams = rank_table(["a", "b", "c"], np.array([1, 3, 2]), {"f": (["a", "c"], np.array([2, 2]))},
                      ["recall@1", "mrr", "fail_rate@1"], n_resamples=200)
    e = fams["f"]
    assert e.n_perturbed == 2 and e.share_of_queries == pytest.approx(2 / 3)
    rc = e.rank_change
    assert (rc.lower, rc.same, rc.higher, rc.n) == (1, 1, 0, 2)
    r1 = e.metrics["recall@1"]
    assert (r1.original, r1.perturbed, r1.delta) == (0.5, 0.0, -0.5)
    assert r1.dataset_original == pytest.approx(1 / 3) and r1.dataset_perturbed == 0.0
    mrr = e.metrics["mrr"]  # a: 1 -> 1/2, c: 1/2 -> 1/2
    assert (mrr.original, mrr.perturbed) == (0.75, 0.5)
    assert e.metrics["fail_rate@1"].delta == 0.5
    assert e.best_relevant_rank == {"a": (1, 2), "c": (2, 2)}
    empty = rank_table(["a"], np.array([1]), {"g": ([], np.zeros(0, dtype=np.int64))}, ["recall@1"])["g"]
    assert empty.n_perturbed == 0 and empty.metrics["recall@1"].n == 0


def _cfg(**kw: object) -> PerturbConfig:
    base = {"dataset": "caption-corpus:flickr8k/test", "retriever": "minilm", "metrics": CAPTION_METRICS,
            "n_resamples": 200}
    return PerturbConfig(**{**base, **kw})  # type: ignore[arg-type]


def test_original_row_is_the_plain_protocol_and_each_perturbed_rank_is_the_protocol_rerun() -> None:
    enc = BagOfWordsEncoder(64)
    out = run_caption_perturbation(_cfg(), encoder=enc, items=ITEMS)
    plain = run_caption_corpus(build_caption_corpus(ITEMS), BagOfWordsEncoder(64))
    assert out.results.original == {m: plain.metrics[m] for m in CAPTION_METRICS}
    assert out.results.protocol is not None
    assert out.results.protocol.plain_protocol.to_json() == plain.metrics
    assert out.perturbations, "the fixture has colour, size, antonym words"
    fams = {p.family for p in out.perturbations}
    assert {"color-all", "size", "negation", "typo"} <= fams
    # reference: put the perturbed caption in place of the query and run the whole plain protocol again
    for p in out.perturbations:
        items = [(i, [p.perturbed, *caps[1:]] if i == p.qid else caps) for i, caps in ITEMS]
        again = run_caption_corpus(build_caption_corpus(items), BagOfWordsEncoder(64))
        row = [i for i, _ in ITEMS].index(p.qid)
        got = out.results.families[p.family].best_relevant_rank[p.qid]
        assert got == (int(plain.ranks[row]), int(again.ranks[row])), p


def test_bad_metric_and_retriever_fail_before_any_work() -> None:
    with pytest.raises(FinegrainError, match="ndcg@10"):
        run_caption_perturbation(_cfg(metrics=("ndcg@10",)), encoder=BagOfWordsEncoder(8), items=ITEMS)
    with pytest.raises(FinegrainError, match="bm25"):
        run_perturbation(_cfg(retriever="bm25"))


def test_cli_on_real_flickr8k_reproduces_caption_corpus_r_at_1(with_data_root: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """Flickr8k test (1,000 images) with the fake encoder in place of MiniLM: both commands, one R@1."""
    fake = lambda spec, **kw: BagOfWordsEncoder(256)  # noqa: E731
    monkeypatch.setattr(registry, "get_encoder", fake)  # the caption-corpus command's
    monkeypatch.setattr(caption_corpus, "get_encoder", fake)  # the perturbation's
    monkeypatch.setenv("FINEGRAIN_CACHE", str(tmp_path / "cache"))
    assert main(["caption-corpus", "-d", "flickr8k", "--split", "test", "-o", str(tmp_path / "cc"), "--quiet",
                 "--no-cache"]) == 0
    assert main(["perturb", "--dataset", "caption-corpus:flickr8k/test", "--retriever", "minilm",
                 "--family", "antonym,negation", "--out", str(tmp_path / "p"), "--resamples", "200", "-q"]) == 0
    out = capsys.readouterr().out
    plain = json.loads((tmp_path / "cc" / "results.json").read_text())
    pert = json.loads((tmp_path / "p" / "results.json").read_text())
    assert pert["dataset"] == "caption-corpus:flickr8k/test#q0" == plain["provenance"]["dataset"]["name"]
    assert pert["original"]["recall@1"] == plain["aggregate"]["recall@1"]
    assert pert["protocol"]["plain_protocol"] == plain["aggregate"]
    assert pert["n_queries"] == 1000 and pert["metrics"] == list(CAPTION_METRICS)
    assert pert["families"]["negation"]["n_perturbed"] == 1000
    assert 100 < pert["families"]["antonym"]["n_perturbed"] < 1000
    for text in ("Table 4", "Table 5", "R@1", "Fails %", "antonym", "negation",
                 f"{100 * plain['aggregate']['recall@1']:.2f}"):
        assert text in out, text


@pytest.mark.slow
def test_minilm_flickr8k_test_unperturbed_r_at_1_is_the_plain_protocols(with_data_root: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The real figure: all-MiniLM-L6-v2 on the 1,000 Flickr8k test images (5,000 captions to encode)."""
    pytest.importorskip("sentence_transformers")
    monkeypatch.setenv("FINEGRAIN_CACHE", str(tmp_path / "cache"))
    assert main(["caption-corpus", "-d", "flickr8k", "--split", "test", "-o", str(tmp_path / "cc"), "--quiet"]) == 0
    assert main(["perturb", "--dataset", "caption-corpus:flickr8k/test", "--retriever", "minilm", "--family", "size",
                 "--out", str(tmp_path / "p"), "--resamples", "500", "-q"]) == 0
    plain = json.loads((tmp_path / "cc" / "results.json").read_text())["aggregate"]
    pert = json.loads((tmp_path / "p" / "results.json").read_text())
    assert pert["original"]["recall@1"] == plain["recall@1"] == pytest.approx(0.68)
    assert pert["families"]["size"]["n_perturbed"] == 89
