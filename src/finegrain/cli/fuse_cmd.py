"""``finegrain fuse RUN... --method rrf -o OUT``: fuse saved runs, optionally with weights chosen by k-fold CV."""

from __future__ import annotations

from pathlib import Path

import typer

from finegrain.cli import options as opt
from finegrain.errors import FinegrainError


def fuse_command(
    runs: list[Path] = typer.Argument(
        ..., metavar="RUN...",
        help="Runs to fuse: folders written by 'finegrain eval -o DIR', or run files (TREC, run.jsonl, ranx JSON, Parquet).",
    ),
    out: Path = opt.out_option("Folder for the fused run (run.trec, or run.jsonl when ids have spaces) and, when "
                               "there are judgements, results.json."),
    method: str = typer.Option("rrf", "--method", help="rrf, combsum, combmnz, combmax or wsum (= convex)."),
    weights: str | None = typer.Option(None, "--weights", help="One weight per run, comma-separated (rrf, wsum)."),
    norm: str | None = typer.Option(None, "--norm", help="Score normalisation for the score-based methods: minmax, zscore, none."),
    k: float | None = typer.Option(None, "--rrf-k", help="RRF's k (default 60)."),
    depth: int | None = typer.Option(None, "--depth", help="Fuse only the top N of each run."),
    cv: int | None = typer.Option(
        None, "--cv", help="Choose the weights by N-fold cross-validation over queries (needs judgements: --qrels, "
        "or input folders of one dataset); each query is fused with weights chosen on the other folds.",
    ),
    qrels: str | None = typer.Option(
        None, "--qrels",
        help="Judgements: a qrels file (TREC or BEIR tsv), a dataset folder or a dataset name (capretrieval/zh). "
             "Default: the dataset the input folders were scored on. With them the fused run is scored and OUT "
             "is a results folder (results.json beside the run) that compare and report read; with a dataset it "
             "has per-type tables, error tags and the drill-down's passages.",
    ),
    metric: list[str] | None = opt.metrics_option(
        "Metrics to score the fused run (default: those of the first input folder, else eval's); --cv maximises "
        "the first (default ndcg@10).", ()),
    step: float = typer.Option(0.1, "--step", help="--cv grid step: weight vectors of multiples of it summing to 1."),
    seed: int = typer.Option(0, "--seed", help="--cv: how queries are dealt into folds."),
) -> None:
    """Fuse RUN... into one run; with --cv, print the weights chosen per fold and save the held-out run.

    With judgements (--qrels, or input folders scored on one dataset) OUT is a results folder:
    the fused run, scored, as 'finegrain eval' writes one.
    """
    from finegrain.cli.eval_cmd import DEFAULT_METRICS
    from finegrain.datasets.qrels import resolve_qrels
    from finegrain.experiment.imported import folders_dataset, import_run
    from finegrain.experiment.run import score_run
    from finegrain.experiment.tuning.fusion_weights import cv_weights
    from finegrain.report.table import print_evaluation
    from finegrain.results.saved import SavedResults
    from finegrain.retrieve.fusion.methods import fuse

    chosen = opt.metric_keys(metric, ())
    imported = [import_run(p) for p in runs]
    loaded = [i.run for i in imported]
    judged = None
    if qrels is not None:
        judged = resolve_qrels(qrels)
        why_not = None
    else:
        name, why_not = folders_dataset(runs)
        if name is not None:
            try:
                judged = resolve_qrels(name)
            except FinegrainError as e:
                why_not = f"the input folders' dataset {name!r} does not load here: {e}"
    if cv is not None:
        if judged is None:
            raise FinegrainError("--cv chooses weights on judged queries, and there are none: " + str(why_not),
                                 "pass --qrels FILE or a dataset name")
        if weights is not None:
            raise FinegrainError("--cv chooses the weights, and --weights gives them too", "leave --weights out")
        objective = chosen[0] if chosen else "ndcg@10"
        search = cv_weights(loaded, judged.qrels, metric=objective, method=method, folds=cv, step=step,
                            seed=seed, norm=norm, k=k, depth=depth)
        typer.echo(str(search))
        fused = search.run
    else:
        fused = fuse(loaded, method, weights=_weights(weights), norm=norm, k=k, depth=depth)
    if judged is None:
        from finegrain.results.files import save_run

        path = save_run(out, fused)
        typer.echo(f"{fused.name}: {len(fused)} queries -> {path}")
        typer.echo(f"wrote the run only ({why_not}): pass --qrels FILE or a dataset name for a results folder "
                   "that compare and report read", err=True)
        return
    folders = [p for p in runs if p.is_dir()]
    metrics = list(chosen) or (list(SavedResults.load(folders[0]).metrics) if folders else list(DEFAULT_METRICS))
    if cv is not None and (chosen[0] if chosen else "ndcg@10") not in metrics:
        metrics.insert(0, chosen[0] if chosen else "ndcg@10")
    provenance = {
        "retriever": {"name": fused.name, "from": "fuse", "method": method, "weights": _weights(weights),
                      "norm": norm, "rrf_k": k, "depth": depth, "cv": cv},
        "run": {"source": "fuse", "inputs": [dict(i.provenance) for i in imported]},
        **({} if judged.dataset is not None else {"dataset": {"name": None, "qrels": judged.label,
                                                              "path": str(Path(str(qrels)).resolve())}}),
    }
    outcome = score_run(judged.dataset if judged.dataset is not None else judged.qrels, fused, metrics,
                        provenance=provenance)
    path, run_path = outcome.save(out)
    print_evaluation(outcome.saved, title=f"{outcome.saved.dataset_name or judged.label} · {fused.name}")
    typer.echo(f"{fused.name}: {len(fused)} queries -> {run_path}; wrote {path}")
    for warning in outcome.saved.provenance.get("warnings", ()):
        typer.echo(f"warning: {warning}", err=True)


def _weights(text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(w) for w in text.split(",")]
    except ValueError:
        raise FinegrainError(f"--weights {text!r} is not a comma-separated list of numbers", "e.g. --weights 1,2") from None
