"""``load_dataset("irds:ID")``: a small ir_datasets dataset built from local files in the test; nothing is downloaded."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest

from finegrain import evaluate, load_dataset
from finegrain.errors import FinegrainError, UnknownNameError

ir_datasets = pytest.importorskip("ir_datasets")

_COUNTER = itertools.count()


@pytest.fixture
def irds_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "home"))
    return tmp_path


def _register(folder: Path, components: list) -> str:
    # ir_datasets' registry refuses a name twice, and lives as long as the process: one fresh name per test
    name = f"finegrain-test/local-{next(_COUNTER)}"
    ir_datasets.registry.register(name, ir_datasets.Dataset(*components))
    return name


def _local(folder: Path) -> list:
    from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    (folder / "docs.tsv").write_text("d1\ta red apple pie\nd2\tgreen tea in a cup\nd3\tblue sky over the sea\n")
    (folder / "queries.tsv").write_text("q1\tapple pie\nq2\ttea\n")
    (folder / "qrels.txt").write_text("q1 0 d1 2\nq1 0 d2 0\nq2 0 d2 1\n")
    return [TsvDocs(LocalDownload(folder / "docs.tsv")), TsvQueries(LocalDownload(folder / "queries.tsv")),
            TrecQrels(LocalDownload(folder / "qrels.txt"), {0: "not relevant", 1: "relevant", 2: "very"})]


def test_a_local_ir_datasets_dataset_round_trips(irds_home: Path) -> None:
    name = _register(irds_home, _local(irds_home))
    ds = load_dataset(f"irds:{name}")
    assert ds.name == f"irds:{name}" and ds.meta["format"] == "ir_datasets"
    assert ds.lang == "en"  # TsvQueries declares none: detected from the (Latin) query texts
    assert list(ds.corpus) == ["d1", "d2", "d3"] and ds.corpus["d2"].text == "green tea in a cup"
    assert {q: ds.queries[q].text for q in ds.queries} == {"q1": "apple pie", "q2": "tea"}
    assert ds.qrels.to_dict() == {"q1": {"d1": 2, "d2": 0}, "q2": {"d2": 1}}
    # and it evaluates like any dataset: the qrels straight from ir_datasets' own iterator agree
    run = {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d2": 1.0}}
    a = evaluate(ds.qrels, run, "ndcg@10")
    b = evaluate(list(ir_datasets.load(name).qrels_iter()), run, "ndcg@10")
    # q1: d2 (0) then d1 (2): DCG 2/log2(3) = 1.26186, ideal 2 -> 0.63093; q2: 1 -> mean 0.815465
    assert a.mean("ndcg@10") == pytest.approx((1 / math.log2(3) + 1) / 2)
    assert a.per_query("ndcg@10") == b.per_query("ndcg@10")


def test_titles_are_kept_apart_from_text(irds_home: Path) -> None:
    from ir_datasets.formats import BaseDocs

    local = _local(irds_home)

    class TitledDocs(BaseDocs):  # a BEIR-like document with title and text fields
        def docs_iter(self):  # type: ignore[no-untyped-def]
            from typing import NamedTuple

            class Doc(NamedTuple):
                doc_id: str
                text: str
                title: str

            yield Doc("d1", "body one", "Title One")

        def docs_cls(self):  # type: ignore[no-untyped-def]
            return tuple

    name = _register(irds_home, [TitledDocs(), local[1], local[2]])
    doc = load_dataset(f"irds:{name}").corpus["d1"]
    assert (doc.title, doc.text) == ("Title One", "body one")


def test_a_dataset_not_on_disk_fails_at_once_saying_how_to_download(irds_home: Path) -> None:
    from ir_datasets.formats import TsvDocs
    from ir_datasets.util import Download, RequestsDownload

    local = _local(irds_home)
    # documents that would come from the network (a port nothing listens on: even a real fetch could not succeed)
    remote = TsvDocs(Download([RequestsDownload("http://127.0.0.1:9/docs.tsv")], cache_path=str(irds_home / "x.tsv")))
    name = _register(irds_home, [remote, local[1], local[2]])
    with pytest.raises(FinegrainError, match=r"is not on disk \(reading it would download http://127.0.0.1:9/docs.tsv") as e:
        load_dataset(f"irds:{name}")
    assert f"python -m ir_datasets export {name} docs" in str(e.value.hint)
    # the network sources are switched back on afterwards
    assert RequestsDownload.stream.__qualname__ == "RequestsDownload.stream"


def test_unknown_and_incomplete_datasets(irds_home: Path) -> None:
    with pytest.raises(UnknownNameError, match="unknown ir_datasets dataset 'beir/scifakt/test'") as e:
        load_dataset("irds:beir/scifakt/test")
    assert "beir/scifact/test" in e.value.suggestions
    local = _local(irds_home)
    name = _register(irds_home, [local[0], local[1]])  # no qrels
    with pytest.raises(FinegrainError, match="has no qrels"):
        load_dataset(f"irds:{name}")
