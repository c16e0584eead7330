"""``finegrain perturb`` end to end on the embedded caption datasets with bm25-okapi."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finegrain.cli.main import main
from finegrain.datasets import load_dataset
from finegrain.evaluate.evaluate import evaluate
from finegrain.retrieve.registry import get_retriever
from finegrain.types import Queries, Query


def _perturb(tmp_path: Path, *args: str) -> tuple[dict, list[dict]]:
    out = tmp_path / "out"
    code = main(["perturb", *args, "--out", str(out), "--quiet", "--resamples", "500"])
    assert code == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    lines = [json.loads(x) for x in (out / "perturbations.jsonl").read_text(encoding="utf-8").splitlines()]
    assert (out / "tables.md").read_text(encoding="utf-8").startswith("## ")
    return results, lines


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_cli_writes_the_out_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lang: str) -> None:
    monkeypatch.setenv("FINEGRAIN_DATA", str(tmp_path / "nowhere"))
    name = f"embedded/captions-{lang}"
    res, lines = _perturb(tmp_path, "--dataset", name, "--retriever", "bm25-okapi",
                          "--family", "color-in,typo", "--family", "negation", "--metrics", "ndcg@10,mrr")
    assert list(res["families"]) == ["color-in", "negation", "typo"]
    assert res["metrics"] == ["ndcg@10", "mrr"]
    for fam, e in res["families"].items():
        assert e["n_perturbed"] == sum(1 for x in lines if x["family"] == fam) > 0
        rc = e["rank_change"]
        assert rc["lower"] + rc["higher"] + rc["same"] == rc["n"] == e["n_perturbed"] - rc["n_no_relevant"]
    for x in lines:
        assert {"qid", "original", "perturbed", "word", "replacement", "family"} <= set(x)
        assert x["perturbed"] != x["original"]

    # independent check: retrieve the originals and one family's perturbed texts separately, score with the qrels
    ds = load_dataset(name)
    bm25 = get_retriever("bm25-okapi")
    plain = evaluate(ds.qrels, bm25.retrieve(ds.corpus, ds.queries, lang=lang, top_k=None, show_progress=False),
                     ["ndcg@10", "mrr"], queries=list(ds.queries))
    assert res["original"]["ndcg@10"] == pytest.approx(plain["ndcg@10"].value)
    neg = [x for x in lines if x["family"] == "negation"]
    pert_q = Queries(Query(x["qid"], x["perturbed"]) for x in neg)
    pert_run = bm25.retrieve(ds.corpus, pert_q, lang=lang, top_k=None, show_progress=False)
    pert = evaluate(ds.qrels, pert_run, ["ndcg@10"], queries=[x["qid"] for x in neg])
    cell = res["families"]["negation"]["metrics"]["ndcg@10"]
    assert cell["perturbed"] == pytest.approx(pert["ndcg@10"].value)
    assert cell["original"] == pytest.approx(plain["ndcg@10"].value_over({x["qid"] for x in neg})[0])
    assert cell["ci_low"] <= cell["delta"] <= cell["ci_high"]


def test_cli_unknown_family_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["perturb", "--dataset", "embedded/captions-en", "--retriever", "bm25-okapi",
                 "--family", "antonym,colour", "--out", str(tmp_path / "o"), "--quiet"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown perturbation family 'colour'") and "color-all" in err
    assert not (tmp_path / "o").exists()


def test_cli_refuses_a_non_mean_metric(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["perturb", "--dataset", "embedded/captions-en", "--retriever", "bm25-okapi",
                 "--metrics", "median_rank", "--out", str(tmp_path / "o"), "--quiet"])
    assert code == 2
    assert "not a mean over queries" in capsys.readouterr().err
