"""Reading photo files: the image walk, content hashes, EXIF (Pillow) and XMP/JSON sidecars.

Pure readers with no catalog in sight, used by :mod:`finegrain.album.indexer`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from finegrain.errors import FinegrainError, MissingDependencyError

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".heic", ".heif")


@dataclass(frozen=True)
class ImageInfo:
    """What is read from the image file itself."""

    width: int
    height: int
    has_exif: bool
    taken_at: datetime | None = None
    tz: str | None = None
    lat: float | None = None
    lon: float | None = None
    camera: str | None = None


def read_image_info(path: Path) -> ImageInfo:
    """Open ``path`` with Pillow and read its EXIF; raises OSError/ValueError for unreadable images."""
    try:
        from PIL import ExifTags, Image
    except ImportError as e:
        raise MissingDependencyError("Pillow", "album") from e
    with Image.open(path) as im:
        width, height = im.size
        exif = im.getexif()
        if not exif:
            return ImageInfo(width, height, False)
        sub = exif.get_ifd(ExifTags.IFD.Exif)
        gps = exif.get_ifd(ExifTags.IFD.GPSInfo)
    raw_time = sub.get(36867) or exif.get(306)  # DateTimeOriginal, DateTime
    raw_tz = sub.get(36881) or sub.get(36880)  # OffsetTimeOriginal, OffsetTime
    taken, tz = _exif_time(raw_time, raw_tz)
    lat = _gps_coord(gps.get(2), gps.get(1), "S")
    lon = _gps_coord(gps.get(4), gps.get(3), "W")
    if lat is None or lon is None or not (-90 <= lat <= 90 and -180 <= lon <= 180):
        lat = lon = None
    make, model = _clean(exif.get(271)), _clean(exif.get(272))
    if make and model:
        camera = model if model.lower().startswith(make.lower()) else f"{make} {model}"
    else:
        camera = make or model
    return ImageInfo(width, height, True, taken, tz, lat, lon, camera)


def _clean(value: Any) -> str | None:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if value is None:
        return None
    text = str(value).replace("\x00", "").strip()
    return text or None


def _exif_time(raw: Any, raw_tz: Any) -> tuple[datetime | None, str | None]:
    text = _clean(raw)
    if not text:
        return None, None
    try:
        t = datetime.strptime(text[:19], "%Y:%m:%d %H:%M:%S")
    except ValueError:
        return None, None
    tz = _clean(raw_tz)
    if tz and len(tz) == 6 and tz[0] in "+-" and tz[3] == ":":
        try:
            sign = 1 if tz[0] == "+" else -1
            offset = timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6]))
            return t.replace(tzinfo=timezone(sign * offset)), tz
        except ValueError:
            pass
    return t, None


def _gps_coord(value: Any, ref: Any, negative: str) -> float | None:
    if not value or len(value) != 3:
        return None
    try:
        deg, minutes, seconds = (float(v) for v in value)
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    out = deg + minutes / 60.0 + seconds / 3600.0
    if _clean(ref) == negative:
        out = -out
    return round(out, 7)


_DC = "{http://purl.org/dc/elements/1.1/}"
_RDF = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}"


def sidecar_for(image: Path) -> Path | None:
    """The sidecar of ``image``: ``IMG.xmp``, ``IMG.JPG.xmp``, ``IMG.json`` or ``IMG.JPG.json`` (first that exists)."""
    for cand in (image.with_suffix(".xmp"), image.with_suffix(".XMP"), Path(f"{image}.xmp"), Path(f"{image}.XMP"),
                 image.with_suffix(".json"), Path(f"{image}.json")):
        if cand.is_file():
            return cand
    return None


def read_sidecar(path: Path) -> tuple[str | None, tuple[str, ...]]:
    """Caption and keywords from an XMP or JSON sidecar; raises FinegrainError naming the file when malformed."""
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise FinegrainError(f"{path}: not valid JSON ({e})", 'write {"caption": "...", "keywords": ["..."]}') from e
        if not isinstance(data, dict):
            raise FinegrainError(f"{path}: expected a JSON object, found {type(data).__name__}",
                                 'write {"caption": "...", "keywords": ["..."]}')
        caption = data.get("caption") or data.get("description")
        keywords = data.get("keywords") or data.get("tags") or []
        if isinstance(keywords, str):
            keywords = [keywords]
        if caption is not None and not isinstance(caption, str) or not isinstance(keywords, list):
            raise FinegrainError(f"{path}: expected \"caption\" as text and \"keywords\" as a list of text",
                                 f"found caption={caption!r}, keywords={keywords!r}")
        return (caption.strip() or None) if caption else None, tuple(str(k).strip() for k in keywords if str(k).strip())
    try:
        root = ElementTree.fromstring(path.read_bytes())
    except ElementTree.ParseError as e:
        raise FinegrainError(f"{path}: not well-formed XMP ({e})", "fix or remove the sidecar") from e
    caption = None
    keywords: list[str] = []
    for desc in root.iter(f"{_RDF}Description"):
        if caption is None and desc.get(f"{_DC}description"):
            caption = desc.get(f"{_DC}description")
    for el in root.iter(f"{_DC}description"):
        texts = [li.text for li in el.iter(f"{_RDF}li") if li.text and li.text.strip()]
        if caption is None and (texts or (el.text and el.text.strip())):
            caption = texts[0] if texts else el.text
    for el in root.iter(f"{_DC}subject"):
        keywords.extend(li.text.strip() for li in el.iter(f"{_RDF}li") if li.text and li.text.strip())
    return (caption.strip() if caption else None), tuple(dict.fromkeys(keywords))


def iter_images(root: Path) -> list[Path]:
    """Image files under ``root`` in sorted order, hidden folders and files skipped."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith(".") and name.lower().endswith(IMAGE_SUFFIXES):
                out.append(Path(dirpath) / name)
    return out


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def register_heif() -> None:
    try:
        import pillow_heif  # type: ignore[import-not-found]
    except ImportError:
        return
    pillow_heif.register_heif_opener()
