"""Terminal tables of an error analysis, rendered from the saved ``"errors"`` section (:class:`~finegrain.results.diagnosis.ErrorsSection`)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from finegrain.report.console import table_console
from finegrain.results.diagnosis import ErrorsSection, ErrorTag, TagCount
from finegrain.results.saved import SavedResults


def error_tables(errors: ErrorsSection | None, *, max_examples: int = 2) -> list[Table]:
    """Counts per tag, counts per query type and tag, and a few examples per tag (none for a skipped analysis)."""
    if errors is None or not errors.analysed:
        return []
    head = Table(title=f"errors in the top {errors.k} · {errors.n_queries} queries "
                       f"({errors.n_skipped_no_relevant} without a relevant item skipped)",
                 title_justify="left")
    head.add_column("kind")
    head.add_column("tag", no_wrap=True)
    head.add_column("items", justify="right")
    head.add_column("queries", justify="right")
    head.add_column("meaning")
    for tag, c in errors.counts.items():
        info = errors.tags.get(tag) or ErrorTag()
        kind = {"fn": "false negative", "fp": "false positive"}.get(info.kind, "")
        head.add_row(kind, tag, str(c.items), str(c.queries), info.description)
    head.add_section()
    totals = errors.totals
    head.add_row("total", "false negatives", str(totals.false_negatives), "", "relevant items not in the top k")
    head.add_row("total", "false positives", str(totals.false_positives), "",
                 f"of which {totals.unjudged_false_positives} unjudged")
    out = [head]

    if errors.by_type:
        t = Table(title="errors per query type (items)", title_justify="left")
        t.add_column("type", no_wrap=True)
        t.add_column("n", justify="right")
        for tag in errors.counts:
            t.add_column(tag, justify="right")
        for group, row in errors.by_type.items():
            t.add_row(group, str(row.n_queries),
                      *[str((row.counts.get(tag) or TagCount()).items) for tag in errors.counts])
        out.append(t)

    if max_examples > 0 and any(errors.examples.values()):
        t = Table(title="examples", title_justify="left")
        t.add_column("tag", no_wrap=True)
        t.add_column("query")
        t.add_column("passage")
        t.add_column("rank", justify="right")
        t.add_column("rule")
        for tag, items in errors.examples.items():
            for e in items[:max_examples]:
                text = e.text if len(e.text) <= 80 else e.text[:79] + "…"
                t.add_row(tag, e.query, f"{e.doc_id}: {text}", "—" if e.rank is None else str(e.rank), e.rule)
        out.append(t)
    return out


def print_errors(errors: ErrorsSection | None, console: Console | None = None, *, max_examples: int = 2) -> None:
    if console is None:
        console = table_console()
    if errors is not None and errors.skipped is not None:
        console.print(f"error analysis skipped: {errors.skipped}", highlight=False)
        return
    for t in error_tables(errors, max_examples=max_examples):
        console.print(t)


def diagnosis_lines(results: SavedResults) -> list[str]:
    """One line each for the saved error analysis and error taxonomy (counts per tag), for the terminal."""
    lines = []
    errors, tax = results.errors, results.taxonomy
    if errors is not None and errors.counts:
        parts = [f"{tag} {c.items}" for tag, c in errors.counts.items() if c.items]
        lines.append(f"errors in the top {errors.k}: " + (" · ".join(parts) or "none"))
    if tax is not None and tax.counts:
        parts = [f"{tag} {n}" for tag, n in tax.counts.items() if n]
        lines.append(f"error types of {tax.n_failures} failed queries: " + (" · ".join(parts) or "none"))
    for name, section in (("error analysis", errors), ("error taxonomy", tax)):
        if section is not None and section.skipped:
            lines.append(f"{name} skipped: {section.skipped}")
    return lines
