"""``finegrain compare``: several results folders side by side, with intervals and paired tests;
with ``--qrels-new``, how each metric and system rank moves between two versions of the qrels."""

from __future__ import annotations

from pathlib import Path

import typer

from finegrain.cli.options import metric_keys, metrics_option


def compare_command(
    folders: list[Path] = typer.Argument(..., metavar="DIR", help="Results folders written by 'finegrain eval --out DIR', or MTEB result JSON files "
                                "(aggregates only: no intervals or significance tests without per-query values)."),
    baseline: str = typer.Option("0", "--baseline", "-b",
                                 help="Baseline: an index into DIRs (0 = the first), a system name, or a folder."),
    metrics: list[str] | None = metrics_option("Metrics to compare (default: every metric the folders share)."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level after Holm correction."),
    resamples: int = typer.Option(10000, "--resamples", min=1, help="Bootstrap and randomization resamples."),
    seed: int = typer.Option(0, "--seed", help="Seed of the resampling."),
    qrels_old: Path | None = typer.Option(
        None, "--qrels", metavar="OLD",
        help="With --qrels-new: the qrels before relabelling (TREC, BEIR tsv, ranx JSON; default: the qrels of the "
             "folders' dataset)."),
    qrels_new: Path | None = typer.Option(
        None, "--qrels-new", metavar="NEW",
        help="The relabelled qrels: re-score each folder's saved run under OLD and NEW and show how every metric and "
             "system rank moves (delta, rank old -> new, Kendall's tau), as DuReader-retrieval Fig. 2."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON instead of tables."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Also write the comparison as JSON to this file."),
) -> None:
    """Compare results on the same queries: CIs, paired t / randomization tests with Holm, win/tie/loss per type.

    With --qrels-new NEW (and --qrels OLD), compare two versions of the qrels instead: each folder's saved run is
    scored under both, and the table shows per metric and system the old and new value, the delta, the rank under
    each, and Kendall's tau between the two system orderings.
    """
    import json

    from finegrain.errors import FinegrainError

    keys = metric_keys(metrics)
    cmp = None
    if qrels_new is not None:
        body, text_table = _relabel(folders, qrels_old, qrels_new, keys)
    elif qrels_old is not None:
        raise FinegrainError("--qrels is the old qrels of a relabelling and needs --qrels-new",
                             "add --qrels-new NEW (the relabelled qrels), or drop --qrels")
    else:
        from finegrain.compare.comparison import load_comparison

        cmp = load_comparison(folders, baseline=baseline, metrics=list(keys) or None, alpha=alpha,
                              n_resamples=resamples, seed=seed)
        body, text_table = cmp.to_json_dict(), None
    text = json.dumps(body, ensure_ascii=False, indent=1)
    if out is not None:
        from finegrain.atomic import write_text

        write_text(out, text + "\n")
    if as_json:
        typer.echo(text)
    else:
        if cmp is not None:
            from finegrain.report.compare_table import print_comparison

            print_comparison(cmp)
        else:
            typer.echo(text_table)
        if out is not None:
            typer.echo(f"wrote {out}")


def _relabel(folders: list[Path], old_path: Path | None, new_path: Path, keys: tuple[str, ...]) -> tuple[dict, str]:
    """The relabelling delta of the folders' saved runs between OLD (or the dataset's qrels) and NEW."""
    from finegrain.compare.relabel import format_relabel, relabel_delta, saved_runs
    from finegrain.io.files import read_qrels_file

    runs, systems = saved_runs(folders)
    if old_path is not None:
        old, _ = read_qrels_file(old_path)
        old_label = str(old_path)
    else:
        old, old_label = _dataset_qrels(systems)
    new, _ = read_qrels_file(new_path)
    wanted = list(keys) or _shared_mean_metrics(systems)
    delta = relabel_delta(runs, old, new, wanted, old_label=old_label, new_label=str(new_path))
    return delta.to_json_dict(), format_relabel(delta)


def _dataset_qrels(systems: list) -> tuple:
    from finegrain.datasets import load_dataset
    from finegrain.errors import FinegrainError
    from finegrain.settings import Settings

    names = {s.results.dataset_name for s in systems}
    if len(names) != 1 or None in names:
        raise FinegrainError(f"the folders name {len(names)} datasets ({', '.join(sorted(map(str, names)))}), so the "
                             "old qrels cannot be taken from them", "give the old qrels with --qrels OLD")
    name = names.pop()
    return load_dataset(str(name), Settings.from_env()).qrels, f"{name} (dataset qrels)"


def _shared_mean_metrics(systems: list) -> list[str]:
    """Default metrics: those every folder saved whose aggregate is a mean (as 'finegrain compare' compares)."""
    from finegrain.errors import FinegrainError

    first = systems[0].results.metrics
    keys = [k for k, m in first.items() if m.is_mean and all(k in s.results.metrics for s in systems[1:])]
    if not keys:
        raise FinegrainError("the folders share no per-query mean metric", "name the metrics with -m, e.g. -m ndcg@10")
    return keys
