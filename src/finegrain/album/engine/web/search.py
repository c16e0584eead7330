"""One search answer of the album page, computed in the server or in a search worker process.

:func:`answer_search` is the whole answer of ``/api/search`` for one query: the engine's
result, its first ``limit`` photos with their rows, the chips, the plan and the typed outcome
rendered in both page languages, as JSON bytes.

:class:`SearchProcess` computes it in a separate process (``album serve`` starts one by
default). Why: a search that misses the answer cache costs milliseconds of Python, and in
one process every such search holds the interpreter while the event loop answers the cached
searches, thumbnails and timeline pages of everyone else; under many concurrent clients the
searches queue behind each other and set the page's tail latency (measured figures:
``docs/results/album.md``, ``benchmarks/album_web_load.py`` and ``album_search_miss.py``). The worker
process has its own interpreter, its own read-only connection and search context, so
searches run beside the event loop. It builds and warms its context when it starts (the
vocabulary, the capture order, the Chinese segmenter: the first Chinese query otherwise pays
for loading jieba's dictionary) and rebuilds it when its own ``data_version`` watch sees a commit
(a person named, a photo indexed).
Only names travel: the catalog's path or Postgres URL, ``today`` and the encoder's name (the process builds the
encoder itself), never objects.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from datetime import date
from pathlib import Path
from typing import Any

from finegrain.album.engine import search as engine
from finegrain.album.engine.catalog import is_postgres_url, open_catalog
from finegrain.album.engine.web.chips import plan_chips
from finegrain.album.engine.web.queries import CatalogReader
from finegrain.errors import FinegrainError
from finegrain.retrieve.dense.encoders.registry import get_encoder


def _top_ids(result: Any, limit: int | None) -> tuple[int, list[tuple[str, float | None]]]:
    """(how many photos the answer has, its first ``limit`` as ``(id, score)``): ranked ids first
    in engine order, then the rest of the set in id order (score None). Only the shown part is
    built: the ranked list of a broad query is tens of thousands long. An engine
    :class:`~finegrain.album.engine.search.SearchResult` ranks exactly its set, so its ``head`` is the
    answer; any other result is reconciled with its set here."""
    head = getattr(result, "head", None)
    if callable(head):
        return len(result.photo_ids), [(pid, float(score)) for pid, score in head(limit)]
    ranked = getattr(result, "ranked", ()) or ()
    members = set(getattr(result, "photo_ids", ()) or ())
    ranked_ids = dict.fromkeys(pid for pid, _ in ranked)  # first occurrence, engine order (C loops)
    extra = len(ranked_ids.keys() - members)  # ranked ids outside the set
    out: list[tuple[str, float | None]] = []
    if limit is None or limit > 0:
        seen: set[str] = set()
        for pid, score in ranked:
            if pid in seen:
                continue
            seen.add(pid)
            out.append((pid, float(score)))
            if limit is not None and len(out) >= limit:
                break
    if limit is None or len(out) < limit:
        rest = members.difference(ranked_ids)
        out.extend((pid, None) for pid in sorted(rest)[: None if limit is None else limit - len(out)])
    return len(members) + extra, out


def json_bytes(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def _snapshot(store: Any) -> Any:
    """The store's consistent-read context (``SqliteCatalog.snapshot``), or a no-op without one."""
    snapshot = getattr(store, "snapshot", None)
    return snapshot() if callable(snapshot) else nullcontext()


def _outcome_dict(outcome: Any) -> Any:
    """The engine's typed outcome as JSON (None when the engine does not type it)."""
    if outcome is None:
        return None
    to_dict = getattr(outcome, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    return {"kind": str(getattr(outcome, "value", outcome))}


def _outcome_texts(outcome: Any) -> dict[str, str] | None:
    """The outcome rendered in both page languages (None when the engine cannot render it)."""
    render = getattr(outcome, "render", None)
    if not callable(render):
        return None
    try:
        return {"en": str(render("en")), "zh": str(render("zh"))}
    except Exception:  # noqa: BLE001 - a renderer in flux must not break the answer; reason stays
        return None


def answer_search(store: Any, reader: Any, lock: Any, run_search: Callable[[str, str | None], Any],
                  query: str, lang: str | None, limit: int, removed: Sequence[str]) -> bytes:
    """The JSON answer of one search (see the module docstring); FinegrainError for a bad query."""
    with lock, _snapshot(store):  # the plan, the set and the names: one state of the catalog
        result = run_search(query, lang)
        plan = getattr(result, "plan", None)
        names = {p.id: p.display_name for p in store.people()}
        total, shown = (0, []) if result.abstained else _top_ids(result, limit)
        plan_lang = "zh" if getattr(plan, "lang", lang) == "zh" else "en"
    # the rows shown, in one indexed read (a photo deleted since the search is left out)
    rows = reader.items([pid for pid, _ in shown], plan_lang)
    items = [{**rows[pid], "score": score} for pid, score in shown if pid in rows]
    outcome = getattr(result, "outcome", None)

    body = {
        "query": query,
        "removed": list(removed),
        "abstained": bool(result.abstained),
        "reason": str(getattr(result, "reason", "") or ""),
        "outcome": _outcome_dict(outcome),
        "reason_ui": _outcome_texts(outcome),
        "source": getattr(plan, "source", None),
        "chips": plan_chips(plan, names),
        "plan": plan.to_dict() if plan is not None and hasattr(plan, "to_dict") else None,
        "total": total,
        "results": items,
    }
    return json_bytes(body)


# --------------------------------------------------------------------------- the worker process

_WORKER: _Worker | None = None


class _Worker:
    """The state of a search worker process: its connection, reader and search context."""

    def __init__(self, catalog: str, today: str | None, encoder: str | None) -> None:
        self.store = open_catalog(catalog, create=False)
        self.reader = CatalogReader(catalog)
        self.options: dict[str, Any] = {} if today is None else {"today": date.fromisoformat(today)}
        if encoder is not None:
            self.options["encoder"] = get_encoder(encoder)
        self.version: int | None = None
        self.context: Any = None
        self.refresh()

    def refresh(self) -> None:
        """A warm search context for the catalog as it is now: rebuilt when any connection
        committed since the last one was built (this process's own ``data_version`` watch: SQLite's, or
        the Postgres catalog's change counter)."""
        version = self.reader.data_version()  # read before building: a commit meanwhile rebuilds next time
        if version != self.version or self.context is None:
            self.context = engine.SearchContext(self.store, **self.options)
            self.context.warm()
            self.version = version

    def answer(self, query: str, lang: str | None, limit: int, removed: Sequence[str]) -> tuple[int, bytes]:
        self.refresh()

        def run(q: str, language: str | None) -> Any:
            return engine.search(self.store, q, lang=language, context=self.context)

        try:
            return 200, answer_search(self.store, self.reader, nullcontext(), run, query, lang, limit, removed)
        except FinegrainError as e:
            return 400, str(e).encode("utf-8")


_ARGS: tuple[str, str | None, str | None] | None = None


def _init_worker(catalog: str, today: str | None, encoder: str | None) -> None:
    global _ARGS
    _ARGS = (catalog, today, encoder)


def _worker() -> _Worker:
    """This process's worker, built on first use (so a bad encoder name comes back as an error
    with its message, not as a broken pool)."""
    global _WORKER
    if _WORKER is None:
        if _ARGS is None:  # pragma: no cover - the pool's initializer always runs first
            raise RuntimeError("search worker not initialised")
        _WORKER = _Worker(*_ARGS)
    return _WORKER


def _start_worker() -> bool:
    _worker()
    return True


def _answer_in_worker(query: str, lang: str | None, limit: int, removed: tuple[str, ...]) -> tuple[int, bytes]:
    return _worker().answer(query, lang, limit, removed)


def _catalog_name(catalog: str | Path) -> str:
    """The catalog as the worker opens it: a Postgres URL as given, a file as its absolute path."""

    return str(catalog).strip() if is_postgres_url(catalog) else str(Path(catalog).resolve())


class SearchProcess:
    """Searches in one (or ``processes``) spawned worker process(es); ``answer`` is awaitable."""

    def __init__(self, catalog: str | Path, *, today: date | None = None, encoder: str | None = None,
                 processes: int = 1) -> None:
        if processes < 1:
            raise FinegrainError(f"search processes={processes}", "use 1 or more (0 searches in the server)")
        self._pool = ProcessPoolExecutor(
            max_workers=processes, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker,
            initargs=(_catalog_name(catalog), today.isoformat() if today else None, encoder))
        try:  # start every worker now: a catalog or encoder it cannot open fails here, not on a search
            for started in [self._pool.submit(_start_worker) for _ in range(processes)]:
                started.result()
        except FinegrainError as e:
            self.close()
            raise FinegrainError(f"the search worker could not start: {e.message}", e.hint) from None
        except Exception as e:
            self.close()
            raise FinegrainError(f"the search worker could not start ({type(e).__name__}: {e})",
                                 "pass --search-processes 0 to search in the server") from None

    async def answer(self, query: str, lang: str | None, limit: int,
                     removed: Sequence[str]) -> tuple[int, bytes]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, _answer_in_worker, query, lang, limit,
                                          tuple(removed))

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
