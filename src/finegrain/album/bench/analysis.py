"""PhotoBench's analyses of an album evaluation, as typed rows computed from the per-query values.

Every table here slices one :class:`~finegrain.evaluate.result.Evaluation` by a set of
query ids and aggregates each metric with its own rule over the slice
(:meth:`MetricResult.value_over`: a mean for set F1 and R@K / N@K, the ratio of sums
for Reject-P/R/F1, Appendix B.2), so nothing is recomputed and every cell carries the
number of values that entered it (``n``):

- :func:`dimension_rows`: one row per query dimension and value (Location, Time,
  Person, Object, Concept, Genre × fact / cognitive; Appendix D, Table 9), plus the
  two rows of Table 9 itself: queries with no cognitive label and with at least one;
- :func:`complexity_table`: set F1 by number of information sources (Table 6:
  single = V, M, F; dual = VM, VF, MF; triple = VMF) and the changes between levels.
  A level's F1 is the mean over its normal queries (query-weighted). The paper's Δ
  are relative changes in percent (Table 6: Δ2-1 = 52.4 / 63.5 - 1 = -17.5 %); both the
  relative change and the change in F1 points are given;
- :func:`ablation_table`: set F1 by Source type for each tool configuration (Table 5);
- :func:`outcome_counts`: how many queries ended in each engine outcome, by Source type.

Set metrics (P / R / F1) are averaged over the normal queries only, as the paper's
Table 3 reports them (the evaluation core scores a zero-ground-truth query that
returned photos F1 = 0; here it counts in Reject-F1 alone); ranking metrics exclude
zero-ground-truth queries; rejection metrics count every query.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from finegrain.evaluate.groups import order_groups
from finegrain.evaluate.result import Evaluation
from finegrain.io.photobench import DIMENSIONS, SOURCES

DIMENSION_VALUES = ("fact", "cognitive")
LEVELS = ((1, ("V", "M", "F")), (2, ("VM", "VF", "MF")), (3, ("VMF",)))
LEVEL_NAMES = {1: "single", 2: "dual", 3: "triple"}
DELTAS = ((2, 1), (3, 2), (3, 1))
SET_PREFIX = "set_"


@dataclass(frozen=True, slots=True)
class Cell:
    """One aggregate: its ``value`` (None when undefined) and how many per-query values entered it."""

    value: float | None
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "n": self.n}


@dataclass(frozen=True, slots=True)
class SliceRow:
    """Metrics over one slice of the queries: ``group`` (e.g. ``Location``) and ``value`` (``fact``)."""

    group: str
    value: str
    n_queries: int
    n_zero_ground_truth: int
    metrics: Mapping[str, Cell]

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "value": self.value, "n_queries": self.n_queries,
                "n_zero_ground_truth": self.n_zero_ground_truth,
                "metrics": {k: c.to_dict() for k, c in self.metrics.items()}}


def slice_row(ev: Evaluation, group: str, value: str, qids: Iterable[str], zero: frozenset[str],
              metrics: Sequence[str] | None = None) -> SliceRow:
    """Each metric of ``ev`` (or those in ``metrics``) aggregated over ``qids``."""
    chosen = frozenset(qids)
    cells = {k: Cell(*ev[k].value_over(_universe(k, chosen, zero))) for k in (metrics if metrics is not None else list(ev))}
    return SliceRow(group, value, len(chosen), len(chosen & zero), cells)


def _universe(metric: str, qids: frozenset[str], zero: frozenset[str]) -> frozenset[str]:
    """The queries a metric is averaged over: set metrics over the normal queries only (the paper's
    Table 3 reports P / R / F1 on normal queries and the Rej-* on all), the others over all."""
    return qids - zero if metric.startswith(SET_PREFIX) else qids


def source_order(present: Iterable[str]) -> list[str]:
    """Source types in the paper's order (V, M, F, VM, VF, MF, VMF), any others after them."""
    have = set(present)
    return [*(t for t in SOURCES if t in have), *order_groups(have - set(SOURCES))]


def source_rows(ev: Evaluation, sources: Mapping[str, str], zero: frozenset[str],
                metrics: Sequence[str] | None = None) -> tuple[SliceRow, ...]:
    """One row per Source type, then ``all`` (Tables 2 and 3 side by side)."""
    rows = [slice_row(ev, "source", s, (q for q, t in sources.items() if t == s), zero, metrics)
            for s in source_order(sources.values())]
    return (*rows, slice_row(ev, "source", "all", sources, zero, metrics))


# --------------------------------------------------------------------------- Table 9 / Appendix D


def dimension_rows(ev: Evaluation, dimensions: Mapping[str, Mapping[str, str | None]], zero: frozenset[str],
                   metrics: Sequence[str] | None = None) -> tuple[SliceRow, ...]:
    """Rows per dimension × value (only values some query has), then ``any`` × ``fact only`` (no
    cognitive label, at least one label) and ``cognitive`` (at least one cognitive label).

    ``dimensions``: ``{qid: {"Location": "fact" | "cognitive" | None, ...}}``; queries without
    dimension tags (e.g. from query files) are in no row."""
    rows = []
    for dim in DIMENSIONS:
        for value in DIMENSION_VALUES:
            qids = [q for q, d in dimensions.items() if d.get(dim) == value]
            if qids:
                rows.append(slice_row(ev, dim, value, qids, zero, metrics))
    fact_only = [q for q, d in dimensions.items() if "cognitive" not in d.values() and "fact" in d.values()]
    cognitive = [q for q, d in dimensions.items() if "cognitive" in d.values()]
    if fact_only:
        rows.append(slice_row(ev, "any", "fact only", fact_only, zero, metrics))
    if cognitive:
        rows.append(slice_row(ev, "any", "cognitive", cognitive, zero, metrics))
    return tuple(rows)


# --------------------------------------------------------------------------- Table 6


@dataclass(frozen=True, slots=True)
class Level:
    """Set F1 of one complexity level (1, 2 or 3 sources): pooled and per Source type."""

    sources: int
    types: tuple[str, ...]
    n_queries: int
    n_zero_ground_truth: int
    set_f1: Cell
    by_type: Mapping[str, Cell]

    def to_dict(self) -> dict[str, Any]:
        return {"sources": self.sources, "name": LEVEL_NAMES[self.sources], "types": list(self.types),
                "n_queries": self.n_queries, "n_zero_ground_truth": self.n_zero_ground_truth,
                "set_f1": self.set_f1.to_dict(), "by_type": {k: c.to_dict() for k, c in self.by_type.items()}}


@dataclass(frozen=True, slots=True)
class Delta:
    """The change of set F1 from level ``base`` to level ``to``: in points and relative (percent)."""

    to: int
    base: int
    points: float | None
    relative_pct: float | None

    @property
    def name(self) -> str:
        return f"{self.to}-{self.base}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "to": self.to, "base": self.base, "points": self.points,
                "relative_pct": self.relative_pct}


@dataclass(frozen=True, slots=True)
class Complexity:
    levels: tuple[Level, ...]
    deltas: tuple[Delta, ...]

    def level(self, sources: int) -> Level:
        return next(x for x in self.levels if x.sources == sources)

    def to_dict(self) -> dict[str, Any]:
        return {"levels": [x.to_dict() for x in self.levels], "deltas": [d.to_dict() for d in self.deltas],
                "note": "level F1 = mean set F1 over the level's normal queries; relative_pct = 100 * (to / base - 1) "
                        "(the paper's Table 6 Δ), points = to - base (F1 in [0, 1])"}


def complexity_table(ev: Evaluation, sources: Mapping[str, str], zero: frozenset[str],
                     metric: str = "set_f1") -> Complexity:
    """Set F1 by number of sources (Table 6) from ``sources`` (``{qid: "VM", ...}``)."""
    levels = []
    for n, types in LEVELS:
        qids = frozenset(q for q, s in sources.items() if s in types)
        by_type = {t: Cell(*ev[metric].value_over(_universe(metric, frozenset(q for q in qids if sources[q] == t), zero)))
                   for t in types}
        levels.append(Level(n, types, len(qids), len(qids & zero),
                            Cell(*ev[metric].value_over(_universe(metric, qids, zero))), by_type))
    value = {x.sources: x.set_f1.value for x in levels}
    deltas = []
    for to, base in DELTAS:
        a, b = value[to], value[base]
        points = None if a is None or b is None else a - b
        rel = None if a is None or not b else 100.0 * (a / b - 1.0)
        deltas.append(Delta(to, base, points, rel))
    return Complexity(tuple(levels), tuple(deltas))


# --------------------------------------------------------------------------- Table 5


@dataclass(frozen=True, slots=True)
class AblationRow:
    """Set F1 by Source type (and over all normal queries) with one tool configuration on."""

    tools: str
    by_source: Mapping[str, Cell]
    all: Cell
    reject_f1: Cell

    def to_dict(self) -> dict[str, Any]:
        return {"tools": self.tools, "by_source": {k: c.to_dict() for k, c in self.by_source.items()},
                "all": self.all.to_dict(), "reject_f1": self.reject_f1.to_dict()}


def ablation_row(tools: str, ev: Evaluation, sources: Mapping[str, str], zero: frozenset[str]) -> AblationRow:
    """Set F1 of ``ev`` over the normal queries by Source type (``sources``: ``{qid: type}``) and over all
    of them, and Reject-F1 over every query."""
    by = {}
    for s in source_order(sources.values()):
        by[s] = Cell(*ev["set_f1"].value_over(frozenset(q for q, t in sources.items() if t == s) - zero))
    everyone = frozenset(sources)
    return AblationRow(tools, by, Cell(*ev["set_f1"].value_over(everyone - zero)),
                       Cell(*ev["reject_f1"].value_over(everyone)))


# --------------------------------------------------------------------------- outcomes


def outcome_counts(kinds: Mapping[str, str], groups: Mapping[str, str]) -> dict[str, dict[str, int]]:
    """``{group: {outcome kind: queries}}`` plus ``"all"``; groups in the paper's order, kinds by count."""
    out: dict[str, dict[str, int]] = {}
    for qid, kind in kinds.items():
        for g in (groups.get(qid, "untyped"), "all"):
            row = out.setdefault(g, {})
            row[kind] = row.get(kind, 0) + 1
    ordered = {g: out[g] for g in source_order(k for k in out if k != "all")}
    if "all" in out:
        ordered["all"] = out["all"]
    return {g: dict(sorted(row.items(), key=lambda kv: (-kv[1], kv[0]))) for g, row in ordered.items()}
