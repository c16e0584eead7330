"""Serving photo files by catalog id, never by path.

The id gives the catalog row, the row gives a path (absolute, or relative to a root), the path
is resolved (symlinks followed) and served only when the resolved file lies inside one of the
resolved catalog roots (:func:`finegrain.album.engine.files.confined`, the rule the indexer
applies too). Any id not in the catalog is 404; a row whose file resolves outside every root is
403; a known photo whose file is not on this machine is 404 with ``missing`` set (the page shows
a placeholder for it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from finegrain.album.engine.files import OutsideFolderError, confined, resolve_roots

__all__ = ["PathRow", "PhotoRefused", "resolve_photo_file", "resolve_roots"]


class PhotoRefused(Exception):
    """A photo id that must not be served: ``status`` is 404 (unknown, no file) or 403 (outside the
    roots); ``missing`` is True for a photo the catalog has whose file is not on this machine."""

    def __init__(self, status: int, detail: str, *, missing: bool = False) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.missing = missing


def resolve_photo_file(store: Any, photo_id: str, *, roots: Sequence[Path] | None = None) -> Path:
    """The file of ``photo_id``, resolved, guaranteed to be a regular file inside a catalog root.

    ``store`` needs ``get_photo(id)`` (a record with ``id`` and ``path``) and ``roots()``;
    ``roots``, when given, are the already resolved roots (:func:`resolve_roots`).
    Raises :class:`PhotoRefused` (404: no such id or no file; 403: the file resolves
    outside every root of the catalog, e.g. through a symlink or a tampered row).
    """
    photo = store.get_photo(photo_id)
    if photo is None:
        raise PhotoRefused(404, "no such photo in the catalog")
    if roots is None:
        roots = resolve_roots(store.roots())
    if not roots:
        raise PhotoRefused(404, "the catalog has no photo folder on this machine", missing=True)
    raw = Path(photo.path) if photo.path else None
    candidates: list[Path] = []
    if raw is not None and raw.is_absolute():
        candidates.append(raw)
    elif raw is not None:
        candidates.extend(root / raw for root in roots)
    candidates.extend(root / photo.id for root in roots)  # a folder that moved: ids are root-relative
    outside = False
    for candidate in candidates:
        try:
            resolved = confined(candidate, roots)
        except OutsideFolderError:
            outside = True
            continue
        except OSError:
            continue
        if resolved.is_file():
            return resolved
    if outside:
        raise PhotoRefused(403, "the photo's file is outside the catalog's folders")
    raise PhotoRefused(404, "the photo's file is missing", missing=True)


class PathRow:
    """The two fields of a photo row the file server needs."""

    __slots__ = ("id", "path")

    def __init__(self, photo_id: str, path: str) -> None:
        self.id = photo_id
        self.path = path
