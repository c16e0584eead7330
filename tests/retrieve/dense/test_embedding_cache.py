"""The on-disk embedding cache: hits and misses, no re-encoding, corruption never gives wrong vectors."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import finegrain
from dense_fakes import BagOfWordsEncoder
from finegrain.errors import FinegrainError
from finegrain.retrieve.dense.encoders import cache as cache_mod
from finegrain.retrieve.dense.encoders.cache import CachedEncoder, EmbeddingCache, EmbeddingCacheWarning, text_key
from finegrain.retrieve.dense.retriever import DenseRetriever
from finegrain.settings import Settings
from finegrain.types import Corpus, Document, Queries, Query

TEXTS = ["a red car", "a blue car", "the cat sleeps", "a red car", "dogs run fast", "二只猫", "tea {x} and {text}"]


def _shards(root: Path) -> list[Path]:
    return sorted(root.glob("embeddings/*/*.npy"))


def test_second_encoder_on_the_same_folder_encodes_nothing(tmp_path: Path) -> None:
    first = BagOfWordsEncoder()
    a = CachedEncoder(first, EmbeddingCache(tmp_path)).encode(TEXTS, kind="passage")
    assert first.n_encoded == 6  # "a red car" twice: encoded once
    # a new cache object and a new encoder: as in a second process
    second = BagOfWordsEncoder()
    wrapped = CachedEncoder(second, EmbeddingCache(tmp_path))
    b = wrapped.encode(TEXTS, kind="passage")
    assert second.n_encoded == 0
    assert wrapped.stats.to_dict() == {"requested": 7, "hits": 6, "misses": 0}
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(b, BagOfWordsEncoder().encode(TEXTS, kind="passage"))
    assert b.dtype == np.float32 and b.flags.c_contiguous


def test_hits_and_misses_are_counted_per_distinct_text(tmp_path: Path) -> None:
    enc = BagOfWordsEncoder()
    wrapped = CachedEncoder(enc, EmbeddingCache(tmp_path))
    wrapped.encode(TEXTS[:3], kind="query")
    assert wrapped.stats.to_dict() == {"requested": 3, "hits": 0, "misses": 3}
    wrapped.encode(TEXTS, kind="query")
    assert wrapped.stats.to_dict() == {"requested": 10, "hits": 3, "misses": 6}
    assert [t for _, batch in enc.calls for t in batch] == TEXTS[:3] + ["dogs run fast", "二只猫", "tea {x} and {text}"]


def test_query_and_passage_of_the_same_text_are_separate_entries(tmp_path: Path) -> None:
    enc = BagOfWordsEncoder(kind_salt=True)
    wrapped = CachedEncoder(enc, EmbeddingCache(tmp_path))
    q = wrapped.encode(["a red car"], kind="query")
    p = wrapped.encode(["a red car"], kind="passage")
    assert enc.n_encoded == 2
    assert not np.allclose(q, p)
    assert text_key("m", "query", "x") != text_key("m", "passage", "x")


def test_different_model_ids_do_not_collide(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    small, big = BagOfWordsEncoder(dim=16, model_id="fake/16"), BagOfWordsEncoder(dim=32, model_id="fake/32")
    a = CachedEncoder(small, cache).encode(TEXTS, kind="passage")
    b = CachedEncoder(big, cache).encode(TEXTS, kind="passage")
    assert a.shape == (7, 16) and b.shape == (7, 32)
    assert small.n_encoded == big.n_encoded == 6
    assert cache.folder("fake/16") != cache.folder("fake/32")
    # same dim, different id: still separate
    other = BagOfWordsEncoder(dim=16, model_id="fake/16-v2")
    CachedEncoder(other, cache).encode(TEXTS, kind="passage")
    assert other.n_encoded == 6
    assert text_key("fake/16", "passage", "x") != text_key("fake/16-v2", "passage", "x")


def test_meta_names_the_model_and_a_mismatch_is_an_error(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    CachedEncoder(BagOfWordsEncoder(model_id="fake/a"), cache).encode(["x"], kind="query")
    meta = cache.folder("fake/a") / "meta.json"
    assert json.loads(meta.read_text())["model_id"] == "fake/a"
    meta.write_text(json.dumps({"format": 1, "model_id": "fake/a", "dim": 99}))
    with pytest.raises(FinegrainError, match="dim 99") as e:
        EmbeddingCache(tmp_path).lookup("fake/a", 256, [b"k" * 32])
    assert "delete that folder" in str(e.value)


def test_same_model_with_another_dim_is_refused(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.lookup("fake/a", 8, [])
    with pytest.raises(FinegrainError, match="dim 8"):
        cache.lookup("fake/a", 16, [])


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_a_corrupt_shard_is_set_aside_and_its_texts_encoded_again(tmp_path: Path, damage: str) -> None:
    CachedEncoder(BagOfWordsEncoder(), EmbeddingCache(tmp_path)).encode(TEXTS, kind="passage")
    (shard,) = _shards(tmp_path)
    data = bytearray(shard.read_bytes())
    if damage == "flip":
        data[-3] ^= 0x40  # one bit of one float: np.load would accept it, the checksum does not
    elif damage == "truncate":
        data = data[: len(data) // 2]
    else:
        data = bytearray(b"not a numpy file at all")
    shard.write_bytes(bytes(data))

    enc = BagOfWordsEncoder()
    with pytest.warns(EmbeddingCacheWarning, match=shard.name):
        out = CachedEncoder(enc, EmbeddingCache(tmp_path)).encode(TEXTS, kind="passage")
    assert enc.n_encoded == 6
    np.testing.assert_array_equal(out, BagOfWordsEncoder().encode(TEXTS, kind="passage"))
    assert shard.with_name(shard.name + ".corrupt").is_file()
    # the rebuilt shard serves the next run without warnings
    again = BagOfWordsEncoder()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CachedEncoder(again, EmbeddingCache(tmp_path)).encode(TEXTS, kind="passage")
    assert again.n_encoded == 0


def test_a_corrupt_shard_can_be_an_error(tmp_path: Path) -> None:
    CachedEncoder(BagOfWordsEncoder(), EmbeddingCache(tmp_path)).encode(TEXTS, kind="passage")
    (shard,) = _shards(tmp_path)
    shard.write_bytes(shard.read_bytes()[:-10])
    with pytest.raises(FinegrainError, match="checksum") as e:
        CachedEncoder(BagOfWordsEncoder(), EmbeddingCache(tmp_path, on_corrupt="error")).encode(TEXTS, kind="passage")
    assert str(shard) in str(e.value)
    with pytest.raises(FinegrainError, match="on_corrupt"):
        EmbeddingCache(tmp_path, on_corrupt="ignore")  # type: ignore[arg-type]


def test_a_foreign_shard_with_a_valid_name_is_not_trusted(tmp_path: Path) -> None:
    """A well-formed .npy of another row layout (e.g. another dim) is rejected, not misread."""
    import hashlib
    import io

    cache = EmbeddingCache(tmp_path)
    CachedEncoder(BagOfWordsEncoder(dim=8, model_id="fake/8"), cache).encode(["x"], kind="query")
    folder = cache.folder("fake/8")
    rows = np.zeros(1, dtype=[("key", "V32"), ("vec", "<f4", (4,))])
    buf = io.BytesIO()
    np.save(buf, rows)
    (folder / f"{hashlib.sha256(buf.getvalue()).hexdigest()[:32]}.npy").write_bytes(buf.getvalue())
    with pytest.warns(EmbeddingCacheWarning, match="expected"):
        EmbeddingCache(tmp_path).lookup("fake/8", 8, [])


def test_writes_are_atomic_and_an_interrupted_run_keeps_finished_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_mod, "FLUSH_ROWS", 4)
    texts = [f"text number {i}" for i in range(20)]

    class Failing(BagOfWordsEncoder):
        def encode(self, texts, *, kind):  # type: ignore[no-untyped-def]
            if self.n_encoded >= 12:
                raise KeyboardInterrupt
            return super().encode(texts, kind=kind)

    with pytest.raises(KeyboardInterrupt):
        CachedEncoder(Failing(batch_size=4), EmbeddingCache(tmp_path)).encode(texts, kind="passage")
    assert not list(tmp_path.rglob(".tmp-*")), "no temporary file is left behind"
    enc = BagOfWordsEncoder(batch_size=4)
    CachedEncoder(enc, EmbeddingCache(tmp_path)).encode(texts, kind="passage")
    assert enc.n_encoded == 8  # the 12 finished before the interruption were kept


def test_two_writers_only_add_shards(tmp_path: Path) -> None:
    one, two = EmbeddingCache(tmp_path), EmbeddingCache(tmp_path)
    CachedEncoder(BagOfWordsEncoder(), one).encode(TEXTS[:3], kind="passage")
    CachedEncoder(BagOfWordsEncoder(), two).encode(TEXTS, kind="passage")  # overlaps the first
    enc = BagOfWordsEncoder()
    out = CachedEncoder(enc, one).encode(TEXTS, kind="passage")  # `one` picks up `two`'s shard
    assert enc.n_encoded == 0
    np.testing.assert_array_equal(out, BagOfWordsEncoder().encode(TEXTS, kind="passage"))


def test_no_cache_still_encodes_each_distinct_text_once(tmp_path: Path) -> None:
    enc = BagOfWordsEncoder()
    out = CachedEncoder(enc, None).encode(TEXTS, kind="passage")
    assert enc.n_encoded == 6 and out.shape == (7, 256)
    np.testing.assert_array_equal(out[0], out[3])
    assert not list(tmp_path.iterdir())


def test_a_second_retriever_run_encodes_nothing(tmp_path: Path) -> None:
    corpus = Corpus(Document(f"d{i}", t) for i, t in enumerate(["Red car", "blue  CAR", "a cat", "a dog"]))
    queries = Queries([Query("q1", "red car"), Query("q2", "cat")])
    enc = BagOfWordsEncoder()
    first = DenseRetriever(encoder=enc, cache_dir=str(tmp_path))
    run1 = first.retrieve(corpus, queries, lang="en", top_k=None, show_progress=False)
    assert first.last_retrieval["texts"]["misses"] == 6
    enc2 = BagOfWordsEncoder()
    second = DenseRetriever(encoder=enc2, cache_dir=str(tmp_path))
    run2 = second.retrieve(corpus, queries, lang="en", top_k=None, show_progress=False)
    assert enc2.n_encoded == 0
    assert second.last_retrieval["texts"] == {"requested": 6, "hits": 6, "misses": 0}
    assert run1 == run2
    # caching off: encodes again and writes nothing new
    n_shards = len(_shards(tmp_path))
    enc3 = BagOfWordsEncoder()
    DenseRetriever(encoder=enc3, cache=False, cache_dir=str(tmp_path)).retrieve(
        corpus, queries, lang="en", top_k=None, show_progress=False)
    assert enc3.n_encoded == 6 and len(_shards(tmp_path)) == n_shards


def test_the_cache_folder_comes_from_finegrain_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FINEGRAIN_CACHE", str(tmp_path / "c"))
    assert Settings.from_env().cache_dir == tmp_path / "c"
    r = DenseRetriever(encoder=BagOfWordsEncoder())
    r.retrieve(Corpus([Document("d", "x")]), Queries([Query("q", "x")]), lang="en", top_k=None, show_progress=False)
    assert _shards(tmp_path / "c")
    monkeypatch.delenv("FINEGRAIN_CACHE")
    assert Settings.from_env().cache_dir == Path.home() / ".cache" / "finegrain"


# --------------------------------------------------------------------------- a killed run resumes

_KILLED_CHILD = """
import json, os, signal, sys
from dense_fakes import BagOfWordsEncoder
from finegrain.retrieve.dense.encoders import cache as cache_mod
from finegrain.retrieve.dense.retriever import DenseRetriever
from finegrain.types import Corpus, Document, Queries, Query

class Clock:  # the cache's clock: each batch below takes 10 s by it, so a chunk closes every 3 batches
    now = 0.0
    def monotonic(self):
        return self.now

clock = Clock()
cache_mod.time = clock

class SlowThenKilled(BagOfWordsEncoder):
    def encode(self, texts, *, kind):
        if len(self.calls) == int(sys.argv[3]):
            os.kill(os.getpid(), signal.SIGKILL)  # no finally, no atexit: as the OOM killer or kill -9 does
        clock.now += 10.0
        return super().encode(texts, kind=kind)

data = json.loads(open(sys.argv[1], encoding="utf-8").read())
corpus = Corpus(Document(f"d{i}", t) for i, t in enumerate(data["docs"]))
queries = Queries(Query(f"q{i}", t) for i, t in enumerate(data["queries"]))
DenseRetriever(encoder=SlowThenKilled(batch_size=2), cache_dir=sys.argv[2]).retrieve(
    corpus, queries, lang="en", top_k=None, show_progress=False)
"""


def test_a_killed_cold_encoding_resumes_where_it_stopped(tmp_path: Path) -> None:
    """SIGKILL during a cold encoding keeps every chunk written before it; the next run encodes only the rest
    and returns exactly the run and vectors of an uninterrupted one."""
    import os
    import signal
    import subprocess
    import sys

    docs = [f"doc {i} word{i % 7} tag{i % 3} {'red car' if i % 4 == 0 else 'blue sea'}" for i in range(30)]
    queries = ["red car", "word3 tag1", "blue sea tag2"]
    data = tmp_path / "data.json"
    data.write_text(json.dumps({"docs": docs, "queries": queries}), encoding="utf-8")
    cache_dir = tmp_path / "cache"
    src, fakes = Path(finegrain.__file__).parents[1], Path(__file__).parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(fakes)]), "OMP_NUM_THREADS": "1"}
    child = subprocess.run([sys.executable, "-c", _KILLED_CHILD, str(data), str(cache_dir), "8"],
                           env=env, capture_output=True, text=True, timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr
    # 8 batches of 2 passages were encoded; the chunks closed after batches 3 and 6 hold 12 of them
    assert len(_shards(cache_dir)) == 2
    assert not list(cache_dir.rglob(".tmp-*"))

    corpus = Corpus(Document(f"d{i}", t) for i, t in enumerate(docs))
    qs = Queries(Query(f"q{i}", t) for i, t in enumerate(queries))
    resumed_enc = BagOfWordsEncoder(batch_size=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every shard the killed run left is whole
        resumed = DenseRetriever(encoder=resumed_enc, cache_dir=str(cache_dir))
        run = resumed.retrieve(corpus, qs, lang="en", top_k=None, show_progress=False)
    passages = [t for kind, batch in resumed_enc.calls if kind == "passage" for t in batch]
    assert passages == docs[12:], "only the passages no chunk held are encoded, in order"
    assert resumed.last_retrieval["texts"] == {"requested": 33, "hits": 12, "misses": 21}

    whole = DenseRetriever(encoder=BagOfWordsEncoder(batch_size=2), cache_dir=str(tmp_path / "whole"))
    assert run == whole.retrieve(corpus, qs, lang="en", top_k=None, show_progress=False)
    again = BagOfWordsEncoder()
    cached = CachedEncoder(again, EmbeddingCache(cache_dir)).encode(docs, kind="passage")
    assert again.n_encoded == 0
    np.testing.assert_array_equal(cached, BagOfWordsEncoder().encode(docs, kind="passage"))


def test_a_slow_encoder_writes_a_chunk_every_flush_seconds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = iter(range(0, 10_000, 20))  # each reading of the cache's clock is 20 s later

    class Clock:
        @staticmethod
        def monotonic() -> float:
            return float(next(ticks))

    monkeypatch.setattr(cache_mod, "time", Clock)
    texts = [f"text number {i}" for i in range(10)]
    CachedEncoder(BagOfWordsEncoder(batch_size=2), EmbeddingCache(tmp_path)).encode(texts, kind="passage")
    # the clock is read at the start and after each of the 5 batches: 20 s a batch, a chunk closes at 30 s
    assert cache_mod.FLUSH_ROWS > len(texts) and cache_mod.FLUSH_SECONDS == 30
    assert len(_shards(tmp_path)) == 3  # batches 1-2, 3-4 by time; 5 at the end
