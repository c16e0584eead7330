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
makes them one part at a time and keeps, through :func:`choose_part`, only the runs each part's folds chose).
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
    fold_sets,
    grid_points,
    metric_keys,
    objective_of,
    point_of,
    score_points,
    summarize,
)
from finegrain.experiment.tuning.folds import assemble
from finegrain.types import Run

#: fuse(fusion setting, the parts' runs in part order) -> the fused run, cut as the fusion cuts it
Fuse = Callable[[Mapping[str, Any], Sequence[Run]], Run]


@dataclass(frozen=True)
class Part:
    """A part of a fusion: its name, its tunables, the points of its grid and its run at its default."""

    name: str
    tuned: tuple[Tunable, ...]
    points: tuple[Mapping[str, Any], ...]
    default_run: Run

    @property
    def default_setting(self) -> dict[str, Any]:
        return {t.key: t.default for t in self.tuned}

    def option(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """A point as the fusion's ``PART.KEY`` options."""
        return {f"{self.name}.{k}": v for k, v in point.items()}


@dataclass(frozen=True)
class PartGrid(Part):
    """A part with its runs at the points of its grid (``runs[i]`` is ``points[i]``'s). A part with nothing to
    tune has one point, ``{}``, and its one run."""

    runs: Sequence[Run] = ()  # a fused part's grid makes each run when it is read (FusedGrid)

    def __post_init__(self) -> None:
        if len(self.points) != len(self.runs) or not self.runs:
            raise FinegrainError(f"part {self.name!r}: {len(self.runs)} runs for {len(self.points)} grid points",
                                 "give one run per grid point")


@dataclass(frozen=True)
class PartChoice:
    """A part after stage 1: the point of its grid each fold chose on ``trains[f]``, the point chosen on every
    query (in-sample), and only those points' runs, so the rest of the grid's runs can be dropped."""

    part: Part
    objective: str
    trains: tuple[frozenset[str], ...]
    per_fold: tuple[int, ...]
    everyone: int
    runs: Mapping[int, Run]


def choose_part(qrels: Any, grid: PartGrid, objective: str, universe: Sequence[str],
                trains: Sequence[frozenset[str]]) -> PartChoice:
    """Stage 1 for one part: each fold's point is the best of the part's grid for the part alone on that fold's
    training queries ``trains[f]`` (ties: the part's default, else the first point)."""
    scores = score_points(qrels, grid.runs, objective, universe)
    preferred = point_of(grid.points, grid.default_setting)
    per_fold = tuple(best_point(scores, t, preferred)[0] for t in trains)
    everyone = best_point(scores, frozenset(universe), preferred)[0]
    return PartChoice(Part(grid.name, grid.tuned, grid.points, grid.default_run), objective, tuple(trains), per_fold,
                      everyone, {i: grid.runs[i] for i in dict.fromkeys([*per_fold, everyone])})


def nested_note(spec: CVSpec, objective: str) -> str:
    return (f"{spec.folds}-fold cross-validation over queries (seed {spec.seed}, stratified by query type), nested: "
            f"for each fold, each part's own options are the point of its grid with the best {objective} for the "
            "part alone on the other folds, then the fusion's options the point with the best fused "
            f"{objective} there (ties: the default, else first in grid order); no setting is scored on the "
            "queries it was chosen on; reported values are means over every query's out-of-fold value with a "
            "bootstrap 95% CI, next to the a-priori default on the same queries; the consensus is the setting "
            "most folds chose")


def choose_with_parts(qrels: Any, parts: Sequence[PartGrid | PartChoice], fuse: Fuse,
                      fusion_tuned: Sequence[Tunable],
                      fusion_setting: Mapping[str, Any], metrics: Sequence[str], spec: CVSpec, *,
                      queries: Sequence[str], strata: Mapping[str, str | None] | None = None,
                      n_resamples: int = 10000, assignment: Mapping[str, int] | None = None,
                      show_progress: bool = False) -> CrossValidation:
    """Cross-validate a fusion and its parts over ready runs (see the module docstring).

    ``parts``: each part's grid, or its stage-1 choice already made (:func:`choose_part` with the same folds:
    a caller that makes the parts' runs one part at a time keeps only the chosen ones).
    ``fusion_tuned``: the fusion's own tunables (none: ``fusion_setting`` is its one point);
    ``fusion_setting``: its a-priori default. ``assignment`` (``{qid: fold}``) replaces the seeded deal."""

    if not parts:
        raise FinegrainError("a fusion with no parts has nothing to tune", "give the fusion its parts")
    keys = metric_keys(metrics)
    objective = objective_of(spec, keys)
    universe = list(dict.fromkeys(queries))
    folds, trains = fold_sets(universe, spec, strata, assignment)
    members = [frozenset(q for q in universe if folds[q] == f) for f in range(spec.folds)]
    everyone = frozenset(universe)

    def scored(run: Run) -> Any:
        return evaluate(qrels, run, objective, queries=universe, warn=False)[objective]

    # stage 1: each part alone
    chosen = [c if isinstance(c, PartChoice) else choose_part(qrels, c, objective, universe, trains) for c in parts]
    if any(c.objective != objective or c.trains != tuple(trains) for c in chosen):
        raise FinegrainError("a part was chosen on other folds or for another metric",
                             "make each part's choice with fold_sets() of the same queries, spec and strata")
    combos = [tuple(c.per_fold[f] for c in chosen) for f in range(spec.folds)]
    combo_all = tuple(c.everyone for c in chosen)
    grids = [c.part for c in chosen]

    # stage 2: the fusion, over the parts at each fold's points (fused once per distinct combination)
    fusion_points = grid_points(fusion_tuned) if fusion_tuned else [dict(fusion_setting)]
    preferred = point_of(fusion_points, fusion_setting)
    fused_scores: dict[tuple[int, ...], list[Any]] = {}
    distinct = list(dict.fromkeys([*combos, combo_all]))
    bar = tqdm(total=len(distinct) * len(fusion_points), desc="fusions", unit="fusion",
               disable=not show_progress or len(distinct) * len(fusion_points) < 50)
    for combo in distinct:
        runs = [c.runs[i] for c, i in zip(chosen, combo)]
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
        for p, i in zip(grids, combo):
            out.update(p.option(p.points[i]))
        return {**out, **fusion_points[j]}

    chosen_runs = {(combo, j): fuse(fusion_points[j], [c.runs[i] for c, i in zip(chosen, combo)])
                   for combo, j in dict.fromkeys((combo, j) for combo, j, _ in picks)}
    default_run = fuse(fusion_setting, [p.default_run for p in grids])
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
    tuned = tuple(Tunable(f"{p.name}.{t.key}", t.values, t.default) for p in grids for t in p.tuned)
    default_setting = {**{k: v for p in grids for k, v in p.option(p.default_setting).items()}, **fusion_setting}
    return CrossValidation(
        spec=spec, objective=objective, tuned=(*tuned, *fusion_tuned),
        points=tuple(MappingProxyType(dict(s)) for s in settings),
        default_setting=MappingProxyType(default_setting), folds=fold_choices,
        consensus=MappingProxyType(dict(settings[first])), in_sample=MappingProxyType(setting(combo_all, j_all)),
        in_sample_value=v_all, fold_of=MappingProxyType(folds), metrics=MappingProxyType(per_metric),
        run=oof, evaluation=ev, default_evaluation=dev,
        strata="query type" if strata is not None else "none", note=nested_note(spec, objective),
        searched=sum(len(p.points) for p in grids) + len(distinct) * len(fusion_points))


def _frozen(setting: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A setting as a hashable key (list values, e.g. weights, as tuples)."""
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in setting.items())
