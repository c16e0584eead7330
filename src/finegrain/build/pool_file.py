"""The pool file: what was pooled for judging, in judging order (schema ``finegrain.pool/1``).

A pool is JSON lines (gzip-compressed when the name ends in ``.gz``)::

    {"schema": "finegrain.pool/1", "depth": 10, "systems": ["bm25", "e5"], "seed": 0,
     "dataset": "dureader/mini", "lang": "zh", "grades": [0, 1, 2], "provenance": {...}}
    {"query": "q1", "text": "purple flower"}
    {"doc": "d7", "text": "A purple flower in a vase."}
    {"qid": "q1", "doc_id": "d7", "order": 0, "n_systems": 2, "best_rank": 1,
     "systems": ["bm25", "e5"], "grade": null}

The header comes first; then the texts of the queries and documents the pool
names (optional: a pool built from runs alone has none); then one line per
pooled item, in judging order. ``grade`` is the judgment the qrels already had
(``null``: unjudged). :class:`Pool` is the frozen object; :func:`write_pool` and
:func:`read_pool` round-trip it exactly.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import DuplicateRecordError, iter_jsonl, open_text_write
from finegrain.io.ids import IdSyntax, check_ids, id_error, id_problem
from finegrain.numbers import INT64_MAX, INT64_MIN

SCHEMA = "finegrain.pool/1"
#: CapRetrieval's graded scale: 0 irrelevant, 1 partially relevant, 2 relevant.
DEFAULT_GRADES = (0, 1, 2)
_HINT = "write it with 'finegrain pool' (or finegrain.build.pool_file.write_pool)"


@dataclass(frozen=True)
class PoolItem:
    """One (query, document) pair to judge."""

    qid: str
    doc_id: str
    order: int  # position in the judging order, 0-based over the whole pool
    n_systems: int  # how many pooled runs have it in their top ``depth``
    best_rank: int  # its best 1-based rank over those runs
    systems: tuple[str, ...]  # the runs that retrieved it, in the pool's system order
    grade: int | None = None  # the grade the qrels already had; None: unjudged

    @property
    def judged(self) -> bool:
        return self.grade is not None


@dataclass(frozen=True)
class Pool:
    """Pooled items in judging order, with the texts a judge needs."""

    items: tuple[PoolItem, ...]
    depth: int
    systems: tuple[str, ...]
    seed: int = 0
    dataset: str | None = None
    lang: str | None = None
    grades: tuple[int, ...] = DEFAULT_GRADES
    queries: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    texts: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    provenance: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        for name in ("queries", "texts", "provenance"):
            value = getattr(self, name)
            if not isinstance(value, MappingProxyType):
                object.__setattr__(self, name, MappingProxyType(dict(value)))
        object.__setattr__(self, "items", tuple(self.items))
        object.__setattr__(self, "systems", tuple(self.systems))
        object.__setattr__(self, "grades", tuple(self.grades))

    def __len__(self) -> int:
        return len(self.items)

    @property
    def qids(self) -> tuple[str, ...]:
        """Query ids in order of their first item."""
        return tuple(dict.fromkeys(it.qid for it in self.items))

    def unjudged(self) -> tuple[PoolItem, ...]:
        """The items the qrels did not judge, in judging order."""
        return tuple(it for it in self.items if it.grade is None)

    def item(self, qid: str, doc_id: str) -> PoolItem | None:
        """The pooled item of ``(qid, doc_id)``, or None when the pool has no such pair."""
        return self._index().get((qid, doc_id))

    def _index(self) -> dict[tuple[str, str], PoolItem]:
        cached: dict[tuple[str, str], PoolItem] | None = self.__dict__.get("_by_pair")
        if cached is None:
            cached = {(it.qid, it.doc_id): it for it in self.items}
            object.__setattr__(self, "_by_pair", cached)
        return cached

    def header(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "depth": self.depth, "systems": list(self.systems), "seed": self.seed,
                "dataset": self.dataset, "lang": self.lang, "grades": list(self.grades),
                "provenance": dict(self.provenance)}


def write_pool(pool: Pool, path: str | os.PathLike[str]) -> Path:
    """Write ``pool`` to ``path`` (whole or not at all); returns the path.

    Ids and system names that break the id rule of JSON formats
    (:mod:`finegrain.io.ids`) are refused before anything is written.
    """
    p = Path(path)
    target = f"the pool {str(p)!r}"
    hint = "fix it in the run or dataset it came from"
    check_ids(pool.systems, "system name", IdSyntax.JSON, target=target, hint=hint)
    check_ids(list(dict.fromkeys(it.qid for it in pool.items)) + list(pool.queries), "query id", IdSyntax.JSON,
              target=target, hint=hint)
    check_ids(list(dict.fromkeys(it.doc_id for it in pool.items)) + list(pool.texts), "document id", IdSyntax.JSON,
              target=target, hint=hint)
    try:
        with open_text_write(p) as f:
            f.write(_dumps(pool.header()) + "\n")
            for qid in pool.qids:
                if qid in pool.queries:
                    f.write(_dumps({"query": qid, "text": pool.queries[qid]}) + "\n")
            for doc_id in dict.fromkeys(it.doc_id for it in pool.items):
                if doc_id in pool.texts:
                    f.write(_dumps({"doc": doc_id, "text": pool.texts[doc_id]}) + "\n")
            for it in pool.items:
                f.write(_dumps({"qid": it.qid, "doc_id": it.doc_id, "order": it.order, "n_systems": it.n_systems,
                                "best_rank": it.best_rank, "systems": list(it.systems), "grade": it.grade}) + "\n")
    except OSError as e:
        raise FinegrainError(f"cannot write the pool {str(p)!r}: {e.strerror or e}", "choose a writable --out") from None
    return p


def read_pool(path: str | os.PathLike[str]) -> Pool:
    """Read a pool file written by :func:`write_pool`; a malformed line is an error naming it."""
    p = Path(path)
    if p.is_dir():
        raise FinegrainError(f"{str(p)!r} is a folder, not a pool file", _HINT)
    if not p.is_file():
        raise FinegrainError(f"no pool file {str(p)!r}", _HINT)
    header: dict[str, Any] | None = None
    queries: dict[str, str] = {}
    texts: dict[str, str] = {}
    items: list[PoolItem] = []
    seen: set[tuple[str, str]] = set()
    text_lines: dict[tuple[str, str], int] = {}  # (kind, id) -> the line of its text: each text once
    for line_no, obj in iter_jsonl(p):
        if header is None:
            if obj.get("schema") != SCHEMA:
                raise DataFormatError(p, line_no, f"a header with schema {SCHEMA!r}", _short(obj), hint=_HINT)
            header = obj
            continue
        if "query" in obj or "doc" in obj:
            kind = "query" if "query" in obj else "doc"
            rid = _text_id(p, line_no, obj, kind)
            first = text_lines.setdefault((kind, rid), line_no)
            if first != line_no:
                raise DuplicateRecordError(p, line_no, first, f"{kind} text record", repr(rid))
            (queries if kind == "query" else texts)[rid] = _text(p, line_no, obj)
        else:
            it = _item(p, line_no, obj)
            if (it.qid, it.doc_id) in seen:
                raise DataFormatError(p, line_no, "each (qid, doc_id) once", f"{it.qid!r}, {it.doc_id!r} again",
                                      hint=_HINT)
            seen.add((it.qid, it.doc_id))
            items.append(it)
    if header is None:
        raise DataFormatError(p, None, f"a header line with schema {SCHEMA!r}", "an empty file", hint=_HINT)
    try:
        return Pool(
            items=tuple(items), depth=_int(header, "depth"), systems=tuple(_strs(header, "systems")),
            seed=_int(header, "seed"), dataset=_str_or_none(header, "dataset"), lang=_str_or_none(header, "lang"),
            grades=tuple(_ints(header.get("grades", list(DEFAULT_GRADES)))), queries=queries, texts=texts,
            provenance=_object(header, "provenance"),
        )
    except (TypeError, ValueError) as e:
        raise DataFormatError(p, 1, "a valid pool header", f"{e}", hint=_HINT) from None


def pool_items(rows: Iterable[Sequence[Any]]) -> tuple[PoolItem, ...]:
    """``PoolItem`` s from ``(qid, doc_id, n_systems, best_rank, systems, grade)`` rows, numbered in order."""
    return tuple(PoolItem(str(q), str(d), i, int(n), int(b), tuple(s), g) for i, (q, d, n, b, s, g) in enumerate(rows))


# --------------------------------------------------------------------------- internals


def _item(p: Path, line_no: int, obj: Mapping[str, Any]) -> PoolItem:
    try:
        qid, doc_id = obj["qid"], obj["doc_id"]
        grade = obj.get("grade")
        ok = (isinstance(qid, str) and isinstance(doc_id, str) and (grade is None or _is_int(grade))
              and all(_is_int(obj[k]) for k in ("order", "n_systems", "best_rank"))
              and isinstance(obj.get("systems", []), list) and all(isinstance(s, str) for s in obj.get("systems", [])))
    except KeyError as e:
        raise DataFormatError(p, line_no, "a pool item with qid, doc_id, order, n_systems, best_rank",
                              f"no field {e.args[0]!r}", hint=_HINT) from None
    if not ok:
        raise DataFormatError(p, line_no, "string ids, integer order/n_systems/best_rank/grade", _short(obj), hint=_HINT)
    for value, what in ((qid, "a query id"), (doc_id, "a document id")):
        problem = id_problem(value, IdSyntax.JSON)
        if problem is not None:
            raise id_error(p, line_no, value, what, IdSyntax.JSON, problem)
    return PoolItem(qid, doc_id, obj["order"], obj["n_systems"], obj["best_rank"], tuple(obj.get("systems", [])), grade)


def _text_id(p: Path, line_no: int, obj: Mapping[str, Any], key: str) -> str:
    value = obj[key]
    if not isinstance(value, str):
        raise DataFormatError(p, line_no, f"a string {key} id", _short(value), hint=_HINT)
    problem = id_problem(value, IdSyntax.JSON)
    if problem is not None:
        raise id_error(p, line_no, value, f"a {key} id", IdSyntax.JSON, problem)
    return value


def _text(p: Path, line_no: int, obj: Mapping[str, Any]) -> str:
    value = obj.get("text")
    if not isinstance(value, str):
        raise DataFormatError(p, line_no, "a string text", _short(value), hint=_HINT)
    return value


def _is_int(v: Any) -> bool:
    """An integer of the JSON that fits int64 (what the judgments database stores)."""
    return isinstance(v, int) and not isinstance(v, bool) and INT64_MIN <= v <= INT64_MAX


def _int(header: Mapping[str, Any], key: str) -> int:
    v = header.get(key, 0)
    if not _is_int(v):
        raise ValueError(f"{key} must be an integer between -2^63 and 2^63-1, got {_short(v)}")
    return int(v)


def _ints(values: Any) -> list[int]:
    if not isinstance(values, list) or not values or not all(_is_int(v) for v in values):
        raise ValueError(f"grades must be a non-empty list of integers between -2^63 and 2^63-1, got {_short(values)}")
    return values


def _strs(header: Mapping[str, Any], key: str) -> list[str]:
    v = header.get(key)
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise ValueError(f"{key} must be a list of strings, got {_short(v)}")
    return v


def _str_or_none(header: Mapping[str, Any], key: str) -> str | None:
    v = header.get(key)
    if v is not None and not isinstance(v, str):
        raise ValueError(f"{key} must be a string or null, got {_short(v)}")
    return v


def _object(header: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    v = header.get(key)
    if v is not None and not isinstance(v, Mapping):
        raise ValueError(f"{key} must be a JSON object or null, got {_short(v)}")
    return v or {}


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _short(value: Any, width: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."
