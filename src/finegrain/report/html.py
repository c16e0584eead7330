"""One self-contained HTML page rendered from saved results folders.

``render_report`` takes the saved results that ``finegrain eval`` wrote
(``DIR/results.json``, read as :class:`~finegrain.results.saved.SavedResults`
and labelled as :class:`~finegrain.compare.systems.LabelledResults`) and nothing else: no dataset, run or model is loaded.
The page holds a headline table (with bootstrap confidence intervals and
significance against a baseline when there are two or more systems), a
per-query-type table and chart, win/tie/loss counts, metric-vs-k curves, error
tags with example queries and passages (when the results carry them), the
denominators and the provenance of every folder.

Statistics come from :mod:`finegrain.compare.comparison` (never recomputed
here); charts are inline SVG from :mod:`finegrain.report.charts`. The template
is rendered with autoescaping on, so query texts and passages can never inject
markup, and the page loads nothing from the network.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from markupsafe import Markup

from finegrain.atomic import write_text
from finegrain.compare.comparison import CompareSettings, Comparison, compare, finite
from finegrain.compare.stats import Interval, bootstrap_ci
from finegrain.compare.systems import LabelledResults, load_labelled
from finegrain.compare.systems import resolve_baseline as _resolve_baseline
from finegrain.errors import FinegrainError
from finegrain.evaluate.groups import order_groups
from finegrain.frozen import thaw
from finegrain.report import charts
from finegrain.report.comparison_section import ci_note, comparison_view
from finegrain.report.diagnosis_sections import errors_view, taxonomy_view
from finegrain.report.drilldown import difference_charts, per_query_view
from finegrain.report.folders import Folders, load_folders
from finegrain.report.format import RANK_METRICS, fmt, fmt_delta, fmt_p, is_rank, readable
from finegrain.report.headline import headline_metric
from finegrain.report.probe_sections import probe_context, probes_only_context
from finegrain.report.threshold_section import threshold_view
from finegrain.results.saved import SCHEMA as RESULTS_SCHEMA
from finegrain.results.saved import is_transductive
from finegrain.version import __version__

__all__ = ["RANK_METRICS", "LabelledResults", "build_context", "fmt", "fmt_delta", "fmt_p", "is_rank", "load_systems",
           "readable", "render_report", "resolve_baseline", "resolve_metric", "write_report"]

N_DIFF_EXAMPLES = 8


def load_systems(dirs: Sequence[str | Path]) -> list[LabelledResults]:
    """Read each folder's ``results.json`` and label it by retriever name (made unique)."""
    return load_labelled(dirs)


def resolve_baseline(systems: Sequence[LabelledResults], baseline: str | int | None) -> int:
    """The baseline's index, as ``finegrain compare`` reads it (:func:`finegrain.compare.systems.resolve_baseline`)."""
    return _resolve_baseline(baseline, [s.label for s in systems], [s.path for s in systems])


def resolve_metric(systems: Sequence[LabelledResults], metric: str | None) -> str:
    """The headline metric (charts, forest plot, win/tie/loss, drill-down): :func:`finegrain.report.headline.headline_metric`."""

    return headline_metric([s.results for s in systems], metric)


# --------------------------------------------------------------------------- context


def build_context(
    systems: Sequence[LabelledResults],
    *,
    baseline: int = 0,
    metric: str | None = None,
    comparison: Comparison | None = None,
    intervals: Mapping[str, Interval] | None = None,
) -> dict[str, Any]:
    """Everything the template shows, as plain values (strings, numbers, lists, SVG markup).

    ``comparison`` is the :class:`~finegrain.compare.comparison.Comparison` of the systems (same
    order, two or more); ``intervals`` gives a single system's ``{metric: bootstrap interval}`` (with the
    default :class:`~finegrain.compare.comparison.CompareSettings`) when there is no comparison.
    """

    if not systems:
        raise FinegrainError("no results to report", "pass one or more folders written by 'finegrain eval --out DIR'")
    key = resolve_metric(systems, metric)
    base = systems[baseline]
    metrics = list(base.results.metrics)
    datasets = sorted({str(s.results.dataset_name or "unknown dataset") for s in systems})
    types = _type_order(systems)

    headline = []
    for i, s in enumerate(systems):
        agg = s.results.aggregate
        cells = []
        for m in metrics:
            if comparison is not None:
                summary = (comparison.summaries.get(m) or {}).get(s.label)
                ci = None if summary is None else summary.ci
            else:
                ci = (intervals or {}).get(m)
            lo, hi = (None, None) if ci is None else (finite(ci.low), finite(ci.high))
            cells.append({"value": fmt(agg.get(m), m),
                          "ci": f"[{fmt(lo, m)}, {fmt(hi, m)}]" if lo is not None and hi is not None else None})
        headline.append({"label": s.label, "colour": charts.colour(i), "is_baseline": i == baseline, "cells": cells})

    type_rows = []
    for t in types:
        cells = []
        for m in metrics:
            vals = [s.results.type_value(t, m) for s in systems]
            defined = [v for v in vals if v is not None]
            top = (min if is_rank(m) else max)(defined) if defined else None
            best = top if len(systems) > 1 and defined.count(top) == 1 else None
            cells.append([{"value": fmt(v, m), "best": best is not None and v == best} for v in vals])
        type_rows.append({"name": readable(t), "raw": t, "n": _types_n(systems, t), "cells": cells})

    type_chart = charts.grouped_bar_chart(
        [f"{readable(t)} (n={_types_n(systems, t)})" for t in types],
        [(s.label, [s.results.type_value(t, key) for t in types]) for s in systems],
        title=f"{key} by query type" + (" (lower is better)" if is_rank(key) else ""),
        axis_label=key if is_rank(key) else f"{key} (x100)",
        value_max=None if is_rank(key) else 1.0,
        fmt=(lambda v: f"{v:g}") if is_rank(key) else charts.percent,
        tick_fmt=(lambda v: f"{v:g}") if is_rank(key) else charts.percent_tick,
    )

    curve_charts = []
    for fam in base.results.curves:
        ks = sorted({int(k) for s in systems for k in (s.results.curves.get(fam) or {})})
        if not ks:
            continue
        series = [(s.label, [(s.results.curves.get(fam) or {}).get(str(k)) for k in ks]) for s in systems]
        curve_charts.append(Markup(charts.line_chart(ks, series, title=f"{fam}@k", x_label="k (log scale)",
                                                     y_label=f"{fam} (x100)", y_max=1.0, width=340, height=290)))

    return {
        "title": f"finegrain report — {', '.join(datasets)}",
        "datasets": datasets,
        "systems": [{"label": s.label, "colour": charts.colour(i), "path": s.path, "is_baseline": i == baseline,
                     "transductive": is_transductive(s.results)} for i, s in enumerate(systems)],
        "baseline": base.label,
        "metric": key,
        "metric_is_rank": is_rank(key),
        "rank_metrics": [m for m in metrics if is_rank(m)],
        "metrics": metrics,
        "headline": headline,
        "ci_note": ci_note(comparison.settings if comparison is not None else
                           CompareSettings() if intervals is not None else None),
        "type_rows": type_rows,
        "type_chart": Markup(type_chart),
        "curve_charts": curve_charts,
        "comparison": comparison_view(comparison, systems, baseline, key, types) if comparison else None,
        "differences": _differences(systems, baseline, key) if len(systems) > 1 else [],
        "diff_charts": difference_charts(comparison, systems, baseline, key) if comparison else None,
        "per_query": per_query_view(systems, baseline, key),
        "errors": errors_view(systems),
        "taxonomy": taxonomy_view(systems),
        "threshold": threshold_view(systems),  # eval --sweep: finegrain.report.threshold_section
        "denominators": _denominators(systems),
        "provenance": _provenance(systems),
        "version": __version__,
    }


def _types_n(systems: Sequence[LabelledResults], t: str) -> int:
    return max((s.results.group_size(t) for s in systems), default=0)


def _type_order(systems: Sequence[LabelledResults]) -> list[str]:
    """The query types of every system, in the one order of query groups (by name, 'untyped' last)."""
    return order_groups(t for s in systems for t in s.results.by_type)


def _differences(systems: Sequence[LabelledResults], baseline: int, key: str) -> list[dict[str, Any]]:
    """Per challenger: the queries where it gains and loses most against the baseline (saved values only)."""
    base = systems[baseline].results
    base_pq = base.metrics[key].per_query or {}
    queries = base.queries
    out = []
    for i, s in enumerate(systems):
        if i == baseline:
            continue
        pq = s.results.metrics[key].per_query or {}
        sign = -1.0 if is_rank(key) else 1.0  # a gain is a higher score, or a lower rank
        diffs = [(sign * (pq[q] - base_pq[q]), q) for q in base_pq
                 if q in pq and pq[q] is not None and base_pq[q] is not None]

        def rows(
            items: list[tuple[float, str]], pq: Mapping[str, Any] = pq, sign: float = sign
        ) -> list[dict[str, Any]]:
            return [{"qid": q, "text": queries[q].text if q in queries else "",
                     "type": readable(queries[q].type if q in queries else None),
                     "base": fmt(base_pq[q], key), "other": fmt(pq[q], key),
                     "delta": f"{sign * d:+g}" if is_rank(key) else f"{d * 100:+.2f}", "gain": d > 0}
                    for d, q in items]

        gains = sorted((x for x in diffs if x[0] > 0), key=lambda x: (-x[0], x[1]))[:N_DIFF_EXAMPLES]
        losses = sorted((x for x in diffs if x[0] < 0), key=lambda x: (x[0], x[1]))[:N_DIFF_EXAMPLES]
        out.append({"label": s.label, "gains": rows(gains), "losses": rows(losses)})
    return out


DENOMINATOR_COLUMNS = ("n_universe", "n_scored", "n_excluded_no_relevant", "n_missing_from_run", "n_undefined",
                       "n_ignored_run_queries")


def _denominators(systems: Sequence[LabelledResults]) -> dict[str, Any]:
    cols = list(DENOMINATOR_COLUMNS)
    for s in systems:
        for m in s.results.metrics.values():
            cols += [c for c in m.denominators if c not in cols]
    rows = []
    for s in systems:
        for m, d in ((k, r.denominators) for k, r in s.results.metrics.items() if r.denominators):
            rows.append({"system": s.label, "metric": m, "cells": [d.get(c, "") for c in cols]})
    return {"columns": [c.removeprefix("n_").replace("_", " ") for c in cols], "rows": rows}


def _flatten(obj: Any, prefix: str = "") -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            out += _flatten(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(obj, (list, tuple)) and all(not isinstance(x, (Mapping, list, tuple)) for x in obj):
        out.append((prefix, ", ".join(str(x) for x in obj) if obj else "(none)"))
    elif isinstance(obj, (list, tuple)):
        out.append((prefix, json.dumps(thaw(obj), ensure_ascii=False)))
    else:
        out.append((prefix, "—" if obj is None else str(obj)))
    return out


def _provenance(systems: Sequence[LabelledResults]) -> dict[str, Any]:
    """The dataset's provenance once (when every folder has the same), then each folder's own."""

    datasets = [s.results.provenance.get("dataset") or {} for s in systems]
    shared = all(d == datasets[0] for d in datasets)
    cards = []
    for i, s in enumerate(systems):
        rows = []
        if s.path is not None:
            rows.append(("results folder", s.path))
        if s.sha256 is not None:
            rows.append(("results.json sha256", s.sha256))
        rows.append(("schema", RESULTS_SCHEMA if s.results.origin == "finegrain" else s.results.origin))
        prov = thaw(s.results.provenance)
        if shared:
            prov.pop("dataset", None)
        retriever = prov.pop("retriever", None)  # the long configuration last, after the run's facts
        rows += _flatten(prov) + _flatten({"retriever": retriever} if retriever is not None else {})
        cards.append({"label": s.label, "colour": charts.colour(i), "rows": rows})
    return {"dataset": _flatten(datasets[0]) if shared and datasets[0] else None, "systems": cards}


# --------------------------------------------------------------------------- render


@functools.lru_cache(maxsize=1)
def _environment() -> Any:
    """The template environment, made once: it compiles each template on first use and keeps it."""
    try:
        from jinja2 import Environment, PackageLoader, StrictUndefined
    except ImportError:
        raise FinegrainError("the HTML report needs the Python package 'jinja2', which is not installed",
                             "install it with: pip install 'jinja2>=3.1' (or re-install finegrain)") from None

    return Environment(loader=PackageLoader("finegrain.report", "templates"), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def render_report(
    systems: Sequence[LabelledResults],
    *,
    baseline: str | int | None = None,
    metric: str | None = None,
    probes: Any | None = None,
    metrics: Sequence[str] | None = None,
) -> str:
    """The report page for one or more systems (a comparison when there are two or more).

    With two or more systems the statistics are those of
    :func:`finegrain.compare.comparison.compare` (default settings); with one,
    the headline intervals are :func:`finegrain.compare.stats.bootstrap_ci`
    with the same settings. ``metrics`` limits the comparison to those keys
    (default: every shared metric). ``probes`` (:class:`~finegrain.report.folders.Folders`)
    adds the perturbation and contrast sections; with no system, only those.
    """

    folders = probes if probes is not None else Folders(list(systems), [], [])
    if not systems and (folders.perturbs or folders.contrasts):
        ctx = probes_only_context(folders)
    else:
        ctx = _eval_context(systems, baseline, metric, metrics)
    return _environment().get_template("report.html.j2").render(**ctx, **probe_context(folders))


def _eval_context(systems: Sequence[LabelledResults], baseline: str | int | None, metric: str | None,
                  metrics: Sequence[str] | None = None) -> dict[str, Any]:
    b = resolve_baseline(systems, baseline)
    metric = resolve_metric(systems, metric)  # the headline; fails on a bad --metric before any resampling
    comparison = None
    intervals = None
    if len(systems) > 1:
        cmp = compare([s.results for s in systems], folders=[s.path or s.label for s in systems], baseline=b,
                      metrics=list(metrics) if metrics else None)
        comparison = cmp
        systems = [replace(s, label=c.name) for s, c in zip(systems, cmp.systems)]  # the comparison's names
    else:
        intervals = _single_intervals(systems[0])
    return build_context(systems, baseline=b, metric=metric, comparison=comparison, intervals=intervals)


def _single_intervals(s: LabelledResults) -> dict[str, Interval]:
    """Bootstrap intervals of one system's per-query means, with the comparison's default settings.

    Only for metrics whose saved aggregation rule is ``mean`` (a median or a
    ratio of sums gets no interval), as :mod:`finegrain.compare.comparison` decides.
    """


    st = CompareSettings()
    out: dict[str, Interval] = {}
    for m, rec in s.results.metrics.items():
        vals = np.asarray(list(rec.defined().values()), dtype=np.float64)
        if not rec.is_mean or rec.value is None or len(vals) == 0:
            continue
        out[m] = bootstrap_ci(vals, n_resamples=st.n_resamples, confidence=st.confidence, seed=st.seed,
                              method=st.ci_method)
    return out


def write_report(
    dirs: Sequence[str | Path],
    out: str | Path,
    *,
    baseline: str | int | None = None,
    metric: str | None = None,
    metrics: Sequence[str] | None = None,
) -> Path:
    """Render the folders' results (evaluation, perturbation and contrast folders, in any mix) into one HTML
    file at ``out``; returns its path. ``metric`` is charted; ``metrics`` limits the comparison."""

    folders = load_folders(dirs)
    html = render_report(folders.systems, baseline=baseline, metric=metric, probes=folders, metrics=metrics)
    return write_text(Path(out), html)
