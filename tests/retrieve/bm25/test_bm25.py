"""BM25: hand-computed scores, rank_bm25 / bm25s agreement, threshold and top-k, ties, save/load, errors."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain.errors import DuplicateIdError, FinegrainError, UnknownNameError
from finegrain.ranking import rank_docs
from finegrain.retrieve.base import Retriever
from finegrain.retrieve.bm25 import BM25
from finegrain.retrieve.bm25.index import build_index
from finegrain.retrieve.bm25.scoring import BM25Params
from finegrain.retrieve.bm25.search import search_index
from finegrain.retrieve.registry import get_retriever
from finegrain.text import JiebaTokenizer
from finegrain.types import Corpus, Document, Queries, Query, Run

# "b" is in 3 of 5 documents (more than half): its raw idf is negative and gets the floor.
HAND_DOCS = [["a", "b"], ["b", "c"], ["b", "d"], ["e"], ["f", "f"]]
HAND_IDS = ["d1", "d2", "d3", "d4", "d5"]


def _rank_bm25(docs):
    from rank_bm25 import BM25Okapi

    return BM25Okapi(docs)


# --------------------------------------------------------------------------- okapi = rank_bm25


def test_okapi_hand_computed_with_idf_floor() -> None:
    bm = BM25("okapi").index(HAND_DOCS, HAND_IDS)
    n, avgdl, k1, b = 5, 9 / 5, 1.5, 0.75
    idf_rare = math.log(n - 1 + 0.5) - math.log(1 + 0.5)  # ln 3, for a, c, d, e, f
    idf_b = math.log(n - 3 + 0.5) - math.log(3 + 0.5)  # ln(5/7) < 0
    assert idf_b < 0
    floor = 0.25 * (5 * idf_rare + idf_b) / 6  # epsilon * mean over the whole vocabulary

    def tfc(tf: int, dl: int) -> float:
        return tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))

    want_b = [floor * tfc(1, 2), floor * tfc(1, 2), floor * tfc(1, 2), 0.0, 0.0]
    np.testing.assert_allclose(bm.scores(["b"]), want_b, rtol=1e-12)
    want_af = [idf_rare * tfc(1, 2), 0, 0, 0, idf_rare * tfc(2, 2)]
    np.testing.assert_allclose(bm.scores(["a", "f"]), want_af, rtol=1e-12)
    np.testing.assert_allclose(bm.scores(["a", "f"]), _rank_bm25(HAND_DOCS).get_scores(["a", "f"]), rtol=1e-9)


def test_okapi_repeated_query_tokens_count_every_time() -> None:
    bm = BM25("okapi").index(HAND_DOCS, HAND_IDS)
    ref = _rank_bm25(HAND_DOCS)
    for q in (["a", "a"], ["b", "a", "b", "b"], ["f", "zzz", "f"], ["zzz"], []):
        np.testing.assert_allclose(bm.scores(q), ref.get_scores(q), rtol=1e-9, atol=0)
    np.testing.assert_allclose(bm.scores(["a", "a"]), 2 * bm.scores(["a"]), rtol=1e-15)
    assert not bm.scores(["zzz"]).any()


def test_okapi_negative_average_idf_is_followed_too() -> None:
    # Every term is in most documents: the mean idf, and so the floor, is negative (rank_bm25 keeps it).
    docs = [["x", "y"], ["x", "y"], ["x"], ["x", "y", "z"]]
    bm = BM25("okapi").index(docs, ["1", "2", "3", "4"])
    for q in (["x"], ["y", "z"], ["x", "y", "z", "x"]):
        np.testing.assert_allclose(bm.scores(q), _rank_bm25(docs).get_scores(q), rtol=1e-9, atol=0)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=8), min_size=1, max_size=12),
    st.lists(st.sampled_from("abcdefghxy"), max_size=5),
)
def test_okapi_equals_rank_bm25_on_random_corpora(docs: list[list[str]], query: list[str]) -> None:
    bm = BM25("okapi").index(docs, [f"d{i}" for i in range(len(docs))])
    np.testing.assert_allclose(bm.scores(query), _rank_bm25(docs).get_scores(query), rtol=1e-9, atol=1e-300)


@pytest.fixture(scope="module")
def zh_sample(data_root: Path) -> tuple[list[list[str]], list[str], list[list[str]], list[str]]:
    """The first 400 CapRetrieval zh captions and all 404 queries, tokenized as in the paper."""
    zh = data_root / "capretrieval" / "zh"
    if not zh.is_dir():
        pytest.skip(f"CapRetrieval zh not found at {zh} (set FINEGRAIN_DATA)")
    cands = [json.loads(line) for line in (zh / "candidates.jsonl").read_text(encoding="utf-8").splitlines()][:400]
    queries = [json.loads(line) for line in (zh / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    tok = JiebaTokenizer.capretrieval()
    return (tok.documents([c["text"] for c in cands]), [c["id"] for c in cands],
            tok.queries([q["query"] for q in queries]), [q["id"] for q in queries])


def test_okapi_equals_rank_bm25_on_capretrieval_captions(zh_sample) -> None:
    docs, ids, queries, qids = zh_sample
    bm = BM25("okapi").index(docs, ids)
    ref = _rank_bm25(docs)
    matched = 0
    for q in queries:
        want = ref.get_scores(q)
        np.testing.assert_allclose(bm.scores(q), want, rtol=1e-9, atol=0)
        matched += bool((want >= 1e-3).any())
    assert matched > 200  # the comparison exercises real, non-empty score vectors

    # The paper's retrieval: every document with score >= 1e-3, best first (a stable sort).
    run = bm.search(queries, qids, threshold=1e-3, ties="index-order", show_progress=False)
    for q, qid in zip(queries[:80], qids[:80]):
        s = ref.get_scores(q).tolist()
        want = [ids[i] for i, _ in sorted(((i, x) for i, x in enumerate(s) if x >= 1e-3), key=lambda v: -v[1])]
        assert run.ranked(qid) == want


# --------------------------------------------------------------------------- other variants = bm25s


@pytest.mark.parametrize("variant", ["lucene", "robertson", "atire"])
def test_variants_equal_bm25s(variant: str, zh_sample) -> None:
    import bm25s

    docs, ids, queries, _ = zh_sample
    ref = bm25s.BM25(method=variant, k1=1.2, b=0.6, dtype="float64")
    ref.index(docs, show_progress=False)
    bm = BM25(variant, k1=1.2, b=0.6).index(docs, ids)  # type: ignore[arg-type]
    for q in queries[:150] + [["a-token-nobody-uses"]]:
        np.testing.assert_allclose(bm.scores(q), ref.get_scores(q), rtol=1e-12, atol=1e-300)


# --------------------------------------------------------------------------- threshold and top-k


def _dense(bm: BM25, q: list[str]) -> dict[str, float]:
    return {d: float(s) for d, s in zip(bm.doc_ids, bm.scores(q)) if s != 0}


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from("abcdef"), min_size=1, max_size=6), min_size=1, max_size=15),
    st.lists(st.lists(st.sampled_from("abcdefz"), max_size=4), min_size=1, max_size=4),
    st.integers(1, 6),
    st.sampled_from([None, 0.0, 0.3, 1.0]),
)
def test_search_is_the_ranked_dense_scores(docs, queries, k, threshold) -> None:
    ids = [f"d{i}" for i in range(len(docs))]
    bm = BM25("lucene").index(docs, ids)
    qids = [f"q{i}" for i in range(len(queries))]
    run_t = bm.search(queries, qids, threshold=-1e9 if threshold is None else threshold, show_progress=False)
    run_k = bm.search(queries, qids, k=k, threshold=threshold, show_progress=False)
    assert run_k.qids == tuple(qids)
    for q, qid in zip(queries, qids):
        dense = _dense(bm, q)
        kept = {d: s for d, s in dense.items() if threshold is None or s >= threshold}
        assert dict(run_t[qid]) == (kept if threshold is not None else dense)
        assert run_k.ranked(qid) == rank_docs(kept)[:k]
        assert all(run_k[qid][d] == kept[d] for d in run_k[qid])


def test_threshold_keeps_scores_at_or_above_it_exactly() -> None:
    bm = BM25("okapi").index(HAND_DOCS, HAND_IDS)
    s = bm.scores(["a", "b"])
    t = float(s[0])  # d1 scores exactly t
    run = bm.search([["a", "b"]], ["q"], threshold=t, show_progress=False)
    assert set(run["q"]) == {HAND_IDS[i] for i in np.flatnonzero(s >= t)} == {"d1"}
    assert run["q"]["d1"] == t


def test_empty_and_unknown_queries_give_empty_entries() -> None:
    bm = BM25("okapi").index(HAND_DOCS, HAND_IDS)
    run = bm.search([[], ["zzz"], ["a"]], ["q1", "q2", "q3"], k=3, show_progress=False)
    assert run.qids == ("q1", "q2", "q3")
    assert dict(run["q1"]) == {} and dict(run["q2"]) == {} and list(run["q3"]) == ["d1"]
    assert isinstance(run, Run) and run.name == "bm25-okapi"


# --------------------------------------------------------------------------- ties


# d10, d1 and d2 are identical documents; the fillers keep idf("x") and idf("y") positive.
TIE_DOCS = [["x", "y"], ["x", "y"], ["x"], ["x", "y"], ["z"], ["w"], ["v"], ["u"], ["t"], ["s"]]
TIE_IDS = ["d10", "d1", "d7", "d2", "d3", "d4", "d5", "d6", "d8", "d9"]


def test_doc_id_ties_follow_the_run_rule_whatever_the_index_order() -> None:
    rng = random.Random(7)
    runs = []
    for _ in range(5):
        order = list(range(len(TIE_IDS)))
        rng.shuffle(order)
        bm = BM25("okapi").index([TIE_DOCS[i] for i in order], [TIE_IDS[i] for i in order])
        runs.append(bm.search([["y"]], ["q"], k=2, show_progress=False))
        full = bm.search([["y"]], ["q"], threshold=1e-3, show_progress=False)
        assert full.ranked("q") == ["d2", "d10", "d1"]  # doc id descending
    assert all(r.to_dict() == runs[0].to_dict() for r in runs)
    assert runs[0].ranked("q") == ["d2", "d10"]
    scores = set(runs[0]["q"].values())
    assert len(scores) == 1  # genuinely tied


def test_index_order_ties_rank_like_a_stable_sort() -> None:
    bm = BM25("okapi").index(TIE_DOCS, TIE_IDS)
    raw = bm.scores(["y"])[0]
    run = bm.search([["y"]], ["q"], threshold=float(raw), ties="index-order", show_progress=False)
    assert run.ranked("q") == ["d10", "d1", "d2"]  # index order
    values = [run["q"][d] for d in run.ranked("q")]
    assert values[0] > values[1] > values[2] == raw  # lifted, never below the threshold they passed
    assert values[0] == np.nextafter(np.nextafter(raw, np.inf), np.inf)  # by the fewest ulps
    top = bm.search([["y"]], ["q"], k=2, ties="index-order", show_progress=False)
    assert top.ranked("q") == ["d10", "d1"]
    # Documents with distinct scores keep them exactly.
    mixed = bm.search([["x"]], ["q"], k=5, ties="index-order", show_progress=False)
    assert mixed["q"]["d7"] == bm.scores(["x"])[2]


def test_index_order_ties_with_negative_scores() -> None:
    docs = [["x", "y"], ["x", "y"], ["x"], ["x", "y", "z"]]  # negative idf floor: negative scores
    bm = BM25("okapi").index(docs, ["a", "b", "c", "d"])
    raw = bm.scores(["x"])
    assert (raw < 0).all()
    run = bm.search([["x"]], ["q"], k=4, ties="index-order", show_progress=False)
    # A negative idf times a tf component that shrinks with length: the longest document ranks first.
    assert run.ranked("q") == ["d", "a", "b", "c"]  # a and b tie, in index order
    values = [run["q"][d] for d in run.ranked("q")]
    assert all(x > y for x, y in zip(values, values[1:]))
    np.testing.assert_allclose(values, raw[[3, 0, 1, 2]], rtol=1e-14)


# --------------------------------------------------------------------------- save / load


def test_save_load_round_trip(tmp_path: Path, zh_sample) -> None:
    docs, ids, queries, qids = zh_sample
    for variant in ("okapi", "lucene"):
        bm = BM25(variant, k1=1.2, b=0.7, epsilon=0.3).index(docs, ids)  # type: ignore[arg-type]
        folder = bm.save(tmp_path / variant)
        assert {p.name for p in folder.iterdir()} == {"bm25.json", "vocab.json", "doc_ids.json", "indptr.npy",
                                                      "indices.npy", "data.npy", "doc_lengths.npy", "idf.npy"}
        back = BM25.load(folder)
        assert back.params == bm.params and back.doc_ids == bm.doc_ids
        for q in queries[:50]:
            assert np.array_equal(back.scores(q), bm.scores(q))
        for kw in ({"k": 10}, {"threshold": 1e-3, "ties": "index-order"}):
            a = bm.search(queries, qids, show_progress=False, **kw)
            b = back.search(queries, qids, show_progress=False, **kw)
            assert a.to_dict() == b.to_dict()
        bm.save(folder)  # overwriting an index folder is allowed


def test_load_refuses_what_is_not_an_index(tmp_path: Path) -> None:
    with pytest.raises(FinegrainError, match="does not exist"):
        BM25.load(tmp_path / "missing")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("hello")
    with pytest.raises(FinegrainError, match=r"other.*is not a finegrain BM25 index \(no bm25.json\)"):
        BM25.load(tmp_path / "other")
    (tmp_path / "other" / "bm25.json").write_text('{"format": "bm25s"}')
    with pytest.raises(FinegrainError, match="is not a finegrain BM25 index.*'bm25s'"):
        BM25.load(tmp_path / "other")
    bm = BM25().index(HAND_DOCS, HAND_IDS)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x.txt").write_text("x")
    with pytest.raises(FinegrainError, match="not empty and holds no finegrain BM25 index"):
        bm.save(tmp_path / "busy")
    folder = bm.save(tmp_path / "idx")
    meta = json.loads((folder / "bm25.json").read_text())
    (folder / "bm25.json").write_text(json.dumps({**meta, "version": 99}))
    with pytest.raises(FinegrainError, match="format version 99"):
        BM25.load(folder)
    (folder / "bm25.json").write_text(json.dumps(meta))
    (folder / "data.npy").unlink()
    with pytest.raises(FinegrainError, match="incomplete or damaged"):
        BM25.load(folder)
    bm.save(folder)
    np.save(folder / "data.npy", np.zeros(3))  # a wrong size
    with pytest.raises(FinegrainError, match="inconsistent array sizes"):
        BM25.load(folder)


# --------------------------------------------------------------------------- errors


def test_parameter_errors_name_the_value() -> None:
    with pytest.raises(FinegrainError, match="unknown BM25 variant 'bm25l'.*'okapi', 'lucene'"):
        BM25("bm25l")  # type: ignore[arg-type]
    with pytest.raises(FinegrainError, match=r"b=1.5 is outside \[0, 1\]"):
        BM25(b=1.5)
    with pytest.raises(FinegrainError, match="k1=-1.0 is not a finite number >= 0"):
        BM25(k1=-1)
    with pytest.raises(FinegrainError, match=r"BM25: k1=1e\+308 is not a number in \[0, 100\]"):
        BM25(k1=1e308)  # tf * (k1 + 1) overflows: inf and NaN scores
    with pytest.raises(FinegrainError, match=r"BM25: epsilon=2.0 is not a number in \[0, 1\]"):
        BM25(epsilon=2.0)
    with pytest.raises(FinegrainError, match="has no index yet"):
        BM25().scores(["a"])


def test_index_errors() -> None:
    with pytest.raises(FinegrainError, match="document 'd2' is the string 'b c', not a token list"):
        BM25().index([["a"], "b c"], ["d1", "d2"])  # type: ignore[list-item]
    with pytest.raises(DuplicateIdError, match="'d1' appears twice"):
        BM25().index([["a"], ["b"]], ["d1", "d1"])
    with pytest.raises(FinegrainError, match="2 token lists for 1 document ids"):
        BM25().index([["a"], ["b"]], ["d1"])
    with pytest.raises(FinegrainError, match="empty corpus"):
        BM25().index([], [])
    with pytest.raises(FinegrainError, match="token 3 is a int"):
        BM25().index([["a", 3]], ["d1"])  # type: ignore[list-item]


def test_search_errors() -> None:
    bm = BM25().index(HAND_DOCS, HAND_IDS)
    with pytest.raises(FinegrainError, match="needs k, threshold or both"):
        bm.search([["a"]], ["q"])
    with pytest.raises(FinegrainError, match="k=0 is not a whole number >= 1"):
        bm.search([["a"]], ["q"], k=0)
    with pytest.raises(FinegrainError, match="threshold=nan"):
        bm.search([["a"]], ["q"], threshold=float("nan"))
    with pytest.raises(FinegrainError, match="unknown ties rule 'stable'"):
        bm.search([["a"]], ["q"], k=1, ties="stable")  # type: ignore[arg-type]
    with pytest.raises(FinegrainError, match="2 token lists for 1 query ids"):
        bm.search([["a"], ["b"]], ["q"], k=1)
    with pytest.raises(FinegrainError, match="query 0 is the string 'a b'"):
        bm.search(["a b"], ["q"], k=1)  # type: ignore[list-item]
    with pytest.raises(FinegrainError, match="expected a token list"):
        bm.scores("a b")  # type: ignore[arg-type]
    with pytest.raises(DuplicateIdError):
        bm.search([["a"], ["b"]], ["q", "q"], k=1)


def test_corpus_of_empty_documents() -> None:
    bm = BM25().index([[], []], ["d1", "d2"])
    assert not bm.scores(["a"]).any()
    assert dict(bm.search([["a"]], ["q"], k=3, show_progress=False)["q"]) == {}


# --------------------------------------------------------------------------- retrievers


def _tiny(lang: str) -> tuple[Corpus, Queries]:
    if lang == "zh":
        texts = ["图片中显示了一个安装在墙上的燃气表", "这是一张结婚证书", "健身房里的跑步机", "燃气灶和燃气表"]
        qs = ["燃气表", "结婚证书", "游泳"]
    else:
        texts = ["A gas meter installed on the wall", "A marriage certificate", "Treadmills in a gym", "Gas meters"]
        qs = ["gas meter", "Marriage", "swimming"]
    texts += ["filler"] * 6 if lang == "en" else ["其他"] * 6  # keeps the query words' idf positive
    corpus = Corpus(Document(f"c{i}", t) for i, t in enumerate(texts))
    return corpus, Queries(Query(f"q{i}", t) for i, t in enumerate(qs))


@pytest.mark.parametrize("name", ["bm25-okapi", "bm25"])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_registered_retrievers_run(name: str, lang: str) -> None:
    r = get_retriever(name)
    assert isinstance(r, Retriever) and r.name == name
    json.dumps(r.config())
    corpus, queries = _tiny(lang)
    run = r.retrieve(corpus, queries, lang=lang, top_k=None, show_progress=False)
    assert run.qids == ("q0", "q1", "q2") and run.name == name
    assert run.ranked("q0")[0] in {"c0", "c3"} and run.ranked("q1") == ["c1"] and dict(run["q2"]) == {}
    assert len(r.retrieve(corpus, queries, lang=lang, top_k=1, show_progress=False)["q0"]) == 1


def test_bm25_okapi_is_the_paper_configuration() -> None:
    cfg = get_retriever("bm25-okapi").config()
    assert {k: cfg[k] for k in ("variant", "k1", "b", "epsilon", "threshold", "ties", "tokenizer")} == {
        "variant": "okapi", "k1": 1.5, "b": 0.75, "epsilon": 0.25, "threshold": 1e-3,
        "ties": "index-order", "tokenizer": "capretrieval",
    }
    assert cfg["tokenizers"]["zh"]["normalize_documents"] is False
    assert get_retriever("bm25", k1=1.2).config()["k1"] == 1.2


def test_retriever_errors() -> None:
    with pytest.raises(UnknownNameError) as e:
        get_retriever("bm25-okapy")
    assert "bm25-okapi" in e.value.suggestions
    with pytest.raises(FinegrainError, match="has no option 'k3'.*k1, b"):
        get_retriever("bm25-okapi", k3=1)
    with pytest.raises(FinegrainError, match="neither a threshold nor a default_k"):
        get_retriever("bm25-okapi", threshold=None)
    with pytest.raises(UnknownNameError, match="unknown tokenizer language 'fr'"):
        corpus, queries = _tiny("en")
        get_retriever("bm25").retrieve(corpus, queries, lang="fr", top_k=None, show_progress=False)


def test_an_index_whose_weights_overflow_is_refused_before_any_search() -> None:
    p = BM25Params("okapi")
    object.__setattr__(p, "k1", 1e308)  # past the declared range, as a bug in a new variant could be
    with np.errstate(over="ignore"), \
            pytest.raises(FinegrainError, match=r"BM25 okapi \(k1=1e\+308.*weighs term 'a' in document 'd1' inf"):
        build_index(p, [["a", "a", "b"], ["b", "c"], ["c"]], ["d1", "d2", "d3"])


@pytest.mark.parametrize("backend", ["numba", "scipy"])
def test_a_k_above_the_corpus_size_is_the_corpus_size(backend: str) -> None:
    if backend == "numba":
        pytest.importorskip("numba")
    bm = BM25("lucene").index([["a", "b"], ["b", "c"], ["c", "a", "a"]], ["d1", "d2", "d3"])
    idx = bm._require()
    args = ([["a"], ["c", "b"]], ["q1", "q2"])
    want = search_index(idx, *args, 3, None, "doc-id", "bm25", False, backend)
    huge = search_index(idx, *args, 99999999999, None, "doc-id", "bm25", False, backend)  # numba: MemoryError before
    assert huge.to_dict() == want.to_dict()
