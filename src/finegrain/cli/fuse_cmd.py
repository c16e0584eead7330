"""``finegrain fuse RUN... --method rrf -o OUT``: fuse saved runs, optionally with weights chosen by k-fold CV.

The method's parameters (``finegrain list fusion``: ``weights``, ``k``, ``norm``, ``depth``) are
``--set KEY=VALUE``, as a retriever's are on ``finegrain eval``, checked against the method's
declared parameters.
"""

from __future__ import annotations

from pathlib import Path

import typer

from finegrain.cli import options as opt
from finegrain.errors import FinegrainError

DEFAULT_CV_METRIC = "ndcg@10"
# the retired spellings of --set KEY=VALUE: (flag, KEY)
_RETIRED_SET = (("--weights", "weights"), ("--norm", "norm"), ("--rrf-k", "k"), ("--depth", "depth"))


def fuse_command(
    runs: list[Path] = typer.Argument(
        ..., metavar="RUN...",
        help="Runs to fuse: folders written by 'finegrain eval -o DIR', or run files (TREC, run.jsonl, ranx JSON, Parquet).",
    ),
    out: Path = opt.out_option("Folder for the fused run (run.trec, or run.jsonl when ids have spaces)."),
    method: str = typer.Option("rrf", "--method", help="rrf, combsum, combmnz, combmax or wsum (= convex)."),
    options: list[str] = opt.set_option(
        "Fusion parameter KEY=VALUE (repeatable): weights=1,2 k=60 norm=zscore depth=100; see finegrain list fusion."),
    cv: int | None = opt.cv_option("the weights (needs --qrels; each query is fused with weights chosen on the "
                                   "other folds)"),
    qrels: Path | None = typer.Option(None, "--qrels", help="Qrels for --cv (TREC or BEIR tsv)."),
    cv_metric: str | None = opt.cv_metric_option(DEFAULT_CV_METRIC),
    step: float = typer.Option(0.1, "--step", help="--cv grid step: weight vectors of multiples of it summing to 1."),
    seed: int | None = opt.seed_option("--cv: how queries are dealt into folds"),
    weights: str | None = opt.retired_option("--weights", "--set weights=W1,W2"),
    norm: str | None = opt.retired_option("--norm", "--set norm=NORM"),
    k: str | None = opt.retired_option("--rrf-k", "--set k=K"),
    depth: str | None = opt.retired_option("--depth", "--set depth=N"),
    metric: list[str] = opt.retired_option("--metric", "--cv-metric", flags=("--metrics", "-m"), multiple=True),
) -> None:
    """Fuse RUN... into one run; with --cv, print the weights chosen per fold and save the held-out run."""
    from finegrain.experiment.tuning.fusion_weights import cv_weights
    from finegrain.io.files import read_qrels_file
    from finegrain.results.files import read_any_run, save_run
    from finegrain.retrieve.fusion.methods import fuse, fusion_options

    items = list(options)
    for (flag, key), value in zip(_RETIRED_SET, (weights, norm, k, depth), strict=True):
        if value is not None:
            opt.retired(flag, f"--set {key}={value}")
            items.append(f"{key}={value}")
    if metric:
        cv_metric = opt.either(cv_metric, opt.metric_keys(metric)[0], "--cv-metric", "-m")
    opt.check_cv(cv, cv_metric, seed)
    params = fusion_options(method, opt.parse_set(items))
    loaded = [read_any_run(p) for p in runs]
    if cv is not None:
        if qrels is None:
            raise FinegrainError("--cv chooses weights on judged queries, and no --qrels was given", "pass --qrels FILE")
        if "weights" in params:
            raise FinegrainError("--cv chooses the weights, and --set weights= gives them too", "leave weights= out")
        objective = opt.metric_keys([cv_metric or DEFAULT_CV_METRIC])[0]
        search = cv_weights(loaded, read_qrels_file(qrels)[0], metric=objective, method=method, folds=cv, step=step,
                            seed=seed or 0, **params)
        typer.echo(str(search))
        fused = search.run
    else:
        fused = fuse(loaded, method, **params)
    path = save_run(out, fused)
    typer.echo(f"{fused.name}: {len(fused)} queries -> {path}")
