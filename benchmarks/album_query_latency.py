"""Album query latency: p50/p95 of ``finegrain.album.engine.search`` on a 100,000-photo catalog.

Uses the synthetic catalog of :func:`finegrain.album.bench.synthetic.build_synthetic_catalog`
(built at ``--catalog`` when missing). The benchmark works on a private copy, to
which it adds ``--v-embedded`` random unit vectors (dim 384, model
``bench/random-384``) as stand-ins for caption embeddings so V queries run
T_V over a stored embedding set; the query encoder is a seeded random
projection of the text (so V scores are meaningless, only the time is). The
search context (vocabulary, photo times, embeddings, calibrated threshold) is
built once, as a long-running server would; its build time is printed
separately. Each query runs once to warm up, then ``--reps`` times.

Query kinds: M (month, year + place, place + every-year hours, season + place,
a city), M-broad (the owner's home city: 40 % of the catalog, 40,000 photos),
F (one person; the owner and a friend), MF (person + place, person + year),
V (visual text only, scored over the embedding set). Times are to the answer
set (plan, tools, fusion); the ranked list is built on demand and not timed.

Usage::

    .venv/bin/python benchmarks/album_query_latency.py [--catalog /tmp/album_synth100k.sqlite] [--n 100000] [--reps 20]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from finegrain.album.bench.synthetic import build_synthetic_catalog
from finegrain.album.engine.catalog.sqlite import SqliteCatalog
from finegrain.album.engine.search import SearchContext, search

MODEL_ID = "bench/random-384"
DIM = 384


class RandomTextEncoder:
    """A seeded random unit vector per text (no model): only for timing T_V."""

    model_id = MODEL_ID

    def encode(self, texts, *, kind: str) -> np.ndarray:  # noqa: ANN001
        rows = []
        for t in texts:
            seed = int.from_bytes(hashlib.sha256(t.encode("utf-8")).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
            rows.append(v / np.linalg.norm(v))
        return np.stack(rows)


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--catalog", default="/tmp/album_synth100k.sqlite")
    ap.add_argument("--n", type=int, default=100_000, help="photos, when the catalog must be built")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--v-embedded", type=int, default=10_000, help="photos given a random embedding (V queries)")
    args = ap.parse_args(argv)

    source = Path(args.catalog)
    if not source.exists():
        print(f"building {source} ({args.n} photos) ...", flush=True)
        print(build_synthetic_catalog(source, args.n, seed=0))
    with tempfile.TemporaryDirectory(prefix="fg-latency-") as tmp:
        path = Path(tmp) / "catalog.sqlite"
        shutil.copy(source, path)
        store = SqliteCatalog(path)
        n = store.count_photos()
        ids = store.photo_ids()
        rng = np.random.default_rng(0)
        chosen = sorted(rng.choice(len(ids), size=min(args.v_embedded, len(ids)), replace=False).tolist())
        vecs = rng.standard_normal((len(chosen), DIM)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        with store.transaction():
            for i, v in zip(chosen, vecs):
                store.put_embedding(ids[i], MODEL_ID, v)

        t = time.perf_counter()
        ctx = SearchContext(store, encoder=RandomTextEncoder())
        _ = ctx.vocab, ctx.times, ctx.order, ctx.embeddings, ctx.visual_threshold
        build = time.perf_counter() - t

        # the two most photographed friends whose names the planner reads as that person only
        # (a given name such as "Jun" also reads as June)
        counts = store.person_photo_counts()
        names = []
        for pid in sorted((p for p in counts if p != "1"), key=lambda p: (-counts[p], p)):
            name = next(p for p in store.people() if p.id == pid).names[0]
            plan = search(store, f"photos of {name}", context=ctx).plan
            if plan.person_ids == (pid,) and not plan.time_ranges:
                names.append(name)
            if len(names) == 2:
                break
        a, b = names
        queries = {
            "M": ["photos from May 2024", "photos in Shanghai in 2023", "photos at night in Chengdu",
                  "2022年冬天在北京的照片", "photos in Xi'an"],
            "M-broad": ["photos in Hangzhou"],
            "F": [f"photos of {a}", f"photos of me and {b}", f"photos of {b}"],
            "MF": [f"{a} in Hangzhou", f"photos with {b} in 2022", f"me and {a} in Shaoxing"],
            "V": ["a red kite over the beach", "birthday cake with candles", "snowy mountain at sunrise"],
        }
        rows = []
        for kind, texts in queries.items():
            times: list[float] = []
            sizes: list[int] = []
            for q in texts:
                search(store, q, context=ctx)  # warm-up
                for _ in range(args.reps):
                    t = time.perf_counter()
                    r = search(store, q, context=ctx, unverified_visual="candidates")
                    times.append((time.perf_counter() - t) * 1000)
                sizes.append(len(r.photo_ids))
            rows.append((kind, len(texts), len(times), statistics.median(times), _percentile(times, 95), max(times),
                         statistics.median(sizes)))
        store.close()

    print(f"catalog: {n} photos ({source}); {len(chosen)} with a {DIM}-d embedding; "
          f"context built once in {build:.2f} s; {args.reps} reps per query after a warm-up")
    print(f"{'kind':<8} {'queries':>7} {'runs':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'median set':>11}")
    for kind, nq, nr, p50, p95, mx, size in rows:
        print(f"{kind:<8} {nq:>7} {nr:>5} {p50:>8.1f} {p95:>8.1f} {mx:>8.1f} {size:>11.0f}")
    ok = all(r[4] < 50 for r in rows if r[0] in ("M", "F"))
    print("M and F p95 under 50 ms:", "yes" if ok else "NO")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
