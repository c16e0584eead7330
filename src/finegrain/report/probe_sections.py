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
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from finegrain.diagnose.perturb.tables import metric_names, protocol_line
from finegrain.diagnose.perturb.tables import rows as table_rows
from finegrain.report import charts
from finegrain.report.folders import Folders, Probe
from finegrain.report.format import fmt, fmt_delta
from finegrain.report.probe_charts import interval_chart, share_chart
from finegrain.version import __version__

PARTS = ("lower", "same", "higher")


def probe_context(folders: Folders) -> dict[str, Any]:
    """The template values of both probe sections (None for a kind no folder has)."""
    return {"perturb": perturb_view(folders.perturbs), "contrast": contrast_view(folders.contrasts),
            "n_folders": len(folders.systems) + len(folders.perturbs) + len(folders.contrasts)}


def probes_only_context(folders: Folders) -> dict[str, Any]:
    """The page's header values when no evaluation folder is given (the evaluation sections are left out)."""

    names = [str(p.results.get("dataset", "")) for p in folders.perturbs]
    names += [str((p.results.get("pairs") or {}).get("name", "")) for p in folders.contrasts]
    return {"title": f"finegrain report — {', '.join(dict.fromkeys(n for n in names if n))}", "systems": [],
            "version": __version__}


def _pct(v: Any, unit: str = "") -> str:
    return "—" if v is None else f"{v:.2f}{unit}"


def _interval(m: Mapping[str, Any]) -> tuple[float, float, float] | None:
    vals = (m.get("delta"), m.get("ci_low"), m.get("ci_high"))
    return None if any(v is None for v in vals) else (float(vals[0]), float(vals[1]), float(vals[2]))


def _marked(text: str, start: int, piece: str, other: str) -> list[dict[str, Any]]:
    """``text`` as ``[{text, mark}]`` with ``piece`` at ``start`` marked; when it is not there (the edit
    also changed a neighbour, e.g. 'a' -> 'an'), the span where ``text`` differs from ``other``."""
    if not (piece and 0 <= start <= len(text) and text[start:start + len(piece)] == piece):
        pre = len(os.path.commonprefix([text, other]))
        suf = len(os.path.commonprefix([text[pre:][::-1], other[pre:][::-1]]))
        start, piece = pre, text[pre:len(text) - suf]
    parts = [(text[:start], False), (piece, True), (text[start + len(piece):], False)]
    return [{"text": t, "mark": m} for t, m in parts if t]


def _examples(p: Probe, fam: str, ranks: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for rec in p.examples.get(fam) or []:
        start = int(rec.get("start") or 0)
        original, perturbed = str(rec.get("original", "")), str(rec.get("perturbed", ""))
        word, repl = str(rec.get("word") or ""), str(rec.get("replacement") or "")
        before, after = (ranks.get(rec.get("qid")) or [None, None])[:2]
        out.append({"original": _marked(original, start, word, perturbed),
                    "perturbed": _marked(perturbed, start, repl, original),
                    "swap": f"{word or '∅'} → {repl or '∅'}",
                    "rank": f"{before if before is not None else '—'} → {after if after is not None else '—'}"})
    return out


def perturb_view(probes: Sequence[Probe]) -> dict[str, Any] | None:
    """Per perturbation folder: the Table 4 and Table 5 charts and tables, and example perturbations."""
    if not probes:
        return None

    blocks = []
    for p in probes:
        r = p.results
        fams: Mapping[str, Mapping[str, Any]] = r.get("families") or {}
        metrics = list(r.get("metrics") or [])
        conf = float(r.get("confidence") or 0.95)
        t4, t5, examples, bars = [], [], [], []
        for fam, e in fams.items():
            rc = e.get("rank_change") or {}
            pct = rc.get("percent") or {}
            t4.append({"family": fam, "n_perturbed": e.get("n_perturbed", 0),
                       "share": _pct(100 * e["share_of_queries"]) if e.get("share_of_queries") is not None else "—",
                       "n": rc.get("n", 0), "n_no_relevant": rc.get("n_no_relevant", 0),
                       "cells": [{"count": rc.get(k, 0), "pct": _pct(pct.get(k), "%")} for k in PARTS]})
            bars.append((f"{fam} (n={rc.get('n', 0)})", [int(rc.get(k) or 0) for k in PARTS],
                         [pct.get(k) for k in PARTS]))
            for m in metrics:
                d = (e.get("metrics") or {}).get(m) or {}
                t5.append({"family": fam, "metric": m, "n": d.get("n", 0), "original": fmt(d.get("original")),
                           "perturbed": fmt(d.get("perturbed")), "delta": fmt_delta(d.get("delta")),
                           "ci": (f"[{fmt_delta(d.get('ci_low'))}, {fmt_delta(d.get('ci_high'))}]"
                                  if d.get("ci_low") is not None else "—"),
                           "down": (d.get("delta") or 0) < 0})
            ex = _examples(p, fam, e.get("best_relevant_rank") or {})
            if ex:
                examples.append({"family": fam, "items": ex})
        title = f"{r.get('dataset', '?')} · {r.get('retriever', '?')}"
        names = metric_names(r)
        for row in t5:
            row["metric"] = names.get(row["metric"], row["metric"])
        share = share_chart(bars, title=f"{title}: best relevant item after perturbation",
                            parts=("moved lower", "same rank", "moved higher"),
                            empty="no perturbed query with a relevant item")
        fam_names = [f"{fam} (n={(e.get('rank_change') or {}).get('n', 0)})" for fam, e in fams.items()]
        deltas = interval_chart(fam_names, [(m, [_interval((e.get("metrics") or {}).get(m) or {})
                                                 for e in fams.values()]) for m in metrics],
                                title=f"{title}: metric change, {conf:.0%} CI",
                                axis_label="perturbed − original (x100)", reference_label="no change")
        blocks.append({"label": p.label, "title": title, "n_queries": r.get("n_queries"), "path": p.path,
                       "metrics": metrics, "conf": f"{conf:.0%}", "table4": t4, "table5": t5,
                       "examples": examples, "has_examples_file": bool(p.examples), "protocol": protocol_line(r),
                       "paper_table": _paper_table(r),
                       "share_chart": Markup(share), "delta_chart": Markup(deltas), "source": _source(p)})
    return {"blocks": blocks}


def _paper_table(r: Mapping[str, Any]) -> dict[str, Any] | None:
    """The paper's Table 5 layout (all queries, perturbed ones substituted) on the caption-corpus protocol."""
    if (r.get("protocol") or {}).get("name") != "caption-corpus":
        return None

    data = table_rows(r)["dataset"]
    return {"head": data[0], "rows": data[1:]}


def _cda(a: Mapping[str, Any] | None) -> tuple[float, float, float] | None:
    if not a or a.get("fg_cda") is None or not a.get("fg_cda_ci"):
        return None
    lo, hi = a["fg_cda_ci"]
    return float(a["fg_cda"]), float(lo), float(hi)


def _cell(a: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not a:
        return None
    lo, hi = a.get("fg_cda_ci") or (None, None)
    return {"n_pairs": a.get("n_pairs"), "n": a.get("n"), "correct": a.get("correct"), "cda": fmt(a.get("fg_cda")),
            "ci": f"[{fmt(lo)}, {fmt(hi)}]" if lo is not None else "—", "cde": fmt(a.get("fg_cde"))}


def contrast_view(probes: Sequence[Probe]) -> dict[str, Any] | None:
    """Per direction: FG-CDA per category with its interval, every contrast folder side by side."""
    if not probes:
        return None

    systems = [{"label": p.label, "colour": charts.colour(i)} for i, p in enumerate(probes)]
    directions = list(dict.fromkeys(d["direction"] for p in probes for d in p.results.get("directions") or []))
    blocks = []
    for direction in directions:
        per = [next((d for d in p.results.get("directions") or [] if d["direction"] == direction), None)
               for p in probes]
        slices = (("category", "by_category"), ("CCD category", "by_ccd_category"), ("CCD group", "by_ccd_group"))
        rows = [{"slice": "overall", "name": "overall", "first": False, "cells": [_cell(d and d.get("overall")) for d in per]}]
        chart_rows: list[tuple[str, list[Any]]] = [("overall", [_cda(d and d.get("overall")) for d in per])]
        for label, key in slices:
            names = list(dict.fromkeys(a["name"] for d in per if d for a in d.get(key) or []))
            for j, name in enumerate(names):
                found = [next((a for a in (d.get(key) or []) if a["name"] == name), None) if d else None for d in per]
                rows.append({"slice": label if j == 0 else "", "name": name, "first": j == 0,  # a rule above
                             "cells": [_cell(a) for a in found]})
                if key == "by_category":
                    chart_rows.append((f"{name} (pairs={max((a or {}).get('n_pairs') or 0 for a in found)})",
                                       [_cda(a) for a in found]))
        chart = interval_chart([c for c, _ in chart_rows],
                               [(p.label, [vals[i] for _, vals in chart_rows]) for i, p in enumerate(probes)],
                               title=f"FG-CDA per category, {direction}", axis_label="FG-CDA (%)",
                               reference=0.5, reference_label="chance", domain=(0.0, 1.0), fmt="{:.1f}",
                               width=1100 if len(probes) > 1 else 760)
        unmapped = [f"{p.label}: {d['unmapped_units']}" for p, d in zip(probes, per) if d and d.get("unmapped_units")]
        blocks.append({"direction": direction, "rows": rows, "chart": Markup(chart), "unmapped": unmapped,
                       "missing": [p.label for p, d in zip(probes, per) if d is None],
                       "ablations": _ablations(probes, direction), **_pool(probes, direction)})
    skipped = [f"{p.label}: {name} ({why})" for p in probes
               for name, why in (p.results.get("skipped_directions") or {}).items()]
    boot = [p.results.get("bootstrap") or {} for p in probes]
    return {"systems": systems, "blocks": blocks, "skipped": skipped, "sources": [_source(p) for p in probes],
            "metric": str(probes[0].results.get("metric", "")),
            "boot": "; ".join(f"{p.label}: {b.get('resamples', '?')} resamples over {b.get('unit', 'pair')}s, "
                              f"seed {b.get('seed', '?')}, {b.get('confidence', 0.95):.0%}" for p, b in zip(probes, boot))}


def _of(p: Probe, section: str, direction: str) -> Mapping[str, Any] | None:
    """The ``section`` entry (``ablation`` list, or ``pool.directions``) of one direction, when saved."""
    entries = p.results.get(section) or []
    if section == "pool":
        entries = (p.results.get("pool") or {}).get("directions") or []
    return next((e for e in entries if e.get("direction") == direction), None)


def _ablations(probes: Sequence[Probe], direction: str) -> list[dict[str, Any]]:
    """Per folder: the CCD category x dataset category table (pairs, FG-CDA %; empty and sparse cells marked)."""
    out = []
    for p in probes:
        a = _of(p, "ablation", direction)
        if not a:
            continue

        def cell(c: Mapping[str, Any]) -> dict[str, Any]:
            n = int(c.get("n_pairs") or 0)
            return {"n_pairs": n, "cda": "" if not n else f"{100 * float(c['fg_cda']):.1f}",
                    "kind": "empty" if not n else "sparse" if c.get("sparse") else "full"}

        rows = [{"name": r, "group": (a.get("groups") or {}).get(r, ""),
                 "cells": [cell(c) for c in a["cells"][i]], "total": cell(a["row_totals"][i])}
                for i, r in enumerate(a["rows"])]
        out.append({"label": p.label, "columns": list(a["columns"]), "rows": rows,
                    "totals": [cell(c) for c in a["column_totals"]], "total": cell({**a["total"], "sparse": False}),
                    "with_data": len(a.get("ccd_with_data") or []), "n_ccd": a.get("n_ccd_categories", 9),
                    "min_pairs": a.get("min_pairs")})
    return out


def _pct_ci(r: Mapping[str, Any] | None, signed: bool = False) -> dict[str, str]:
    if not r:
        return {"value": "—", "ci": "—"}
    v = r.get("delta") if signed else r.get("value")
    lo, hi = r.get("ci") or (None, None)
    f = fmt_delta if signed else fmt
    return {"value": f(v), "ci": f"[{f(lo)}, {f(hi)}]" if lo is not None else "—"}


def _pool(probes: Sequence[Probe], direction: str) -> dict[str, Any]:
    """Contrastive-pool retrieval of every folder that saved it: R@k without / with the negatives, the change,
    a dot-and-whisker chart of both pools, and the mean pair cosine per category."""

    found = [(p, e) for p in probes if (e := _of(p, "pool", direction))]
    if not found:
        return {"pool": None}
    ks = list(dict.fromkeys(k for _, e in found for k in e.get("change") or {}))
    rows = []
    for p, e in found:
        w, n = e.get("without_negatives") or {}, e.get("with_negatives") or {}
        rows.append({"label": p.label, "n_units": e.get("n_units"), "n_items": e.get("n_items"),
                     "excluded": e.get("n_excluded_query_in_pool", 0),
                     "candidates": [w.get("n_candidates"), n.get("n_candidates")],
                     "ks": [{"without": _pct_ci(w.get(k)), "with": _pct_ci(n.get(k)),
                             "change": _pct_ci((e.get("change") or {}).get(k), signed=True),
                             "down": ((e.get("change") or {}).get(k) or {}).get("delta", 0) < 0} for k in ks]})

    def iv(r: Mapping[str, Any] | None) -> tuple[float, float, float] | None:
        if not r or r.get("value") is None:
            return None
        lo, hi = r["ci"]
        return float(r["value"]), float(lo), float(hi)

    names = [f"{k.replace('recall@', 'R@')} {setting}" for k in ks for setting in ("without negatives", "with negatives")]
    series = [(p.label, [iv((e.get(key) or {}).get(k)) for k in ks for key in ("without_negatives", "with_negatives")])
              for p, e in found]
    chart = interval_chart(names, series, title=f"Contrastive-pool retrieval, {direction}", axis_label="R@k (%)",
                           reference=0.0, domain=(0.0, 1.0), fmt="{:.1f}")
    cos_rows = []
    for label, key in (("overall", None), ("category", "by_category"), ("CCD category", "by_ccd_category")):
        per = [(e.get("pair_cosine") or {}) for _, e in found]
        lists = [[pc["overall"]] if key is None and pc.get("overall") else pc.get(key or "") or [] for pc in per]
        cat_names = list(dict.fromkeys(c["name"] for lst in lists for c in lst))
        for j, name in enumerate(cat_names):
            cells = []
            for lst in lists:
                c = next((c for c in lst if c["name"] == name), None)
                cells.append(None if c is None else {"n_pairs": c["n_pairs"], "mean": f"{c['mean']:.3f}",
                                                     "ci": f"[{c['ci'][0]:.3f}, {c['ci'][1]:.3f}]"})
            cos_rows.append({"slice": label if j == 0 else "", "first": j == 0 and key is not None,
                             "name": name, "cells": cells})
    return {"pool": {"ks": [k.replace("recall@", "R@") for k in ks], "rows": rows, "chart": Markup(chart),
                     "labels": [p.label for p, _ in found], "cosine": cos_rows}}


def _source(p: Probe) -> dict[str, Any]:
    """Where a probe folder came from: folder, file hash, schema and the writer's provenance facts."""
    r = p.results
    prov = r.get("provenance") or {}
    schema = r["schema"]
    rows = [("results folder", p.path), ("results.json sha256", p.sha256), ("schema", str(schema))]
    if p.kind == "finegrain.perturb/1":
        ret = prov.get("retriever") or {}
        rows += [("dataset", str(r.get("dataset"))), ("retriever", str(ret.get("model_id") or r.get("retriever"))),
                 ("queries", str(r.get("n_queries"))), ("seed", str(prov.get("seed", "—"))),
                 ("command", str(prov.get("command", "—"))), ("created", str(prov.get("created", "—"))),
                 ("finegrain version", str(prov.get("finegrain_version", "—")))]
    else:
        enc, pairs = r.get("encoder") or {}, r.get("pairs") or {}
        rows += [("pairs", f"{pairs.get('name', '?')} ({pairs.get('n_pairs', '?')} pairs)"),
                 ("encoder", str(enc.get("model_id") or enc.get("spec"))),
                 ("finegrain version", str(r.get("version", "—")))]
    return {"label": p.label, "rows": rows}
