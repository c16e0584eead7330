"""How much the annotators agree: Cohen's κ per pair, Fleiss' κ, Krippendorff's α.

All on each annotator's latest grade per item. Each coefficient says which items it used:

* **Cohen's κ** (scikit-learn's ``cohen_kappa_score``) for each pair of annotators, on the
  items both graded: ``κ = (p_o - p_e) / (1 - p_e)`` with ``p_e`` from each annotator's own
  grade shares (Cohen 1960); also linearly weighted (Cohen 1968), for ordinal grades.
* **Fleiss' κ** (statsmodels' ``fleiss_kappa``) needs the same number ``m`` of raters on
  every item: it uses the items graded by the most common ``m >= 2`` (the larger ``m`` on a
  tie) and says how many items that is and how many were left out (Fleiss 1971).
* **Krippendorff's α** (the ``krippendorff`` package), ordinal and nominal, on every item with
  two grades or more, any number of raters: ``α = 1 - D_o / D_e`` (Krippendorff 2011).

A coefficient that is undefined (no item, or every grade the same so that chance agreement
is 1) is ``None``, never 0.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from rich.table import Table as RichTable
from rich.text import Text

from finegrain.build.judge.store import JudgmentStore
from finegrain.errors import MissingDependencyError

Table = Mapping[tuple[str, str], Mapping[str, int]]  # item -> annotator -> grade


@dataclass(frozen=True)
class PairAgreement:
    """Two annotators on the ``n_items`` items both graded."""

    a: str
    b: str
    n_items: int
    observed: float | None  # share of those items with the same grade
    kappa: float | None
    kappa_linear: float | None


@dataclass(frozen=True)
class Agreement:
    """Agreement of the annotators of one store (see the module doc for each coefficient)."""

    grades: tuple[int, ...]
    annotators: tuple[str, ...]
    n_items: int  # items with at least one grade
    n_judgments: int  # latest grades counted
    pairs: tuple[PairAgreement, ...]
    fleiss_kappa: float | None
    fleiss_raters: int | None  # m: the number of raters of every item Fleiss' κ used
    fleiss_items: int  # items used by Fleiss' κ
    fleiss_left_out: int  # items with two raters or more but not m
    alpha_ordinal: float | None
    alpha_nominal: float | None
    alpha_items: int  # items with two grades or more (the pairable ones α uses)

    def to_dict(self) -> dict[str, Any]:
        return {
            "grades": list(self.grades), "annotators": list(self.annotators), "n_items": self.n_items,
            "n_judgments": self.n_judgments,
            "pairs": [{"a": p.a, "b": p.b, "n_items": p.n_items, "observed": p.observed, "kappa": p.kappa,
                       "kappa_linear": p.kappa_linear} for p in self.pairs],
            "fleiss": {"kappa": self.fleiss_kappa, "raters": self.fleiss_raters, "items": self.fleiss_items,
                       "left_out": self.fleiss_left_out},
            "krippendorff": {"ordinal": self.alpha_ordinal, "nominal": self.alpha_nominal, "items": self.alpha_items},
        }

    def tables(self) -> list[Any]:
        """Headings and rich tables that fit 80 columns: the pairs, then the coefficients over all annotators."""

        pairs = RichTable()
        for name in ("annotator", "annotator"):
            pairs.add_column(name, overflow="fold", max_width=18)
        for name in ("items", "agree", "κ", "κ linear"):
            pairs.add_column(name, justify="right")
        for p in self.pairs:
            pairs.add_row(p.a, p.b, str(p.n_items), _pct(p.observed), _num(p.kappa), _num(p.kappa_linear))
        if not self.pairs:
            pairs.add_row("-", "-", "0", "n/a", "n/a", "n/a")
        overall = RichTable()
        overall.add_column("coefficient")
        overall.add_column("value", justify="right")
        overall.add_column("on", overflow="fold", max_width=44)
        if self.fleiss_raters is None:
            on = "no item has two raters or more"
        else:
            on = f"{self.fleiss_items} items with {self.fleiss_raters} raters each"
            if self.fleiss_left_out:
                on += f"; {self.fleiss_left_out} with another count left out"
        overall.add_row("Fleiss' κ", _num(self.fleiss_kappa), on)
        on_alpha = f"{self.alpha_items} items with 2+ grades"
        overall.add_row("Krippendorff's α ordinal", _num(self.alpha_ordinal), on_alpha)
        overall.add_row("Krippendorff's α nominal", _num(self.alpha_nominal), on_alpha)
        return [Text("Cohen's κ per pair of annotators, on the items both graded"), pairs,
                Text(f"All {len(self.annotators)} annotators: {self.n_items} items graded, {self.n_judgments} grades"),
                overall]


def grade_table(store: JudgmentStore) -> dict[tuple[str, str], dict[str, int]]:
    """``item -> annotator -> latest grade`` of every graded item of ``store``."""
    table: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for j in store.latest():
        if j.grade is not None:
            table[(j.qid, j.doc_id)][j.annotator] = j.grade
    return dict(table)


def store_agreement(store: JudgmentStore) -> Agreement:
    """:func:`agreement` of the latest grades in ``store`` on its scale."""
    return agreement(grade_table(store), store.scale.grades, store.annotators())


def agreement(table: Table, grades: Sequence[int], annotators: Sequence[str] | None = None) -> Agreement:
    """Agreement over ``table`` (item -> annotator -> grade) on the scale ``grades``.

    Annotators who graded nothing are left out; ``annotators`` gives the order of the others.
    """
    scale = tuple(sorted(grades))
    graded = {a for votes in table.values() for a in votes}
    names = tuple(a for a in dict.fromkeys([*(annotators or ()), *sorted(graded)]) if a in graded)
    pairs = tuple(_pair(table, a, b, scale) for a, b in itertools.combinations(names, 2))
    fk, m, used, left = _fleiss(table, scale)
    multi = [votes for votes in table.values() if len(votes) >= 2]
    return Agreement(
        grades=scale, annotators=names, n_items=sum(1 for v in table.values() if v),
        n_judgments=sum(len(v) for v in table.values()), pairs=pairs,
        fleiss_kappa=fk, fleiss_raters=m, fleiss_items=used, fleiss_left_out=left,
        alpha_ordinal=_alpha(table, names, scale, "ordinal"), alpha_nominal=_alpha(table, names, scale, "nominal"),
        alpha_items=len(multi),
    )


# --------------------------------------------------------------------------- the coefficients


def _pair(table: Table, a: str, b: str, scale: tuple[int, ...]) -> PairAgreement:
    both = [(v[a], v[b]) for v in table.values() if a in v and b in v]
    if not both:
        return PairAgreement(a, b, 0, None, None, None)
    try:
        from sklearn.metrics import cohen_kappa_score
    except ImportError as e:  # pragma: no cover - installed with the judge extra
        raise MissingDependencyError("scikit-learn", "judge") from e
    ya, yb = [x for x, _ in both], [y for _, y in both]
    observed = sum(x == y for x, y in both) / len(both)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kappa = cohen_kappa_score(ya, yb, labels=list(scale))
        linear = cohen_kappa_score(ya, yb, labels=list(scale), weights="linear")
    return PairAgreement(a, b, len(both), observed, _finite(kappa), _finite(linear))


def _fleiss(table: Table, scale: tuple[int, ...]) -> tuple[float | None, int | None, int, int]:
    counts = Counter(len(v) for v in table.values() if len(v) >= 2)
    if not counts:
        return None, None, 0, 0
    m = max(counts, key=lambda k: (counts[k], k))
    rows = [[sum(1 for g in v.values() if g == grade) for grade in scale] for v in table.values() if len(v) == m]
    try:
        from statsmodels.stats.inter_rater import fleiss_kappa
    except ImportError as e:  # pragma: no cover - installed with the judge extra
        raise MissingDependencyError("statsmodels", "judge") from e
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        value = fleiss_kappa(np.asarray(rows, dtype=float), method="fleiss")
    left = sum(n for k, n in counts.items() if k != m)
    return _finite(value), m, len(rows), left


def _alpha(table: Table, names: tuple[str, ...], scale: tuple[int, ...],
           level: Literal["ordinal", "nominal"]) -> float | None:
    items = [v for v in table.values() if len(v) >= 2]
    if not items:
        return None
    try:
        import krippendorff
    except ImportError as e:  # pragma: no cover - installed with the judge extra
        raise MissingDependencyError("krippendorff", "judge") from e
    data = np.full((len(names), len(items)), np.nan)
    row = {a: i for i, a in enumerate(names)}
    for j, votes in enumerate(items):
        for a, g in votes.items():
            data[row[a], j] = g
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            value = krippendorff.alpha(reliability_data=data, value_domain=list(scale), level_of_measurement=level)
        except (ValueError, ZeroDivisionError):
            return None
    return _finite(value)


def _finite(value: Any) -> float | None:
    x = float(value)
    return x if math.isfinite(x) else None


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"
