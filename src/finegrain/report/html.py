"""One self-contained HTML page rendered from saved results folders.

``render_report`` takes the results dictionaries that ``finegrain eval`` wrote
(``DIR/results.json``) and nothing else: no dataset, run or model is loaded.
The page holds a headline table (with bootstrap confidence intervals and
significance against a baseline when there are two or more systems), a
per-query-type table and chart, win/tie/loss counts, metric-vs-k curves, error
tags with example queries and passages (when the results carry them), the
denominators and the provenance of every folder.

Statistics come from :mod:`finegrain.evaluate.compare` (never recomputed
here); charts are inline SVG from :mod:`finegrain.report.charts`. The template
is rendered with autoescaping on, so query texts and passages can never inject
markup, and the page loads nothing from the network.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from finegrain.errors import FinegrainError

UNTYPED = "untyped"
N_DIFF_EXAMPLES = 8


@dataclass(frozen=True)
class System:
    """One results folder: a display label, where it came from and its saved results."""

    label: str
    results: Mapping[str, Any]
    path: str | None = None
    sha256: str | None = None


def load_systems(dirs: Sequence[str | Path]) -> list[System]:
    """Read each folder's ``results.json`` and label it by retriever name (made unique)."""
    from finegrain.io.results import RESULTS_FILE, read_results

    if not dirs:
        raise FinegrainError("no results folder given", "pass one or more folders written by 'finegrain eval --out DIR'")
    loaded = []
    for d in dirs:
        p = Path(d)
        results = read_results(p)
        f = p / RESULTS_FILE if p.is_dir() else p
        loaded.append((str(p), results, hashlib.sha256(f.read_bytes()).hexdigest()))
    labels = unique_labels([(r.get("provenance") or {}).get("retriever", {}).get("name") or Path(p).name
                            for p, r, _ in loaded], [p for p, _, _ in loaded])
    return [System(label, r, path, sha) for label, (path, r, sha) in zip(labels, loaded)]


def unique_labels(names: Sequence[str], paths: Sequence[str]) -> list[str]:
    """Retriever names, with the folder name added where two systems share one."""
    out = []
    for i, (name, path) in enumerate(zip(names, paths)):
        dup = sum(n == name for n in names) > 1
        label = f"{name} ({Path(path).name})" if dup else str(name)
        out.append(label)
    for i, label in enumerate(out):  # same retriever *and* same folder name
        if out.count(label) > 1:
            out[i] = f"{label} #{i + 1}"
    return out


def resolve_baseline(systems: Sequence[System], baseline: str | int | None) -> int:
    """The baseline's index: None -> the first; a 1-based position; a folder path; or a label."""
    if baseline is None:
        return 0
    text = str(baseline).strip()
    if text.isdigit():
        n = int(text)
        if 1 <= n <= len(systems):
            return n - 1
        raise FinegrainError(f"--baseline {n} is not a position among the {len(systems)} results folders",
                             f"give a number from 1 to {len(systems)}, a folder or a system label")
    for i, s in enumerate(systems):
        if s.path is not None and Path(s.path).resolve() == Path(text).resolve():
            return i
    for i, s in enumerate(systems):
        if s.label == text:
            return i
    known = ", ".join(s.label for s in systems)
    raise FinegrainError(f"--baseline {text!r} is none of the results folders or systems ({known})",
                         "give one of the DIR arguments, its 1-based position, or a system label")


def resolve_metric(systems: Sequence[System], metric: str | None) -> str:
    """The metric the charts and win/tie/loss use: given, or the first one every system has."""
    keys = [k for k in (systems[0].results.get("aggregate") or {}) if
            all(k in (s.results.get("aggregate") or {}) for s in systems)]
    if not keys:
        raise FinegrainError("the results folders share no metric",
                             "evaluate them with a common metric, e.g. 'finegrain eval -m ndcg@10'")
    if metric is None:
        return keys[0]
    from finegrain.metrics.spec import parse_metric

    key = parse_metric(metric).key
    if key not in keys:
        raise FinegrainError(f"--metric {metric!r} is not in every results folder; shared metrics: {', '.join(keys)}",
                             "pick one of those, or re-run 'finegrain eval' with it")
    return key


def readable(name: str | None) -> str:
    """``singleton_object`` -> ``singleton object``."""
    return (name or UNTYPED).replace("_", " ").replace("-", " ")


def fmt(value: Any) -> str:
    """A metric value x100 with two decimals; an em dash for undefined."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{value * 100:.2f}"


def fmt_p(p: Any) -> str:
    if p is None or (isinstance(p, float) and not math.isfinite(p)):
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


# --------------------------------------------------------------------------- context


def build_context(
    systems: Sequence[System],
    *,
    baseline: int = 0,
    metric: str | None = None,
    comparison: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything the template shows, as plain values (strings, numbers, lists, SVG markup).

    ``comparison`` is :meth:`Comparison.to_json_dict` of the systems (in the
    same order), or None for a single system.
    """
    from markupsafe import Markup

    from finegrain import __version__
    from finegrain.report import charts

    if not systems:
        raise FinegrainError("no results to report", "pass one or more folders written by 'finegrain eval --out DIR'")
    key = resolve_metric(systems, metric)
    metrics = [k for k in (systems[baseline].results.get("aggregate") or {})]
    base = systems[baseline]
    datasets = sorted({str(_dataset_name(s.results)) for s in systems})
    types = _type_order(systems)
    cmp = _comparison_view(comparison, systems, baseline) if comparison else None

    headline = []
    for i, s in enumerate(systems):
        agg = s.results.get("aggregate") or {}
        cells = []
        for m in metrics:
            ci = cmp["ci"].get((i, m)) if cmp else None
            test = cmp["tests"].get((i, m)) if cmp else None
            cells.append({"value": fmt(agg.get(m)), "ci": f"[{fmt(ci[0])}, {fmt(ci[1])}]" if ci else None,
                          "delta": _delta(agg.get(m), base.results.get("aggregate", {}).get(m)) if i != baseline else None,
                          "test": test})
        headline.append({"label": s.label, "colour": charts.colour(i), "is_baseline": i == baseline, "cells": cells})

    type_rows = []
    for t in types:
        n = max((_type_n(s.results, t) for s in systems), default=0)
        row_cells = []
        for m in metrics:
            vals = [_type_value(s.results, t, m) for s in systems]
            best = max((v for v in vals if v is not None), default=None)
            row_cells.append([{"value": fmt(v), "best": v is not None and v == best and len(systems) > 1} for v in vals])
        type_rows.append({"name": readable(t), "raw": t, "n": n, "cells": row_cells})

    categories = [f"{readable(t)} (n={max(_type_n(s.results, t) for s in systems)})" for t in types]
    type_chart = charts.grouped_bar_chart(
        categories,
        [(s.label, [_type_value(s.results, t, key) for t in types]) for s in systems],
        title=f"{key} by query type (x100)",
        axis_label=f"{key} x100",
        value_max=1.0,
    )

    curve_charts = []
    families = [f for f in (base.results.get("curves") or {})]
    for fam in families:
        ks = sorted({int(k) for s in systems for k in ((s.results.get("curves") or {}).get(fam) or {})})
        if not ks:
            continue
        series = [(s.label, [((s.results.get("curves") or {}).get(fam) or {}).get(str(k)) for k in ks]) for s in systems]
        curve_charts.append(Markup(charts.line_chart(ks, series, title=f"{fam}@k", x_label="k (log scale)",
                                                     y_label=f"{fam} x100", y_max=1.0)))

    return {
        "title": f"finegrain report — {', '.join(datasets)}",
        "datasets": datasets,
        "dataset_mismatch": len(datasets) > 1,
        "systems": [{"label": s.label, "colour": charts.colour(i), "path": s.path, "is_baseline": i == baseline}
                    for i, s in enumerate(systems)],
        "baseline": base.label,
        "metric": key,
        "metrics": metrics,
        "headline": headline,
        "type_rows": type_rows,
        "type_chart": Markup(type_chart),
        "curve_charts": curve_charts,
        "comparison": cmp,
        "differences": _differences(systems, baseline, key) if len(systems) > 1 else [],
        "errors": _errors_view(systems),
        "denominators": _denominators(systems),
        "provenance": [_provenance(s) for s in systems],
        "version": __version__,
    }


def _dataset_name(results: Mapping[str, Any]) -> Any:
    return ((results.get("provenance") or {}).get("dataset") or {}).get("name", "unknown dataset")


def _type_n(results: Mapping[str, Any], t: str) -> int:
    cells = (results.get("by_type") or {}).get(t) or {}
    return max((c.get("n", 0) for c in cells.values() if isinstance(c, Mapping)), default=0)


def _type_value(results: Mapping[str, Any], t: str, key: str) -> float | None:
    cell = ((results.get("by_type") or {}).get(t) or {}).get(key)
    return cell.get("value") if isinstance(cell, Mapping) else cell


def _type_order(systems: Sequence[System]) -> list[str]:
    """Query types, most queries first, 'untyped' last; ties by name."""
    names = {t for s in systems for t in (s.results.get("by_type") or {})}
    n = {t: max(_type_n(s.results, t) for s in systems) for t in names}
    return sorted(names, key=lambda t: (t == UNTYPED, -n[t], t))


def _delta(value: Any, base: Any) -> str | None:
    if value is None or base is None:
        return None
    d = (value - base) * 100
    return f"{d:+.2f}"


def _differences(systems: Sequence[System], baseline: int, key: str) -> list[dict[str, Any]]:
    """Per challenger: the queries where it gains and loses most against the baseline (saved values only)."""
    base = systems[baseline].results
    base_pq = (base.get("per_query") or {}).get(key) or {}
    queries = base.get("queries") or {}
    out = []
    for i, s in enumerate(systems):
        if i == baseline:
            continue
        pq = (s.results.get("per_query") or {}).get(key) or {}
        diffs = [(pq[q] - base_pq[q], q) for q in base_pq if q in pq and pq[q] is not None and base_pq[q] is not None]

        def rows(items: list[tuple[float, str]], pq: Mapping[str, Any] = pq) -> list[dict[str, Any]]:
            return [{"qid": q, "text": (queries.get(q) or {}).get("text", ""), "type": readable((queries.get(q) or {}).get("type")),
                     "base": fmt(base_pq[q]), "other": fmt(pq[q]), "delta": f"{d * 100:+.2f}"} for d, q in items]

        gains = sorted((x for x in diffs if x[0] > 0), key=lambda x: (-x[0], x[1]))[:N_DIFF_EXAMPLES]
        losses = sorted((x for x in diffs if x[0] < 0), key=lambda x: (x[0], x[1]))[:N_DIFF_EXAMPLES]
        out.append({"label": s.label, "gains": rows(gains), "losses": rows(losses)})
    return out


DENOMINATOR_COLUMNS = ("n_universe", "n_scored", "n_excluded_no_relevant", "n_missing_from_run", "n_undefined",
                       "n_ignored_run_queries")


def _denominators(systems: Sequence[System]) -> dict[str, Any]:
    cols = list(DENOMINATOR_COLUMNS)
    for s in systems:
        for d in (s.results.get("denominators") or {}).values():
            cols += [c for c in d if c not in cols]
    rows = []
    for s in systems:
        for m, d in (s.results.get("denominators") or {}).items():
            rows.append({"system": s.label, "metric": m, "cells": [d.get(c, "") for c in cols]})
    return {"columns": [c.removeprefix("n_").replace("_", " ") for c in cols], "rows": rows}


def _flatten(obj: Any, prefix: str = "") -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            out += _flatten(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(obj, list) and all(not isinstance(x, (Mapping, list)) for x in obj):
        out.append((prefix, ", ".join(str(x) for x in obj) if obj else "(none)"))
    elif isinstance(obj, list):
        out.append((prefix, json.dumps(obj, ensure_ascii=False)))
    else:
        out.append((prefix, "—" if obj is None else str(obj)))
    return out


def _provenance(s: System) -> dict[str, Any]:
    rows = []
    if s.path is not None:
        rows.append(("results folder", s.path))
    if s.sha256 is not None:
        rows.append(("results.json sha256", s.sha256))
    rows.append(("schema", str(s.results.get("schema", "—"))))
    rows += _flatten(s.results.get("provenance") or {})
    return {"label": s.label, "rows": rows}


# ----------------------------------------------------------- comparison and errors (other modules' output)


def _comparison_view(comparison: Mapping[str, Any], systems: Sequence[System], baseline: int) -> dict[str, Any]:
    """Adapt :meth:`Comparison.to_json_dict` to the template: CIs, tests and win/tie/loss per system."""
    raise NotImplementedError  # filled in against finegrain.evaluate.compare


def _errors_view(systems: Sequence[System]) -> list[dict[str, Any]]:
    """The 'errors' block of each results file (error tags, counts, examples), when present."""
    return []


# --------------------------------------------------------------------------- render


def _environment() -> Any:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(loader=PackageLoader("finegrain.report", "templates"), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def render_report(
    systems: Sequence[System],
    *,
    baseline: str | int | None = None,
    metric: str | None = None,
) -> str:
    """The report page for one or more systems (a comparison when there are two or more)."""
    b = resolve_baseline(systems, baseline)
    comparison = _compare(systems, b) if len(systems) > 1 else None
    ctx = build_context(systems, baseline=b, metric=metric, comparison=comparison)
    return _environment().get_template("report.html.j2").render(**ctx)


def _compare(systems: Sequence[System], baseline: int) -> Mapping[str, Any] | None:
    return None  # filled in against finegrain.evaluate.compare


def write_report(
    dirs: Sequence[str | Path],
    out: str | Path,
    *,
    baseline: str | int | None = None,
    metric: str | None = None,
) -> Path:
    """Render the folders' results into one HTML file at ``out``; returns its path."""
    systems = load_systems(dirs)
    html = render_report(systems, baseline=baseline, metric=metric)
    path = Path(out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(html, encoding="utf-8")
        tmp.replace(path)
    except OSError as e:
        raise FinegrainError(f"cannot write the report to {str(path)!r}: {e.strerror}", "choose a writable --out") from None
    return path
