"""Thumbnails of the album page: made once with Pillow, kept on disk beside the catalog, hot ones in memory.

The disk cache is a folder beside the catalog (``catalog.sqlite`` -> ``catalog.sqlite.thumbs/``).
A thumbnail's key is the photo id, the source file's mtime (ns) and size, and the edge, hashed:
an edited or replaced file gets a new key, a stale entry is never served. Writes go through
:mod:`finegrain.atomic` (a temporary file in the same folder, then renamed), so two workers making the same
thumbnail, or a crash mid-write, never leave a torn JPEG. A folder that cannot be written
(read-only media) leaves the memory cache alone doing the work.

A photo whose file is missing gets :func:`placeholder_svg`, not a broken image.
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections import OrderedDict
from collections.abc import Callable
from html import escape
from pathlib import Path

from finegrain.album.engine.catalog.postgres_schema import is_postgres_url, redact
from finegrain.atomic import write_bytes
from finegrain.errors import FinegrainError
from finegrain.settings import default_cache_dir

THUMB_SIZE = 320
MEMORY_ENTRIES = 2048


def make_thumbnail(path: Path, edge: int = THUMB_SIZE) -> bytes:
    """A JPEG of ``path`` fitting in ``edge`` x ``edge``, turned upright by its EXIF orientation."""
    from PIL import Image, ImageOps

    with Image.open(path) as src:
        src.draft("RGB", (edge, edge))  # JPEG: decode at a reduced scale when possible (much faster)
        im = ImageOps.exif_transpose(src)
        im.thumbnail((edge, edge))
        if im.mode != "RGB":
            im = im.convert("RGB")
        buf = io.BytesIO()
        im.save(buf, "JPEG", quality=82, optimize=True)
    return buf.getvalue()


FACE_SIZE = 160
FACE_MARGIN = 0.35  # of the face box's size on each side: hair and chin, as a person's portrait


def make_face_crop(path: Path, box: tuple[int, int, int, int], edge: int = FACE_SIZE) -> bytes:
    """A square JPEG portrait around ``box`` = (top, right, bottom, left) in the upright image's pixels
    (as the indexer stored it), with a margin, clipped to the image, ``edge`` pixels wide."""
    from PIL import Image, ImageOps

    top, right, bottom, left = box
    with Image.open(path) as src:
        im = ImageOps.exif_transpose(src)
        side = max(right - left, bottom - top) * (1 + 2 * FACE_MARGIN)
        cx, cy = (left + right) / 2, (top + bottom) / 2
        x0, y0 = max(0, int(cx - side / 2)), max(0, int(cy - side / 2))
        x1, y1 = min(im.width, int(cx + side / 2)), min(im.height, int(cy + side / 2))
        if x1 <= x0 or y1 <= y0:
            raise ValueError(f"face box {box} lies outside the {im.width}x{im.height} image")
        face = im.crop((x0, y0, x1, y1))
        face.thumbnail((edge, edge))
        if face.mode != "RGB":
            face = face.convert("RGB")
        buf = io.BytesIO()
        face.save(buf, "JPEG", quality=85)
    return buf.getvalue()


def cache_dir_for(catalog: str | Path) -> Path:
    """The thumbnail folder of a catalog: beside the file, named after it; for a Postgres
    catalog (a ``postgresql://`` URL) a folder named after the URL (without its password) in
    finegrain's cache (``$FINEGRAIN_CACHE``, default ``~/.cache/finegrain``)."""

    if is_postgres_url(catalog):
        shown = redact(str(catalog).strip())
        return default_cache_dir() / "album-thumbs" / hashlib.sha256(shown.encode("utf-8")).hexdigest()[:16]
    path = Path(catalog).resolve()
    return path.parent / (path.name + ".thumbs")


class ThumbCache:
    """JPEG thumbnails keyed by (photo id, file mtime, file size, edge): memory LRU, then disk, then Pillow.

    ``folder`` None keeps thumbnails in memory only. ``stats`` counts where answers came from.
    """

    def __init__(self, folder: Path | None, entries: int = MEMORY_ENTRIES) -> None:
        self.folder = folder
        self._entries = entries
        self._memory: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()
        self.stats = {"memory": 0, "disk": 0, "made": 0, "disk_errors": 0}

    @staticmethod
    def key(photo_id: str, mtime_ns: int, size: int, edge: int) -> str:
        raw = f"{photo_id}\0{mtime_ns}\0{size}\0{edge}".encode()
        return hashlib.sha256(raw).hexdigest()[:40]

    def path_of(self, key: str) -> Path | None:
        return None if self.folder is None else self.folder / key[:2] / f"{key}.jpg"

    def cached(self, photo_id: str, path: Path, edge: int = THUMB_SIZE) -> bytes | None:
        """The thumbnail from memory or disk, None when it has to be made (no Pillow here)."""
        key = self._key_of(photo_id, path, edge)
        with self._lock:
            data = self._memory.get(key)
            if data is not None:
                self._memory.move_to_end(key)
                self.stats["memory"] += 1
                return data
        stored = self.path_of(key)
        if stored is None:
            return None
        try:
            data = stored.read_bytes()
        except OSError:
            return None
        self.stats["disk"] += 1
        self._remember(key, data)
        return data

    def get(self, photo_id: str, path: Path, edge: int = THUMB_SIZE,
            make: Callable[[Path, int], bytes] = make_thumbnail) -> bytes:
        """The thumbnail of ``path``: cached, else made with Pillow (``make``) and stored (disk, memory).
        A picture other than the whole photo (a face crop) passes its own ``make`` and an id of its own."""
        data = self.cached(photo_id, path, edge)
        if data is not None:
            return data
        key = self._key_of(photo_id, path, edge)
        data = make(path, edge)
        self.stats["made"] += 1
        stored = self.path_of(key)
        if stored is not None:
            self._write(stored, data)
        self._remember(key, data)
        return data

    def _key_of(self, photo_id: str, path: Path, edge: int) -> str:
        st = path.stat()
        return self.key(photo_id, st.st_mtime_ns, st.st_size, edge)

    def _remember(self, key: str, data: bytes) -> None:
        with self._lock:
            self._memory[key] = data
            while len(self._memory) > self._entries:
                self._memory.popitem(last=False)

    def _write(self, target: Path, data: bytes) -> None:
        try:
            write_bytes(target, data)
        except (OSError, FinegrainError):
            self.stats["disk_errors"] += 1  # read-only or full: the memory cache still serves it


def placeholder_svg(label: str = "file missing", edge: int = THUMB_SIZE) -> bytes:
    """A neutral picture-frame placeholder with ``label`` (an SVG, so no Pillow needed)."""

    h = edge * 3 // 4
    text = escape(label[:40])
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{edge}" height="{h}" viewBox="0 0 {edge} {h}">'
        f'<rect width="{edge}" height="{h}" fill="#e9ecf0"/>'
        f'<g fill="none" stroke="#9aa4b1" stroke-width="4" stroke-linejoin="round">'
        f'<rect x="{edge // 2 - 40}" y="{h // 2 - 46}" width="80" height="60" rx="6"/>'
        f'<path d="M{edge // 2 - 32} {h // 2 + 6} l20 -22 l14 14 l10 -10 l20 18"/></g>'
        f'<circle cx="{edge // 2 + 18}" cy="{h // 2 - 30}" r="6" fill="#9aa4b1"/>'
        f'<text x="50%" y="{h // 2 + 44}" text-anchor="middle" font-family="sans-serif" font-size="16" '
        f'fill="#5f6b7a">{text}</text></svg>'
    ).encode()
