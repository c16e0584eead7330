"""Sharded BM25: shard indexes built with merged corpus statistics score exactly as the single index."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain.errors import FinegrainError
from finegrain.ranking import rank_docs
from finegrain.retrieve.bm25 import BM25, VARIANTS, CorpusStats, corpus_stats, merge_stats


def _corpus(n: int = 60, seed: int = 3) -> tuple[list[list[str]], list[str]]:
    rng = random.Random(seed)
    # "common" is in nearly every document (negative okapi idf -> the floor); the rest are Zipf-ish.
    words = [f"w{i}" for i in range(40)]
    docs = []
    for i in range(n):
        toks = [rng.choice(words[: rng.randint(1, 40)]) for _ in range(rng.randint(1, 12))]
        if i % 7:
            toks.append("common")
        docs.append(toks)
    docs[5] = []  # an empty document counts in N and avgdl
    return docs, [f"d{i}" for i in range(n)]


SPLITS = {
    "contiguous": lambda n: [list(range(0, 20)), list(range(20, 41)), list(range(41, n))],
    "interleaved": lambda n: [list(range(i, n, 3)) for i in range(3)],
    "shuffled": lambda n: [sorted(x) for x in np.array_split(np.random.default_rng(1).permutation(n), 3)],
}
QUERIES = [["common"], ["w0", "common", "w3"], ["w1", "w1", "w7"], ["w39", "unknown"], ["w2", "w5", "w11", "common"]]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("split", sorted(SPLITS))
def test_three_shards_score_exactly_as_one_index(variant: str, split: str) -> None:
    docs, ids = _corpus()
    whole = BM25(variant).index(docs, ids)
    parts = SPLITS[split](len(docs))
    shard_docs = [[docs[i] for i in part] for part in parts]
    stats = merge_stats(corpus_stats(d) for d in shard_docs)
    shards = [BM25(variant).index(d, [ids[i] for i in part], stats=stats) for d, part in zip(shard_docs, parts)]
    for q in QUERIES:
        want = whole.scores(q)
        for shard, part in zip(shards, parts):
            assert np.array_equal(shard.scores(q), want[part])  # bit for bit
    # Merged shard top-k = the single index's top-k (scores and the tie rule on ids).
    qids = [f"q{i}" for i in range(len(QUERIES))]
    want_run = whole.search(QUERIES, qids, k=5, show_progress=False)
    runs = [s.search(QUERIES, qids, k=5, show_progress=False) for s in shards]
    for qid in qids:
        merged = {d: v for r in runs for d, v in r[qid].items()}
        best = rank_docs(merged)[:5]
        assert best == want_run.ranked(qid)
        assert all(merged[d] == want_run[qid][d] for d in best)


def test_okapi_floor_uses_the_global_vocabulary() -> None:
    # Without the merged statistics a shard's floor (and idf, avgdl) differ: the exact test above can fail.
    docs, ids = _corpus()
    whole = BM25("okapi").index(docs, ids)
    alone = BM25("okapi").index(docs[:20], ids[:20])
    assert not np.array_equal(alone.scores(["common"]), whole.scores(["common"])[:20])
    # A shard where "common" is in every document and the only other term is rare elsewhere:
    # its idf is floored with the mean idf of the global vocabulary, not of the shard's.
    stats = merge_stats([corpus_stats(docs[:20]), corpus_stats(docs[20:])])
    shard = BM25("okapi").index(docs[:20], ids[:20], stats=stats)
    assert np.array_equal(shard.scores(["common"]), whole.scores(["common"])[:20])
    assert (whole.scores(["common"]) > 0).sum() > 0  # floored to a positive value


def test_stats_merge_to_the_whole_corpus_stats() -> None:
    docs, _ = _corpus()
    whole = corpus_stats(docs)
    merged = merge_stats([corpus_stats(docs[:7]), merge_stats([corpus_stats(docs[7:30]), corpus_stats(docs[30:])])])
    assert (merged.n_docs, merged.total_length) == (whole.n_docs, whole.total_length) == (60, sum(map(len, docs)))
    assert dict(zip(merged.terms, merged.df.tolist())) == dict(zip(whole.terms, whole.df.tolist()))
    assert merged.terms == whole.terms  # contiguous shards in order: first-occurrence order too
    assert dict(zip(whole.terms, whole.df.tolist()))["common"] == sum("common" in d for d in docs)
    back = pickle.loads(pickle.dumps(merged))
    assert back.terms == merged.terms and np.array_equal(back.df, merged.df) and back.avgdl == merged.avgdl
    assert not merged.df.flags.writeable


def test_shard_index_saves_and_loads_with_its_global_weights(tmp_path) -> None:
    docs, ids = _corpus()
    stats = merge_stats([corpus_stats(docs[:30]), corpus_stats(docs[30:])])
    shard = BM25("okapi").index(docs[30:], ids[30:], stats=stats)
    back = BM25.load(shard.save(tmp_path / "s"))
    whole = BM25("okapi").index(docs, ids)
    for q in QUERIES:
        assert np.array_equal(back.scores(q), whole.scores(q)[30:])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcdefg"), max_size=6), min_size=2, max_size=25), st.integers(1, 4),
       st.sampled_from(VARIANTS))
def test_random_splits_are_exact(docs: list[list[str]], n_shards: int, variant: str) -> None:
    ids = [f"d{i}" for i in range(len(docs))]
    whole = BM25(variant).index(docs, ids)
    parts = [p for p in (list(range(i, len(docs), n_shards)) for i in range(n_shards)) if p]
    stats = merge_stats([corpus_stats([docs[i] for i in p]) for p in reversed(parts)])  # any merge order
    for p in parts:
        shard = BM25(variant).index([docs[i] for i in p], [ids[i] for i in p], stats=stats)
        for q in (["a"], ["b", "c", "a"], ["g", "g"]):
            assert np.array_equal(shard.scores(q), whole.scores(q)[p])


def test_errors_name_the_problem() -> None:
    docs, ids = _corpus()
    partial = corpus_stats(docs[:10])
    with pytest.raises(FinegrainError, match="not in the corpus statistics"):
        BM25().index(docs[10:], ids[10:], stats=partial)
    with pytest.raises(FinegrainError, match="documents of the shard but"):
        BM25().index([["w0"], ["w0"]], ["a", "b"], stats=corpus_stats([["w0"]]))
    with pytest.raises(FinegrainError, match="no statistics"):
        merge_stats([])
    with pytest.raises(FinegrainError, match="not CorpusStats"):
        merge_stats([{"n_docs": 1}])  # type: ignore[list-item]
    with pytest.raises(FinegrainError, match="terms but"):
        CorpusStats(1, 1, ("a", "b"), np.array([1]))
    with pytest.raises(FinegrainError, match="empty corpus"):
        corpus_stats([])
