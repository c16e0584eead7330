"""Metric throughput: finegrain.evaluate vs pytrec_eval on a large synthetic run.

Builds a seeded run of N queries x 100 documents with coarse scores (many
ties) and graded qrels (0-3, some queries without any relevant item), then
times, in one process and on the same data:

- pytrec_eval: ``RelevanceEvaluator(qrels, measures)`` and ``.evaluate(run)``
  (its inputs, the nested dicts, are built before timing);
- finegrain: building ``Qrels``/``Run`` from columns, ranking (``Run.order``,
  the one tie-break rule), and ``evaluate()`` (join + metrics + aggregates);
  building them from the same nested dicts is reported too.

The means of both are compared (they must agree to 1e-6) so the timing
compares equal work. Usage::

    .venv/bin/python benchmarks/metrics_throughput.py [--queries 100000] [--docs 100] [--seed 0]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time

import numpy as np

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


def timed(fn):
    gc.collect()
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import pytrec_eval

    from finegrain.evaluate import evaluate
    from finegrain.types import Qrels, Run

    n_q, n_d = args.queries, args.docs
    print(f"synthesizing {n_q:,} queries x {n_d} documents ({n_q * n_d:,} run entries), seed {args.seed} ...")
    data = synthesize(n_q, n_d, args.seed)
    qrels_dict, run_dict = to_dicts(data)

    rows: list[tuple[str, float]] = []
    # ---- pytrec_eval
    evaluator, t_build = timed(lambda: pytrec_eval.RelevanceEvaluator(qrels_dict, MEASURES))
    ref, t_eval = timed(lambda: evaluator.evaluate(run_dict))
    rows += [("pytrec_eval RelevanceEvaluator(qrels)", t_build), ("pytrec_eval evaluate(run)", t_eval)]
    t_pytrec = t_build + t_eval
    del evaluator

    # ---- finegrain from columns
    nq = len(data["qids"])
    jn = data["judged"].shape[1]

    def build():
        qrels = Qrels(data["qids"], np.arange(nq + 1) * jn, data["judged"].ravel(), data["vocab"], data["grades"].ravel())
        run = Run(data["qids"], np.arange(nq + 1) * n_d, data["run_docs"].ravel(), data["vocab"], data["scores"].ravel())
        return qrels, run

    (qrels, run), t_cols = timed(build)
    _, t_rank = timed(lambda: run.order)
    def score():
        ev = evaluate(qrels, run, list(PAIRS))
        return ev, ev.aggregate()  # aggregates are part of the work

    (ev, agg), t_metrics = timed(score)
    t_fg = t_rank + t_metrics
    rows += [
        ("finegrain Qrels+Run from columns", t_cols),
        ("finegrain rank (Run.order)", t_rank),
        ("finegrain evaluate (join+metrics+means)", t_metrics),
    ]
    (q2, r2), t_dicts = timed(lambda: (Qrels.from_dict(qrels_dict), Run.from_dict(run_dict)))
    rows.append(("finegrain Qrels+Run from dicts", t_dicts))
    del q2, r2

    # ---- agreement (same query set: queries with a relevant item, all present in the run)
    scored = [q for q in ev[next(iter(PAIRS))].per_query]
    worst = 0.0
    for key, tkey in PAIRS.items():
        mean_ref = float(np.mean([ref[q][tkey] for q in scored]))
        worst = max(worst, abs(mean_ref - agg[key]))

    width = max(len(r[0]) for r in rows) + 2
    print(f"\n{'step':<{width}}{'seconds':>10}")
    for name, t in rows:
        print(f"{name:<{width}}{t:>10.3f}")
    print(f"{'-' * (width + 10)}")
    print(f"{'pytrec_eval total (build + evaluate)':<{width}}{t_pytrec:>10.3f}")
    print(f"{'finegrain metric time (rank + evaluate)':<{width}}{t_fg:>10.3f}")
    print(f"{'finegrain incl. columns -> Qrels/Run':<{width}}{t_fg + t_cols:>10.3f}")
    print(f"\nspeed-up, pytrec_eval total / finegrain metric time:         {t_pytrec / t_fg:6.2f}x")
    print(f"speed-up, pytrec_eval total / finegrain incl. construction:  {t_pytrec / (t_fg + t_cols):6.2f}x")
    print(f"speed-up, pytrec_eval evaluate / finegrain incl. construction:{t_eval / (t_fg + t_cols):6.2f}x")
    print(f"scored queries {len(scored):,} of {nq:,}; max |mean difference| over {len(PAIRS)} metrics: {worst:.2e}")
    return 0 if worst < 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main())
