"""Terminal view of a threshold sweep, rendered from the saved ``"threshold_sweep"`` section
(:mod:`finegrain.experiment.tuning.threshold`): the metric-vs-threshold curve and each metric's
cross-validated threshold with its cross-validated score."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from finegrain.report.console import table_console
from finegrain.report.table import fmt
from finegrain.results.tuning import ThresholdCv, ThresholdSweepSection

MAX_ROWS = 41  # longer curves are shown every n-th threshold (plus every chosen one)
CV_MARK = "◆"


def _t(x: float | None) -> str:
    return "—" if x is None else f"{x:g}"


def sweep_table(sweep: ThresholdSweepSection, title: str = "") -> Table:
    """One row per threshold: each metric x100, the mean set size and the rejected queries; ``◆`` marks the
    metrics' cross-validated thresholds."""
    ts = sweep.thresholds
    metrics = sweep.metrics
    chosen = {m: (sweep.cross_validation.get(m) or ThresholdCv()).threshold for m in metrics}
    norm = sweep.normalisation.method
    t = Table(title=(f"{title} · " if title else "") + f"threshold sweep (x100; scores: "
              f"{'raw' if norm == 'none' else norm + '-normalised'}; {CV_MARK} cross-validated threshold)",
              title_justify="left")
    t.add_column("threshold", justify="right")
    for m in metrics:
        t.add_column(m, justify="right")
    t.add_column("mean set size", justify="right")
    t.add_column("rejected", justify="right")
    stride = max(1, -(-len(ts) // MAX_ROWS))
    for i, th in enumerate(ts):
        marked = [m for m in metrics if chosen[m] == th]
        if i % stride and not marked and i != len(ts) - 1:
            continue
        cells = [fmt(sweep.curve[m][i]) + (f" {CV_MARK}" if chosen[m] == th else "") for m in metrics]
        t.add_row(_t(th), *cells, f"{sweep.mean_returned[i]:.1f}", str(sweep.rejected[i]),
                  style="bold" if marked else None)
    return t


def cv_lines(sweep: ThresholdSweepSection) -> list[str]:
    """One line per metric: the cross-validated threshold, the folds' thresholds, the cross-validated score and
    the in-sample best (labelled optimistic)."""
    k = sweep.folds
    out = []
    for m in sweep.metrics:
        c = sweep.cross_validation.get(m) or ThresholdCv()
        folds = ", ".join(_t(x) for x in c.thresholds)
        out.append(
            f"{m}: cross-validated threshold {_t(c.threshold)} ({k}-fold cross-validation over "
            f"{sweep.n_queries} queries; fold thresholds {folds}, each fitted on the other {k - 1} folds, "
            f"never on the fold it is scored on) · cross-validated {m} = {fmt(c.value)} (x100, pooled "
            f"out-of-fold) · in-sample best {fmt(c.in_sample_value)} at {_t(c.in_sample_threshold)} "
            "(optimistic: chosen on the queries it is scored on)")
    return out


def print_sweep(sweep: ThresholdSweepSection, title: str = "", console: Console | None = None) -> None:
    console = console or table_console()
    console.print(sweep_table(sweep, title))
    for line in cv_lines(sweep):
        console.print(line, highlight=False)
    n = sweep.max_returned
    if n is not None:
        console.print(f"the run holds at most {n} items per query: a threshold keeps no more than that", highlight=False)
