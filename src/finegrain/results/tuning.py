"""The tuning sections of ``results.json``, typed: cross-validation and the threshold sweep.

``finegrain eval --cv`` saves :class:`CvSection` as ``"cv"`` (per metric the
cross-validated mean and interval next to the a-priori default's, and each
query's fold) and :class:`CvProvenance` as ``provenance["cv"]`` (the grid, the
setting each fold chose, the consensus, the optimistic in-sample best);
``--sweep threshold=...`` saves :class:`ThresholdSweepSection` as
``"threshold_sweep"`` (every metric at every threshold, and each metric's
cross-validated threshold). The writers are
:mod:`finegrain.experiment.tuning.cv` and
:mod:`finegrain.experiment.tuning.threshold`; these classes validate what they
wrote when the file is read (see :mod:`finegrain.results.schema`), including
that a curve has one value per threshold.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, JsonValue, model_validator

from finegrain.results.schema import Count, Int, Number, Saved, Share, Text

CV_SCHEMA = "finegrain.cv/1"
THRESHOLD_SCHEMA = "finegrain.threshold_sweep/1"

Setting = dict[Text, JsonValue]
"""A grid point: parameter name -> value (a number, a string, a list of numbers, or null for the default)."""


# --------------------------------------------------------------------------- cross-validation


class MetricCv(Saved):
    """One metric's cross-validated mean, the default's, their difference, and the per-fold values."""

    n: Count
    mean: Number | None = None
    ci: tuple[Number, Number] | None = None
    default_mean: Number | None = None
    default_ci: tuple[Number, Number] | None = None
    diff: Number | None = None
    diff_ci: tuple[Number, Number] | None = None
    p_rand: Share | None = None
    fold_values: tuple[Number | None, ...] = ()


class CvSection(Saved):
    """``results["cv"]``; see the module docstring (a routed CV adds ``routing``, kept as written)."""

    schema_: Literal["finegrain.cv/1"] = Field(alias="schema")
    objective: Text
    metrics: dict[Text, MetricCv]
    default_per_query: dict[Text, dict[Text, Number | None]] = {}
    fold_of: dict[Text, Count] = {}


class FoldChoice(Saved):
    fold: Count
    n_queries: Count
    setting: Setting = {}
    fitted_value: Number | None = None
    held_out_value: Number | None = None


class InSample(Saved):
    setting: Setting = {}
    value: Number | None = None
    note: Text = ""


class CvProvenance(Saved):
    """``provenance["cv"]``: how the settings were chosen."""

    schema_: Literal["finegrain.cv/1"] = Field(alias="schema")
    spec: Text = ""
    folds: Count
    seed: Int = 0
    stratified_by: Text = ""
    objective: Text = ""
    grid: dict[Text, tuple[JsonValue, ...]] = {}
    n_points: Count = 0
    default: Setting = {}
    per_fold: tuple[FoldChoice, ...] = ()
    consensus: Setting = {}
    in_sample: InSample = InSample()
    method: Text = ""


# --------------------------------------------------------------------------- threshold sweep


class Normalisation(Saved):
    method: Text = "none"
    shift: Number = 0.0
    scale: Number = 1.0


class ThresholdFold(Saved):
    fold: Count
    n_queries: Count
    threshold: Number | None = None
    fitted_value: Number | None = None
    held_out_value: Number | None = None


class ThresholdCv(Saved):
    """One metric's cross-validated threshold, its pooled out-of-fold score and the in-sample best."""

    threshold: Number | None = None
    value: Number | None = None
    thresholds: tuple[Number | None, ...] = ()
    folds: tuple[ThresholdFold, ...] = ()
    in_sample_threshold: Number | None = None
    in_sample_value: Number | None = None


class ThresholdSweepSection(Saved):
    """``results["threshold_sweep"]``; see the module docstring."""

    schema_: Literal["finegrain.threshold_sweep/1"] = Field(alias="schema")
    spec: Text = ""
    normalisation: Normalisation = Normalisation()
    folds: Count = 0
    seed: Int = 0
    stratified_by: Text = "none"
    n_queries: Count = 0
    max_returned: Count | None = None
    thresholds: tuple[Number, ...]
    metrics: tuple[Text, ...]
    curve: dict[Text, tuple[Number | None, ...]]
    mean_returned: tuple[Number, ...]
    rejected: tuple[Count, ...]
    cross_validation: dict[Text, ThresholdCv] = {}
    method: Text = ""

    @model_validator(mode="after")
    def _one_value_per_threshold(self) -> Self:
        n = len(self.thresholds)
        for name, values in (("mean_returned", self.mean_returned), ("rejected", self.rejected),
                             *((f"curve.{m}", v) for m, v in self.curve.items())):
            if len(values) != n:
                raise ValueError(f"one value per threshold ({name} holds {len(values)} for {n} thresholds)")
        missing = [m for m in self.metrics if m not in self.curve]
        if missing:
            raise ValueError(f"a curve for every metric (none for {', '.join(missing)})")
        return self


__all__ = [
    "CV_SCHEMA", "THRESHOLD_SCHEMA", "CvProvenance", "CvSection", "FoldChoice", "InSample", "MetricCv",
    "Normalisation", "Setting", "ThresholdCv", "ThresholdFold", "ThresholdSweepSection",
]
