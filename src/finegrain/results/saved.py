"""Saved results as one frozen, typed object: :class:`SavedResults` (``results.json``, schema ``finegrain.results/1``).

``finegrain eval`` writes ``DIR/results.json``; ``compare``, ``report`` and
every verb that reads results read it through :meth:`SavedResults.from_json`,
which validates each section (a wrong shape is a DataFormatError naming the
file and the place) and migrates older files. An in-memory
:class:`~finegrain.evaluate.result.Evaluation` converts with
:meth:`SavedResults.from_evaluation`, so nothing needs a
file to be compared.

Each metric carries its **aggregation rule** (the ``"aggregation"`` section:
``{key: "mean" | "median" | "ratio" | "sum" | "gmean"}``, the rules of
:mod:`finegrain.metrics.values`): ``mean`` over the scored queries' defined
values (ndcg, recall, ...), ``median`` (``median_rank``), ``ratio``, a
pooled ratio of sums (``pair_*``, ``reject_*``), ``sum`` (``num_*``) and
``gmean`` (``gm_map``). Only a ``mean`` is what a paired test on per-query
values tests.

Migration: files written before the rule was saved lack ``"aggregation"``;
:func:`infer_aggregation` infers it once, here, from the metric's name (the
rule each metric function returns), and the object records that in
:attr:`SavedResults.migrations`.

The optional ``"judged"`` section (:class:`Judged`) holds the qrels grades of
the documents in the run's top ``k`` per query, so a report can show ranked
lists with grades without loading the dataset; files written before it lack
it (``judged`` None) and a report says their grades are not saved. The optional ``"passages"``
section (:class:`~finegrain.results.passages.PassagesSection`) holds the shortened text of the
passages those lists show.

A result read from an MTEB result JSON (:mod:`finegrain.results.mteb`)
has aggregates only (``per_query`` None): it can be shown next to others, but
no interval or paired test can be computed from it.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from finegrain.atomic import write_text
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.evaluate.groups import UNTYPED, group_of, order_groups
from finegrain.evaluate.result import Evaluation
from finegrain.evaluate.summary import denominators_line, html_table, scale_note, text_table, value_text
from finegrain.frozen import EMPTY, freeze, thaw
from finegrain.io._lines import read_json
from finegrain.metrics.spec import metric_aggregation, metric_range, parse_metric
from finegrain.metrics.values import RULES, Rule
from finegrain.results.companions import Companion
from finegrain.results.diagnosis import ErrorsSection, TaxonomySection
from finegrain.results.mteb import mteb_body
from finegrain.results.passages import PassagesSection
from finegrain.results.tuning import CvProvenance, CvSection, ThresholdSweepSection

RESULTS_FILE = "results.json"
SCHEMA = "finegrain.results/1"  # the schema of results.json, written and read by SavedResults

Aggregation = Rule  # the aggregation rules of finegrain.metrics.values
AGGREGATIONS: tuple[Aggregation, ...] = RULES


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class MetricRecord:
    """One metric of one result: aggregate, its rule, per-query values and denominators.

    ``per_query`` is None for an aggregate-only result (read from MTEB JSON).
    """

    key: str
    value: float | None
    aggregation: Aggregation
    per_query: Mapping[str, float | None] | None
    denominators: Mapping[str, int] = field(default_factory=lambda: EMPTY)

    @property
    def is_mean(self) -> bool:
        return self.aggregation == "mean"

    def defined(self) -> dict[str, float]:
        """``{qid: value}`` of the queries with a defined value (empty for an aggregate-only result)."""
        return {q: v for q, v in (self.per_query or {}).items() if v is not None}


@dataclass(frozen=True)
class Slice:
    """One metric over one query group: the aggregate and how many values entered it."""

    value: float | None
    n: int


@dataclass(frozen=True)
class Judged:
    """The grades of the run's top ``k`` per query (``results.json`` ``"judged"``).

    ``grades[qid][doc_id]`` is the qrels grade of a judged document among the
    top ``k``; a document absent from ``grades[qid]`` is unjudged, or a judged
    0 when ``fully_judged`` (the dataset lists only its relevant items).
    ``n_relevant[qid]`` counts the query's documents of grade >= ``rel`` in the qrels.
    """

    k: int
    rel: int
    fully_judged: bool
    grades: Mapping[str, Mapping[str, int]]
    n_relevant: Mapping[str, int] = field(default_factory=lambda: EMPTY)

    def grade(self, qid: str, doc_id: str) -> int | None:
        """The grade of ``doc_id`` for ``qid``: judged, 0 when fully judged, else None (unjudged)."""
        g = (self.grades.get(qid) or {}).get(doc_id)
        if g is None and self.fully_judged:
            return 0
        return g

    def to_json(self) -> dict[str, Any]:
        return {"k": self.k, "rel": self.rel, "fully_judged": self.fully_judged,
                "grades": {q: dict(g) for q, g in self.grades.items()}, "n_relevant": dict(self.n_relevant)}


@dataclass(frozen=True)
class QueryRecord:
    text: str
    type: str | None

    @property
    def group(self) -> str:
        return group_of(self.type)


@dataclass(frozen=True, eq=False)
class SavedResults:
    """The content of one ``results.json``, validated and frozen (see the module docstring).

    ``SavedResults.load(folder)`` reads a results folder (or the file) that ``finegrain eval``,
    ``finegrain fuse`` or ``Evaluation.save`` wrote, checking every section and migrating files written by
    older versions; ``compare`` and ``report`` take these objects.

    Examples:
        >>> import tempfile
        >>> from finegrain import SavedResults, evaluate
        >>> ev = evaluate({"q1": {"d1": 1}, "q2": {"d2": 1}}, {"q1": {"d1": 1.0}}, "ndcg@10")
        >>> folder = ev.save(tempfile.mkdtemp() + "/bm25").parent
        >>> saved = SavedResults.load(folder)
        >>> saved.metrics["ndcg@10"].value, saved.metrics["ndcg@10"].aggregation
        (0.5, 'mean')

    ``metrics`` in saved order; ``by_type`` groups in :func:`order_groups`
    order; ``errors`` / ``taxonomy`` the diagnosis sections
    (:mod:`finegrain.results.diagnosis`); ``cv`` / ``cv_provenance`` /
    ``threshold_sweep`` the tuning sections (:mod:`finegrain.results.tuning`); ``files`` the size and
    SHA-256 of each file saved beside it (:mod:`finegrain.results.companions`); ``extra`` every other top-level key as
    written (``run_file``, ``compat``, ...); ``migrations`` what reading
    changed; ``source`` the file read (None in memory).
    """

    metrics: Mapping[str, MetricRecord]
    by_type: Mapping[str, Mapping[str, Slice]] = field(default_factory=lambda: EMPTY)
    curves: Mapping[str, Mapping[str, float | None]] = field(default_factory=lambda: EMPTY)
    queries: Mapping[str, QueryRecord] = field(default_factory=lambda: EMPTY)
    provenance: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    errors: ErrorsSection | None = None
    taxonomy: TaxonomySection | None = None
    judged: Judged | None = None
    passages: PassagesSection | None = None
    cv: CvSection | None = None
    cv_provenance: CvProvenance | None = None
    threshold_sweep: ThresholdSweepSection | None = None
    files: Mapping[str, Companion] = field(default_factory=lambda: EMPTY)
    extra: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    migrations: tuple[str, ...] = ()
    source: str | None = None
    origin: str = "finegrain"  # or "mteb": aggregates only

    # ------------------------------------------------------------------ printing

    def _summary(self) -> tuple[str, list[list[str]], str]:
        keys = list(self.metrics)
        on = f" on {self.dataset_name!r}" if self.dataset_name else ""
        kind = "MTEB aggregates only" if self.origin == "mteb" else "saved"
        title = (f"SavedResults of {self.retriever_name or 'a run'!r}{on}: {len(keys)} metric(s), "
                 f"{scale_note(keys)}, {kind}")
        rows = [[k, value_text(k, m.value)] for k, m in self.metrics.items()]
        dens = denominators_line({k: m.denominators for k, m in self.metrics.items()})
        return title, rows, f"denominators: {dens}"

    def __repr__(self) -> str:
        """A small table: one row per metric, then the denominators in one line (:mod:`finegrain.evaluate.summary`)."""
        title, rows, dens = self._summary()
        return f"{title}\n{text_table(['metric', 'value'], rows)}\n{dens}"

    def _repr_html_(self) -> str:
        title, rows, dens = self._summary()
        return html_table(title, ["metric", "value"], rows, dens)

    # ------------------------------------------------------------------ views

    @property
    def aggregate(self) -> dict[str, float | None]:
        return {k: m.value for k, m in self.metrics.items()}

    @property
    def query_ids(self) -> tuple[str, ...]:
        """The queries this result scored: its query records, else every query a metric has a value for."""
        if self.queries:
            return tuple(self.queries)
        return tuple(dict.fromkeys(q for m in self.metrics.values() for q in (m.per_query or {})))

    @property
    def has_per_query(self) -> bool:
        """True when some metric has per-query values (False for an aggregate-only MTEB result)."""
        return any(m.per_query is not None for m in self.metrics.values())

    def metric(self, key: str) -> MetricRecord:
        return self.metrics[key]

    @property
    def dataset_name(self) -> str | None:
        name = _sub(self.provenance, "dataset").get("name")
        return None if name is None else str(name)

    @property
    def retriever_name(self) -> str | None:
        name = _sub(self.provenance, "retriever").get("name")
        return str(name) if name else None

    def query_groups(self) -> dict[str, str]:
        """``{qid: group}`` of the saved queries (a query without a type is ``"untyped"``)."""
        return {q: r.group for q, r in self.queries.items()}

    def group_size(self, group: str) -> int:
        """Queries of a group as the by-type section counts them (the largest ``n`` over metrics)."""
        return max((c.n for c in (self.by_type.get(group) or {}).values()), default=0)

    def type_value(self, group: str, key: str) -> float | None:
        cell = (self.by_type.get(group) or {}).get(key)
        return None if cell is None else cell.value

    # ------------------------------------------------------------------ building

    @classmethod
    def from_json(cls, obj: Mapping[str, Any] | str | Path, *, source: str | None = None) -> SavedResults:
        """Validate and freeze a results dict, or read a folder / ``results.json`` / MTEB result JSON.

        A dict without ``"schema"`` is taken as an in-memory results dict; one
        with another schema is refused. Errors name ``source`` (the file) and the section.
        """
        if isinstance(obj, (str, Path)):
            return cls.load(obj)
        where: str | Path = source if source is not None else "results"
        if not isinstance(obj, Mapping):
            raise DataFormatError(where, None, f"a finegrain results object (schema {SCHEMA!r})", type(obj).__name__)
        schema = obj.get("schema", SCHEMA)
        if schema != SCHEMA:
            raise DataFormatError(where, None, f"a finegrain results file (schema {SCHEMA!r})", repr(schema))
        return _parse(obj, where, source)

    @classmethod
    def load(cls, path: str | Path) -> SavedResults:
        """Read a results folder, its ``results.json``, or an MTEB result JSON file."""
        p = Path(path)
        if p.is_dir():
            p = p / RESULTS_FILE
        if not p.is_file():
            raise FinegrainError(f"no results at {str(p)!r}",
                                 "pass a folder written by 'finegrain eval --out DIR' (or an MTEB result JSON file)")
        data, _ = read_json(p)
        if isinstance(data, dict) and "schema" not in data and "scores" in data and "task_name" in data:
            return from_mteb_json(data, source=p)
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            found = data.get("schema") if isinstance(data, dict) else type(data).__name__
            raise DataFormatError(p, None, f"a finegrain results file (schema {SCHEMA!r}) or an MTEB result JSON",
                                  str(found))
        return _parse(data, p, str(p))

    def save(self, folder: str | Path) -> Path:
        """Write this as ``folder/results.json`` (the folder is created) and return its path; :meth:`load`
        reads it back. The JSON goes to a temporary file that is then renamed, so an interrupted write
        never leaves a half file behind."""
        return write_text(Path(folder) / RESULTS_FILE, json.dumps(self.to_json(), ensure_ascii=False, indent=1))

    @property
    def run_file(self) -> str | None:
        """The name of the run saved beside ``results.json`` (``run.trec`` or ``run.jsonl``), when recorded."""
        name = self.extra.get("run_file")
        return name if isinstance(name, str) else None

    @classmethod
    def from_evaluation(
        cls,
        evaluation: Evaluation,
        *,
        queries: Mapping[str, Any] | None = None,
        provenance: Mapping[str, Any] | None = None,
        curves: Mapping[str, Mapping[str, float | None]] | None = None,
        **sections: Any,
    ) -> SavedResults:
        """The saved form of an in-memory evaluation (what ``results.json`` would hold).

        ``queries`` is ``{qid: {"text", "type"}}`` (or ``{qid: type}``); when
        not given, the evaluation's query types are used. ``sections`` adds
        others (``errors``, ``taxonomy``, ``run_file``, ...).
        """
        body: dict[str, Any] = dict(evaluation.to_json_dict())
        body["aggregation"] = evaluation.aggregation()
        if queries is None and evaluation.query_types is not None:
            queries = {q: {"text": "", "type": t} for q, t in evaluation.query_types.items()}
        if queries is not None:
            body["queries"] = {q: (r if isinstance(r, Mapping) else {"text": "", "type": r}) for q, r in queries.items()}
        prov = dict(provenance or {})
        if evaluation.run_name and "retriever" not in prov:
            prov["retriever"] = {"name": evaluation.run_name}
        body["provenance"] = prov
        if curves is not None:
            body["curves"] = curves
        body.update(sections)
        return _parse(body, "evaluation", None)

    @classmethod
    def coerce(cls, obj: Any) -> SavedResults:
        """A SavedResults from a SavedResults, an Evaluation, a folder / file path or a results dict."""
        if isinstance(obj, SavedResults):
            return obj
        if isinstance(obj, Evaluation):
            return cls.from_evaluation(obj)
        if isinstance(obj, (str, Path)):
            return cls.load(obj)
        if isinstance(obj, Mapping):
            return cls.from_json(obj)
        raise FinegrainError(f"cannot read results from a {type(obj).__name__}",
                             "pass SavedResults, Evaluation objects, results folders or results dicts")

    # ------------------------------------------------------------------ writing

    def to_json(self) -> dict[str, Any]:
        """The ``results.json`` content (plain dicts and lists, schema first)."""
        out: dict[str, Any] = {"schema": SCHEMA, "aggregate": _json_num_map(self.aggregate)}
        out["aggregation"] = {k: m.aggregation for k, m in self.metrics.items()}
        if self.has_per_query:
            out["per_query"] = {k: dict(m.per_query) for k, m in self.metrics.items() if m.per_query is not None}
        if self.by_type:
            out["by_type"] = {g: {k: {"value": c.value, "n": c.n} for k, c in row.items()}
                              for g, row in self.by_type.items()}
        dens = {k: dict(m.denominators) for k, m in self.metrics.items() if m.denominators}
        if dens or "denominators" in self._empty_sections:
            out["denominators"] = dens
        if self.curves:
            out["curves"] = {f: dict(c) for f, c in self.curves.items()}
        if self.queries:
            out["queries"] = {q: {"text": r.text, "type": r.type} for q, r in self.queries.items()}
        if self.provenance:
            out["provenance"] = thaw(self.provenance)
        if self.errors is not None:
            out["errors"] = self.errors.to_json()
        if self.taxonomy is not None:
            out["taxonomy"] = self.taxonomy.to_json()
        if self.judged is not None:
            out["judged"] = self.judged.to_json()
        if self.passages is not None:
            out["passages"] = self.passages.to_json()
        if self.cv is not None:
            out["cv"] = self.cv.to_json()
        if self.threshold_sweep is not None:
            out["threshold_sweep"] = self.threshold_sweep.to_json()
        if self.files:
            out["files"] = {name: c.to_json() for name, c in self.files.items()}
        out.update(thaw(self.extra))
        return out

    _empty_sections: tuple[str, ...] = field(default=(), repr=False)  # written empty: a round trip keeps them


def _sub(m: Mapping[str, Any], part: str) -> Mapping[str, Any]:
    sub = m.get(part)
    return sub if isinstance(sub, Mapping) else EMPTY


def _json_num_map(m: Mapping[str, float | None]) -> dict[str, float | None]:
    return {k: (v if v is None or math.isfinite(v) else None) for k, v in m.items()}


# --------------------------------------------------------------------------- migration


def infer_aggregation(key: str) -> Aggregation:
    """The aggregation rule of metric ``key``, for files written before the rule was saved.

    The rule each metric declares (:func:`finegrain.metrics.spec.metric_aggregation`: ``median_rank`` is a
    median, ``pair_*`` and ``reject_*`` are ratios of sums, ...). A key that does not parse as a metric is
    a mean (what MTEB and trec_eval report).
    """

    try:
        name = parse_metric(key).name
    except FinegrainError:
        return "mean"
    return metric_aggregation(name)


# --------------------------------------------------------------------------- validation

_Check = Callable[[Any], bool]


def _number(v: Any) -> bool:
    """None, or a JSON number that is a finite double (a 400-digit integer is not)."""
    if v is None:
        return True
    if isinstance(v, bool) or not isinstance(v, int | float):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _mapping_of(check: _Check) -> _Check:
    return lambda v: isinstance(v, Mapping) and all(check(x) for x in v.values())


_CUTOFF = re.compile(r"[1-9][0-9]{0,8}")


def _curve(v: Any) -> bool:
    """A metric-vs-k curve: each k a whole number >= 1 written in ASCII digits (as the writer writes it)."""
    return (isinstance(v, Mapping) and all(isinstance(k, str) and _CUTOFF.fullmatch(k) for k in v)
            and all(_number(x) for x in v.values()))


def _query_record(v: Any) -> bool:
    return (isinstance(v, Mapping) and isinstance(v.get("text", ""), str)
            and (v.get("type") is None or isinstance(v.get("type"), str)))


def _slice(v: Any) -> bool:
    return isinstance(v, Mapping) and _number(v.get("value")) and _count(v.get("n", 0))


def _judged(v: Any) -> bool:
    return (isinstance(v, Mapping) and _count(v.get("k")) and _count(v.get("rel", 1))
            and isinstance(v.get("fully_judged", False), bool)
            and _mapping_of(_mapping_of(lambda g: isinstance(g, int) and not isinstance(g, bool)))(v.get("grades"))
            and _mapping_of(_count)(v.get("n_relevant", {})))


# section -> (required, check of the whole section, what it should be)
_SECTIONS: dict[str, tuple[bool, _Check, str]] = {
    "aggregate": (True, _mapping_of(_number), "{metric: number or null}"),
    "aggregation": (False, _mapping_of(lambda v: v in AGGREGATIONS), "{metric: " + ", ".join(repr(r) for r in RULES) + "}"),
    "per_query": (True, _mapping_of(_mapping_of(_number)), "{metric: {query id: number or null}}"),
    "denominators": (False, _mapping_of(_mapping_of(_count)), "{metric: {name: count}}"),
    "by_type": (False, _mapping_of(_mapping_of(_slice)), "{type: {metric: {value, n}}}"),
    "curves": (False, _mapping_of(_curve), "{metric: {k (a whole number >= 1): number or null}}"),
    "queries": (False, _mapping_of(_query_record), "{query id: {text, type}}"),
    "provenance": (False, lambda v: isinstance(v, Mapping), "an object"),
    "judged": (False, _judged, "{k, rel, fully_judged, grades: {query id: {doc id: grade}}, n_relevant}"),
}


def _first_bad(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _parse(data: Mapping[str, Any], where: str | Path, source: str | None, *,
           aggregate_only: bool = False, origin: str = "finegrain") -> SavedResults:
    hint = "the file was edited or damaged; write it again with 'finegrain eval'"
    for name, (required, check, shape) in _SECTIONS.items():
        if name not in data:
            if required and not (aggregate_only and name == "per_query"):
                raise DataFormatError(where, None, f"a section {name!r} {shape}", "none",
                                      "write the folder again with 'finegrain eval'")
            continue
        if not check(data[name]):
            raise DataFormatError(where, None, f"section {name!r} as {shape}", _first_bad(data[name]), hint)
    agg: Mapping[str, Any] = data["aggregate"]
    per_query: Mapping[str, Mapping[str, Any]] | None = data.get("per_query")
    if per_query is not None:
        unknown = set(per_query) - set(agg)
        if unknown:
            raise DataFormatError(where, None, "per-query values only for metrics in 'aggregate'",
                                  ", ".join(sorted(unknown)), hint)
    _check_ranges(data, where, hint, percent=origin == "mteb")
    rules: Mapping[str, Any] = data.get("aggregation") or {}
    stray = set(rules) - set(agg)
    if stray:
        raise DataFormatError(where, None, "an aggregation rule only for metrics in 'aggregate'",
                              ", ".join(sorted(stray)), hint)
    migrations: list[str] = []
    inferred = [k for k in agg if k not in rules]
    if inferred and "aggregation" not in data and not aggregate_only:
        migrations.append("no 'aggregation' section (written before it was saved): rules inferred from the "
                          f"metric names for {', '.join(inferred)}")
    elif inferred and not aggregate_only:
        migrations.append(f"aggregation rule inferred from the metric name for {', '.join(inferred)}")
    dens: Mapping[str, Mapping[str, int]] = data.get("denominators") or {}
    metrics: dict[str, MetricRecord] = {}
    for k, v in agg.items():
        pq = None if per_query is None else per_query.get(k)
        metrics[k] = MetricRecord(
            key=k,
            value=None if v is None else float(v),
            aggregation=cast(Aggregation, rules.get(k) or infer_aggregation(k)),
            per_query=None if pq is None else MappingProxyType(
                {q: (None if x is None else float(x)) for q, x in pq.items()}),
            denominators=MappingProxyType(dict(dens.get(k) or {})),
        )
    by_type_raw: Mapping[str, Mapping[str, Mapping[str, Any]]] = data.get("by_type") or {}
    by_type = MappingProxyType({
        g: MappingProxyType({k: Slice(None if c.get("value") is None else float(c["value"]), int(c.get("n", 0)))
                             for k, c in by_type_raw[g].items()})
        for g in order_groups(by_type_raw)
    })
    queries = MappingProxyType({q: QueryRecord(str(r.get("text", "")), r.get("type"))
                                for q, r in (data.get("queries") or {}).items()})
    known = set(_SECTIONS) | {"schema", "errors", "taxonomy", "passages", "cv", "threshold_sweep", "files"}
    provenance = data.get("provenance") or {}
    extra = freeze({k: v for k, v in data.items() if k not in known})
    empty = tuple(s for s in ("denominators",) if s in data and not data[s])
    return SavedResults(
        metrics=MappingProxyType(metrics),
        by_type=by_type,
        curves=freeze(data.get("curves") or {}),
        queries=queries,
        provenance=freeze(provenance),
        errors=ErrorsSection.read(data["errors"], where, "errors") if "errors" in data else None,
        taxonomy=TaxonomySection.read(data["taxonomy"], where, "taxonomy") if "taxonomy" in data else None,
        judged=_parse_judged(data["judged"]) if "judged" in data else None,
        passages=PassagesSection.read(data["passages"], where, "passages") if "passages" in data else None,
        cv=CvSection.read(data["cv"], where, "cv") if "cv" in data else None,
        cv_provenance=CvProvenance.read(provenance["cv"], where, "provenance.cv") if "cv" in provenance else None,
        threshold_sweep=(ThresholdSweepSection.read(data["threshold_sweep"], where, "threshold_sweep")
                         if "threshold_sweep" in data else None),
        files=_parse_files(data.get("files"), where),
        extra=extra,
        migrations=tuple(migrations),
        source=source,
        origin=origin,
        _empty_sections=empty,
    )


_SLACK = 1e-9  # float rounding of a value on its range's edge


@functools.lru_cache(maxsize=4096)
def value_range(key: str) -> tuple[float, float] | None:
    """The range of a saved metric key's values (:func:`finegrain.metrics.spec.metric_range`); None for a key
    that is not a finegrain metric (nothing to check)."""
    try:
        return metric_range(parse_metric(key).name)
    except (FinegrainError, KeyError):
        return None


def _check_ranges(data: Mapping[str, Any], where: str | Path, hint: str, *, percent: bool) -> None:
    """Every saved value of a bounded metric lies in its range (aggregate, per query, per type, curves)."""
    def check(key: str, value: Any, place: str) -> None:
        bounds = value_range(key)
        if bounds is None or value is None:
            return
        low, high = bounds
        if not low - _SLACK <= float(value) <= high + _SLACK:
            shown = "a number in [0, 1]" if high == 1.0 else f"a number >= {low:g}"
            fix = ("MTEB scores are fractions; a score of 83.6 is a percentage: divide by 100"
                   if percent and high == 1.0 else hint)
            raise DataFormatError(where, None, f"{place} to be {shown} (the range of {key})", _first_bad(value), fix)

    for key, v in (data.get("aggregate") or {}).items():
        check(key, v, f"aggregate.{key}")
    for key, values in (data.get("per_query") or {}).items():
        bounds = value_range(key)
        defined = [v for v in values.values() if v is not None]
        if bounds is None or not defined or bounds[0] - _SLACK <= min(defined) <= max(defined) <= bounds[1] + _SLACK:
            continue  # one pass over the values; the loop below only names the first one out of range
        for q, v in values.items():
            check(key, v, f"per_query.{key}.{q}")
    for group, row in (data.get("by_type") or {}).items():
        for key, cell in row.items():
            check(key, cell.get("value"), f"by_type.{group}.{key}.value")
    for family, curve in (data.get("curves") or {}).items():
        for k, v in curve.items():
            check(f"{family}@{k}", v, f"curves.{family}.{k}")


def _parse_files(v: Any, where: str | Path) -> Mapping[str, Companion]:
    if v is None:
        return EMPTY
    if not isinstance(v, Mapping):
        raise DataFormatError(where, None, "section 'files' as {file name: {size, sha256}}", _first_bad(v))
    return MappingProxyType({str(name): Companion.read(rec, where, f"files.{name}") for name, rec in v.items()})


def _parse_judged(v: Mapping[str, Any]) -> Judged:
    return Judged(k=int(v["k"]), rel=int(v.get("rel", 1)), fully_judged=bool(v.get("fully_judged", False)),
                  grades=MappingProxyType({q: MappingProxyType({d: int(g) for d, g in gs.items()})
                                           for q, gs in v["grades"].items()}),
                  n_relevant=MappingProxyType({q: int(n) for q, n in (v.get("n_relevant") or {}).items()}))


__all__ = [
    "AGGREGATIONS", "Aggregation", "Judged", "MetricRecord", "QueryRecord", "RESULTS_FILE", "SCHEMA", "SavedResults", "Slice",
    "UNTYPED", "freeze", "infer_aggregation", "thaw",
]


def from_mteb_json(data: Mapping[str, Any], *, source: str | Path, split: str | None = None,
                   hf_subset: str | None = None) -> SavedResults:
    """Aggregate-only :class:`SavedResults` from an MTEB result JSON (one split and subset: ``test`` /
    ``default`` when there are several, else an error naming them)."""
    body = mteb_body(data, source=source, split=split, hf_subset=hf_subset)
    return _parse(body, Path(source), str(source), aggregate_only=True, origin="mteb")


def is_transductive(results: Any) -> bool:
    """Whether results (the results.json dict or a SavedResults) came from a model trained on the evaluated
    dataset's passages."""
    prov = results.get("provenance") if isinstance(results, Mapping) else getattr(results, "provenance", None)
    return bool(isinstance(prov, Mapping) and prov.get("transductive"))
