"""``finegrain eval --split``: the qrels split of a BEIR folder is chosen, or the choice is said aloud."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finegrain.cli.main import main
from finegrain.datasets import load_dataset
from finegrain.errors import FinegrainError
from finegrain.settings import Settings


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    docs = {"d1": "a red cat", "d2": "a blue dog", "d3": "a green bird"}
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in docs.items()))
    queries = {"q1": "red cat", "q2": "blue dog", "q3": "green bird"}
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in queries.items()))
    (folder / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq2\td2\t1\nq3\td3\t1\n")
    return folder


def _eval(folder: Path, out: Path, *extra: str) -> int:
    return main(["eval", "-d", str(folder), "-r", "bm25-okapi", "-m", "ndcg@10", "-o", str(out), "-q", *extra])


def test_split_chooses_the_qrels_and_its_absence_is_said(beir: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert _eval(beir, tmp_path / "dev", "--split", "dev") == 0
    dev = json.loads((tmp_path / "dev" / "results.json").read_text())
    assert list(dev["queries"]) == ["q1"] and dev["provenance"]["dataset"]["qrels_file"].endswith("dev.tsv")
    assert not any("qrels" in w for w in dev["provenance"]["warnings"])
    capsys.readouterr()
    assert _eval(beir, tmp_path / "default") == 0
    err = capsys.readouterr().err
    default = json.loads((tmp_path / "default" / "results.json").read_text())
    assert list(default["queries"]) == ["q2", "q3"]
    assert "warning:" in err and "has qrels dev, test: scored test" in err and "--split" in err


def test_a_missing_split_lists_those_present(beir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert _eval(beir, tmp_path / "x", "--split", "train") != 0
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and "no qrels for split 'train'" in err[0] and "available splits: dev, test" in err[0]
    assert not (tmp_path / "x").exists()


def test_split_on_a_dataset_without_splits_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FinegrainError, match="chooses the qrels file of a BEIR dataset"):
        load_dataset("embedded/captions-en", Settings(data_root=None), split="dev")
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "candidates.jsonl").write_text('{"id": "c1", "text": "a cat"}\n', encoding="utf-8")
    (cap / "queries.jsonl").write_text('{"id": "q1", "query": "cat", "positives": [{"id": "c1", "score": 2}]}\n')
    with pytest.raises(FinegrainError, match="a capretrieval folder"):
        load_dataset(cap, Settings(data_root=None), split="dev")


def test_a_registered_beir_dataset_takes_a_split(with_data_root: Path) -> None:
    ds = load_dataset("dureader/mini")
    with pytest.raises(FinegrainError, match="no qrels for split 'nope'"):
        load_dataset("dureader/mini", split="nope")
    assert ds.meta["qrels_file"]
