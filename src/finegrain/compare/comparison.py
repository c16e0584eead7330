"""Several saved results side by side on the same queries, with intervals and paired tests.

:func:`compare` builds a frozen :class:`Comparison` from saved results
(:class:`~finegrain.results.saved.SavedResults`; also accepted: in-memory
:class:`~finegrain.evaluate.result.Evaluation` objects, results folders or
files, and dicts in the ``results.json`` layout); :func:`load_comparison`
reads folders first. Everything is computed from the saved per-query values;
no metric is recomputed.

What is checked
    All results must come from the same dataset
    (``provenance.dataset.name``) and, per metric, have values for the same
    queries (the queries with a defined value). A mismatch is an error naming
    the folders and how many queries differ. A metric is compared only when
    its saved aggregate is the mean of its per-query values (``ndcg``,
    ``recall``, ...); a median (``median_rank``) or a ratio of sums
    (``reject_*``, ``pair_*``) is not what a paired test on per-query means
    tests, so such metrics are skipped (listed in ``skipped``), or refused when
    asked for by name.

What is computed, per metric
    - per system: the mean and its bootstrap confidence interval
      (:func:`~finegrain.compare.stats.bootstrap_ci`);
    - per system other than the baseline, on the paired per-query values:
      the mean difference (system - baseline) and its bootstrap interval,
      the paired t-test and Fisher's randomization test (two-sided), each
      Holm-adjusted across the non-baseline systems (one family per metric),
      ``significant`` = the Holm-adjusted randomization p < ``alpha``
      (``significant_t`` the same for the t-test), and win/tie/loss counts
      (``|diff| <= tol`` is a tie);
    - the same per query type (the types of ``results["queries"]``; a query
      without one is ``"untyped"``): win/tie/loss, the two means, and the
      randomization test within the type, Holm-adjusted across the types of
      that system and metric (one family per system and metric);
      ``significant`` = that adjusted p < ``alpha``;
    - the same per roll-up group when the query types have one
      (:mod:`finegrain.compare.rollup`: CapRetrieval's Table 3, Singleton
      Entity = object + person + place + concept), Holm-adjusted across the groups.

Every resampling uses the same ``seed`` (common random numbers), so the
numbers are reproducible and independent of the order of systems.

As ranx's ``compare(qrels, runs, metrics, max_p=...)``
    ``compare(qrels, runs=[...], metrics=[...])`` (or ``qrels=`` by name)
    evaluates each run on the qrels (:func:`finegrain.evaluate.evaluate`),
    then compares the evaluations; ``max_p`` is ``alpha``.

Views
    A :class:`Comparison` prints as a table (``str``: the long-form table
    ``finegrain compare`` prints first; ``repr``: one row per system) and
    renders to a rich table, Markdown, LaTeX and a pandas DataFrame
    (:mod:`finegrain.compare.table`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from finegrain.compare import table as _table
from finegrain.compare.rollup import Rollup, rollup_of
from finegrain.compare.stats import (
    CI_METHODS,
    CIMethod,
    Interval,
    WinTieLoss,
    bootstrap_ci,
    finite,
    holm,
    paired_t_test,
    randomization_test,
    win_tie_loss,
)
from finegrain.compare.systems import labelled, resolve_baseline
from finegrain.errors import FinegrainError
from finegrain.evaluate.evaluate import evaluate, warn_excluded
from finegrain.evaluate.groups import group_of, order_groups
from finegrain.interop.coerce import QrelsLike, RunLike, as_qrels
from finegrain.metrics.spec import parse_metric
from finegrain.results.saved import SavedResults

if TYPE_CHECKING:
    from rich.table import Table

SCHEMA = "finegrain.comparison/1"


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class ComparedSystem:
    """One compared system in a :class:`Comparison`: its display name (unique), folder (or ``#i``) and retriever."""

    name: str
    folder: str
    retriever: str | None


@dataclass(frozen=True)
class Summary:
    """One system on one metric: mean of the per-query values and its bootstrap interval."""

    mean: float
    ci: Interval
    n: int


@dataclass(frozen=True)
class SliceTest:
    """A system against the baseline on one query type."""

    slice: str
    n: int
    mean: float | None
    baseline_mean: float | None
    mean_diff: float | None
    wtl: WinTieLoss
    p_rand: float | None
    p_rand_holm: float | None
    significant: bool


@dataclass(frozen=True)
class PairedTest:
    """A system against the baseline on one metric, over all compared queries and per type."""

    system: str
    baseline: str
    metric: str
    n: int
    mean_diff: float
    diff_ci: Interval
    t_statistic: float | None
    p_t: float | None
    p_t_holm: float | None
    p_rand: float | None
    p_rand_holm: float | None
    significant: bool
    significant_t: bool
    wtl: WinTieLoss
    by_type: tuple[SliceTest, ...]
    by_rollup: tuple[SliceTest, ...] = ()  # the same per roll-up group (CapRetrieval Table 3), when one applies


@dataclass(frozen=True)
class CompareSettings:
    alpha: float = 0.05
    confidence: float = 0.95
    n_resamples: int = 10000
    seed: int = 0
    ci_method: CIMethod = "percentile"
    tol: float = 1e-9


@dataclass(frozen=True, eq=False)
class Comparison:
    """Systems compared on one dataset: summaries and paired tests per metric (see the module docstring).

    ``summaries[metric][system]`` is a :class:`Summary`; ``tests[metric][system]``
    a :class:`PairedTest` for every system but the baseline; ``types`` the
    query types in display order with their number of queries (in the
    baseline's ``queries``); ``skipped`` maps a metric left out to the reason.
    """

    dataset: str | None
    systems: tuple[ComparedSystem, ...]
    baseline: str
    metrics: tuple[str, ...]
    n_queries: Mapping[str, int]
    types: tuple[tuple[str, int], ...]
    summaries: Mapping[str, Mapping[str, Summary]]
    tests: Mapping[str, Mapping[str, PairedTest]]
    skipped: Mapping[str, str]
    settings: CompareSettings
    notes: tuple[str, ...] = ()
    rollup: Rollup | None = None  # the roll-up of the query types (CapRetrieval Table 3), when one applies

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.systems)

    # -- views (rendered by finegrain.compare.table) ------------------------------------------

    def __str__(self) -> str:
        """The table ``finegrain compare`` prints first (mean [CI], difference, p per system and metric)."""
        return _table.comparison_text(self)

    def __repr__(self) -> str:
        """One row per system, one column per metric (x100, significance marks), then the queries compared."""
        return _table.comparison_repr(self)

    def _repr_html_(self) -> str:
        return _table.comparison_html(self)

    def to_table(self) -> Table:
        """The long-form table as a rich :class:`~rich.table.Table` (print it with a rich console)."""
        return _table.headline_table(self)

    def to_markdown(self) -> str:
        """A Markdown table, one row per system (means x100 with significance marks)."""
        return _table.to_markdown(self)

    def to_latex(self) -> str:
        """A LaTeX ``tabular`` with booktabs rules, one row per system."""
        return _table.to_latex(self)

    def to_dataframe(self) -> Any:
        """A pandas DataFrame, one row per system and metric: ``system, metric, mean, ci_low, ci_high, diff, p,
        significant`` (raw values; see :func:`finegrain.compare.table.to_dataframe`)."""
        return _table.to_dataframe(self)

    def to_json_dict(self) -> dict[str, Any]:
        """A JSON-able dict (schema ``finegrain.comparison/1``); non-finite numbers become None."""
        s = self.settings
        return {
            "schema": SCHEMA,
            "dataset": self.dataset,
            "baseline": self.baseline,
            "systems": [{"name": x.name, "folder": x.folder, "retriever": x.retriever,
                         "is_baseline": x.name == self.baseline} for x in self.systems],
            "metrics": list(self.metrics),
            "skipped_metrics": dict(self.skipped),
            "n_queries": dict(self.n_queries),
            "queries_per_type": {t: n for t, n in self.types},
            "settings": {
                "alpha": s.alpha, "confidence": s.confidence, "n_resamples": s.n_resamples, "seed": s.seed,
                "ci_method": s.ci_method, "tie_tolerance": s.tol,
                "tests": "paired t-test (scipy.stats.ttest_rel) and Fisher randomization test (sign flips), two-sided",
                "correction": "Holm across the non-baseline systems per metric; per type: Holm across the types "
                              "of one system and metric",
                "significant": "Holm-adjusted randomization p < alpha",
            },
            "summary": {
                m: {name: {"mean": finite(x.mean), "ci": [finite(x.ci.low), finite(x.ci.high)], "n": x.n}
                    for name, x in row.items()}
                for m, row in self.summaries.items()
            },
            "tests": {m: {name: _test_json(t) for name, t in row.items()} for m, row in self.tests.items()},
            **({"notes": list(self.notes)} if self.notes else {}),
            **({"rollup": {"name": self.rollup.name, "source": self.rollup.source, "groups": dict(self.rollup.groups)}}
               if self.rollup is not None else {}),
        }


def _test_json(t: PairedTest) -> dict[str, Any]:
    return {
        "n": t.n,
        "mean_diff": finite(t.mean_diff),
        "diff_ci": [finite(t.diff_ci.low), finite(t.diff_ci.high)],
        "t_statistic": finite(t.t_statistic),
        "p_t": finite(t.p_t),
        "p_t_holm": finite(t.p_t_holm),
        "p_rand": finite(t.p_rand),
        "p_rand_holm": finite(t.p_rand_holm),
        "significant": t.significant,
        "significant_t": t.significant_t,
        **t.wtl.to_dict(),
        "by_type": {
            s.slice: {"n": s.n, "mean": finite(s.mean), "baseline_mean": finite(s.baseline_mean),
                      "mean_diff": finite(s.mean_diff), **s.wtl.to_dict(),
                      "p_rand": finite(s.p_rand), "p_rand_holm": finite(s.p_rand_holm), "significant": s.significant}
            for s in t.by_type
        },
        **({"by_rollup": {
            s.slice: {"n": s.n, "mean": finite(s.mean), "baseline_mean": finite(s.baseline_mean),
                      "mean_diff": finite(s.mean_diff), **s.wtl.to_dict(),
                      "p_rand": finite(s.p_rand), "p_rand_holm": finite(s.p_rand_holm), "significant": s.significant}
            for s in t.by_rollup}} if t.by_rollup else {}),
    }


# --------------------------------------------------------------------------- building


def load_comparison(
    folders: Sequence[str | Path],
    *,
    baseline: str | Path | int = 0,
    **options: Any,
) -> Comparison:
    """Read results folders (or ``results.json`` / MTEB result JSON files) and :func:`compare` them.

    ``baseline`` is an index into ``folders`` (0 = the first), a system name, or a
    folder; a folder not among ``folders`` is added in front of them.
    """
    paths = [Path(f) for f in folders]
    if isinstance(baseline, (str, Path)) and not str(baseline).strip().isdigit():
        b = Path(baseline)
        if b.resolve() not in [p.resolve() for p in paths] and b.exists():
            paths.insert(0, b)
            baseline = 0
    results = [SavedResults.load(p) for p in paths]
    return compare(results, folders=[str(p) for p in paths], baseline=baseline, **options)


def compare(
    results: Sequence[Any] | QrelsLike = None,
    runs: Sequence[RunLike] | None = None,
    metrics: str | Sequence[str] | None = None,
    *,
    qrels: QrelsLike = None,
    folders: Sequence[str] | None = None,
    baseline: int | str | Path = 0,
    alpha: float = 0.05,
    max_p: float | None = None,
    confidence: float = 0.95,
    n_resamples: int = 10000,
    seed: int = 0,
    ci_method: CIMethod = "percentile",
    tol: float = 1e-9,
    warn: bool = True,
) -> Comparison:
    """Compare systems on the same queries: bootstrap intervals, paired tests with Holm's correction,
    win/tie/loss per query type.

    Two calls: ``compare([ev1, ev2])`` compares results already computed, and
    ``compare(qrels, runs=[run1, run2], metrics=["ndcg@10"])`` (ranx's call) evaluates each run on
    ``qrels`` first.

    Args:
        results: The results to compare, at least two: ``SavedResults``, in-memory ``Evaluation`` objects,
            results folders or files (``results.json`` or an MTEB result file), or dicts in the
            ``results.json`` layout, in any mix. With ``runs``, the qrels instead.
        runs: Runs to evaluate on ``qrels`` (anything ``finegrain.interop.as_run`` reads).
        metrics: Metric keys to compare (default: every metric all results share whose aggregation is
            the mean); with ``runs``, the metrics to evaluate.
        qrels: The qrels, by name, for ``runs``.
        folders: Labels of the results in messages and names (default: the folder given, else ``#0``,
            ``#1``, ...).
        baseline: The system the others are tested against: an index into ``results``, a system name or
            a folder.
        alpha: The significance level of the tests (after Holm's correction).
        max_p: ranx's name for ``alpha``.
        confidence: The level of the bootstrap intervals.
        n_resamples: Bootstrap resamples (and randomization-test permutations).
        seed: The seed of the resampling, so that the same inputs give the same intervals.
        ci_method: The bootstrap interval: ``"percentile"``, ``"basic"`` or ``"bca"``.
        tol: Per-query differences within ``tol`` count as ties.
        warn: As ``finegrain.evaluate``'s, one warning for all runs.

    Returns:
        A ``Comparison``: ``print(comparison)`` shows the table ``finegrain compare`` prints;
        ``to_table()``, ``to_markdown()``, ``to_latex()``, ``to_json_dict()`` and ``to_dataframe()`` give other views.

    Raises:
        FinegrainError: Fewer than two results, results on different queries or datasets, an unknown
            baseline or metric, or ``alpha`` and ``max_p`` that disagree.

    Examples:
        >>> from finegrain import compare, evaluate
        >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
        >>> a = evaluate(qrels, {"q1": {"d1": 1.0}, "q2": {"d9": 1.0}, "q3": {"d9": 1.0}}, "ndcg@10")
        >>> b = evaluate(qrels, {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}, "q3": {"d3": 1.0}}, "ndcg@10")
        >>> comparison = compare([a, b], n_resamples=1000)
        >>> print(comparison)  # doctest: +ELLIPSIS
        results · x100, 95% bootstrap CI · baseline run (#0)
        ...
    """

    if max_p is not None:
        if alpha != 0.05 and alpha != max_p:
            raise FinegrainError(f"alpha={alpha!r} and max_p={max_p!r} disagree",
                                 "give one of them: max_p is ranx's name for alpha")
        alpha = max_p
    if isinstance(metrics, str):
        metrics = [metrics]
    if runs is not None or qrels is not None:
        results = _evaluate_runs(results, qrels, runs, metrics, warn)
    if isinstance(results, str | bytes) or not isinstance(results, Sequence):
        raise FinegrainError(f"results is a {type(results).__name__}, not a list of results",
                             "pass a list, compare([ev1, ev2]), or qrels and runs: compare(qrels, runs=[...], "
                             "metrics=[...])")
    if len(results) < 2:
        raise FinegrainError(f"need at least 2 results to compare, got {len(results)}",
                             "pass two or more folders written by 'finegrain eval'")
    if not 0.0 < alpha < 1.0:
        raise FinegrainError(f"alpha must be in (0, 1), got {alpha!r}", "e.g. --alpha 0.05")
    if ci_method not in CI_METHODS:
        raise FinegrainError(f"unknown interval method {ci_method!r}", f"use one of {', '.join(CI_METHODS)}")
    if n_resamples < 1:
        raise FinegrainError(f"resamples must be >= 1, got {n_resamples!r}", "e.g. --resamples 10000")
    settings = CompareSettings(alpha, confidence, n_resamples, seed, ci_method, tol)

    systems = labelled(results, folders)
    saved = [s.results for s in systems]
    labels = [s.path or s.label for s in systems]
    names = [s.label for s in systems]
    base = resolve_baseline(baseline, names, labels)
    dataset = _check_dataset(saved, labels)
    keys, skipped = _metrics(saved, labels, metrics)
    qtypes = saved[base].query_groups()

    rollup = rollup_of(qtypes.values())  # CapRetrieval's Table 3 groups when the types are its eight

    summaries: dict[str, Mapping[str, Summary]] = {}
    tests: dict[str, Mapping[str, PairedTest]] = {}
    n_queries: dict[str, int] = {}
    notes: list[str] = []
    aggregate_only = [lab for lab, r in zip(labels, saved) if not r.has_per_query]
    if aggregate_only:
        notes.append(f"no per-query values in {', '.join(aggregate_only)} (e.g. an MTEB result JSON): aggregates "
                     "only, without confidence intervals or significance tests, which need per-query values")
    for key in keys:
        if aggregate_only:
            nan = float("nan")
            summaries[key] = MappingProxyType({
                names[i]: Summary(nan if r.metrics[key].value is None else float(r.metrics[key].value or 0.0),
                                  Interval(nan, nan), 0)
                for i, r in enumerate(saved)
            })
            tests[key] = MappingProxyType({})
            n_queries[key] = 0
            continue
        qids, matrix = _aligned(saved, labels, key, base)
        n_queries[key] = len(qids)
        summaries[key] = MappingProxyType({
            names[i]: Summary(float(matrix[i].mean()),
                              bootstrap_ci(matrix[i], n_resamples=n_resamples, confidence=confidence,
                                           seed=seed, method=ci_method), len(qids))
            for i in range(len(saved))
        })
        tests[key] = _tests(key, qids, matrix, names, base, qtypes, settings, rollup)
    order = order_groups(qtypes.values())
    counts = {t: 0 for t in order}
    for t in qtypes.values():
        counts[t] += 1
    return Comparison(
        dataset=dataset,
        systems=tuple(ComparedSystem(s.label, lab, r.retriever_name) for s, lab, r in zip(systems, labels, saved)),
        baseline=names[base],
        metrics=tuple(keys),
        n_queries=MappingProxyType(n_queries),
        types=tuple(counts.items()),
        summaries=MappingProxyType(summaries),
        tests=MappingProxyType(tests),
        skipped=MappingProxyType(skipped),
        settings=settings,
        notes=tuple(notes),
        rollup=rollup,
    )


def _evaluate_runs(first: Any, qrels: Any, runs: Sequence[Any] | None, metrics: Sequence[str] | None,
                   warn: bool) -> list[Any]:
    """ranx's call: the evaluations of ``runs`` on the qrels (given first or as ``qrels=``)."""
    if first is not None and qrels is not None:
        raise FinegrainError("qrels given twice (first and as qrels=)", "give them once: compare(qrels, runs=[...])")
    qrels = first if qrels is None else qrels
    if qrels is None or runs is None:
        raise FinegrainError("comparing runs needs qrels and runs", "call compare(qrels, runs=[run1, run2], "
                             "metrics=['ndcg@10'])")
    if not metrics:
        raise FinegrainError("comparing runs needs the metrics to evaluate them on",
                             "pass metrics=['ndcg@10', ...] (as ranx's compare takes them)")
    if isinstance(runs, str | bytes) or not isinstance(runs, Sequence):
        raise FinegrainError(f"runs is a {type(runs).__name__}, not a list of runs",
                             "pass a list: compare(qrels, runs=[run1, run2], metrics=[...])")
    judged = as_qrels(qrels)  # read once for every run
    evaluations = [evaluate(judged, r, list(metrics), warn=False) for r in runs]
    if warn and evaluations:
        warn_excluded(evaluations[0], stacklevel=3)  # the caller of compare; what is left out depends on qrels only
    return evaluations


def _tests(key: str, qids: tuple[str, ...], matrix: np.ndarray, names: list[str], base: int,
           qtypes: Mapping[str, str], st: CompareSettings, rollup: Any = None) -> Mapping[str, PairedTest]:
    others = [i for i in range(len(names)) if i != base]
    b = matrix[base]
    raw = []
    for i in others:
        a = matrix[i]
        t = paired_t_test(a, b)
        r = randomization_test(a, b, n_resamples=st.n_resamples, seed=st.seed)
        raw.append((t, r))
    p_t_holm = holm([t.p_value for t, _ in raw])
    p_r_holm = holm([r.p_value for _, r in raw])
    labels = np.asarray([qtypes.get(q, group_of(None)) for q in qids], dtype=object)
    order = order_groups(labels.tolist())
    rolled = None if rollup is None else np.asarray([rollup.group(x) for x in labels.tolist()], dtype=object)
    out: dict[str, PairedTest] = {}
    for j, i in enumerate(others):
        a = matrix[i]
        t, r = raw[j]
        d = a - b
        out[names[i]] = PairedTest(
            system=names[i], baseline=names[base], metric=key, n=len(qids),
            mean_diff=float(d.mean()),
            diff_ci=bootstrap_ci(d, n_resamples=st.n_resamples, confidence=st.confidence, seed=st.seed,
                                 method=st.ci_method),
            t_statistic=_opt(t.statistic), p_t=_opt(t.p_value), p_t_holm=_opt(p_t_holm[j]),
            p_rand=_opt(r.p_value), p_rand_holm=_opt(p_r_holm[j]),
            significant=bool(p_r_holm[j] < st.alpha), significant_t=bool(p_t_holm[j] < st.alpha),
            wtl=win_tie_loss(a, b, tol=st.tol),
            by_type=_slices(a, b, labels, order, st),
            by_rollup=() if rolled is None else _slices(a, b, rolled, rollup.ordered(rolled.tolist()), st),
        )
    return MappingProxyType(out)


def _slices(a: np.ndarray, b: np.ndarray, labels: np.ndarray, order: list[str], st: CompareSettings) -> tuple[SliceTest, ...]:
    rows = []
    ps = []
    for g in order:
        m = labels == g
        sa, sb = a[m], b[m]
        r = randomization_test(sa, sb, n_resamples=st.n_resamples, seed=st.seed)
        ps.append(r.p_value)
        rows.append((g, sa, sb, r))
    adj = holm(ps) if ps else np.empty(0)
    return tuple(
        SliceTest(slice=g, n=len(sa), mean=float(sa.mean()), baseline_mean=float(sb.mean()),
                  mean_diff=float((sa - sb).mean()), wtl=win_tie_loss(sa, sb, tol=st.tol),
                  p_rand=_opt(r.p_value), p_rand_holm=_opt(adj[k]), significant=bool(adj[k] < st.alpha))
        for k, (g, sa, sb, r) in enumerate(rows)
    )


def _opt(x: float) -> float | None:
    x = float(x)
    return None if math.isnan(x) else x


# --------------------------------------------------------------------------- checks


def _check_dataset(results: Sequence[SavedResults], labels: list[str]) -> str | None:
    found = [r.dataset_name for r in results]
    if len({str(d) for d in found}) > 1:
        listing = ", ".join(f"{lab}: {d!r}" for lab, d in zip(labels, found))
        raise FinegrainError(f"results come from different datasets ({listing})",
                             "compare folders evaluated on the same dataset")
    return found[0]


def _metrics(results: Sequence[SavedResults], labels: list[str],
             wanted: Sequence[str] | None) -> tuple[list[str], dict[str, str]]:
    have = [set(r.metrics) for r in results]
    common = [k for k in results[0].metrics if all(k in h for h in have)]
    skipped: dict[str, str] = {}
    if wanted:
        keys = []
        for w in wanted:
            key = parse_metric(w).key
            missing = [lab for lab, h in zip(labels, have) if key not in h]
            if missing:
                raise FinegrainError(
                    f"metric {key!r} is not in the results of {', '.join(missing)}; shared metrics: "
                    f"{', '.join(common) or 'none'}",
                    f"pick a shared metric, or re-run 'finegrain eval -m {key}' for those folders")
            reason = _not_a_mean(results, labels, key)
            if reason:
                raise FinegrainError(f"metric {key!r} cannot be compared: {reason}",
                                     "compare a per-query mean metric such as ndcg@10 or recall@10")
            if key not in keys:
                keys.append(key)
        return keys, skipped
    for k in sorted(set().union(*have) - set(common)):
        skipped[k] = f"not in every result (missing from {', '.join(lab for lab, h in zip(labels, have) if k not in h)})"
    keys = []
    for k in common:
        reason = _not_a_mean(results, labels, k)
        if reason:
            skipped[k] = reason
        else:
            keys.append(k)
    if not keys:
        raise FinegrainError("the results share no metric that can be compared"
                             + (f" (skipped: {', '.join(skipped)})" if skipped else ""),
                             "evaluate every folder with a common per-query mean metric, e.g. -m ndcg@10")
    return keys, skipped


def _not_a_mean(results: Sequence[SavedResults], labels: list[str], key: str) -> str | None:
    """Why ``key`` cannot be compared as a mean of per-query values (None when it can), from its saved rule."""
    for lab, r in zip(labels, results):
        m = r.metrics[key]
        if not m.is_mean:
            what = {"median": "a median", "ratio": "a ratio of sums (pooled over queries)",
                    "sum": "a sum over queries", "gmean": "a geometric mean"}.get(m.aggregation, m.aggregation)
            return (f"its aggregate is {what} in {lab}, not a mean of per-query values, "
                    "so a paired test of per-query means would not test it")
        if m.value is None or (m.per_query is not None and not m.defined()):
            return f"{lab} has no defined value for it"
    return None


def _aligned(results: Sequence[SavedResults], labels: list[str], key: str,
             base: int) -> tuple[tuple[str, ...], np.ndarray]:
    """The baseline's queries with a defined value of ``key`` and a (systems x queries) matrix."""
    defined = [r.metrics[key].defined() for r in results]
    ref = defined[base]
    for i, d in enumerate(defined):
        if i == base or d.keys() == ref.keys():
            continue
        only_here = len(d.keys() - ref.keys())
        only_base = len(ref.keys() - d.keys())
        example = next(iter(sorted(d.keys() ^ ref.keys())))
        raise FinegrainError(
            f"{labels[i]} and {labels[base]} differ in their queries for {key}: {only_base + only_here} queries "
            f"differ ({only_base} with a value only in {labels[base]}, {only_here} only in {labels[i]}; "
            f"e.g. {example!r})",
            "compare results of the same dataset and query set (re-run 'finegrain eval' on the same --dataset)")
    qids = tuple(ref)
    matrix = np.asarray([[d[q] for q in qids] for d in defined], dtype=np.float64)
    return qids, matrix
