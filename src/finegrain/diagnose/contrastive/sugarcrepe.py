"""SugarCrepe caption pairs, their COCO-mini images and captions, and contrastive pairs from JSONL.

- :func:`read_sugarcrepe` reads upstream ``<category>.json`` files
  (``{"<id>": {"filename", "caption", "negative_caption"}}``, 7 categories).
- :func:`read_local_subset` reads ``subset_with_local_images.jsonl``: the 83
  SugarCrepe pairs whose COCO val2017 image is in ``coco_mini``.
- :func:`read_coco_mini` reads ``coco_mini/coco_mini_joined.jsonl`` (one line
  per image with its five COCO captions).
- :func:`sugarcrepe_pairs` joins the two into
  :class:`~finegrain.diagnose.contrastive.ContrastPair` s: target = the
  positive caption, contrastive = the hard negative, image = the COCO image,
  and queries = the image's *other* COCO captions (the positive caption
  itself is never a query: compared after trimming, lowercasing and collapsing
  spaces, since 8 SugarCrepe positives carry a trailing space COCO lacks).
- :func:`read_contrast_jsonl` reads user pairs, one JSON object a line::

    {"id": "p1", "category": "entity attribute",
     "target": "a red car", "contrastive": "a blue car",
     "queries": ["a red sedan parked"],          # or "query": "..."
     "target_image": "img/1.jpg", "contrastive_image": "img/2.jpg",
     "ccd_category": "entity attribute"}         # optional

  ``category`` is required; texts and images are each optional but a line
  must allow at least one direction. Relative image paths are resolved
  against the file's folder. Errors name the file and line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from finegrain.diagnose.contrastive import SUGARCREPE_TO_CCD, ContrastPair, make_pair
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import (
    DuplicateRecordError,
    get_field,
    iter_jsonl,
    line_of,
    read_json,
)

SUGARCREPE_CATEGORIES: tuple[str, ...] = (
    "add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj",
)
LOCAL_SUBSET = "subset_with_local_images.jsonl"
COCO_MINI_JOINED = "coco_mini_joined.jsonl"


@dataclass(frozen=True)
class SugarCrepePair:
    """One SugarCrepe item: a COCO image's caption and its hard negative."""

    category: str
    id: str
    filename: str
    caption: str
    negative_caption: str


@dataclass(frozen=True)
class CocoImage:
    """A COCO-mini image with its captions; ``image_path`` is absolute."""

    split: str
    image_id: int
    file_name: str
    image_path: str
    captions: tuple[str, ...]


def read_sugarcrepe(folder: str | os.PathLike[str], categories: Sequence[str] | None = None) -> list[SugarCrepePair]:
    """All pairs of the upstream ``<category>.json`` files in ``folder`` (default: the 7 categories)."""
    folder = Path(folder)
    out: list[SugarCrepePair] = []
    for cat in categories or SUGARCREPE_CATEGORIES:
        if cat not in SUGARCREPE_CATEGORIES:
            raise FinegrainError(f"unknown SugarCrepe category {cat!r}", f"use one of {', '.join(SUGARCREPE_CATEGORIES)}")
        path = folder / f"{cat}.json"
        data, text = read_json(path)
        if not isinstance(data, dict):
            raise DataFormatError(path, 1, "a JSON object of id -> pair", type(data).__name__)
        for key, item in data.items():
            line = line_of(text, key)
            if not isinstance(item, dict):
                raise DataFormatError(path, line, f"pair {key!r} to be an object", repr(item))
            out.append(SugarCrepePair(
                cat, str(key),
                get_field(path, line, item, "filename", kind="text"),
                get_field(path, line, item, "caption", kind="text"),
                get_field(path, line, item, "negative_caption", kind="text"),
            ))
    return out


def read_local_subset(path: str | os.PathLike[str]) -> list[SugarCrepePair]:
    """The pairs of ``subset_with_local_images.jsonl`` (fields category, id, filename, caption, negative_caption)."""
    out: list[SugarCrepePair] = []
    for n, obj in iter_jsonl(path):
        cat = get_field(path, n, obj, "category", kind="text")
        if cat not in SUGARCREPE_CATEGORIES:
            raise DataFormatError(path, n, f"category one of {', '.join(SUGARCREPE_CATEGORIES)}", cat)
        out.append(SugarCrepePair(
            cat,
            get_field(path, n, obj, "id"),
            get_field(path, n, obj, "filename", kind="text"),
            get_field(path, n, obj, "caption", kind="text"),
            get_field(path, n, obj, "negative_caption", kind="text"),
        ))
    return out


def read_coco_mini(folder: str | os.PathLike[str]) -> dict[str, CocoImage]:
    """COCO-mini images by file name, from ``coco_mini_joined.jsonl`` (image paths made absolute)."""
    folder = Path(folder)
    path = folder / COCO_MINI_JOINED
    out: dict[str, CocoImage] = {}
    first: dict[str, int] = {}
    for n, obj in iter_jsonl(path):
        name = get_field(path, n, obj, "file_name", kind="text")
        if name in first:
            raise DuplicateRecordError(path, n, first[name], "file_name", name)
        first[name] = n
        caps = get_field(path, n, obj, "captions", kind="list")
        if not caps or not all(isinstance(c, str) for c in caps):
            raise DataFormatError(path, n, "field 'captions' to be a non-empty list of strings", repr(caps))
        out[name] = CocoImage(
            get_field(path, n, obj, "split", kind="text"),
            get_field(path, n, obj, "image_id", kind="int"),
            name,
            str((folder / get_field(path, n, obj, "image_path", kind="text")).resolve()),
            tuple(caps),
        )
    return out


def normalise_caption(text: str) -> str:
    """Caption compared for identity: trimmed, lowercased, inner whitespace collapsed."""
    return " ".join(text.lower().split())


def sugarcrepe_pairs(
    data_root: str | os.PathLike[str],
    *,
    subset: str | os.PathLike[str] | None = None,
) -> list[ContrastPair]:
    """SugarCrepe pairs with a COCO-mini image, as ContrastPairs whose queries are the image's other captions.

    ``subset`` defaults to ``<data_root>/sugarcrepe/subset_with_local_images.jsonl``;
    a pair whose image is not in COCO-mini is an error naming it. Pair ids are
    ``<category>/<id>``; SugarCrepe categories are mapped with
    :data:`~finegrain.diagnose.contrastive.SUGARCREPE_TO_CCD`.
    """
    root = Path(data_root)
    subset_path = Path(subset) if subset is not None else root / "sugarcrepe" / LOCAL_SUBSET
    images = read_coco_mini(root / "coco_mini")
    out: list[ContrastPair] = []
    for sp in read_local_subset(subset_path):
        img = images.get(sp.filename)
        if img is None:
            raise FinegrainError(
                f"{subset_path}: SugarCrepe pair {sp.category}/{sp.id} uses image {sp.filename!r}, "
                "which is not in coco_mini",
                f"keep only pairs whose image is listed in {root / 'coco_mini' / COCO_MINI_JOINED}",
            )
        positive = normalise_caption(sp.caption)
        queries = tuple(c for c in img.captions if normalise_caption(c) != positive)
        out.append(make_pair(
            f"{sp.category}/{sp.id}", sp.category,
            target_text=sp.caption, contrastive_text=sp.negative_caption, queries=queries,
            target_image=img.image_path, mapping=SUGARCREPE_TO_CCD,
            source=f"{subset_path}:{sp.category}/{sp.id}",
        ))
    return out


def read_contrast_jsonl(path: str | os.PathLike[str]) -> list[ContrastPair]:
    """Contrastive pairs from a JSON-lines file (format in the module docstring)."""
    path = Path(path)
    base = path.parent
    out: list[ContrastPair] = []
    first: dict[str, int] = {}
    for n, obj in iter_jsonl(path):
        pid = get_field(path, n, obj, "id") if "id" in obj else f"line{n}"
        if pid in first:
            raise DuplicateRecordError(path, n, first[pid], "id", pid)
        first[pid] = n
        category = get_field(path, n, obj, "category", kind="text")
        if not category.strip():
            raise DataFormatError(path, n, "a non-empty 'category'", repr(category))
        target = _opt_text(path, n, obj, "target")
        contrastive = _opt_text(path, n, obj, "contrastive")
        if "queries" in obj and "query" in obj:
            raise DataFormatError(path, n, "either 'query' or 'queries', not both", "both")
        if "queries" in obj:
            queries = get_field(path, n, obj, "queries", kind="list")
            if not all(isinstance(q, str) and q.strip() for q in queries):
                raise DataFormatError(path, n, "field 'queries' to be a list of non-empty strings", repr(queries))
        elif "query" in obj:
            queries = [get_field(path, n, obj, "query", kind="text")]
        else:
            queries = []
        images = [_opt_image(path, n, obj, key, base) for key in ("target_image", "contrastive_image")]
        ccd = _opt_text(path, n, obj, "ccd_category")
        try:
            pair = make_pair(pid, category, target_text=target, contrastive_text=contrastive, queries=queries,
                             target_image=images[0], contrastive_image=images[1], ccd_category=ccd,
                             source=f"{path}:{n}")
        except FinegrainError as e:
            raise DataFormatError(path, n, "a CCD category in 'ccd_category'", repr(ccd), e.hint) from None
        if not pair.directions():
            raise DataFormatError(
                path, n,
                "fields for at least one direction (target + contrastive + queries; or target_image + "
                "contrastive_image + query; or target_image + target + contrastive)",
                ", ".join(sorted(k for k in obj)),
            )
        out.append(pair)
    if not out:
        raise FinegrainError(f"{path}: no pairs in the file", "write one JSON object per line")
    return out


def _opt_text(path: Path, n: int, obj: dict, key: str) -> str | None:
    if key not in obj or obj[key] is None:
        return None
    value = get_field(path, n, obj, key, kind="text")
    if not value.strip():
        raise DataFormatError(path, n, f"a non-empty {key!r}", repr(value))
    return value


def _opt_image(path: Path, n: int, obj: dict, key: str, base: Path) -> str | None:
    value = _opt_text(path, n, obj, key)
    if value is None:
        return None
    p = Path(value).expanduser()
    p = p if p.is_absolute() else base / p
    if not p.is_file():
        raise DataFormatError(path, n, f"{key!r} to be an existing image file", str(p),
                              "relative paths are resolved against the pairs file's folder")
    return str(p.resolve())
