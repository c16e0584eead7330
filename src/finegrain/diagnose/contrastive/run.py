"""Score contrastive pairs in each direction and report FG-CDA (the entry point of the package)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from finegrain.diagnose.contrastive.ablation import DEFAULT_MIN_PAIRS, AblationTable, ablation_table
from finegrain.diagnose.contrastive.metrics import DirectionReport, report
from finegrain.diagnose.contrastive.pool import POOL_KS, PoolReport, pool_retrieval
from finegrain.diagnose.contrastive.records import (
    ContrastPair,
    Direction,
    check_direction,
    default_directions,
    expand,
)
from finegrain.diagnose.contrastive.scoring import (
    ContrastScores,
    ImageEncoder,
    MemoEncoder,
    TextEncoder,
    score,
)
from finegrain.errors import FinegrainError
from finegrain.results.probes import (
    CONTRAST_SCHEMA,
    ContrastBootstrap,
    ContrastEncoder,
    ContrastPool,
    ContrastResults,
    PairsSource,
)
from finegrain.results.probes import ContrastRecord as SavedRecord

METRIC = ("FG-CDA (Wang et al., CCD, Eq. 1): share of (pair, query) with S(q, target) > S(q, contrastive); "
          "ties fail; FG-CDE = 1 - FG-CDA; CI: percentile bootstrap over pairs")
POOL_PROTOCOL = ("CCD Tables 2/4, Fig. 4: every query scored against a pool of the targets (without negatives) and "
                 "of the targets plus every contrastive candidate (with negatives); relevant = the targets of the "
                 "query's item (its image, else its target); rank = 1 + non-relevant candidates scoring >= the best "
                 "relevant one; R@k = share of units with rank <= k; CI: percentile bootstrap over items; pair "
                 "cosine: cos(target, contrastive) of each pair, encoded as candidates")


@dataclass(frozen=True)
class ContrastOutcome:
    """Reports, scores and ablation tables of every direction run, the directions skipped with the reason,
    and (when asked) the contrastive-pool retrieval of each direction."""

    reports: tuple[DirectionReport, ...]
    scores: tuple[ContrastScores, ...]
    skipped: Mapping[Direction, str] = field(default_factory=dict)
    ablations: tuple[AblationTable, ...] = ()
    pools: tuple[PoolReport, ...] = ()

    def to_results(self, *, version: str, pairs: PairsSource, encoder: ContrastEncoder, bootstrap: ContrastBootstrap,
                   records: bool = True) -> ContrastResults:
        """What ``finegrain contrast`` saves as ``results.json``: the run's header (the finegrain version, where
        the pairs came from, the encoder, the bootstrap) and every section; ``records`` keeps each scored
        (pair, query) unit and each pool unit."""
        optional: dict[str, Any] = {}
        if self.pools:
            optional["pool"] = ContrastPool(protocol=POOL_PROTOCOL,
                                            directions=[p.saved(units=records) for p in self.pools])
        if records:
            optional["records"] = {
                s.direction: [
                    SavedRecord(pair_id=r.pair_id, category=r.category, ccd_category=r.ccd_category, query=r.query,
                                target=r.target, contrastive=r.contrastive, target_score=float(t),
                                contrastive_score=float(c), correct=bool(t > c))
                    for r, t, c in zip(s.records, s.target, s.contrastive)
                ]
                for s in self.scores
            }
        return ContrastResults(
            schema=CONTRAST_SCHEMA, tool="finegrain contrast", version=version, pairs=pairs, encoder=encoder,
            bootstrap=bootstrap, metric=METRIC, directions=[r.saved() for r in self.reports],
            skipped_directions=dict(self.skipped), ablation=[a.saved() for a in self.ablations], **optional,
        )


def run_contrast(
    pairs: Sequence[ContrastPair],
    text_encoder: TextEncoder,
    image_encoder: ImageEncoder | None = None,
    *,
    directions: Sequence[str] | None = None,
    category_order: Sequence[str] | None = None,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    seed: int | None = 0,
    pool: bool = False,
    pool_ks: Sequence[int] = POOL_KS,
    min_pairs: int = DEFAULT_MIN_PAIRS,
) -> ContrastOutcome:
    """Score ``pairs`` in each direction (default: :func:`default_directions`) and report FG-CDA,
    the CCD category x category ablation table, and with ``pool`` the contrastive-pool retrieval.

    An explicitly asked direction the pairs cannot give, or that needs an
    image encoder that is missing, is an error; a default one is skipped.
    """
    if not pairs:
        raise FinegrainError("no contrastive pairs", "give at least one pair")
    has_images = image_encoder is not None
    wanted = tuple(check_direction(d) for d in directions) if directions else None
    todo = wanted or default_directions(pairs, has_images=has_images)
    skipped: dict[Direction, str] = {}
    if not wanted:
        defaults: tuple[Direction, ...] = ("text->image", "image->text") if has_images else ("text->text",)
        for d in defaults:
            if d not in todo:
                skipped[d] = "no pair has the fields this direction needs"
    memo = MemoEncoder(text_encoder, image_encoder)
    images = memo if has_images else None
    reports, all_scores, ablations, pools = [], [], [], []
    for d in todo:
        recs = expand(pairs, d)
        if not recs:
            raise FinegrainError(
                f"no pair supports direction {d}",
                "text->text needs target, contrastive and queries; text->image target_image and contrastive_image; "
                "image->text target_image, target and contrastive",
            )
        s = score(recs, memo, images)
        all_scores.append(s)
        reports.append(report(s, category_order=category_order, n_resamples=n_resamples,
                              confidence=confidence, seed=seed))
        ablations.append(ablation_table(s, category_order=category_order, min_pairs=min_pairs))
        if pool:
            pools.append(pool_retrieval(pairs, d, memo, images, ks=pool_ks, category_order=category_order,
                                        n_resamples=n_resamples, confidence=confidence, seed=seed))
    if not reports:
        raise FinegrainError("no direction can be run on these pairs",
                             "give queries for text->text, or images and an image encoder (clip:PATH)")
    return ContrastOutcome(tuple(reports), tuple(all_scores), skipped, tuple(ablations), tuple(pools))
