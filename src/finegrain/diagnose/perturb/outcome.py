"""What a perturbation run produces: the perturbed queries' ids, and the results saved as results.json."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from finegrain.diagnose.perturb.families import Perturbation
from finegrain.results.probes import PerturbResults
from finegrain.types import Run

ID_SEP = "~"


@dataclass(frozen=True)
class PerturbOutcome:
    perturbations: tuple[Perturbation, ...]
    run: Run  # originals and perturbed queries (ids qid~family)
    results: PerturbResults  # saved as results.json


def perturbed_ids(perturbations: Sequence[Perturbation], taken: set[str]) -> list[str]:
    """One id per perturbation, ``qid~family``, with ``~`` appended until it is not taken."""
    out: list[str] = []
    used = set(taken)
    for p in perturbations:
        pid = f"{p.qid}{ID_SEP}{p.family}"
        while pid in used:
            pid += ID_SEP
        used.add(pid)
        out.append(pid)
    return out
