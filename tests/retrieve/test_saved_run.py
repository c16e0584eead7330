"""The ``run`` retriever: a saved run served by query id, cut to top_k, refused over another corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from finegrain.errors import FinegrainError
from finegrain.retrieve.registry import get_retriever
from finegrain.types import Corpus, Document, Queries, Query, Run

CORPUS = Corpus(Document(f"d{i}", f"passage {i}") for i in range(5))
QUERIES = Queries([Query("q1", "one"), Query("q2", "two"), Query("q3", "three")])


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    path = tmp_path / "run.trec"
    Run.from_dict({"q1": {"d0": 0.1, "d3": 0.9, "d4": 0.5}, "q2": {"d1": 2.0}}, name="elsewhere").save(path)
    return path


def test_it_serves_the_saved_rankings_by_query_id_cut_to_top_k(saved: Path) -> None:
    run = get_retriever("run", path=str(saved)).retrieve(CORPUS, QUERIES, lang="en", top_k=2)
    assert run.ranked("q1") == ["d3", "d4"] and dict(run["q1"]) == {"d3": 0.9, "d4": 0.5}
    assert run.ranked("q2") == ["d1"]
    assert "q3" in run and run.ranked("q3") == []  # a query the run lacks: found nothing, not an error
    assert run.name == "elsewhere"


def test_it_is_a_part_of_hybrid(saved: Path) -> None:
    alone = get_retriever("run", path=str(saved)).retrieve(CORPUS, QUERIES, lang="en", top_k=None)
    fused = get_retriever("hybrid", parts=["run"], **{"run.path": str(saved)}).retrieve(
        CORPUS, QUERIES, lang="en", top_k=None)
    assert fused.ranked("q1") == alone.ranked("q1")


def test_a_run_over_another_corpus_is_refused(saved: Path) -> None:
    small = Corpus(Document(f"d{i}", "x") for i in range(3))
    with pytest.raises(FinegrainError, match=r"ranks document 'd3'.*corpus does not hold"):
        get_retriever("run", path=str(saved)).retrieve(small, QUERIES, lang="en", top_k=None)


def test_a_missing_path_is_one_clear_error() -> None:
    with pytest.raises(FinegrainError, match="no such run file"):  # refused before any work
        get_retriever("run", path="/nonexistent/run.trec")
    with pytest.raises(FinegrainError, match="needs the saved run's file"):  # buildable, but ranks nothing
        get_retriever("run").retrieve(CORPUS, QUERIES, lang="en", top_k=None)


def test_its_config_names_the_file_and_its_hash(saved: Path) -> None:
    config = get_retriever("run", path=str(saved)).config()
    assert config["path"] == str(saved) and len(config["sha256"]) == 64


def test_the_hash_is_taken_once_and_a_file_changed_afterwards_is_refused(saved: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    retriever = get_retriever("run", path=str(saved))
    calls: list[str] = []
    monkeypatch.setattr("finegrain.retrieve.saved.sha256_of", lambda p: calls.append(str(p)) or "x")
    first = retriever.config()
    assert retriever.config() == first and calls == []  # config() reads no file
    monkeypatch.undo()
    Run.from_dict({"q1": {"d0": 5.0}}, name="other").save(saved)  # another run under the same name
    with pytest.raises(FinegrainError, match="changed after the run retriever was set up"):
        retriever.retrieve(CORPUS, QUERIES, lang="en", top_k=None)
