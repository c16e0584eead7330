"""Contrastive discrimination: does the target score above a near-identical contrastive candidate?

Fine-Grained Contrastive Discrimination Accuracy (FG-CDA) of Wang et al.,
"Benchmarking the Fine-Grained Discriminability in Image-Text Retrieval via
Controlled Contrastive Differences" (CCD), Eq. 1::

    FG-CDA = sum_(i,j) sum_k 1[ S(q_k, target_i) > S(q_k, contrastive_j) ]
             / sum_(i,j) (number of queries of the pair)

i.e. the share of (pair, query) where the target is strictly more similar to
the query than the contrastive candidate is (a tie is a failure), and
FG-CDE = 1 - FG-CDA (the paper's Tables 6-9: "the sum of FG-CDE and FG-CDA
equals 100%"). Reported overall, per category, per CCD category and per CCD
top-level group (pooled over the (pair, query) units of the group's
categories), each with its counts and a bootstrap confidence interval that
resamples *pairs* (all queries of a pair go together, since they share the
candidates), see :func:`pair_bootstrap_ci`.

A :class:`ContrastPair` holds a target and its contrastive candidate as text
and/or image, the queries that describe the target, and a category. It gives
records in up to three directions:

- ``text->text``: each query text vs the target and contrastive *texts*
  (queries encoded as ``kind="query"``, candidates as ``kind="passage"``);
- ``text->image``: each query text (or the target text when the pair has no
  queries) vs the target and contrastive *images* (CCD's T2I);
- ``image->text``: the target image vs the target and contrastive texts
  (CCD's I2T; SugarCrepe's own protocol).

With an image encoder (``clip:PATH``) the default directions are the two
cross-modal ones the pairs support; with a text encoder, ``text->text``.

Categories follow CCD's two-level taxonomy (Table 5): entity type / attribute /
relation / emotion, scene type / attribute, event type / attribute, style &
presentation; a dataset may keep its own categories and map them onto the
taxonomy (:data:`SUGARCREPE_TO_CCD`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from finegrain.errors import FinegrainError
from finegrain.evaluate.stats import Interval, batch_size

Direction = Literal["text->text", "text->image", "image->text"]
DIRECTIONS: tuple[Direction, ...] = ("text->text", "text->image", "image->text")

# --------------------------------------------------------------------------- taxonomy

#: CCD Table 5: the nine second-level categories, in the paper's column order, with their group.
CCD_CATEGORIES: tuple[str, ...] = (
    "entity type",
    "entity attribute",
    "entity relation",
    "entity emotion",
    "scene type",
    "scene attribute",
    "event type",
    "event attribute",
    "style & presentation",
)
CCD_GROUPS: Mapping[str, str] = {
    "entity type": "entity",
    "entity attribute": "entity",
    "entity relation": "entity",
    "entity emotion": "entity",
    "scene type": "scene",
    "scene attribute": "scene",
    "event type": "event",
    "event attribute": "event",
    "style & presentation": "style & presentation",
}
GROUP_ORDER: tuple[str, ...] = ("entity", "scene", "event", "style & presentation")

_ALIASES: Mapping[str, str] = {
    "entity attr": "entity attribute",
    "entity rel": "entity relation",
    "entity relationship": "entity relation",
    "emotion": "entity emotion",
    "entity emo": "entity emotion",
    "emotion and mood": "entity emotion",
    "scene attr": "scene attribute",
    "event action type": "event type",
    "action type": "event type",
    "event action attribute": "event attribute",
    "action attribute": "event attribute",
    "event attr": "event attribute",
    "style and presentation": "style & presentation",
    "style presentation": "style & presentation",
    "s&p": "style & presentation",
    "sp": "style & presentation",
    "style": "style & presentation",
}

#: SugarCrepe's seven hard-negative types mapped onto the CCD taxonomy (nearest CCD category).
SUGARCREPE_TO_CCD: Mapping[str, str] = {
    "add_obj": "entity type",
    "replace_obj": "entity type",
    "add_att": "entity attribute",
    "replace_att": "entity attribute",
    "swap_att": "entity attribute",
    "replace_rel": "entity relation",
    "swap_obj": "event attribute",
}
#: Why each SugarCrepe category maps where it does (written into results.json).
SUGARCREPE_MAPPING_NOTES: Mapping[str, str] = {
    "add_obj": "the negative adds an entity the image lacks: which entities are present (entity type)",
    "replace_obj": "one entity replaced by another of a different kind (entity type)",
    "add_att": "the negative adds an attribute (colour, material, ...) to an entity (entity attribute)",
    "replace_att": "an entity's attribute replaced by another (entity attribute)",
    "swap_att": "attributes exchanged between two entities, i.e. attribute binding (entity attribute)",
    "replace_rel": "the relation between entities replaced: spatial ('on' -> 'behind') or interactive "
                   "('holding' -> 'riding'), CCD's entity relation examples; some are actions (event type)",
    "swap_obj": "subject and object exchanged ('a woman prepares a pizza while a man watches' -> the reverse): "
                "CCD's event/action attribute, 'participants ... such as subject and object'",
}


def canonical_ccd(name: str) -> str | None:
    """The CCD category ``name`` denotes (case, ``_``/``-``/``/`` and aliases tolerated), or None."""
    key = " ".join(name.lower().replace("_", " ").replace("-", " ").replace("/", " ").split())
    if key in CCD_GROUPS:
        return key
    return _ALIASES.get(key)


def ccd_group(category: str) -> str:
    """The top-level CCD group (entity, scene, event, style & presentation) of a CCD category."""
    try:
        return CCD_GROUPS[category]
    except KeyError:
        raise FinegrainError(f"{category!r} is not a CCD category", f"use one of {', '.join(CCD_CATEGORIES)}") from None


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class ContrastPair:
    """A target and its contrastive candidate (text and/or image), the queries describing the target, a category.

    ``ccd_category`` is the canonical CCD category (None when the dataset's
    category has no CCD counterpart); ``source`` says where the pair came from
    (``file:line``), for messages.
    """

    pair_id: str
    category: str
    target_text: str | None = None
    contrastive_text: str | None = None
    queries: tuple[str, ...] = ()
    target_image: str | None = None
    contrastive_image: str | None = None
    ccd_category: str | None = None
    source: str = ""

    def directions(self) -> tuple[Direction, ...]:
        """The directions this pair has the fields for."""
        out: list[Direction] = []
        texts = self.target_text is not None and self.contrastive_text is not None
        images = self.target_image is not None and self.contrastive_image is not None
        if texts and self.queries:
            out.append("text->text")
        if images and (self.queries or self.target_text is not None):
            out.append("text->image")
        if texts and self.target_image is not None:
            out.append("image->text")
        return tuple(out)


@dataclass(frozen=True)
class ContrastRecord:
    """One (pair, query) unit of one direction: is ``target`` closer to ``query`` than ``contrastive``?

    ``query``, ``target`` and ``contrastive`` are texts or image paths as the
    direction says (``text->image``: a text query, image candidates).
    """

    pair_id: str
    direction: Direction
    query: str
    target: str
    contrastive: str
    category: str
    ccd_category: str | None


def make_pair(
    pair_id: str,
    category: str,
    *,
    target_text: str | None = None,
    contrastive_text: str | None = None,
    queries: Iterable[str] = (),
    target_image: str | None = None,
    contrastive_image: str | None = None,
    ccd_category: str | None = None,
    mapping: Mapping[str, str] | None = None,
    source: str = "",
) -> ContrastPair:
    """A :class:`ContrastPair` whose CCD category is given, read from ``category``, or looked up in ``mapping``."""
    if ccd_category is not None:
        ccd = canonical_ccd(ccd_category)
        if ccd is None:
            raise FinegrainError(
                f"{source + ': ' if source else ''}ccd_category {ccd_category!r} is not a CCD category",
                f"use one of {', '.join(CCD_CATEGORIES)}",
            )
    else:
        ccd = canonical_ccd(category)
        if ccd is None and mapping is not None and category in mapping:
            ccd = canonical_ccd(mapping[category])
    return ContrastPair(pair_id, category, target_text, contrastive_text, tuple(queries),
                        target_image, contrastive_image, ccd, source)


def expand(pairs: Sequence[ContrastPair], direction: Direction) -> list[ContrastRecord]:
    """The (pair, query) records of ``direction`` for the pairs that support it (others are skipped)."""
    _check_direction(direction)
    out: list[ContrastRecord] = []
    for p in pairs:
        if direction not in p.directions():
            continue
        if direction == "text->text":
            items = [(q, p.target_text, p.contrastive_text) for q in p.queries]
        elif direction == "text->image":
            qs = p.queries or (p.target_text,)
            items = [(q, p.target_image, p.contrastive_image) for q in qs]
        else:
            items = [(p.target_image, p.target_text, p.contrastive_text)]
        out.extend(ContrastRecord(p.pair_id, direction, q, t, c, p.category, p.ccd_category)  # type: ignore[arg-type]
                   for q, t, c in items)
    return out


def default_directions(pairs: Sequence[ContrastPair], *, has_images: bool) -> tuple[Direction, ...]:
    """Cross-modal directions the pairs support when an image encoder is given, else ``text->text``."""
    present = {d for p in pairs for d in p.directions()}
    wanted: tuple[Direction, ...] = ("text->image", "image->text") if has_images else ("text->text",)
    return tuple(d for d in wanted if d in present)


def _check_direction(direction: str) -> Direction:
    if direction not in DIRECTIONS:
        raise FinegrainError(f"unknown direction {direction!r}", f"use one of {', '.join(DIRECTIONS)}")
    return direction  # type: ignore[return-value]


# --------------------------------------------------------------------------- scoring


class TextEncoder(Protocol):
    def encode(self, texts: Sequence[str], *, kind: Any) -> np.ndarray: ...


class ImageEncoder(Protocol):
    def encode_images(self, paths: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class ContrastScores:
    """The records of one direction with the query's similarity to the target and to the contrastive candidate."""

    direction: Direction
    records: tuple[ContrastRecord, ...]
    target: np.ndarray
    contrastive: np.ndarray

    @property
    def correct(self) -> np.ndarray:
        """``target > contrastive`` per record (strict: a tie is a failure, as in CCD Eq. 1)."""
        return self.target > self.contrastive


def score(
    records: Sequence[ContrastRecord],
    text_encoder: TextEncoder,
    image_encoder: ImageEncoder | None = None,
) -> ContrastScores:
    """Cosine similarities of every record's query to its target and contrastive candidate.

    Encoders return unit rows, so the similarity is a dot product. Each
    distinct text or image is encoded once. All records must share one direction.
    """
    if not records:
        raise FinegrainError("no records to score", "check that the pairs have the fields the direction needs")
    direction = records[0].direction
    if any(r.direction != direction for r in records):
        raise FinegrainError("records of several directions passed to score()", "score one direction at a time")
    q_image = direction == "image->text"
    c_image = direction == "text->image"
    if (q_image or c_image) and image_encoder is None:
        raise FinegrainError(f"direction {direction} needs an image encoder",
                             "use --encoder clip:PATH, or --direction text->text")
    queries = _encode([r.query for r in records], q_image, "query", text_encoder, image_encoder)
    cands = _encode([r.target for r in records] + [r.contrastive for r in records], c_image, "passage",
                    text_encoder, image_encoder)
    n = len(records)
    target = np.einsum("ij,ij->i", queries, cands[:n])
    contrastive = np.einsum("ij,ij->i", queries, cands[n:])
    return ContrastScores(direction, tuple(records), target, contrastive)


def _encode(items: list[str], image: bool, kind: str, text_encoder: TextEncoder,
            image_encoder: ImageEncoder | None) -> np.ndarray:
    uniq = list(dict.fromkeys(items))
    row = {x: i for i, x in enumerate(uniq)}
    if image and image_encoder is not None:
        vecs = image_encoder.encode_images(uniq)
    else:
        vecs = text_encoder.encode(uniq, kind=kind)
    vecs = np.asarray(vecs, dtype=np.float32)
    return vecs[np.fromiter((row[x] for x in items), dtype=np.int64, count=len(items))]


# --------------------------------------------------------------------------- accuracy


@dataclass(frozen=True)
class Accuracy:
    """FG-CDA of one slice: counts, the share correct, its bootstrap interval, FG-CDE = 1 - FG-CDA.

    ``n`` counts (pair, query) units, ``n_pairs`` distinct pairs; ``ties``
    units where both scores are equal (counted as failures);
    ``mean_margin`` the mean of target minus contrastive similarity.
    """

    name: str
    n_pairs: int
    n: int
    correct: int
    ties: int
    accuracy: float
    ci: Interval
    mean_margin: float

    @property
    def fg_cde(self) -> float:
        return 1.0 - self.accuracy

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "n_pairs": self.n_pairs,
            "n": self.n,
            "correct": self.correct,
            "ties": self.ties,
            "fg_cda": self.accuracy,
            "fg_cda_ci": [self.ci.low, self.ci.high],
            "fg_cde": self.fg_cde,
            "mean_margin": self.mean_margin,
        }


def pair_bootstrap_ci(
    correct: np.ndarray,
    pair_ids: Sequence[str] | np.ndarray,
    *,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> Interval:
    """Percentile bootstrap interval of FG-CDA, resampling pairs (clusters) with replacement.

    A resample draws ``P`` pairs out of ``P`` and takes
    ``sum(correct of drawn pairs) / sum(units of drawn pairs)``. When every
    pair has one unit this is the ordinary bootstrap of the mean, and draws
    exactly what :func:`finegrain.evaluate.stats.bootstrap_ci` draws for the
    same seed (same generator calls, same batches; pairs are numbered in
    order of first appearance); a constant sample gives ``(v, v)``.
    """
    c = np.asarray(correct, dtype=np.float64)
    if c.ndim != 1 or len(c) != len(pair_ids):
        raise FinegrainError(f"{len(c)} outcomes for {len(pair_ids)} pair ids", "give one pair id per outcome")
    if len(c) == 0:
        raise FinegrainError("cannot bootstrap an empty sample", "give at least one record")
    if not 0.0 < confidence < 1.0:
        raise FinegrainError(f"confidence must be in (0, 1), got {confidence!r}", "e.g. confidence=0.95")
    if n_resamples < 1:
        raise FinegrainError(f"n_resamples must be >= 1, got {n_resamples!r}", "e.g. n_resamples=10000")
    if np.all(c == c[0]):
        return Interval(float(c[0]), float(c[0]))
    code: dict[Any, int] = {}
    inverse = np.fromiter((code.setdefault(p, len(code)) for p in pair_ids), dtype=np.int64, count=len(c))
    hits = np.bincount(inverse, weights=c)
    sizes = np.bincount(inverse).astype(np.float64)
    n_pairs = len(hits)
    rng = np.random.default_rng(seed)
    step = batch_size(n_pairs, n_resamples)
    acc = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        idx = rng.integers(0, n_pairs, (rows, n_pairs))
        acc[start:start + rows] = hits[idx].sum(axis=-1) / sizes[idx].sum(axis=-1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(acc, [alpha, 1.0 - alpha])
    return Interval(float(low), float(high))


def accuracy(
    scores: ContrastScores,
    name: str = "overall",
    mask: np.ndarray | None = None,
    *,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> Accuracy:
    """FG-CDA of the records selected by ``mask`` (all when None)."""
    sel = np.ones(len(scores.records), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    ok = scores.correct[sel]
    pid = np.array([r.pair_id for r in scores.records], dtype=object)[sel]
    margin = (scores.target - scores.contrastive)[sel]
    n = int(sel.sum())
    if n == 0:
        raise FinegrainError(f"slice {name!r} has no records", "drop empty slices before computing FG-CDA")
    return Accuracy(
        name=name,
        n_pairs=len(set(pid.tolist())),
        n=n,
        correct=int(ok.sum()),
        ties=int((scores.target[sel] == scores.contrastive[sel]).sum()),
        accuracy=float(ok.mean()),
        ci=pair_bootstrap_ci(ok, pid.astype(str), n_resamples=n_resamples, confidence=confidence, seed=seed),
        mean_margin=float(margin.mean()),
    )


@dataclass(frozen=True)
class DirectionReport:
    """FG-CDA of one direction: overall, per category, per CCD category and per CCD group."""

    direction: Direction
    overall: Accuracy
    by_category: tuple[Accuracy, ...]
    by_ccd: tuple[Accuracy, ...]
    by_group: tuple[Accuracy, ...]
    unmapped: int  # (pair, query) units whose category has no CCD counterpart

    def to_dict(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "overall": self.overall.to_dict(),
            "by_category": [a.to_dict() for a in self.by_category],
            "by_ccd_category": [a.to_dict() for a in self.by_ccd],
            "by_ccd_group": [a.to_dict() for a in self.by_group],
            "unmapped_units": self.unmapped,
        }


def report(
    scores: ContrastScores,
    *,
    category_order: Sequence[str] | None = None,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> DirectionReport:
    """FG-CDA overall and per slice; categories in ``category_order`` (then the rest, sorted)."""
    kw = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    cats = np.array([r.category for r in scores.records], dtype=object)
    ccds = np.array([r.ccd_category or "" for r in scores.records], dtype=object)
    groups = np.array([CCD_GROUPS.get(c, "") for c in ccds], dtype=object)
    present = set(cats.tolist())
    order = [c for c in (category_order or ()) if c in present] + sorted(present - set(category_order or ()))
    return DirectionReport(
        direction=scores.direction,
        overall=accuracy(scores, "overall", **kw),
        by_category=tuple(accuracy(scores, c, cats == c, **kw) for c in order),
        by_ccd=tuple(accuracy(scores, c, ccds == c, **kw) for c in CCD_CATEGORIES if (ccds == c).any()),
        by_group=tuple(accuracy(scores, g, groups == g, **kw) for g in GROUP_ORDER if (groups == g).any()),
        unmapped=int((ccds == "").sum()),
    )


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
    wanted = tuple(_check_direction(d) for d in directions) if directions else None
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
