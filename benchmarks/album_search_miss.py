"""The CPU cost of one album page search that misses the answer cache (what sets search's p95 under load).

A miss is computed in the server's search worker (:class:`finegrain.album.engine.web.search._Worker`):
plan the query, find the set, rank it by time, render the first ``--limit`` rows, chips and the
outcome as JSON. This runs the worker's ``answer`` in this process on the distinct queries of
``benchmarks/album_web_load.py`` (the same pool, shuffled) over its 100,000-photo catalog, after
``--warm`` queries (a long-running worker has read the common constraints by then), and prints
the process CPU time per answer (mean, p50, p95), split into the engine's search (of which
planning), the shown head of the ranking, and the rows. CPU time (``time.process_time``) rather
than wall time, so other processes on the machine change it little. The report goes to this
script's section of ``docs/results/album.md`` (``--markdown``).

Usage::

    .venv/bin/python benchmarks/album_search_miss.py [--workdir /tmp/finegrain_album_web_bench] [--n 300]
        [--markdown docs/results/album.md]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import album_web_load  # noqa: E402  (the load benchmark's query pool and catalog)
from _results import Recorder, add_markdown_option  # noqa: E402

from finegrain.album.engine import search as engine  # noqa: E402
from finegrain.album.engine.web import search as web_search  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/finegrain_album_web_bench"))
    ap.add_argument("--photos", type=int, default=100_000, help="catalog size when it must be built")
    ap.add_argument("--n", type=int, default=300, help="queries timed")
    ap.add_argument("--warm", type=int, default=50, help="queries answered before timing")
    ap.add_argument("--limit", type=int, default=60)
    add_markdown_option(ap, "album.md")
    args = ap.parse_args()
    with Recorder(__file__, args.markdown):
        measure(args)


def measure(args: argparse.Namespace) -> None:
    """Answer ``--warm`` queries, then time ``--n`` misses and print their CPU cost, split by part."""
    catalog = album_web_load.ensure_album(args.workdir, args.photos, 0, (400, 300))  # its defaults: no rebuild
    rng = random.Random(0)
    with sqlite3.connect(f"file:{catalog}?mode=ro", uri=True) as db:
        cities = list(db.execute("SELECT DISTINCT city_en, city_zh FROM places WHERE city_en IS NOT NULL"))
        districts = [r[0] for r in db.execute("SELECT DISTINCT district_en FROM places WHERE district_en IS NOT NULL")]
        people = [json.loads(r[0]) for r in db.execute("SELECT names FROM people")]
    queries = album_web_load._queries(rng, cities, districts, people)
    random.Random(1).shuffle(queries)
    print(f"catalog {catalog}; {len(queries)} distinct queries; load average {os.getloadavg()}")
    t = time.perf_counter()
    worker = web_search._Worker(str(catalog), None, None)
    print(f"worker start (context built and warmed): {time.perf_counter() - t:.2f} s")
    for q in queries[: args.warm]:
        worker.answer(q, None, args.limit, ())

    spent = {"search": 0.0, "plan": 0.0, "head": 0.0, "rows": 0.0}
    real_search, real_top, real_items = engine.search, web_search._top_ids, worker.reader.items

    def timed_search(*a, **k):  # noqa: ANN002, ANN003, ANN202
        t0 = time.process_time()
        r = real_search(*a, **k)
        spent["search"] += time.process_time() - t0
        spent["plan"] += r.timings.get("plan", 0.0) / 1000  # wall ms of planning, inside search
        return r

    def timed_top(*a):  # noqa: ANN002, ANN202
        t0 = time.process_time()
        r = real_top(*a)
        spent["head"] += time.process_time() - t0
        return r

    def timed_items(*a):  # noqa: ANN002, ANN202
        t0 = time.process_time()
        r = real_items(*a)
        spent["rows"] += time.process_time() - t0
        return r

    engine.search, web_search._top_ids, worker.reader.items = timed_search, timed_top, timed_items
    sample = queries[args.warm: args.warm + args.n]
    costs = []
    for q in sample:
        t0 = time.process_time()
        status, _ = worker.answer(q, None, args.limit, ())
        costs.append(time.process_time() - t0)
        if status != 200:
            raise SystemExit(f"query {q!r} answered {status}")
    costs.sort()
    n = len(costs)
    ms = {k: 1000 * v / n for k, v in spent.items()}
    print(f"{n} misses: CPU per answer mean {1000 * sum(costs) / n:.2f} ms, p50 {1000 * costs[n // 2]:.2f} ms, "
          f"p95 {1000 * costs[int(0.95 * n)]:.2f} ms")
    print(f"  of which: search {ms['search']:.2f} ms (planning {ms['plan']:.2f} ms wall), ranking head "
          f"{ms['head']:.2f} ms, rows {ms['rows']:.2f} ms; chips, plan and JSON the rest")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
