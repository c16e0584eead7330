"""Reading photo files: the image walk, the photo folder's confinement, EXIF (Pillow) and XMP/JSON sidecars.

Pure readers with no catalog in sight, used by :mod:`finegrain.album.engine.indexer` and the web
app's file server. :func:`confined` is the one rule every reader of a photo's file or sidecar
applies: links may point anywhere inside the photo folder, never out of it.
"""

from __future__ import annotations

import errno
import io
import math
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from finegrain.errors import FinegrainError, MissingDependencyError
from finegrain.io._lines import read_json

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".heic", ".heif")


@dataclass(frozen=True, slots=True)
class FieldProblem:
    """A metadata field of a readable image that could not be read: ``field`` is one of
    ``exif``, ``time``, ``time zone``, ``GPS``, ``camera``, ``orientation``; ``reason`` says what was found."""

    field: str
    reason: str


@dataclass(frozen=True)
class ImageInfo:
    """What is read from the image file itself. A field that is absent or unreadable is None;
    each unreadable one is listed in ``problems`` (a field that is simply absent is not)."""

    width: int
    height: int
    has_exif: bool
    taken_at: datetime | None = None
    tz: str | None = None
    lat: float | None = None
    lon: float | None = None
    camera: str | None = None
    orientation: int | None = None
    problems: tuple[FieldProblem, ...] = ()

    @property
    def unreadable_fields(self) -> tuple[str, ...]:
        """The names of the fields in ``problems``, in order, without repeats."""
        return tuple(dict.fromkeys(p.field for p in self.problems))


class UnreadableImageError(FinegrainError):
    """A file whose container or pixels cannot be decoded at all (not an image, truncated, corrupt)."""


class PhotoAccessError(FinegrainError):
    """A file that could not be read at this moment (permissions, an I/O error, a placeholder being
    synced): nothing is known about its content, so a catalogued photo must not be dropped for it."""


_DECODE_EDGE = 64  # pixels are checked by decoding a reduced image (JPEG decodes at 1/8 scale)


def read_photo(path: str | Path | bytes) -> ImageInfo:
    """Read one photo file (a path, or the file's bytes): its size, and each metadata field on its own.

    The contract (the album indexer and the fuzz tests rely on it): returns an
    :class:`ImageInfo` for any file whose container opens and whose pixels decode, with
    every metadata field that could not be read set to None and listed in
    ``ImageInfo.problems`` (bad EXIF never makes a photo unreadable); raises
    :class:`UnreadableImageError` (a :class:`~finegrain.errors.FinegrainError`) naming the
    file when it cannot be decoded, :class:`PhotoAccessError` (also a FinegrainError) when
    its bytes cannot be read from disk now, and
    :class:`~finegrain.errors.MissingDependencyError` without Pillow. No other exception.
    """
    with warnings.catch_warnings():
        # malformed EXIF is reported in ``problems``, not as Pillow's "Metadata Warning"s
        warnings.filterwarnings("ignore", category=UserWarning, module=r"PIL\.")
        return _read_photo(path)


def _read_photo(path: str | Path | bytes) -> ImageInfo:
    try:
        from PIL import ExifTags, Image
    except ImportError as e:
        raise MissingDependencyError("Pillow", "album") from e
    if isinstance(path, (bytes, bytearray)):
        data, path = bytes(path), "<bytes>"
    else:
        try:  # read first, so that an OSError below is Pillow's verdict on the content, never the disk's
            data = Path(path).read_bytes()
        except OSError as e:
            raise PhotoAccessError(
                f"{path}: could not be read ({e.strerror or type(e).__name__})",
                "check its permissions, or index again once the file is complete",
            ) from None
    source = io.BytesIO(data)
    problems: list[FieldProblem] = []
    try:
        with Image.open(source) as im:
            width, height = (int(v) for v in im.size)
            exif, sub, gps = _exif_blocks(im, ExifTags, problems)
            im.draft("RGB", (_DECODE_EDGE, _DECODE_EDGE))
            im.load()
    except MemoryError as e:
        raise UnreadableImageError(f"{path}: not a readable image (too large to decode)", "check the file") from e
    except Exception as e:  # Pillow raises many types for broken files  # noqa: BLE001
        raise UnreadableImageError(
            f"{path}: not a readable image ({type(e).__name__}: {e})", "re-export or remove the file"
        ) from e
    if exif is None:
        return ImageInfo(width, height, bool(problems), problems=tuple(problems))
    taken, tz = _field(problems, "time", lambda: _exif_time(sub.get(36867), exif.get(306))) or (None, None)
    if taken is not None:
        tz = _field(problems, "time zone", lambda: _exif_tz(sub.get(36881) or sub.get(36880)))
        if tz is not None:
            taken = taken.replace(tzinfo=_offset(tz))
    lat, lon = _field(problems, "GPS", lambda: _gps(gps)) or (None, None)
    camera = _field(problems, "camera", lambda: _camera(exif.get(271), exif.get(272)))
    orientation = _field(problems, "orientation", lambda: _orientation(exif.get(274)))
    return ImageInfo(width, height, True, taken, tz, lat, lon, camera, orientation, tuple(problems))


class _BadField(ValueError):
    """A field whose stored value is malformed; the message says what was found."""


def _field(problems: list[FieldProblem], name: str, read: Any) -> Any:
    """``read()``, or None with the problem recorded when the field's value is malformed."""
    try:
        return read()
    except Exception as e:  # any oddity of one field stays in that field  # noqa: BLE001
        reason = str(e) if isinstance(e, _BadField) else f"{type(e).__name__}: {e}"
        problems.append(FieldProblem(name, _short(reason)))
        return None


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _exif_blocks(im: Any, tags: Any, problems: list[FieldProblem]) -> tuple[Any, dict[int, Any], dict[int, Any]]:
    """The main EXIF directory and its Exif and GPS sub-directories; a block that cannot be
    read is empty (and reported)."""
    exif = _field(problems, "exif", im.getexif)
    if not exif:
        return None, {}, {}
    sub = _field(problems, "exif", lambda: dict(exif.get_ifd(tags.IFD.Exif))) or {}
    gps = _field(problems, "GPS", lambda: dict(exif.get_ifd(tags.IFD.GPSInfo))) or {}
    return exif, sub, gps


def _clean(value: Any) -> str | None:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if value is None:
        return None
    text = str(value).replace("\x00", "").strip()
    return text or None


def _exif_time(original: Any, fallback: Any) -> tuple[datetime | None, None]:
    """``DateTimeOriginal``, else ``DateTime``; an unset value (zeros, blanks) is absent.
    A malformed value is a problem only when no value gives a time."""
    bad = []
    for tag, raw in (("DateTimeOriginal", original), ("DateTime", fallback)):
        if raw is None:
            continue
        if not isinstance(raw, (str, bytes)):
            bad.append(f"{tag} is {type(raw).__name__} {_short(repr(raw), 40)}, expected text")
            continue
        text = _clean(raw)
        if not text or not text.strip(" :0-"):  # unset: zeros or blanks ("0000:00:00 00:00:00", "    :  :  ...")
            continue
        for layout in ("%Y:%m:%d %H:%M:%S", "%Y-%m-%d %H:%M:%S"):  # the EXIF layout, and the dashed one some tools write
            try:
                return datetime.strptime(text[:19], layout), None
            except ValueError:
                pass
        else:
            bad.append(f"{tag} {_short(repr(text), 40)} is not a date 'YYYY:MM:DD HH:MM:SS'")
    if bad:
        raise _BadField("; ".join(bad))
    return None, None


def _exif_tz(raw: Any) -> str | None:
    """``OffsetTimeOriginal``/``OffsetTime`` as ``+HH:MM`` (None when absent)."""
    tz = _clean(raw) if isinstance(raw, (str, bytes)) else (None if raw is None else repr(raw))
    if tz is None:
        return None
    if not (len(tz) == 6 and tz[0] in "+-" and tz[3] == ":" and tz[1:3].isdigit() and tz[4:6].isdigit()
            and int(tz[1:3]) <= 14 and int(tz[4:6]) < 60):
        raise _BadField(f"time offset {_short(repr(tz), 40)} is not '+HH:MM'")
    return tz


def _offset(tz: str) -> timezone:
    sign = 1 if tz[0] == "+" else -1
    return timezone(sign * timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6])))


def _gps(gps: dict[int, Any]) -> tuple[float, float] | None:
    """Latitude and longitude in decimal degrees (None when the photo has no position)."""
    if gps.get(2) is None and gps.get(4) is None:
        return None
    lat = _gps_coord(gps.get(2), gps.get(1), "N", "S", "latitude")
    lon = _gps_coord(gps.get(4), gps.get(3), "E", "W", "longitude")
    if not -90 <= lat <= 90 or not -180 <= lon <= 180:
        raise _BadField(f"position {lat}, {lon} is outside -90..90, -180..180")
    return lat, lon


def _gps_coord(value: Any, ref: Any, positive: str, negative: str, name: str) -> float:
    if value is None:
        raise _BadField(f"{name} is missing")
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise _BadField(f"{name} is one {type(value).__name__} {_short(repr(value), 40)}, expected 3 values "
                        "(degrees, minutes, seconds)")
    if len(value) != 3:
        raise _BadField(f"{name} has {len(value)} values, expected 3 (degrees, minutes, seconds)")
    try:
        deg, minutes, seconds = (float(v) for v in value)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError) as e:
        raise _BadField(f"{name} {_short(repr(value), 60)} is not three numbers ({e})") from e
    if not all(math.isfinite(v) and v >= 0 for v in (deg, minutes, seconds)):
        raise _BadField(f"{name} {deg}, {minutes}, {seconds} is not three finite non-negative numbers")
    out = deg + minutes / 60.0 + seconds / 3600.0
    direction = _clean(ref) if isinstance(ref, (str, bytes)) else None
    if ref is not None and direction not in (positive, negative):
        raise _BadField(f"{name} reference {_short(repr(ref), 20)} is not {positive!r} or {negative!r}")
    if direction == negative:
        out = -out
    return round(out, 7)


def _camera(make_raw: Any, model_raw: Any) -> str | None:
    make, model = _clean(make_raw), _clean(model_raw)
    if make and model:
        return model if model.lower().startswith(make.lower()) else f"{make} {model}"
    return make or model


def _orientation(raw: Any) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, int) and 1 <= raw <= 8:
        return raw
    raise _BadField(f"orientation {_short(repr(raw), 40)} is not 1-8")


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
        data, _ = read_json(path)  # the one JSON reader: bad UTF-8, invalid, deep or huge JSON are clear errors
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
    subjects: list[str] = []
    for desc in root.iter(f"{_RDF}Description"):
        if caption is None and desc.get(f"{_DC}description"):
            caption = desc.get(f"{_DC}description")
    for el in root.iter(f"{_DC}description"):
        texts = [li.text for li in el.iter(f"{_RDF}li") if li.text and li.text.strip()]
        if caption is None and (texts or (el.text and el.text.strip())):
            caption = texts[0] if texts else el.text
    for el in root.iter(f"{_DC}subject"):
        subjects.extend(li.text.strip() for li in el.iter(f"{_RDF}li") if li.text and li.text.strip())
    return (caption.strip() if caption else None), tuple(dict.fromkeys(subjects))


class OutsideFolderError(FinegrainError):
    """A file whose real path (symlinks followed) lies outside every photo folder of the catalog."""


def resolve_roots(raw_roots: Sequence[str | Path]) -> list[Path]:
    """The photo folders of ``raw_roots`` that exist here, resolved (symlinks followed)."""
    roots: list[Path] = []
    for r in raw_roots:
        try:
            roots.append(Path(r).resolve(strict=True))
        except (OSError, RuntimeError):
            continue
    return roots


def confined(path: str | Path, roots: Sequence[Path]) -> Path:
    """The real path of ``path`` (every symlink followed), which lies inside one of ``roots``
    (resolved folders, :func:`resolve_roots`).

    A photo folder may hold links; one that leads out of it would let whoever can write into the
    folder (a shared or synced folder, a downloaded archive) make the catalog read, and the album
    page show, any file of the machine. So every reader of a photo's file goes through here and
    reads the path it returns. Raises :class:`OutsideFolderError` when the real path lies outside
    every root, :class:`OSError` when ``path`` does not resolve (missing, a broken link, a loop).
    """
    try:
        real = Path(path).resolve(strict=True)
    except RuntimeError as e:  # a symlink loop (Python before 3.13)
        raise OSError(errno.ELOOP, str(e), str(path)) from None
    if not any(real.is_relative_to(root) for root in roots):
        raise OutsideFolderError(
            f"{path}: links to {real}, outside the photo folder {', '.join(str(r) for r in roots) or '(none)'}",
            "move the file into the photo folder, or remove the link",
        )
    return real


def iter_images(root: Path) -> list[Path]:
    """Image files under ``root`` in sorted order, hidden folders and files skipped."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith(".") and name.lower().endswith(IMAGE_SUFFIXES):
                out.append(Path(dirpath) / name)
    return out


def register_heif() -> None:
    try:
        import pillow_heif
    except ImportError:
        return
    pillow_heif.register_heif_opener()
