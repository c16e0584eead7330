"""``finegrain evaluate QRELS RUN -m ndcg@10 ...``: trec_eval-like scoring of a run file.

``--format trec_eval`` prints what trec_eval prints (:mod:`finegrain.evaluate.trec_format`), and the verb
reads trec_eval's own flags there: ``-q`` per query, ``-c`` complete, ``-m`` in its syntax.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from finegrain.cli.options import compat_letter, metrics_option
from finegrain.errors import FinegrainError

if TYPE_CHECKING:
    from finegrain.evaluate.compat import CompatOptions
    from finegrain.evaluate.result import Evaluation
    from finegrain.types import Run

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
    compat: str | None = typer.Option(
        None,
        "--compat",
        help="strict (default) or trec_eval: the numbers the trec_eval binary prints (its reading of '#' "
        "lines and extra fields, queries in both files, no-relevant queries and 0/0 as 0); the rules are in "
        "docs/reference/metrics.md. --format trec_eval implies trec_eval.",
        show_default=False,
    ),
    complete: bool = typer.Option(
        False, "--complete",
        help="With --compat trec_eval or --format trec_eval: average over every qrels query "
        "(missing ones score 0); trec_eval's -c letter is read too.",
    ),
    complete_letter: bool = compat_letter("-c", "--complete", "trec_eval"),
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
    per_query: bool = typer.Option(
        False, "--per-query", help="Also print every query's value; trec_eval's -q letter is read too."
    ),
    per_query_letter: bool = compat_letter("-q", "--per-query", "trec_eval"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table (= --format json)."),
    output_format: str | None = typer.Option(
        None, "--format",
        help="table (default), json, or trec_eval: trec_eval's lines 'measure<TAB>qid<TAB>value' with its "
        "measure names (P_5, ndcg_cut_10, map, ...), its numbers (--compat trec_eval) and its -m syntax "
        "(P.5,10, ndcg_cut.10, official, all_trec); notes go to stderr. Without -m: official.",
        show_default=False,
    ),
) -> None:
    """Score RUN against QRELS, trec_eval-like.

    Rankings break score ties by document id descending, as trec_eval does.
    Strict (default): ranking metrics leave out queries without a relevant
    item and score qrels queries missing from the run 0; both counts are
    printed. --compat trec_eval: the trec_eval binary's rules (listed in
    docs/reference/metrics.md).

    Output: a table of 'metric  all  value' lines, then one denominators line
    per metric (with --per-query, 'metric  qid  value' lines come first).
    With --format trec_eval: trec_eval's output (-q: per query first), and
    the notes on stderr.
    With --json: one object {metric key: mean}. With --json --per-query:
    {"aggregate": {key: mean}, "per_query": {key: {qid: value}},
    "denominators": {key: {...}}} (and "compat": {...} under --compat
    trec_eval). Undefined values (0/0) print as 'undefined' in the table and
    null in JSON.
    """
    from finegrain.datasets.qrels import resolve_qrels
    from finegrain.evaluate import evaluate
    from finegrain.evaluate.compat import options
    from finegrain.evaluate.trec_format import read_measures, trec_eval_lines
    from finegrain.io.files import read_run_file
    from finegrain.metrics.spec import parse_metrics

    complete, per_query = complete or complete_letter, per_query or per_query_letter
    fmt_out = _output_format(output_format, as_json)
    trec_out = fmt_out == "trec_eval"
    if trec_out and compat is not None and compat.strip().lower() != "trec_eval":
        raise FinegrainError(
            f"--format trec_eval prints trec_eval's numbers, not --compat {compat}'s",
            "drop --compat (--format trec_eval implies --compat trec_eval), or use --format table",
        )
    opts = options("trec_eval" if trec_out else compat, complete=complete, level_for_rel=level_for_rel)
    if trec_out:  # fail fast, before reading files
        asked = read_measures(list(metric) if metric else None)
        specs = list(asked.specs) or parse_metrics("num_ret")  # runid / num_q alone still need the queries
    else:
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

    if trec_out:
        shown = list(ev) if asked.specs else []
        typer.echo("\n".join(trec_eval_lines(ev, per_query=per_query, lines=asked.lines, show=shown)))
        typer.echo("\n".join([*asked.notes, *_notes(ev, opts, source.label, run, universe)]), err=True)
        return

    if fmt_out == "json":
        out: dict[str, object]
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
    lines.extend(_notes(ev, opts, source.label, run, universe))
    typer.echo("\n".join(lines))


def _output_format(output_format: str | None, as_json: bool) -> str:
    """``table``, ``json`` or ``trec_eval``, from --format and --json."""
    fmt = "json" if as_json and output_format is None else (output_format or "table").strip().lower()
    if fmt not in ("table", "json", "trec_eval"):
        raise FinegrainError(f"unknown --format {output_format!r}", "use table, json or trec_eval")
    if as_json and fmt != "json":
        raise FinegrainError(f"--json and --format {output_format} ask for two outputs", "give one of them")
    return fmt


def _notes(ev: Evaluation, opts: CompatOptions, qrels_label: str, run: Run, universe: object) -> list[str]:
    """The '#' lines: the rules of the mode, what was read, and each metric's denominators."""
    lines = []
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
        f"# qrels {qrels_label}; universe {d0.n_universe} queries "
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
    return lines


def _text(value: float | None) -> str:
    if value is None:
        return "undefined"
    if math.isinf(value):
        return "inf"
    return f"{value:.4f}"


def _json_number(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None
