"""``finegrain compare``: several results folders side by side, with intervals and paired tests."""

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
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON instead of tables."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Also write the comparison as JSON to this file."),
) -> None:
    """Compare results on the same queries: CIs, paired t / randomization tests with Holm, win/tie/loss per type."""
    import json

    from finegrain.errors import FinegrainError
    from finegrain.evaluate.compare import load_comparison
    from finegrain.report.compare_table import print_comparison

    keys = metric_keys(metrics)
    cmp = load_comparison(folders, baseline=baseline, metrics=list(keys) or None, alpha=alpha,
                          n_resamples=resamples, seed=seed)
    body = cmp.to_json_dict()
    text = json.dumps(body, ensure_ascii=False, indent=1)
    if out is not None:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text + "\n", encoding="utf-8")
        except OSError as e:
            raise FinegrainError(f"cannot write {str(out)!r}: {e.strerror}", "choose a writable --out file") from None
    if as_json:
        typer.echo(text)
    else:
        print_comparison(body)
        if out is not None:
            typer.echo(f"wrote {out}")
