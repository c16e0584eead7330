"""Concept-level explanations of retrieval failures (explainable-ranking paper, Section 4).

Objects (:class:`ConceptObject`, :class:`ObjectSet`), the metrics CA / NCS / CE / SD
(:func:`concept_scores`, :func:`compare_concepts`), and local / global reports
(:mod:`.report`). Names are imported on first use (WordNet and networkx load lazily).
"""

from __future__ import annotations

from finegrain._lazy import lazy_exports

__all__ = [
    "DEFAULT_TD", "ConceptComparison", "ConceptObject", "ConceptScores", "GlobalReport", "LocalReport",
    "ObjectSet", "compare_concepts", "concept_scores", "global_report", "local_report", "read_object_set",
    "write_object_set",
]

__getattr__, __dir__ = lazy_exports(__name__, {
    ".objects": "ConceptObject ObjectSet read_object_set write_object_set",
    ".metrics": "ConceptScores ConceptComparison concept_scores compare_concepts DEFAULT_TD",
    ".report": "LocalReport GlobalReport local_report global_report",
})
