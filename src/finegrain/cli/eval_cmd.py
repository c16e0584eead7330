"""``finegrain eval``: run a retriever on a dataset, score it, save and print the results."""

from __future__ import annotations

from pathlib import Path

import typer


def eval_command(
    dataset: str = typer.Option(..., "--dataset", "-d", help="Dataset name (e.g. capretrieval/zh) or a folder in a known format."),
    retriever: str = typer.Option(..., "--retriever", "-r", help="Retriever name (bm25-okapi, bm25, ...)."),
    metrics: str = typer.Option("ndcg@1,ndcg@5,ndcg@10", "--metrics", "-m", help="Comma-separated metric specs."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for results.json and run.trec."),
    top_k: int | None = typer.Option(None, "--top-k", "-k", min=1, help="Keep the top N results per query (default: the retriever's own cut)."),
    options: list[str] = typer.Option([], "--set", "-s", help="Retriever option KEY=VALUE (repeatable), e.g. --set k1=1.2."),
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
        Experiment(dataset=dataset, retriever=retriever, metrics=names, top_k=top_k,
                   retriever_options=parse_options(options)),
        Settings.from_env(),
        show_progress=not quiet,
    )
    path = write_results(out, outcome.results, outcome.run)
    print_evaluation(outcome.results, title=f"{dataset} · {retriever}")
    typer.echo(f"wrote {path} and {path.parent / 'run.trec'}")


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
