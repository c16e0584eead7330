"""Score contrastive pairs in each direction and report FG-CDA (the entry point of the package)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from finegrain.diagnose.contrastive.metrics import DirectionReport, report
from finegrain.diagnose.contrastive.records import (
    ContrastPair,
    check_direction,
    default_directions,
    expand,
)
from finegrain.diagnose.contrastive.scoring import (
    ContrastScores,
    ImageEncoder,
    TextEncoder,
    score,
)
from finegrain.errors import FinegrainError


@dataclass(frozen=True)
class ContrastOutcome:
    """Reports and scores of every direction run, and the directions skipped with the reason."""

    reports: tuple[DirectionReport, ...]
    scores: tuple[ContrastScores, ...]
    skipped: Mapping[str, str] = field(default_factory=dict)

    def to_json_dict(self, *, records: bool = True) -> dict[str, Any]:
        body: dict[str, Any] = {
            "metric": "FG-CDA (Wang et al., CCD, Eq. 1): share of (pair, query) with S(q, target) > S(q, contrastive); "
                      "ties fail; FG-CDE = 1 - FG-CDA; CI: percentile bootstrap over pairs",
            "directions": [r.to_dict() for r in self.reports],
            "skipped_directions": dict(self.skipped),
        }
        if records:
            body["records"] = {
                s.direction: [
                    {"pair_id": r.pair_id, "category": r.category, "ccd_category": r.ccd_category,
                     "query": r.query, "target": r.target, "contrastive": r.contrastive,
                     "target_score": float(t), "contrastive_score": float(c), "correct": bool(t > c)}
                    for r, t, c in zip(s.records, s.target, s.contrastive)
                ]
                for s in self.scores
            }
        return body


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
) -> ContrastOutcome:
    """Score ``pairs`` in each direction (default: :func:`default_directions`) and report FG-CDA.

    An explicitly asked direction the pairs cannot give, or that needs an
    image encoder that is missing, is an error; a default one is skipped.
    """
    if not pairs:
        raise FinegrainError("no contrastive pairs", "give at least one pair")
    has_images = image_encoder is not None
    wanted = tuple(check_direction(d) for d in directions) if directions else None
    todo = wanted or default_directions(pairs, has_images=has_images)
    skipped: dict[str, str] = {}
    if not wanted:
        for d in (("text->image", "image->text") if has_images else ("text->text",)):
            if d not in todo:
                skipped[d] = "no pair has the fields this direction needs"
    reports, all_scores = [], []
    for d in todo:
        recs = expand(pairs, d)
        if not recs:
            raise FinegrainError(
                f"no pair supports direction {d}",
                "text->text needs target, contrastive and queries; text->image target_image and contrastive_image; "
                "image->text target_image, target and contrastive",
            )
        s = score(recs, text_encoder, image_encoder)
        all_scores.append(s)
        reports.append(report(s, category_order=category_order, n_resamples=n_resamples,
                              confidence=confidence, seed=seed))
    if not reports:
        raise FinegrainError("no direction can be run on these pairs",
                             "give queries for text->text, or images and an image encoder (clip:PATH)")
    return ContrastOutcome(tuple(reports), tuple(all_scores), skipped)
