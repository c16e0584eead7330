"""BM25 throughput: finegrain (okapi, lucene) vs bm25s (lucene; numba and numpy backends) vs rank_bm25, same tokens.

Corpus: N Chinese passages (default 100,000) recombined from the 3,024
CapRetrieval zh captions, seeded: passage i is a random caption followed by
1-3 random clauses (caption pieces cut after ，。！？；) of other captions.
Tokens: the CapRetrieval tokenizer preset, i.e. ``jieba.lcut_for_search`` on
the passages and ``jieba.lcut`` on the normalised queries. Passages are
tokenized once and cached (pickle in the temp folder; ``--no-cache`` rebuilds).

Queries: the 404 CapRetrieval zh queries, repeated ``--repeat`` times (default
10: 4,040 queries) for finegrain and bm25s; rank_bm25 scores the first
``--rank-bm25-queries`` (default 100) and its rate is per query, like the others.
Each rate is the best of ``--repeats`` (default 3) timed runs after a warm-up;
the systems take turns within each round, so a burst of load on the shared
machine hits all of them alike.

Timed in this one process, on the same token lists, one thread everywhere:

* index: building the index from the token lists (vocabulary included);
* top-10: finegrain ``search(k=10)`` (a Run, finegrain's tie rule; numba loops
  when numba is installed, else scipy products -- both rows are printed) and
  bm25s ``retrieve(k=10, n_threads=1)`` with its numba backend (its fastest)
  and its numpy backend;
* all scores: one dense score vector per query, each dropped before the next
  (a list of 4,040 vectors of 100,000 float64 would hold 3.2 GB; holding them
  measures page faults, not scoring): finegrain ``scores()``, bm25s
  ``get_scores()``, rank_bm25 ``get_scores()``;
* finegrain ``search(threshold=1e-3)``, the paper's retrieval, for reference.

The numba JIT cost is printed apart: finegrain's compiled code is cached on disk
(numba ``cache=True``), so the first search in a fresh process loads it; the
"first search" figure is that load (or the compilation, on a first run).

Peak memory: a second, separate pass per system under ``tracemalloc``:
the peak of traced allocations (Python objects and numpy arrays; not C++
temporaries inside scipy) above what was allocated before, while building the
index and answering 404 queries (top-10 for finegrain/bm25s, all scores for
rank_bm25). The whole process's maximum resident set size is printed too.

The report goes to this script's section of ``docs/results/scale.md`` (``--markdown``).

Usage::

    .venv/bin/python benchmarks/bm25_throughput.py [--passages 100000] [--repeat 10] [--seed 0]
        [--markdown docs/results/scale.md]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import pickle
import random
import re
import resource
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np
from _results import Recorder, add_markdown_option

REPO = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    root = Path(os.environ.get("FINEGRAIN_DATA", REPO.parent / "shared" / "data"))
    folder = root / "capretrieval" / "zh"
    if not (folder / "candidates.jsonl").is_file():
        sys.exit(f"error: CapRetrieval zh not found at {folder} (set FINEGRAIN_DATA)")
    return folder


def iter_passages(captions: list[str], n: int, seed: int) -> Iterator[str]:
    """The n recombined passages, one at a time (benchmarks/scale.py streams them)."""
    rng = random.Random(seed)
    clauses = [c for cap in captions for c in re.split(r"(?<=[，。！？；])", cap) if c.strip()]
    for _ in range(n):
        yield captions[rng.randrange(len(captions))] + "".join(rng.choice(clauses) for _ in range(rng.randint(1, 3)))


def build_passages(captions: list[str], n: int, seed: int) -> list[str]:
    return list(iter_passages(captions, n, seed))


def _tokenize_chunk(texts: list[str]) -> list[list[str]]:
    from finegrain.text import JiebaTokenizer

    return JiebaTokenizer.capretrieval().documents(texts)


def tokenize_passages(passages: list[str], use_cache: bool) -> tuple[list[list[str]], float, str]:
    import jieba

    digest = hashlib.sha1("\n".join(passages).encode()).hexdigest()[:16]
    cache = Path(tempfile.gettempdir()) / "finegrain-bench" / f"bm25-zh-{len(passages)}-{digest}-jieba{jieba.__version__}.pkl"
    if use_cache and cache.is_file():
        with cache.open("rb") as f:
            return pickle.load(f), 0.0, f"cached {cache}"
    started = time.perf_counter()
    chunks = [passages[i : i + 2000] for i in range(0, len(passages), 2000)]
    with Pool(os.cpu_count() or 1) as pool:
        tokens = [t for part in pool.map(_tokenize_chunk, chunks) for t in part]
    seconds = time.perf_counter() - started
    cache.parent.mkdir(parents=True, exist_ok=True)
    with cache.open("wb") as f:
        pickle.dump(tokens, f, protocol=pickle.HIGHEST_PROTOCOL)
    return tokens, seconds, f"tokenized with {os.cpu_count()} processes, cached to {cache}"


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    gc.collect()
    started = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - started


def rate(fn: Callable[[], Any], n: int, repeats: int) -> float:
    """Queries per second: the best of ``repeats`` runs of ``fn`` (which answers n queries)."""
    return max(n / timed(fn)[1] for _ in range(repeats))


def traced_peak(fn: Callable[[], Any]) -> float:
    """Peak traced allocation in MB above the level before ``fn`` (the result is dropped after)."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    out = fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del out
    gc.collect()
    return (peak - base) / 2**20


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passages", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=10, help="times the 404 queries are repeated")
    ap.add_argument("--rank-bm25-queries", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per measurement; the best counts")
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--skip-memory", action="store_true")
    add_markdown_option(ap, "scale.md")
    args = ap.parse_args(argv)
    with Recorder(__file__, args.markdown, argv) as rec:
        rec.status = run(args)
    return rec.status


def run(args: argparse.Namespace) -> int:
    """Tokenize the recombined corpus, time every system, print the table and the checks."""
    import bm25s
    from rank_bm25 import BM25Okapi

    from finegrain.retrieve.bm25 import BM25
    from finegrain.text import JiebaTokenizer

    folder = data_dir()
    captions = [json.loads(x)["text"] for x in (folder / "candidates.jsonl").read_text(encoding="utf-8").splitlines()]
    query_texts = [json.loads(x)["query"] for x in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    passages = build_passages(captions, args.passages, args.seed)
    docs, tok_s, how = tokenize_passages(passages, not args.no_cache)
    ids = [f"p{i}" for i in range(len(docs))]
    base_queries = JiebaTokenizer.capretrieval().queries(query_texts)
    queries = base_queries * args.repeat
    qids = [f"q{i}" for i in range(len(queries))]
    n_tokens = sum(map(len, docs))
    print(f"corpus: {len(docs):,} passages from {len(captions):,} captions (seed {args.seed}), "
          f"{n_tokens:,} tokens, {n_tokens / len(docs):.1f} per passage; {how}"
          + (f" in {tok_s:.1f} s" if tok_s else ""))
    print(f"queries: {len(base_queries)} x {args.repeat} = {len(queries):,}; "
          f"rank_bm25 on {args.rank_bm25_queries}; best of {args.repeats} runs")
    import scipy

    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"bm25s {bm25s.__version__}, {os.cpu_count()} CPUs; one thread everywhere\n")

    rows: dict[str, dict[str, Any]] = {}
    timers: dict[tuple[str, str], tuple[Callable[[], Any], int]] = {}  # (system, column) -> (fn, queries)

    def drain(it: Any) -> None:
        for _ in it:  # each score vector is dropped before the next is computed
            pass

    # ---- finegrain (numba loops when numba is installed; the scipy rows force the fallback)
    from finegrain.retrieve.bm25.kernels import load_kernels
    from finegrain.retrieve.bm25.search import dense_scores, search_index

    has_numba = load_kernels() is not None
    fg: dict[str, Any] = {}
    for variant in ("okapi", "lucene"):
        bm, t_index = timed(lambda: BM25(variant).index(docs, ids))  # noqa: B023
        fg[variant] = bm
        idx = bm._require()
        backends = ("numba", "scipy") if has_numba else ("scipy",)
        for backend in backends:
            name = f"finegrain {variant}" + ("" if backend == "numba" or not has_numba else " (scipy)")
            rows[name] = {"index": t_index if backend == backends[0] else None}

            def top(idx: Any = idx, backend: str = backend) -> Any:
                return search_index(idx, queries, qids, 10, None, "doc-id", "bm25", False, backend)

            if backend == "numba":
                first = timed(lambda: search_index(idx, queries[:1], qids[:1], 10, None, "doc-id", "x", False, "numba"))[1]  # noqa: B023
                rows[name]["jit"] = first
                timers[(name, "all")] = (lambda bm=bm: drain(bm.scores(q) for q in queries), len(queries))
            else:
                timers[(name, "all")] = (  # dense_scores' numpy fallback
                    lambda idx=idx: _without_numba(lambda: drain(dense_scores(idx, q) for q in queries)), len(queries))
            timers[(name, "top10")] = (top, len(queries))
            top()  # warm-up
        thr_name = f"finegrain {variant}"
        rows[thr_name]["threshold"] = (
            rate(lambda bm=bm: bm.search(queries, qids, threshold=1e-3, show_progress=False), len(queries), 1),
            bm.search(base_queries, qids[: len(base_queries)], threshold=1e-3, show_progress=False).n_entries
            / len(base_queries),
        )

    # ---- bm25s, both backends
    def bm25s_index(backend: str) -> Any:
        r = bm25s.BM25(method="lucene", k1=1.5, b=0.75, backend=backend)
        r.index(docs, show_progress=False)
        return r

    refs: dict[str, Any] = {}
    for backend in ("numba", "numpy"):
        name = f"bm25s lucene {backend}"
        ref, t_index = timed(lambda: bm25s_index(backend))  # noqa: B023
        refs[backend] = ref
        first = timed(lambda: ref.retrieve(queries[:1], k=10, show_progress=False, n_threads=1))[1]  # noqa: B023
        rows[name] = {"index": t_index, "jit": first if backend == "numba" else None}
        ref.retrieve(queries[:200], k=10, show_progress=False, n_threads=1)  # warm-up
        drain(ref.get_scores(q) for q in queries[:50] if q)
        timers[(name, "top10")] = (
            lambda ref=ref: ref.retrieve(queries, k=10, show_progress=False, n_threads=1), len(queries))
        # bm25s' get_scores refuses an empty token list; those (few) queries are skipped, which favours bm25s.
        timers[(name, "all")] = (lambda ref=ref: drain(ref.get_scores(q) for q in queries if q), len(queries))

    # ---- rank_bm25 (all scores only)
    rb, t_index = timed(lambda: BM25Okapi(docs))
    sub = queries[: args.rank_bm25_queries]
    rows["rank_bm25 BM25Okapi"] = {"index": t_index, "top10": None}
    timers[("rank_bm25 BM25Okapi", "all")] = (lambda: drain(rb.get_scores(q) for q in sub), len(sub))

    # ---- timed rounds: every measurement once per round, the best round counts
    loads = [os.getloadavg()]
    for rnd in range(args.repeats):
        for (name, col), (fn, n) in timers.items():
            if name.startswith("rank_bm25") and rnd > 0:
                continue  # one slow run is enough
            rows[name][col] = max(rows[name].get(col) or 0.0, n / timed(fn)[1])
        loads.append(os.getloadavg())

    # ---- checks: same results as the references
    sample = [q for q in base_queries if q][:200]
    sids = [f"s{i}" for i in range(len(sample))]
    # The synthetic passages repeat captions, so many documents tie: compare the top-10 score lists
    # (bm25s keeps float32), not the document sets.
    got = fg["lucene"].search(sample, sids, k=10, show_progress=False)
    _, ref_scores = refs["numba"].retrieve(sample, k=10, show_progress=False, n_threads=1)
    agree = np.mean([
        np.allclose(sorted(got[f"s{i}"].values(), reverse=True), ref_scores[i][: len(got[f"s{i}"])], rtol=1e-5)
        for i in range(len(sample))
    ])
    worst = max(float(np.max(np.abs(fg["okapi"].scores(q) - rb.get_scores(q)) / np.maximum(np.abs(rb.get_scores(q)), 1e-300)))
                for q in sub[:20])
    idx = fg["okapi"]._require()
    same_bits = has_numba and (
        search_index(idx, sample, sids, 10, None, "doc-id", "x", False, "numba").to_dict()
        == search_index(idx, sample, sids, 10, None, "doc-id", "x", False, "scipy").to_dict())
    del rb, fg, refs, timers

    # ---- memory, one system at a time
    if not args.skip_memory:
        mq, mids = base_queries, qids[: len(base_queries)]
        for variant in ("okapi", "lucene"):
            rows[f"finegrain {variant}"]["mem"] = traced_peak(
                lambda: BM25(variant).index(docs, ids).search(mq, mids, k=10, show_progress=False))  # noqa: B023
        for backend in ("numba", "numpy"):
            rows[f"bm25s lucene {backend}"]["mem"] = traced_peak(
                lambda: bm25s_index(backend).retrieve(mq, k=10, show_progress=False, n_threads=1))  # noqa: B023
        rows["rank_bm25 BM25Okapi"]["mem"] = traced_peak(
            lambda: [BM25Okapi(docs).get_scores(q) for q in mq[:20]])

    # ---- report
    def f(x: float | None, fmt: str) -> str:
        return "-" if x is None else format(x, fmt)

    print(f"{'system':<28}{'index s':>9}{'first search s':>16}{'top-10 q/s':>12}{'all-scores q/s':>16}{'peak MB':>9}")
    for name, r in rows.items():
        print(f"{name:<28}{f(r['index'], '.2f'):>9}{f(r.get('jit'), '.3f'):>16}{f(r.get('top10'), ',.0f'):>12}"
              f"{f(r.get('all'), ',.0f'):>16}{f(r.get('mem'), ',.0f'):>9}")
    best_top = max(rows["bm25s lucene numba"]["top10"], rows["bm25s lucene numpy"]["top10"])
    best_all = max(rows["bm25s lucene numba"]["all"], rows["bm25s lucene numpy"]["all"])
    fo, fl, rb_ = rows["finegrain okapi"], rows["finegrain lucene"], rows["rank_bm25 BM25Okapi"]
    print()
    print(f"finegrain okapi  search(threshold=1e-3), the paper's retrieval: {fo['threshold'][0]:,.0f} q/s, "
          f"{fo['threshold'][1]:,.0f} results per query")
    print(f"top-10 vs bm25s at its fastest backend ({best_top:,.0f} q/s): "
          f"finegrain okapi {fo['top10'] / best_top:.2f}x, lucene {fl['top10'] / best_top:.2f}x")
    print(f"all scores vs bm25s at its fastest backend ({best_all:,.0f} q/s): "
          f"finegrain okapi {fo['all'] / best_all:.2f}x, lucene {fl['all'] / best_all:.2f}x")
    print(f"vs rank_bm25 (all scores, same formula): finegrain okapi {fo['all'] / rb_['all']:.0f}x, "
          f"top-10 {fo['top10'] / rb_['all']:.0f}x; index build time {fo['index'] / rb_['index']:.1f}x rank_bm25's")
    print(f"checks: okapi = rank_bm25 to {worst:.1e} relative; lucene top-10 scores = bm25s' (rtol 1e-5) for "
          f"{agree:.1%} of queries; numba run = scipy run (same bits): {same_bits if has_numba else 'no numba'}")
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process max RSS: {usage:,.0f} MB (includes the tokenized corpus and every system above); "
          "peak MB = tracemalloc peak above baseline while indexing + answering 404 queries")
    print("load average (1, 5, 15 min) before and after each timed round: "
          + "; ".join(", ".join(f"{x:.2f}" for x in la) for la in loads) + f" on {os.cpu_count()} CPUs")
    return 0


def _without_numba(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` with finegrain's numba kernels turned off (``FINEGRAIN_BM25_NUMBA=0``)."""
    old = os.environ.get("FINEGRAIN_BM25_NUMBA")
    os.environ["FINEGRAIN_BM25_NUMBA"] = "0"
    try:
        return fn()
    finally:
        if old is None:
            del os.environ["FINEGRAIN_BM25_NUMBA"]
        else:
            os.environ["FINEGRAIN_BM25_NUMBA"] = old


if __name__ == "__main__":
    sys.exit(main())
