"""``finegrain eval --format mteb``: a file the real mteb loads (TaskResult, ResultCache), MTEB's conventions kept.

mteb is part of the ``test`` extra; nothing here reaches the network (the result cache is a
folder under ``tmp_path``, read without its remote).
"""

from __future__ import annotations

import json
import re
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as installed_version
from pathlib import Path

import mteb
import pytest

from finegrain.cli.main import main
from finegrain.datasets import load_dataset
from finegrain.evaluate.evaluate import evaluate
from finegrain.results import mteb as mteb_file
from finegrain.results.saved import SavedResults
from finegrain.types import Qrels, Run

DATASET = "embedded/captions-en"
QRELS = {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}, "q3": {"d4": 1}}
RUN = {"q1": {"d2": 0.9, "d1": 0.8}, "q2": {"d3": 0.5, "d9": 0.7}, "q3": {"d4": 0.1}}


def _saved(metrics: list[str], dataset: dict[str, object] | None = None) -> SavedResults:
    ev = evaluate(Qrels.from_dict(QRELS), Run.from_dict(RUN, name="r"), metrics)
    prov = {"dataset": dataset or {"name": "toy/en", "lang": "en"}, "retriever": {"name": "r"}}
    return SavedResults.from_evaluation(ev, provenance=prov)


def _eval(tmp_path: Path, *extra: str, metrics: str = "ndcg@1,recall@10,ndcg@10") -> Path:
    out = tmp_path / "out"
    assert main(["eval", "-d", DATASET, "-r", "bm25-okapi", "-m", metrics, "-o", str(out), "-q", *extra]) == 0
    return out


def test_the_file_loads_in_mteb_with_ndcg10_as_main_score(tmp_path: Path) -> None:
    out = _eval(tmp_path, "--format", "mteb")
    result = mteb.TaskResult.from_disk(out / "mteb.json")
    saved = SavedResults.load(out)
    assert result.get_score() == pytest.approx(saved.aggregate["ndcg@10"])  # not ndcg@1, the first -m
    assert saved.aggregate["ndcg@10"] != saved.aggregate["ndcg@1"]
    assert result.task_name == "EmbeddedCaptionsEn" and re.fullmatch(r"[A-Za-z0-9]+", result.task_name)
    assert result.dataset_revision == f"finegrain-{saved.provenance['finegrain_version']}"
    assert result.mteb_version == installed_version("mteb")
    entry = result.scores["test"][0]
    assert entry["finegrain_dataset"] == DATASET and entry["languages"] == ["eng-Latn"]
    assert entry["ndcg_at_1"] == pytest.approx(saved.aggregate["ndcg@1"])
    back = SavedResults.load(out / "mteb.json")  # finegrain reads it back under the finegrain name
    assert back.dataset_name == DATASET and back.retriever_name == "bm25-okapi"


def test_mteb_layout_is_read_by_the_result_cache(tmp_path: Path) -> None:
    out = _eval(tmp_path, "--mteb-layout")
    path = out / "results" / "finegrain__bm25-okapi" / "no_revision_available" / "EmbeddedCaptionsEn.json"
    assert path.is_file() and not (out / "mteb.json").exists()
    cache = mteb.ResultCache(cache_path=out)
    loaded = cache.load_results(require_model_meta=False, include_remote=False)
    [model] = loaded.model_results
    assert (model.model_name, model.model_revision) == ("finegrain/bm25-okapi", "no_revision_available")
    [task] = model.task_results
    assert task.task_name == "EmbeddedCaptionsEn"
    assert task.get_score() == pytest.approx(SavedResults.load(out).aggregate["ndcg@10"])


def test_without_ndcg10_the_main_score_says_which_metric_it_is(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    body = mteb_file.to_mteb_json(_saved(["recall@10", "mrr@10"]))
    entry = body["scores"]["test"][0]
    assert entry["main_score"] == entry["recall_at_10"] and body["finegrain"]["main_metric"] == "recall@10"
    assert "ndcg@10" in body["finegrain"]["main_metric_note"]
    with_it = mteb_file.to_mteb_json(_saved(["recall@10", "ndcg@10"]))
    assert with_it["scores"]["test"][0]["main_score"] == with_it["scores"]["test"][0]["ndcg_at_10"]
    assert "main_metric_note" not in with_it["finegrain"]
    capsys.readouterr()
    out = _eval(tmp_path, "--format", "mteb", metrics="recall@10")
    err = capsys.readouterr().err
    assert "main_score is recall@10" in err and "-m ndcg@10" in err
    assert mteb.TaskResult.from_disk(out / "mteb.json").get_score() == pytest.approx(
        SavedResults.load(out).aggregate["recall@10"])


def test_mteb_version_falls_back_to_the_layout_version(monkeypatch: pytest.MonkeyPatch) -> None:
    assert mteb_file.mteb_version() == installed_version("mteb")

    def missing(name: str) -> str:
        raise PackageNotFoundError(name)

    monkeypatch.setattr(mteb_file, "version", missing)
    assert mteb_file.to_mteb_json(_saved(["ndcg@10"]))["mteb_version"] == mteb_file.MTEB_LAYOUT_VERSION


@pytest.mark.parametrize(("dataset", "task", "revision"), [
    ({"name": "capretrieval/en", "mteb_task": "CapRetrievalEn", "revision": "e055902"}, "CapRetrievalEn", "e055902"),
    ({"name": "embedded/captions-zh"}, "EmbeddedCaptionsZh", "no_revision_available"),
    ({"name": "/data/beir/sci-fact"}, "SciFact", "no_revision_available"),
    ({"name": "irds:beir/scifact/test"}, "IrdsBeirScifactTest", "no_revision_available"),
])
def test_task_name_and_revision(dataset: dict[str, object], task: str, revision: str) -> None:
    body = mteb_file.to_mteb_json(_saved(["ndcg@10"], dataset))
    assert (body["task_name"], body["dataset_revision"]) == (task, revision)
    assert body["scores"]["test"][0]["finegrain_dataset"] == dataset["name"]
    assert body["scores"]["test"][0]["languages"] == ["und"]  # no language recorded: undetermined, never empty
    assert mteb.TaskResult.from_dict(body).get_score() == pytest.approx(body["scores"]["test"][0]["ndcg_at_10"])


def test_registered_datasets_carry_their_mteb_name_and_revision(with_data_root: Path) -> None:
    for name, task in (("capretrieval/zh", "CapRetrieval"), ("capretrieval/en", "CapRetrievalEn")):
        meta = load_dataset(name).meta
        assert (meta["mteb_task"], meta["revision"]) == (task, "e055902")


def test_an_earlier_mteb_file_does_not_outlive_a_new_eval(tmp_path: Path) -> None:
    out = _eval(tmp_path, "--format", "mteb")
    before = json.loads((out / "mteb.json").read_text())
    assert before["scores"]["test"][0]["ndcg_at_10"] is not None
    _eval(tmp_path, metrics="recall@10")
    assert not (out / "mteb.json").exists()
