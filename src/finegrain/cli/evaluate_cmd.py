"""``finegrain evaluate QRELS RUN -m ndcg@10 ...``: trec_eval-like scoring of a run file."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import typer

from finegrain.cli.options import metrics_option

DEFAULT_METRICS = ("ndcg@10", "map@100", "recall@100", "precision@10", "mrr@10")


def evaluate_command(
    qrels_path: str = typer.Argument(
        ..., metavar="QRELS",
        help="Qrels: a file (TREC 'qid iter docid grade', or BEIR/MTEB tsv 'query-id corpus-id score'; .gz ok), "
             "a dataset folder, or a dataset name (capretrieval/zh; finegrain list datasets).",
    ),
    run_path: Path = typer.Argument(
        ..., metavar="RUN",
        help="Run: TREC 'qid Q0 docid rank score tag', or a run.jsonl saved by 'finegrain eval' (.gz ok).",
    ),
    metric: list[str] = metrics_option(
        "Metric spec: ndcg@10, recall@50, ndcg@10(rel=2), reject_f1, ...", DEFAULT_METRICS
    ),
    queries: Path | None = typer.Option(
        None,
        "--queries",
        help="Query universe: one id per line, or jsonl with 'id'. Listed queries absent from the run "
        "have an empty prediction; run queries not listed are ignored. Default: the qrels' queries.",
    ),
    compat: str = typer.Option(
        "strict",
        "--compat",
        help="strict (default) or trec_eval: the numbers the trec_eval binary prints (its reading of '#' "
        "lines and extra fields, queries in both files, no-relevant queries and 0/0 as 0). See the README.",
    ),
    complete: bool = typer.Option(
        False, "--complete",
        help="With --compat trec_eval: trec_eval's -c, average over every qrels query (missing ones score 0).",
    ),
    level_for_rel: int | None = typer.Option(
        None, "--level-for-rel",
        help="With --compat trec_eval: trec_eval's -l N, the lowest relevant grade for every metric but ndcg.",
    ),
    qrels_format: str = typer.Option(
        "auto", "--qrels-format", help="auto (by suffix .json/.parquet, else the first line: 4 fields TREC, 3 tab-separated BEIR), trec, beir or table."
    ),
    allow_empty_run: bool = typer.Option(
        False, "--allow-empty-run",
        help="Score a run file with no result line (every query missing) instead of failing.",
    ),
    per_query: bool = typer.Option(False, "--per-query", help="Also print every query's value."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Score RUN against QRELS, trec_eval-like.

    Rankings break score ties by document id descending, as trec_eval does.
    Strict (default): ranking metrics leave out queries without a relevant
    item and score qrels queries missing from the run 0; both counts are
    printed. --compat trec_eval: the trec_eval binary's rules (see README).

    Output: a table of 'metric  all  value' lines, then one denominators line
    per metric (with --per-query, 'metric  qid  value' lines come first).
    With --json: one object {metric key: mean}. With --json --per-query:
    {"aggregate": {key: mean}, "per_query": {key: {qid: value}},
    "denominators": {key: {...}}} (and "compat": {...} under --compat
    trec_eval). Undefined values (0/0) print as 'undefined' in the table and
    null in JSON.
    """
    from finegrain.datasets.qrels import resolve_qrels
    from finegrain.evaluate import evaluate
    from finegrain.evaluate.compat import options
    from finegrain.io.files import read_run_file
    from finegrain.metrics.spec import parse_metrics

    opts = options(compat, complete=complete, level_for_rel=level_for_rel)  # fail fast, before reading files
    specs = parse_metrics(list(metric) if metric else list(DEFAULT_METRICS), trec_eval=opts.trec_eval)
    universe = None
    if queries is not None:
        from finegrain.io.idlist import read_ids

        universe = read_ids(queries)
    source = resolve_qrels(qrels_path, compat=opts.mode, qrels_format=qrels_format)
    qrels = source.qrels
    run = read_run_file(run_path, compat=opts.mode, allow_empty_run=allow_empty_run)
    ev = evaluate(qrels, run, specs, queries=universe, compat=opts.mode, complete=opts.complete,
                  level_for_rel=opts.level_for_rel, warn=False)

    if as_json:
        if per_query:
            body: dict[str, Any] = dict(ev.to_json_dict())
            keys: tuple[str, ...] = ("aggregate", "per_query", "denominators", "compat")
            out = {k: body[k] for k in keys if k in body}
        else:
            out = {k: _json_number(v) for k, v in ev.aggregate().items()}
        typer.echo(json.dumps(out, ensure_ascii=False, allow_nan=False))
        return

    width = max(22, *(len(k) for k in ev))
    lines = []
    if per_query:
        for key, result in ev.items():
            missing = "inf" if result.key.startswith("median_rank") else "undefined"  # None = not found
            for qid, value in result.per_query.items():
                lines.append(f"{key:<{width}}\t{qid}\t{_text(value) if value is not None else missing}")
    for key, result in ev.items():
        lines.append(f"{key:<{width}}\tall\t{_text(result.value)}")
    first = next(iter(ev.values()))
    d0 = first.denominators
    if opts.trec_eval:
        lines.append(
            f"# compat trec_eval{' -c' if opts.complete else ''}"
            f"{f' -l {opts.level_for_rel}' if opts.level_for_rel is not None else ''}: "
            + ("every qrels query averaged (missing from the run: 0)" if opts.complete
               else "queries in both qrels and run averaged")
            + "; no relevant item and 0/0 count as 0"
        )
    lines.append(
        f"# qrels {source.label}; universe {d0.n_universe} queries "
        f"({'--queries' if universe is not None else 'qrels'}); "
        f"run {run.name!r}: {len(run)} queries, {d0.n_ignored_run_queries} ignored (not in the universe)"
    )
    for key, result in ev.items():
        d = result.denominators
        if opts.trec_eval:
            lines.append(
                f"# {key}: {d.n_scored - d.n_undefined} of {d.n_universe} queries counted; "
                f"excluded (not in the run) {d.n_excluded_not_in_run}; "
                f"no relevant item, counted as 0: {d.n_no_relevant_as_zero}; "
                f"missing from run (empty ranking) {d.n_missing_from_run}"
            )
        else:
            lines.append(
                f"# {key}: {d.n_scored - d.n_undefined} of {d.n_universe} queries counted; "
                f"excluded (no relevant item) {d.n_excluded_no_relevant}; "
                f"missing from run (empty ranking) {d.n_missing_from_run}; undefined {d.n_undefined}"
            )
    typer.echo("\n".join(lines))


def _text(value: float | None) -> str:
    if value is None:
        return "undefined"
    if math.isinf(value):
        return "inf"
    return f"{value:.4f}"


def _json_number(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None
