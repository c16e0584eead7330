"""Comparing systems: ``compare(results)`` -> :class:`Comparison` (bootstrap CIs, paired tests with Holm's
correction, win/tie/loss per query type), plus the statistics (:mod:`.stats`), the labelling of systems
(:mod:`.systems`), roll-ups of query types (:mod:`.rollup`) and what a change of qrels does to each system
(:mod:`.relabel`).

This package is also callable, as :mod:`finegrain.evaluate` is: ``from finegrain import compare`` gives
it, and ``compare([ev1, ev2])`` calls :func:`finegrain.compare.comparison.compare`.
"""

import sys
from types import ModuleType
from typing import Any

from finegrain.compare.comparison import CompareSettings, Comparison, compare

__all__ = ["CompareSettings", "Comparison", "compare"]


class _CallablePackage(ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Comparison:
        return compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
