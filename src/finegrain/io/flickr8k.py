"""Flickr8k captions and splits (Hodosh, Young & Hockenmaier 2013, the ``Flickr8k_text`` files).

A folder holds::

    Flickr8k.token.txt            <image>#<k><TAB><caption>       five captions per image, k = 0..4
    Flickr_8k.trainImages.txt     one image file name per line    (6,000)
    Flickr_8k.devImages.txt                                       (1,000)
    Flickr_8k.testImages.txt                                      (1,000)

Two upstream quirks are handled explicitly, never silently:

* the id ``2258277193_586949ec62.jpg.1#0`` carries caption 0 of
  ``2258277193_586949ec62.jpg`` (whose captions 1-4 are spelled normally); an
  id of the form ``<name>.jpg.<n>`` is read as ``<name>.jpg`` and listed in
  :attr:`Flickr8kCaptions.renamed`;
* that image, ``2258277193_586949ec62.jpg``, is in the token file but in no
  split and not among the 8,091 images of ``Flickr8k_Dataset``
  (:data:`IMAGELESS`), so the ``all`` split leaves it out: ``all`` is the
  8,091 images that have a picture, 40,455 captions.

Every malformed line is a :class:`~finegrain.errors.DataFormatError` naming
the file, the line, what was expected and what was found.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import DuplicateRecordError, PathLike, iter_lines, iter_tokens

TOKEN_FILE = "Flickr8k.token.txt"
SPLIT_FILES = {
    "train": "Flickr_8k.trainImages.txt",
    "dev": "Flickr_8k.devImages.txt",
    "test": "Flickr_8k.testImages.txt",
}
SPLITS = ("test", "dev", "train", "all")

#: Images listed in ``Flickr8k.token.txt`` that have no picture in ``Flickr8k_Dataset`` (and are in no split).
IMAGELESS = frozenset({"2258277193_586949ec62.jpg"})

_TOKEN_ID = re.compile(r"^(?P<image>\S+?)#(?P<k>\d+)$")
_SUFFIXED = re.compile(r"^(?P<base>.+\.jpg)\.\d+$", re.IGNORECASE)
_EXPECTED_LINE = "'<image>#<caption number><TAB><caption>', e.g. '1000268201_693b08cb0e.jpg#0<TAB>A child ...'"


@dataclass(frozen=True)
class Flickr8kCaptions:
    """All captions of a token file: ``captions[image][k]`` is caption number ``k``.

    ``images`` keeps file order; ``renamed`` lists ``(line, id as written, id
    used)`` for every quirk id that was read as another (see the module doc).
    """

    path: str
    images: tuple[str, ...]
    captions: Mapping[str, tuple[str, ...]]
    renamed: tuple[tuple[int, str, str], ...] = ()

    @property
    def n_captions(self) -> int:
        return sum(len(c) for c in self.captions.values())


@dataclass(frozen=True)
class Flickr8kSplit:
    """The images of one split with their captions, in split-file order (token-file order for ``all``)."""

    split: str
    images: tuple[str, ...]
    captions: Mapping[str, tuple[str, ...]]
    source: Flickr8kCaptions

    def items(self) -> list[tuple[str, tuple[str, ...]]]:
        """``[(image, captions), ...]``: the form :mod:`finegrain.diagnose.caption_corpus` takes."""
        return [(im, self.captions[im]) for im in self.images]


def read_flickr8k_captions(path: PathLike) -> Flickr8kCaptions:
    """Parse ``Flickr8k.token.txt``: every image's captions, numbered 0..n-1 without gaps."""
    found: dict[str, dict[int, tuple[str, int]]] = {}
    renamed: list[tuple[int, str, str]] = []
    for n, line in iter_lines(path):
        if not line.strip():
            continue
        if "\t" not in line:
            raise DataFormatError(path, n, _EXPECTED_LINE, line, "separate the caption id and the caption by a TAB")
        cid, caption = line.split("\t", 1)
        m = _TOKEN_ID.match(cid.strip())
        if m is None:
            raise DataFormatError(path, n, "a caption id '<image>#<number>'", cid,
                                  "the id is the image file name, '#', and the caption number 0-4")
        caption = caption.strip()
        if not caption:
            raise DataFormatError(path, n, "a caption after the TAB", line, "remove the line or add its caption")
        image, k = m.group("image"), int(m.group("k"))
        s = _SUFFIXED.match(image)
        if s is not None:
            renamed.append((n, image, s.group("base")))
            image = s.group("base")
        slots = found.setdefault(image, {})
        if k in slots:
            raise DuplicateRecordError(path, n, slots[k][1], "caption id", f"{image}#{k}")
        slots[k] = (caption, n)
    if not found:
        raise DataFormatError(path, None, _EXPECTED_LINE, "no caption line", "is this Flickr8k.token.txt?")
    captions: dict[str, tuple[str, ...]] = {}
    for image, slots in found.items():
        missing = sorted(set(range(max(slots) + 1)) - set(slots))
        if missing:
            first = min(line for _, line in slots.values())
            raise DataFormatError(path, first, f"captions {image}#0..#{max(slots)} without gaps",
                                  f"no caption #{missing[0]} for {image}", "add the missing caption line")
        captions[image] = tuple(slots[k][0] for k in range(len(slots)))
    return Flickr8kCaptions(str(path), tuple(found), MappingProxyType(captions), tuple(renamed))


def read_flickr8k_split(path: PathLike, captions: Flickr8kCaptions | None = None) -> tuple[str, ...]:
    """The image names of a split file, in order; with ``captions``, each must have captions."""
    seen: dict[str, int] = {}
    out: list[str] = []
    for n, name in iter_tokens(path, "one image file name per line"):
        first = seen.setdefault(name, n)
        if first != n:
            raise DuplicateRecordError(path, n, first, "image", repr(name))
        if captions is not None and name not in captions.captions:
            raise DataFormatError(path, n, f"an image with captions in {captions.path}", name,
                                  "the split and the token file come from different releases?")
        out.append(name)
    if not out:
        raise DataFormatError(path, None, "one image file name per line", "an empty file")
    return tuple(out)


def load_flickr8k(folder: PathLike, split: str = "test") -> Flickr8kSplit:
    """The images and captions of ``split`` (``test``, ``dev``, ``train`` or ``all``) from a Flickr8k folder."""
    if split not in SPLITS:
        raise FinegrainError(f"unknown Flickr8k split {split!r}", f"use one of {', '.join(SPLITS)}")
    root = Path(folder)
    if not root.is_dir():
        raise FinegrainError(f"Flickr8k folder {str(root)!r} does not exist",
                             f"point it at the folder holding {TOKEN_FILE} (e.g. $FINEGRAIN_DATA/flickr8k)")
    token = root / TOKEN_FILE
    if not token.is_file():
        raise FinegrainError(f"{str(root)!r} has no {TOKEN_FILE}", "is this the Flickr8k_text folder?")
    caps = read_flickr8k_captions(token)
    if split == "all":
        images = tuple(im for im in caps.images if im not in IMAGELESS)
    else:
        path = root / SPLIT_FILES[split]
        if not path.is_file():
            raise FinegrainError(f"{str(root)!r} has no {SPLIT_FILES[split]}", "use --split all, or add the split file")
        images = read_flickr8k_split(path, caps)
    return Flickr8kSplit(split, images, MappingProxyType({im: caps.captions[im] for im in images}), caps)
