"""finegrain.build.triage and ``finegrain triage``: suspected false negatives, ranked by their evidence.

The tiny case plants one false negative (an unjudged passage both runs rank
first, holding the query's words, close to the known positive) among other
pooled passages; it must come first, and its score and the others' are
computed by hand from the percentile rule. The real-data case hides labels of
CapRetrieval and checks that the triage's head holds far more of them than
the candidates do on average.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from dense_fakes import BagOfWordsEncoder
from finegrain.build.pool_file import read_pool
from finegrain.build.triage import FEATURES, evidence_path, triage, write_triage
from finegrain.cli.main import main
from finegrain.compare.relabel import hide_relevant
from finegrain.datasets import load_dataset
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.io.trec import write_qrels
from finegrain.retrieve.registry import get_retriever
from finegrain.types import Corpus, Document, Qrels, Queries, Query, Run

DOCS = {
    "d1": "a red car parked on the street",  # the known positive
    "d2": "a red car driving on the street",  # the planted false negative: unjudged
    "d3": "a blue bicycle",
    "d4": "a green tree in a park",
    "d5": "a cat",  # judged irrelevant
}
QRELS = {"q1": {"d1": 2, "d5": 0}}
RUN_A = {"q1": {"d2": 4.0, "d1": 3.0, "d3": 2.0, "d5": 1.0}}
RUN_B = {"q1": {"d2": 4.0, "d4": 3.0, "d1": 2.0, "d5": 1.0}}


def _case(docs: dict[str, str] = DOCS) -> tuple[list[Run], Qrels, Corpus, Queries]:
    corpus = Corpus([Document(d, t) for d, t in docs.items()])
    queries = Queries([Query("q1", "red car"), Query("q2", "green tree")])
    return ([Run.from_dict(RUN_A, name="A"), Run.from_dict(RUN_B, name="B")], Qrels.from_dict(QRELS), corpus,
            queries)


def test_the_planted_false_negative_comes_first_with_all_evidence() -> None:
    runs, qrels, corpus, queries = _case()
    tri = triage(runs, qrels, corpus, queries, lang="en", encoder=BagOfWordsEncoder(), cache=False)
    first = tri.suspects[0]
    assert (first.qid, first.doc_id, first.grade) == ("q1", "d2", None)
    assert first.n_systems == 2 and first.best_rank == 1 and first.systems == ("A", "B")
    assert first.nearest_positive == "d1" and first.n_known_positives == 1
    assert first.features["query_terms"] == 1.0 and first.features["agreement"] == 1.0
    # d2 is the strongest candidate on every feature; on agreement it ties with d5 (both runs): average rank 3.5 of 4
    assert math.isclose(first.score, (2.5 / 3 + 5 * 1.0) / 6)
    assert {s.doc_id for s in tri.suspects} == {"d2", "d3", "d4", "d5"}  # the positive d1 is no candidate
    assert tri.n_pooled == 5 and tri.n_candidates == 4 and tri.encoder == "fake/bow-256"


def test_scores_by_hand_on_the_systems_evidence_alone() -> None:
    runs, qrels, corpus, queries = _case()
    tri = triage(runs, qrels, corpus, queries, lang="en", encoder=None, weights={"agreement": 1, "rank": 1})
    # agreement d2 1, d3 1/2, d4 1/2, d5 1 -> percentiles 2.5/3, 0.5/3, 0.5/3, 2.5/3 (average ranks of ties)
    # rank 1/log2(1+best): best ranks 1, 3, 2, 4 -> percentiles 1, 1/3, 2/3, 0
    expected = {"d2": (2.5 / 3 + 1) / 2, "d3": (0.5 / 3 + 1 / 3) / 2, "d4": (0.5 / 3 + 2 / 3) / 2, "d5": (2.5 / 3) / 2}
    got = {s.doc_id: s.score for s in tri.suspects}
    assert got.keys() == expected.keys() and all(math.isclose(got[d], v) for d, v in expected.items())
    # d4 and d5 tie at 5/12: the better best rank (d4: 2) goes first
    assert [s.doc_id for s in tri.suspects] == ["d2", "d4", "d5", "d3"]
    only = triage(runs, qrels, corpus, queries, lang="en", encoder=None, weights={"agreement": 1, "rank": 1},
                  include_judged=False)
    assert [(s.doc_id, round(s.score, 6)) for s in only.suspects] == [("d2", 1.0), ("d4", 0.375), ("d3", 0.125)]
    assert [s.doc_id for s in triage(runs, qrels, corpus, queries, lang="en", encoder=None, top=2)] == ["d2", "d4"]


def test_without_encoder_or_known_positive_the_evidence_says_so() -> None:
    runs, _, corpus, queries = _case()
    qrels = Qrels.from_dict({"q1": {"d5": 0}})  # no known positive
    tri = triage(runs, qrels, corpus, queries, lang="en", encoder=None)
    assert tri.encoder is None and tri.suspects[0].doc_id == "d2"
    for s in tri.suspects:
        assert s.features["positive_terms"] is None and s.features["query_cosine"] is None
        assert s.nearest_positive is None and s.n_known_positives == 0
    assert any("no encoder" in n for n in tri.notes) and any("no known positive" in n for n in tri.notes)


def test_the_same_suspects_whatever_the_input_order() -> None:
    runs, qrels, corpus, queries = _case()
    a = triage(runs, qrels, corpus, queries, lang="en", encoder=BagOfWordsEncoder(), cache=False)
    shuffled = Corpus([corpus[d] for d in reversed(list(corpus))])
    b = triage({"A": runs[0], "B": runs[1]}, qrels, shuffled, queries, lang="en", encoder=BagOfWordsEncoder(),
               cache=False)
    assert a.evidence_rows() == b.evidence_rows()


def test_runs_over_different_query_sets_are_pooled_with_empty_entries() -> None:
    runs, qrels, corpus, queries = _case()
    other = Run.from_dict({**RUN_B, "q2": {"d4": 1.0}}, name="B")  # A has no entry for q2 (no TREC line)
    tri = triage([runs[0], other], qrels, corpus, queries, lang="en", encoder=None)
    q2 = [s for s in tri if s.qid == "q2"]
    assert [(s.doc_id, s.systems, s.n_known_positives) for s in q2] == [("d4", ("B",), 0)]


def test_pool_file_round_trip_with_the_evidence_beside_it(tmp_path: Path) -> None:
    runs, qrels, corpus, queries = _case()
    tri = triage(runs, qrels, corpus, queries, lang="en", encoder=BagOfWordsEncoder(), cache=False, dataset="toy")
    pool_path, side = write_triage(tri, tmp_path / "triage.jsonl.gz")
    assert side == evidence_path(pool_path) == tmp_path / "triage.evidence.jsonl"
    pool = read_pool(pool_path)
    assert [(it.qid, it.doc_id, it.order) for it in pool.items] == [(s.qid, s.doc_id, i) for i, s in enumerate(tri)]
    assert pool.item("q1", "d5").grade == 0 and pool.item("q1", "d2").grade is None
    assert pool.systems == ("A", "B") and pool.dataset == "toy" and pool.lang == "en" and pool.depth == 10
    assert pool.queries == {"q1": "red car"} and pool.texts["d2"] == DOCS["d2"] and "d1" not in pool.texts
    method = pool.provenance["triage"]
    assert method["weights"] == {f: 1.0 for f in FEATURES} and method["evidence_file"] == side.name
    lines = [json.loads(x) for x in side.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["schema"] == "finegrain.triage/1"
    assert [r["doc_id"] for r in lines[1:]] == [s.doc_id for s in tri]
    assert set(FEATURES) <= set(lines[1]) and lines[1]["nearest_positive"] == "d1"


def test_bad_input_is_one_clear_error() -> None:
    runs, qrels, corpus, queries = _case()
    with pytest.raises(FinegrainError, match="qrels judge 1 query that are not among the 2 queries .*'q9'"):
        triage(runs, Qrels.from_dict({"q9": {"d1": 1}}), corpus, queries, lang="en", encoder=None)
    with pytest.raises(FinegrainError, match=r"unknown grade 7 in the qrels \(query 'q1', document 'd1'\)"):
        triage(runs, Qrels.from_dict({"q1": {"d1": 7}}), corpus, queries, lang="en", encoder=None)
    assert triage(runs, Qrels.from_dict({"q1": {"d1": 7}}), corpus, queries, lang="en", encoder=None,
                  grades=(0, 7)).suspects
    with pytest.raises(FinegrainError, match="run 'A' has 1 queries that are not among the queries"):
        triage([Run.from_dict({"zz": {"d1": 1.0}}, name="A")], qrels, corpus, queries, lang="en", encoder=None)
    with pytest.raises(FinegrainError, match="corpus does not have"):
        triage(runs, qrels, Corpus([Document("d1", "x")]), queries, lang="en", encoder=None)
    with pytest.raises(FinegrainError, match="depth must be an integer >= 1"):
        triage(runs, qrels, corpus, queries, lang="en", encoder=None, depth=0)
    with pytest.raises(UnknownNameError, match="did you mean 'agreement'"):
        triage(runs, qrels, corpus, queries, lang="en", encoder=None, weights={"agreemnt": 1})
    with pytest.raises(FinegrainError, match="two runs are named 'A'"):
        triage([runs[0], runs[0]], qrels, corpus, queries, lang="en", encoder=None)
    with pytest.raises(UnknownNameError, match="unknown encoder 'e6'"):
        triage(runs, qrels, corpus, queries, lang="en", encoder="e6")


# --------------------------------------------------------------------------- the CLI


def _eval(tmp_path: Path, retriever: str) -> Path:
    out = tmp_path / retriever
    assert main(["eval", "-d", "embedded/captions-en", "-r", retriever, "-m", "ndcg@10", "-o", str(out), "-q"]) == 0
    return out


def test_cli_writes_a_pool_the_judging_page_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dirs = [str(_eval(tmp_path, r)) for r in ("bm25-okapi", "bm25")]
    ds = load_dataset("embedded/captions-en")
    holed, hidden = hide_relevant(ds.qrels, 0.3, seed=0)
    write_qrels(holed, tmp_path / "holed.qrels")
    capsys.readouterr()
    out = tmp_path / "suspects.jsonl"
    assert main(["triage", *dirs, "--qrels", str(tmp_path / "holed.qrels"), "--depth", "5", "-k", "20",
                 "-e", "none", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Suspected false negatives" in printed and f"wrote {out}" in printed
    pool = read_pool(out)
    assert len(pool) == 20 and pool.systems == ("bm25-okapi", "bm25") and pool.depth == 5
    assert pool.dataset == "embedded/captions-en" and all(it.grade != 1 for it in pool.items)
    assert evidence_path(out).is_file()
    # qrels of another dataset: one line, non-zero
    write_qrels(Qrels.from_dict({"other-q": {"x": 1}}), tmp_path / "other.qrels")
    assert main(["triage", *dirs, "--qrels", str(tmp_path / "other.qrels"), "-e", "none", "-o", str(out)]) != 0
    err = capsys.readouterr().err
    assert err.startswith("error: the qrels judge 1 query that are not among") and err.count("\n") == 1


# --------------------------------------------------------------------------- real data


def test_capretrieval_bm25_triage_puts_hidden_labels_first(with_data_root: Path) -> None:
    ds = load_dataset("capretrieval/zh")
    run = get_retriever("bm25-okapi").retrieve(ds.corpus, ds.queries, lang=ds.lang, top_k=10, show_progress=False)
    holed, hidden = hide_relevant(ds.qrels, 0.1, seed=1)
    tri = triage([run], holed, ds.corpus, ds.queries, lang="zh", encoder=None)
    hits = [(s.qid, s.doc_id) in hidden for s in tri]
    base = sum(hits) / len(hits)  # the share of hidden positives among all candidates
    head = sum(hits[:100]) / 100
    assert 0 < base < 0.25 and sum(hits) == sum(1 for q, d in hidden if d in run.ranked(q, 10))
    assert head >= 2 * base, (head, base)
