"""Cost of a perturbation run (``finegrain perturb``) relative to a plain evaluation (``finegrain eval``).

In one process, on the same dataset and retriever: first the plain evaluation
job (:func:`finegrain.experiment.run.run_experiment`: retrieve, score,
curves, error analysis), then the perturbation job
(:func:`finegrain.diagnose.perturb.run.run_perturbation`, all families by
default: build perturbations, retrieve originals + perturbed queries in one
batch, score with the original qrels, Tables 4-5 with bootstrap CIs). Prints
both wall times, the ratio, and for dense retrievers how many texts each
encoded (the rest came from the embedding cache).

``--cache warm`` (default) uses the normal embedding cache as it is;
``--cache cold`` gives both jobs a fresh, empty cache folder, so the plain
evaluation encodes the corpus and its queries and the perturbation run then
encodes only the perturbed queries (the usual "eval first, then perturb"
order). Module imports, WordNet and (with a warm cache) one untimed plain
evaluation run before timing, so jieba's dictionary and model loading are
not charged to whichever job comes first (``--no-warmup`` to count them).

Usage::

    .venv/bin/python benchmarks/perturb_cost.py --dataset capretrieval/en --retriever bm25-okapi
    .venv/bin/python benchmarks/perturb_cost.py --dataset capretrieval/en --retriever e5 --cache cold
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from typing import Any


def _texts(retriever_cfg: dict[str, Any]) -> str:
    last = retriever_cfg.get("last_retrieval") or {}
    t = last.get("texts")
    return "" if not t else f"  (texts: {t.get('requested')} requested, {t.get('misses')} encoded, {t.get('hits')} cached)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="capretrieval/en")
    ap.add_argument("--retriever", default="bm25-okapi")
    ap.add_argument("--family", default="", help="comma-separated families (default: all)")
    ap.add_argument("--cache", choices=("warm", "cold"), default="warm")
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--no-warmup", action="store_true")
    args = ap.parse_args()

    from finegrain.diagnose.perturb.families import parse_families
    from finegrain.diagnose.perturb.run import (
        DEFAULT_METRICS,
        PerturbConfig,
        run_perturbation,
    )
    from finegrain.experiment.run import Experiment, run_experiment
    from finegrain.settings import Settings

    settings = Settings.from_env()
    families = parse_families([args.family] if args.family else None)
    tmp = tempfile.TemporaryDirectory(prefix="perturb-cost-") if args.cache == "cold" else None
    options: dict[str, Any] = {"cache_dir": tmp.name} if tmp and args.retriever not in ("bm25-okapi", "bm25") else {}

    if not args.no_warmup:
        from finegrain.datasets import load_dataset
        from finegrain.diagnose.perturb.colors import en_color_words
        from finegrain.lexicons.wordnet import wordnet

        t = time.perf_counter()
        load_dataset(args.dataset, settings)
        wordnet().synsets("dog")
        en_color_words()
        what = "dataset, WordNet, colour words"
        if args.cache == "warm":  # also jieba's dictionary, the model load, the embedding cache's first read
            run_experiment(Experiment(dataset=args.dataset, retriever=args.retriever, metrics=DEFAULT_METRICS,
                                      retriever_options=options), settings, show_progress=False)
            what += ", one untimed plain evaluation"
        print(f"warm-up ({what}): {time.perf_counter() - t:.2f} s (not counted)")

    t = time.perf_counter()
    plain = run_experiment(Experiment(dataset=args.dataset, retriever=args.retriever, metrics=DEFAULT_METRICS,
                                      retriever_options=options), settings, show_progress=False)
    plain_s = time.perf_counter() - t
    t = time.perf_counter()
    pert = run_perturbation(PerturbConfig(dataset=args.dataset, retriever=args.retriever, families=families,
                                          retriever_options=options, n_resamples=args.resamples),
                            settings, show_progress=False)
    pert_s = time.perf_counter() - t

    n_q = plain.results["provenance"]["dataset"]["n_queries"]
    n_p = len(pert.perturbations)
    print(f"python {platform.python_version()}, {args.dataset}, retriever {args.retriever}, cache {args.cache}")
    print(f"plain evaluation : {plain_s:8.2f} s  ({n_q} queries){_texts(plain.results['provenance']['retriever'])}")
    print(f"perturbation run : {pert_s:8.2f} s  ({n_q} originals + {n_p} perturbed queries, "
          f"{len(families)} families){_texts(pert.results.provenance.retriever.to_json())}")
    print(f"  of which retrieval {pert.results.provenance.retrieve_seconds:.2f} s")
    print(f"ratio perturbation / plain: {pert_s / plain_s:.2f}")
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()
