"""``finegrain eval``: run a retriever on a dataset, score it, save and print the results."""

from __future__ import annotations

from pathlib import Path

import typer

from finegrain.cli.main import app


@app.command("eval")
def eval_command(
    dataset: str = typer.Option(..., "--dataset", "-d", help="Dataset name (e.g. capretrieval/zh) or a folder in a known format."),
    retriever: str = typer.Option(..., "--retriever", "-r", help="Retriever name (bm25-okapi, bm25, ...)."),
    metrics: str = typer.Option("ndcg@1,ndcg@5,ndcg@10", "--metrics", "-m", help="Comma-separated metric specs."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for results.json and run.trec."),
    top_k: int | None = typer.Option(None, "--top-k", "-k", min=1, help="Keep the top N results per query (default: the retriever's own cut)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
) -> None:
    """Retrieve, evaluate and write DIR/results.json and DIR/run.trec."""
    from finegrain.evaluate.pipeline import Experiment, run_experiment
    from finegrain.io.results import write_results
    from finegrain.report.table import print_evaluation
    from finegrain.settings import Settings

    from finegrain.metrics.spec import parse_metrics

    names = tuple(s.key for s in parse_metrics([metrics]))
    outcome = run_experiment(
        Experiment(dataset=dataset, retriever=retriever, metrics=names, top_k=top_k),
        Settings.from_env(),
        show_progress=not quiet,
    )
    path = write_results(out, outcome.results, outcome.run)
    print_evaluation(outcome.results, title=f"{dataset} · {retriever}")
    typer.echo(f"wrote {path} and {path.parent / 'run.trec'}")
