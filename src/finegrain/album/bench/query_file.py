"""Album query files: judged queries for ``finegrain album eval`` beyond the album's own.

A query file is JSON, either a list of query objects or an object
``{"queries": [...], ...}`` whose other keys (e.g. ``provenance``) are kept. Each
query object has::

    id            a string (an integer is read as its digits), unique in the file
    text          the query text
    lang          "en" or "zh" ("cn", PhotoBench's spelling, and the other names
                  :func:`finegrain.text.lang.parse_lang` reads are taken too)
    ground_truth  a list of photo ids; [] for a query no photo answers
    type          optional: the row of the evaluation's by-source tables ("file" when absent)

Ids follow the one id rule of JSON formats (:mod:`finegrain.io.ids`: 1 to 1,000
characters, not blank). Other fields are kept in :attr:`FileQuery.meta`. ``finegrain album
zero-answer`` writes such files (``type`` ``"zero-answer"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from finegrain.errors import DataFormatError, FinegrainError
from finegrain.frozen import EMPTY
from finegrain.io._lines import PathLike, extra_fields, get_field, line_of, read_json
from finegrain.io.ids import IdSyntax, first_bad_id, id_error, id_problem, show_id
from finegrain.text.lang import parse_lang

DEFAULT_TYPE = "file"
_FIELDS = ("id", "text", "lang", "ground_truth", "type")


@dataclass(frozen=True, slots=True)
class FileQuery:
    """One judged query of a query file (``line``: where its id is, for messages)."""

    id: str
    text: str
    lang: str
    ground_truth: tuple[str, ...]
    type: str = DEFAULT_TYPE
    line: int | None = None
    meta: Mapping[str, Any] = field(default_factory=lambda: EMPTY, compare=False)


@dataclass(frozen=True)
class QueryFile:
    """The queries of one file, in file order, and the file's other top-level fields."""

    path: str
    queries: tuple[FileQuery, ...]
    extra: Mapping[str, Any] = field(default_factory=lambda: EMPTY)

    def in_lang(self, lang: str) -> tuple[FileQuery, ...]:
        code = str(parse_lang(lang))
        return tuple(q for q in self.queries if q.lang == code)


def read_query_file(path: PathLike) -> QueryFile:
    """Read and check a query file (see the module docstring)."""
    data, text = read_json(path)
    extra: Mapping[str, Any] = EMPTY
    if isinstance(data, dict):
        if "queries" not in data:
            raise DataFormatError(path, 1, 'a list of queries or an object with "queries"',
                                  f"an object with {', '.join(map(repr, data)) or 'no key'}")
        extra = MappingProxyType({k: v for k, v in data.items() if k != "queries"})
        data = data["queries"]
    if not isinstance(data, list):
        raise DataFormatError(path, 1, "a list of query objects", type(data).__name__)
    queries: list[FileQuery] = []
    first: dict[str, int | None] = {}
    for i, obj in enumerate(data):
        if not isinstance(obj, dict):
            raise DataFormatError(path, None, f"query {i + 1} to be an object with id, text, lang, ground_truth",
                                  repr(obj))
        qid = get_field(path, None, obj, "id")
        line = line_of(text, qid)
        problem = id_problem(qid, IdSyntax.JSON)  # the one id rule: not blank, not over-long
        if problem is not None:
            raise id_error(path, line, qid, f"the id of query {i + 1}", IdSyntax.JSON, problem)
        if qid in first:
            raise DataFormatError(path, line, "each query id once", f"{qid!r} again (query {i + 1})",
                                  "give every query its own id")
        first[qid] = line
        queries.append(_query(path, line, qid, obj))
    if not queries:
        raise FinegrainError(f"query file {str(path)!r} has no query", "give at least one query object")
    return QueryFile(str(Path(path)), tuple(queries), extra)


def _query(path: PathLike, line: int | None, qid: str, obj: Mapping[str, Any]) -> FileQuery:
    text = get_field(path, line, obj, "text", kind="text")
    if not text.strip():
        raise DataFormatError(path, line, f"a non-empty text for query {qid!r}", repr(text))
    raw_lang = get_field(path, line, obj, "lang", kind="text")
    try:
        lang = str(parse_lang(raw_lang))
    except FinegrainError:
        raise DataFormatError(path, line, f"lang 'en' or 'zh' for query {qid!r}", repr(raw_lang)) from None
    truth = get_field(path, line, obj, "ground_truth", kind="list")
    bad = first_bad_id(truth, IdSyntax.JSON)  # photo ids are strings by the one id rule too
    if bad is not None:
        value, why = bad
        raise DataFormatError(path, line, f"ground_truth of query {qid!r} to be a list of photo ids",
                              f"{show_id(value)}, which {why}", "write [] for a query no photo answers")
    kind = get_field(path, line, obj, "type", kind="text") if "type" in obj else DEFAULT_TYPE
    return FileQuery(qid, text, lang, tuple(truth), kind or DEFAULT_TYPE, line, extra_fields(obj, _FIELDS))
