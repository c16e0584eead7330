"""Terminal tables of an error analysis, rendered from ``results["errors"]`` (``ErrorAnalysis.to_json_dict()``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

from finegrain.report.console import table_console
from finegrain.results.saved import SavedResults


def error_tables(errors: Mapping[str, Any], *, max_examples: int = 2) -> list[Table]:
    """Counts per tag, counts per query type and tag, and a few examples per tag.

    ``errors`` is the ``"errors"`` section of a results dict. A section that
    was skipped (``{"skipped": reason}``) renders as an empty list.
    """
    if not errors or "counts" not in errors:
        return []
    tags: Mapping[str, Mapping[str, str]] = errors.get("tags") or {}
    counts: Mapping[str, Mapping[str, int]] = errors["counts"]
    k = errors.get("k")
    n_q = errors.get("n_queries", 0)
    totals = errors.get("totals") or {}

    head = Table(title=f"errors in the top {k} · {n_q} queries "
                       f"({errors.get('n_skipped_no_relevant', 0)} without a relevant item skipped)",
                 title_justify="left")
    head.add_column("kind")
    head.add_column("tag", no_wrap=True)
    head.add_column("items", justify="right")
    head.add_column("queries", justify="right")
    head.add_column("meaning")
    for tag, c in counts.items():
        info = tags.get(tag, {})
        kind = {"fn": "false negative", "fp": "false positive"}.get(info.get("kind", ""), "")
        head.add_row(kind, tag, str(c.get("items", 0)), str(c.get("queries", 0)), info.get("description", ""))
    head.add_section()
    head.add_row("total", "false negatives", str(totals.get("false_negatives", "")), "", "relevant items not in the top k")
    head.add_row("total", "false positives", str(totals.get("false_positives", "")), "",
                 f"of which {totals.get('unjudged_false_positives', 0)} unjudged")
    out = [head]

    by_type: Mapping[str, Mapping[str, Any]] = errors.get("by_type") or {}
    if by_type:
        t = Table(title="errors per query type (items)", title_justify="left")
        t.add_column("type", no_wrap=True)
        t.add_column("n", justify="right")
        for tag in counts:
            t.add_column(tag, justify="right")
        for group, row in by_type.items():
            cells = row.get("counts") or {}
            t.add_row(group, str(row.get("n_queries", "")), *[str((cells.get(tag) or {}).get("items", 0)) for tag in counts])
        out.append(t)

    examples: Mapping[str, list[Mapping[str, Any]]] = errors.get("examples") or {}
    if max_examples > 0 and any(examples.values()):
        t = Table(title="examples", title_justify="left")
        t.add_column("tag", no_wrap=True)
        t.add_column("query")
        t.add_column("passage")
        t.add_column("rank", justify="right")
        t.add_column("rule")
        for tag, items in examples.items():
            for e in items[:max_examples]:
                text = str(e.get("text", ""))
                if len(text) > 80:
                    text = text[:79] + "…"
                rank = e.get("rank")
                t.add_row(tag, str(e.get("query", "")), f"{e.get('doc_id')}: {text}",
                          "—" if rank is None else str(rank), str(e.get("rule", "")))
        out.append(t)
    return out


def print_errors(errors: Mapping[str, Any], console: Console | None = None, *, max_examples: int = 2) -> None:
    if console is None:
        console = table_console()
    if errors and "skipped" in errors:
        console.print(f"error analysis skipped: {errors['skipped']}", highlight=False)
        return
    for t in error_tables(errors, max_examples=max_examples):
        console.print(t)


def diagnosis_lines(results: SavedResults) -> list[str]:
    """One line each for the saved error analysis and error taxonomy (counts per tag), for the terminal."""
    lines = []
    errors = results.errors or {}
    if "counts" in errors:
        parts = [f"{tag} {c.get('items', 0)}" for tag, c in errors["counts"].items() if c.get("items")]
        lines.append(f"errors in the top {errors.get('k')}: " + (" · ".join(parts) or "none"))
    tax = results.taxonomy or {}
    if "counts" in tax:
        parts = [f"{tag} {n}" for tag, n in tax["counts"].items() if n]
        lines.append(f"error types of {tax.get('n_failures', 0)} failed queries: " + (" · ".join(parts) or "none"))
    for name, section in (("error analysis", errors), ("error taxonomy", tax)):
        if section.get("skipped"):
            lines.append(f"{name} skipped: {section['skipped']}")
    return lines
