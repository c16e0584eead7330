"""Cross-validation memory: a fusion's grid held as fused runs all at once, or fused when each is read.

``finegrain eval -r hybrid --cv K`` scores every point of the fusion's grid (weight vectors x RRF k) on the
other folds. The parts retrieve once; what differs is the fused runs. Both variants run in one process on the
same parts' runs of one dataset:

- **all held** (the anchor): every grid point's fused run is made and kept before choosing, as a list of runs;
- **fused when read** (what ``HybridRetriever.retrieve_grid`` returns, a ``FusedGrid``): one fused run at a
  time, each made when it is scored and again if a fold chooses it.

For each: peak traced memory (``tracemalloc``, numpy's buffers included; the parts' runs, made before, are
not counted) and wall seconds, with the ratios, and a check that both choose the same settings per fold and
the same out-of-fold run (exit 1 otherwise). Usage::

    .venv/bin/python benchmarks/cv_memory.py [--dataset capretrieval/zh] [--retriever hybrid-use] [--folds 5]
"""

from __future__ import annotations

import argparse
import gc
import os
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from _results import Recorder, add_markdown_option


def measured(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """``fn()``, its peak traced memory in MiB and its wall seconds."""
    gc.collect()
    tracemalloc.start()
    started = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, peak, seconds


def run(args: argparse.Namespace) -> int:
    from finegrain.datasets import load_dataset
    from finegrain.errors import FinegrainError
    from finegrain.experiment.tuning.cv import CVSpec, choose, grid_points, tunables
    from finegrain.retrieve.fusion.hybrid import HybridRetriever
    from finegrain.retrieve.registry import RETRIEVERS

    try:
        base = RETRIEVERS.build(args.retriever)
        ds = load_dataset(args.dataset)
    except FinegrainError as e:  # an unknown name or a missing dataset: one line, not a traceback
        raise SystemExit(f"error: {e}") from None
    tuned = tunables(args.retriever, {})
    if not isinstance(base, HybridRetriever) or not tuned:
        raise SystemExit(f"error: --retriever {args.retriever!r} is not a fusion with a grid to cross-validate; "
                         "pass hybrid, hybrid-use, hybrid-sparse or another fusion")
    points = grid_points(tuned)
    default = {t.key: t.default for t in tuned}
    started = time.perf_counter()
    grid = base.retrieve_grid([*points, default], ds.corpus, ds.queries, lang=ds.lang, top_k=None,
                              show_progress=False)
    parts_s = time.perf_counter() - started
    spec = CVSpec(args.folds, 0)
    kw: dict[str, Any] = {"queries": list(ds.queries), "points": points, "tuned": tuned, "default_setting": default,
                          "strata": ds.queries.types(), "n_resamples": 1000}

    def all_held() -> Any:
        runs = [grid[i] for i in range(len(grid))]
        return choose(ds.qrels, runs[:-1], runs[-1], ["ndcg@10"], spec, **kw)

    def fused_when_read() -> Any:
        return choose(ds.qrels, grid[:-1], grid[-1], ["ndcg@10"], spec, **kw)

    held, held_mib, held_s = measured(all_held)
    lazy, lazy_mib, lazy_s = measured(fused_when_read)
    same = ([dict(f.setting) for f in held.folds] == [dict(f.setting) for f in lazy.folds]
            and held.run.to_dict() == lazy.run.to_dict())
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.dataset} · {args.retriever} --cv {args.folds}: {len(ds.queries)} queries, {len(points)} grid points "
          f"+ the default, {len(base.parts)} parts retrieved once in {parts_s:.1f} s (not traced); load {load}")
    print(f"{'variant':<18} {'peak MiB':>9} {'seconds':>8} {'MiB vs held':>12} {'s vs held':>10}")
    for name, mib, secs in (("all held", held_mib, held_s), ("fused when read", lazy_mib, lazy_s)):
        print(f"{name:<18} {mib:>9.1f} {secs:>8.1f} {mib / held_mib:>11.2f}x {secs / held_s:>9.2f}x")
    print(f"same choices and out-of-fold run: {same}; CV nDCG@10 {100 * lazy.metrics['ndcg@10'].mean:.2f}")
    return 0 if same else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="capretrieval/zh")
    ap.add_argument("--retriever", default="hybrid-use", help="a fusion with a grid (hybrid, hybrid-use, ...)")
    ap.add_argument("--folds", type=int, default=5)
    add_markdown_option(ap, "scale.md")
    args = ap.parse_args(argv)
    with Recorder(__file__, args.markdown, argv) as rec:
        rec.status = run(args)
    return rec.status


if __name__ == "__main__":
    raise SystemExit(main())
