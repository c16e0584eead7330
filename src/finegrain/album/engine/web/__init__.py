"""The album's web page: ``create_app(catalog_path)`` serves a search box, the plan as chips and a
grid of thumbnails over one catalog (``finegrain album serve -c CATALOG``).

Only files inside the catalog's roots are ever served: a photo is reached by its catalog id,
never by a path (see :func:`finegrain.album.engine.web.app.resolve_photo_file`). Needs the ``web``
extra (FastAPI, uvicorn).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from finegrain._lazy import lazy_exports

if TYPE_CHECKING:  # no import-time dependency on FastAPI
    from finegrain.album.engine.web.app import create_app, resolve_photo_file

__all__ = ["create_app", "resolve_photo_file"]

__getattr__, __dir__ = lazy_exports(__name__, {".app": " ".join(__all__)})
