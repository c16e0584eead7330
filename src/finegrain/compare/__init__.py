"""Comparing systems: ``compare(results)`` -> :class:`Comparison` (bootstrap CIs, paired tests with Holm's
correction, win/tie/loss per query type), plus the statistics (:mod:`.stats`), the labelling of systems
(:mod:`.systems`), roll-ups of query types (:mod:`.rollup`) and what a change of qrels does to each system
(:mod:`.relabel`).

This package is also callable, as :mod:`finegrain.evaluate` is: ``from finegrain import compare`` gives
it, and ``compare([ev1, ev2])`` calls :func:`finegrain.compare.comparison.compare`.
"""

from finegrain._lazy import callable_package
from finegrain.compare.comparison import CompareSettings, Comparison, compare

__all__ = ["CompareSettings", "Comparison", "compare"]


callable_package(__name__, compare)
