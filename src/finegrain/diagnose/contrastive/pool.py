"""Contrastive-pool retrieval (CCD Tables 2 and 4, Fig. 4) and the cosine of each contrastive pair (CCD Fig. 5).

Pairwise FG-CDA asks one question per (pair, query): target or its own
contrastive? CCD also *retrieves*: every query is scored against a pool of
candidates and R@k is the share of queries whose target is in the top k. It
compares two pools (Fig. 4, settings 1 and 3):

- **without negatives** -- the targets of all pairs (the distinct target
  candidates: texts or images, as the direction says);
- **with negatives** -- the same targets plus every pair's contrastive
  candidate, so each target competes with its own near-identical negative
  and everyone else's.

Adding candidates can only push a relevant item down, so R@k with negatives
is never above R@k without; how far it falls is the measure.

Retrieval units. A pair's *item* is its target image when it has one, else
its target candidate; a unit is a distinct (item, query). The relevant
candidates of a unit are the targets of every pair of its item (SugarCrepe
gives several pairs, with different positive captions, for one COCO image:
each of them describes the image). In ``text->text`` a query that is itself a
candidate of the pool (another pair's positive caption) would find itself
at cosine 1, so such units are left out and counted (``n_excluded``).

Rank: ``1 + #{non-relevant candidates in the pool scoring >= the best
relevant one}`` -- a tie with a non-relevant candidate counts against the
target, as a tie fails in FG-CDA. R@k = mean(rank <= k); the interval is a
percentile bootstrap over items (all units of an item go together)
(:func:`~finegrain.diagnose.contrastive.metrics.pair_bootstrap_ci`), and the
change (with - without) is bootstrapped on the paired per-unit differences.

Pair cosine (Fig. 5): ``cos(target, contrastive)`` of each pair, both
encoded as candidates, averaged per dataset category, per CCD category and
overall, with a bootstrap interval over pairs. A high cosine means the
encoder hardly separates the two.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from finegrain.compare.stats import Interval
from finegrain.diagnose.contrastive.categories import CCD_CATEGORIES
from finegrain.diagnose.contrastive.metrics import pair_bootstrap_ci
from finegrain.diagnose.contrastive.records import ContrastPair, Direction, check_direction, expand
from finegrain.diagnose.contrastive.scoring import ImageEncoder, TextEncoder, _encode
from finegrain.errors import FinegrainError
from finegrain.results import probes as saved_kinds

POOL_KS: tuple[int, ...] = (1, 5)
SETTINGS: tuple[str, ...] = ("without negatives", "with negatives")


# --------------------------------------------------------------------------- pure parts


def best_relevant_ranks(scores: np.ndarray, relevant: np.ndarray, active: np.ndarray) -> np.ndarray:
    """1-based rank of each row's best relevant candidate among the ``active`` candidates.

    ``scores`` and ``relevant`` are ``(units, candidates)``; ``active`` is one
    bool per candidate (the pool). ``rank = 1 + #{active, non-relevant, score
    >= best relevant score}``: ties count against the relevant item. Every row
    needs an active relevant candidate.
    """
    s = np.asarray(scores, dtype=np.float64)
    rel = np.asarray(relevant, dtype=bool)
    act = np.asarray(active, dtype=bool)
    if s.ndim != 2 or rel.shape != s.shape or act.shape != (s.shape[1],):
        raise FinegrainError(f"shapes do not fit: scores {s.shape}, relevant {rel.shape}, active {act.shape}",
                             "one relevance flag per score and one active flag per candidate")
    live_rel = rel & act[None, :]
    if not live_rel.any(axis=1).all():
        row = int(np.flatnonzero(~live_rel.any(axis=1))[0])
        raise FinegrainError(f"unit {row} has no relevant candidate in the pool", "every target must be in the pool")
    best = np.where(live_rel, s, -np.inf).max(axis=1, keepdims=True)
    ahead = act[None, :] & ~rel & (s >= best)
    out: np.ndarray = (1 + ahead.sum(axis=1)).astype(np.int64)
    return out


@dataclass(frozen=True)
class RecallAt:
    """R@k of one pool: ``hits`` of ``n`` units have a relevant candidate in the top ``k``."""

    k: int
    hits: int
    n: int
    value: float
    ci: Interval

    def saved(self) -> saved_kinds.RecallAt:
        """As saved in ``results.json``."""
        return saved_kinds.RecallAt(k=self.k, hits=self.hits, n=self.n, value=self.value, ci=(self.ci.low, self.ci.high))


@dataclass(frozen=True)
class RecallChange:
    """R@k with negatives minus R@k without, with a paired bootstrap interval over items."""

    k: int
    delta: float
    ci: Interval
    lost: int  # units in the top k without negatives and out of it with them

    def saved(self) -> saved_kinds.RecallChange:
        """As saved in ``results.json``."""
        return saved_kinds.RecallChange(k=self.k, delta=self.delta, ci=(self.ci.low, self.ci.high), lost=self.lost)


@dataclass(frozen=True)
class PoolSetting:
    """One pool (without or with negatives): its size and R@k per k."""

    name: str
    n_candidates: int
    recall: tuple[RecallAt, ...]

    def saved(self) -> saved_kinds.PoolSetting:
        """As saved in ``results.json``: R@k under the key ``recall@k``."""
        return saved_kinds.PoolSetting.model_validate({"name": self.name, "n_candidates": self.n_candidates,
                                                       **{f"recall@{r.k}": r.saved() for r in self.recall}})


@dataclass(frozen=True)
class PairCosine:
    """Mean cosine of the contrastive pairs of one slice, with its bootstrap interval over pairs."""

    name: str
    n_pairs: int
    mean: float
    ci: Interval
    low: float
    high: float

    def saved(self) -> saved_kinds.PairCosine:
        """As saved in ``results.json``."""
        return saved_kinds.PairCosine(name=self.name, n_pairs=self.n_pairs, mean=self.mean,
                                      ci=(self.ci.low, self.ci.high), min=self.low, max=self.high)


@dataclass(frozen=True)
class PoolUnit:
    """One retrieval unit: a query of an item and where its best relevant candidate ranks in each pool."""

    item: str
    query: str
    n_relevant: int
    rank_without: int
    rank_with: int


@dataclass(frozen=True)
class PoolReport:
    """Contrastive-pool retrieval of one direction, and the pair cosines of its candidates."""

    direction: Direction
    n_items: int
    n_excluded: int  # (item, query) units left out because the query is itself a candidate
    without: PoolSetting
    with_negatives: PoolSetting
    change: tuple[RecallChange, ...]
    cosine_overall: PairCosine
    cosine_by_category: tuple[PairCosine, ...]
    cosine_by_ccd: tuple[PairCosine, ...]
    units: tuple[PoolUnit, ...]

    @property
    def n_units(self) -> int:
        return len(self.units)

    def saved(self, *, units: bool = True) -> saved_kinds.PoolDirection:
        """As saved in ``results.json``; ``units`` keeps every (item, query) unit."""
        kept = {"units": [saved_kinds.PoolUnit(item=u.item, query=u.query, n_relevant=u.n_relevant,
                                               rank_without=u.rank_without, rank_with=u.rank_with)
                          for u in self.units]} if units else {}
        return saved_kinds.PoolDirection(
            direction=self.direction, n_units=self.n_units, n_items=self.n_items,
            n_excluded_query_in_pool=self.n_excluded,
            without_negatives=self.without.saved(), with_negatives=self.with_negatives.saved(),
            change={f"recall@{c.k}": c.saved() for c in self.change},
            pair_cosine=saved_kinds.PairCosines(overall=self.cosine_overall.saved(),
                                                by_category=[c.saved() for c in self.cosine_by_category],
                                                by_ccd_category=[c.saved() for c in self.cosine_by_ccd]),
            **kept,
        )


def recall_at(ranks: np.ndarray, clusters: Sequence[str], k: int, **boot: Any) -> RecallAt:
    hit = (np.asarray(ranks) <= k).astype(np.float64)
    return RecallAt(k, int(hit.sum()), len(hit), float(hit.mean()), pair_bootstrap_ci(hit, clusters, **boot))


def recall_change(without: np.ndarray, with_: np.ndarray, clusters: Sequence[str], k: int, **boot: Any) -> RecallChange:
    a = (np.asarray(without) <= k).astype(np.float64)
    b = (np.asarray(with_) <= k).astype(np.float64)
    d = b - a
    return RecallChange(k, float(d.mean()), pair_bootstrap_ci(d, clusters, **boot), int(((a == 1) & (b == 0)).sum()))


def pair_cosines(values: np.ndarray, pair_ids: Sequence[str], name: str, **boot: Any) -> PairCosine:
    v = np.asarray(values, dtype=np.float64)
    if not len(v):
        raise FinegrainError(f"slice {name!r} has no pairs", "drop empty slices")
    return PairCosine(name, len(v), float(v.mean()), pair_bootstrap_ci(v, pair_ids, **boot),
                      float(v.min()), float(v.max()))


# --------------------------------------------------------------------------- the whole computation


def _candidate_side(direction: Direction, pair: ContrastPair) -> tuple[str, str]:
    """(target, contrastive) candidates of ``pair`` in ``direction`` (texts, or images for text->image)."""
    if direction == "text->image":
        return pair.target_image, pair.contrastive_image  # type: ignore[return-value]
    return pair.target_text, pair.contrastive_text  # type: ignore[return-value]


def item_of(pair: ContrastPair, direction: Direction) -> str:
    """The identity of a pair's target: its image when it has one, else its target candidate."""
    return pair.target_image if pair.target_image is not None else _candidate_side(direction, pair)[0]


def pool_retrieval(
    pairs: Sequence[ContrastPair],
    direction: str,
    text_encoder: TextEncoder,
    image_encoder: ImageEncoder | None = None,
    *,
    ks: Sequence[int] = POOL_KS,
    category_order: Sequence[str] | None = None,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> PoolReport:
    """R@k without and with the contrastive negatives in the pool, and the pair cosines (see the module doc)."""
    d = check_direction(direction)
    if not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise FinegrainError(f"pool cut-offs {list(ks)!r} must be whole numbers >= 1", "e.g. ks=(1, 5)")
    used = [p for p in pairs if d in p.directions()]
    if not used:
        raise FinegrainError(f"no pair supports direction {d}", "see finegrain contrast --help for the fields")
    boot = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    cand_image = d == "text->image"
    query_image = d == "image->text"

    # candidates: targets first (the pool without negatives), then the contrastives that are not targets
    sides = [_candidate_side(d, p) for p in used]
    targets = list(dict.fromkeys(t for t, _ in sides))
    negatives = [c for c in dict.fromkeys(c for _, c in sides) if c not in set(targets)]
    cands = targets + negatives
    col = {c: i for i, c in enumerate(cands)}
    active_without = np.zeros(len(cands), dtype=bool)
    active_without[: len(targets)] = True
    active_with = np.ones(len(cands), dtype=bool)

    # units: distinct (item, query); relevant = the targets of the item's pairs
    relevant_of: dict[str, set[int]] = {}
    for p, (t, _) in zip(used, sides):
        relevant_of.setdefault(item_of(p, d), set()).add(col[t])
    units: dict[tuple[str, str], None] = {}
    excluded: set[tuple[str, str]] = set()
    same_modality = not (cand_image or query_image)
    item_by_pair = {p.pair_id: item_of(p, d) for p in used}
    for r in expand(used, d):
        key = (item_by_pair[r.pair_id], r.query)
        if same_modality and r.query in col:
            excluded.add(key)
        else:
            units.setdefault(key, None)
    unit_keys = list(units)
    if not unit_keys:
        raise FinegrainError(f"no query of direction {d} is left once queries that are themselves candidates "
                             "are set aside", "give queries that differ from every target and contrastive text")

    qv = _encode([q for _, q in unit_keys], query_image, "query", text_encoder, image_encoder)
    cv = _encode(cands, cand_image, "passage", text_encoder, image_encoder)
    scores = qv.astype(np.float64) @ cv.astype(np.float64).T
    relevant = np.zeros(scores.shape, dtype=bool)
    for i, (item, _) in enumerate(unit_keys):
        relevant[i, sorted(relevant_of[item])] = True
    r0 = best_relevant_ranks(scores, relevant, active_without)
    r1 = best_relevant_ranks(scores, relevant, active_with)
    clusters = [item for item, _ in unit_keys]

    # pair cosines, one per pair, in the candidates' modality
    t_idx = np.fromiter((col[t] for t, _ in sides), dtype=np.int64, count=len(used))
    c_idx = np.fromiter((col[c] for _, c in sides), dtype=np.int64, count=len(used))
    cv64 = cv.astype(np.float64)
    cos = np.einsum("ij,ij->i", cv64[t_idx], cv64[c_idx])
    pids = [p.pair_id for p in used]
    cats = np.array([p.category for p in used], dtype=object)
    ccds = np.array([p.ccd_category or "" for p in used], dtype=object)
    present = set(cats.tolist())
    order = [c for c in (category_order or ()) if c in present] + sorted(present - set(category_order or ()))

    def sliced(mask: np.ndarray, name: str) -> PairCosine:
        return pair_cosines(cos[mask], [p for p, m in zip(pids, mask) if m], name, **boot)

    return PoolReport(
        direction=d,
        n_items=len(set(clusters)),
        n_excluded=len(excluded),
        without=PoolSetting(SETTINGS[0], len(targets), tuple(recall_at(r0, clusters, k, **boot) for k in ks)),
        with_negatives=PoolSetting(SETTINGS[1], len(cands), tuple(recall_at(r1, clusters, k, **boot) for k in ks)),
        change=tuple(recall_change(r0, r1, clusters, k, **boot) for k in ks),
        cosine_overall=pair_cosines(cos, pids, "overall", **boot),
        cosine_by_category=tuple(sliced(cats == c, c) for c in order),
        cosine_by_ccd=tuple(sliced(ccds == c, c) for c in CCD_CATEGORIES if (ccds == c).any()),
        units=tuple(PoolUnit(item, q, int(relevant[i].sum()), int(r0[i]), int(r1[i]))
                    for i, (item, q) in enumerate(unit_keys)),
    )
