"""Evaluation: ``evaluate(qrels, run, metrics)`` -> :class:`Evaluation` (per-query values, aggregates, denominators)."""

from finegrain.evaluate.evaluate import evaluate
from finegrain.evaluate.result import Denominators, Evaluation, MetricResult

__all__ = ["Denominators", "Evaluation", "MetricResult", "evaluate"]
