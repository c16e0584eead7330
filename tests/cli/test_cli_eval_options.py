"""``finegrain eval``'s cross-validation options (``--cv K --cv-metric M --seed S``); ``--no-cache`` on eval and perturb."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dense_fakes import BagOfWordsEncoder
from finegrain.cli.eval_cmd import cv_spec
from finegrain.cli.main import main
from finegrain.errors import FinegrainError
from finegrain.registry import Entry, Param
from finegrain.retrieve import registry
from finegrain.retrieve.dense.retriever import DenseRetriever
from finegrain.retrieve.registry import get_retriever, without_cache


def test_cv_k_with_cv_metric_and_seed_is_the_spec_run_experiment_reads(capsys: pytest.CaptureFixture[str]) -> None:
    assert cv_spec(None, None, None) is None
    assert cv_spec("5", None, None) == "5,seed=0"
    assert cv_spec("3", "Recall@100", 2) == "3,metric=recall@100,seed=2"
    assert capsys.readouterr().err == ""
    # the retired K,metric=M,seed=S: the same spec, and one warning with the spelling to write
    assert cv_spec("3,metric=recall@100,seed=2", None, None) == "3,metric=recall@100,seed=2"
    assert capsys.readouterr().err.splitlines() == [
        "warning: --cv K,metric=M,seed=S is retired, write --cv 3 --cv-metric recall@100 --seed 2 "
        "(--cv K,metric=M,seed=S stops working in the next release)"]
    for args, needle in ((("x", None, None), "not a whole number"), (("1", None, None), "fewer than 2 folds"),
                         ((None, "ndcg@10", None), "--cv-metric goes with --cv"),
                         ((None, None, 3), "--seed goes with --cv"),
                         (("5,metric=ndcg@10", None, 1), "--seed too"),
                         (("5", "nope@3", None), "unknown metric")):
        with pytest.raises(FinegrainError, match=needle):
            cv_spec(*args)


def test_without_cache_reaches_every_part_and_first_stage() -> None:
    assert without_cache("bm25-okapi", {}) == {}
    assert without_cache("e5", {}) == {"cache": False}
    assert without_cache("hybrid-sparse", {}) == {"e5.cache": False, "e5-sparse.cache": False}
    deep = without_cache("hybrid-use-k10-coverage", {})  # coverage caches nothing; its first stage's parts do
    assert deep == {f"hybrid-use-k10.{p}.cache": False for p in ("e5", "e5-sparse", "use-m3")}
    assert without_cache("rerank", {"scorer": "e5"})["cache"] is False
    built = get_retriever("rerank", **without_cache("rerank", {"first_stage": "hybrid-sparse", "scorer": "e5"}))
    assert built.reranker.cache is False  # type: ignore[attr-defined]
    assert [getattr(p, "cache", None) for p in built.first_stage.parts] == [None, False, False]  # type: ignore[attr-defined]
    with pytest.raises(FinegrainError, match="disagree"):
        without_cache("e5", {"cache": True})


@pytest.fixture
def fake_bow(monkeypatch: pytest.MonkeyPatch) -> None:
    """``fake-bow``: a dense retriever over the bag-of-words fake, with the dense retrievers' cache options."""
    params = {"cache": Param(bool, True), "cache_dir": Param(str, None, nullable=True)}
    monkeypatch.setitem(registry.RETRIEVERS._entries, "fake-bow", Entry(
        "fake-bow", lambda **kw: DenseRetriever(name="fake-bow", encoder=BagOfWordsEncoder(), **kw), params))


@pytest.mark.parametrize("retriever", [["-r", "fake-bow"], ["-r", "hybrid", "--set", "parts=bm25-okapi,fake-bow"]])
def test_eval_no_cache_reads_and_writes_no_embedding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_bow: None,
                                                     retriever: list[str]) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("FINEGRAIN_CACHE", str(cache))
    args = ["eval", "-d", "embedded/captions-en", *retriever, "-m", "ndcg@10", "-q"]
    assert main([*args, "--no-cache", "-o", str(tmp_path / "off")]) == 0
    assert not list(cache.rglob("*.npy"))
    saved = json.loads((tmp_path / "off" / "results.json").read_text(encoding="utf-8"))["provenance"]["retriever"]
    dense = saved if "parts" not in saved else saved["parts"][1]
    assert dense["cache"] is False and dense["last_retrieval"]["cached"] is False
    assert main([*args, "-o", str(tmp_path / "on")]) == 0
    assert list(cache.rglob("*.npy")), "without --no-cache the same run fills the cache"
    off = (tmp_path / "off" / "run.trec").read_text()
    assert off == (tmp_path / "on" / "run.trec").read_text()


def test_perturb_no_cache_reads_and_writes_no_embedding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        fake_bow: None) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("FINEGRAIN_CACHE", str(cache))
    args = ["perturb", "-d", "embedded/captions-en", "-r", "fake-bow", "-f", "negation", "--resamples", "50", "-q"]
    assert main([*args, "--no-cache", "-o", str(tmp_path / "off")]) == 0
    assert not list(cache.rglob("*.npy"))
    assert main([*args, "-o", str(tmp_path / "on")]) == 0
    assert list(cache.rglob("*.npy")), "without --no-cache the same run fills the cache"
