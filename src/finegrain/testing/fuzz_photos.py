"""Fuzz targets for the album's photo files: the photo reader (pixels + EXIF) and the sidecars.

Seeds are small JPEGs written here with Pillow and piexif, each carrying EXIF
that is right, odd or wrong (a GPS position as one rational instead of three,
zero denominators, a month 13, wrong value types, huge numbers), so the
mutations start from the cases real cameras and editors produce. There is no
reference reading of EXIF; the loader's contract is the oracle: it returns an
:class:`~finegrain.album.engine.files.ImageInfo` whose fields are in range (or None
with the problem listed), or raises a FinegrainError naming the file; any
other exception is a crash.
"""

from __future__ import annotations

import io
import json
import math
import random
from pathlib import Path
from typing import Any

from finegrain.album.engine.files import read_photo, read_sidecar
from finegrain.testing.fuzz import Target

_GOOD_GPS = {1: b"N", 2: ((30, 1), (15, 1), (1234, 100)), 3: b"E", 4: ((120, 1), (9, 1), (3000, 100))}


def _exif_variants(rng: random.Random) -> list[dict[str, Any]]:
    """EXIF dictionaries (piexif layout): one right, the rest each wrong in one or two fields."""
    good = {
        "0th": {271: b"Canon", 272: b"EOS R5", 274: 1, 306: b"2025:05:04 16:40:41"},
        "Exif": {36867: b"2025:05:04 16:40:41", 36881: b"+08:00"},
        "GPS": dict(_GOOD_GPS),
    }
    odd_values: list[tuple[str, int, Any]] = [
        ("GPS", 2, ((30, 1),)),  # a single rational where EXIF wants three (degrees, minutes, seconds)
        ("GPS", 2, ((30, 0), (15, 0), (0, 0))),  # zero denominators
        ("GPS", 2, ((4294967295, 1), (4294967295, 1), (4294967295, 1))),  # far past 90 degrees
        ("GPS", 1, b"Q"),
        ("GPS", 3, b""),
        ("GPS", 4, ((1, 1), (2, 1), (3, 1), (4, 1))),
        ("Exif", 36867, b"2023:13:45 99:99:99"),
        ("Exif", 36867, b"0000:00:00 00:00:00"),
        ("Exif", 36867, b"9999:12:31 23:59:59"),
        ("Exif", 36867, b"\xff\xfe\x00garbage"),
        ("Exif", 36881, b"+99:99"),
        ("Exif", 36881, b"Z"),
        ("0th", 274, 65535),
        ("0th", 274, 0),
        ("0th", 271, b"\xff" * 200),
        ("0th", 306, b""),
    ]
    variants = [good]
    for section, tag, value in odd_values:
        v = {k: dict(d) for k, d in good.items()}
        v[section][tag] = value
        variants.append(v)
    for _ in range(8):  # combinations of two odd fields
        v = {k: dict(d) for k, d in good.items()}
        for section, tag, value in rng.sample(odd_values, 2):
            v[section][tag] = value
        variants.append(v)
    variants.append({"0th": {}, "Exif": {}, "GPS": {}})
    return variants


def _jpeg(exif: dict[str, Any] | None, size: tuple[int, int] = (24, 16)) -> bytes | None:
    from PIL import Image

    im = Image.new("RGB", size, (120, 60, 200))
    buf = io.BytesIO()
    if exif is None:
        im.save(buf, "JPEG", quality=70)
        return buf.getvalue()
    import piexif

    try:
        raw = piexif.dump(exif)
    except Exception:  # piexif refuses some shapes outright; such a seed is skipped
        return None
    im.save(buf, "JPEG", quality=70, exif=raw)
    return buf.getvalue()


def photo_seeds(seed: int = 0) -> tuple[dict[str, bytes], ...]:
    rng = random.Random(seed)
    out = []
    for exif in [None, *_exif_variants(rng)]:
        data = _jpeg(exif)
        if data is not None:
            out.append({"photo.jpg": data})
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGBA", (8, 8), (0, 0, 0, 0)).save(buf, "PNG")
    out.append({"photo.jpg": buf.getvalue()})  # a PNG with a .jpg name
    return tuple(out)


def _check_photo(info: Any) -> tuple[Any, ...]:
    """The contract on a returned record: fields in range, or None."""
    assert info.width > 0 and info.height > 0
    if info.lat is not None or info.lon is not None:
        assert info.lat is not None and info.lon is not None
        assert math.isfinite(info.lat) and -90 <= info.lat <= 90, info.lat
        assert math.isfinite(info.lon) and -180 <= info.lon <= 180, info.lon
    if info.orientation is not None:
        assert 1 <= info.orientation <= 8, info.orientation
    if info.taken_at is not None:
        assert 1 <= info.taken_at.year <= 9999
    for p in info.problems:
        assert isinstance(p.field, str) and isinstance(p.reason, str)
    return (info.width, info.height, info.taken_at, info.lat, info.lon, info.camera, info.orientation)


def photo_target() -> Target:
    return Target("album-photo", photo_seeds(), lambda p: _check_photo(read_photo(p / "photo.jpg")), None)


def sidecar_target() -> Target:
    xmp = (
        '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/"><rdf:Description><dc:description><rdf:Alt>'
        '<rdf:li xml:lang="x-default">紫色的花 in the garden</rdf:li></rdf:Alt></dc:description><dc:subject><rdf:Bag>'
        "<rdf:li>flower</rdf:li><rdf:li>purple</rdf:li></rdf:Bag></dc:subject></rdf:Description></rdf:RDF></x:xmpmeta>"
    ).encode()
    side = json.dumps({"caption": "fried chicken at a night market", "keywords": ["food", "夜市"]}).encode()

    def load(p: Path) -> Any:
        name = "photo.xmp" if (p / "photo.xmp").exists() else "photo.json"
        caption, keywords = read_sidecar(p / name)
        assert caption is None or isinstance(caption, str)
        assert all(isinstance(k, str) and k for k in keywords)
        return caption, keywords

    return Target("album-sidecar", ({"photo.xmp": xmp}, {"photo.json": side}), load, None)


def photo_targets() -> list[Target]:
    return [photo_target(), sidecar_target()]
