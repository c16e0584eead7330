"""The report's probe sections, rendered from saved results alone: query perturbation and contrastive discrimination.

:func:`perturb_view` adapts the ``results.json`` of ``finegrain perturb``
(:mod:`finegrain.diagnose.perturb`: per family, where the best relevant item
moved -- Table 4 -- and the paired metric deltas with bootstrap intervals --
Table 5) plus a few example perturbations from ``perturbations.jsonl``.
:func:`contrast_view` adapts ``finegrain contrast`` (FG-CDA per category and
direction, :mod:`finegrain.diagnose.contrastive`), several encoders side by
side. Every number is the saved one, formatted as the rest of the page (x100,
two decimals); nothing is recomputed but the bar widths.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from markupsafe import Markup

from finegrain.diagnose.perturb.tables import metric_names, protocol_line
from finegrain.diagnose.perturb.tables import rows as table_rows
from finegrain.report import charts
from finegrain.report.folders import Folders, Probe
from finegrain.report.format import fmt, fmt_delta
from finegrain.report.probe_charts import Interval, interval_chart, share_chart
from finegrain.results.probes import (
    AblationCell,
    AblationTable,
    ContrastResults,
    DirectionResults,
    MetricDeltaCell,
    PairCosine,
    PerturbResults,
    PoolDirection,
    RecallAt,
    RecallChange,
    SliceAccuracy,
)
from finegrain.version import __version__


def probe_context(folders: Folders) -> dict[str, Any]:
    """The template values of both probe sections (None for a kind no folder has)."""
    return {"perturb": perturb_view(folders.perturbs), "contrast": contrast_view(folders.contrasts),
            "n_folders": len(folders.systems) + len(folders.perturbs) + len(folders.contrasts)}


def probes_only_context(folders: Folders) -> dict[str, Any]:
    """The page's header values when no evaluation folder is given (the evaluation sections are left out)."""

    names = [p.results.dataset for p in folders.perturbs]
    names += [p.results.pairs.name for p in folders.contrasts]
    return {"title": f"finegrain report — {', '.join(dict.fromkeys(n for n in names if n))}", "systems": [],
            "version": __version__}


def _pct(v: float | None, unit: str = "") -> str:
    return "—" if v is None else f"{v:.2f}{unit}"


def _interval(m: MetricDeltaCell | None) -> Interval:
    if m is None or m.delta is None or m.ci_low is None or m.ci_high is None:
        return None
    return m.delta, m.ci_low, m.ci_high


def _marked(text: str, start: int, piece: str, other: str) -> list[dict[str, Any]]:
    """``text`` as ``[{text, mark}]`` with ``piece`` at ``start`` marked; when it is not there (the edit
    also changed a neighbour, e.g. 'a' -> 'an'), the span where ``text`` differs from ``other``."""
    if not (piece and 0 <= start <= len(text) and text[start:start + len(piece)] == piece):
        pre = len(os.path.commonprefix([text, other]))
        suf = len(os.path.commonprefix([text[pre:][::-1], other[pre:][::-1]]))
        start, piece = pre, text[pre:len(text) - suf]
    parts = [(text[:start], False), (piece, True), (text[start + len(piece):], False)]
    return [{"text": t, "mark": m} for t, m in parts if t]


def _examples(p: Probe[PerturbResults], fam: str,
              ranks: Mapping[str, tuple[int | None, int | None]]) -> list[dict[str, Any]]:
    out = []
    for rec in p.examples.get(fam) or []:
        before, after = ranks.get(rec.qid) or (None, None)
        out.append({"original": _marked(rec.original, rec.start, rec.word, rec.perturbed),
                    "perturbed": _marked(rec.perturbed, rec.start, rec.replacement, rec.original),
                    "swap": f"{rec.word or '∅'} → {rec.replacement or '∅'}",
                    "rank": f"{before if before is not None else '—'} → {after if after is not None else '—'}"})
    return out


def perturb_view(probes: Sequence[Probe[PerturbResults]]) -> dict[str, Any] | None:
    """Per perturbation folder: the Table 4 and Table 5 charts and tables, and example perturbations."""
    if not probes:
        return None

    blocks = []
    for p in probes:
        r = p.results
        metrics = list(r.metrics)
        t4: list[dict[str, Any]] = []
        t5: list[dict[str, Any]] = []
        examples, bars = [], []
        for fam, e in r.families.items():
            rc, pct = e.rank_change, e.rank_change.percent
            counts, shares = (rc.lower, rc.same, rc.higher), (pct.lower, pct.same, pct.higher)  # bar order
            t4.append({"family": fam, "n_perturbed": e.n_perturbed, "share": _pct(100 * e.share_of_queries),
                       "n": rc.n, "n_no_relevant": rc.n_no_relevant,
                       "cells": [{"count": c, "pct": _pct(s, "%")} for c, s in zip(counts, shares)]})
            bars.append((f"{fam} (n={rc.n})", list(counts), list(shares)))
            for m in metrics:
                d = e.metrics[m]
                t5.append({"family": fam, "metric": m, "n": d.n, "original": fmt(d.original),
                           "perturbed": fmt(d.perturbed), "delta": fmt_delta(d.delta),
                           "ci": f"[{fmt_delta(d.ci_low)}, {fmt_delta(d.ci_high)}]" if d.ci_low is not None else "—",
                           "down": (d.delta or 0) < 0})
            ex = _examples(p, fam, e.best_relevant_rank)
            if ex:
                examples.append({"family": fam, "items": ex})
        title = f"{r.dataset} · {r.retriever}"
        names = metric_names(r)
        for row in t5:
            row["metric"] = names.get(row["metric"], row["metric"])
        share = share_chart(bars, title=f"{title}: best relevant item after perturbation",
                            parts=("moved lower", "same rank", "moved higher"),
                            empty="no perturbed query with a relevant item")
        fam_names = [f"{fam} (n={e.rank_change.n})" for fam, e in r.families.items()]
        deltas = interval_chart(fam_names, [(m, [_interval(e.metrics.get(m)) for e in r.families.values()])
                                            for m in metrics],
                                title=f"{title}: metric change, {r.confidence:.0%} CI",
                                axis_label="perturbed − original (x100)", reference_label="no change")
        blocks.append({"label": p.label, "title": title, "n_queries": r.n_queries, "path": p.path,
                       "metrics": metrics, "conf": f"{r.confidence:.0%}", "table4": t4, "table5": t5,
                       "examples": examples, "has_examples_file": bool(p.examples), "protocol": protocol_line(r),
                       "paper_table": _paper_table(r),
                       "share_chart": Markup(share), "delta_chart": Markup(deltas), "source": _source(p)})
    return {"blocks": blocks}


def _paper_table(r: PerturbResults) -> dict[str, Any] | None:
    """The paper's Table 5 layout (all queries, perturbed ones substituted) on the caption-corpus protocol."""
    if r.protocol is None:
        return None

    data = table_rows(r)["dataset"]
    return {"head": data[0], "rows": data[1:]}


def _cda(a: SliceAccuracy | None) -> Interval:
    if a is None:
        return None
    lo, hi = a.fg_cda_ci
    return a.fg_cda, lo, hi


def _cell(a: SliceAccuracy | None) -> dict[str, Any] | None:
    if a is None:
        return None
    lo, hi = a.fg_cda_ci
    return {"n_pairs": a.n_pairs, "n": a.n, "correct": a.correct, "cda": fmt(a.fg_cda),
            "ci": f"[{fmt(lo)}, {fmt(hi)}]", "cde": fmt(a.fg_cde)}


SLICES: tuple[tuple[str, Callable[[DirectionResults], Sequence[SliceAccuracy]]], ...] = (
    ("category", lambda d: d.by_category),
    ("CCD category", lambda d: d.by_ccd_category),
    ("CCD group", lambda d: d.by_ccd_group),
)


def contrast_view(probes: Sequence[Probe[ContrastResults]]) -> dict[str, Any] | None:
    """Per direction: FG-CDA per category with its interval, every contrast folder side by side."""
    if not probes:
        return None

    systems = [{"label": p.label, "colour": charts.colour(i)} for i, p in enumerate(probes)]
    directions = list(dict.fromkeys(d.direction for p in probes for d in p.results.directions))
    blocks = []
    for direction in directions:
        per = [next((d for d in p.results.directions if d.direction == direction), None) for p in probes]
        rows = [{"slice": "overall", "name": "overall", "first": False,
                 "cells": [_cell(d.overall if d else None) for d in per]}]
        chart_rows: list[tuple[str, list[Interval]]] = [("overall", [_cda(d.overall if d else None) for d in per])]
        for i, (label, of) in enumerate(SLICES):
            names = list(dict.fromkeys(a.name for d in per if d for a in of(d)))
            for j, name in enumerate(names):
                found = [next((a for a in of(d) if a.name == name), None) if d else None for d in per]
                rows.append({"slice": label if j == 0 else "", "name": name, "first": j == 0,  # a rule above
                             "cells": [_cell(a) for a in found]})
                if i == 0:  # the chart has the dataset's own categories
                    chart_rows.append((f"{name} (pairs={max(a.n_pairs if a else 0 for a in found)})",
                                       [_cda(a) for a in found]))
        chart = interval_chart([c for c, _ in chart_rows],
                               [(p.label, [vals[i] for _, vals in chart_rows]) for i, p in enumerate(probes)],
                               title=f"FG-CDA per category, {direction}", axis_label="FG-CDA (%)",
                               reference=0.5, reference_label="chance", domain=(0.0, 1.0), fmt="{:.1f}",
                               width=1100 if len(probes) > 1 else 760)
        unmapped = [f"{p.label}: {d.unmapped_units}" for p, d in zip(probes, per) if d and d.unmapped_units]
        blocks.append({"direction": direction, "rows": rows, "chart": Markup(chart), "unmapped": unmapped,
                       "missing": [p.label for p, d in zip(probes, per) if d is None],
                       "ablations": _ablations(probes, direction), **_pool(probes, direction)})
    skipped = [f"{p.label}: {name} ({why})" for p in probes for name, why in p.results.skipped_directions.items()]
    boots = [(p.label, p.results.bootstrap) for p in probes]
    return {"systems": systems, "blocks": blocks, "skipped": skipped, "sources": [_source(p) for p in probes],
            "metric": probes[0].results.metric,
            "boot": "; ".join(f"{label}: {b.resamples} resamples over {b.unit}s, seed {b.seed}, {b.confidence:.0%}"
                              for label, b in boots)}


def _ablation_of(p: Probe[ContrastResults], direction: str) -> AblationTable | None:
    return next((a for a in p.results.ablation if a.direction == direction), None)


def _pool_of(p: Probe[ContrastResults], direction: str) -> PoolDirection | None:
    pool = p.results.pool
    return None if pool is None else next((e for e in pool.directions if e.direction == direction), None)


def _ablations(probes: Sequence[Probe[ContrastResults]], direction: str) -> list[dict[str, Any]]:
    """Per folder: the CCD category x dataset category table (pairs, FG-CDA %; empty and sparse cells marked)."""
    out = []
    for p in probes:
        a = _ablation_of(p, direction)
        if a is None:
            continue

        def cell(c: AblationCell, sparse: bool) -> dict[str, Any]:
            n = c.n_pairs
            return {"n_pairs": n, "cda": "" if not n or c.fg_cda is None else f"{100 * c.fg_cda:.1f}",
                    "kind": "empty" if not n else "sparse" if sparse else "full"}

        rows = [{"name": r, "group": a.groups.get(r, ""), "cells": [cell(c, c.sparse) for c in a.cells[i]],
                 "total": cell(a.row_totals[i], a.row_totals[i].sparse)}
                for i, r in enumerate(a.rows)]
        out.append({"label": p.label, "columns": list(a.columns), "rows": rows,
                    "totals": [cell(c, c.sparse) for c in a.column_totals], "total": cell(a.total, False),
                    "with_data": len(a.ccd_with_data), "n_ccd": a.n_ccd_categories, "min_pairs": a.min_pairs})
    return out


def _recall_cell(r: RecallAt | None) -> dict[str, str]:
    if r is None:
        return {"value": "—", "ci": "—"}
    lo, hi = r.ci
    return {"value": fmt(r.value), "ci": f"[{fmt(lo)}, {fmt(hi)}]"}


def _change_cell(r: RecallChange | None) -> dict[str, str]:
    if r is None:
        return {"value": "—", "ci": "—"}
    lo, hi = r.ci
    return {"value": fmt_delta(r.delta), "ci": f"[{fmt_delta(lo)}, {fmt_delta(hi)}]"}


def _recall_interval(r: RecallAt | None) -> Interval:
    if r is None:
        return None
    lo, hi = r.ci
    return r.value, lo, hi


def _pool(probes: Sequence[Probe[ContrastResults]], direction: str) -> dict[str, Any]:
    """Contrastive-pool retrieval of every folder that saved it: R@k without / with the negatives, the change,
    a dot-and-whisker chart of both pools, and the mean pair cosine per category."""

    found = [(p, e) for p in probes if (e := _pool_of(p, direction)) is not None]
    if not found:
        return {"pool": None}
    ks = list(dict.fromkeys(k for _, e in found for k in e.change))
    rows = []
    for p, e in found:
        w, n = e.without_negatives.recall, e.with_negatives.recall
        rows.append({"label": p.label, "n_units": e.n_units, "n_items": e.n_items,
                     "excluded": e.n_excluded_query_in_pool,
                     "candidates": [e.without_negatives.n_candidates, e.with_negatives.n_candidates],
                     "ks": [{"without": _recall_cell(w.get(k)), "with": _recall_cell(n.get(k)),
                             "change": _change_cell(e.change.get(k)),
                             "down": (change.delta if (change := e.change.get(k)) else 0) < 0} for k in ks]})

    names = [f"{k.replace('recall@', 'R@')} {setting}" for k in ks for setting in ("without negatives", "with negatives")]
    series = [(p.label, [_recall_interval(pool.recall.get(k)) for k in ks
                         for pool in (e.without_negatives, e.with_negatives)])
              for p, e in found]
    chart = interval_chart(names, series, title=f"Contrastive-pool retrieval, {direction}", axis_label="R@k (%)",
                           reference=0.0, domain=(0.0, 1.0), fmt="{:.1f}")
    slices: tuple[tuple[str, Callable[[PoolDirection], Sequence[PairCosine]], bool], ...] = (
        ("overall", lambda e: (e.pair_cosine.overall,), False),
        ("category", lambda e: e.pair_cosine.by_category, True),
        ("CCD category", lambda e: e.pair_cosine.by_ccd_category, True),
    )
    cos_rows = []
    for label, of, ruled in slices:
        lists = [of(e) for _, e in found]
        cat_names = list(dict.fromkeys(c.name for lst in lists for c in lst))
        for j, name in enumerate(cat_names):
            cells = []
            for lst in lists:
                c = next((c for c in lst if c.name == name), None)
                cells.append(None if c is None else {"n_pairs": c.n_pairs, "mean": f"{c.mean:.3f}",
                                                     "ci": f"[{c.ci[0]:.3f}, {c.ci[1]:.3f}]"})
            cos_rows.append({"slice": label if j == 0 else "", "first": j == 0 and ruled,
                             "name": name, "cells": cells})
    return {"pool": {"ks": [k.replace("recall@", "R@") for k in ks], "rows": rows, "chart": Markup(chart),
                     "labels": [p.label for p, _ in found], "cosine": cos_rows}}


def _source(p: Probe[PerturbResults] | Probe[ContrastResults]) -> dict[str, Any]:
    """Where a probe folder came from: folder, file hash, schema and the writer's provenance facts."""
    r = p.results
    rows = [("results folder", p.path), ("results.json sha256", p.sha256), ("schema", r.schema_)]
    if isinstance(r, PerturbResults):
        prov = r.provenance
        rows += [("dataset", r.dataset), ("retriever", prov.retriever.model_id or r.retriever),
                 ("queries", str(r.n_queries)), ("seed", str(prov.seed)), ("command", prov.command or "—"),
                 ("created", prov.created or "—"), ("finegrain version", prov.finegrain_version or "—")]
    else:
        rows += [("pairs", f"{r.pairs.name} ({r.pairs.n_pairs} pairs)"),
                 ("encoder", r.encoder.model_id or r.encoder.spec), ("finegrain version", r.version)]
    return {"label": p.label, "rows": rows}
