"""Dense search at scale: a FAISS IVF index over 1M 384-d vectors next to exact numpy search.

The vectors are synthetic but shaped like sentence embeddings: ``--clusters``
random unit centres (default one per 50 documents, seeded), each document
the normalised sum of a centre and Gaussian noise of norm ``--noise`` (1.25:
cosine to its centre about 0.62, to an unrelated vector about 0); each query
is made the same way, so its nearest documents are partly in its own small
cluster and partly scattered: IVF's recall then climbs with nprobe as it
does on real embeddings instead of being 1.0 at once (fewer, larger clusters
make the task trivial; more noise makes it hopeless). No model and no
download: the data is generated in seconds.

In one process and on the same vectors it prints:

- the anchor: exact search (:class:`DenseIndex`, ``backend="numpy"``), its
  queries/s; its top ``--k`` is the truth for recall;
- ``DenseIndex(backend="faiss", faiss_kind="ivf")``: build time (training
  on ``--train-size`` sampled vectors, then adding all), the index's payload
  and the process's resident memory, and for each ``--nprobe`` value the
  queries/s and recall@k against exact search (share of the exact top k
  found, averaged over queries);
- with ``--hnsw``, the same for HNSW (build, and each ``--ef-search``) —
  slow to build on 2 cores at 1M, so off by default.

The load average is printed at the start and the end: the machine may be
shared. The report goes to this script's section of ``docs/results/scale.md`` (``--markdown``). Usage::

    .venv/bin/python benchmarks/dense_scale.py [--docs 1000000] [--dim 384] [--queries 1000] \\
        [--nlist 1000] [--nprobe 1,4,16,64,256] [--hnsw --ef-search 32,128] [--markdown docs/results/scale.md]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

import numpy as np
from _results import Recorder, add_markdown_option


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} CPUs)"


def rss_gb() -> float:
    """Resident memory of this process now (GB)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 2**20
    return float("nan")


def centres_of(clusters: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    """``clusters`` random unit vectors (float32)."""
    centres = rng.standard_normal((clusters, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    return centres


def synthesize(
    n: int, centres: np.ndarray, rng: np.random.Generator, noise: float = 1.0, chunk: int = 100_000
) -> np.ndarray:
    """``n`` unit vectors, each a random centre plus Gaussian noise of norm about ``noise`` (float32)."""
    clusters, dim = centres.shape
    out = np.empty((n, dim), dtype=np.float32)
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        jitter = rng.standard_normal((b - a, dim)).astype(np.float32) * np.float32(noise / np.sqrt(dim))
        block = centres[rng.integers(0, clusters, size=b - a)] + jitter
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[a:b] = block
    return out


def recall_at_k(approx, exact, qids: list[str], k: int) -> float:
    return float(np.mean([len(set(approx.ranked(q, k)) & set(exact.ranked(q, k))) / k for q in qids]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--clusters", type=int, default=None, help="default: one per 50 documents")
    ap.add_argument("--noise", type=float, default=1.25, help="noise norm relative to the centre's (1.25: cosine 0.62)")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--nlist", type=int, default=None, help="IVF cells (default about sqrt(docs))")
    ap.add_argument("--train-size", type=int, default=None, help="IVF training sample (default 64 per cell)")
    ap.add_argument("--nprobe", default="1,4,16,64,256")
    ap.add_argument("--hnsw", action="store_true", help="also build HNSW (slow at 1M on 2 cores)")
    ap.add_argument("--hnsw-m", type=int, default=32)
    ap.add_argument("--ef-search", default="32,128")
    ap.add_argument("--seed", type=int, default=0)
    add_markdown_option(ap, "scale.md")
    args = ap.parse_args(argv)
    with Recorder(__file__, args.markdown, argv) as rec:
        rec.status = run(args)
    return rec.status


def run(args: argparse.Namespace) -> int:
    """Make the vectors, time exact search and IVF (and HNSW), print queries/s and recall."""
    from finegrain.retrieve.dense.index import DenseIndex

    n, d, k = args.docs, args.dim, args.k
    args.clusters = args.clusters or max(1, n // 50)
    nlist = args.nlist or max(1, round(np.sqrt(n)))
    train_size = args.train_size or min(n, 64 * nlist)
    print(f"{n:,} documents x {d} dims, {args.clusters:,} clusters, noise {args.noise:g}, {args.queries:,} queries, "
          f"top {k}, seed {args.seed}")
    print(f"start: {load()}")
    rng = np.random.default_rng(args.seed)
    t = time.perf_counter()
    centres = centres_of(args.clusters, d, rng)
    docs = synthesize(n, centres, rng, args.noise)
    queries = synthesize(args.queries, centres, np.random.default_rng(args.seed + 1), args.noise)
    ids = [f"d{i:07d}" for i in range(n)]
    qids = [f"q{i}" for i in range(args.queries)]
    print(f"vectors made in {time.perf_counter() - t:.1f} s ({docs.nbytes / 2**30:.2f} GB); process {rss_gb():.2f} GB")

    rows: list[list[str]] = []
    # ---- the anchor: exact numpy search
    exact_index = DenseIndex(docs, ids, backend="numpy")
    gc.collect()
    t = time.perf_counter()
    exact = exact_index.search(queries, qids, k=k)
    t_exact = time.perf_counter() - t
    rows.append(["exact (numpy)", "-", "-", f"{args.queries / t_exact:,.0f}", "1.000", f"{t_exact:.2f}"])
    del exact_index

    # ---- IVF
    rss0 = rss_gb()
    gc.collect()
    t = time.perf_counter()
    ivf = DenseIndex(docs, ids, backend="faiss", faiss_kind="ivf", nlist=nlist, train_size=train_size)
    t_build = time.perf_counter() - t
    payload = (n * d * 4 + n * 8 + nlist * d * 4) / 2**30
    build = f"{t_build:.1f} s"
    print(f"\nIVF build (nlist {nlist:,}, trained on {train_size:,} vectors, then {n:,} added): {build}; "
          f"index payload {payload:.2f} GB; process {rss0:.2f} -> {rss_gb():.2f} GB")
    for nprobe in [int(x) for x in args.nprobe.split(",") if x]:
        gc.collect()
        t = time.perf_counter()
        got = ivf.search(queries, qids, k=k, nprobe=nprobe)
        dt = time.perf_counter() - t
        rows.append([f"faiss ivf nprobe={nprobe}", build, f"{payload:.2f}", f"{args.queries / dt:,.0f}",
                     f"{recall_at_k(got, exact, qids, k):.3f}", f"{dt:.2f}"])
        build = ""
    del ivf

    # ---- HNSW (optional)
    if args.hnsw:
        gc.collect()
        rss0 = rss_gb()
        t = time.perf_counter()
        hnsw = DenseIndex(docs, ids, backend="faiss", faiss_kind="hnsw", hnsw_m=args.hnsw_m)
        t_build = time.perf_counter() - t
        payload = (n * d * 4 + n * args.hnsw_m * 2 * 4) / 2**30
        build = f"{t_build:.1f} s"
        print(f"HNSW build (M {args.hnsw_m}): {build}; process {rss0:.2f} -> {rss_gb():.2f} GB")
        for ef in [int(x) for x in args.ef_search.split(",") if x]:
            gc.collect()
            t = time.perf_counter()
            got = hnsw.search(queries, qids, k=k, ef_search=ef)
            dt = time.perf_counter() - t
            rows.append([f"faiss hnsw ef_search={ef}", build, f"~{payload:.2f}", f"{args.queries / dt:,.0f}",
                         f"{recall_at_k(got, exact, qids, k):.3f}", f"{dt:.2f}"])
            build = ""
        del hnsw

    header = ["search", "build", "index GB", "queries/s", f"recall@{k}", "search s"]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print()
    for j, r in enumerate([header, *rows]):
        print("  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if j == 0:
            print("  " + "  ".join("-" * w for w in widths))
    print(f"\nend: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
