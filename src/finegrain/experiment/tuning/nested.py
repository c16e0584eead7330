"""A fusion's parts tuned inside cross-validation (``finegrain eval -r hybrid --cv K --cv-parts``).

Plain ``--cv`` on a fusion (``hybrid``, ``hybrid-use``, ...) chooses the fusion's own options (``weights``, RRF
``k``) with every part at its registered settings. With the parts tuned, the choice for fold *f* is made in
two stages, both on the queries of the other folds only:

1. **each part alone**: every part with a grid of its own (BM25's ``k1`` and ``b``, a dense part's vector
   PRF, a fused part's weights) takes the point of that grid whose run is best on the other folds (the rule
   of :func:`~finegrain.experiment.tuning.cv.choose`: ties go to the part's default);
2. **the fusion**: the parts' runs at those points are fused at every point of the fusion's own grid, and
   the best fused run on the other folds is fold *f*'s.

Fold *f*'s queries take their results from that fused run; so no setting, of a part or of the fusion,
is ever scored on the queries it was chosen on. Tuning each part on its own and then their fusion keeps the
search a sum, not a product, of the grids (the common practice: tune BM25, then fuse), at the price of never
trying a part setting that is worse alone but fuses better.

The record is the one plain ``--cv`` writes (:class:`~finegrain.experiment.tuning.cv.CrossValidation`); a
fold's setting names a part's option ``PART.KEY``, as ``--set`` does, so the consensus can be passed back
with ``--set``; its ``points`` are the settings the folds chose, and ``n_points`` in the provenance counts
the runs scored (every part's grid, then the fusion's grid once per distinct choice of the parts).
:func:`choose_with_parts` is pure: it takes runs already made (:func:`finegrain.experiment.tuning.grid.cross_validate`
makes them).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from tqdm.auto import tqdm

from finegrain.errors import FinegrainError
from finegrain.evaluate.evaluate import evaluate
from finegrain.experiment.tuning.cv import (
    CrossValidation,
    CVSpec,
    FoldChoice,
    Tunable,
    best_point,
    deal,
    grid_points,
    metric_keys,
    objective_of,
    point_of,
    summarize,
)
from finegrain.experiment.tuning.folds import assemble
from finegrain.types import Run

#: fuse(fusion setting, the parts' runs in part order) -> the fused run, cut as the fusion cuts it
Fuse = Callable[[Mapping[str, Any], Sequence[Run]], Run]


@dataclass(frozen=True)
class PartGrid:
    """One part of a fusion: its runs at the points of its own grid (``runs[i]`` is ``points[i]``'s) and at its
    default. A part with nothing to tune has one point, ``{}``, and its one run."""

    name: str
    tuned: tuple[Tunable, ...]
    points: tuple[Mapping[str, Any], ...]
    runs: Sequence[Run]  # a fused part's grid makes each run when it is read (FusedGrid)
    default_run: Run

    def __post_init__(self) -> None:
        if len(self.points) != len(self.runs) or not self.runs:
            raise FinegrainError(f"part {self.name!r}: {len(self.runs)} runs for {len(self.points)} grid points",
                                 "give one run per grid point")

    @property
    def default_setting(self) -> dict[str, Any]:
        return {t.key: t.default for t in self.tuned}

    def option(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """A point as the fusion's ``PART.KEY`` options."""
        return {f"{self.name}.{k}": v for k, v in point.items()}


def nested_note(spec: CVSpec, objective: str) -> str:
    return (f"{spec.folds}-fold cross-validation over queries (seed {spec.seed}, stratified by query type), nested: "
            f"for each fold, each part's own options are the point of its grid with the best {objective} for the "
            "part alone on the other folds, then the fusion's options the point with the best fused "
            f"{objective} there (ties: the default, else first in grid order); no setting is scored on the "
            "queries it was chosen on; reported values are means over every query's out-of-fold value with a "
            "bootstrap 95% CI, next to the a-priori default on the same queries; the consensus is the setting "
            "most folds chose")


def choose_with_parts(qrels: Any, parts: Sequence[PartGrid], fuse: Fuse, fusion_tuned: Sequence[Tunable],
                      fusion_setting: Mapping[str, Any], metrics: Sequence[str], spec: CVSpec, *,
                      queries: Sequence[str], strata: Mapping[str, str | None] | None = None,
                      n_resamples: int = 10000, assignment: Mapping[str, int] | None = None,
                      show_progress: bool = False) -> CrossValidation:
    """Cross-validate a fusion and its parts over ready runs (see the module docstring).

    ``fusion_tuned``: the fusion's own tunables (none: ``fusion_setting`` is its one point);
    ``fusion_setting``: its a-priori default. ``assignment`` (``{qid: fold}``) replaces the seeded deal."""

    if not parts:
        raise FinegrainError("a fusion with no parts has nothing to tune", "give the fusion its parts")
    keys = metric_keys(metrics)
    objective = objective_of(spec, keys)
    universe = list(dict.fromkeys(queries))
    folds = deal(universe, spec, strata, assignment)
    members = [frozenset(q for q in universe if folds[q] == f) for f in range(spec.folds)]
    trains = [frozenset(q for q in universe if folds[q] != f) for f in range(spec.folds)]
    everyone = frozenset(universe)

    def scored(run: Run) -> Any:
        return evaluate(qrels, run, objective, queries=universe, warn=False)[objective]

    # stage 1: each part alone
    part_scores = [[scored(r) for r in p.runs] for p in parts]
    part_default = [point_of(p.points, p.default_setting) for p in parts]

    def part_points(qids: frozenset[str]) -> tuple[int, ...]:
        return tuple(best_point(s, qids, d)[0] for s, d in zip(part_scores, part_default))

    combos = [part_points(t) for t in trains]
    combo_all = part_points(everyone)

    # stage 2: the fusion, over the parts at each fold's points (fused once per distinct combination)
    fusion_points = grid_points(fusion_tuned) or [dict(fusion_setting)]
    preferred = point_of(fusion_points, fusion_setting)
    fused_scores: dict[tuple[int, ...], list[Any]] = {}
    distinct = list(dict.fromkeys([*combos, combo_all]))
    bar = tqdm(total=len(distinct) * len(fusion_points), desc="fusions", unit="fusion",
               disable=not show_progress or len(distinct) * len(fusion_points) < 50)
    for combo in distinct:
        runs = [p.runs[i] for p, i in zip(parts, combo)]
        fused_scores[combo] = []
        for point in fusion_points:  # scored and dropped: memory stays one fused run
            fused_scores[combo].append(scored(fuse(point, runs)))
            bar.update()
    bar.close()

    def fusion_point(combo: tuple[int, ...], qids: frozenset[str]) -> tuple[int, float | None]:
        return best_point(fused_scores[combo], qids, preferred)

    picks = [(combo, *fusion_point(combo, t)) for combo, t in zip(combos, trains)]
    j_all, v_all = fusion_point(combo_all, everyone)

    def setting(combo: tuple[int, ...], j: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p, i in zip(parts, combo):
            out.update(p.option(p.points[i]))
        return {**out, **fusion_points[j]}

    chosen_runs = {(c, j): fuse(fusion_points[j], [p.runs[i] for p, i in zip(parts, c)])
                   for c, j in dict.fromkeys((c, j) for c, j, _ in picks)}
    default_run = fuse(fusion_setting, [p.default_run for p in parts])
    oof = assemble([chosen_runs[picks[folds[q]][0], picks[folds[q]][1]] for q in universe], universe,
                   name=f"cv-{default_run.name}")
    ev, dev, per_metric = summarize(qrels, oof, default_run, keys, spec, queries=universe, members=members,
                                    strata=strata, n_resamples=n_resamples)

    settings = list(dict.fromkeys(_frozen(setting(c, j)) for c, j, _ in picks))
    index = {s: i for i, s in enumerate(settings)}
    fold_choices = tuple(
        FoldChoice(f, len(members[f]), MappingProxyType(setting(c, j)), index[_frozen(setting(c, j))], fitted,
                   fused_scores[c][j].value_over(members[f])[0])
        for f, (c, j, fitted) in enumerate(picks))
    consensus = Counter(f.point for f in fold_choices).most_common()
    top = max(n for _, n in consensus)
    first = min(i for i, n in consensus if n == top)  # ties: the setting met first, fold by fold
    tuned = tuple(Tunable(f"{p.name}.{t.key}", t.values, t.default) for p in parts for t in p.tuned)
    default_setting = {**{k: v for p in parts for k, v in p.option(p.default_setting).items()}, **fusion_setting}
    return CrossValidation(
        spec=spec, objective=objective, tuned=(*tuned, *fusion_tuned),
        points=tuple(MappingProxyType(dict(s)) for s in settings),
        default_setting=MappingProxyType(default_setting), folds=fold_choices,
        consensus=MappingProxyType(dict(settings[first])), in_sample=MappingProxyType(setting(combo_all, j_all)),
        in_sample_value=v_all, fold_of=MappingProxyType(folds), metrics=MappingProxyType(per_metric),
        run=oof, evaluation=ev, default_evaluation=dev,
        strata="query type" if strata is not None else "none", note=nested_note(spec, objective),
        searched=sum(len(p.runs) for p in parts) + len(distinct) * len(fusion_points))


def _frozen(setting: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A setting as a hashable key (list values, e.g. weights, as tuples)."""
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in setting.items())
