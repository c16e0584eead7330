"""finegrain.experiment.executors: ``--engine ray`` gives the single process's results (a local Ray, num_cpus=2, started here)."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from dense_fakes import BagOfWordsEncoder
from finegrain.cli.main import app
from finegrain.errors import FinegrainError, MissingDependencyError, UnknownNameError
from finegrain.evaluate.evaluate import evaluate
from finegrain.experiment.executors.engine import Engine, RayExecutor, _check_reachable
from finegrain.experiment.executors.ray_bm25 import retrieve_bm25
from finegrain.experiment.executors.ray_dense import retrieve_dense, search_sharded
from finegrain.experiment.executors.ray_metrics import evaluate_sharded
from finegrain.experiment.executors.shards import Candidates, merge_candidates, shard_bounds
from finegrain.experiment.run import Experiment, run_experiment
from finegrain.ranking import string_ranks, top_k_positions
from finegrain.retrieve.dense.index import DenseIndex
from finegrain.retrieve.dense.retriever import DenseRetriever
from finegrain.retrieve.fusion.hybrid import HybridRetriever
from finegrain.retrieve.registry import get_retriever
from finegrain.settings import Settings
from finegrain.types import Corpus, Document, Qrels, Queries, Query, Run

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent


@pytest.fixture(scope="session")
def ray_local():
    """A local Ray with 2 CPUs for the whole session; workers import the tests' fakes (dense_fakes)."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        yield ray
        return
    path = os.pathsep.join(p for p in (str(TESTS), str(REPO / "src"), os.environ.get("PYTHONPATH")) if p)
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield ray
    ray.shutdown()


def executor(ray, shards: int = 3, workers: int = 2) -> RayExecutor:
    return RayExecutor(ray, Engine("ray", shards=shards, workers=workers), show_progress=False)


def same_run(a: Run, b: Run) -> None:
    """Same queries, same documents, bit-identical scores, same ranking."""
    assert a.qids == b.qids
    assert a.to_dict() == b.to_dict()
    for q in a.qids:
        assert a.ranked(q) == b.ranked(q)


# --------------------------------------------------------------------------- engine choice (no Ray needed)


def test_engine_checks_its_options() -> None:
    with pytest.raises(FinegrainError, match="address is an option of the ray engine"):
        Engine("local", address="127.0.0.1:6379")
    with pytest.raises(UnknownNameError):
        Engine("spark")  # type: ignore[arg-type]
    with pytest.raises(FinegrainError, match="shards=0"):
        Engine("ray", shards=0)
    with pytest.raises(FinegrainError, match="num_cpus sizes a local Ray"):
        Engine("ray", address="auto", num_cpus=2)
    assert Engine("ray", address="auto").describe()["address"] == "auto"


def test_without_ray_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(MissingDependencyError, match=r"finegrain\[ray\]"):
        with Engine("ray").open(show_progress=False):
            pass


def test_an_address_nobody_answers_fails_at_once() -> None:
    import socket
    import time


    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t = time.perf_counter()
    with pytest.raises(FinegrainError, match=rf"no Ray cluster answers at '127.0.0.1:{port}'"):
        _check_reachable(f"127.0.0.1:{port}")
    assert time.perf_counter() - t < 5
    _check_reachable("auto")  # not host:port: left to Ray


def test_shard_bounds_cover_in_order() -> None:
    for n in (1, 2, 7, 100):
        for k in (1, 2, 3, 8, 200):
            b = shard_bounds(n, k)
            assert b[0][0] == 0 and b[-1][1] == n and len(b) == min(n, k)
            assert all(x[1] == y[0] for x, y in zip(b, b[1:]))
            sizes = [e - a for a, e in b]
            assert max(sizes) - min(sizes) <= 1


# --------------------------------------------------------------------------- the exact top-k merge (no Ray needed)


@pytest.mark.parametrize("tie_rule", ["doc-id", "index-order"])
@pytest.mark.parametrize("k", [1, 3, 10, None])
def test_merge_of_shard_top_k_is_the_global_top_k(tie_rule: str, k: int | None) -> None:
    """Scores with many ties: the merge of each shard's top k equals the top k of the whole corpus,
    ties cut by the rule (id rank, or earlier position), whatever the number of shards."""
    rng = np.random.default_rng(7)
    n_docs, n_q = 40, 25
    ids = [f"d{rng.integers(10**6)}-{i}" for i in range(n_docs)]  # id order differs from corpus order
    scores = rng.integers(0, 4, size=(n_q, n_docs)).astype(np.float64)  # 4 values: ties everywhere
    tie_key = string_ranks(ids) if tie_rule == "doc-id" else -np.arange(n_docs)
    expected = []
    for row in scores:
        docs = np.arange(n_docs)
        sel = top_k_positions(row, docs, k, tie_key) if k is not None else docs
        expected.append(set(sel.tolist()))
    for shards in (1, 2, 3, 7):
        parts = []
        for a, b in shard_bounds(n_docs, shards):
            offsets, docs_l, vals_l = [0], [], []
            for row in scores:
                local = np.arange(b - a)
                sel = top_k_positions(row[a:b], local, k, tie_key[a:b]) if k is not None else local
                docs_l.append(sel + a)
                vals_l.append(row[a:b][sel])
                offsets.append(offsets[-1] + len(sel))
            parts.append(Candidates(np.array(offsets), np.concatenate(docs_l), np.concatenate(vals_l)))
        run = merge_candidates(parts, [f"q{i}" for i in range(n_q)], ids, k=k, tie_key=tie_key,
                               separate_ties=tie_rule == "index-order")
        for i in range(n_q):
            got = run[f"q{i}"]
            assert {ids.index(d) for d in got} == expected[i]
            if tie_rule == "index-order":  # ranked by score, then earlier position first
                order = sorted(expected[i], key=lambda d: (-scores[i, d], d))
                assert [ids.index(d) for d in run.ranked(f"q{i}")] == order
            else:
                assert all(got[d] == scores[i, ids.index(d)] for d in got)


# --------------------------------------------------------------------------- BM25 on Ray


def _text_corpus(seed: int = 3) -> tuple[Corpus, Queries]:
    rnd = random.Random(seed)
    words = "red blue green cat dog bird tree river stone cloud fast slow".split()
    docs = [Document(f"doc{rnd.randrange(10**5):05d}-{i}", " ".join(rnd.choices(words, k=rnd.randint(1, 6))),
                     title="" if i % 3 else rnd.choice(words)) for i in range(60)]
    for i in range(0, len(docs), 6):  # identical texts across every shard: exact ties at each cut
        docs[i] = Document(docs[i].id, "red cat")
    queries = [Query(f"q{i}", " ".join(rnd.choices(words, k=rnd.randint(1, 3)))) for i in range(30)]
    queries += [Query("q-red-cat", "red cat"), Query("q-cat", "cat")]
    queries.append(Query("q-none", "unicorn"))  # no known token: an empty result list
    return Corpus(docs), Queries(queries)


@pytest.mark.parametrize(("name", "options"), [
    ("bm25-okapi", {"tokenizer": "default"}),
    ("bm25-okapi", {"tokenizer": "default", "threshold": None, "default_k": 4}),  # index-order cut at k
    ("bm25", {}),  # lucene, doc-id ties, top 1000
    ("bm25", {"variant": "atire", "default_k": 3}),
])
def test_sharded_bm25_equals_the_single_index(ray_local, name: str, options: dict) -> None:

    corpus, queries = _text_corpus()
    r = get_retriever(name, **options)
    single = r.retrieve(corpus, queries, lang="en", top_k=None, show_progress=False)
    for shards in (2, 3):
        sharded = retrieve_bm25(executor(ray_local, shards), r, corpus, queries, lang="en", top_k=None)
        same_run(sharded, single)
    assert single["q-none"] == {} and any(len(single[q]) > 1 for q in single)


def test_capretrieval_zh_bm25_ray_equals_single_process(ray_local, data_root: Path) -> None:
    """What ``checks/F11-scale`` runs: saved aggregates, per-query values and the run are identical."""

    exp = Experiment("capretrieval/zh", "bm25-okapi", ("ndcg@10", "recall@100"))
    settings = Settings(data_root=data_root)
    one = run_experiment(exp, settings, show_progress=False)
    ray = run_experiment(exp, settings, show_progress=False, engine=Engine("ray", shards=2))
    for key in ("aggregate", "per_query", "by_type", "denominators", "curves", "judged"):
        assert ray.results[key] == one.results[key], key
    same_run(ray.run, one.run)
    assert ray.results["provenance"]["engine"]["kind"] == "ray"
    assert "engine" not in one.results["provenance"]


# --------------------------------------------------------------------------- metrics on Ray


def test_sharded_metrics_equal_evaluate(ray_local) -> None:

    rng = np.random.default_rng(11)
    qrels = Qrels.from_records((f"q{q}", f"d{d}", int(rng.integers(0, 3)))
                               for q in range(40) for d in rng.choice(30, size=int(rng.integers(0, 6)), replace=False))
    run = Run.from_records((f"q{q}", f"d{d}", float(rng.integers(0, 5)))  # tied scores: the one rule decides
                           for q in range(3, 45) for d in rng.choice(30, size=int(rng.integers(0, 12)), replace=False))
    universe = [f"q{q}" for q in range(42)]  # some queries missing from the run, some run queries outside
    types = {q: ("a" if i % 3 else None) for i, q in enumerate(universe)}
    metrics = ["ndcg@10", "recall@5", "mrr", "map", "median_rank", "set_f1", "pair_precision",
               "reject_f1", "judged@5", "ndcg@10(rel=2)", "nDCG@10"]
    local = evaluate(qrels, run, metrics, queries=universe, query_types=types)
    sharded = evaluate_sharded(executor(ray_local, shards=4), qrels, run, metrics, queries=universe,
                               query_types=types)
    assert sharded.to_json_dict() == local.to_json_dict()
    assert list(sharded) == list(local)


# --------------------------------------------------------------------------- dense on Ray


def _exact_vocabulary(dim: int = 256, n: int = 14) -> list[str]:
    """Words that the bag-of-words fake hashes to distinct buckets, so that texts of 1 or 4 distinct words
    encode to entries 1 or 0.5 and every inner product is exact (independent of summation order)."""

    enc, seen, words = BagOfWordsEncoder(dim), set(), []
    for i in range(200):
        w = f"w{i}"
        b = int(np.argmax(enc.encode([w], kind="passage")[0]))
        if b not in seen:
            seen.add(b)
            words.append(w)
        if len(words) == n:
            return words
    raise AssertionError("not enough distinct buckets")


def _dyadic_corpus() -> tuple[Corpus, Queries]:
    rnd = random.Random(5)
    words = _exact_vocabulary()
    docs = [Document(f"p{rnd.randrange(10**4):04d}-{i}", " ".join(rnd.sample(words, rnd.choice((1, 4)))))
            for i in range(90)]
    queries = Queries(Query(f"q{i}", " ".join(rnd.sample(words, rnd.choice((1, 4))))) for i in range(20))
    return Corpus(docs), queries


@pytest.mark.parametrize(("k", "threshold"), [(5, None), (1000, None), (7, 0.5), (None, 0.25)])
def test_sharded_dense_search_equals_single_search(ray_local, k: int | None, threshold: float | None) -> None:

    rng = np.random.default_rng(2)
    docs = rng.integers(-2, 3, size=(70, 8)).astype(np.float32) / 4  # small dyadic entries: exact products
    docs[10:15] = docs[3]  # identical documents: ties cut by document id
    queries = rng.integers(-2, 3, size=(12, 8)).astype(np.float32) / 4
    ids = [f"x{rng.integers(10**4)}-{i}" for i in range(70)]
    qids = [f"q{i}" for i in range(12)]
    single = DenseIndex(docs, ids).search(queries, qids, k=k, threshold=threshold)
    for shards in (2, 5):
        sharded = search_sharded(executor(ray_local, shards), docs, ids, queries, qids, k=k, threshold=threshold)
        same_run(sharded, single)


def test_a_shards_finegrain_error_reaches_the_caller_as_itself(ray_local) -> None:

    docs = np.ones((6, 4), dtype=np.float32)
    docs[4, 2] = np.nan  # found by the shard's DenseIndex, on a worker
    with pytest.raises(FinegrainError, match="the vector of document 'd4' has NaN"):
        search_sharded(executor(ray_local, 2), docs, [f"d{i}" for i in range(6)], np.ones((1, 4), dtype=np.float32),
                       ["q"], k=2, threshold=None)


def test_dense_retriever_on_ray_equals_local_and_shares_the_cache(ray_local, tmp_path: Path) -> None:
    """Ray Data encoding + sharded search give the local run; the embedding cache is one format: after a Ray
    run, a second Ray run and a local run encode nothing."""

    corpus, queries = _dyadic_corpus()

    def retriever(cache_dir: Path) -> DenseRetriever:
        return DenseRetriever(name="dense", encoder=BagOfWordsEncoder(256), cache_dir=str(cache_dir), default_k=6)

    reference = retriever(tmp_path / "local").retrieve(corpus, queries, lang="en", top_k=None, show_progress=False)
    ex = executor(ray_local, shards=3)
    first = retrieve_dense(ex, retriever(tmp_path / "ray"), corpus, queries, lang="en", top_k=None)
    same_run(first, reference)
    n_texts = len(corpus) + len(queries)
    assert ex.stats["texts"]["requested"] == n_texts and ex.stats["texts"]["misses"] > 0

    again = executor(ray_local, shards=2)
    second = retrieve_dense(again, retriever(tmp_path / "ray"), corpus, queries, lang="en", top_k=3)
    assert again.stats["texts"]["misses"] == 0 and again.stats["texts"]["hits"] > 0
    same_run(second, reference.cut(3))

    local = retriever(tmp_path / "ray")
    enc = local.get_encoder()
    same_run(local.retrieve(corpus, queries, lang="en", top_k=None, show_progress=False), reference)
    assert enc.n_encoded == 0 and local.last_retrieval["texts"]["misses"] == 0


def test_dense_prf_on_ray_equals_local(ray_local, tmp_path: Path) -> None:
    """Vector PRF is not dropped on Ray: the sharded run with prf_depth equals the local one, and differs from
    the plain search."""

    corpus, queries = _dyadic_corpus()

    def retriever(**kw: object) -> DenseRetriever:
        return DenseRetriever(name="dense", encoder=BagOfWordsEncoder(256), cache_dir=str(tmp_path / "c"),
                              default_k=6, **kw)  # type: ignore[arg-type]

    prf = {"prf_depth": 2, "rocchio_alpha": 0.5, "rocchio_beta": 1.0}
    reference = retriever(**prf).retrieve(corpus, queries, lang="en", top_k=None, show_progress=False)
    plain = retriever().retrieve(corpus, queries, lang="en", top_k=None, show_progress=False)
    assert any(dict(reference[q]) != dict(plain[q]) for q in reference)
    same_run(retrieve_dense(executor(ray_local, shards=3), retriever(**prf), corpus, queries, lang="en", top_k=None),
             reference)


# --------------------------------------------------------------------------- the command line


def test_cli_engine_ray_and_address_checks(ray_local, tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner


    runner = CliRunner()
    bad = runner.invoke(app, ["eval", "-d", "embedded/captions-en", "-r", "bm25", "-o", str(tmp_path / "x"),
                              "--address", "127.0.0.1:6379", "--quiet"])
    assert bad.exit_code != 0 and "engine" in bad.output and not (tmp_path / "x").exists()
    outs = {}
    for engine in ("local", "ray"):
        res = runner.invoke(app, ["eval", "-d", "embedded/captions-en", "-r", "bm25", "-m", "ndcg@10", "-m", "mrr",
                                  "-o", str(tmp_path / engine), "--engine", engine, "--quiet"])
        assert res.exit_code == 0, res.output
        outs[engine] = json.loads((tmp_path / engine / "results.json").read_text())
    assert outs["ray"]["aggregate"] == outs["local"]["aggregate"]
    assert outs["ray"]["per_query"] == outs["local"]["per_query"]
    assert (tmp_path / "ray" / "run.trec").read_text() == (tmp_path / "local" / "run.trec").read_text()


def test_hybrid_on_ray_runs_its_parts_sharded_and_fuses_as_locally(ray_local, tmp_path: Path) -> None:

    corpus, queries = _dyadic_corpus()
    hybrid = HybridRetriever(parts=(get_retriever("bm25"), DenseRetriever(
        name="dense", encoder=BagOfWordsEncoder(256), cache_dir=str(tmp_path))), depth=20)
    ex = executor(ray_local, shards=2)
    same_run(ex.retrieve(hybrid, corpus, queries, lang="en", top_k=5),
             hybrid.retrieve(corpus, queries, lang="en", top_k=5, show_progress=False))
    assert ex.notes == [] and ex.stats["texts"]["requested"] == len(corpus) + len(queries)
