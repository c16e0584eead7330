"""``finegrain report DIR... --out FILE.html``: one self-contained HTML page from saved results."""

from __future__ import annotations

from pathlib import Path

import typer

from finegrain.cli.options import metric_keys, metrics_option


def report_command(
    dirs: list[Path] = typer.Argument(..., metavar="DIR", help="Results folders written by 'finegrain eval', 'finegrain perturb' or "
                                    "'finegrain contrast' (--out DIR), in any mix."),
    out: Path = typer.Option(..., "--out", "-o", help="The HTML file to write."),
    baseline: str | None = typer.Option(
        None, "--baseline", "-b",
        help="The system the others are compared against: an index into the evaluation DIRs (0 = the first, the default), "
        "one of the DIRs, or a system label (as in 'finegrain compare').",
    ),
    metric: list[str] | None = metrics_option(
        "Metrics of the comparison; the first one is drawn in the charts and win/tie/loss "
        "(default: every shared metric, the first that can be tested charted)."
    ),
) -> None:
    """Render the saved results of one or more folders into one HTML page.

    With two or more folders the page compares them: confidence intervals,
    significance tests and win/tie/loss against the baseline. Nothing is
    re-run; the page needs no network to open. Perturbation and contrast
    folders add the sections "Query perturbation" and "Contrastive
    discrimination"; without an evaluation folder the page has only those.
    """
    from finegrain.report.html import write_report

    keys = metric_keys(metric)
    path = write_report(dirs, out, baseline=baseline, metric=keys[0] if keys else None, metrics=keys or None)
    typer.echo(f"wrote {path}")
