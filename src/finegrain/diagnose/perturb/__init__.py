"""Query perturbation with rank-change statistics (explainable-ranking paper, Sec. 5 and Tables 4-5).

``antonym``, ``color-all``, ``color-in``, ``size`` reverse one salient attribute of a
query; ``negation`` and ``typo`` are controls. :func:`run_perturbation` retrieves the
original and perturbed queries in one batch and scores both with the original qrels.
"""

from finegrain.diagnose.perturb.families import (
    FAMILIES,
    Perturbation,
    build_perturbations,
    parse_families,
)
from finegrain.diagnose.perturb.outcome import PerturbOutcome
from finegrain.diagnose.perturb.run import (
    DEFAULT_METRICS,
    PerturbConfig,
    run_perturbation,
    write_outputs,
)

__all__ = [
    "DEFAULT_METRICS",
    "FAMILIES",
    "PerturbConfig",
    "PerturbOutcome",
    "Perturbation",
    "build_perturbations",
    "parse_families",
    "run_perturbation",
    "write_outputs",
]
