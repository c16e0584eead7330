"""``finegrain eval``: run a retriever on a dataset, score it, save and print the results."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from finegrain.cli.options import metric_keys, metrics_option

DEFAULT_METRICS = ("ndcg@1", "ndcg@5", "ndcg@10")
MTEB_FILE = "mteb.json"


class ResultFormat(str, Enum):
    """What ``finegrain eval`` writes besides the run: results.json, and with ``mteb`` an MTEB result JSON too."""

    FINEGRAIN = "finegrain"
    MTEB = "mteb"


def eval_command(
    dataset: str = typer.Option(..., "--dataset", "-d", help="Dataset name (e.g. capretrieval/zh) or a folder in a known format."),
    retriever: str = typer.Option(..., "--retriever", "-r", help="Retriever name (bm25-okapi, bm25, ...)."),
    metrics: list[str] | None = metrics_option("Metric specs: ndcg@10, recall@100, ...", DEFAULT_METRICS),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for results.json and the run (run.trec; run.jsonl when ids have spaces)."),
    top_k: int | None = typer.Option(None, "--top-k", "-k", min=1, help="Keep the top N results per query (default: the retriever's own cut)."),
    options: list[str] = typer.Option([], "--set", "-s", help="Retriever option KEY=VALUE (repeatable), e.g. --set k1=1.2."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
    out_format: ResultFormat = typer.Option(
        ResultFormat.FINEGRAIN, "--format",
        help="finegrain: DIR/results.json; mteb: also DIR/mteb.json, an MTEB result JSON (aggregates only)."),
) -> None:
    """Retrieve, evaluate and write DIR/results.json and the run.

    The run is DIR/run.trec, or DIR/run.jsonl when a query or document id
    has a space, a tab or another character a TREC line cannot hold (JSON
    lines: a header, then one line per query with its [doc_id, score] pairs
    in rank order; read it with finegrain.evaluate.pipeline.read_saved_run).
    """
    from finegrain.evaluate.pipeline import RUN_JSONL, Experiment, run_experiment, save_run
    from finegrain.io.results import write_results
    from finegrain.report.table import print_evaluation
    from finegrain.settings import Settings

    names = metric_keys(metrics, DEFAULT_METRICS)
    outcome = run_experiment(
        Experiment(dataset=dataset, retriever=retriever, metrics=names, top_k=top_k,
                   retriever_options=parse_options(options)),
        Settings.from_env(),
        show_progress=not quiet,
    )
    path = write_results(out, outcome.results)
    run_path = save_run(out, outcome.run)
    print_evaluation(outcome.results, title=f"{dataset} · {retriever}")
    typer.echo(f"wrote {path} and {run_path}")
    if out_format is ResultFormat.MTEB:
        from finegrain.evaluate.mteb_json import write_mteb_json
        from finegrain.evaluate.saved import SavedResults

        typer.echo(f"wrote {write_mteb_json(SavedResults.from_json(outcome.results), out / MTEB_FILE)} (MTEB result JSON)")
    if run_path.name == RUN_JSONL:
        typer.echo("the run is JSON lines, not TREC: some ids have spaces or other characters a TREC line cannot hold")
    for warning in outcome.results["provenance"].get("warnings", ()):
        typer.echo(f"warning: {warning}", err=True)


def parse_options(items: list[str]) -> dict[str, object]:
    """``["k1=1.2", "encoder=e5", "fuse=rrf"]`` -> typed values (int, float, bool, None or str)."""
    from finegrain.errors import FinegrainError

    out: dict[str, object] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise FinegrainError(f"--set {item!r} is not KEY=VALUE", "write it like --set k1=1.2")
        out[key.strip()] = _typed(raw.strip())
    return out


def _typed(raw: str) -> object:
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return raw
