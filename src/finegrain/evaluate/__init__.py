"""Evaluation: ``evaluate(qrels, run, metrics)`` -> :class:`Evaluation` (per-query values, aggregates, denominators).

This package is also callable: ``from finegrain import evaluate`` gives it, and
``evaluate(qrels, run, ["ndcg@10"])`` calls :func:`finegrain.evaluate.evaluate.evaluate`.
(A package and a function cannot share the name ``finegrain.evaluate``
otherwise: importing any submodule would rebind the name to the package.)
"""

from finegrain._lazy import callable_package
from finegrain.evaluate.evaluate import ExcludedQueriesWarning, evaluate
from finegrain.evaluate.result import Denominators, Evaluation, MetricResult

__all__ = ["Denominators", "Evaluation", "ExcludedQueriesWarning", "MetricResult", "evaluate"]


callable_package(__name__, evaluate)
