"""The CapRetrieval format: captions, queries with graded positives, and query types.

A folder holds::

    candidates.jsonl   {"id": ..., "text": ...}                       one caption per line
    queries.jsonl      {"id": ..., "query": ..., "positives": [{"id": ..., "score": 1|2}, ...]}
    types.json         {"<type>": ["<query string or query id>", ...], ...}   (optional)

Every query-caption pair is judged: a caption not listed among a query's
positives has grade 0. So every query is kept in the qrels, a query with no
positive as an empty mapping (the zero-answer queries).

How ``types.json`` entries find their queries (deterministic, no warnings):

1. an entry equal to a query id types that query;
2. else an entry equal to a query string types every query with that string;
3. else entries and query strings are compared after normalisation (NFKC,
   case-folded, ``+`` read as a space, runs of spaces collapsed), which
   matches upstream entries such as ``"连衣裙+草地"`` to the query
   ``"连衣裙 草地"``;
4. an entry matching nothing is skipped and reported in
   :attr:`TypeAssignment.unmatched` (upstream lists a few queries that are not
   in ``queries.jsonl``); a types file matching *no* query at all is an error,
   as it is surely the wrong file.

A query that would get two different types is an error naming both.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import (
    PathLike,
    extra_fields,
    get_field,
    get_id,
    iter_id_records,
    line_of,
    open_text_write,
    read_json,
)
from finegrain.io.ids import IdSyntax, check_ids
from finegrain.types import Corpus, Document, Qrels, Queries, Query

CANDIDATES = "candidates.jsonl"
QUERIES = "queries.jsonl"
TYPES = "types.json"


@dataclass(frozen=True)
class TypeAssignment:
    """The result of matching a types file to queries.

    ``types`` maps query id -> type (in query order); ``unmatched`` lists the
    ``(type, entry)`` pairs that matched no query; ``path`` is the types file
    and ``entries`` the number of entries it lists.
    """

    types: Mapping[str, str]
    unmatched: tuple[tuple[str, str], ...] = ()
    path: str | None = None
    entries: int = 0


# --------------------------------------------------------------------------- reading


def read_candidates(path: PathLike) -> Corpus:
    """``candidates.jsonl`` -> Corpus (ids must be unique)."""

    def records() -> Iterator[Document]:
        for n, doc_id, obj in iter_id_records(path, ("id", "_id"), "candidate id"):
            text = get_field(path, n, obj, "text", kind="text")
            yield Document(doc_id, text, "", extra_fields(obj, ("id", "_id", "text")))

    return Corpus(records())


def read_queries_with_positives(
    path: PathLike, corpus: Corpus | None = None
) -> tuple[Queries, Qrels]:
    """``queries.jsonl`` -> (untyped Queries, Qrels keeping queries without positives).

    With ``corpus``, every positive id must be a candidate id.
    """
    queries: list[Query] = []
    judged: dict[str, dict[str, int]] = {}
    for n, qid, obj in iter_id_records(path, ("id", "_id"), "query id"):
        text = get_field(path, n, obj, "query", "text", kind="text")
        positives = get_field(path, n, obj, "positives", kind="list") if "positives" in obj else []
        grades: dict[str, int] = {}
        for p in positives:
            if not isinstance(p, dict):
                raise DataFormatError(path, n, 'positives as {"id": ..., "score": ...} objects', repr(p))
            doc = get_id(path, n, p, "id", "_id", what="positive id")
            score = get_field(path, n, p, "score", kind="int")
            if doc in grades:
                raise DataFormatError(path, n, "each positive id once per query", doc)
            if corpus is not None and doc not in corpus:
                raise DataFormatError(path, n, f"positive ids that are candidate ids (query {qid!r})", doc)
            grades[doc] = score
        queries.append(Query(qid, text, None, extra_fields(obj, ("id", "_id", "query", "text", "positives"))))
        judged[qid] = grades
    return Queries(queries), Qrels.from_dict(judged)


def read_types(path: PathLike, queries: Queries) -> TypeAssignment:
    """Match a ``types.json`` (type -> list of query strings or ids) to ``queries``."""
    data, text = read_json(path)
    if not isinstance(data, dict):
        raise DataFormatError(path, 1, "a JSON object mapping each type to a list of queries", type(data).__name__)
    by_text: dict[str, list[str]] = {}
    by_norm: dict[str, list[str]] = {}
    for q in queries.values():
        by_text.setdefault(q.text, []).append(q.id)
        by_norm.setdefault(normalize_query(q.text), []).append(q.id)

    types: dict[str, str] = {}
    origin: dict[str, str] = {}
    unmatched: list[tuple[str, str]] = []
    n_entries = 0
    for type_name, entries in data.items():
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise DataFormatError(
                path, line_of(text, type_name), f"a list of query strings or ids for type {type_name!r}", _short(entries)
            )
        for entry in entries:
            n_entries += 1
            if entry in queries:
                ids = [entry]
            else:
                ids = by_text.get(entry) or by_norm.get(normalize_query(entry), [])
            if not ids:
                unmatched.append((type_name, entry))
                continue
            for qid in ids:
                prev = types.setdefault(qid, type_name)
                if prev != type_name:
                    raise DataFormatError(
                        path,
                        _line_in_list(text, type_name, entry),
                        "each query under one type",
                        f"{entry!r} under {type_name!r}, but query {qid!r} is already typed {prev!r} by {origin[qid]!r}",
                        "remove one of the two entries",
                    )
                origin.setdefault(qid, entry)
    if n_entries and not types:
        raise DataFormatError(
            path, None, "entries naming queries of the dataset", f"none of its {n_entries} entries matches a query",
            "is this the types file of another dataset?",
        )
    # Present the mapping in query order, so it is deterministic.
    ordered = {q: types[q] for q in queries if q in types}
    return TypeAssignment(MappingProxyType(ordered), tuple(unmatched), str(path), n_entries)


def type_assignment(types_path: PathLike, queries_path: PathLike) -> TypeAssignment:
    """Match a types file to the queries of another ``queries.jsonl`` (types travel by id).

    CapRetrievalEn has no types file; its query ids are those of the Chinese
    set, so ``type_assignment("zh/types.json", "zh/queries.jsonl")`` gives
    the id -> type mapping to pass to :func:`read_capretrieval` for ``en``.
    """
    queries, _ = read_queries_with_positives(queries_path)
    return read_types(types_path, queries)


def read_capretrieval(
    folder: PathLike,
    types: PathLike | Mapping[str, str] | TypeAssignment | None = None,
) -> tuple[Corpus, Queries, Qrels]:
    """Read a CapRetrieval folder -> ``(corpus, queries with types, qrels)``.

    ``types``: None reads ``types.json`` of the folder when present (queries
    stay untyped otherwise); a path reads that types file; a mapping (query
    id -> type) or a :class:`TypeAssignment` is applied by id, ignoring ids
    the folder does not have (so ``types={}`` leaves every query untyped).
    """
    root = Path(folder)
    corpus_path, queries_path = root / CANDIDATES, root / QUERIES
    for p in (corpus_path, queries_path):
        if not p.is_file():
            raise FinegrainError(
                f"{str(root)!r} is not a CapRetrieval folder: {p.name} is missing",
                "it needs candidates.jsonl and queries.jsonl (types.json is optional)",
            )
    corpus = read_candidates(corpus_path)
    queries, qrels = read_queries_with_positives(queries_path, corpus)
    if types is None and (root / TYPES).is_file():
        types = root / TYPES
    if types is None:
        return corpus, queries, qrels
    if isinstance(types, TypeAssignment):
        mapping: Mapping[str, str] = types.types
    elif isinstance(types, Mapping):
        mapping = types
    else:
        mapping = read_types(types, queries).types
    return corpus, apply_types(queries, mapping), qrels


def apply_types(queries: Queries, types: Mapping[str, str] | TypeAssignment) -> Queries:
    """``queries`` with each type set from ``types`` (query id -> type); others become untyped."""
    mapping = types.types if isinstance(types, TypeAssignment) else types
    return Queries(Query(q.id, q.text, mapping.get(q.id), q.meta) for q in queries.values())


def normalize_query(text: str) -> str:
    """The form used to match types entries to queries (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text).casefold().replace("+", " ")
    return _SPACES.sub(" ", text).strip()


_SPACES = re.compile(r"\s+")


# --------------------------------------------------------------------------- writing


def write_capretrieval(
    folder: PathLike, corpus: Corpus, queries: Queries, qrels: Qrels, *, types_by: str = "id"
) -> None:
    """Write a CapRetrieval folder; ``types.json`` (type -> query ids, or strings with
    ``types_by="query"``) is written when any query has a type.

    Only grades > 0 are listed as positives: the format says every unlisted
    pair is 0. Ids that break the id rule (:mod:`finegrain.io.ids`) are
    refused before any file is written.
    """
    root = Path(folder)
    check_ids(list(corpus), "candidate id", IdSyntax.JSON, target=f"{str(root / CANDIDATES)!r}", hint="rename it")
    check_ids(list(queries), "query id", IdSyntax.JSON, target=f"{str(root / QUERIES)!r}", hint="rename it")
    with open_text_write(root / CANDIDATES) as f:
        for d in corpus.values():
            f.write(json.dumps({"id": d.id, "text": d.text}, ensure_ascii=False) + "\n")
    with open_text_write(root / QUERIES) as f:
        for q in queries.values():
            grades = qrels[q.id] if q.id in qrels else {}
            positives = [{"id": d, "score": int(g)} for d, g in grades.items() if g > 0]
            f.write(json.dumps({"id": q.id, "query": q.text, "positives": positives}, ensure_ascii=False) + "\n")
    by_type: dict[str, list[str]] = {}
    for q in queries.values():
        if q.type is not None:
            by_type.setdefault(q.type, []).append(q.id if types_by == "id" else q.text)
    if by_type:
        with open_text_write(root / TYPES) as f:
            f.write(json.dumps(by_type, ensure_ascii=False, indent=2) + "\n")


# --------------------------------------------------------------------------- internals


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _line_in_list(text: str, type_name: str, entry: str) -> int | None:
    """Line of ``entry`` after the key ``type_name`` in the JSON text (best effort, for messages)."""
    start = max(0, min((i for i in (text.find(_enc(type_name)), text.find(json.dumps(type_name))) if i >= 0), default=0))
    hits = [i for i in (text.find(_enc(entry), start), text.find(json.dumps(entry), start)) if i >= 0]
    return text.count("\n", 0, min(hits)) + 1 if hits else line_of(text, entry)


def _enc(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)
