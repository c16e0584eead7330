"""Metric throughput: finegrain vs pytrec_eval and ranx on a large synthetic run, in one process.

Builds a seeded run of N queries x 100 documents with coarse scores (many
ties) and graded qrels (0-3, some queries without any relevant item), then
times on the same data (default ``--queries 100000 --docs 100``: ten million run entries):

- **metrics** (objects already built): pytrec_eval ``RelevanceEvaluator(qrels)``
  + ``.evaluate(run)`` (it takes dicts only, so this is all it does); ranx
  ``evaluate`` on ranx ``Qrels``/``Run``, its first call (numba JIT compile or
  cache load) reported apart from the warm calls; finegrain ``Run.order``
  (the one tie-break rule) + ``evaluate()`` (join + metrics + aggregates).
- **dict -> objects**: ``Qrels.from_dict`` next to pytrec_eval's
  ``RelevanceEvaluator(qrels)`` (the same input, each tool's own structure);
  ``Run.from_dict`` next to pytrec_eval's ``evaluate(run)`` with only
  ``num_ret`` (its run conversion and per-query sort, nearly no metric);
  ranx's ``Qrels``/``Run`` constructors for reference.

finegrain's means must equal pytrec_eval's (1e-9) so the timing compares
equal work; ranx breaks score ties differently (and scores queries without a
relevant item as 0), so its means are printed, not compared. Wall-clock
seconds, with ``os.getloadavg()`` printed: compare figures of one run only.
``--skip-ranx`` leaves ranx out. The report goes to this script's section of
``docs/results/scale.md`` (``--markdown``). Usage::

    .venv/bin/python benchmarks/metrics_throughput.py [--queries 100000] [--docs 100] [--seed 0] [--skip-ranx]
        [--markdown docs/results/scale.md]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

import numpy as np
from _results import Recorder, add_markdown_option

MEASURES = {"ndcg_cut.10", "recall.100", "P.10", "map_cut.100", "recip_rank"}
PAIRS = {  # finegrain key -> pytrec_eval key
    "ndcg@10": "ndcg_cut_10",
    "recall@100": "recall_100",
    "precision@10": "P_10",
    "map@100": "map_cut_100",
    "mrr": "recip_rank",
}


def synthesize(n_queries: int, n_docs: int, seed: int) -> dict[str, object]:
    """Columns of a run and its qrels; documents come from a shared corpus of string ids."""
    rng = np.random.default_rng(seed)
    corpus = max(10 * n_docs, n_queries * 10)
    vocab = [f"doc{i:07d}" for i in range(corpus)]
    # n_docs distinct documents per query: a random start and a stride coprime with the corpus size.
    start = rng.integers(0, corpus, size=(n_queries, 1))
    docs = (start + np.arange(n_docs + 10) * 7919) % corpus
    run_docs = docs[:, :n_docs]
    scores = np.round(rng.random((n_queries, n_docs)) * 20) / 20  # 21 distinct values: many ties
    # 30 judgements per query: 25 among the retrieved, 5 unretrieved; grades 0-3, mostly 0.
    judged = np.concatenate([docs[:, :25], docs[:, n_docs : n_docs + 5]], axis=1)
    grades = rng.choice([0, 0, 0, 0, 1, 1, 2, 3], size=judged.shape)
    grades[rng.random(n_queries) < 0.05] = 0  # about 5% zero-answer queries
    return {
        "qids": [f"q{i}" for i in range(n_queries)],
        "vocab": vocab,
        "run_docs": run_docs,
        "scores": scores,
        "judged": judged,
        "grades": grades,
    }


def to_dicts(d: dict[str, object]) -> tuple[dict, dict]:
    qids, vocab = d["qids"], d["vocab"]
    run = {
        q: dict(zip([vocab[c] for c in docs], s))
        for q, docs, s in zip(qids, d["run_docs"].tolist(), d["scores"].tolist())
    }
    qrels = {
        q: dict(zip([vocab[c] for c in docs], g))
        for q, docs, g in zip(qids, d["judged"].tolist(), d["grades"].tolist())
    }
    return qrels, run


RANX = list(PAIRS)  # ranx spells these metrics as finegrain does


def timed(fn):
    gc.collect()
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} CPUs)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--warm-repeats", type=int, default=2, help="warm ranx calls (the best is kept)")
    ap.add_argument("--skip-ranx", action="store_true")
    add_markdown_option(ap, "scale.md")
    args = ap.parse_args(argv)
    with Recorder(__file__, args.markdown, argv) as rec:
        rec.status = run(args)
    return rec.status


def run(args: argparse.Namespace) -> int:
    """Synthesize the run, time each tool, print the table; 1 when finegrain and pytrec_eval disagree."""
    import pytrec_eval

    from finegrain.evaluate import evaluate
    from finegrain.types import Qrels, Run

    n_q, n_d = args.queries, args.docs
    print(f"synthesizing {n_q:,} queries x {n_d} documents ({n_q * n_d:,} run entries), seed {args.seed} ...")
    data = synthesize(n_q, n_d, args.seed)
    qrels_dict, run_dict = to_dicts(data)
    print(f"start: {load()}")

    metric_rows: list[tuple[str, float]] = []
    dict_rows: list[tuple[str, float]] = []
    # ---- pytrec_eval (dicts in, numbers out)
    evaluator, t_build = timed(lambda: pytrec_eval.RelevanceEvaluator(qrels_dict, MEASURES))
    ref, t_eval = timed(lambda: evaluator.evaluate(run_dict))
    t_pytrec = t_build + t_eval
    del evaluator
    counter = pytrec_eval.RelevanceEvaluator(qrels_dict, {"num_ret"})
    _, t_pytrec_run = timed(lambda: counter.evaluate(run_dict))
    del counter
    metric_rows += [("pytrec_eval RelevanceEvaluator(qrels)", t_build), ("pytrec_eval evaluate(run)", t_eval),
                    ("pytrec_eval total", t_pytrec)]

    # ---- finegrain from columns, then ranked and evaluated
    nq = len(data["qids"])
    jn = data["judged"].shape[1]

    def build():
        qrels = Qrels(data["qids"], np.arange(nq + 1) * jn, data["judged"].ravel(), data["vocab"], data["grades"].ravel())
        run = Run(data["qids"], np.arange(nq + 1) * n_d, data["run_docs"].ravel(), data["vocab"], data["scores"].ravel())
        return qrels, run

    (qrels, run), t_cols = timed(build)
    _, t_rank = timed(lambda: run.order)

    def score(q, r):
        ev = evaluate(q, r, list(PAIRS))
        return ev, ev.aggregate()  # aggregates are part of the work

    (ev, agg), t_metrics = timed(lambda: score(qrels, run))
    t_fg = t_rank + t_metrics
    metric_rows += [
        ("finegrain rank (Run.order)", t_rank),
        ("finegrain evaluate (join+metrics+means)", t_metrics),
        ("finegrain total (rank + evaluate)", t_fg),
    ]
    del qrels, run

    # ---- dict -> objects
    q2, t_qd = timed(lambda: Qrels.from_dict(qrels_dict))
    r2, t_rd = timed(lambda: Run.from_dict(run_dict))
    dict_rows += [
        ("pytrec_eval RelevanceEvaluator(qrels)", t_build),
        ("finegrain Qrels.from_dict", t_qd),
        ("pytrec_eval evaluate(run), num_ret only", t_pytrec_run),
        ("finegrain Run.from_dict", t_rd),
        ("finegrain Qrels+Run from columns", t_cols),
    ]
    _, t_rank2 = timed(lambda: r2.order)
    (_, agg2), t_metrics2 = timed(lambda: score(q2, r2))
    t_fg_dicts = t_qd + t_rd + t_rank2 + t_metrics2
    del q2, r2

    # ---- ranx (numba): objects, a first call (JIT compile or cache load), warm calls
    ranx_means: dict[str, float] = {}
    t_ranx_first = t_ranx_warm = t_rq = t_rr = float("nan")
    if not args.skip_ranx:
        t0 = time.perf_counter()
        import ranx
        t_ranx_import = time.perf_counter() - t0
        rq, t_rq = timed(lambda: ranx.Qrels(qrels_dict))
        rr, t_rr = timed(lambda: ranx.Run(run_dict))
        _, t_ranx_first = timed(lambda: ranx.evaluate(rq, rr, RANX, save_results_in_run=False))
        warm = []
        for _ in range(max(1, args.warm_repeats)):
            ranx_means, t = timed(lambda: ranx.evaluate(rq, rr, RANX, save_results_in_run=False))
            warm.append(t)
        t_ranx_warm = min(warm)
        metric_rows += [
            ("ranx evaluate, first call (JIT compile/load)", t_ranx_first),
            (f"ranx evaluate, warm (best of {len(warm)})", t_ranx_warm),
            ("  of which ranx JIT compile/load (first - warm)", t_ranx_first - t_ranx_warm),
        ]
        dict_rows += [("ranx import", t_ranx_import), ("ranx Qrels(dict)", t_rq), ("ranx Run(dict)", t_rr)]
        del rq, rr

    # ---- agreement (same query set: queries with a relevant item, all present in the run)
    scored = list(ev[next(iter(PAIRS))].per_query)
    worst = worst_dicts = 0.0
    for key, tkey in PAIRS.items():
        mean_ref = float(np.mean([ref[q][tkey] for q in scored]))
        worst = max(worst, abs(mean_ref - agg[key]))
        worst_dicts = max(worst_dicts, abs(agg2[key] - agg[key]))

    width = 52
    print(f"\nmetrics (objects built)                             seconds\n{'-' * (width + 10)}")
    for name, t in metric_rows:
        print(f"{name:<{width}}{t:>10.3f}")
    print(f"\ndict -> objects                                     seconds\n{'-' * (width + 10)}")
    for name, t in dict_rows:
        print(f"{name:<{width}}{t:>10.3f}")
    print(f"{'finegrain from dicts to means (from_dict x2 + rank + evaluate)':<{width}}{t_fg_dicts:>10.3f}")
    print(f"\nend: {load()}")
    print("\nspeed-ups (anchor / finegrain; > 1 means finegrain is faster)")
    print(f"  metrics vs pytrec_eval total (target >= 3):         {t_pytrec / t_fg:6.2f}x")
    if not args.skip_ranx:
        print(f"  metrics vs ranx warm (target >= 1.5):                {t_ranx_warm / t_fg:6.2f}x")
        print(f"  metrics vs ranx first call:                          {t_ranx_first / t_fg:6.2f}x")
    print(f"  Qrels.from_dict vs RelevanceEvaluator(qrels) (>= 1): {t_build / t_qd:6.2f}x")
    print(f"  Run.from_dict vs pytrec_eval run ingest (num_ret):   {t_pytrec_run / t_rd:6.2f}x")
    print(f"  dicts to means vs pytrec_eval total:                 {t_pytrec / t_fg_dicts:6.2f}x")
    print(f"\nscored queries {len(scored):,} of {nq:,}; max |mean difference| vs pytrec_eval over {len(PAIRS)} "
          f"metrics: {worst:.2e}; from dicts vs from columns: {worst_dicts:.2e}")
    if ranx_means:
        print("ranx means (ties broken its own way; zero-answer queries scored 0): "
              + ", ".join(f"{k} {float(v):.4f}" for k, v in ranx_means.items()))
        print("finegrain means:                                                  "
              + ", ".join(f"{k} {v:.4f}" for k, v in agg.items()))
    return 0 if worst < 1e-9 and worst_dicts < 1e-12 else 1


if __name__ == "__main__":
    sys.exit(main())
