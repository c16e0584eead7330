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
from typing import Any, TypeVar

from markupsafe import Markup

from finegrain.compare.systems import LabelledResults
from finegrain.evaluate.groups import order_groups
from finegrain.report import charts
from finegrain.report.format import readable
from finegrain.results.diagnosis import (
    ErrorsSection,
    ErrorTag,
    TagCount,
    TaxonomySection,
    TaxonomyTag,
    TypeCounts,
    TypeShares,
)

N_ERROR_EXAMPLES = 2


Section = TypeVar("Section", ErrorsSection, TaxonomySection)


def _sections(systems: Sequence[LabelledResults], found: Sequence[Section | None],
              what: str) -> tuple[list[tuple[int, LabelledResults, Section]], list[str]] | None:
    """``(present, notes)``: the systems whose section has counts, and a note for each that has none
    (with the reason it was skipped); None when no results file saved the section."""
    if all(v is None for v in found):
        return None
    present = [(i, s, v) for (i, s), v in zip(enumerate(systems), found) if v is not None and v.analysed]
    notes = [f"{s.label}: no {what} saved" + (f" ({v.skipped})" if v is not None and v.skipped
                                               else " (re-run 'finegrain eval' to add it)")
             for s, v in zip(systems, found) if v is None or not v.analysed]
    return present, notes


def errors_view(systems: Sequence[LabelledResults]) -> dict[str, Any] | None:
    """The ``errors`` section of each results file (:mod:`finegrain.diagnose.errors`), side by side."""
    found = _sections(systems, [s.results.errors for s in systems], "error analysis")
    if found is None or not found[0]:
        return None if found is None else {"notes": found[1], "systems": []}
    present, notes = found
    first = present[0][2]
    tags = first.tag_names
    kinds = {"fn": "false negative", "fp": "false positive"}

    overall = []
    for tag in tags:
        info = first.tags.get(tag) or ErrorTag()
        cells = [{"passages": c.items, "queries": c.queries}
                 for c in (e.counts.get(tag) or TagCount() for _, _, e in present)]
        overall.append({"name": readable(tag), "kind": kinds.get(info.kind, ""),
                        "description": info.description, "cells": cells})
    totals = [{"fn": e.totals.false_negatives, "fp": e.totals.false_positives,
               "unjudged": e.totals.unjudged_false_positives} for _, _, e in present]

    by_type: list[dict[str, Any]] = []
    for t, rows in _by_type_rows(systems, [e.by_type for _, _, e in present]):
        n = max((r.n_queries for r in rows if r is not None), default=0)
        counts = [[0 if r is None else (r.counts.get(tag) or TagCount()).items for r in rows] for tag in tags]
        by_type.append({"name": readable(t), "n": n, "cells": counts})

    examples = []
    for tag in tags:
        items = []
        for i, s, e in present:
            for x in e.examples.get(tag, ())[:N_ERROR_EXAMPLES]:
                items.append({"system": s.label, "colour": charts.colour(i), "query": x.query,
                              "type": readable(x.type), "doc_id": x.doc_id,
                              "text": x.text, "rank": "not retrieved" if x.rank is None else x.rank,
                              "grade": "unjudged" if x.grade is None else x.grade,
                              "rule": x.rule, "matched": ", ".join(x.matched)})
        examples.append({"name": readable(tag), "description": (first.tags.get(tag) or ErrorTag()).description,
                         "items": items})

    chart = charts.grouped_bar_chart(
        [readable(t) for t in tags],
        [(s.label, [(e.counts.get(t) or TagCount()).items for t in tags]) for i, s, e in present],
        title=f"Error items per tag in the top {first.k}",
        axis_label="passages (summed over queries)",
        fmt=lambda v: f"{v:.0f}", tick_fmt=lambda v: f"{v:.0f}",
    )
    return {
        "notes": notes,
        "systems": [{"label": s.label, "colour": charts.colour(i)} for i, s, _ in present],
        "k": first.k, "rel": first.rel,
        "n_queries": first.n_queries, "n_skipped": first.n_skipped_no_relevant,
        "overall": overall, "totals": totals, "tags": [readable(t) for t in tags],
        "by_type": by_type, "examples": examples, "chart": Markup(chart),
        "method": [(readable(k), v) for k, v in first.method.items()],
    }


# --------------------------------------------------------------------------- error taxonomy

N_TAXONOMY_EXAMPLES = 2


def _share(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.1f}%"


def taxonomy_view(systems: Sequence[LabelledResults]) -> dict[str, Any] | None:
    """The ``taxonomy`` section of each results file: shares per tag, per query type, a chart and examples."""
    found = _sections(systems, [s.results.taxonomy for s in systems], "error taxonomy")
    if found is None or not found[0]:
        return None if found is None else {"notes": found[1], "systems": []}
    present, notes = found
    first = present[0][2]
    tags = first.tag_names

    def info(tag: str) -> TaxonomyTag:
        return first.tags.get(tag) or TaxonomyTag()

    overall = []
    for tag in tags:
        cells = [{"count": t.counts.get(tag, 0), "share": _share(t.proportions.get(tag))} for _, _, t in present]
        overall.append({"name": readable(tag), "raw": tag, "description": info(tag).description,
                        "dureader": _share(info(tag).dureader_share), "cells": cells})
    totals = [{"failures": t.n_failures, "queries": t.n_queries,
               "kinds": ", ".join(f"{k} {v}" for k, v in t.failure_kinds.items())}
              for _, _, t in present]

    by_type: list[dict[str, Any]] = []
    for g, rows in _by_type_rows(systems, [t.by_type for _, _, t in present]):
        by_type.append({
            "name": readable(g),
            "n": [f"{0 if r is None else r.n_failures}/{0 if r is None else r.n_queries}" for r in rows],
            "cells": [[_share(None if r is None else r.proportions.get(tag)) for r in rows] for tag in tags],
        })

    examples = []
    for tag in tags:
        items = []
        for i, s, t in present:
            for x in t.examples.get(tag, ())[:N_TAXONOMY_EXAMPLES]:
                items.append({
                    "system": s.label, "colour": charts.colour(i), "query": x.query,
                    "type": readable(x.type), "kind": x.kind,
                    "wrong_id": x.wrong_id or "—", "wrong_text": x.wrong_text,
                    "relevant_id": x.relevant_id, "relevant_text": x.relevant_text,
                    "relevant_rank": "not retrieved" if x.relevant_rank is None else x.relevant_rank,
                    "rule": x.rule, "evidence": ", ".join(x.evidence),
                    "also": ", ".join(readable(a) for a in x.also),
                })
        examples.append({"name": readable(tag), "description": info(tag).description, "items": items})

    chart = charts.grouped_bar_chart(
        [readable(t) for t in tags],
        [(s.label, [t.proportions.get(tag) for tag in tags]) for _, s, t in present],
        title="Share of failed queries per error type (DuReader Table 9 taxonomy)",
        axis_label="share of failed queries (%)", value_max=1.0,
    )
    return {
        "notes": notes,
        "systems": [{"label": s.label, "colour": charts.colour(i)} for i, s, _ in present],
        "k": first.k, "order": [readable(o) for o in first.order],
        "overall": overall, "totals": totals, "tags": [readable(t) for t in tags],
        "by_type": by_type, "examples": examples, "chart": Markup(chart),
        "method": [(readable(k), v) for k, v in first.method.items()],
    }


Row = TypeVar("Row", TypeCounts, TypeShares)


def _by_type_rows(systems: Sequence[LabelledResults],
                  by_types: Sequence[Mapping[str, Row]]) -> list[tuple[str, list[Row | None]]]:
    """``(query group, [each section's ``by_type`` entry for it, or None])`` for every group some
    section reports, in the one group order (the systems' own groups first, then any other)."""
    names = list(order_groups(t for s in systems for t in s.results.by_type))
    for d in by_types:
        names += [g for g in d if g not in names]
    out = []
    for g in names:
        rows = [d.get(g) for d in by_types]
        if any(r is not None for r in rows):
            out.append((g, rows))
    return out
