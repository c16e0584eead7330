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
A routed fusion (``hybrid-routed``) makes stage 2's choice per predicted query type
(:func:`finegrain.experiment.tuning.routing.choose_routed_with_parts`), from the same scores
(:func:`score_fusions`). :func:`choose_with_parts` is pure: it takes runs already made
(:func:`finegrain.experiment.tuning.grid.cross_validate` makes them one part at a time and keeps, through
:func:`choose_part`, only the runs each part's folds chose).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any

from tqdm.auto import tqdm

from finegrain.errors import FinegrainError
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


@dataclass(frozen=True)
class FusionScores:
    """Both stages' scores over ready runs, before any fusion setting is chosen: each part's stage-1 choice, the
    parts' grid points each fold uses (``combos[f]``; ``combo_all`` on every query), the fusion's grid, and the
    fused run's evaluation of the objective at each (combination, fusion point) -- what a flat or a routed
    choice of the fusion's setting reads."""

    chosen: tuple[PartChoice, ...]
    fuse: Fuse
    objective: str
    universe: tuple[str, ...]
    folds: Mapping[str, int]
    trains: tuple[frozenset[str], ...]
    combos: tuple[tuple[int, ...], ...]
    combo_all: tuple[int, ...]
    fusion_points: tuple[Mapping[str, Any], ...]
    fusion_setting: Mapping[str, Any]
    fusion_tuned: tuple[Tunable, ...]
    scores: Mapping[tuple[int, ...], Sequence[Any]]

    @property
    def preferred(self) -> int | None:
        return point_of(self.fusion_points, self.fusion_setting)

    @property
    def searched(self) -> int:
        """Runs scored: every part's grid, then the fusion's grid once per distinct combination."""
        return sum(len(c.part.points) for c in self.chosen) + len(self.scores) * len(self.fusion_points)

    def setting(self, combo: tuple[int, ...], j: int) -> dict[str, Any]:
        """The whole setting: each part's point as ``PART.KEY`` options, then fusion point ``j``."""
        out: dict[str, Any] = {}
        for c, i in zip(self.chosen, combo):
            out.update(c.part.option(c.part.points[i]))
        return {**out, **self.fusion_points[j]}

    def fused(self, combo: tuple[int, ...], j: int) -> Run:
        return self.fuse(self.fusion_points[j], [c.runs[i] for c, i in zip(self.chosen, combo)])

    @cached_property
    def default_run(self) -> Run:
        """The fusion at its a-priori setting over the parts at theirs (made once: both choices read it)."""
        return self.fuse(self.fusion_setting, [c.part.default_run for c in self.chosen])

    def tuned(self) -> tuple[Tunable, ...]:
        parts = tuple(Tunable(f"{c.part.name}.{t.key}", t.values, t.default) for c in self.chosen for t in c.part.tuned)
        return (*parts, *self.fusion_tuned)

    def default_setting(self) -> dict[str, Any]:
        parts = {k: v for c in self.chosen for k, v in c.part.option(c.part.default_setting).items()}
        return {**parts, **self.fusion_setting}


def score_fusions(qrels: Any, parts: Sequence[PartGrid | PartChoice], fuse: Fuse, fusion_tuned: Sequence[Tunable],
                  fusion_setting: Mapping[str, Any], metrics: Sequence[str], spec: CVSpec, *,
                  queries: Sequence[str], strata: Mapping[str, str | None] | None = None,
                  assignment: Mapping[str, int] | None = None, show_progress: bool = False) -> FusionScores:
    """Stage 1 (each part alone, per fold) and the scores stage 2 chooses from: the parts at each fold's points
    (and at the points chosen on every query) fused at every point of the fusion's grid, each fused run scored
    and dropped, so memory holds one fused run."""
    if not parts:
        raise FinegrainError("a fusion with no parts has nothing to tune", "give the fusion its parts")
    objective = objective_of(spec, metric_keys(metrics))
    universe = list(dict.fromkeys(queries))
    folds, trains = fold_sets(universe, spec, strata, assignment)
    chosen = [c if isinstance(c, PartChoice) else choose_part(qrels, c, objective, universe, trains) for c in parts]
    if any(c.objective != objective or c.trains != tuple(trains) for c in chosen):
        raise FinegrainError("a part was chosen on other folds or for another metric",
                             "make each part's choice with fold_sets() of the same queries, spec and strata")
    combos = tuple(tuple(c.per_fold[f] for c in chosen) for f in range(spec.folds))
    combo_all = tuple(c.everyone for c in chosen)
    fusion_points = grid_points(fusion_tuned) if fusion_tuned else [dict(fusion_setting)]
    distinct = list(dict.fromkeys([*combos, combo_all]))
    bar = tqdm(total=len(distinct) * len(fusion_points), desc="fusions", unit="fusion",
               disable=not show_progress or len(distinct) * len(fusion_points) < 50)
    scores: dict[tuple[int, ...], list[Any]] = {}
    for combo in distinct:
        runs = [c.runs[i] for c, i in zip(chosen, combo)]
        scores[combo] = []
        for point in fusion_points:
            scores[combo].extend(score_points(qrels, [fuse(point, runs)], objective, universe))
            bar.update()
    bar.close()
    return FusionScores(tuple(chosen), fuse, objective, tuple(universe), MappingProxyType(folds), tuple(trains),
                        combos, combo_all, tuple(MappingProxyType(dict(p)) for p in fusion_points),
                        MappingProxyType(dict(fusion_setting)), tuple(fusion_tuned), MappingProxyType(scores))


def choose_with_parts(qrels: Any, parts: Sequence[PartGrid | PartChoice], fuse: Fuse,
                      fusion_tuned: Sequence[Tunable],
                      fusion_setting: Mapping[str, Any], metrics: Sequence[str], spec: CVSpec, *,
                      queries: Sequence[str], strata: Mapping[str, str | None] | None = None,
                      n_resamples: int = 10000, assignment: Mapping[str, int] | None = None,
                      show_progress: bool = False, scored: FusionScores | None = None) -> CrossValidation:
    """Cross-validate a fusion and its parts over ready runs (see the module docstring).

    ``parts``: each part's grid, or its stage-1 choice already made (:func:`choose_part` with the same folds:
    a caller that makes the parts' runs one part at a time keeps only the chosen ones).
    ``fusion_tuned``: the fusion's own tunables (none: ``fusion_setting`` is its one point);
    ``fusion_setting``: its a-priori default. ``assignment`` (``{qid: fold}``) replaces the seeded deal.
    ``scored``: :func:`score_fusions` of the same arguments, made by a caller that reads them too."""

    sc = scored if scored is not None else score_fusions(
        qrels, parts, fuse, fusion_tuned, fusion_setting, metrics, spec, queries=queries, strata=strata,
        assignment=assignment, show_progress=show_progress)
    keys = metric_keys(metrics)
    universe, folds, objective = list(sc.universe), sc.folds, sc.objective
    members = [frozenset(q for q in universe if folds[q] == f) for f in range(spec.folds)]
    preferred = sc.preferred

    def fusion_point(combo: tuple[int, ...], qids: frozenset[str]) -> tuple[int, float | None]:
        return best_point(sc.scores[combo], qids, preferred)

    picks = [(combo, *fusion_point(combo, t)) for combo, t in zip(sc.combos, sc.trains)]
    j_all, v_all = fusion_point(sc.combo_all, frozenset(universe))
    chosen_runs = {(combo, j): sc.fused(combo, j) for combo, j in dict.fromkeys((combo, j) for combo, j, _ in picks)}
    default_run = sc.default_run
    oof = assemble([chosen_runs[picks[folds[q]][0], picks[folds[q]][1]] for q in universe], universe,
                   name=f"cv-{default_run.name}")
    ev, dev, per_metric = summarize(qrels, oof, default_run, keys, spec, queries=universe, members=members,
                                    strata=strata, n_resamples=n_resamples)

    settings = list(dict.fromkeys(_frozen(sc.setting(c, j)) for c, j, _ in picks))
    index = {s: i for i, s in enumerate(settings)}
    fold_choices = tuple(
        FoldChoice(f, len(members[f]), MappingProxyType(sc.setting(c, j)), index[_frozen(sc.setting(c, j))], fitted,
                   sc.scores[c][j].value_over(members[f])[0])
        for f, (c, j, fitted) in enumerate(picks))
    consensus = Counter(f.point for f in fold_choices).most_common()
    top = max(n for _, n in consensus)
    first = min(i for i, n in consensus if n == top)  # ties: the setting met first, fold by fold
    return CrossValidation(
        spec=spec, objective=objective, tuned=sc.tuned(),
        points=tuple(MappingProxyType(dict(s)) for s in settings),
        default_setting=MappingProxyType(sc.default_setting()), folds=fold_choices,
        consensus=MappingProxyType(dict(settings[first])), in_sample=MappingProxyType(sc.setting(sc.combo_all, j_all)),
        in_sample_value=v_all, fold_of=MappingProxyType(dict(folds)), metrics=MappingProxyType(per_metric),
        run=oof, evaluation=ev, default_evaluation=dev,
        strata="query type" if strata is not None else "none", note=nested_note(spec, objective),
        searched=sc.searched)


def _frozen(setting: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A setting as a hashable key (list values, e.g. weights, as tuples)."""
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in setting.items())
