"""The relabelling delta: how every metric and every system's rank move when the qrels change.

DuReader-retrieval (Qiu et al., 2022, Sec. 2.3 and 3.4, Fig. 2) relabels the
false negatives of its development set and shows the same systems scored
before and after: every metric rises, by different amounts per system. This
module computes that comparison for any two versions of the qrels (say, before
and after judging a triage pool, :mod:`finegrain.build.triage`):

* per metric and system: the aggregate under the old and the new qrels, the
  delta (new - old), and the system's rank under each (1 = best; equal
  values share the better rank, "1224"; lower is better for ``median_rank``
  and ``fail_rate``);
* per metric: Kendall's tau-b (:func:`scipy.stats.kendalltau`) between the
  systems' values under the two qrels, over the systems with a value under
  both (None for fewer than two, or when one side is all ties), i.e. how
  much of the system ordering survives the relabelling;
* the denominators: both evaluations use one universe of queries (the
  queries of either qrels), but a query enters a ranking metric only when it has a
  relevant item, so a relabelling that finds the first relevant item of a
  query adds it to the mean; ``n_old`` / ``n_new`` say how many were scored;
* what changed in the qrels (:class:`QrelsChange`).

Checks (each a :class:`~finegrain.errors.FinegrainError` naming the value):
the new qrels judge only queries of the old qrels or of the runs ("qrels
for other queries"; a query may be new to the qrels: a TREC file has no line
for a query without judgments, so its first relevant item comes with the
new ones),
their grades are on the old scale (the old qrels' grades and 0, or ``grades=``),
the runs retrieve for some query of the qrels, and run names are unique.
Every number is recomputed from the runs with :func:`~finegrain.evaluate.evaluate.evaluate`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from finegrain.compare.systems import load_labelled
from finegrain.errors import FinegrainError
from finegrain.evaluate.evaluate import evaluate
from finegrain.metrics.spec import MetricSpec, parse_metric
from finegrain.results.files import read_saved_run
from finegrain.types import Qrels, Run

if TYPE_CHECKING:
    from finegrain.compare.systems import LabelledResults

SCHEMA = "finegrain.relabel/1"
#: Metrics whose smaller value is the better system.
LOWER_IS_BETTER = frozenset({"median_rank", "fail_rate"})


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class SystemDelta:
    """One system on one metric under the old and the new qrels."""

    system: str
    metric: str
    old: float | None
    new: float | None
    rank_old: int | None  # 1 = best; None when the value is undefined
    rank_new: int | None
    n_old: int  # queries the metric scored under the old qrels
    n_new: int

    @property
    def delta(self) -> float | None:
        return None if self.old is None or self.new is None else self.new - self.old

    @property
    def rank_change(self) -> int | None:
        """Positions gained (positive: moved up) from the old ranking to the new."""
        return None if self.rank_old is None or self.rank_new is None else self.rank_old - self.rank_new

    def to_dict(self) -> dict[str, Any]:
        return {"old": _num(self.old), "new": _num(self.new), "delta": _num(self.delta), "rank_old": self.rank_old,
                "rank_new": self.rank_new, "n_old": self.n_old, "n_new": self.n_new}


@dataclass(frozen=True)
class MetricDelta:
    """All systems on one metric, with Kendall's tau between the two orderings."""

    metric: str
    rows: tuple[SystemDelta, ...]  # in the order the runs were given
    kendall_tau: float | None
    kendall_p: float | None
    lower_is_better: bool

    def row(self, system: str) -> SystemDelta:
        for r in self.rows:
            if r.system == system:
                return r
        raise KeyError(system)

    def order(self, which: str = "new") -> tuple[str, ...]:
        """System names best first under the ``"old"`` or ``"new"`` qrels (ties: the given order)."""
        ranks = [(r.rank_old if which == "old" else r.rank_new, i, r.system) for i, r in enumerate(self.rows)]
        return tuple(name for rank, _, name in sorted((x for x in ranks if x[0] is not None),
                                                      key=lambda x: (x[0] or 0, x[1])))


@dataclass(frozen=True)
class QrelsChange:
    """What differs between the two qrels (pairs are (query, document); relevant = grade >= ``rel``)."""

    rel: int
    n_queries: int  # the universe: queries of either qrels
    n_old_judgements: int
    n_new_judgements: int
    newly_judged: int  # pairs judged in the new qrels only
    unjudged: int  # pairs judged in the old qrels only
    regraded: int  # pairs judged in both with another grade
    became_relevant: int
    became_irrelevant: int
    queries_changed: int

    def to_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True, eq=False)
class RelabelDelta:
    """Metrics and system ranks under old and new qrels (see the module docstring)."""

    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    by_metric: Mapping[str, MetricDelta]
    change: QrelsChange
    old_label: str = "old"
    new_label: str = "new"

    def __getitem__(self, metric: str) -> MetricDelta:
        return self.by_metric[parse_metric(metric).key]

    def row(self, system: str, metric: str) -> SystemDelta:
        return self[metric].row(system)

    def to_json_dict(self) -> dict[str, Any]:
        """A JSON-able dict (schema ``finegrain.relabel/1``); non-finite numbers become None."""
        return {
            "schema": SCHEMA,
            "qrels": {"old": self.old_label, "new": self.new_label},
            "systems": list(self.systems),
            "metrics": list(self.metrics),
            "change": self.change.to_dict(),
            "by_metric": {
                m: {"kendall_tau": _num(d.kendall_tau), "kendall_p": _num(d.kendall_p),
                    "lower_is_better": d.lower_is_better,
                    "order_old": list(d.order("old")), "order_new": list(d.order("new")),
                    "systems": {r.system: r.to_dict() for r in d.rows}}
                for m, d in self.by_metric.items()
            },
            "method": {
                "delta": "new - old, each an aggregate recomputed from the runs (finegrain.evaluate.evaluate)",
                "rank": "1 = best; equal values share the better rank; lower is better for "
                        + ", ".join(sorted(LOWER_IS_BETTER)),
                "kendall_tau": "scipy.stats.kendalltau (tau-b) between the systems' values under the two qrels",
                "universe": "the queries of either qrels, under both; a ranking metric scores only queries with a "
                            "relevant item, so n_old and n_new may differ",
            },
        }


# --------------------------------------------------------------------------- computing


def relabel_delta(
    runs: Sequence[Run] | Mapping[str, Run],
    old_qrels: Qrels,
    new_qrels: Qrels,
    metrics: str | MetricSpec | Iterable[str | MetricSpec],
    *,
    grades: Iterable[int] | None = None,
    old_label: str = "old",
    new_label: str = "new",
) -> RelabelDelta:
    """Evaluate every run under ``old_qrels`` and ``new_qrels`` and compare (see the module docstring).

    ``runs``: :class:`~finegrain.types.Run` objects (named by ``run.name``) or
    a ``{name: run}`` mapping. ``grades``: the grades the new qrels may use
    (default: the old qrels' grades and 0). ``old_label`` / ``new_label`` name
    the two qrels in the JSON (file names, say).
    """
    named = named_runs(runs, "compare")
    for which, q in (("old", old_qrels), ("new", new_qrels)):
        if not isinstance(q, Qrels):
            raise FinegrainError(f"the {which} qrels must be a finegrain Qrels, got {type(q).__name__}",
                                 "read them with finegrain.evaluate.files.read_qrels_file or build Qrels.from_dict")
    items = [metrics] if isinstance(metrics, str | MetricSpec) else list(metrics)
    specs = list(dict.fromkeys(s if isinstance(s, MetricSpec) else parse_metric(s) for s in items))
    if not specs:
        raise FinegrainError("no metric to compare", "give at least one metric, e.g. ndcg@10")
    _check_qrels(old_qrels, new_qrels, grades, named)
    universe = list(dict.fromkeys([*old_qrels, *new_qrels]))
    if not any(q in run for run in named.values() for q in universe):
        example = next(iter(next(iter(named.values()))), None)
        raise FinegrainError(
            f"the runs retrieve for none of the {len(universe)} queries of the qrels (a run query: {example!r})",
            "give the qrels of the dataset the runs were made on")

    values: dict[str, dict[str, tuple[float | None, int, float | None, int]]] = {}
    for name, run in named.items():
        old_ev = evaluate(old_qrels, run, specs, queries=universe, warn=False)
        new_ev = evaluate(new_qrels, run, specs, queries=universe, warn=False)
        values[name] = {}
        for s in specs:
            o, n = old_ev[s.key], new_ev[s.key]
            values[name][s.key] = (o.value, o.denominators.n_scored, n.value, n.denominators.n_scored)

    by_metric: dict[str, MetricDelta] = {}
    for s in specs:
        lower = s.name in LOWER_IS_BETTER
        old = {name: values[name][s.key][0] for name in named}
        new = {name: values[name][s.key][2] for name in named}
        r_old, r_new = _ranks(old, lower), _ranks(new, lower)
        rows = tuple(SystemDelta(name, s.key, old[name], new[name], r_old[name], r_new[name],
                                 values[name][s.key][1], values[name][s.key][3]) for name in named)
        tau, p = kendall_tau([old[n] for n in named], [new[n] for n in named])
        by_metric[s.key] = MetricDelta(s.key, rows, tau, p, lower)
    return RelabelDelta(tuple(named), tuple(s.key for s in specs), MappingProxyType(by_metric),
                        qrels_change(old_qrels, new_qrels, rel=min(s.rel for s in specs)), old_label, new_label)


def kendall_tau(a: Sequence[float | None], b: Sequence[float | None]) -> tuple[float | None, float | None]:
    """Kendall's tau-b and its p-value between paired values, over pairs with both defined (None when undefined)."""
    from scipy.stats import kendalltau

    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    if len(pairs) < 2:
        return None, None
    res = kendalltau([x for x, _ in pairs], [y for _, y in pairs])
    tau, p = float(res.statistic), float(res.pvalue)
    return (None if math.isnan(tau) else tau), (None if math.isnan(p) else p)


def qrels_change(old: Qrels, new: Qrels, *, rel: int = 1) -> QrelsChange:
    """Counts of what differs between two qrels (see :class:`QrelsChange`)."""
    newly = unjudged = regraded = up = down = 0
    changed = 0
    for qid in dict.fromkeys([*old, *new]):
        o = old[qid] if qid in old else {}
        n = new[qid] if qid in new else {}
        before = (newly, unjudged, regraded)
        for d in o.keys() | n.keys():
            go, gn = o.get(d), n.get(d)
            if go is None:
                newly += 1
            elif gn is None:
                unjudged += 1
            elif go != gn:
                regraded += 1
            was, now = go is not None and go >= rel, gn is not None and gn >= rel
            up += int(now and not was)
            down += int(was and not now)
        changed += int((newly, unjudged, regraded) != before)
    return QrelsChange(rel, len(dict.fromkeys([*old, *new])), old.n_entries, new.n_entries, newly, unjudged, regraded, up, down, changed)


def hide_relevant(qrels: Qrels, fraction: float, *, seed: int, rel: int = 1) -> tuple[Qrels, frozenset[tuple[str, str]]]:
    """Simulated false negatives: ``qrels`` without a seeded ``fraction`` of its (query, document) pairs of grade
    >= ``rel`` (removed, i.e. unjudged), and the hidden pairs. Every query stays, with an empty entry when all of
    its judgments went. ``round(fraction * n)`` pairs are drawn without replacement (numpy ``default_rng(seed)``)."""

    if isinstance(fraction, bool) or not isinstance(fraction, int | float) or not 0.0 <= fraction <= 1.0:
        raise FinegrainError(f"the hidden fraction must be in [0, 1], got {fraction!r}", "e.g. 0.3 hides 30%")
    pairs = [(q, d) for q in qrels for d, g in qrels[q].items() if g >= rel]
    rng = np.random.default_rng(seed)
    picked: list[int] = rng.choice(len(pairs), size=round(fraction * len(pairs)), replace=False).tolist() if pairs else []
    hidden = frozenset(pairs[i] for i in picked)
    kept = {q: {d: int(g) for d, g in qrels[q].items() if (q, d) not in hidden} for q in qrels}
    return Qrels.from_dict(kept), hidden


# --------------------------------------------------------------------------- checks and helpers


def named_runs(runs: Sequence[Run] | Mapping[str, Run], purpose: str) -> dict[str, Run]:
    """``{name: run}`` of a list of runs (by their names) or of a mapping (renamed to its keys);
    an empty input, a non-Run or two runs of one name is an error naming it (``purpose``: "compare")."""
    if isinstance(runs, Run):
        raise FinegrainError("runs must be a list of runs or a {name: run} mapping, got one Run", "pass [run]")
    pairs = list(runs.items()) if isinstance(runs, Mapping) else [(getattr(r, "name", ""), r) for r in runs]
    if not pairs:
        raise FinegrainError(f"no run to {purpose}", "give one or more runs (the folders of 'finegrain eval')")
    out: dict[str, Run] = {}
    for name, run in pairs:
        if not isinstance(run, Run):
            raise FinegrainError(f"run {name!r} is a {type(run).__name__}, not a finegrain Run",
                                 "read runs with finegrain.experiment.run.read_saved_run")
        if name in out:
            raise FinegrainError(f"two runs are named {name!r}", "give runs distinct names ({name: run})")
        out[str(name)] = run.renamed(str(name))
    return out


def _check_qrels(old: Qrels, new: Qrels, grades: Iterable[int] | None, runs: Mapping[str, Run]) -> None:
    other = [q for q in new if q not in old and not any(q in run for run in runs.values())]
    if other:
        raise FinegrainError(
            f"the new qrels judge {len(other)} quer{'y' if len(other) == 1 else 'ies'} that neither the old qrels "
            f"nor any run has (e.g. {other[0]!r})",
            "relabel the same queries: give the new qrels of the same dataset (a relabelled copy of the old)")
    allowed = {int(g) for g in grades} if grades is not None else {int(g) for g in old.values.tolist()} | {0}
    if new.n_entries:
        bad = [i for i, g in enumerate(new.values.tolist()) if int(g) not in allowed]
        if bad:
            i = bad[0]
            qid = new.qids[int(new.segments[i])]
            doc = new.vocab[int(new.doc_codes[i])]
            raise FinegrainError(
                f"unknown grade {int(new.values[i])} in the new qrels (query {qid!r}, document {doc!r}); the old "
                f"qrels use {', '.join(str(g) for g in sorted(allowed))}",
                "judge on the old qrels' scale, or pass grades=[...] to allow others")


def _ranks(values: Mapping[str, float | None], lower_is_better: bool) -> dict[str, int | None]:
    """1 = best; equal values share the better rank; None for an undefined value."""
    defined = [v for v in values.values() if v is not None]
    out: dict[str, int | None] = {}
    for name, v in values.items():
        if v is None:
            out[name] = None
        else:
            out[name] = 1 + sum(1 for x in defined if (x < v if lower_is_better else x > v))
    return out


def _num(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


# --------------------------------------------------------------------------- results folders and text


def saved_runs(folders: Sequence[str | Path]) -> tuple[dict[str, Run], list[LabelledResults]]:
    """The runs of results folders written by ``finegrain eval`` (``run.trec`` / ``run.jsonl``), named as
    ``finegrain compare`` names the systems (the retriever, made unique with the folder), with their results.

    A query the folder's results.json lists but the run file lacks gets an empty entry
    (:func:`~finegrain.experiment.run.read_saved_run`), so every run has the queries it was asked."""

    systems = load_labelled(folders)
    runs: dict[str, Run] = {}
    for s in systems:
        run = read_saved_run(s.path or "", s.results)
        if not isinstance(run, Run):
            raise FinegrainError(f"the saved run of {s.path!r} could not be read", "re-run 'finegrain eval --out DIR'")
        runs[s.label] = run.renamed(s.label)
    return runs, systems


def format_relabel(delta: RelabelDelta) -> str:
    """The relabelling delta as plain text: per metric, each system's old, new, delta (x100) and rank change."""
    c = delta.change
    lines = [f"qrels {delta.old_label} -> {delta.new_label}: {c.n_queries} queries; {c.newly_judged} newly judged, "
             f"{c.unjudged} unjudged, {c.regraded} regraded; {c.became_relevant} became relevant, "
             f"{c.became_irrelevant} irrelevant (grade >= {c.rel}); {c.queries_changed} queries changed"]
    width = max([len("system"), *(len(s) for s in delta.systems)])
    for m in delta.metrics:
        d = delta.by_metric[m]
        n_old = {r.n_old for r in d.rows}
        n_new = {r.n_new for r in d.rows}
        scored = f"{'/'.join(map(str, sorted(n_old)))} -> {'/'.join(map(str, sorted(n_new)))}"
        tau = "—" if d.kendall_tau is None else f"{d.kendall_tau:+.3f}"
        lines.append("")
        lines.append(f"{m}   Kendall's tau old vs new: {tau}   queries scored: {scored}"
                     + ("   (lower is better)" if d.lower_is_better else ""))
        lines.append(f"  {'system'.ljust(width)}  {'old':>8}  {'new':>8}  {'delta':>8}  rank")
        for r in d.rows:
            rank = f"{_rank(r.rank_old)} -> {_rank(r.rank_new)}"
            if r.rank_change:
                rank += f" ({r.rank_change:+d})"
            lines.append(f"  {r.system.ljust(width)}  {_x100(r.old, m):>8}  {_x100(r.new, m):>8}  "
                         f"{_x100(r.delta, m, sign=True):>8}  {rank}")
    return "\n".join(lines)


def _rank(r: int | None) -> str:
    return "—" if r is None else str(r)


def _x100(v: float | None, metric: str, *, sign: bool = False) -> str:
    if v is None or not math.isfinite(v):
        return "—"
    if parse_metric(metric).name == "median_rank":
        return f"{v:+g}" if sign else f"{v:g}"
    return f"{v * 100:+.2f}" if sign else f"{v * 100:.2f}"
