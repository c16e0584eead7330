"""Printing a comparison's terminal tables (what ``finegrain compare`` prints).

The tables themselves are rendered in :mod:`finegrain.compare.table`, below this layer, so that a
:class:`~finegrain.compare.comparison.Comparison` prints itself (``str(cmp)``) with the same code;
their names are re-exported here.
"""

from __future__ import annotations

from rich.console import Console

from finegrain.compare.comparison import Comparison
from finegrain.compare.table import (
    RAND_MARK,
    T_MARK,
    WIDE,
    comparison_tables,
    headline_table,
    legend,
    win_tie_loss_table,
)
from finegrain.report.console import table_console

__all__ = ["RAND_MARK", "T_MARK", "WIDE", "comparison_tables", "headline_table", "legend", "print_comparison",
           "win_tie_loss_table"]


def print_comparison(cmp: Comparison, console: Console | None = None) -> None:
    """Print a comparison's tables, skipped metrics, notes and legend (what ``finegrain compare`` prints)."""
    if console is None:
        console = table_console()
    for t in comparison_tables(cmp, console.width):
        console.print(t)
    for k, why in cmp.skipped.items():
        console.print(f"skipped {k}: {why}", highlight=False)
    for note in cmp.notes:
        console.print(f"note: {note}", highlight=False)
    console.print(legend(cmp), highlight=False)
