"""Terminal tables rendered from saved results (:class:`~finegrain.results.saved.SavedResults`, or a results.json dict)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

from finegrain.report.console import table_console
from finegrain.report.errors_table import diagnosis_lines
from finegrain.results.saved import SavedResults


def fmt(value: Any, scale: float = 100.0) -> str:
    """A metric value for people: percentage with two decimals, 'undefined' for None."""
    if value is None:
        return "undefined"
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f"{value * scale:.2f}"


def evaluation_tables(results: SavedResults | Mapping[str, Any]) -> list[Table]:
    saved = SavedResults.coerce(results)
    aggregate = saved.aggregate
    keys = list(aggregate)
    headline = Table()
    headline.add_column("metric")
    headline.add_column("value (x100)", justify="right")
    for k in keys:
        headline.add_row(k, fmt(aggregate[k]))
    tables = [headline]

    if saved.by_type:
        t = Table(title="by query type", title_justify="left")
        t.add_column("type", no_wrap=True)
        t.add_column("n", justify="right")
        for k in keys:
            t.add_column(k, justify="right", no_wrap=True)
        for group in saved.by_type:
            # per-metric counts differ (ranking metrics skip zero-answer queries): those are in
            # the denominators; this column is the largest, i.e. the queries of that type.
            t.add_row(group, str(saved.group_size(group)), *[fmt(saved.type_value(group, k)) for k in keys])
        tables.append(t)

    denominators = {k: m.denominators for k, m in saved.metrics.items() if m.denominators}
    if denominators:
        cols = sorted({c for d in denominators.values() for c in d})
        t = Table(title="denominators", title_justify="left")
        t.add_column("metric")
        for c in cols:
            t.add_column(c.removeprefix("n_").replace("_", " "), justify="right")
        for k, d in denominators.items():
            t.add_row(k, *[str(d.get(c, "")) for c in cols])
        tables.append(t)
    return tables


def print_evaluation(results: SavedResults | Mapping[str, Any], title: str = "", console: Console | None = None) -> None:
    if console is None:
        console = table_console()
    if title:
        console.print(title, style="bold", highlight=False)
    for t in evaluation_tables(results):
        console.print(t)

    for line in diagnosis_lines(SavedResults.coerce(results)):
        console.print(line, highlight=False)

