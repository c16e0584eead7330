"""The album web app: a search page, a JSON search API, thumbnails and photos of one catalog.

Routes of :func:`create_app`:

* ``GET /`` — the page (``templates/index.html``: self-contained HTML, CSS and JS, no CDN);
* ``GET /api/search?q=...[&lang=en|zh][&limit=N]`` — the plan as chips (time, place, people,
  event, visual), ``abstained`` and ``reason``, and the ranked results with thumbnail URLs;
* ``GET /thumb/{photo_id}`` — a JPEG thumbnail (Pillow, EXIF-rotated, cached in memory);
* ``GET /photo/{photo_id}`` — the original file.

Serving files: a photo is reached only by its catalog id. The id gives the catalog row, the
row gives a path (absolute, or relative to a root), the path is resolved (symlinks followed)
and served only when the resolved file lies inside one of the resolved catalog roots. Any id
not in the catalog is 404; a row whose file resolves outside every root is 403. No part of
the URL is ever used as a file path.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager, nullcontext
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

from finegrain.errors import FinegrainError, MissingDependencyError

try:
    from fastapi import FastAPI, HTTPException, Query
    from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("fastapi", "web") from e

THUMB_SIZE = 320
THUMB_CACHE_ENTRIES = 1024
MAX_LIMIT = 500
DEFAULT_LIMIT = 60

SearchFn = Callable[..., Any]


class PhotoRefused(Exception):
    """A photo id that must not be served: ``status`` is 404 (unknown, no file) or 403 (outside the roots)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def resolve_photo_file(store: Any, photo_id: str) -> Path:
    """The file of ``photo_id``, resolved, guaranteed to be a regular file inside a catalog root.

    Raises :class:`PhotoRefused` (404: no such id or no file; 403: the file resolves
    outside every root of the catalog, e.g. through a symlink or a tampered row).
    """
    photo = store.get_photo(photo_id)
    if photo is None:
        raise PhotoRefused(404, "no such photo in the catalog")
    roots: list[Path] = []
    for r in store.roots():
        try:
            roots.append(Path(r).resolve(strict=True))
        except (OSError, RuntimeError):
            continue
    if not roots:
        raise PhotoRefused(404, "the catalog has no photo folder on this machine")
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
            resolved = candidate.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if not any(resolved.is_relative_to(root) for root in roots):
            outside = True
            continue
        if resolved.is_file():
            return resolved
    if outside:
        raise PhotoRefused(403, "the photo's file is outside the catalog's folders")
    raise PhotoRefused(404, "the photo's file is missing")


class _ThumbCache:
    """A bounded LRU of JPEG bytes keyed by (resolved path, mtime, size, edge)."""

    def __init__(self, entries: int = THUMB_CACHE_ENTRIES) -> None:
        self._entries = entries
        self._data: OrderedDict[tuple[str, int, int, int], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: Path, edge: int) -> bytes:
        st = path.stat()
        key = (str(path), st.st_mtime_ns, st.st_size, edge)
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        data = make_thumbnail(path, edge)
        with self._lock:
            self._data[key] = data
            while len(self._data) > self._entries:
                self._data.popitem(last=False)
        return data


def make_thumbnail(path: Path, edge: int = THUMB_SIZE) -> bytes:
    """A JPEG of ``path`` fitting in ``edge`` x ``edge``, turned upright by its EXIF orientation."""
    from PIL import Image, ImageOps

    with Image.open(path) as im:
        im = ImageOps.exif_transpose(im)
        im.thumbnail((edge, edge))
        if im.mode != "RGB":
            im = im.convert("RGB")
        buf = io.BytesIO()
        im.save(buf, "JPEG", quality=82, optimize=True)
    return buf.getvalue()


def plan_chips(plan: Any, people_names: dict[str, str] | None = None) -> list[dict[str, str]]:
    """The plan as chips ``{"kind", "label", "title"}``: time, place, people, event, visual."""
    if plan is None:
        return []
    names = people_names or {}
    chips: list[dict[str, str]] = []
    for t in getattr(plan, "time_ranges", ()):
        span = f"{t.start:%m-%d}..{t.end:%m-%d} every year" if t.every_year else f"{t.start}..{t.end}"
        if t.hours:
            span += f", {t.hours[0]:02d}h-{t.hours[1]:02d}h"
        chips.append({"kind": "time", "label": t.text, "title": f"{span} ({t.rule})"})
    for t in getattr(plan, "impossible_times", ()):
        chips.append({"kind": "time", "label": t.text, "title": f"no such date: {t.reason}"})
    for p in getattr(plan, "places", ()):
        title = f"{p.place.level}: {p.place.name}" + ("" if p.in_album else " (no photos there)")
        chips.append({"kind": "place", "label": p.text, "title": title})
    for p in getattr(plan, "people", ()):
        name = names.get(p.person_id, p.person_id)
        chips.append({"kind": "people", "label": p.text, "title": f"person {name} ({p.person_id})"})
    for role in getattr(plan, "roles", ()):
        chips.append({"kind": "people", "label": role, "title": "a role the album does not resolve"})
    for word in getattr(plan, "event_words", ()):
        chips.append({"kind": "event", "label": word, "title": "event word"})
    visual = getattr(plan, "visual_text", "")
    if visual:
        chips.append({"kind": "visual", "label": visual, "title": "matched against captions and images"})
    return chips


def _ordered_ids(result: Any) -> list[tuple[str, float | None]]:
    """Ranked ids first (engine order), then the rest of the set in id order."""
    out: list[tuple[str, float | None]] = []
    seen: set[str] = set()
    for pid, score in getattr(result, "ranked", ()) or ():
        if pid not in seen:
            seen.add(pid)
            out.append((pid, float(score)))
    for pid in sorted(set(getattr(result, "photo_ids", ()) or ()) - seen):
        out.append((pid, None))
    return out


def _place_label(place: Any, lang: str) -> str | None:
    """"District, City" (or the most precise two levels known) in the query's language."""
    if place is None:
        return None
    order = ("en", "zh") if lang != "zh" else ("zh", "en")
    names: list[str] = []
    for level in ("district", "city", "province", "country"):
        value = next((v for lg in order if (v := getattr(place, f"{level}_{lg}", None))), None)
        if value and value not in names:
            names.append(value)
    if not names:
        return None
    return ("" if lang == "zh" else ", ").join(reversed(names[:2]) if lang == "zh" else names[:2])


def _snapshot(store: Any) -> Any:
    """The store's consistent-read context (``SqliteCatalog.snapshot``), or a no-op without one."""
    snapshot = getattr(store, "snapshot", None)
    return snapshot() if callable(snapshot) else nullcontext()


def _engine_module() -> Any:
    try:
        from finegrain.album import engine
    except ImportError as e:
        raise FinegrainError(
            f"the album search engine cannot be loaded ({e})", "install finegrain with the album extra"
        ) from e
    return engine


def _page_html() -> str:
    return resources.files("finegrain.album.web").joinpath("templates/index.html").read_text(encoding="utf-8")


def create_app(
    catalog_path: str | Path,
    *,
    engine: SearchFn | None = None,
    allowed_hosts: Sequence[str] | None = None,
    engine_options: dict[str, Any] | None = None,
) -> FastAPI:
    """The web app over the catalog at ``catalog_path`` (which must exist).

    ``engine``: ``search(store, query, *, lang=None, **engine_options) -> SearchResult``.
    By default :func:`finegrain.album.engine.search` runs with one
    :class:`~finegrain.album.engine.SearchContext` built on the first query from
    ``engine_options`` (``encoder``, ``vocab``, ``visual_threshold``) and reused after, so the
    vocabulary, times, embeddings and the calibrated threshold are computed once.
    ``allowed_hosts``: accepted ``Host`` headers (the CLI passes the loopback names, which
    blocks DNS-rebinding pages from reaching a local server); None accepts any.
    """
    from finegrain.album.catalog import open_catalog

    store = open_catalog(catalog_path, create=False)
    lock = threading.RLock()
    thumbs = _ThumbCache()
    page = _page_html()
    options = dict(engine_options or {})

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        with lock:
            store.close()

    app = FastAPI(title="finegrain album", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.store = store
    app.state.catalog_path = Path(catalog_path)
    if allowed_hosts is not None:
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))

    contexts: list[Any] = []  # the default engine's SearchContext, made on the first query

    def run_search(query: str, lang: str | None) -> Any:
        if engine is not None:
            return engine(store, query, lang=lang, **options)
        mod = _engine_module()
        if not contexts:
            contexts.append(mod.SearchContext(store, **options))
        return mod.search(store, query, lang=lang, context=contexts[0])

    def file_of(photo_id: str) -> Path:
        with lock:
            try:
                return resolve_photo_file(store, photo_id)
            except PhotoRefused as e:
                raise HTTPException(status_code=e.status, detail=e.detail) from None

    @app.get("/", response_class=HTMLResponse)
    def index() -> HTMLResponse:
        return HTMLResponse(page, headers={"Cache-Control": "no-cache"})

    @app.get("/api/search")
    def api_search(
        q: str = Query(..., max_length=500, description="The query, in Chinese or English."),
        lang: str | None = Query(None, pattern="^(en|zh)$"),
        limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT),
    ) -> JSONResponse:
        query = q.strip()
        if not query:
            raise HTTPException(status_code=400, detail="empty query: type what to look for")
        with lock, _snapshot(store):  # the plan, the set and the rows shown: one state of the catalog
            try:
                result = run_search(query, lang)
            except FinegrainError as e:
                raise HTTPException(status_code=400, detail=str(e)) from None
            plan = getattr(result, "plan", None)
            names = {p.id: p.display_name for p in store.people()}
            ordered = [] if result.abstained else _ordered_ids(result)
            shown = ordered[:limit]
            plan_lang = getattr(plan, "lang", lang or "en")
            items = []
            for pid, score in shown:
                photo = store.get_photo(pid)
                if photo is None:
                    continue
                when = photo.local_time
                items.append({
                    "id": pid,
                    "score": score,
                    "thumb": f"/thumb/{quote(pid, safe='/')}",
                    "photo": f"/photo/{quote(pid, safe='/')}",
                    "taken_at": when.isoformat(sep=" ", timespec="minutes") if when else None,
                    "place": _place_label(store.get_place(pid), plan_lang),
                    "caption": photo.caption,
                })
        body = {
            "query": query,
            "abstained": bool(result.abstained),
            "reason": str(getattr(result, "reason", "") or ""),
            "source": getattr(plan, "source", None),
            "chips": plan_chips(plan, names),
            "plan": plan.to_dict() if plan is not None and hasattr(plan, "to_dict") else None,
            "total": len(ordered),
            "results": items,
        }
        return JSONResponse(body)

    @app.get("/thumb/{photo_id:path}")
    def thumb(photo_id: str) -> Response:
        path = file_of(photo_id)
        try:
            data = thumbs.get(path, THUMB_SIZE)
        except Exception as e:  # a file Pillow cannot decode (or odd EXIF): not a server fault  # noqa: BLE001
            raise HTTPException(status_code=415, detail=f"cannot read the image ({type(e).__name__})") from None
        return Response(data, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})

    @app.get("/photo/{photo_id:path}")
    def photo(photo_id: str) -> FileResponse:
        return FileResponse(file_of(photo_id), headers={"Cache-Control": "private, max-age=3600"})

    return app
