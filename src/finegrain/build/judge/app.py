"""The judging page: one query and one passage at a time, graded by annotators who log in by name.

Routes of :func:`create_app` (JSON in and out; every error is ``{"detail": "..."}`` with a 4xx):

* ``GET /`` — the page (``page.html``: HTML, CSS and JS in one file, nothing from the network);
* ``GET /api/config`` — the scale with its labels, the number of items shown and hidden;
* ``POST /api/login`` ``{"annotator"}`` — store the name; the annotator's state;
* ``GET /api/state?annotator=&after=`` — progress, the next item to judge after position ``after``
  (in pool order, wrapping; items the annotator graded or skipped are passed over) and the first
  skipped one;
* ``GET /api/item?annotator=&position=`` — the item at that position: query, passage cut into
  ``[text, marked]`` pieces (:mod:`.highlight`), the annotator's current grade;
* ``POST /api/judgments`` ``{"annotator", "qid", "doc_id", "grade"}`` — store a grade (committed
  before the answer); the new state;
* ``POST /api/skips`` ``{"annotator", "qid", "doc_id"}`` — store a skip; the new state;
* ``GET /api/team`` — every annotator's progress.

The items shown are the pool's in its order, less those the qrels already graded unless
``include_judged``. Bad input is a 4xx: an item not in the pool 404, a grade off the scale or
an empty name 422, a name that never logged in 403; before any route,
:class:`finegrain.web_guard.RequestGuard` answers 400 to a ``Host`` not allowed and 403 to a POST
sent by another origin's page.
"""

from __future__ import annotations

import os
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from finegrain.build.judge.highlight import highlight, query_terms
from finegrain.build.judge.scale import Scale
from finegrain.build.judge.store import (
    BadAnnotatorError,
    BadGradeError,
    JudgmentStore,
    UnknownItemError,
    check_annotator,
)
from finegrain.build.pool_file import Pool, PoolItem, read_pool
from finegrain.errors import MissingDependencyError
from finegrain.web_guard import RequestGuard

try:
    from fastapi import APIRouter, FastAPI, HTTPException, Query, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import HTMLResponse, JSONResponse
    from pydantic import BaseModel, Field, StrictInt, StrictStr
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("fastapi", "judge") from e

MAX_ID = 2000
MAX_NAME_FIELD = 200  # longer is refused by the model; check_annotator refuses more than 64 after stripping


class LoginBody(BaseModel):
    annotator: StrictStr = Field(max_length=MAX_NAME_FIELD)


class SkipBody(BaseModel):
    annotator: StrictStr = Field(max_length=MAX_NAME_FIELD)
    qid: StrictStr = Field(max_length=MAX_ID)
    doc_id: StrictStr = Field(max_length=MAX_ID)


class JudgmentBody(SkipBody):
    grade: StrictInt


def _page_html() -> str:
    return resources.files("finegrain.build.judge").joinpath("page.html").read_text(encoding="utf-8")


def shown_items(pool: Pool, include_judged: bool = False) -> tuple[PoolItem, ...]:
    """The items annotators see, in pool order: all, or only those without an existing grade."""
    return pool.items if include_judged else pool.unjudged()


@dataclass(frozen=True)
class _Judging:
    """What the routes of one app share, built once by :func:`create_app`: the store, the pool,
    the items shown (and each pair's position among them), the scale and the page."""

    store: JudgmentStore
    pool: Pool
    scale: Scale
    name: str
    include_judged: bool
    items: tuple[PoolItem, ...]
    pairs: list[tuple[str, str]]
    position_of: dict[tuple[str, str], int]
    page: str
    lock: Any
    passages: dict[int, list[tuple[str, bool]]]  # each position's highlighted passage, cut once

    @asynccontextmanager
    async def lifespan(self, _app: FastAPI) -> AsyncIterator[None]:
        """Closes the store when the server stops."""
        yield
        self.store.close()

    def annotator_of(self, raw: str) -> str:
        """The checked name of an annotator who logged in; 422 for a bad name, 403 for an unknown one."""
        try:
            name_ = check_annotator(raw)
        except BadAnnotatorError as e:
            raise HTTPException(status_code=422, detail=str(e)) from None
        if name_ not in self.store.annotators():
            raise HTTPException(status_code=403, detail=f"annotator {name_!r} has not logged in: log in with your name")
        return name_

    def state(self, annotator: str, after: int = -1) -> dict[str, Any]:
        """The annotator's progress, next item after position ``after`` and first skipped item."""
        pairs = self.pairs
        graded = self.store.grades_of(annotator).keys()
        skipped = self.store.skipped_by(annotator)
        n = len(pairs)
        start = after + 1 if -1 <= after < n else 0
        nxt = next((i % n for i in range(start, start + n) if pairs[i % n] not in graded
                    and pairs[i % n] not in skipped), None) if n else None
        first_skipped = next((i for i, p in enumerate(pairs) if p in skipped and p not in graded), None)
        progress = self.store.progress(annotator, pairs)
        return {"annotator": annotator, "next": nxt, "first_skipped": first_skipped,
                "progress": {"judged": progress.judged, "skipped": progress.skipped, "total": progress.total}}

    def click(self, body: SkipBody, grade: int | None) -> dict[str, Any]:
        """Stores a grade (or a skip, ``grade`` None) and answers the new state with what was saved."""
        annotator = self.annotator_of(body.annotator)
        pos = self.position_of.get((body.qid, body.doc_id))
        if pos is None:
            shown_here = self.pool.item(body.qid, body.doc_id) is not None
            why = "already has a qrels grade and is not shown (serve with --all to judge it)" if shown_here \
                else "is not in the pool"
            raise HTTPException(status_code=404, detail=f"item ({body.qid!r}, {body.doc_id!r}) {why}")
        try:
            j = self.store.record(annotator, body.qid, body.doc_id, grade)
        except UnknownItemError as e:
            raise HTTPException(status_code=404, detail=str(e)) from None
        except (BadGradeError, BadAnnotatorError) as e:
            raise HTTPException(status_code=422, detail=str(e)) from None
        out = self.state(annotator, pos)
        out["saved"] = {"seq": j.seq, "qid": j.qid, "doc_id": j.doc_id, "grade": j.grade, "at": j.at,
                        "position": pos, "label": None if j.grade is None else self.scale.label(j.grade)}
        return out

    def item(self, who: str, position: int) -> dict[str, Any]:
        """The item at ``position``: query, highlighted passage and ``who``'s grade; 404 past the end."""
        if position >= len(self.pairs):
            raise HTTPException(status_code=404, detail=f"no item at position {position}; there are {len(self.pairs)}")
        it = self.items[position]
        query = self.pool.queries.get(it.qid)
        passage = self.pool.texts.get(it.doc_id)
        with self.lock:
            if position not in self.passages:
                self.passages[position] = highlight(passage, query_terms(query or "")) if passage is not None else []
            pieces = self.passages[position]
        mine = [j for j in self.store.history(who, it.qid, it.doc_id)]
        graded = [j for j in mine if j.grade is not None]
        return {
            "position": position, "total": len(self.pairs), "qid": it.qid, "doc_id": it.doc_id,
            "query": query, "passage": [[text, marked] for text, marked in pieces], "has_passage": passage is not None,
            "grade": graded[-1].grade if graded else None, "skipped": bool(mine) and not graded,
            "changes": max(len(graded) - 1, 0),
        }


def create_app(
    pool: Pool | str | os.PathLike[str],
    db: str | os.PathLike[str],
    *,
    scale: Scale | None = None,
    include_judged: bool = False,
    allowed_hosts: Sequence[str] | None = None,
    title: str | None = None,
) -> FastAPI:
    """The judging app over ``pool`` (a :class:`Pool` or its file), storing into the SQLite file ``db``.

    The store is opened (and created for this pool) here, so a database of another pool or a
    scale that differs from the stored one fails before anything is served. ``scale``: the
    grades and labels (default: the stored scale, or the pool's grades for a new database).
    ``allowed_hosts``: the host names a ``Host`` header may give, with the port the request came
    in on (None: any); a POST from another origin's page is refused either way (:mod:`finegrain.web_guard`).
    """
    pool_path = None if isinstance(pool, Pool) else Path(pool)
    the_pool = pool if isinstance(pool, Pool) else read_pool(pool)
    name = title or (pool_path.name if pool_path else (the_pool.dataset or "pool"))
    store = JudgmentStore.open(db, the_pool, scale=scale, pool_name=name)
    the_scale = Scale(store.scale.grades, scale.labels) if scale is not None else store.scale
    items = shown_items(the_pool, include_judged)
    pairs = [(it.qid, it.doc_id) for it in items]
    judging = _Judging(
        store=store, pool=the_pool, scale=the_scale, name=name, include_judged=include_judged, items=items,
        pairs=pairs, position_of={pair: i for i, pair in enumerate(pairs)}, page=_page_html(),
        lock=threading.Lock(), passages={},
    )
    app = FastAPI(title="finegrain judge", docs_url=None, redoc_url=None, openapi_url=None, lifespan=judging.lifespan)
    app.state.store = store
    app.state.pool = the_pool
    app.add_middleware(RequestGuard, allowed_hosts=allowed_hosts)
    app.exception_handler(RequestValidationError)(_bad_request)
    app.include_router(_page_routes(judging))
    app.include_router(_judging_routes(judging))
    return app


async def _bad_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
    """A request FastAPI could not validate: 422 with every problem in one ``detail`` line."""
    problems = []
    for err in exc.errors():
        if err.get("type") == "json_invalid":
            problems.append(f"the request body is not valid JSON ({err.get('ctx', {}).get('error', 'unreadable')})")
            continue
        where = ".".join(str(x) for x in err.get("loc", ()) if x not in ("body", "query"))
        problems.append(f"{where or 'request'}: {err.get('msg', 'invalid')}")
    return JSONResponse({"detail": "; ".join(problems) or "invalid request"}, status_code=422)


def _page_routes(judging: _Judging) -> APIRouter:
    """``GET /``, ``GET /api/config``, ``POST /api/login`` and ``GET /api/team``."""
    router = APIRouter()
    store, pool, pairs, scale = judging.store, judging.pool, judging.pairs, judging.scale

    @router.get("/", response_class=HTMLResponse)
    def index() -> HTMLResponse:
        return HTMLResponse(judging.page, headers={"Cache-Control": "no-cache"})

    @router.get("/api/config")
    def config() -> dict[str, Any]:
        return {
            "title": judging.name, "dataset": pool.dataset, "total": len(pairs),
            "hidden": len(pool.items) - len(pairs), "include_judged": judging.include_judged,
            "grades": [{"grade": g, "label": lab, "key": str(g) if 0 <= g <= 9 else None}
                       for g, lab in zip(scale.grades, scale.labels, strict=True)],
        }

    @router.post("/api/login")
    def login(body: LoginBody) -> dict[str, Any]:
        try:
            annotator = store.login(body.annotator)
        except BadAnnotatorError as e:
            raise HTTPException(status_code=422, detail=str(e)) from None
        return judging.state(annotator)

    @router.get("/api/team")
    def team() -> list[dict[str, Any]]:
        out = []
        for a in store.annotators():
            p = store.progress(a, pairs)
            out.append({"annotator": a, "judged": p.judged, "skipped": p.skipped, "total": p.total})
        return out

    return router


def _judging_routes(judging: _Judging) -> APIRouter:
    """``GET /api/state``, ``GET /api/item``, ``POST /api/judgments`` and ``POST /api/skips``."""
    router = APIRouter()

    @router.get("/api/state")
    def get_state(annotator: Annotated[str, Query(max_length=MAX_NAME_FIELD)],
                  after: Annotated[int, Query(ge=-1, le=10**9)] = -1) -> dict[str, Any]:
        return judging.state(judging.annotator_of(annotator), after)

    @router.get("/api/item")
    def get_item(annotator: Annotated[str, Query(max_length=MAX_NAME_FIELD)],
                 position: Annotated[int, Query(ge=0, le=10**9)]) -> dict[str, Any]:
        return judging.item(judging.annotator_of(annotator), position)

    @router.post("/api/judgments")
    def post_judgment(body: JudgmentBody) -> dict[str, Any]:
        return judging.click(body, body.grade)

    @router.post("/api/skips")
    def post_skip(body: SkipBody) -> dict[str, Any]:
        return judging.click(body, None)

    return router
