"""Reranking: the pure step with a fake reranker, a tiny random cross-encoder built here, and the CLI."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from finegrain.cli.main import main
from finegrain.datasets import load_dataset
from finegrain.errors import FinegrainError, MissingDependencyError
from finegrain.io.trec import read_run
from finegrain.retrieve.base import Retriever
from finegrain.retrieve.registry import get_retriever
from finegrain.retrieve.rerank.cross_encoder import CrossEncoderReranker, Reranker
from finegrain.retrieve.rerank.retriever import RerankRetriever, rerank, rerank_retriever
from finegrain.types import Run


@pytest.fixture(scope="module")
def captions():
    return load_dataset("embedded/captions-en")


@pytest.fixture(scope="module")
def bm25_run(captions) -> Run:
    return get_retriever("bm25-okapi").retrieve(captions.corpus, captions.queries, lang="en", top_k=None, show_progress=False)


class LengthReranker:
    """Deterministic fake: the shorter the passage, the higher the score (ties on equal length)."""

    name = "length"

    def config(self) -> dict:
        return {}

    def score(self, query: str, passages: list[str]) -> np.ndarray:
        return -np.asarray([len(p) for p in passages], dtype=np.float64)


# --------------------------------------------------------------------------- the pure step (no model)


def test_fake_reranker_satisfies_the_protocol() -> None:
    assert isinstance(LengthReranker(), Reranker)


@pytest.mark.parametrize("depth", [1, 5, 20])
def test_only_the_top_depth_is_reordered(captions, bm25_run: Run, depth: int) -> None:
    out = rerank(bm25_run, captions.queries, captions.corpus, LengthReranker(), depth=depth)
    assert out.qids == bm25_run.qids
    long_enough = [q for q in bm25_run if len(bm25_run[q]) > depth]
    assert long_enough, "the BM25 run has queries longer than the depth"
    for q in bm25_run:
        before, after = bm25_run.ranked(q), out.ranked(q)
        assert sorted(after) == sorted(before)  # rest="append": nothing dropped
        assert set(after[:depth]) == set(before[:depth])
        assert after[depth:] == before[depth:]  # the tail keeps its first-stage order
        head_scores = [out[q][d] for d in after[:depth]]
        want = LengthReranker().score("", [captions.corpus[d].text for d in after[:depth]])
        assert head_scores == sorted(want.tolist(), reverse=True)  # the reranker's scores, ranked
        if len(after) > depth:
            assert max(out[q][d] for d in after[depth:]) < min(head_scores)


def test_rest_drop_keeps_only_the_reranked(captions, bm25_run: Run) -> None:
    out = rerank(bm25_run, captions.queries, captions.corpus, LengthReranker(), depth=3, rest="drop")
    for q in bm25_run:
        assert set(out[q]) == set(bm25_run.ranked(q, 3))


def test_reranker_ties_follow_the_run_rule(captions) -> None:
    class Const:
        name = "const"

        def config(self) -> dict:
            return {}

        def score(self, query: str, passages: list[str]) -> np.ndarray:
            return np.zeros(len(passages))

    first = Run.from_dict({"q01": {"c01": 3.0, "c03": 2.0, "c02": 1.0}}, name="f")
    out = rerank(first, captions.queries, captions.corpus, Const(), depth=3)
    assert out.ranked("q01") == ["c03", "c02", "c01"]


def test_rerank_errors_name_the_bad_value(captions) -> None:
    first = Run.from_dict({"q01": {"nope": 1.0}}, name="f")
    with pytest.raises(FinegrainError, match=r"document 'nope' of run 'f' is not in the corpus"):
        rerank(first, captions.queries, captions.corpus, LengthReranker())
    with pytest.raises(FinegrainError, match=r"query 'zz' of run 'f' is not among the queries"):
        rerank(Run.from_dict({"zz": {"c01": 1.0}}, name="f"), captions.queries, captions.corpus, LengthReranker())
    with pytest.raises(FinegrainError, match=r"depth=0 is not a whole number"):
        rerank(first, captions.queries, captions.corpus, LengthReranker(), depth=0)
    with pytest.raises(FinegrainError, match=r"rest='keep' is not known"):
        rerank(first, captions.queries, captions.corpus, LengthReranker(), rest="keep")

    class Short(LengthReranker):
        def score(self, query: str, passages: list[str]) -> np.ndarray:
            return np.zeros(len(passages) - 1)

    with pytest.raises(FinegrainError, match=r"gave 2 scores .* for 3 passages of query 'q01'"):
        rerank(Run.from_dict({"q01": {"c01": 3.0, "c02": 2.0, "c03": 1.0}}), captions.queries, captions.corpus, Short())


def test_rerank_retriever_with_a_fake_reranker(captions, bm25_run: Run) -> None:
    r = RerankRetriever(first_stage=get_retriever("bm25-okapi"), reranker=LengthReranker(), depth=5)
    assert isinstance(r, Retriever)
    out = r.retrieve(captions.corpus, captions.queries, lang="en", top_k=None, show_progress=False)
    assert out.to_dict() == rerank(bm25_run, captions.queries, captions.corpus, LengthReranker(), depth=5, name="rerank").to_dict()
    top3 = r.retrieve(captions.corpus, captions.queries, lang="en", top_k=3, show_progress=False)
    assert all(top3.ranked(q) == out.ranked(q, 3) for q in out)
    cfg = r.config()
    assert cfg["depth"] == 5 and cfg["first_stage"]["name"] == "bm25-okapi" and cfg["reranker"]["name"] == "length"


# --------------------------------------------------------------------------- a tiny random cross-encoder


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory, captions) -> Path:
    """A randomly initialised 2-layer BERT (hidden 32, one label) with a word vocabulary of the captions."""
    import torch  # the rerank extra is part of the test extra: a missing install fails here, loudly
    import transformers

    root = tmp_path_factory.mktemp("tiny-ce")
    words = sorted({w for t in [*captions.corpus.texts, *captions.queries.texts] for w in re.findall(r"\w+", t.lower())})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words, ".", ","]
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tok = transformers.BertTokenizer(str(root / "vocab.txt"))
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=128, num_labels=1,
    )
    model = transformers.BertForSequenceClassification(config)
    out = root / "model"
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def _direct_scores(model_dir: Path, query: str, passages: list[str]) -> list[float]:
    """One (query, passage) pair at a time, no padding, straight through torch."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir, local_files_only=True).eval()
    with torch.no_grad():
        return [float(model(**tok(query, p, return_tensors="pt")).logits[0, 0]) for p in passages]


def test_cross_encoder_scores_come_from_the_model(tiny_model: Path, captions) -> None:
    ce = CrossEncoderReranker(str(tiny_model), batch_size=3)
    assert isinstance(ce, Reranker)
    passages = [d.text for d in list(captions.corpus.values())[:7]]
    got = ce.score("a black cat", passages)
    want = _direct_scores(tiny_model, "a black cat", passages)
    assert got.dtype == np.float64 and got.shape == (7,)
    assert got.tolist() == pytest.approx(want, abs=1e-5)
    assert np.ptp(got) > 0, "a random model still separates passages"
    assert ce.score("cat", []).shape == (0,)
    cfg = ce.config()
    assert cfg["architecture"] == "BertForSequenceClassification" and cfg["num_labels"] == 1


def test_cross_encoder_rerank_is_deterministic_and_reorders_only_the_head(tiny_model: Path, captions, bm25_run: Run) -> None:
    a = rerank(bm25_run, captions.queries, captions.corpus, CrossEncoderReranker(str(tiny_model)), depth=10)
    b = rerank(bm25_run, captions.queries, captions.corpus, CrossEncoderReranker(str(tiny_model), batch_size=4), depth=10)
    assert a.ranked("q01") == b.ranked("q01")
    for q in bm25_run:
        assert a.ranked(q) == b.ranked(q)
        assert dict(a[q]) == pytest.approx(dict(b[q]), abs=1e-5)
        before, after = bm25_run.ranked(q), a.ranked(q)
        assert set(after[:10]) == set(before[:10]) and after[10:] == before[10:]
    q = next(q for q in bm25_run if len(bm25_run[q]) >= 10)
    head = bm25_run.ranked(q, 10)
    direct = dict(zip(head, _direct_scores(tiny_model, captions.queries[q].text, [captions.corpus[d].text for d in head])))
    assert {d: a[q][d] for d in head} == pytest.approx(direct, abs=1e-5)
    assert a.ranked(q, 10) != bm25_run.ranked(q, 10), "the random model changes the order of the head"


def test_cross_encoder_errors(tmp_path: Path, tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(FinegrainError, match=r"model folder '.*nowhere' does not exist.*never downloaded"):
        CrossEncoderReranker(str(tmp_path / "nowhere"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FinegrainError, match=r"has no config.json"):
        CrossEncoderReranker(str(tmp_path / "empty"))
    with pytest.raises(FinegrainError, match=r"batch_size=0 is not a whole number >= 1"):
        CrossEncoderReranker(str(tiny_model), batch_size=0)
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(MissingDependencyError, match=r"'transformers'.*finegrain\[rerank\]"):
        CrossEncoderReranker(str(tiny_model))


def test_three_label_model_is_refused(tmp_path: Path, tiny_model: Path) -> None:
    import transformers

    model = transformers.BertForSequenceClassification(
        transformers.BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=1,
                                intermediate_size=16, num_labels=3)
    )
    model.save_pretrained(tmp_path / "m3")
    transformers.AutoTokenizer.from_pretrained(tiny_model, local_files_only=True).save_pretrained(tmp_path / "m3")
    with pytest.raises(FinegrainError, match=r"has 3 labels.*num_labels=1"):
        CrossEncoderReranker(str(tmp_path / "m3")).score("cat", ["a cat"])


def test_rerank_retriever_options(tiny_model: Path) -> None:
    with pytest.raises(FinegrainError, match=r"needs a local cross-encoder model folder.*--set model="):
        rerank_retriever()
    with pytest.raises(FinegrainError, match=r"retriever 'rerank' has no option 'dpeth'"):
        rerank_retriever(model=str(tiny_model), dpeth=3)
    with pytest.raises(FinegrainError, match=r"option bm25\.k1 names no stage.*bm25-okapi\.KEY"):
        rerank_retriever(model=str(tiny_model), **{"bm25.k1": 1.2})
    r = rerank_retriever(model=str(tiny_model), depth=7, batch_size=8, **{"bm25-okapi.k1": 1.2})
    assert r.depth == 7 and r.reranker.batch_size == 8 and r.first_stage.k1 == 1.2


# --------------------------------------------------------------------------- the CLI


def test_finegrain_eval_rerank_end_to_end(tmp_path: Path, tiny_model: Path, captions, bm25_run: Run) -> None:
    out = tmp_path / "out"
    code = main([
        "eval", "--dataset", "embedded/captions-en", "--retriever", "rerank",
        "--set", f"model={tiny_model}", "--set", "first_stage=bm25-okapi", "--set", "depth=20",
        "--metrics", "ndcg@10,recall@20", "--out", str(out), "--quiet",
    ])
    assert code == 0
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    prov = res["provenance"]["retriever"]
    assert prov["name"] == "rerank" and prov["depth"] == 20
    assert prov["first_stage"]["name"] == "bm25-okapi"
    assert prov["reranker"]["model_path"] == str(tiny_model)
    assert 0.0 <= res["aggregate"]["ndcg@10"] <= 1.0
    saved = read_run(out / "run.trec")
    want = rerank(bm25_run, captions.queries, captions.corpus, CrossEncoderReranker(str(tiny_model)), depth=20)
    for q in saved:
        assert saved.ranked(q) == want.ranked(q)


def test_finegrain_eval_rerank_bad_model_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "--dataset", "embedded/captions-en", "--retriever", "rerank",
                 "--set", f"model={tmp_path / 'missing'}", "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "does not exist" in err[0]


def test_tail_stays_below_huge_reranker_scores(captions) -> None:
    class Huge(LengthReranker):
        def score(self, query: str, passages: list[str]) -> np.ndarray:
            return np.full(len(passages), 1e20)

    first = Run.from_dict({"q01": {"c01": 4.0, "c02": 3.0, "c03": 2.0, "c04": 1.0}}, name="f")
    out = rerank(first, captions.queries, captions.corpus, Huge(), depth=2)
    assert out.ranked("q01") == ["c02", "c01", "c03", "c04"]  # head ties by id; tail in first-stage order
    assert out["q01"]["c03"] < 1e20 and out["q01"]["c04"] < out["q01"]["c03"]
