"""Contrastive pairs and the (pair, query) records of each direction they give."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import get_args

from finegrain.diagnose.contrastive.categories import CCD_CATEGORIES, canonical_ccd
from finegrain.errors import FinegrainError
from finegrain.results.probes import Direction as Direction  # re-exported: the directions are saved kinds

DIRECTIONS: tuple[Direction, ...] = get_args(Direction)


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
    check_direction(direction)
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


def check_direction(direction: str) -> Direction:
    if direction not in DIRECTIONS:
        raise FinegrainError(f"unknown direction {direction!r}", f"use one of {', '.join(DIRECTIONS)}")
    return direction  # type: ignore[return-value]

