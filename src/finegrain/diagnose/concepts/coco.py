"""COCO readers: instance boxes as WordNet concepts, and captions, per image.

COCO labels objects with 80 category names, not synsets. :func:`coco_synset` maps a name to
WordNet 3.0: the first noun sense of the name (spaces -> ``_``), except where that sense is the
wrong thing -- a bank cheque for ``kite``, a film-style stunt man for ``hot dog``, broadcasting for
``tv`` -- or where WordNet has no entry (``stop sign``, ``sports ball``, ``wine glass``,
``potted plant``, ``cell phone``); :data:`SYNSET_OVERRIDES` lists those explicitly.

Crowd annotations (``iscrowd = 1``: one box around many instances) are left out by default,
since counting one crowd box as one object would corrupt Concept Enumeration.
"""

from __future__ import annotations

import json
from functools import cache
from os import PathLike
from pathlib import Path
from typing import Any

from finegrain.diagnose.concepts.objects import ConceptObject, ObjectSet
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import read_json
from finegrain.lexicons.wordnet import wordnet

# Categories whose first WordNet noun sense is wrong or missing -> the intended synset.
SYNSET_OVERRIDES: dict[str, str] = {
    "stop sign": "street_sign.n.01",          # no entry for 'stop_sign'
    "sports ball": "ball.n.01",               # no entry; ball.n.01 = round object hit or thrown in games
    "kite": "kite.n.03",                      # n.01 is a fraudulent bank cheque
    "wine glass": "wineglass.n.01",           # no entry for 'wine_glass'
    "hot dog": "hotdog.n.02",                 # n.01 is a show-off; n.02 = frankfurter served on a bun
    "cake": "cake.n.03",                      # n.01 is a block of soap or wax
    "potted plant": "pot_plant.n.01",         # no entry for 'potted_plant'
    "tv": "television_receiver.n.01",         # television.n.01 is broadcasting
    "mouse": "mouse.n.04",                    # n.01 is the rodent
    "keyboard": "computer_keyboard.n.01",     # keyboard.n.01 is any keyboard (piano, typewriter)
    "cell phone": "cellular_telephone.n.01",  # no entry for 'cell_phone'
    "microwave": "microwave.n.02",            # n.01 is the electromagnetic wave
    "toaster": "toaster.n.02",                # n.01 is someone who proposes a toast
    "toilet": "toilet.n.02",                  # n.01 is the room
    "book": "book.n.02",                      # n.01 is the written work, not the object
    "banana": "banana.n.02",                  # n.01 is the plant
    "broccoli": "broccoli.n.02",              # n.01 is the plant
}


@cache
def coco_synset(category: str) -> str:
    """WordNet synset name for a COCO category name (override table, else first noun sense)."""
    name = SYNSET_OVERRIDES.get(category)
    if name is not None:
        return name

    senses = wordnet().synsets(category.strip().lower().replace(" ", "_"), "n")
    if not senses:
        raise FinegrainError(f"COCO category {category!r} has no WordNet noun sense",
                             "add it to finegrain.diagnose.concepts.coco.SYNSET_OVERRIDES")
    return str(senses[0].name())


def _instance_files(path: Path, name: str) -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted(path.glob(f"{name}_*.json"))
    if not files:
        raise FinegrainError(f"no {name}_*.json in {str(path)!r}",
                             "point to a COCO annotations folder or to one annotation file")
    return files


def _load(path: Path, keys: tuple[str, ...]) -> dict[str, Any]:
    data, _ = read_json(path)
    missing = [k for k in keys if not isinstance(data, dict) or k not in data]
    if missing:
        raise DataFormatError(path, None, f"a COCO annotation file with {', '.join(keys)}",
                              f"no {', '.join(missing)}")
    return data


def load_coco_objects(path: str | PathLike[str], *, include_crowd: bool = False) -> dict[int, ObjectSet]:
    """``image_id -> ObjectSet`` from COCO instances (one file, or every ``instances_*.json`` of a folder).

    Every image of the file gets an entry (possibly empty). Boxes are COCO's ``[x, y, w, h]``;
    zero-size boxes are left out.
    """
    out: dict[int, list[ConceptObject]] = {}
    for file in _instance_files(Path(path), "instances"):
        data = _load(file, ("images", "annotations", "categories"))
        synsets = {c["id"]: coco_synset(c["name"]) for c in data["categories"]}
        for im in data["images"]:
            out.setdefault(int(im["id"]), [])
        for i, a in enumerate(data["annotations"]):
            try:
                image_id, cat, box = int(a["image_id"]), a["category_id"], a["bbox"]
            except (KeyError, TypeError, ValueError):
                raise DataFormatError(file, None, f"annotations[{i}] with image_id, category_id, bbox",
                                      json.dumps(a)[:100]) from None
            if cat not in synsets:
                raise DataFormatError(file, None, f"annotations[{i}].category_id among the file's categories",
                                      str(cat))
            if (a.get("iscrowd") and not include_crowd) or box[2] <= 0 or box[3] <= 0:
                continue
            out.setdefault(image_id, []).append(ConceptObject(synsets[cat], tuple(float(v) for v in box)))
    return {k: ObjectSet(tuple(v)) for k, v in sorted(out.items())}


def load_coco_captions(path: str | PathLike[str]) -> dict[int, tuple[str, ...]]:
    """``image_id -> captions`` (stripped, in annotation-id order) from COCO caption file(s)."""
    out: dict[int, list[tuple[int, str]]] = {}
    for file in _instance_files(Path(path), "captions"):
        data = _load(file, ("images", "annotations"))
        for im in data["images"]:
            out.setdefault(int(im["id"]), [])
        for i, a in enumerate(data["annotations"]):
            if not isinstance(a, dict) or not isinstance(a.get("caption"), str) or "image_id" not in a:
                raise DataFormatError(file, None, f"annotations[{i}] with image_id and caption",
                                      json.dumps(a)[:100])
            out.setdefault(int(a["image_id"]), []).append((int(a.get("id", i)), a["caption"].strip()))
    return {k: tuple(c for _, c in sorted(v)) for k, v in sorted(out.items())}
