"""Scene objects as concepts: a WordNet synset plus a bounding box, and the set of them per image.

The explainable-ranking metrics (CA, NCS, CE, SD; see :mod:`.metrics`) compare the objects of
a ground-truth image with those of a wrongly retrieved one. An object is a
:class:`ConceptObject` (synset name such as ``dog.n.01`` and box ``(x, y, w, h)``); an image's
objects form an :class:`ObjectSet`, a tuple-like multiset (the same synset may occur several
times, which is what Concept Enumeration counts). The JSON form is::

    {"objects": [{"synset": "dog.n.01", "bbox": [x, y, w, h]}, ...]}

A synset is written by its own WordNet name (``dog.n.01``): nltk also reaches it as
``domestic_dog.n.01`` or ``Dog.n.01``, and those names are refused (with the synset's own name as
the hint), since two names of one synset would count as two concepts.

Boxes must have positive width and height: Size Disagreement divides by box areas. Every
coordinate lies within :data:`BOX_LIMIT` pixels of 0 and every side is at least
:data:`MIN_SIDE`, so areas and their ratios stay finite doubles (an area of 1e-200 * 1e-200
is 0, one of 1e200 * 1e200 is inf).
"""

from __future__ import annotations

import json
import math
import re
import reprlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from os import PathLike
from pathlib import Path
from typing import Any, cast, overload

from finegrain.atomic import write_text
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import read_json
from finegrain.lexicons.wordnet import wordnet

BBox = tuple[float, float, float, float]

#: The largest |x|, |y|, width or height of a box, in pixels.
BOX_LIMIT = 1e7
#: The smallest width or height of a box, in pixels.
MIN_SIDE = 1e-7

# lemma.pos.NN -- lemmas may themselves contain dots (``a.d..n.01`` style names are rare but legal).
_SYNSET_NAME = re.compile(r"^\S+\.[nvasr]\.[0-9]{2,}\Z")  # \Z: "$" would let a trailing line break through


@dataclass(frozen=True, slots=True)
class ConceptObject:
    """One object of a scene: its WordNet synset name and its box ``(x, y, w, h)`` in pixels."""

    synset: str
    bbox: BBox

    def __post_init__(self) -> None:
        if not isinstance(self.synset, str) or not _SYNSET_NAME.match(self.synset):
            raise FinegrainError(
                f"bad synset name {self.synset!r}",
                "use a WordNet synset name of the form lemma.pos.NN, e.g. 'dog.n.01'",
            )
        box = self.bbox
        # an int is finite however large (math.isfinite would overflow converting it); the range check bounds it
        if (not isinstance(box, tuple) or len(box) != 4
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                           and (isinstance(v, int) or math.isfinite(v)) for v in box)):
            raise FinegrainError(f"bad bounding box {box!r} for {self.synset}",
                                 "give four finite numbers [x, y, w, h]")
        if box[2] <= 0 or box[3] <= 0:
            raise FinegrainError(f"bounding box {_shown(box)} of {self.synset} has no area",
                                 "width and height must be positive (Size Disagreement divides by areas)")
        if any(abs(v) > BOX_LIMIT for v in box) or min(box[2], box[3]) < MIN_SIDE:
            raise FinegrainError(f"bounding box {_shown(box)} of {self.synset} is outside the pixel range",
                                 f"give x and y within ±{BOX_LIMIT:g} and width and height in [{MIN_SIDE:g}, "
                                 f"{BOX_LIMIT:g}] pixels, so areas and their ratios stay finite")

    @property
    def area(self) -> float:
        """Box area ``w * h``."""
        return float(self.bbox[2]) * float(self.bbox[3])


def _shown(box: tuple[Any, ...]) -> str:
    """``[x, y, w, h]`` for a message, an integer of hundreds of digits cut short."""
    short = reprlib.Repr()
    short.maxlong = 24
    return short.repr(list(box))


@cache
def synset_name(name: str) -> str | None:
    """The name of the WordNet 3.0 synset ``name`` reaches (cached), or None when it reaches none.

    nltk reaches a synset by more than its own name: ``domestic_dog.n.01`` and ``Dog.n.01`` are
    ``dog.n.01``, and ``dog.n.00`` is the last sense of ``dog`` (``andiron.n.01``), because it reads
    the sense number with Python's ``int`` and indexes from the end.
    """
    from nltk.corpus.reader.wordnet import WordNetError

    try:
        return str(wordnet().synset(name).name())
    except (WordNetError, ValueError):
        return None


def synset_exists(name: str) -> bool:
    """Whether ``name`` is the name of a synset of the local WordNet 3.0 (its own name: see :func:`synset_name`)."""
    return synset_name(name) == name


def _synset_hint(name: str) -> str:
    lemma, pos = name.rsplit(".", 2)[0], name.rsplit(".", 2)[1]
    known = [s.name() for s in wordnet().synsets(lemma, pos)][:5]
    if known:
        return f"{lemma!r} has the senses {', '.join(known)}"
    return "check the spelling; synset names look like 'dog.n.01'"


@dataclass(frozen=True, slots=True)
class ObjectSet:
    """The objects of one image, in input order (a multiset of synsets with boxes); tuple-like."""

    objects: tuple[ConceptObject, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.objects, tuple):
            object.__setattr__(self, "objects", tuple(self.objects))

    @classmethod
    def of(cls, items: Iterable[ConceptObject | tuple[str, BBox]]) -> ObjectSet:
        """Build from objects or ``(synset, bbox)`` pairs."""
        return cls(tuple(o if isinstance(o, ConceptObject) else ConceptObject(o[0], cast(BBox, tuple(o[1])))
                         for o in items))

    # tuple protocol
    def __iter__(self) -> Iterator[ConceptObject]:
        return iter(self.objects)

    def __len__(self) -> int:
        return len(self.objects)

    @overload
    def __getitem__(self, i: int) -> ConceptObject: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[ConceptObject, ...]: ...
    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        return self.objects[i]

    # views the metrics use
    @property
    def synsets(self) -> frozenset[str]:
        """The distinct synsets V(I) (a set: what CA and NCS compare)."""
        return frozenset(o.synset for o in self.objects)

    @property
    def counts(self) -> Mapping[str, int]:
        """Multiplicity per synset (the multiset V_m(I) that CE compares)."""
        return Counter(o.synset for o in self.objects)

    def areas(self, synset: str) -> tuple[float, ...]:
        """Box areas of the objects of one synset, in input order."""
        return tuple(o.area for o in self.objects if o.synset == synset)

    def restrict(self, synsets: Iterable[str]) -> ObjectSet:
        """Only the objects whose synset is in ``synsets``."""
        keep = frozenset(synsets)
        return ObjectSet(tuple(o for o in self.objects if o.synset in keep))

    # JSON form
    def to_json(self) -> dict[str, Any]:
        return {"objects": [{"synset": o.synset, "bbox": list(o.bbox)} for o in self.objects]}

    @classmethod
    def from_json(cls, data: Any, source: str = "<json>", *, check_wordnet: bool = True) -> ObjectSet:
        """Parse ``{"objects": [{"synset": ..., "bbox": [x, y, w, h]}]}``.

        Errors name ``source`` and the bad entry (index and value). With ``check_wordnet``,
        every synset must exist in WordNet 3.0.
        """
        if not isinstance(data, Mapping) or "objects" not in data:
            raise DataFormatError(source, None, 'a JSON object {"objects": [...]}',
                                  type(data).__name__ if not isinstance(data, Mapping) else f"keys {sorted(data)}")
        items = data["objects"]
        if not isinstance(items, list):
            raise DataFormatError(source, None, '"objects" to be a list', type(items).__name__)
        out = []
        for i, item in enumerate(items):
            where = f"objects[{i}]"
            if not isinstance(item, Mapping) or "synset" not in item or "bbox" not in item:
                raise DataFormatError(source, None, f'{where} to be {{"synset": "dog.n.01", "bbox": [x, y, w, h]}}',
                                      json.dumps(item)[:100])
            box = item["bbox"]
            if not isinstance(box, list) or len(box) != 4:
                raise DataFormatError(source, None, f"{where}.bbox to be [x, y, w, h]", json.dumps(box)[:100])
            try:
                obj = ConceptObject(item["synset"], tuple(box))
            except FinegrainError as e:
                raise DataFormatError(source, None, f"{where} to be valid: {e.message}", json.dumps(item)[:80],
                                      e.hint) from None
            if check_wordnet and not synset_exists(obj.synset):
                # another name of a synset would count as a concept of its own (CA, CE compare names)
                own = synset_name(obj.synset)
                hint = (f"{obj.synset!r} is another name of {own!r}; write {own!r}" if own is not None
                        else _synset_hint(obj.synset))
                raise DataFormatError(source, None, f"{where}.synset to be the name of a WordNet 3.0 synset",
                                      json.dumps(obj.synset), hint)
            out.append(obj)
        return cls(tuple(out))


def read_object_set(path: str | PathLike[str], *, check_wordnet: bool = True) -> ObjectSet:
    """Read an :class:`ObjectSet` JSON file; errors name the file and the bad entry."""
    p = Path(path)
    data, _ = read_json(p)
    return ObjectSet.from_json(data, str(p), check_wordnet=check_wordnet)


def write_object_set(path: str | PathLike[str], objects: ObjectSet) -> None:
    """Write the JSON form of ``objects``."""
    write_text(path, json.dumps(objects.to_json()) + "\n")
