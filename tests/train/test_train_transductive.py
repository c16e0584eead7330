"""The transductive flag flows pool -> pairs provenance -> training provenance -> results.json, eval title, report.

``gen-queries --pool-from-eval-corpus DIR`` on a tiny BEIR folder (passages only) marks the pairs;
test_train_finetune's tiny random BERT trained on them carries the mark into
``finegrain_training.json``; ``finegrain eval`` of that model on the same dataset marks
results.json, the printed title and a warning, and ``finegrain report`` tags the system. The
untrained base model on the same dataset, and pairs from a plain file, are not marked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_train_finetune import tiny_st  # noqa: F401 - the tiny random BERT fixture, shared

from finegrain.cli.main import main

COLOURS = ["red", "blue", "green", "black", "white", "brown"]
ANIMALS = ["dog", "cat", "horse", "bird"]


@pytest.fixture(scope="module")
def beir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """24 passages 'a COLOUR ANIMAL runs on the grass', two queries, a qrels file."""
    d = tmp_path_factory.mktemp("beir") / "toy"
    (d / "qrels").mkdir(parents=True)
    docs = {f"d{i}": f"a {c} {a} runs on the grass near the house" for i, (c, a) in
            enumerate((c, a) for c in COLOURS for a in ANIMALS)}
    (d / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in docs.items()))
    (d / "queries.jsonl").write_text('{"_id": "q1", "text": "secret query red dog"}\n'
                                     '{"_id": "q2", "text": "secret query blue cat"}\n')
    (d / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td0\t1\nq2\td5\t1\n")
    return d


def _eval(beir: Path, encoder: str, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    code = main(["eval", "-d", str(beir), "-r", "dense", "--set", f"encoder={encoder}", "--set", "cache=false",
                 "-m", "ndcg@10", "-o", str(out), "-q"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads((out / "results.json").read_text()), captured.out + captured.err


def test_the_flag_flows_from_the_pool_to_the_report(
    beir: Path, tiny_st: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = tmp_path / "pairs.jsonl"
    assert main(["gen-queries", "--pool-from-eval-corpus", str(beir), "--style", "both", "-l", "en",
                 "-o", str(pairs)]) == 0
    assert "TRANSDUCTIVE" in capsys.readouterr().out
    prov = json.loads((tmp_path / "pairs.jsonl.provenance.json").read_text())
    dataset = prov["transductive_dataset"]
    assert prov["transductive"] is True and dataset and prov["pool_passages"] == 24
    corpus = {json.loads(x)["text"] for x in (beir / "corpus.jsonl").read_text().splitlines()}
    records = [json.loads(x) for x in pairs.read_text().splitlines()]
    assert records and all(r["passage"] in corpus and "secret" not in r["query"] for r in records)  # no queries

    model = tmp_path / "model"
    assert main(["train", "--base", f"st:{tiny_st}", "--pairs", str(pairs), "-o", str(model),
                 "--steps", "2", "--batch-size", "8", "-q"]) == 0
    assert f"TRANSDUCTIVE: trained on the passages of {dataset}" in capsys.readouterr().out
    training = json.loads((model / "finegrain_training.json").read_text())
    assert training["transductive"] is True and training["transductive_dataset"] == dataset

    trained, printed = _eval(beir, f"st:{model}", tmp_path / "eval-trained", capsys)
    assert trained["provenance"]["transductive"] == {"dataset": dataset, "models": [str(model.resolve())]}
    assert "TRANSDUCTIVE" in printed and "not zero-shot" in printed
    base, printed = _eval(beir, f"st:{tiny_st}", tmp_path / "eval-base", capsys)
    assert "transductive" not in base["provenance"] and "TRANSDUCTIVE" not in printed

    html = tmp_path / "report.html"
    assert main(["report", str(tmp_path / "eval-base"), str(tmp_path / "eval-trained"), "-o", str(html)]) == 0
    page = html.read_text()
    assert page.count('<span class="tag" title="trained on this dataset') == 1


def test_a_file_pool_is_not_transductive_and_one_pool_is_required(
    beir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = tmp_path / "p.jsonl"
    assert main(["gen-queries", str(beir / "corpus.jsonl"), "--style", "sm", "-l", "en", "-o", str(pairs)]) == 0
    prov = json.loads((tmp_path / "p.jsonl.provenance.json").read_text())
    assert prov["transductive"] is False and prov["transductive_dataset"] is None
    capsys.readouterr()
    for args in (["--pool-from-eval-corpus", str(beir), str(beir / "corpus.jsonl")], []):
        assert main(["gen-queries", *args, "-l", "en", "-o", str(pairs)]) != 0
        assert "give one pool" in capsys.readouterr().err
    assert main(["gen-queries", "--pool-from-eval-corpus", str(beir / "corpus.jsonl"), "-l", "en",
                 "-o", str(pairs)]) != 0
    assert "needs a dataset" in capsys.readouterr().err
