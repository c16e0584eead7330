"""The streaming on-disk BM25 build: equal to the in-memory index bit for bit, memory-mapped, shards, errors."""

from __future__ import annotations

import json
import pickle
import random
from pathlib import Path

import numpy as np
import pytest

from finegrain.errors import DuplicateIdError, FinegrainError
from finegrain.retrieve.bm25 import BM25, VARIANTS, corpus_stats, merge_stats
from finegrain.retrieve.bm25.stream import spill_on_disk
from finegrain.text import EnglishTokenizer


def _corpus(n: int = 250, seed: int = 5) -> tuple[list[list[str]], list[str]]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(60)] + ["的", "猫", "一只"]
    docs = [[rng.choice(words[: rng.randint(1, len(words))]) for _ in range(rng.randint(0, 15))] for _ in range(n)]
    return docs, [f"doc-{rng.randrange(10**9)}-{i}" for i in range(n)]


def _mapped(a: np.ndarray) -> bool:
    """Whether ``a`` is a view of a memory map (not a copy in memory)."""
    while a is not None and not isinstance(a, np.memmap):
        a = a.base  # type: ignore[assignment]
    return a is not None


def _same_index(a: BM25, b: BM25) -> None:
    x, y = a._require(), b._require()
    assert x.doc_ids == y.doc_ids and x.terms == y.terms and x.avgdl == y.avgdl
    for u, v in zip(x.postings + (x.doc_lengths, x.idf), y.postings + (y.doc_lengths, y.idf)):
        assert np.asarray(u).tobytes() == np.asarray(v).tobytes()


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("chunk", [1, 7, 100, 10_000])
def test_streamed_index_equals_the_in_memory_index(tmp_path: Path, variant: str, chunk: int) -> None:
    docs, ids = _corpus()
    want = BM25(variant).index(docs, ids)
    got = BM25(variant).index_on_disk(tmp_path / "idx", iter(zip(ids, docs)), chunk_size=chunk)
    _same_index(got, want)
    assert all(map(_mapped, got._require().postings))  # served from the mapped file
    queries = [["w1", "w2"], ["的", "猫"], ["w0", "w0", "nope"]]
    qids = ["a", "b", "c"]
    assert got.search(queries, qids, k=5, show_progress=False).to_dict() == \
        want.search(queries, qids, k=5, show_progress=False).to_dict()
    assert not list((tmp_path / "idx").glob(".*"))  # no spill left behind


def test_loaded_index_is_mapped_or_read(tmp_path: Path) -> None:
    docs, ids = _corpus()
    folder = BM25("okapi").index(docs, ids).save(tmp_path / "idx")
    mapped, read = BM25.load(folder), BM25.load(folder, mmap=False)
    assert all(map(_mapped, mapped._require().postings))
    assert not any(map(_mapped, read._require().postings))
    _same_index(mapped, read)
    # Saving a mapped index over its own folder replaces the files (renames): the old mapping stays valid.
    before = mapped.scores(["w3"])
    BM25("lucene").index(docs[:10], ids[:10]).save(folder)
    assert np.array_equal(mapped.scores(["w3"]), before)
    assert BM25.load(folder).params.variant == "lucene" and len(BM25.load(folder).doc_ids) == 10


def test_texts_are_tokenized_chunk_by_chunk(tmp_path: Path) -> None:
    texts = ["The running cats sleep", "A cat runs", "dogs bark at cats", "nothing here", "cats and dogs"]
    ids = [f"t{i}" for i in range(len(texts))]
    tok = EnglishTokenizer()
    want = BM25("okapi", tokenizer=tok).index_texts(texts, ids)
    got = BM25("okapi", tokenizer=tok).index_texts_on_disk(tmp_path / "t", zip(ids, texts), chunk_size=2)
    _same_index(got, want)
    back = BM25.load(tmp_path / "t")
    assert back.tokenizer == tok
    assert back.search_texts(["cat"], ["q"], k=3, show_progress=False).to_dict() == \
        want.search_texts(["cat"], ["q"], k=3, show_progress=False).to_dict()
    meta = json.loads((tmp_path / "t" / "bm25.json").read_text(encoding="utf-8"))
    assert meta["n_docs"] == 5 and meta["version"] == 3


@pytest.mark.parametrize("variant", ["okapi", "lucene"])
def test_streamed_shards_score_as_the_whole(tmp_path: Path, variant: str) -> None:
    docs, ids = _corpus()
    parts = [range(0, 80), range(80, 170), range(170, 250)]
    stats = merge_stats(corpus_stats([docs[i] for i in part]) for part in parts)
    whole = BM25(variant).index(docs, ids)
    for s, part in enumerate(parts):
        shard = BM25(variant).index_on_disk(tmp_path / f"s{s}", ((ids[i], docs[i]) for i in part), chunk_size=30,
                                            stats=stats)
        for q in (["的"], ["w4", "猫", "w4"]):
            assert np.array_equal(shard.scores(q), whole.scores(q)[list(part)])


@pytest.mark.parametrize("variant", VARIANTS)
def test_spilled_shards_finished_with_merged_stats_score_as_the_whole(tmp_path: Path, variant: str) -> None:
    # The one-tokenization sharded build: spill every shard, merge their statistics, finish each.
    docs, ids = _corpus()
    parts = [list(range(i, 250, 3)) for i in range(3)]  # interleaved shards
    spills = [spill_on_disk(tmp_path / f"s{s}", ((ids[i], docs[i]) for i in part), chunk_size=25)
              for s, part in enumerate(parts)]
    spills = [pickle.loads(pickle.dumps(sp)) for sp in spills]  # as across processes
    stats = merge_stats(sp.stats for sp in spills)
    assert stats.n_docs == 250 and stats.total_length == sum(map(len, docs))
    whole = BM25(variant).index(docs, ids)
    for sp, part in zip(spills, parts):
        shard = BM25(variant).index_spilled(sp, stats=stats)
        assert not (sp.folder / ".spill").exists()
        for q in (["的"], ["w4", "猫", "w4"], ["w59", "w1"]):
            assert np.array_equal(shard.scores(q), whole.scores(q)[part])
        assert np.array_equal(BM25.load(sp.folder).scores(["w2"]), whole.scores(["w2"])[part])
    with pytest.raises(FinegrainError, match="no complete spill"):
        BM25(variant).index_spilled(spills[0], stats=stats)  # finished once


def test_stream_errors(tmp_path: Path) -> None:
    docs, ids = _corpus(20)
    with pytest.raises(DuplicateIdError, match="appears twice"):
        BM25().index_on_disk(tmp_path / "dup", zip(ids[:5] + ids[:1], docs[:6]), chunk_size=2)
    with pytest.raises(FinegrainError, match="empty corpus"):
        BM25().index_on_disk(tmp_path / "empty", iter([]))
    with pytest.raises(FinegrainError, match="not a token list"):
        BM25().index_on_disk(tmp_path / "str", [("a", "some text")])
    with pytest.raises(FinegrainError, match="not a \\(doc_id, tokens\\) pair"):
        BM25().index_on_disk(tmp_path / "bad", [["a"]])  # type: ignore[list-item]
    with pytest.raises(FinegrainError, match="chunk_size=0"):
        BM25().index_on_disk(tmp_path / "c", zip(ids, docs), chunk_size=0)
    with pytest.raises(FinegrainError, match="no tokenizer"):
        BM25().index_texts_on_disk(tmp_path / "t", [("a", "text")])
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "mine.txt").write_text("x")
    with pytest.raises(FinegrainError, match="not empty and holds no finegrain BM25 index"):
        BM25().index_on_disk(tmp_path / "busy", zip(ids, docs))
    # A failed build leaves no index and no spill behind, and the folder can be built into again.
    assert not (tmp_path / "dup" / "bm25.json").exists() and not (tmp_path / "dup" / ".spill").exists()
    with pytest.raises(FinegrainError, match="no bm25.json"):
        BM25.load(tmp_path / "dup")
    rebuilt = BM25("okapi").index_on_disk(tmp_path / "dup", zip(ids, docs))
    _same_index(BM25.load(tmp_path / "dup"), rebuilt)
