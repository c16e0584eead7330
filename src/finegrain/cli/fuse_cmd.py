"""``finegrain fuse RUN... --method rrf -o OUT``: fuse saved runs, optionally with weights chosen by k-fold CV.

The method's parameters (``finegrain list fusion``: ``weights``, ``k``, ``norm``, ``depth``) are
``--set KEY=VALUE``, as a retriever's are on ``finegrain eval``, checked against the method's
declared parameters. With judgements (``--qrels``, or input folders scored on one dataset) OUT is a
results folder, scored as ``finegrain eval`` writes one.
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
    out: Path = opt.out_option("Folder for the fused run (run.trec, or run.jsonl when ids have spaces) and, when "
                               "there are judgements, results.json."),
    method: str = typer.Option("rrf", "--method", help="rrf, combsum, combmnz, combmax or wsum (= convex)."),
    options: list[str] = opt.set_option(
        "Fusion parameter KEY=VALUE (repeatable): weights=1,2 k=60 norm=zscore depth=100; see finegrain list fusion."),
    cv: int | None = opt.cv_option("the weights (needs judgements: --qrels, or input folders of one dataset; each "
                                   "query is fused with weights chosen on the other folds)"),
    qrels: str | None = typer.Option(
        None, "--qrels",
        help="Judgements: a qrels file (TREC or BEIR tsv), a dataset folder or a dataset name (capretrieval/zh). "
             "Default: the dataset the input folders were scored on. With them the fused run is scored and OUT "
             "is a results folder (results.json beside the run) that compare and report read; with a dataset it "
             "has per-type tables, error tags and the drill-down's passages.",
    ),
    metric: list[str] | None = opt.metrics_option(
        "Metrics to score the fused run (default: those of the first input folder, else eval's).", ()),
    cv_metric: str | None = opt.cv_metric_option(f"the first -m, else {DEFAULT_CV_METRIC}"),
    step: float = typer.Option(0.1, "--step", help="--cv grid step: weight vectors of multiples of it summing to 1."),
    seed: int | None = opt.seed_option("--cv: how queries are dealt into folds"),
    weights: str | None = opt.retired_option("--weights", "--set weights=W1,W2"),
    norm: str | None = opt.retired_option("--norm", "--set norm=NORM"),
    k: str | None = opt.retired_option("--rrf-k", "--set k=K"),
    depth: str | None = opt.retired_option("--depth", "--set depth=N"),
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
    from finegrain.results.files import save_run
    from finegrain.results.saved import SavedResults
    from finegrain.retrieve.fusion.methods import fuse, fusion_options

    items = list(options)
    for (flag, key), value in zip(_RETIRED_SET, (weights, norm, k, depth), strict=True):
        if value is not None:
            opt.retired(flag, f"--set {key}={value}")
            items.append(f"{key}={value}")
    chosen = opt.metric_keys(metric, ())
    opt.check_cv(cv, cv_metric, seed)
    params = fusion_options(method, opt.parse_set(items))
    imported = [import_run(p) for p in runs]
    loaded = [i.run for i in imported]
    judged = None
    why_not: str | None = None
    if qrels is not None:
        judged = resolve_qrels(qrels)
    else:
        name, why_not = folders_dataset(runs)
        if name is not None:
            try:
                judged = resolve_qrels(name)
            except FinegrainError as e:
                why_not = f"the input folders' dataset {name!r} does not load here: {e}"
    objective = opt.metric_keys([cv_metric])[0] if cv_metric else (chosen[0] if chosen else DEFAULT_CV_METRIC)
    if cv is not None:
        if judged is None:
            raise FinegrainError("--cv chooses weights on judged queries, and there are none: " + str(why_not),
                                 "pass --qrels FILE or a dataset name")
        if "weights" in params:
            raise FinegrainError("--cv chooses the weights, and --set weights= gives them too", "leave weights= out")
        search = cv_weights(loaded, judged.qrels, metric=objective, method=method, folds=cv, step=step,
                            seed=seed or 0, **params)
        typer.echo(str(search))
        fused = search.run
    else:
        fused = fuse(loaded, method, **params)
    if judged is None:
        path = save_run(out, fused)
        typer.echo(f"{fused.name}: {len(fused)} queries -> {path}")
        typer.echo(f"wrote the run only ({why_not}): pass --qrels FILE or a dataset name for a results folder "
                   "that compare and report read", err=True)
        return
    folders = [p for p in runs if (p / "results.json").is_file()]
    metrics = list(chosen) or (list(SavedResults.load(folders[0]).metrics) if folders else list(DEFAULT_METRICS))
    if cv is not None and objective not in metrics:
        metrics.insert(0, objective)
    provenance = {
        "retriever": {"name": fused.name, "from": "fuse", "method": method, **params, "cv": cv},
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
