"""NCS cost vs concept-set size: path-similarity matrix and networkx maximum-weight matching.

For each size n, draws (seeded) two disjoint sets of n WordNet noun synsets of concrete things
(lexicographer files artifact, animal, object, plant, food) as the non-common concepts D_g and
D_r of a failure, and times, median over ``--repeat`` draws:

- ``similarity``: the n x n WordNet path-similarity matrix with cold caches (nltk's own
  hypernym-path caches and finegrain's lru_cache cleared before each draw);
- ``similarity (warm)``: the same matrix again, served from finegrain's cache;
- ``matching``: networkx ``max_weight_matching`` (blossom, O(|V|^3)), as NCS uses it;
- ``lsa``: scipy ``linear_sum_assignment`` on the same weights, for reference; the two optimal
  sums must agree (checked), so both solve the same problem.

Usage::

    .venv/bin/python benchmarks/ncs_matching.py [--sizes 5,10,20,50,100] [--repeat 3] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np

KINDS = ("noun.artifact", "noun.animal", "noun.object", "noun.plant", "noun.food")


def pool() -> list[str]:
    from finegrain.lexicons.wordnet import wordnet

    return sorted(s.name() for s in wordnet().all_synsets("n") if s.lexname() in KINDS)


def clear_caches() -> None:
    from finegrain.diagnose.concepts import similarity
    from finegrain.lexicons.wordnet import wordnet

    similarity._path_similarity.cache_clear()
    similarity.synset.cache_clear()
    # nltk caches synset objects (and with them their hypernym paths) by offset
    for cache in getattr(wordnet(), "_synset_offset_cache", {}).values():
        cache.clear()


def one(names: list[str], n: int, rng: random.Random) -> dict[str, float]:
    from scipy.optimize import linear_sum_assignment

    from finegrain.diagnose.concepts.matching import matched_weight, max_weight_matching
    from finegrain.diagnose.concepts.similarity import path_similarity

    picked = rng.sample(names, 2 * n)
    dg, dr = picked[:n], picked[n:]
    clear_caches()
    t0 = time.perf_counter()
    w = np.array([[path_similarity(a, b) for b in dr] for a in dg])
    t1 = time.perf_counter()
    np.array([[path_similarity(a, b) for b in dr] for a in dg])
    t2 = time.perf_counter()
    pairs = max_weight_matching(w)
    t3 = time.perf_counter()
    rows, cols = linear_sum_assignment(w, maximize=True)
    t4 = time.perf_counter()
    nx_sum, lsa_sum = matched_weight(w, pairs), float(w[rows, cols].sum())
    if len(pairs) != n or abs(nx_sum - lsa_sum) > 1e-9:
        raise SystemExit(f"n={n}: networkx {nx_sum} ({len(pairs)} pairs) != scipy {lsa_sum}")
    return {"sim": t1 - t0, "warm": t2 - t1, "match": t3 - t2, "lsa": t4 - t3, "ncs": nx_sum / n}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="5,10,20,50,100")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    names = pool()
    print(f"pool: {len(names)} noun synsets ({', '.join(k.split('.')[1] for k in KINDS)}); "
          f"median of {args.repeat} draws, seed {args.seed}")
    print(f"{'n':>5} {'pairs':>6} {'similarity s':>13} {'sim warm s':>11} {'matching s':>11} {'lsa s':>9} {'NCS':>6}")
    rng = random.Random(args.seed)
    one(names, 3, random.Random(-1))  # warm-up: imports of networkx / scipy are not timed
    for n in sizes:
        runs = [one(names, n, rng) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"{n:>5} {n * n:>6} {med['sim']:>13.4f} {med['warm']:>11.4f} {med['match']:>11.4f} "
              f"{med['lsa']:>9.5f} {med['ncs']:>6.3f}")


if __name__ == "__main__":
    main()
