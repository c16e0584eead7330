"""Several saved results side by side on the same queries, with intervals and paired tests.

:func:`compare` builds a frozen :class:`Comparison` from results dictionaries
as written by ``finegrain eval`` (``DIR/results.json``); :func:`load_comparison`
reads the folders first. Everything is computed from the saved per-query values
(``results["per_query"][key][qid]``); no metric is recomputed.

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
      (:func:`~finegrain.evaluate.stats.bootstrap_ci`);
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
      ``significant`` = that adjusted p < ``alpha``.

Every resampling uses the same ``seed`` (common random numbers), so the
numbers are reproducible and independent of the order of systems.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from finegrain.errors import FinegrainError
from finegrain.evaluate.stats import (
    CI_METHODS,
    CIMethod,
    Interval,
    WinTieLoss,
    bootstrap_ci,
    holm,
    paired_t_test,
    randomization_test,
    win_tie_loss,
)

SCHEMA = "finegrain.comparison/1"
UNTYPED = "untyped"  # same group name as finegrain.evaluate.result.UNTYPED


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class System:
    """One compared results folder: its display name (unique), folder and retriever."""

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
    systems: tuple[System, ...]
    baseline: str
    metrics: tuple[str, ...]
    n_queries: Mapping[str, int]
    types: tuple[tuple[str, int], ...]
    summaries: Mapping[str, Mapping[str, Summary]]
    tests: Mapping[str, Mapping[str, PairedTest]]
    skipped: Mapping[str, str]
    settings: CompareSettings

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.systems)

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
                m: {name: {"mean": _num(x.mean), "ci": [_num(x.ci.low), _num(x.ci.high)], "n": x.n}
                    for name, x in row.items()}
                for m, row in self.summaries.items()
            },
            "tests": {m: {name: _test_json(t) for name, t in row.items()} for m, row in self.tests.items()},
        }


def _test_json(t: PairedTest) -> dict[str, Any]:
    return {
        "n": t.n,
        "mean_diff": _num(t.mean_diff),
        "diff_ci": [_num(t.diff_ci.low), _num(t.diff_ci.high)],
        "t_statistic": _num(t.t_statistic),
        "p_t": _num(t.p_t),
        "p_t_holm": _num(t.p_t_holm),
        "p_rand": _num(t.p_rand),
        "p_rand_holm": _num(t.p_rand_holm),
        "significant": t.significant,
        "significant_t": t.significant_t,
        **t.wtl.to_dict(),
        "by_type": {
            s.slice: {"n": s.n, "mean": _num(s.mean), "baseline_mean": _num(s.baseline_mean),
                      "mean_diff": _num(s.mean_diff), **s.wtl.to_dict(),
                      "p_rand": _num(s.p_rand), "p_rand_holm": _num(s.p_rand_holm), "significant": s.significant}
            for s in t.by_type
        },
    }


def _num(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


# --------------------------------------------------------------------------- building


def load_comparison(
    folders: Sequence[str | Path],
    *,
    baseline: str | Path | int = 0,
    **options: Any,
) -> Comparison:
    """Read results folders and :func:`compare` them.

    ``baseline`` is an index into ``folders`` (0 = the first), a system name, or a
    folder; a folder not among ``folders`` is added in front of them.
    """
    from finegrain.io.results import read_results

    paths = [Path(f) for f in folders]
    if isinstance(baseline, (str, Path)):
        b = Path(baseline)
        resolved = [p.resolve() for p in paths]
        if b.resolve() in resolved:
            baseline = resolved.index(b.resolve())
        elif str(baseline).isdigit():
            baseline = int(str(baseline))
        elif b.is_dir():
            paths.insert(0, b)
            baseline = 0
        else:
            baseline = str(baseline)  # a system name, resolved by compare()
    results = [read_results(p) for p in paths]
    return compare(results, folders=[str(p) for p in paths], baseline=baseline, **options)


def compare(
    results: Sequence[Mapping[str, Any]],
    *,
    folders: Sequence[str] | None = None,
    baseline: int | str = 0,
    metrics: Sequence[str] | None = None,
    alpha: float = 0.05,
    confidence: float = 0.95,
    n_resamples: int = 10000,
    seed: int = 0,
    ci_method: CIMethod = "percentile",
    tol: float = 1e-9,
) -> Comparison:
    """Compare results dicts (as saved in ``results.json``); see the module docstring.

    ``folders`` label each result in messages and names (default ``"#0"``,
    ``"#1"``, ...). ``baseline``: an index into ``results`` or a system name.
    ``metrics``: keys to compare (default: every metric all results share whose
    aggregate is a per-query mean).
    """
    if len(results) < 2:
        raise FinegrainError(f"need at least 2 results to compare, got {len(results)}",
                             "pass two or more folders written by 'finegrain eval'")
    labels = list(folders) if folders is not None else [f"#{i}" for i in range(len(results))]
    if len(labels) != len(results):
        raise FinegrainError(f"{len(labels)} folder labels for {len(results)} results", "give one label per result")
    if not 0.0 < alpha < 1.0:
        raise FinegrainError(f"alpha must be in (0, 1), got {alpha!r}", "e.g. --alpha 0.05")
    if ci_method not in CI_METHODS:
        raise FinegrainError(f"unknown interval method {ci_method!r}", f"use one of {', '.join(CI_METHODS)}")
    if n_resamples < 1:
        raise FinegrainError(f"resamples must be >= 1, got {n_resamples!r}", "e.g. --resamples 10000")
    settings = CompareSettings(alpha, confidence, n_resamples, seed, ci_method, tol)

    systems = _systems(results, labels)
    names = [s.name for s in systems]
    base = _baseline_index(baseline, names, labels)
    dataset = _check_dataset(results, labels)
    keys, skipped = _metrics(results, labels, metrics)
    qtypes = _query_types(results[base])

    summaries: dict[str, Mapping[str, Summary]] = {}
    tests: dict[str, Mapping[str, PairedTest]] = {}
    n_queries: dict[str, int] = {}
    for key in keys:
        qids, matrix = _aligned(results, labels, key, base)
        n_queries[key] = len(qids)
        summaries[key] = MappingProxyType({
            names[i]: Summary(float(matrix[i].mean()),
                              bootstrap_ci(matrix[i], n_resamples=n_resamples, confidence=confidence,
                                           seed=seed, method=ci_method), len(qids))
            for i in range(len(results))
        })
        tests[key] = _tests(key, qids, matrix, names, base, qtypes, settings)
    order = _type_order(qtypes)
    counts = {t: 0 for t in order}
    for t in qtypes.values():
        counts[t] += 1
    return Comparison(
        dataset=dataset,
        systems=tuple(systems),
        baseline=names[base],
        metrics=tuple(keys),
        n_queries=MappingProxyType(n_queries),
        types=tuple(counts.items()),
        summaries=MappingProxyType(summaries),
        tests=MappingProxyType(tests),
        skipped=MappingProxyType(skipped),
        settings=settings,
    )


def _tests(key: str, qids: tuple[str, ...], matrix: np.ndarray, names: list[str], base: int,
           qtypes: Mapping[str, str], st: CompareSettings) -> Mapping[str, PairedTest]:
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
    labels = np.asarray([qtypes.get(q, UNTYPED) for q in qids], dtype=object)
    order = _type_order(dict(zip(qids, labels.tolist())))
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


def _provenance(res: Mapping[str, Any], part: str) -> Mapping[str, Any]:
    prov = res.get("provenance")
    sub = prov.get(part) if isinstance(prov, Mapping) else None
    return sub if isinstance(sub, Mapping) else {}


def _systems(results: Sequence[Mapping[str, Any]], labels: list[str]) -> list[System]:
    """Display names: the retriever name, with the folder name added when two are equal."""
    retr = [_provenance(r, "retriever").get("name") for r in results]
    base = [str(n) if n else Path(lab).name or lab for n, lab in zip(retr, labels)]
    names = list(base)
    for attempt in (lambda i: f"{base[i]} ({Path(labels[i]).name or labels[i]})",
                    lambda i: f"{base[i]} ({labels[i]})",
                    lambda i: f"{base[i]} #{i}"):
        dup = {n for n in names if names.count(n) > 1}
        if not dup:
            break
        names = [attempt(i) if names[i] in dup else names[i] for i in range(len(names))]
    return [System(n, lab, str(r) if r else None) for n, lab, r in zip(names, labels, retr)]


def _baseline_index(baseline: int | str, names: list[str], labels: list[str]) -> int:
    if isinstance(baseline, bool):
        raise FinegrainError(f"baseline must be an index or a name, got {baseline!r}", "e.g. --baseline 0")
    if isinstance(baseline, int):
        if not 0 <= baseline < len(names):
            raise FinegrainError(f"baseline index {baseline} is out of range for {len(names)} results",
                                 f"use 0..{len(names) - 1} (0 = the first folder) or a folder")
        return baseline
    text = str(baseline)
    if text.isdigit():
        return _baseline_index(int(text), names, labels)
    for pool in (names, labels):
        if text in pool:
            return pool.index(text)
    raise FinegrainError(f"unknown baseline {text!r}; systems: {', '.join(names)}",
                         "give an index (0 = first), a system name or one of the folders")


def _check_dataset(results: Sequence[Mapping[str, Any]], labels: list[str]) -> str | None:
    found = [_provenance(r, "dataset").get("name") for r in results]
    if len({str(d) for d in found}) > 1:
        listing = ", ".join(f"{lab}: {d!r}" for lab, d in zip(labels, found))
        raise FinegrainError(f"results come from different datasets ({listing})",
                             "compare folders evaluated on the same dataset")
    return None if found[0] is None else str(found[0])


def _metrics(results: Sequence[Mapping[str, Any]], labels: list[str],
             wanted: Sequence[str] | None) -> tuple[list[str], dict[str, str]]:
    from finegrain.metrics.spec import parse_metric

    have = [set((r.get("per_query") or {}).keys()) for r in results]
    common = [k for k in (results[0].get("per_query") or {}) if all(k in h for h in have)]
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


def _not_a_mean(results: Sequence[Mapping[str, Any]], labels: list[str], key: str) -> str | None:
    """Why ``key``'s saved aggregate is not the mean of its per-query values (None when it is)."""
    for lab, r in zip(labels, results):
        agg = (r.get("aggregate") or {}).get(key)
        vals = [v for v in (r.get("per_query") or {}).get(key, {}).values() if v is not None]
        if agg is None or not vals:
            return f"{lab} has no defined value for it"
        mean = float(np.mean(np.asarray(vals, dtype=np.float64)))
        if not math.isclose(mean, float(agg), rel_tol=1e-9, abs_tol=1e-12):
            return ("its aggregate is not the mean of its per-query values (a median or a ratio of sums), "
                    "so a paired test of per-query means would not test it")
    return None


def _aligned(results: Sequence[Mapping[str, Any]], labels: list[str], key: str,
             base: int) -> tuple[tuple[str, ...], np.ndarray]:
    """The baseline's queries with a defined value of ``key`` and a (systems x queries) matrix."""
    defined = []
    for r in results:
        pq: Mapping[str, Any] = r["per_query"][key]
        defined.append({q: v for q, v in pq.items() if v is not None})
    ref = defined[base]
    for i, d in enumerate(defined):
        if i == base or d.keys() == ref.keys():
            continue
        only_here = len(d.keys() - ref.keys())
        only_base = len(ref.keys() - d.keys())
        example = next(iter(sorted((d.keys() ^ ref.keys()))))
        raise FinegrainError(
            f"{labels[i]} and {labels[base]} differ in their queries for {key}: {only_base + only_here} queries "
            f"differ ({only_base} with a value only in {labels[base]}, {only_here} only in {labels[i]}; "
            f"e.g. {example!r})",
            "compare results of the same dataset and query set (re-run 'finegrain eval' on the same --dataset)")
    qids = tuple(ref)
    matrix = np.asarray([[d[q] for q in qids] for d in defined], dtype=np.float64)
    return qids, matrix


def _query_types(res: Mapping[str, Any]) -> dict[str, str]:
    queries = res.get("queries") or {}
    out = {}
    for q, rec in queries.items():
        t = rec.get("type") if isinstance(rec, Mapping) else None
        out[q] = UNTYPED if t is None else str(t)
    return out


def _type_order(qtypes: Mapping[str, str]) -> list[str]:
    groups = set(qtypes.values())
    return sorted(g for g in groups if g != UNTYPED) + ([UNTYPED] if UNTYPED in groups else [])
