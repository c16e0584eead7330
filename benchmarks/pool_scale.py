"""Pooling at scale: 100 runs x 10,000 queries x depth 100 (``finegrain.build.pool``).

Seeded synthetic runs with a realistic overlap: every query has a consensus
list of 600 candidates; each system ranks it with its own noise (a standard
deviation between 20 and 300 positions) and keeps its top 90, then adds 10
documents only it retrieves (what a different model family finds). With 100
systems that gives about 1,500 distinct documents per query in the depth-100
pool, close to TREC pools (1,700 per topic for 71 runs at depth 100 in TREC-8).
Qrels judge 30 documents per query (25 of the consensus head, 5 elsewhere).

Timed, on the same data:

- ranking the runs (``Run.order``: the one ranking rule, computed once per run
  and cached on it; every evaluation of these runs pays it too);
- pooling (:func:`finegrain.build.pool.pool_table`: union, counts, best ranks,
  judged marks and the seeded judging order, as columns);
- with ``--small`` (or ``--items``) also building the :class:`Pool` objects
  and writing the pool file, which is Python objects per item and meant for
  pools a person judges, not for millions of items.

Peak memory is the process's peak resident size after each phase (the runs
themselves hold most of it) and the pooling step's own peak measured by
tracemalloc (numpy reports its buffers to it). Usage::

    .venv/bin/python benchmarks/pool_scale.py            # 100 runs x 10,000 queries x depth 100
    .venv/bin/python benchmarks/pool_scale.py --small    # 10 runs x 500 queries, plus Pool objects and the file
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

CONSENSUS = 600  # candidates per query every system ranks
OWN_SHARE = 0.1  # share of each system's top depth only it retrieves


def build_runs(n_runs: int, n_queries: int, depth: int, n_docs: int, seed: int) -> tuple[list, object]:
    """``n_runs`` seeded runs of ``depth`` results per query over one corpus, and qrels."""
    from finegrain.types import Qrels, Run

    rng = np.random.default_rng(seed)
    half = n_docs // 2  # consensus candidates from the first half of the corpus, own finds from the second
    vocab = tuple(f"doc{i:08d}" for i in range(n_docs))
    qids = tuple(f"q{i}" for i in range(n_queries))
    start = rng.integers(0, half, size=(n_queries, 1))
    cand = (start + np.arange(CONSENSUS) * 7919) % half  # distinct per query: 7919 is prime to half
    n_own = max(1, int(round(depth * OWN_SHARE)))
    n_cons = depth - n_own
    offsets = np.arange(0, n_queries * depth + 1, depth, dtype=np.int64)
    position = -np.arange(CONSENSUS, dtype=np.float32)
    runs = []
    for s in range(n_runs):
        sigma = np.float32(20 + 280 * rng.random())
        noisy = position + rng.standard_normal((n_queries, CONSENSUS), dtype=np.float32) * sigma
        top = np.argpartition(-noisy, n_cons - 1, axis=1)[:, :n_cons]
        docs_c = np.take_along_axis(cand, top, axis=1)
        scores_c = np.take_along_axis(noisy, top, axis=1).astype(np.float64)
        j = np.arange(n_own)
        own = half + ((np.arange(n_queries)[:, None] * 1009 + s * n_own + j) * 7) % (n_docs - half)
        lo, hi = scores_c.min(axis=1, keepdims=True), scores_c.max(axis=1, keepdims=True)
        scores_o = lo + (hi - lo) * rng.random((n_queries, n_own))
        docs = np.concatenate([docs_c, own], axis=1).reshape(-1)
        scores = np.concatenate([scores_c, scores_o], axis=1).reshape(-1)
        runs.append(Run(qids, offsets, docs, vocab, scores, name=f"sys{s:03d}"))
    judged = np.concatenate([cand[:, :25], half + rng.integers(0, n_docs - half, size=(n_queries, 5))], axis=1)
    grades = rng.choice([0, 0, 0, 1, 1, 2], size=judged.shape)
    records = []
    for qi, q in enumerate(qids):
        for d, g in dict(zip(judged[qi].tolist(), grades[qi].tolist())).items():
            records.append((q, vocab[d], g))
    return runs, Qrels.from_records(records)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--docs", type=int, default=1_000_000, help="corpus size")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--small", action="store_true", help="10 runs x 500 queries, and build the Pool and its file")
    ap.add_argument("--items", action="store_true", help="also build the Pool objects and write the file")
    args = ap.parse_args(argv)
    if args.small:
        args.runs, args.queries, args.items = 10, 500, True

    from finegrain.build.pool import pool_table

    t = time.perf_counter()
    runs, qrels = build_runs(args.runs, args.queries, args.depth, args.docs, args.seed)
    print(f"built {args.runs} runs x {args.queries:,} queries x {args.depth} results "
          f"({sum(r.n_entries for r in runs):,} entries) and {qrels.n_entries:,} judgements "
          f"in {time.perf_counter() - t:.1f} s; peak RSS {peak_rss_mb():,.0f} MB")

    t, c = time.perf_counter(), time.process_time()
    for r in runs:
        r.order  # noqa: B018  the one ranking rule, cached on the run
    rank_s, rank_cpu = time.perf_counter() - t, time.process_time() - c
    print(f"ranking the runs (Run.order, once per run): {rank_s:.2f} s ({rank_cpu:.2f} s CPU); "
          f"peak RSS {peak_rss_mb():,.0f} MB")

    tracemalloc.start()
    t, c = time.perf_counter(), time.process_time()
    table = pool_table(runs, depth=args.depth, qrels=qrels, seed=args.seed)
    pool_s, pool_cpu = time.perf_counter() - t, time.process_time() - c
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    n = len(table)
    print(f"pooling: {pool_s:.2f} s ({pool_cpu:.2f} s CPU) for {n:,} items ({n / max(args.queries, 1):,.0f} per query, "
          f"{table.judged.mean() * 100 if n else 0:.1f}% judged); pooling's own peak {traced / 2**20:,.0f} MB; "
          f"peak RSS {peak_rss_mb():,.0f} MB")
    unique = table.unique_counts()
    print(f"unique contribution per system: min {unique.min():,}, median {int(np.median(unique)):,}, "
          f"max {unique.max():,}")
    print(f"total (ranking + pooling): {rank_s + pool_s:.2f} s")

    if args.items:
        from finegrain.build.pool import pool_runs
        from finegrain.build.pool_file import write_pool

        t = time.perf_counter()
        pool = pool_runs(runs, depth=args.depth, qrels=qrels, seed=args.seed)
        build_s = time.perf_counter() - t
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            path = write_pool(pool, Path(tmp) / "pool.jsonl")
            write_s = time.perf_counter() - t
            size = path.stat().st_size
        print(f"Pool objects (pool_runs): {build_s:.2f} s; write_pool: {write_s:.2f} s, {size / 2**20:,.1f} MB; "
              f"peak RSS {peak_rss_mb():,.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
