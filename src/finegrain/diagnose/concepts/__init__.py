"""Concept-level explanations of retrieval failures (explainable-ranking paper, Section 4).

Objects (:class:`ConceptObject`, :class:`ObjectSet`), the metrics CA / NCS / CE / SD
(:func:`concept_scores`, :func:`compare_concepts`), and local / global reports
(:mod:`.report`). Names are imported on first use (WordNet and networkx load lazily).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ConceptObject": "objects",
    "ObjectSet": "objects",
    "read_object_set": "objects",
    "write_object_set": "objects",
    "ConceptScores": "metrics",
    "ConceptComparison": "metrics",
    "concept_scores": "metrics",
    "compare_concepts": "metrics",
    "DEFAULT_TD": "metrics",
    "LocalReport": "report",
    "GlobalReport": "report",
    "local_report": "report",
    "global_report": "report",
}

__all__ = [
    "DEFAULT_TD", "ConceptComparison", "ConceptObject", "ConceptScores", "GlobalReport", "LocalReport",
    "ObjectSet", "compare_concepts", "concept_scores", "global_report", "local_report", "read_object_set",
    "write_object_set",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'finegrain.diagnose.concepts' has no attribute {name!r}")
    return getattr(importlib.import_module(f"finegrain.diagnose.concepts.{module}"), name)
