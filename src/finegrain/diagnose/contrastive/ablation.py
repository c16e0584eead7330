"""Ablation table of CCD's categories: every CCD category x every dataset category, with pair counts.

One table per direction. Rows are all nine CCD categories of Table 5 (in
the paper's order, grouped), plus an ``(unmapped)`` row when some dataset
category has no CCD counterpart; columns are the dataset's own categories.
A cell holds the distinct pairs and (pair, query) units that fall in it and
their FG-CDA; an empty cell is kept (``n_pairs == 0``, FG-CDA None) so the
table shows which of the nine categories the data cannot speak to at all,
and a cell with fewer than ``min_pairs`` pairs is flagged *sparse*. Row and
column totals are the same counts pooled.

Counts come from the scored records of the direction (pairs that cannot give
the direction are not in its table); nothing is re-scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from finegrain.diagnose.contrastive.categories import CCD_CATEGORIES, CCD_GROUPS
from finegrain.diagnose.contrastive.records import Direction
from finegrain.diagnose.contrastive.scoring import ContrastScores
from finegrain.errors import FinegrainError
from finegrain.results import probes as saved_kinds

UNMAPPED = "(unmapped)"
DEFAULT_MIN_PAIRS = 10


@dataclass(frozen=True)
class AblationCell:
    """Pairs, (pair, query) units and correct units of one CCD category x dataset category cell."""

    ccd: str
    category: str
    n_pairs: int
    n: int
    correct: int

    @property
    def fg_cda(self) -> float | None:
        return self.correct / self.n if self.n else None

    def saved(self, sparse: bool | None = None) -> saved_kinds.AblationCell:
        """As saved in ``results.json``; ``sparse`` is saved when given (a total has none)."""
        return saved_kinds.AblationCell(ccd_category=self.ccd, category=self.category, n_pairs=self.n_pairs, n=self.n,
                                        correct=self.correct, fg_cda=self.fg_cda,
                                        **({} if sparse is None else {"sparse": sparse}))


@dataclass(frozen=True)
class AblationTable:
    """The cells of one direction, row by row, with row and column totals."""

    direction: Direction
    rows: tuple[str, ...]  # CCD categories (all nine), then UNMAPPED when present
    columns: tuple[str, ...]  # dataset categories
    cells: tuple[tuple[AblationCell, ...], ...]  # cells[row][column]
    row_totals: tuple[AblationCell, ...]
    column_totals: tuple[AblationCell, ...]
    total: AblationCell
    min_pairs: int

    def cell(self, ccd: str, category: str) -> AblationCell:
        try:
            return self.cells[self.rows.index(ccd)][self.columns.index(category)]
        except ValueError:
            raise FinegrainError(f"no cell ({ccd!r}, {category!r}) in the ablation table",
                                 f"rows: {', '.join(self.rows)}; columns: {', '.join(self.columns)}") from None

    @property
    def ccd_with_data(self) -> tuple[str, ...]:
        """The CCD categories (of the nine) that have at least one pair."""
        return tuple(r for r, t in zip(self.rows, self.row_totals) if r != UNMAPPED and t.n_pairs > 0)

    def sparse(self, c: AblationCell) -> bool:
        return 0 < c.n_pairs < self.min_pairs

    def saved(self) -> saved_kinds.AblationTable:
        """As saved in ``results.json``."""
        return saved_kinds.AblationTable(
            direction=self.direction, rows=list(self.rows), columns=list(self.columns),
            groups={r: CCD_GROUPS.get(r, "") for r in self.rows},
            cells=[[c.saved(self.sparse(c)) for c in row] for row in self.cells],
            row_totals=[c.saved(self.sparse(c)) for c in self.row_totals],
            column_totals=[c.saved(self.sparse(c)) for c in self.column_totals],
            total=self.total.saved(), min_pairs=self.min_pairs,
            ccd_with_data=list(self.ccd_with_data), n_ccd_categories=len(CCD_CATEGORIES),
        )


def _cell(ccd: str, category: str, mask: np.ndarray, pids: np.ndarray, ok: np.ndarray) -> AblationCell:
    return AblationCell(ccd, category, len(set(pids[mask].tolist())), int(mask.sum()), int(ok[mask].sum()))


def ablation_table(
    scores: ContrastScores,
    *,
    category_order: Sequence[str] | None = None,
    min_pairs: int = DEFAULT_MIN_PAIRS,
) -> AblationTable:
    """The CCD category x dataset category table of one direction's scored records."""
    if isinstance(min_pairs, bool) or not isinstance(min_pairs, int) or min_pairs < 1:
        raise FinegrainError(f"min_pairs={min_pairs!r} must be a whole number >= 1", "e.g. min_pairs=10")
    recs = scores.records
    cats = np.array([r.category for r in recs], dtype=object)
    ccds = np.array([r.ccd_category or UNMAPPED for r in recs], dtype=object)
    pids = np.array([r.pair_id for r in recs], dtype=object)
    ok = np.asarray(scores.correct, dtype=bool)
    present = set(cats.tolist())
    columns = tuple([c for c in (category_order or ()) if c in present] + sorted(present - set(category_order or ())))
    rows = CCD_CATEGORIES + ((UNMAPPED,) if (ccds == UNMAPPED).any() else ())
    cells = tuple(tuple(_cell(r, c, (ccds == r) & (cats == c), pids, ok) for c in columns) for r in rows)
    everything = np.ones(len(recs), dtype=bool)
    return AblationTable(
        direction=scores.direction, rows=rows, columns=columns, cells=cells,
        row_totals=tuple(_cell(r, "all", ccds == r, pids, ok) for r in rows),
        column_totals=tuple(_cell("all", c, cats == c, pids, ok) for c in columns),
        total=_cell("all", "all", everything, pids, ok), min_pairs=min_pairs,
    )
