"""``finegrain eval``: run a retriever on a dataset, score it, save and print the results."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from finegrain.cli import options as opt

DEFAULT_METRICS = ("ndcg@1", "ndcg@5", "ndcg@10")
MTEB_FILE = "mteb.json"


class EngineChoice(str, Enum):
    """Where ``finegrain eval`` retrieves and scores: this process, or Ray (finegrain.experiment.executors)."""

    LOCAL = "local"
    RAY = "ray"


class ResultFormat(str, Enum):
    """What ``finegrain eval`` writes besides the run: results.json, and with ``mteb`` an MTEB result JSON too."""

    FINEGRAIN = "finegrain"
    MTEB = "mteb"


def eval_command(
    dataset: str = opt.dataset_option(),
    retriever: str | None = opt.retriever_option(
        "Retriever name (finegrain list retrievers); or give --run.", default=None),
    run_file: Path | None = typer.Option(
        None, "--run",
        help="Score a run made elsewhere in place of a retriever: a TREC run (Pyserini, trec_eval input), run.jsonl, "
             "ranx JSON or Parquet run, or a results folder; the folder gets the same per-type tables, error tags, "
             "grades and drill-down as a retrieved run, and its provenance names the file and its SHA-256."),
    split: str | None = typer.Option(
        None, "--split",
        help="The qrels split of a BEIR dataset (qrels/<split>.tsv); without it qrels.tsv, else qrels/test.tsv, "
             "else the only split, and the terminal says which was used when there are several."),
    metrics: list[str] | None = opt.metrics_option("Metric specs: ndcg@10, recall@100, ...", DEFAULT_METRICS),
    out: Path = opt.out_option("Folder for results.json and the run (run.trec; run.jsonl when ids have spaces)."),
    top_k: int | None = opt.top_k_option(),
    options: list[str] = opt.set_option(),
    quiet: bool = opt.quiet_option(),
    out_format: ResultFormat = typer.Option(
        ResultFormat.FINEGRAIN, "--format",
        help="finegrain: DIR/results.json; mteb: also DIR/mteb.json, an MTEB result JSON (aggregates only; "
             "main_score is ndcg@10 when computed) that mteb.TaskResult.from_disk loads."),
    mteb_layout: bool = typer.Option(
        False, "--mteb-layout",
        help="Write the MTEB result JSON where mteb's result cache keeps it, "
             "DIR/results/<model>/<revision>/<Task>.json, in place of DIR/mteb.json "
             "(mteb.ResultCache(DIR).load_results(require_model_meta=False) reads it); implies --format mteb."),
    split_by: str | None = typer.Option(
        None, "--split-by",
        help="overlap=FILE: report the queries FILE lists ('finegrain overlap' pairs or one id per line) as "
             "group Overlap and the rest as Others, in place of the query types (DuReader Table 6)."),
    sweep: str | None = typer.Option(
        None, "--sweep",
        help="threshold=START:STOP:STEP[,norm=none|minmax|zscore][,folds=5][,seed=0]: score the -m metrics on "
             "the items scoring >= each threshold (threshold retrieval; pair_f1, set_f1, reject_f1) and choose "
             "the threshold by k-fold cross-validation over queries (finegrain.experiment.tuning.threshold)."),
    cv: str | None = opt.cv_option(
        "the retriever's tunable options (hybrid weights and RRF k, BM25 k1 and b; those not fixed by --set; "
        "a fusion's parts too with --cv-parts), "
        "folds stratified by query type; saves the out-of-fold run and scores, the a-priori default and the "
        "per-fold choices (finegrain.experiment.tuning.cv)"),
    cv_metric: str | None = opt.cv_metric_option("ndcg@10 if -m has it, else the first -m metric"),
    cv_parts: bool = typer.Option(
        False, "--cv-parts",
        help="With --cv on a fusion (hybrid, hybrid-use, hybrid-routed, ...): tune each part's own options too (BM25 k1 and b, "
             "a dense part's vector PRF; those not fixed by --set PART.KEY), nested: in each fold every part is "
             "chosen alone on the other folds, then the fusion's weights and k over those parts "
             "(finegrain.experiment.tuning.nested)."),
    seed: int | None = opt.seed_option("--cv: how queries are dealt into folds"),
    no_cache: bool = opt.no_cache_option(),
    engine: EngineChoice = typer.Option(
        EngineChoice.LOCAL, "--engine",
        help="local: this process; ray: sharded BM25 / dense search and per-query metrics on Ray "
             "(the same results; needs pip install 'finegrain[ray]')."),
    address: str | None = typer.Option(
        None, "--address",
        help="Ray cluster to join (the address 'ray start --head' prints, e.g. 127.0.0.1:6379); "
             "without it --engine ray starts a local Ray."),
) -> None:
    """Retrieve (or read --run), evaluate and write DIR/results.json and the run.

    The run is DIR/run.trec, or DIR/run.jsonl when a query or document id
    has a space, a tab or another character a TREC line cannot hold (JSON
    lines: a header, then one line per query with its [doc_id, score] pairs
    in rank order; read it with finegrain.results.files.read_saved_run).
    """
    from finegrain.experiment.executors.engine import Engine
    from finegrain.experiment.run import Experiment, run_experiment
    from finegrain.report.table import print_evaluation
    from finegrain.results.files import RUN_JSONL
    from finegrain.results.saved import is_transductive
    from finegrain.retrieve.registry import without_cache
    from finegrain.settings import Settings

    names = opt.metric_keys(metrics, DEFAULT_METRICS)
    spec = cv_spec(cv, cv_metric, seed, parts=cv_parts)
    # fails here, before the dataset is read (a run file has no options: run_experiment says so)
    checked = opt.retriever_options(retriever, options) if retriever is not None else opt.parse_set(options)
    if no_cache and retriever is not None:
        checked = without_cache(retriever, checked)
    where = Engine(engine.value, address=address)  # --address without ray fails here
    outcome = run_experiment(
        Experiment(dataset=dataset, retriever=retriever, metrics=names, top_k=top_k,
                   retriever_options=checked, split_by=split_by, sweep=sweep, cv=spec, run=run_file, split=split),
        Settings.from_env(),
        show_progress=not quiet,
        engine=where,
    )
    (out / MTEB_FILE).unlink(missing_ok=True)  # an earlier eval's MTEB file would disagree with these results
    path, run_path = outcome.save(out)
    system = outcome.saved.retriever_name if retriever is None else retriever
    mark = " · TRANSDUCTIVE (trained on this dataset's passages)" if is_transductive(outcome.results) else ""
    print_evaluation(outcome.saved, title=f"{dataset} · {system}{mark}")
    saved = outcome.saved
    if saved.threshold_sweep is not None:
        from finegrain.report.threshold_table import print_sweep

        print_sweep(saved.threshold_sweep, title=f"{dataset} · {system}")
    if saved.cv is not None and saved.cv_provenance is not None:
        from finegrain.report.cv_table import print_cv

        print_cv(saved.cv, saved.cv_provenance, title=f"{dataset} · {system}")
    typer.echo(f"wrote {path} and {run_path}")
    if out_format is ResultFormat.MTEB or mteb_layout:
        from finegrain.results.mteb import main_metric, write_mteb_json, write_mteb_layout

        written = write_mteb_layout(saved, out) if mteb_layout else write_mteb_json(saved, out / MTEB_FILE)
        main, note = main_metric(saved)
        typer.echo(f"wrote {written} (MTEB result JSON, main_score {main})")
        if note:
            typer.echo(f"warning: {note}", err=True)
    if run_path.name == RUN_JSONL:
        typer.echo("the run is JSON lines, not TREC: some ids have spaces or other characters a TREC line cannot hold")
    for warning in outcome.results["provenance"].get("warnings", ()):
        typer.echo(f"warning: {warning}", err=True)


def cv_spec(cv: str | None, cv_metric: str | None, seed: int | None, *, parts: bool = False) -> str | None:
    """The ``K,metric=M,seed=S[,parts=tuned]`` spec :func:`~finegrain.experiment.run.run_experiment` reads, from
    ``--cv K --cv-metric M --seed S [--cv-parts]``; the retired ``--cv K,metric=M,seed=S`` is read with a warning
    naming the new spelling."""
    from finegrain.errors import FinegrainError
    from finegrain.experiment.tuning.cv import parse_cv
    from finegrain.numbers import NumberError, parse_int

    folds = None
    if cv is not None:
        text = cv.strip()
        if "," in text:
            old = parse_cv(text)
            if cv_metric is not None or seed is not None:
                raise FinegrainError(f"--cv {text} gives its metric or seed inside, and --cv-metric or --seed too",
                                     f"write --cv {old.folds} --cv-metric M --seed S")
            opt.retired("--cv K,metric=M,seed=S", f"--cv {old.folds}" + (f" --cv-metric {old.metric}" if old.metric else "")
                        + f" --seed {old.seed}" + (" --cv-parts" if old.tune_parts else ""))
            folds, cv_metric, seed, parts = old.folds, old.metric, old.seed, parts or old.tune_parts
        else:
            try:
                folds = parse_int(text)  # the one number grammar: int() would read 1_0 and ٣ as numbers
            except NumberError as e:
                raise FinegrainError(f"--cv {cv!r} is not a whole number of folds: {e.reason}",
                                     "pass --cv 5, say") from None
    opt.check_cv(folds, cv_metric, seed)
    if folds is None:
        if parts:
            raise FinegrainError("--cv-parts goes with --cv, and no --cv was given", "add --cv K or leave --cv-parts out")
        return None
    metric = f",metric={opt.metric_keys([cv_metric])[0]}" if cv_metric is not None else ""
    return f"{folds}{metric},seed={seed or 0}" + (",parts=tuned" if parts else "")
