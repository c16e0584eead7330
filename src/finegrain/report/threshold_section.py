"""The report's threshold-retrieval section, rendered from the saved ``"threshold_sweep"`` section alone
(:mod:`finegrain.experiment.tuning.threshold`): per system, the metric-vs-threshold curve and each metric's
cross-validated threshold with its cross-validated score."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

from finegrain.compare.systems import LabelledResults
from finegrain.report import charts
from finegrain.report.table import fmt
from finegrain.results.tuning import ThresholdCv

MAX_POINTS = 16  # a longer curve is drawn at every n-th threshold (the table below it has them all)


def _g(x: float | None) -> str:
    return "—" if x is None else f"{x:g}"


def threshold_view(systems: Sequence[LabelledResults]) -> dict[str, Any] | None:
    """Curves and cross-validated thresholds of every system that saved a sweep; None when none did."""
    found = [(i, s, s.results.threshold_sweep) for i, s in enumerate(systems)]
    present = [(i, s, v) for i, s, v in found if v is not None]
    if not present:
        return None
    rows, plots, method = [], [], ""
    for _, s, sw in present:
        method = sw.method or method
        norm = sw.normalisation.method
        ts = sw.thresholds
        for m in sw.metrics:
            cv = sw.cross_validation.get(m) or ThresholdCv()
            rows.append({"system": s.label, "metric": m, "norm": norm, "threshold": _g(cv.threshold),
                         "folds": ", ".join(_g(x) for x in cv.thresholds),
                         "value": fmt(cv.value), "in_sample": fmt(cv.in_sample_value),
                         "in_sample_at": _g(cv.in_sample_threshold)})
        if not ts:
            continue
        step = max(1, -(-len(ts) // MAX_POINTS))
        keep = list(range(0, len(ts), step))
        if keep[-1] != len(ts) - 1:
            keep.append(len(ts) - 1)
        series = [(m, [sw.curve[m][k] for k in keep]) for m in sw.metrics]
        x_label = "threshold (raw score)" if norm == "none" else f"threshold ({norm}-normalised score)"
        plots.append(Markup(charts.line_chart(
            [ts[k] for k in keep], series, title=f"{s.label}: metric vs threshold", x_label=x_label,
            y_label="x100", log_x=False, y_max=1.0, width=520, height=300)))
    missing = [s.label for _, s, v in found if v is None]
    return {"rows": rows, "charts": plots, "method": method,
            "notes": [f"{x}: no threshold sweep saved (finegrain eval --sweep threshold=START:STOP:STEP)"
                      for x in missing]}
