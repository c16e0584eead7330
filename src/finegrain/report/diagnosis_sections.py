"""The report's diagnosis sections, rendered from saved results alone: error tags and the error taxonomy.

:func:`errors_view` adapts ``results["errors"]`` (:mod:`finegrain.diagnose.errors`:
false negatives / positives tagged literal, semantic, partial, ...) and
:func:`taxonomy_view` ``results["taxonomy"]`` (:mod:`finegrain.diagnose.taxonomy`:
failed queries tagged after DuReader-retrieval Table 9) to the template, for one
or several systems side by side. A section absent from every results file gives
None (the page leaves it out); absent or skipped for some systems, a note names them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from finegrain.compare.systems import LabelledResults
from finegrain.evaluate.groups import order_groups
from finegrain.report import charts
from finegrain.report.format import readable

N_ERROR_EXAMPLES = 2


def _sections(systems: Sequence[LabelledResults], key: str, what: str) -> tuple[list[tuple[int, LabelledResults, Mapping[str, Any]]], list[str]] | None:
    """``(present, notes)`` for the ``key`` section of each results file: the systems that have it with
    counts, and a note for each that does not (with the reason it was skipped); None when no file has it."""
    sections = [(i, s, s.results.section(key)) for i, s in enumerate(systems)]
    if not any(isinstance(v, Mapping) for _, _, v in sections):
        return None
    present = [(i, s, v) for i, s, v in sections if isinstance(v, Mapping) and "counts" in v]
    notes = [f"{s.label}: no {what} saved" + (f" ({v['skipped']})" if isinstance(v, Mapping) and v.get("skipped")
                                               else " (re-run 'finegrain eval' to add it)")
             for _, s, v in sections if not (isinstance(v, Mapping) and "counts" in v)]
    return present, notes


def _opened(
    systems: Sequence[LabelledResults], key: str, what: str
) -> tuple[list[Any], list[str], Mapping[str, Any], Mapping[str, Mapping[str, Any]], list[str]] | None:
    """``(present, notes, first section, its tag table, tag names)`` of a diagnosis section; None when none saved it."""
    found = _sections(systems, key, what)
    if found is None:
        return None
    present, notes = found
    first: Mapping[str, Any] = present[0][2] if present else {}
    info: Mapping[str, Mapping[str, Any]] = first.get("tags") or {}
    return present, notes, first, info, list(info) or list(first.get("counts") or {})


def errors_view(systems: Sequence[LabelledResults]) -> dict[str, Any] | None:
    """The ``errors`` section of each results file (:mod:`finegrain.diagnose.errors`), side by side."""
    opened = _opened(systems, "errors", "error analysis")
    if opened is None or not opened[0]:
        return None if opened is None else {"notes": opened[1], "systems": []}
    present, notes, first, tag_info, tags = opened
    kinds = {"fn": "false negative", "fp": "false positive"}

    overall = []
    for tag in tags:
        info = tag_info.get(tag) or {}
        cells = []
        for _, _, e in present:
            c = (e.get("counts") or {}).get(tag) or {}
            cells.append({"passages": c.get("items", 0), "queries": c.get("queries", 0)})
        overall.append({"name": readable(tag), "kind": kinds.get(info.get("kind", ""), ""),
                        "description": info.get("description", ""), "cells": cells})
    totals = [{"fn": (e.get("totals") or {}).get("false_negatives", 0),
               "fp": (e.get("totals") or {}).get("false_positives", 0),
               "unjudged": (e.get("totals") or {}).get("unjudged_false_positives", 0)} for _, _, e in present]

    by_type = []
    for t, rows in _by_type_rows(systems, [e for _, _, e in present]):
        n = max(((r or {}).get("n_queries", 0) for r in rows), default=0)
        cells = [[((((r or {}).get("counts") or {}).get(tag)) or {}).get("items", 0) for r in rows] for tag in tags]
        by_type.append({"name": readable(t), "n": n, "cells": cells})

    examples = []
    for tag in tags:
        items = []
        for i, s, e in present:
            for x in ((e.get("examples") or {}).get(tag) or [])[:N_ERROR_EXAMPLES]:
                items.append({"system": s.label, "colour": charts.colour(i), "query": x.get("query", ""),
                              "type": readable(x.get("type")), "doc_id": x.get("doc_id", ""),
                              "text": x.get("text", ""), "rank": "not retrieved" if x.get("rank") is None else x["rank"],
                              "grade": "unjudged" if x.get("grade") is None else x["grade"],
                              "rule": x.get("rule", ""), "matched": ", ".join(str(m) for m in x.get("matched") or [])})
        examples.append({"name": readable(tag), "description": (tag_info.get(tag) or {}).get("description", ""),
                         "items": items})

    chart = charts.grouped_bar_chart(
        [readable(t) for t in tags],
        [(s.label, [((e.get("counts") or {}).get(t) or {}).get("items", 0) for t in tags]) for i, s, e in present],
        title=f"Error items per tag in the top {first.get('k')}",
        axis_label="passages (summed over queries)",
        fmt=lambda v: f"{v:.0f}", tick_fmt=lambda v: f"{v:.0f}",
    )
    method = first.get("method") or {}
    return {
        "notes": notes,
        "systems": [{"label": s.label, "colour": charts.colour(i)} for i, s, _ in present],
        "k": first.get("k"), "rel": first.get("rel"),
        "n_queries": first.get("n_queries"), "n_skipped": first.get("n_skipped_no_relevant"),
        "overall": overall, "totals": totals, "tags": [readable(t) for t in tags],
        "by_type": by_type, "examples": examples, "chart": Markup(chart),
        "method": [(readable(k), v) for k, v in method.items()],
    }


# --------------------------------------------------------------------------- error taxonomy

N_TAXONOMY_EXAMPLES = 2


def _share(v: Any) -> str:
    return "—" if v is None else f"{v * 100:.1f}%"


def taxonomy_view(systems: Sequence[LabelledResults]) -> dict[str, Any] | None:
    """The ``taxonomy`` section of each results file: shares per tag, per query type, a chart and examples."""
    opened = _opened(systems, "taxonomy", "error taxonomy")
    if opened is None or not opened[0]:
        return None if opened is None else {"notes": opened[1], "systems": []}
    present, notes, first, info, tags = opened

    overall = []
    for tag in tags:
        cells = [{"count": (t.get("counts") or {}).get(tag, 0), "share": _share((t.get("proportions") or {}).get(tag))}
                 for _, _, t in present]
        ref = (info.get(tag) or {}).get("dureader_share")
        overall.append({"name": readable(tag), "raw": tag, "description": (info.get(tag) or {}).get("description", ""),
                        "dureader": _share(ref), "cells": cells})
    totals = [{"failures": t.get("n_failures", 0), "queries": t.get("n_queries", 0),
               "kinds": ", ".join(f"{k} {v}" for k, v in (t.get("failure_kinds") or {}).items())}
              for _, _, t in present]

    by_type = []
    for g, rows in _by_type_rows(systems, [t for _, _, t in present]):
        by_type.append({
            "name": readable(g),
            "n": [f"{(r or {}).get('n_failures', 0)}/{(r or {}).get('n_queries', 0)}" for r in rows],
            "cells": [[_share(((r or {}).get("proportions") or {}).get(tag)) for r in rows] for tag in tags],
        })

    examples = []
    for tag in tags:
        items = []
        for i, s, t in present:
            for x in ((t.get("examples") or {}).get(tag) or [])[:N_TAXONOMY_EXAMPLES]:
                rrank = x.get("relevant_rank")
                items.append({
                    "system": s.label, "colour": charts.colour(i), "query": x.get("query", ""),
                    "type": readable(x.get("type")), "kind": x.get("kind", ""),
                    "wrong_id": x.get("wrong_id") or "—", "wrong_text": x.get("wrong_text", ""),
                    "relevant_id": x.get("relevant_id", ""), "relevant_text": x.get("relevant_text", ""),
                    "relevant_rank": "not retrieved" if rrank is None else rrank,
                    "rule": x.get("rule", ""), "evidence": ", ".join(str(e) for e in x.get("evidence") or []),
                    "also": ", ".join(readable(a) for a in x.get("also") or []),
                })
        examples.append({"name": readable(tag), "description": (info.get(tag) or {}).get("description", ""),
                         "items": items})

    chart = charts.grouped_bar_chart(
        [readable(t) for t in tags],
        [(s.label, [(t.get("proportions") or {}).get(tag) for tag in tags]) for _, s, t in present],
        title="Share of failed queries per error type (DuReader Table 9 taxonomy)",
        axis_label="share of failed queries (%)", value_max=1.0,
    )
    return {
        "notes": notes,
        "systems": [{"label": s.label, "colour": charts.colour(i)} for i, s, _ in present],
        "k": first.get("k"), "order": [readable(o) for o in first.get("order") or []],
        "overall": overall, "totals": totals, "tags": [readable(t) for t in tags],
        "by_type": by_type, "examples": examples, "chart": Markup(chart),
        "method": [(readable(k), v) for k, v in (first.get("method") or {}).items()],
    }


def _by_type_rows(systems: Sequence[Any], sections: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[Any]]]:
    """``(query group, [each section's ``by_type`` entry for it, or None])`` for every group some
    section reports, in the one group order (the systems' own groups first, then any other)."""
    names = list(order_groups(t for s in systems for t in s.results.by_type))
    for d in sections:
        names += [g for g in (d.get("by_type") or {}) if g not in names]
    out = []
    for g in names:
        rows = [(d.get("by_type") or {}).get(g) for d in sections]
        if any(rows):
            out.append((g, rows))
    return out
