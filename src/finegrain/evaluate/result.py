"""The result of an evaluation: per-query values first, aggregates and slices derived from them.

An :class:`Evaluation` holds, for every metric, a :class:`MetricResult`: the
canonical key, the per-query values, the aggregate and its
:class:`Denominators`. Aggregation and slicing by query type consume the stored
per-query values (:func:`finegrain.metrics.values.aggregate`); nothing here
recomputes a metric. An aggregate over no defined value is ``None`` (JSON
``null``), never 0.

An evaluation prints as a small table with its denominators in one line
(:mod:`finegrain.evaluate.summary`). :meth:`Evaluation.save` writes a results
folder through :class:`finegrain.results.saved.SavedResults`, the one class
that writes and reads ``results.json``; that class sits above this layer, so
the method reaches it through the hook :data:`finegrain.hooks.SAVED_RESULTS`
(filled by the root package, see :mod:`finegrain.hooks`) rather than keeping
a second writer of the schema here.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from finegrain._lazy import require
from finegrain.errors import FinegrainError
from finegrain.evaluate.compat import CompatOptions
from finegrain.evaluate.groups import UNTYPED as UNTYPED  # re-exported: the one name of the group
from finegrain.evaluate.groups import group_of, order_groups
from finegrain.evaluate.summary import denominators_line, html_table, scale_note, text_table, value_text
from finegrain.hooks import SAVED_RESULTS
from finegrain.metrics.spec import parse_metric
from finegrain.metrics.values import QueryValues, aggregate

if TYPE_CHECKING:
    import os

    from finegrain.results.saved import SavedResults


@dataclass(frozen=True)
class Denominators:
    """Who counted in one aggregate.

    - ``n_universe``: queries in the universe (the qrels' queries, or the given query list);
    - ``n_scored``: universe queries the metric scores
      (``n_universe - n_excluded_no_relevant``);
    - ``n_excluded_no_relevant``: queries left out for having no item with grade >= rel
      (ranking metrics only; set and rejection metrics score every query);
    - ``n_missing_from_run``: scored queries absent from the run (an empty
      ranking / empty prediction: 0 for ranking metrics);
    - ``n_undefined``: scored queries whose value is undefined (e.g. set precision of
      an empty prediction), left out of the mean; for ratio metrics (``pair_*``,
      ``reject_*``) the queries contributing nothing to the denominator;
    - ``n_ignored_run_queries``: run queries outside the universe.

    With ``--compat trec_eval`` (see :mod:`finegrain.evaluate.compat`) two more
    counts are kept (None, and left out of :meth:`to_dict`, in strict mode):

    - ``n_excluded_not_in_run``: universe (qrels) queries absent from the run,
      left out as trec_eval leaves them out without ``-c``;
    - ``n_no_relevant_as_zero``: scored queries without a relevant item, averaged
      as 0 (strict mode excludes them from ranking metrics).

    There ``n_excluded_no_relevant`` and ``n_undefined`` are 0. The aggregate
    is over ``n_scored - n_undefined`` values.
    """

    n_universe: int
    n_scored: int
    n_excluded_no_relevant: int
    n_missing_from_run: int
    n_undefined: int
    n_ignored_run_queries: int
    n_excluded_not_in_run: int | None = None
    n_no_relevant_as_zero: int | None = None

    def to_dict(self) -> dict[str, int]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True, eq=False)
class MetricResult:
    """One metric over one universe: per-query values, aggregate and denominators."""

    key: str
    universe: tuple[str, ...]
    outcome: QueryValues = field(repr=False)
    denominators: Denominators

    @classmethod
    def build(
        cls,
        key: str,
        universe: tuple[str, ...],
        outcome: QueryValues,
        in_run: np.ndarray,
        n_ignored: int,
        *,
        no_relevant: np.ndarray | None = None,
    ) -> MetricResult:
        """Count the denominators of ``outcome``.

        ``no_relevant`` (bool per universe query) is given in ``--compat
        trec_eval`` mode only: then an unscored query is one left out for being
        absent from the run, and scored queries without relevant items are
        counted as averaged-as-0.
        """
        scored = outcome.scored
        if outcome.rule == "ratio":
            assert outcome.denominator is not None  # invariant of QueryValues.ratio
            undefined = scored & ~(outcome.denominator > 0)
        else:
            undefined = scored & np.isnan(outcome.values)
        n_scored = int(scored.sum())
        common = dict(
            n_universe=len(universe),
            n_scored=n_scored,
            n_missing_from_run=int((scored & ~in_run).sum()),
            n_undefined=int(undefined.sum()),
            n_ignored_run_queries=n_ignored,
        )
        if no_relevant is None:
            dens = Denominators(n_excluded_no_relevant=len(universe) - n_scored, **common)
        else:
            dens = Denominators(
                n_excluded_no_relevant=0,
                n_excluded_not_in_run=len(universe) - n_scored,
                n_no_relevant_as_zero=int((scored & no_relevant).sum()),
                **common,
            )
        return cls(key, universe, outcome, dens)

    @cached_property
    def value(self) -> float | None:
        """The aggregate (mean, median or ratio of sums, by metric); None when undefined."""
        return aggregate(self.outcome)[0]

    @cached_property
    def per_query(self) -> Mapping[str, float | None]:
        """``{qid: value}`` for the scored queries, in universe order (None = undefined / not found)."""
        idx = np.flatnonzero(self.outcome.scored)
        vals: list[float | None] = self.outcome.values[idx].tolist()
        for i in np.flatnonzero(~np.isfinite(self.outcome.values[idx])).tolist():
            vals[i] = None
        qids = self.universe
        return MappingProxyType(dict(zip([qids[i] for i in idx.tolist()], vals)))

    def value_over(self, qids: set[str] | frozenset[str]) -> tuple[float | None, int]:
        """Aggregate over the scored queries among ``qids`` and how many values entered it."""
        mask = np.fromiter((q in qids for q in self.universe), dtype=bool, count=len(self.universe))
        return aggregate(self.outcome, mask)

    def __repr__(self) -> str:
        return f"MetricResult({self.key!r}, value={self.value!r}, {self.denominators})"

    def __float__(self) -> float:
        """The aggregate as a float (``float(ev["ndcg@10"])``); NaN when undefined, never 0."""
        return math.nan if self.value is None else float(self.value)


@dataclass(frozen=True, eq=False)
class Evaluation(Mapping[str, MetricResult]):
    """Results of several metrics on one run, keyed by canonical metric key (in request order).

    ``finegrain.evaluate`` returns it. Each value is a ``MetricResult`` with the per-query values, the
    aggregate and the denominators (queries scored, left out for having no relevant item, missing from the
    run, undefined); an undefined value is ``None``, never 0.

    Examples:
        >>> from finegrain import evaluate
        >>> ev = evaluate({"q1": {"d1": 1}, "q2": {"d2": 1}}, {"q1": {"d1": 1.0}}, ["ndcg@10", "recall@10"])
        >>> ev.mean("ndcg@10"), ev.per_query("ndcg@10")
        (0.5, {'q1': 1.0, 'q2': 0.0})
        >>> ev.denominators()["ndcg@10"].to_dict()["n_missing_from_run"]
        1
        >>> list(ev)
        ['ndcg@10', 'recall@10']
    """

    results: Mapping[str, MetricResult]
    query_types: Mapping[str, str | None] | None = None
    run_name: str | None = None
    compat: CompatOptions = field(default_factory=CompatOptions)

    def __getitem__(self, key: str) -> MetricResult:
        """The result of a metric by canonical key; other spellings (``nDCG@10``, an ir_measures measure
        object) are normalised."""
        if isinstance(key, str) and key in self.results:
            return self.results[key]
        try:
            return self.results[parse_metric(key).key]
        except (FinegrainError, KeyError):
            raise KeyError(key) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def aggregate(self) -> dict[str, float | None]:
        """``{key: aggregate}``; None where undefined."""
        return {k: r.value for k, r in self.results.items()}

    # -- printing ---------------------------------------------------------------------------

    def _summary(self) -> tuple[str, list[list[str]], str]:
        keys = list(self.results)
        mode = "trec_eval rules" if self.compat.trec_eval else "strict"
        title = f"Evaluation of {self.run_name or 'a run'!r}: {len(keys)} metric(s), {scale_note(keys)}, {mode}"
        rows = [[k, value_text(k, r.value)] for k, r in self.results.items()]
        dens = denominators_line({k: r.denominators.to_dict() for k, r in self.results.items()})
        return title, rows, f"denominators: {dens}"

    def __repr__(self) -> str:
        """A small table: one row per metric, then the denominators in one line."""
        title, rows, dens = self._summary()
        return f"{title}\n{text_table(['metric', 'value'], rows)}\n{dens}"

    def _repr_html_(self) -> str:
        title, rows, dens = self._summary()
        return html_table(title, ["metric", "value"], rows, dens)

    # -- saving (through finegrain.results: see the module docstring) ------------------------

    def to_saved(self, **sections: Any) -> SavedResults:
        """This evaluation as :class:`~finegrain.results.saved.SavedResults` (what ``results.json`` holds);
        ``sections`` as :meth:`SavedResults.from_evaluation` takes them (``queries``, ``provenance``, ...)."""
        saved: SavedResults = SAVED_RESULTS().from_evaluation(self, **sections)
        return saved

    def save(self, folder: str | os.PathLike[str], **sections: Any) -> Path:
        """Write a results folder (``folder/results.json``, what ``finegrain compare`` and ``report`` read);
        returns the file's path. ``sections`` as :meth:`to_saved`."""
        return self.to_saved(**sections).save(Path(folder))

    # -- the ranx / ir_measures-style views (finegrain.interop users guess these names) --

    def to_dict(self) -> dict[str, float | None]:
        """``{metric: aggregate}`` (as ranx's ``evaluate`` returns); the same as :meth:`aggregate`."""
        return self.aggregate()

    def mean(self, metric: str) -> float | None:
        """The aggregate of ``metric`` (any spelling: ``nDCG@10``); None when undefined.

        For most metrics the mean of the per-query values; a median-rank metric
        gives its median and a ``pair_*``/``reject_*`` metric its ratio of sums
        (the rule is :meth:`aggregation`).
        """
        return self._result(metric).value

    @overload
    def per_query(self, metric: None = None) -> dict[str, dict[str, float | None]]: ...

    @overload
    def per_query(self, metric: str) -> dict[str, float | None]: ...

    def per_query(
        self, metric: str | None = None
    ) -> dict[str, dict[str, float | None]] | dict[str, float | None]:
        """``{qid: value}`` of ``metric``; without one, ``{key: {qid: value}}`` of every metric.

        Only scored queries appear (a query without relevant item is left out of
        ranking metrics); an undefined value is None.
        """
        if metric is not None:
            return dict(self._result(metric).per_query)
        return {k: dict(r.per_query) for k, r in self.results.items()}

    def to_dataframe(self) -> Any:
        """A pandas DataFrame with one row per query: ``q_id``, ``type`` (when query types are known;
        ``"untyped"`` as in :meth:`by_group`) and a column per metric (NaN where the metric does not score the query or is undefined)."""

        pd = require("pandas", "interop")
        qids: dict[str, None] = {}
        for r in self.results.values():
            qids.update(dict.fromkeys(r.universe))
        columns: dict[str, Any] = {"q_id": list(qids)}
        if self.query_types is not None:
            columns["type"] = [group_of(self.query_types.get(q)) for q in qids]
        for key, r in self.results.items():
            values = r.per_query
            columns[key] = [_nan(values.get(q)) for q in qids]
        return pd.DataFrame(columns)

    def _result(self, metric: str) -> MetricResult:
        try:
            return self[metric]
        except KeyError:
            raise FinegrainError(
                f"this evaluation has no metric {metric!r}; it has {', '.join(self.results) or 'none'}",
                "evaluate with that metric, e.g. evaluate(qrels, run, [..., '" + str(metric) + "'])",
            ) from None

    def denominators(self) -> dict[str, Denominators]:
        return {k: r.denominators for k, r in self.results.items()}

    def by_group(self, types: Mapping[str, str | None]) -> dict[str, dict[str, dict[str, Any]]]:
        """``{group: {key: {"value": aggregate, "n": values used}}}`` by query type.

        A universe query whose type is None or that ``types`` does not list goes
        to the group ``"untyped"``, so that the groups partition the universe.
        Groups are sorted by name, ``"untyped"`` last. Each group's value is the
        metric's own aggregate (mean, median or ratio of sums) over the group's
        scored queries, computed from the stored per-query values.
        """
        out: dict[str, dict[str, dict[str, Any]]] = {}
        masks: dict[int, dict[str, np.ndarray]] = {}  # by universe (shared by all results)
        for key, result in self.results.items():
            if id(result.universe) not in masks:
                masks[id(result.universe)] = _group_masks(result.universe, types)
            for group, mask in masks[id(result.universe)].items():
                value, n = aggregate(result.outcome, mask)
                out.setdefault(group, {})[key] = {"value": value, "n": n}
        return {g: out[g] for g in order_groups(out)}

    def aggregation(self) -> dict[str, str]:
        """``{key: rule}``: how each aggregate is formed from the per-query values (``mean``, ``median``, ``ratio``)."""
        return {k: r.outcome.rule for k, r in self.results.items()}

    def to_json_dict(self) -> dict[str, Any]:
        """``{"aggregate", "per_query", "by_type" (when query types are known), "denominators"}``.

        ``per_query`` is ``{key: {qid: value}}``. Undefined values are ``None``;
        a non-finite aggregate (an infinite median rank) is ``None`` too, since
        JSON has no infinity. An evaluation under ``--compat trec_eval`` adds
        ``"compat": {"mode", "complete", "level_for_rel"}`` (strict mode, the
        default, adds nothing).
        """
        body: dict[str, Any] = {
            "aggregate": {k: _finite(v) for k, v in self.aggregate().items()},
            "per_query": self.per_query(),
        }
        if self.query_types is not None:
            body["by_type"] = {
                g: {k: {"value": _finite(c["value"]), "n": c["n"]} for k, c in row.items()}
                for g, row in self.by_group(self.query_types).items()
            }
        body["denominators"] = {k: d.to_dict() for k, d in self.denominators().items()}
        if self.compat.trec_eval:
            body["compat"] = self.compat.to_dict()
        return body


def _group_masks(universe: tuple[str, ...], types: Mapping[str, str | None]) -> dict[str, np.ndarray]:
    labels = [types.get(q) for q in universe]
    names = [group_of(t) for t in labels]
    codes: dict[str, int] = {}
    gid = np.fromiter((codes.setdefault(n, len(codes)) for n in names), dtype=np.int64, count=len(names))
    return {name: gid == code for name, code in codes.items()}


def _nan(v: float | None) -> float:
    return math.nan if v is None else v


def _finite(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None
