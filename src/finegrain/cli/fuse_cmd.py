"""``finegrain fuse RUN... --method rrf -o OUT``: fuse saved runs, optionally with weights chosen by k-fold CV."""

from __future__ import annotations

from pathlib import Path

import typer

from finegrain.cli import options as opt
from finegrain.errors import FinegrainError
from finegrain.numbers import NumberError, parse_float


def fuse_command(
    runs: list[Path] = typer.Argument(
        ..., metavar="RUN...",
        help="Runs to fuse: folders written by 'finegrain eval -o DIR', or run files (TREC, run.jsonl, ranx JSON, Parquet).",
    ),
    out: Path = opt.out_option("Folder for the fused run (run.trec, or run.jsonl when ids have spaces)."),
    method: str = typer.Option("rrf", "--method", help="rrf, combsum, combmnz, combmax or wsum (= convex)."),
    weights: str | None = typer.Option(None, "--weights", help="One weight per run, comma-separated (rrf, wsum)."),
    norm: str | None = typer.Option(None, "--norm", help="Score normalisation for the score-based methods: minmax, zscore, none."),
    k: float | None = typer.Option(None, "--rrf-k", help="RRF's k (default 60)."),
    depth: int | None = typer.Option(None, "--depth", help="Fuse only the top N of each run."),
    cv: int | None = typer.Option(
        None, "--cv", help="Choose the weights by N-fold cross-validation over queries (needs --qrels); "
        "each query is fused with weights chosen on the other folds.",
    ),
    qrels: Path | None = typer.Option(None, "--qrels", help="Qrels for --cv (TREC or BEIR tsv)."),
    metric: list[str] | None = opt.metrics_option("The metric --cv maximises.", ("ndcg@10",)),
    step: float = typer.Option(0.1, "--step", help="--cv grid step: weight vectors of multiples of it summing to 1."),
    seed: int = typer.Option(0, "--seed", help="--cv: how queries are dealt into folds."),
) -> None:
    """Fuse RUN... into one run; with --cv, print the weights chosen per fold and save the held-out run."""
    from finegrain.experiment.tuning.fusion_weights import cv_weights
    from finegrain.io.files import read_qrels_file
    from finegrain.results.files import read_any_run, save_run
    from finegrain.retrieve.fusion.methods import fuse

    loaded = [read_any_run(p) for p in runs]
    if cv is not None:
        if qrels is None:
            raise FinegrainError("--cv chooses weights on judged queries, and no --qrels was given", "pass --qrels FILE")
        if weights is not None:
            raise FinegrainError("--cv chooses the weights, and --weights gives them too", "leave --weights out")
        keys = opt.metric_keys(metric, ("ndcg@10",))
        search = cv_weights(loaded, read_qrels_file(qrels)[0], metric=keys[0], method=method, folds=cv, step=step,
                            seed=seed, norm=norm, k=k, depth=depth)
        typer.echo(str(search))
        fused = search.run
    else:
        fused = fuse(loaded, method, weights=_weights(weights), norm=norm, k=k, depth=depth)
    path = save_run(out, fused)
    typer.echo(f"{fused.name}: {len(fused)} queries -> {path}")


def _weights(text: str | None) -> list[float] | None:
    """``--weights 1,2``: numbers of the one grammar (finegrain.numbers), their range checked by the fusion."""
    if text is None:
        return None
    try:
        return [parse_float(w.strip()) for w in text.split(",")]
    except NumberError as e:
        raise FinegrainError(f"--weights {text!r} is not a comma-separated list of numbers",
                             f"{e.reason}; e.g. --weights 1,2") from None
