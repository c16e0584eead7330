"""Similarity of each record's query to its target and to its contrastive candidate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from finegrain.diagnose.contrastive.records import ContrastRecord, Direction
from finegrain.errors import FinegrainError


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


class MemoEncoder:
    """Text and image encoders behind one in-memory memo, so texts and images scored twice (pairwise
    and in the pool) are encoded once; rows are returned as the wrapped encoder gave them."""

    def __init__(self, text_encoder: TextEncoder, image_encoder: ImageEncoder | None = None) -> None:
        self.text_encoder, self.image_encoder = text_encoder, image_encoder
        self._memo: dict[tuple[str, str], np.ndarray] = {}

    def _get(self, items: Sequence[str], kind: str, fn: Any) -> np.ndarray:
        todo = list(dict.fromkeys(x for x in items if (kind, x) not in self._memo))
        if todo:
            for x, v in zip(todo, np.asarray(fn(todo), dtype=np.float32)):
                self._memo[(kind, x)] = v
        return np.stack([self._memo[(kind, x)] for x in items]) if items else np.zeros((0, 0), np.float32)

    def encode(self, texts: Sequence[str], *, kind: Any) -> np.ndarray:
        return self._get(list(texts), f"text:{kind}", lambda t: self.text_encoder.encode(t, kind=kind))

    def encode_images(self, paths: Sequence[str]) -> np.ndarray:
        if self.image_encoder is None:
            raise FinegrainError("no image encoder", "use --encoder clip:PATH")
        return self._get(list(paths), "image", self.image_encoder.encode_images)


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

