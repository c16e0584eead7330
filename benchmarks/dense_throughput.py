"""Dense retrieval throughput: encoding, exact search (numpy vs FAISS), and the embedding cache.

Three parts, each printing its own table (``--parts encode,search,cache``):

* **encode** — passages/s and queries/s of each encoder in ``--encoders``
  (default ``e5``; also ``minilm``, ``use-m3`` when installed) on the first
  ``--encode-n`` CapRetrieval captions and queries of each language,
  lower-cased as the retriever does, with no cache. Best of ``--repeats``.
* **search** — latency of :class:`finegrain.retrieve.dense.index.DenseIndex`
  over random unit 384-d float32 vectors (seeded) at each of ``--sizes``
  documents (default 10k, 100k, 1M: 1M x 384 x 4 B = 1.5 GB), ``--queries``
  queries (default 1,000): top-10, top-1000 and a threshold (score >= 0.2,
  about 3 in 100,000 documents for random vectors), numpy blocks vs
  ``faiss.IndexFlatIP``; index build time; and which backend ``auto`` picks.
* **cache** — the e5 retriever on ``capretrieval/zh`` (``--cache-dataset``)
  twice, into a fresh cache folder: the first run encodes 3,024 captions and
  404 queries, the second reads them back. In process by default (two new
  retriever objects, as two runs would build them); ``--cli`` times two
  ``finegrain eval --retriever e5`` processes instead (start-up included).

The report goes to this script's section of ``docs/results/scale.md`` (``--markdown``).

Usage::

    .venv/bin/python benchmarks/dense_throughput.py [--parts encode,search,cache] [--sizes 10000,100000,1000000]
        [--markdown docs/results/scale.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _results import Recorder, add_markdown_option

REPO = Path(__file__).resolve().parents[1]


def _data_root() -> Path:
    env = os.environ.get("FINEGRAIN_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def _table(title: str, header: list[str], rows: list[list[object]]) -> None:
    cells = [[str(c) for c in header]] + [[c if isinstance(c, str) else f"{c:,.3f}" if isinstance(c, float)
                                          else f"{c:,}" for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n{title}")
    for j, r in enumerate(cells):
        print("  " + "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if j == 0:
            print("  " + "  ".join("-" * w for w in widths))


# --------------------------------------------------------------------------- encode


def bench_encode(encoders: list[str], n: int, repeats: int) -> None:
    from finegrain.datasets import load_dataset
    from finegrain.retrieve.dense.encoders import get_encoder
    from finegrain.settings import Settings

    rows = []
    for lang in ("zh", "en"):
        ds = load_dataset(f"capretrieval/{lang}", Settings(data_root=_data_root()))
        passages = [" ".join(t.lower().split()) for t in ds.corpus.texts[:n]]
        queries = [" ".join(t.lower().split()) for t in ds.queries.texts[:n]]
        for name in encoders:
            try:
                enc = get_encoder(name)
                enc.encode(passages[:4], kind="passage")  # load the model, warm up
            except Exception as e:  # noqa: BLE001 - an encoder that is not installed is reported, not fatal
                rows.append([name, lang, f"unavailable: {str(e).splitlines()[0][:60]}", "", ""])
                continue
            rates = {}
            for kind, texts in (("passage", passages), ("query", queries)):
                best = float("inf")
                for _ in range(repeats):
                    t = time.perf_counter()
                    enc.encode(texts, kind=kind)  # type: ignore[arg-type]
                    best = min(best, time.perf_counter() - t)
                rates[kind] = len(texts) / best
            mean_len = sum(map(len, passages)) / len(passages)
            rows.append([name, lang, f"{mean_len:.0f} chars", rates["passage"], rates["query"]])
    _table(f"encoding throughput (texts/s, best of {repeats}; {n} captions and {n} queries per language, no cache)",
           ["encoder", "lang", "mean passage", "passages/s", "queries/s"], rows)


# --------------------------------------------------------------------------- search


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.standard_normal((n, d), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def bench_search(sizes: list[int], n_queries: int, dim: int, seed: int) -> None:
    import faiss  # noqa: F401 - imported before timing builds

    from finegrain.retrieve.dense.index import AUTO_FAISS_MIN_DOCS, DenseIndex

    rng = np.random.default_rng(seed)
    queries = _unit(rng, n_queries, dim)
    qids = [f"q{i}" for i in range(n_queries)]
    rows = []
    for n in sizes:
        docs = _unit(rng, n, dim)
        ids = [f"d{i}" for i in range(n)]
        runs = {}
        for backend in ("numpy", "faiss"):
            t = time.perf_counter()
            index = DenseIndex(docs, ids, backend=backend)
            build = time.perf_counter() - t
            index.search(queries[:8], qids[:8], k=10)  # warm up (threads, page faults)
            for label, kw in (("top-10", {"k": 10}), ("top-1000", {"k": 1000}), ("score>=0.2", {"threshold": 0.2})):
                t = time.perf_counter()
                run = index.search(queries, qids, **kw)
                s = time.perf_counter() - t
                runs[(backend, label)] = run
                rows.append([f"{n:,}", backend, label, build, s, 1000 * s / n_queries, run.n_entries / n_queries])
            del index
        for label in ("top-10", "top-1000"):
            a, b = runs[("numpy", label)], runs[("faiss", label)]
            same = sum(a.ranked(q) == b.ranked(q) for q in qids[:200])
            overlap = np.mean([len(set(a[q]) & set(b[q])) / max(len(a[q]), 1) for q in qids[:200]])
            diff = max(abs(a[q][d] - b[q][d]) for q in qids[:200] for d in set(a[q]) & set(b[q]))
            print(f"  {n:,} docs, {label}, first 200 queries: identical rankings {same}/200, "
                  f"document overlap {overlap:.4f}, max score difference {diff:.1e} (float32 rounding)")
        del docs, runs
    auto = f"faiss from {AUTO_FAISS_MIN_DOCS:,} docs" if AUTO_FAISS_MIN_DOCS else "numpy at every size"
    title = f"exact search, {n_queries:,} random unit {dim}-d queries (auto: {auto})"
    _table(title, ["docs", "backend", "search", "build s", "search s", "ms/query", "results/query"], rows)


# --------------------------------------------------------------------------- cache


def bench_cache(dataset: str, cli: bool) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="fg-dense-cache-"))
    rows = []
    try:
        if cli:
            env = {**os.environ, "FINEGRAIN_CACHE": str(tmp / "cache")}
            exe = str(REPO / ".venv" / "bin" / "finegrain")
            for i in (1, 2):
                cmd = [exe, "eval", "--dataset", dataset, "--retriever", "e5", "--metrics", "ndcg@10",
                       "--out", str(tmp / f"out{i}"), "--quiet"]
                t = time.perf_counter()
                subprocess.run(cmd, check=True, env=env, cwd=REPO, stdout=subprocess.DEVNULL)
                wall = time.perf_counter() - t
                import json

                res = json.loads((tmp / f"out{i}" / "results.json").read_text(encoding="utf-8"))
                last = res["provenance"]["retriever"]["last_retrieval"]
                rows.append([f"run {i} (finegrain eval)", wall, last["encode_seconds"], last["texts"]["misses"],
                             last["texts"]["hits"], res["aggregate"]["ndcg@10"]])
        else:
            from finegrain.datasets import load_dataset
            from finegrain.evaluate.evaluate import evaluate
            from finegrain.retrieve.registry import get_retriever
            from finegrain.settings import Settings

            ds = load_dataset(dataset, Settings(data_root=_data_root()))
            for i in (1, 2):
                r = get_retriever("e5", cache_dir=str(tmp / "cache"))
                t = time.perf_counter()
                run = r.retrieve(ds.corpus, ds.queries, lang=ds.lang, top_k=None, show_progress=False)
                wall = time.perf_counter() - t
                ndcg = evaluate(ds.qrels, run, ["ndcg@10"], queries=list(ds.queries)).aggregate()["ndcg@10"]
                last = r.last_retrieval or {}
                rows.append([f"run {i} (in process)", wall, last["encode_seconds"], last["texts"]["misses"],
                             last["texts"]["hits"], ndcg])
        size = sum(p.stat().st_size for p in (tmp / "cache").rglob("*") if p.is_file())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _table(f"embedding cache: e5 on {dataset}, fresh cache folder ({size / 2**20:.1f} MiB after the runs)",
           ["run", "wall s", "encode s", "encoded", "from cache", "nDCG@10"], rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default="encode,search,cache")
    ap.add_argument("--encoders", default="e5")
    ap.add_argument("--encode-n", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache-dataset", default="capretrieval/zh")
    ap.add_argument("--cli", action="store_true", help="time two finegrain eval processes for the cache part")
    add_markdown_option(ap, "scale.md")
    args = ap.parse_args()
    with Recorder(__file__, args.markdown):
        run(args)


def run(args: argparse.Namespace) -> None:
    """Time each part of --parts and print its rows with the load average."""
    parts = args.parts.split(",")
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}, "
          f"numpy {np.__version__}")
    if "encode" in parts:
        bench_encode(args.encoders.split(","), args.encode_n, args.repeats)
    if "search" in parts:
        bench_search([int(s) for s in args.sizes.split(",")], args.queries, args.dim, args.seed)
    if "cache" in parts:
        bench_cache(args.cache_dataset, args.cli)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak resident memory of this process: {peak:,.0f} MiB; load average now {os.getloadavg()[0]:.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
