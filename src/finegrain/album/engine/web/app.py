"""The album web app: the page, a JSON API for its views, thumbnails and photos of one catalog.

Routes of :func:`create_app`:

* ``GET /`` — the page (``templates/index.html``: self-contained HTML, CSS and JS, no CDN):
  timeline, search, people, places, map, photo detail;
* ``GET /api/search?q=...[&without=CHIP]...[&lang=en|zh][&limit=N]`` — the plan as chips (time,
  place, people, event, visual), ``abstained``, ``reason`` (and ``outcome`` when the engine
  types it), the ranked results with thumbnail URLs. Each ``without`` removes one chip's words
  from the query (:func:`drop_constraint`) before it runs; the answer's ``query`` is the query run;
* ``GET /api/timeline?before=&limit=`` — photos newest first, one page at a time (``next`` is the
  cursor of the next page; the first page also has the month index);
* ``GET /api/people``, ``GET /api/people/{id}``, ``POST /api/people/{id}`` (``add_names``,
  ``rename``, ``merge``) — face clusters with names by language, counts and a cover;
* ``GET /api/places?lang=`` — cities and their districts with counts, named in ``lang``;
* ``GET /api/map?cell=`` — photo positions binned on a grid, for the offline map;
* ``GET /api/photos?person=|place=&level=|bbox=`` — the photos of one person, place or area;
* ``GET /api/photo/{id}`` — one photo's date, place, people, camera, tags and file state (403, like
  the file itself, when its file lies outside the catalog's folders);
* ``GET /thumb/{photo_id}`` — a JPEG thumbnail (Pillow, EXIF-rotated, cached on disk beside
  the catalog and in memory, :mod:`finegrain.album.engine.web.thumbs`); a photo whose file is missing
  gets an SVG placeholder (200, header ``X-Finegrain-Placeholder: missing``);
* ``GET /photo/{photo_id}`` — the original file.

Every bad parameter is a 4xx answer whose ``detail`` names the value and the fix. Before any
route, :class:`finegrain.web_guard.RequestGuard` answers 400 to a ``Host`` not allowed and 403 to
a state-changing request (``POST /api/people/{id}``) sent by another origin's page.

Files are reached only by catalog id, inside the catalog's roots (:mod:`.files`); no part of
the URL is ever used as a file path. The catalog is a SQLite file or a Postgres database
(``postgresql://`` URL); reads for the views go through a read-only connection per thread
(:mod:`.queries`, the SQL written once for both, :mod:`.dialect`); answers that are costly to
compute (search, month index, people, places, map) are cached per state of the catalog
(SQLite's ``data_version``, the Postgres catalog's change counter), so a commit by anyone (an
index run, ``album people``, the page's own naming) drops them. The
server's settings (keep-alive) are in :mod:`.server`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from finegrain.album.engine import search as engine
from finegrain.album.engine.catalog import catalog_target, open_catalog
from finegrain.album.engine.web.chips import drop_constraint, plan_chips
from finegrain.album.engine.web.files import PathRow, PhotoRefused, resolve_photo_file, resolve_roots
from finegrain.album.engine.web.queries import CatalogReader
from finegrain.album.engine.web.search import SearchProcess, answer_search, json_bytes
from finegrain.album.engine.web.thumbs import (
    FACE_SIZE,
    THUMB_SIZE,
    ThumbCache,
    cache_dir_for,
    make_face_crop,
    make_thumbnail,
    placeholder_svg,
)
from finegrain.errors import FinegrainError, MissingDependencyError, UnknownNameError
from finegrain.web_guard import RequestGuard

try:
    from fastapi import APIRouter, Body, FastAPI, HTTPException, Query
    from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
    from starlette.concurrency import run_in_threadpool as run_in_thread
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("fastapi", "web") from e

__all__ = ["PhotoRefused", "create_app", "drop_constraint", "make_thumbnail", "plan_chips", "resolve_photo_file"]

MAX_LIMIT = 500
DEFAULT_LIMIT = 60
MAX_OFFSET = 10_000_000

SearchFn = Callable[..., Any]


class _VersionedCache:
    """A bounded LRU whose entries belong to one ``data_version`` of the catalog: a new version
    empties it and calls ``on_change`` (which drops the engine's search context)."""

    def __init__(self, on_change: Callable[[], None], entries: int = 1024) -> None:
        self._on_change = on_change
        self._entries = entries
        self._version: int | None = None
        self._data: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def _sync(self, version: int) -> None:
        if version != self._version:
            if self._version is not None:
                self._on_change()
            self._data.clear()
            self._version = version

    def get(self, key: Any, version: int) -> Any:
        with self._lock:
            self._sync(version)
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: Any, version: int, value: Any) -> None:
        with self._lock:
            if version != self._version:
                return  # computed from a state that is already gone
            self._data[key] = value
            while len(self._data) > self._entries:
                self._data.popitem(last=False)



def _page_html() -> str:
    return resources.files("finegrain.album.engine.web").joinpath("templates/index.html").read_text(encoding="utf-8")


def _ui_lang(lang: str | None) -> str:
    return "zh" if lang == "zh" else "en"


class _CatalogFiles:
    """The file server's view of the catalog: the read-only reader's photo rows and roots."""

    def __init__(self, reader: CatalogReader) -> None:
        self._reader = reader

    def get_photo(self, photo_id: str) -> Any:
        row = self._reader.photo_path(photo_id)
        return None if row is None else PathRow(*row)

    def roots(self) -> list[str]:
        return self._reader.roots()


@dataclass(frozen=True)
class _Album:
    """What the routes of one app share, built once by :func:`_open_album`: the catalog (the
    writable store behind ``lock``, the read-only reader), the search engine and its context,
    the answer and thumbnail caches, and the roots resolved once per roots list."""

    target: str | Path
    store: Any
    reader: CatalogReader
    worker: SearchProcess | None
    engine: SearchFn | None
    options: dict[str, Any]
    lock: Any
    thumbs: ThumbCache
    page: str
    files: _CatalogFiles
    roots_seen: dict[tuple[str, ...], list[Path]]
    contexts: list[Any]  # the default engine's SearchContext, made on the first query
    memo: _VersionedCache  # answers per state of the catalog

    @asynccontextmanager
    async def lifespan(self, _app: FastAPI) -> AsyncIterator[None]:
        """Closes the search process and both catalog connections when the server stops."""
        yield
        if self.worker is not None:
            self.worker.close()
        with self.lock:
            self.store.close()
        self.reader.close()

    def run_search(self, query: str, lang: str | None) -> Any:
        if self.engine is not None:
            return self.engine(self.store, query, lang=lang, **self.options)
        if not self.contexts:
            self.contexts.append(engine.SearchContext(self.store, **self.options))
        return engine.search(self.store, query, lang=lang, context=self.contexts[0])

    def search_answer(self, query: str, lang: str | None, limit: int, removed: list[str]) -> bytes:
        """The JSON answer of one search, encoded (in a worker thread of the server)."""
        try:
            return answer_search(self.store, self.reader, self.lock, self.run_search, query, lang, limit, removed)
        except FinegrainError as e:
            raise HTTPException(status_code=400, detail=str(e)) from None

    async def versioned(self, name: str, make: Callable[[], Any]) -> bytes:
        """The JSON of ``make()``, computed (in a worker thread) once per state of the catalog."""
        version = self.reader.data_version()
        data: bytes | None = self.memo.get((name,), version)
        if data is None:
            data = json_bytes(await run_in_thread(make))
            self.memo.put((name,), version, data)
        return data

    async def months(self) -> list[dict[str, Any]]:
        """The month index, computed (in a worker thread) once per state of the catalog."""
        version = self.reader.data_version()
        value: list[dict[str, Any]] | None = self.memo.get(("months",), version)
        if value is None:
            value = await run_in_thread(self.reader.months)
            self.memo.put(("months",), version, value)
        return value

    def person_or_404(self, person_id: str) -> dict[str, Any]:
        person = self.reader.person(person_id)
        if person is None:
            known = [p["id"] for p in self.reader.people()]
            raise HTTPException(status_code=404, detail=str(UnknownNameError("person", person_id, known)))
        return person

    def file_of(self, photo_id: str) -> Path:
        raw = tuple(self.reader.roots())
        if raw not in self.roots_seen:
            self.roots_seen.clear()
            self.roots_seen[raw] = resolve_roots(raw)
        return resolve_photo_file(self.files, photo_id, roots=self.roots_seen[raw])

    def served_file(self, photo_id: str) -> Path:
        try:
            return self.file_of(photo_id)
        except PhotoRefused as e:
            raise HTTPException(status_code=e.status, detail=e.detail) from None

    async def picture(self, photo_id: str, key: str, edge: int, make: Callable[[Path, int], bytes]) -> Response:
        """A cached JPEG made from the photo's file by ``make`` (thumbnail, face crop); a placeholder
        when the file is missing, 415 when Pillow cannot read it."""
        try:
            path = self.file_of(photo_id)
        except PhotoRefused as e:
            if e.missing:
                return Response(placeholder_svg(), media_type="image/svg+xml",
                                headers={"Cache-Control": "no-cache", "X-Finegrain-Placeholder": "missing"})
            raise HTTPException(status_code=e.status, detail=e.detail) from None
        try:
            data = self.thumbs.cached(key, path, edge)
            if data is None:
                data = await run_in_thread(self.thumbs.get, key, path, edge, make)
        except Exception as e:  # a file Pillow cannot decode, odd EXIF, a box outside it: no server fault  # noqa: BLE001
            raise HTTPException(status_code=415, detail=f"cannot read the image ({type(e).__name__})") from None
        return Response(data, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})


def _open_album(
    catalog_path: str | Path,
    engine: SearchFn | None,
    engine_options: dict[str, Any] | None,
    thumb_cache: str | Path | None | bool,
    search_processes: int,
    encoder_name: str | None,
) -> _Album:
    """Opens the catalog (and the search process) for :func:`create_app`; a catalog the page cannot
    read fails here, with nothing left open, rather than on a request."""
    if search_processes and engine is not None:
        raise FinegrainError("a custom engine cannot run in a search process", "pass search_processes=0")
    options = dict(engine_options or {})
    target = catalog_target(catalog_path)
    store = open_catalog(target, create=False)
    reader = CatalogReader(target)  # connects on first use
    try:
        reader.data_version()  # connect now: a catalog the page cannot read fails here, not on a request
        worker = SearchProcess(target, today=options.get("today"), encoder=encoder_name,
                               processes=search_processes) if search_processes else None
    except BaseException:  # nothing left open (a Postgres connection, a file handle)
        store.close()
        reader.close()
        raise
    folder = cache_dir_for(target) if thumb_cache is True else (
        Path(thumb_cache) if thumb_cache else None)
    contexts: list[Any] = []
    return _Album(
        target=target, store=store, reader=reader, worker=worker, engine=engine, options=options, lock=threading.RLock(),
        thumbs=ThumbCache(folder), page=_page_html(), files=_CatalogFiles(reader), roots_seen={},
        contexts=contexts, memo=_VersionedCache(on_change=contexts.clear),
    )


def create_app(
    catalog_path: str | Path,
    *,
    engine: SearchFn | None = None,
    allowed_hosts: Sequence[str] | None = None,
    engine_options: dict[str, Any] | None = None,
    thumb_cache: str | Path | None | bool = True,
    search_processes: int = 0,
    encoder_name: str | None = None,
) -> FastAPI:
    """The web app over the catalog at ``catalog_path`` (which must exist): a SQLite file, or a
    Postgres database given as a ``postgresql://`` URL.

    ``engine``: ``search(store, query, *, lang=None, **engine_options) -> SearchResult``.
    By default :func:`finegrain.album.engine.search` runs with one
    :class:`~finegrain.album.engine.search.SearchContext` built on the first query from
    ``engine_options`` (``encoder``, ``vocab``, ``visual_threshold``) and reused after, so the
    vocabulary, times, embeddings and the calibrated threshold are computed once; naming or
    merging people through the API drops it, so the next query sees the new names.
    ``allowed_hosts``: the host names a ``Host`` header may give, with the port the request came
    in on (the CLI passes the loopback names, which blocks DNS-rebinding pages from reaching a
    local server); None accepts any. Whatever it is, a request that may change state is refused
    when another origin's page sent it (:mod:`finegrain.web_guard`).
    ``thumb_cache``: the thumbnail folder (True: beside the catalog file, or in finegrain's cache
    for a Postgres catalog, see
    :func:`~finegrain.album.engine.web.thumbs.cache_dir_for`; False or None: memory only).
    ``search_processes``: searches that miss the answer cache run in this many worker processes
    (:class:`~finegrain.album.engine.web.search.SearchProcess`; ``album serve`` uses 1), which build
    the encoder named ``encoder_name`` themselves; 0 runs them in a thread of the server.
    """

    album = _open_album(catalog_path, engine, engine_options, thumb_cache, search_processes, encoder_name)
    app = FastAPI(title="finegrain album", docs_url=None, redoc_url=None, openapi_url=None, lifespan=album.lifespan)
    app.state.store = album.store
    app.state.reader = album.reader
    app.state.thumbs = album.thumbs
    app.state.catalog_path = album.target
    app.add_middleware(RequestGuard, allowed_hosts=allowed_hosts)
    for routes in (_page_routes, _search_routes, _people_routes, _place_routes, _photo_routes):
        app.include_router(routes(album))
    return app


def _page_routes(album: _Album) -> APIRouter:
    """``GET /``: the page."""
    router = APIRouter()

    @router.get("/", response_class=HTMLResponse)
    def index() -> HTMLResponse:
        return HTMLResponse(album.page, headers={"Cache-Control": "no-cache"})

    return router


# Hot routes answer on the event loop when the answer is cached (or cheap: a few indexed
# SQLite reads); work that takes longer (a search, a view computed afresh, Pillow) goes to a
# worker thread, so a slow query never holds up thumbnails.
def _search_routes(album: _Album) -> APIRouter:
    """``GET /api/search`` (answers cached per state of the catalog) and ``GET /api/timeline``."""
    router = APIRouter()
    reader, memo, worker = album.reader, album.memo, album.worker

    @router.get("/api/search")
    async def api_search(
        q: str = Query(..., max_length=500, description="The query, in Chinese or English."),
        lang: str | None = Query(None, pattern="^(en|zh)$"),
        limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT),
        without: list[str] = Query([], max_length=20, description="Chip labels to remove from the query."),
    ) -> Response:
        query = q.strip()
        if not query:
            raise HTTPException(status_code=400, detail="empty query: type what to look for")
        removed: list[str] = []
        for label in without:
            try:
                query = drop_constraint(query, label)
            except FinegrainError as e:
                raise HTTPException(status_code=400, detail=str(e)) from None
            removed.append(label)
            if not query:
                return JSONResponse({"query": "", "removed": removed, "cleared": True, "abstained": False,
                                     "reason": "", "source": None, "chips": [], "plan": None, "total": 0,
                                     "results": []})
        key = ("search", query, lang, limit, tuple(removed))
        version = reader.data_version()
        data = memo.get(key, version)
        state = "hit"
        if data is None:
            if worker is not None:
                status, data = await worker.answer(query, lang, limit, removed)
                if status != 200:
                    raise HTTPException(status_code=status, detail=data.decode("utf-8"))
            else:
                data = await run_in_thread(album.search_answer, query, lang, limit, removed)
            memo.put(key, version, data)
            state = "miss"
        return Response(data, media_type="application/json", headers={"X-Finegrain-Cache": state})

    @router.get("/api/timeline")
    async def api_timeline(
        before: str | None = Query(None, max_length=600, description="A page's 'next' cursor, or a date: photos before it."),
        limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT),
        lang: str | None = Query(None, pattern="^(en|zh)$"),
    ) -> JSONResponse:
        try:
            index = None if before else await album.months()
            # one range scan of the (time, id) index: answered on the event loop
            return JSONResponse(reader.timeline(before, limit, _ui_lang(lang), months=None if index is None else lambda: index))
        except FinegrainError as e:
            raise HTTPException(status_code=400, detail=str(e)) from None

    return router


def _people_routes(album: _Album) -> APIRouter:
    """``GET /api/people``, ``GET /api/people/{id}`` and ``POST /api/people/{id}`` (naming, merging)."""
    router = APIRouter()
    reader, store = album.reader, album.store

    @router.get("/api/people")
    async def api_people() -> Response:
        def make() -> dict[str, Any]:
            people = reader.people()
            return {"people": people, "total": len(people)}

        return Response(await album.versioned("people", make), media_type="application/json")

    @router.get("/api/people/{person_id}")
    def api_person(
        person_id: str,
        offset: int = Query(0, ge=0, le=MAX_OFFSET),
        limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT),
        lang: str | None = Query(None, pattern="^(en|zh)$"),
    ) -> JSONResponse:
        person = album.person_or_404(person_id)
        page = reader.photos(lang=_ui_lang(lang), offset=offset, limit=limit, person=person_id)
        return JSONResponse({"person": person, **page})

    @router.post("/api/people/{person_id}")
    def api_person_edit(person_id: str, body: dict[str, Any] = Body(...)) -> JSONResponse:  # noqa: B008
        """``{"add_names": [...]}`` adds aliases (any language, existing kept), ``{"rename": [...]}``
        replaces every name (the first is shown), ``{"merge": [ids]}`` moves those clusters into this one."""
        action, values = _person_edit(body)
        album.person_or_404(person_id)
        with album.lock:
            try:
                if action == "add_names":
                    store.add_person_names(person_id, values)
                elif action == "rename":
                    store.name_person(person_id, values)
                else:
                    store.merge_people(person_id, values)
            except UnknownNameError as e:
                raise HTTPException(status_code=404, detail=str(e)) from None
            except FinegrainError as e:
                raise HTTPException(status_code=400, detail=str(e)) from None
            album.contexts.clear()  # the engine's vocabulary knew the old names (the next data_version drops the rest)
        return JSONResponse({"person": album.person_or_404(person_id), "action": action})

    return router


def _person_edit(body: dict[str, Any]) -> tuple[str, list[str]]:
    """The one action of a ``POST /api/people/{id}`` body and its values; 400 for any other body."""
    actions = [k for k in ("add_names", "rename", "merge") if k in body]
    unknown = sorted(set(body) - {"add_names", "rename", "merge"})
    if unknown or len(actions) != 1:
        raise HTTPException(status_code=400, detail=(
            f"the body names {sorted(body)!r}; send exactly one of add_names, rename, merge "
            '(e.g. {"add_names": ["薇薇"]} or {"merge": ["7"]})'))
    action = actions[0]
    values = body[action]
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise HTTPException(status_code=400, detail=(
            f"{action} must be a non-empty list of non-empty strings, got {values!r}"))
    if len(values) > 50 or any(len(v) > 200 for v in values):
        raise HTTPException(status_code=400, detail=f"{action}: at most 50 values of at most 200 characters")
    return action, values


def _place_routes(album: _Album) -> APIRouter:
    """``GET /api/places``, ``GET /api/map`` and ``GET /api/photos`` (of a person, place or area)."""
    router = APIRouter()
    reader = album.reader

    @router.get("/api/places")
    async def api_places(lang: str | None = Query(None, pattern="^(en|zh)$")) -> Response:
        def make() -> dict[str, Any]:
            places = reader.places(_ui_lang(lang))
            return {"lang": _ui_lang(lang), "places": places, "total": sum(p["count"] for p in places)}

        return Response(await album.versioned(f"places-{_ui_lang(lang)}", make), media_type="application/json")

    @router.get("/api/map")
    async def api_map(cell: float = Query(0.01, ge=0.0001, le=10.0, description="Grid cell in degrees.")) -> Response:
        return Response(await album.versioned(f"map-{cell!r}", lambda: reader.map_points(cell)),
                        media_type="application/json")

    @router.get("/api/photos")
    def api_photos(
        person: str | None = Query(None, max_length=200),
        place: str | None = Query(None, max_length=200),
        level: str | None = Query(None, pattern="^(country|province|city|district|locality)$"),
        bbox: str | None = Query(None, max_length=200, description="south,west,north,east in degrees"),
        offset: int = Query(0, ge=0, le=MAX_OFFSET),
        limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT),
        lang: str | None = Query(None, pattern="^(en|zh)$"),
    ) -> JSONResponse:
        if person is None and place is None and bbox is None:
            raise HTTPException(status_code=400, detail="pass person=ID, place=NAME (with level=city|district) or bbox=S,W,N,E")
        if level is not None and place is None:
            raise HTTPException(status_code=400, detail=f"level={level!r} needs place=NAME")
        box = _parse_bbox(bbox) if bbox is not None else None
        return JSONResponse(reader.photos(lang=_ui_lang(lang), offset=offset, limit=limit, person=person,
                                          place=place, level=level, bbox=box))

    return router


# The two routes a page hits most answer on the event loop (a few SQLite reads and stats,
# no lock); only making a thumbnail (Pillow) goes to a worker thread.
def _photo_routes(album: _Album) -> APIRouter:
    """``GET /api/photo/{id}``, ``/thumb/{id}``, ``/face/{id}`` and ``/photo/{id}`` (the file)."""
    router = APIRouter()
    reader = album.reader

    @router.get("/api/photo/{photo_id:path}")
    async def api_photo(photo_id: str) -> JSONResponse:
        """The detail of one photo: read from the catalog, but only for a photo whose file lies inside
        the catalog's folders or is missing here (the metadata of a file outside them is the file's)."""
        info = reader.photo(photo_id)
        if info is None:
            raise HTTPException(status_code=404, detail=f"no photo {photo_id!r} in the catalog")
        try:
            album.file_of(photo_id)
            info["file"] = "present"
        except PhotoRefused as e:
            if not e.missing:
                raise HTTPException(status_code=e.status, detail=e.detail) from None
            info["file"] = "missing"
        info.pop("path", None)  # the page needs no file system path
        return JSONResponse(info)

    @router.get("/thumb/{photo_id:path}")
    async def thumb(photo_id: str) -> Response:
        return await album.picture(photo_id, photo_id, THUMB_SIZE, make_thumbnail)

    @router.get("/face/{photo_id:path}")
    async def face(photo_id: str, i: int = Query(..., ge=0, le=10_000, description="The face's index in the photo.")
                   ) -> Response:
        """A square portrait of one face (a person's cover), cached like the thumbnails."""
        box = reader.face_box(photo_id, i)
        if box is None:
            raise HTTPException(status_code=404, detail=f"no face {i} with a box in {photo_id!r}")
        return await album.picture(photo_id, f"{photo_id}\0face\0{i}\0{box}", FACE_SIZE,
                                   lambda path, edge: make_face_crop(path, box, edge))

    @router.get("/photo/{photo_id:path}")
    def photo(photo_id: str) -> FileResponse:
        return FileResponse(album.served_file(photo_id), headers={"Cache-Control": "private, max-age=3600"})

    return router


def _parse_bbox(text: str) -> tuple[float, float, float, float]:
    try:
        south, west, north, east = (float(x) for x in text.split(","))
    except ValueError:
        raise HTTPException(status_code=400, detail=f"bbox={text!r} is not four numbers: pass south,west,north,east") from None
    if not (-90 <= south <= north <= 90 and -180 <= west <= east <= 180):
        raise HTTPException(status_code=400, detail=(
            f"bbox={text!r} is not a box: need -90 <= south <= north <= 90 and -180 <= west <= east <= 180"))
    return south, west, north, east


