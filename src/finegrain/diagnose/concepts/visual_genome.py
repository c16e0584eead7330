"""Visual Genome readers: objects with their WordNet synsets, and region descriptions, per image.

Reads the official VG v1.4 JSON layout (``objects.json`` / ``region_descriptions.json``) or the
first-100-images extracts in ``visual_genome_100`` (``objects_first100.json``,
``region_descriptions_first100.json``). Choices, stated because the metrics depend on them:

* an object annotated with several synsets (``"leg of a chair"`` -> ``chair.n.01``, ``leg.n.01``)
  becomes one concept per synset, each with the object's box: each synset names something
  present in the scene;
* an object without a synset (about 9 % in the sample) carries no concept and is left out;
* objects with a zero-width or zero-height box are left out (they have no size to compare).
"""

from __future__ import annotations

import json
from os import PathLike
from pathlib import Path
from typing import Any

from finegrain.diagnose.concepts.objects import ConceptObject, ObjectSet
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import read_json

OBJECT_FILES = ("objects_first100.json", "objects.json")
REGION_FILES = ("region_descriptions_first100.json", "region_descriptions.json")


def _find(folder: str | PathLike[str], names: tuple[str, ...]) -> Path:
    root = Path(folder)
    if root.is_file():
        return root
    for name in names:
        if (root / name).is_file():
            return root / name
    raise FinegrainError(f"no {' or '.join(names)} in {str(root)!r}",
                         "point to a Visual Genome folder (e.g. <data>/visual_genome_100) or to the JSON file")


def _load(path: Path) -> list[Any]:
    data, _ = read_json(path)
    if not isinstance(data, list):
        raise DataFormatError(path, None, "a JSON list of images", type(data).__name__)
    return data


def _image_id(path: Path, i: int, entry: Any, key: str) -> int:
    if not isinstance(entry, dict) or not isinstance(entry.get(key), int):
        raise DataFormatError(path, None, f"entry {i} to have an integer {key!r}", json.dumps(entry)[:100])
    return entry[key]


def load_vg_objects(folder: str | PathLike[str]) -> dict[int, ObjectSet]:
    """``image_id -> ObjectSet`` from VG objects (synsets as annotated, boxes ``x, y, w, h``)."""
    path = _find(folder, OBJECT_FILES)
    out: dict[int, ObjectSet] = {}
    for i, entry in enumerate(_load(path)):
        image_id = _image_id(path, i, entry, "image_id")
        objs: list[ConceptObject] = []
        for j, ob in enumerate(entry.get("objects") or ()):
            try:
                box = (ob["x"], ob["y"], ob["w"], ob["h"])
                synsets = ob.get("synsets") or ()
            except (KeyError, TypeError):
                raise DataFormatError(path, None, f"image {image_id} object {j} with x, y, w, h, synsets",
                                      json.dumps(ob)[:100]) from None
            if box[2] <= 0 or box[3] <= 0:
                continue
            for s in synsets:
                try:
                    objs.append(ConceptObject(s, tuple(float(v) for v in box)))
                except FinegrainError as e:
                    raise DataFormatError(path, None, f"image {image_id} object {j} to be valid",
                                          f"{json.dumps(ob)[:100]}: {e}") from None
        if image_id in out:
            raise DataFormatError(path, None, "each image_id once", f"image_id {image_id} twice")
        out[image_id] = ObjectSet(tuple(objs))
    return out


def load_vg_regions(folder: str | PathLike[str]) -> dict[int, tuple[str, ...]]:
    """``image_id -> region phrases`` (stripped, empty ones dropped, in file order)."""
    path = _find(folder, REGION_FILES)
    out: dict[int, tuple[str, ...]] = {}
    for i, entry in enumerate(_load(path)):
        image_id = _image_id(path, i, entry, "id")
        regions = entry.get("regions")
        if not isinstance(regions, list):
            raise DataFormatError(path, None, f"image {image_id} to have a 'regions' list", json.dumps(entry)[:100])
        phrases = []
        for j, r in enumerate(regions):
            phrase = r.get("phrase") if isinstance(r, dict) else None
            if not isinstance(phrase, str):
                raise DataFormatError(path, None, f"image {image_id} region {j} with a 'phrase' string",
                                      json.dumps(r)[:100])
            if phrase.strip():
                phrases.append(phrase.strip())
        if image_id in out:
            raise DataFormatError(path, None, "each image id once", f"id {image_id} twice")
        out[image_id] = tuple(phrases)
    return out
