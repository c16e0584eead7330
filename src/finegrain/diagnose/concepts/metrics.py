"""Concept-level explainable metrics for one retrieval failure: CA, NCS, CE, SD.

After Lymperaiou et al., "Towards explainable evaluation metrics" (explainable-ranking paper,
Section 4.1). A failure pairs the ground-truth image I_g with the wrongly retrieved I_r; each
is an :class:`~.objects.ObjectSet`. V(I) is its set of distinct synsets, V_m(I) the multiset.
Let C = V(I_g) & V(I_r) (common), D_g = V(I_g) - C, D_r = V(I_r) - C.

* **CA** (concept agreement, higher better) = |C| / |V(I_g)|.
* **NCS** (non-common concept similarity, higher better) = average WordNet path similarity over
  the pairs of a maximum-weight bipartite matching between D_g and D_r. The paper prints
  ``D_g = V(g,r) - V(I_r)``, which is always empty; its prose ("concepts present exclusively in
  either") and its zebra example fix the reading used here, D_g = V(I_g) - C. The matching pairs
  every concept of the smaller side (see :mod:`.matching`), and the average is over those
  ``min(|D_g|, |D_r|)`` pairs; this reproduces the paper's example (hill/grassland 0.111,
  tree/grass 0.167, NCS 0.139).
* **CE** (concept enumeration, lower better) = sum over u in C of | |V_u(I_g)| - |V_u(I_r)| |.
* **SD** (size disagreement, lower better) = sum over u in C of the mean DA over the pairs of a
  minimum-weight full matching between the u-objects of I_g and of I_r. The paper's threshold
  "TD = 100 %, DA >= 1" (and its DA values 2.30, 1.369) make DA a *relative* area difference;
  here DA = |A_g - A_r| / min(A_g, A_r), symmetric, so DA >= 1 means one box is at least twice
  the other. The matching minimises the summed DA.
* **SD binary** = share of all matched pairs (over every u) with DA >= TD: the paper's zebra
  example counts 2 of 6 pairs -> 33.3 %.

Empty cases: sums over an empty set are 0 (CE, SD with nothing in common); ratios with an empty
denominator are undefined and returned as ``None`` (CA when V(I_g) is empty, NCS when D_g or
D_r is empty -- the paper requires both non-empty --, SD binary when no pair was matched).

Query-informed variants (``query`` given): both object sets are first restricted to the synsets
the query mentions (:mod:`.query`), then the same definitions apply.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from finegrain.diagnose.concepts.matching import (
    max_weight_matching,
    min_weight_full_matching,
)
from finegrain.diagnose.concepts.objects import ObjectSet
from finegrain.diagnose.concepts.query import mentioned
from finegrain.diagnose.concepts.similarity import path_similarity
from finegrain.errors import FinegrainError

DEFAULT_TD = 1.0  # the paper's TD = 100 %: one box at least twice the other's area


@dataclass(frozen=True, slots=True)
class ConceptScores:
    """The four metrics of one failure (``None`` = undefined, see the module docstring)."""

    ca: float | None
    ncs: float | None
    ce: int
    sd: float
    sd_binary: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ConceptComparison:
    """Everything the metrics looked at for one failure: the local explanation."""

    scores: ConceptScores
    query: str | None
    td: float
    gt_synsets: tuple[str, ...]
    retrieved_synsets: tuple[str, ...]
    common: tuple[str, ...]
    gt_only: tuple[str, ...]
    retrieved_only: tuple[str, ...]
    ncs_pairs: tuple[tuple[str, str, float], ...]  # (gt synset, retrieved synset, path similarity)
    multiplicities: tuple[tuple[str, int, int], ...]  # (common synset, count in I_g, count in I_r)
    size_pairs: tuple[tuple[str, float, float, float], ...]  # (synset, area in I_g, area in I_r, DA)


def concept_agreement(gt: frozenset[str], retrieved: frozenset[str]) -> float | None:
    """CA = |V(I_g) & V(I_r)| / |V(I_g)| (``None`` when I_g has no concept)."""
    return len(gt & retrieved) / len(gt) if gt else None


def ncs_matching(gt_only: tuple[str, ...], retrieved_only: tuple[str, ...]) -> tuple[tuple[str, str, float], ...]:
    """The maximum-weight path-similarity matching between the non-common concepts."""
    if not gt_only or not retrieved_only:
        return ()
    w = np.array([[path_similarity(a, b) for b in retrieved_only] for a in gt_only], dtype=float)
    return tuple((gt_only[i], retrieved_only[j], float(w[i, j])) for i, j in max_weight_matching(w))


def non_common_similarity(gt: frozenset[str], retrieved: frozenset[str]) -> float | None:
    """NCS = mean path similarity of the max-weight matching of D_g and D_r (``None`` if one is empty)."""
    common = gt & retrieved
    pairs = ncs_matching(tuple(sorted(gt - common)), tuple(sorted(retrieved - common)))
    return sum(p[2] for p in pairs) / len(pairs) if pairs else None


def concept_enumeration(gt: ObjectSet, retrieved: ObjectSet) -> int:
    """CE = sum over common synsets of the absolute difference in multiplicity."""
    cg, cr = gt.counts, retrieved.counts
    return sum(abs(cg[u] - cr[u]) for u in cg.keys() & cr.keys())


def area_difference(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray | float:
    """DA = |A_g - A_r| / min(A_g, A_r): relative area difference (areas are positive)."""
    return np.abs(np.subtract(a, b)) / np.minimum(a, b)


def size_pairs(gt: ObjectSet, retrieved: ObjectSet) -> tuple[tuple[str, float, float, float], ...]:
    """Per common synset, the min-weight full matching of its objects by DA: (synset, A_g, A_r, DA)."""
    out = []
    for u in sorted(gt.synsets & retrieved.synsets):
        ag, ar = np.array(gt.areas(u)), np.array(retrieved.areas(u))
        da = area_difference(ag[:, None], ar[None, :])
        out.extend((u, float(ag[i]), float(ar[j]), float(da[i, j])) for i, j in min_weight_full_matching(da))
    return tuple(out)


def size_disagreement(pairs: tuple[tuple[str, float, float, float], ...], td: float = DEFAULT_TD) -> tuple[float, float | None]:
    """``(SD, SD binary)`` from the matched size pairs: sum of per-synset mean DA; share with DA >= td."""
    per: dict[str, list[float]] = {}
    for u, _, _, da in pairs:
        per.setdefault(u, []).append(da)
    sd = float(sum(sum(v) / len(v) for v in per.values()))
    binary = sum(1 for p in pairs if p[3] >= td) / len(pairs) if pairs else None
    return sd, binary


def compare_concepts(gt: ObjectSet, retrieved: ObjectSet, query: str | None = None, *,
                     td: float = DEFAULT_TD) -> ConceptComparison:
    """All metrics of one failure plus what they matched (query-informed when ``query`` is given)."""
    if not (td >= 0):
        raise FinegrainError(f"size threshold td={td!r} must be a non-negative number",
                             "td is a relative area difference: 1.0 = one box twice the other")
    if query is not None:
        keep = mentioned(query, gt.synsets | retrieved.synsets)
        gt, retrieved = gt.restrict(keep), retrieved.restrict(keep)
    vg, vr = gt.synsets, retrieved.synsets
    common = vg & vr
    gt_only, retrieved_only = tuple(sorted(vg - common)), tuple(sorted(vr - common))
    ncs_p = ncs_matching(gt_only, retrieved_only)
    cg, cr = gt.counts, retrieved.counts
    sizes = size_pairs(gt, retrieved)
    sd, sd_bin = size_disagreement(sizes, td)
    scores = ConceptScores(
        ca=concept_agreement(vg, vr),
        ncs=sum(p[2] for p in ncs_p) / len(ncs_p) if ncs_p else None,
        ce=concept_enumeration(gt, retrieved),
        sd=sd,
        sd_binary=sd_bin,
    )
    return ConceptComparison(
        scores=scores, query=query, td=td,
        gt_synsets=tuple(sorted(vg)), retrieved_synsets=tuple(sorted(vr)), common=tuple(sorted(common)),
        gt_only=gt_only, retrieved_only=retrieved_only, ncs_pairs=ncs_p,
        multiplicities=tuple((u, cg[u], cr[u]) for u in sorted(common)),
        size_pairs=sizes,
    )


def concept_scores(gt: ObjectSet, retrieved: ObjectSet, query: str | None = None, *,
                   td: float = DEFAULT_TD) -> ConceptScores:
    """CA, NCS, CE, SD and binary SD of one failure (``gt`` = ground truth I_g, ``retrieved`` = I_r)."""
    return compare_concepts(gt, retrieved, query, td=td).scores
