"""BEIR / MTEB retrieval folders: ``corpus.jsonl``, ``queries.jsonl`` and tab-separated qrels.

Layout (each JSON-lines file may also be gzipped, ``corpus.jsonl.gz``)::

    corpus.jsonl     {"_id": ..., "title": ... (optional), "text": ...}
    queries.jsonl    {"_id": ..., "text": ...}
    qrels/<split>.tsv   or   qrels.tsv
                     query-id <TAB> corpus-id <TAB> score   (header line optional)

``"id"`` is accepted in place of ``"_id"``; integer ids are read as strings;
other fields of a record are kept in its ``meta``. Which qrels file is read:
``split`` when given (``qrels/<split>.tsv``), else ``qrels.tsv``, else
``qrels/test.tsv``, else the only file in ``qrels/``.

As in BEIR, ``queries.jsonl`` may hold the queries of every split: only the
queries that appear in the chosen qrels are returned (in ``queries.jsonl``
order). A qrels line naming a query or document that does not exist is an
error naming that line. BEIR judgements are usually not exhaustive: a
document without a line is *unjudged*, not known to be irrelevant.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._columns import (
    Decline,
    Interner,
    NativeLines,
    fast_blocks,
    grades,
    judgement_table,
    judgements,
    split_tabs,
)
from finegrain.io._lines import (
    DuplicateRecordError,
    PathLike,
    decode,
    extra_fields,
    get_field,
    iter_byte_lines,
    iter_id_records,
    open_text_write,
)
from finegrain.io.ids import IdSyntax, check_ids, id_error, id_problem
from finegrain.numbers import NumberError, parse_grade
from finegrain.types import Corpus, Document, Qrels, Queries, Query

QRELS_EXPECTED = "3 tab-separated fields 'query-id corpus-id score'"


# --------------------------------------------------------------------------- reading


def read_corpus(path: PathLike) -> Corpus:
    """``corpus.jsonl``: one ``{"_id", "title"?, "text"}`` object per line."""

    def records() -> Iterator[Document]:
        for n, doc_id, obj in iter_id_records(path, ("_id", "id"), "document id"):
            text = get_field(path, n, obj, "text", kind="text")
            title = get_field(path, n, obj, "title", kind="text") if obj.get("title") is not None else ""
            yield Document(doc_id, text, title, extra_fields(obj, ("_id", "id", "title", "text")))

    return Corpus(records())


def read_queries(path: PathLike) -> Queries:
    """``queries.jsonl``: one ``{"_id", "text"}`` object per line."""

    def records() -> Iterator[Query]:
        for n, qid, obj in iter_id_records(path, ("_id", "id"), "query id"):
            text = get_field(path, n, obj, "text", "query", kind="text")
            yield Query(qid, text, None, extra_fields(obj, ("_id", "id", "text", "query")))

    return Queries(records())


def iter_qrels_tsv(path: PathLike) -> Iterator[tuple[int, str, str, int]]:
    """``(line_no, qid, docid, grade)`` for every judgement of a BEIR qrels file (header skipped).

    Fields are split on tabs, as BEIR's own loader (``csv`` with a tab
    delimiter) does, so ids may hold spaces; a line without a tab is split
    on whitespace. Ids follow the id rule of tab-separated fields
    (:mod:`finegrain.io.ids`). The first line is a header when its third
    field is a name (``score``, ``relevance``), never when it is a malformed
    number.
    """
    seen: dict[tuple[str, str], int] = {}
    first = True
    for n, raw in iter_byte_lines(path):
        if not raw.strip():
            continue
        parts = _split(raw)
        if first:
            first = False
            if _is_header(parts):
                continue  # the header line, e.g. "query-id corpus-id score"
        if len(parts) != 3:
            raise DataFormatError(path, n, QRELS_EXPECTED, decode(path, n, raw))
        if b"\0" in raw:
            raise DataFormatError(path, n, "text without NUL bytes", decode(path, n, raw))
        qid, doc, grade_s = (decode(path, n, p) for p in parts)
        for value, what in ((qid, "a query id"), (doc, "a corpus id")):
            problem = id_problem(value, IdSyntax.TSV_FIELD)
            if problem is not None:
                raise id_error(path, n, value, what, IdSyntax.TSV_FIELD, problem)
        try:
            grade = parse_grade(grade_s.strip(" \t\r\x0b\x0c"))
        except NumberError as e:
            raise DataFormatError(path, n, "an integer score in field 3", e.reason, e.hint) from None
        at = seen.setdefault((qid, doc), n)
        if at != n:
            raise DuplicateRecordError(path, n, at, "(query-id, corpus-id) pair", f"{qid} {doc}")
        yield n, qid, doc, grade


_HEADER_FIELD = re.compile(rb"[A-Za-z_][A-Za-z0-9_-]*")


def _split(raw: bytes) -> list[bytes]:
    """The fields of a qrels line: split on tabs, or on whitespace when it has no tab."""
    return raw.split(b"\t") if b"\t" in raw else raw.split()


def _is_header(parts: list[bytes]) -> bool:
    """Whether the first line's fields are a header: three, the third a name (``score``), never a number."""
    return len(parts) == 3 and _HEADER_FIELD.fullmatch(parts[2]) is not None


def read_qrels_tsv(path: PathLike) -> Qrels:
    """A BEIR qrels file on its own (no check against queries or corpus); an error when it judges nothing.

    Fast: plain tab-separated lines are read a block at a time, in compiled code (:mod:`finegrain.native`) or
    with numpy (:mod:`finegrain.io._columns`);
    any other file (a line split on spaces, a grade with spaces around it, any error) is read again by
    :func:`iter_qrels_tsv`, which names the line; both accept the same files with the same result.
    """
    try:
        return _read_qrels_tsv_fast(path)
    except Decline:
        return _read_qrels_tsv_lines(path)


def _read_qrels_tsv_lines(path: PathLike) -> Qrels:
    """The qrels, line by line: the reading that names the line of every error."""
    records = [(q, d, g) for _, q, d, g in iter_qrels_tsv(path)]
    if not records:
        raise DataFormatError(path, None, "at least one judgement 'query-id corpus-id score'", "no judgement")
    return Qrels.from_records(records)


def _read_qrels_tsv_fast(path: PathLike) -> Qrels:
    """The qrels, read a block at a time; :class:`Decline` on anything but plain lines of three
    tab-separated fields (after an optional header), which :func:`iter_qrels_tsv` then reads or refuses."""
    native = NativeLines(3, 2, integral=True, doc=1, tabs=True) if NativeLines.available() else None
    queries, docs = Interner(), Interner()
    g: list[np.ndarray] = []
    first = True
    for first_line, block in fast_blocks(path, numbered=native is None):  # the compiled reader names no line
        if b"\r" in block:  # a line end \r\n is read as \n; a \r anywhere else is the line reader's
            block = block.replace(b"\r\n", b"\n")
            block = block[:-1] if block.endswith(b"\r") else block
            if b"\r" in block:
                raise Decline
        if first:
            block = _drop_header(block)
            first = False
        if native is not None:
            native.add(block)
            continue
        f = split_tabs(block, first_line, 3)
        queries.add(f, 0)
        docs.add(f, 1)
        g.append(grades(f, 2))
    if native is not None:
        return judgement_table(*native.finish(), IdSyntax.TSV_FIELD)
    return judgements(queries, docs, g, IdSyntax.TSV_FIELD)


def _drop_header(block: bytes) -> bytes:
    """The file's first block with its header line emptied (its line end kept, so line numbers stay right);
    :class:`Decline` when the first line is blank (the line reader looks further for the header)."""
    end = block.find(b"\n")
    first = block if end < 0 else block[:end]
    if not first.strip():
        raise Decline
    return block[len(first):] if _is_header(_split(first)) else block


def qrels_splits(folder: PathLike) -> list[str]:
    """The splits of a BEIR folder's ``qrels/`` (``dev``, ``test``, ...), sorted; empty without the folder."""
    qdir = Path(folder) / "qrels"
    return sorted(p.stem for p in qdir.glob("*.tsv")) if qdir.is_dir() else []


def qrels_path(folder: PathLike, split: str | None = None) -> Path:
    """The qrels file of a BEIR folder (see the module docstring for the choice)."""
    root = Path(folder)
    qdir = root / "qrels"
    if split is not None:
        p = qdir / f"{split}.tsv"
        if p.is_file():
            return p
        splits = qrels_splits(root)
        raise FinegrainError(
            f"no qrels for split {split!r} in {str(root)!r} (looked for {str(p)!r})",
            f"available splits: {', '.join(splits)}" if splits else "the folder has no qrels/ files",
        )
    for p in (root / "qrels.tsv", qdir / "test.tsv"):
        if p.is_file():
            return p
    found = sorted(qdir.glob("*.tsv")) if qdir.is_dir() else []
    if len(found) == 1:
        return found[0]
    if found:
        raise FinegrainError(
            f"{str(root)!r} has several qrels splits: {', '.join(p.stem for p in found)}",
            "choose one with --split (split= in Python)",
        )
    raise FinegrainError(f"no qrels.tsv or qrels/*.tsv in {str(root)!r}", "a BEIR folder needs qrels")


def read_beir(folder: PathLike, split: str | None = None) -> tuple[Corpus, Queries, Qrels]:
    """Read a BEIR/MTEB folder -> ``(corpus, queries, qrels)``."""
    root = Path(folder)
    corpus = read_corpus(_jsonl(root, "corpus"))
    all_queries = read_queries(_jsonl(root, "queries"))
    qpath = qrels_path(root, split)
    try:
        judged = _read_qrels_tsv_fast(qpath)
        if not (all(map(all_queries.__contains__, judged.qids)) and all(map(corpus.__contains__, judged.vocab))):
            raise Decline
    except Decline:  # read again line by line, naming the line of the first error
        judged = _read_known_qrels(qpath, all_queries, corpus)
    queries = Queries(all_queries[q] for q in all_queries if q in judged)
    qrels = Qrels.from_dict({q: judged[q] for q in queries})
    return corpus, queries, qrels


def _read_known_qrels(qpath: Path, queries: Queries, corpus: Corpus) -> Qrels:
    """The qrels of a BEIR folder line by line: every line names a query and a document of the folder."""
    records: list[tuple[str, str, int]] = []
    for n, qid, doc, grade in iter_qrels_tsv(qpath):
        if qid not in queries:
            raise DataFormatError(qpath, n, "a query id of queries.jsonl", qid)
        if doc not in corpus:
            raise DataFormatError(qpath, n, "a document id of corpus.jsonl", doc)
        records.append((qid, doc, grade))
    if not records:
        raise DataFormatError(
            qpath, None, "at least one judgement 'query-id corpus-id score'", "no judgement",
            "check that this is the qrels file of the folder; nothing can be scored without judgements",
        )
    return Qrels.from_records(records)


# --------------------------------------------------------------------------- writing


def write_beir(
    folder: PathLike, corpus: Corpus, queries: Queries, qrels: Qrels, split: str | None = None
) -> None:
    """Write a BEIR folder; qrels go to ``qrels/<split>.tsv``, or ``qrels.tsv`` when ``split`` is None.

    A query whose qrels entry is empty has no qrels line in BEIR: it is
    written to ``queries.jsonl`` but is not part of the split when read back.
    Ids are checked against the id rule of each file (:mod:`finegrain.io.ids`)
    before any file is written.
    """
    root = Path(folder)
    path = root / "qrels.tsv" if split is None else root / "qrels" / f"{split}.tsv"
    hint = "rename it; BEIR qrels are tab-separated lines"
    check_ids(list(corpus), "document id", IdSyntax.JSON, target=f"{str(root / 'corpus.jsonl')!r}", hint="rename it")
    check_ids(list(queries), "query id", IdSyntax.JSON, target=f"{str(root / 'queries.jsonl')!r}", hint="rename it")
    check_ids(qrels.qids, "query id", IdSyntax.TSV_FIELD, target=f"{str(path)!r}", hint=hint)
    check_ids(qrels.vocab, "document id", IdSyntax.TSV_FIELD, target=f"{str(path)!r}", hint=hint)
    with open_text_write(root / "corpus.jsonl") as f:
        for d in corpus.values():
            f.write(_dumps({"_id": d.id, "title": d.title, "text": d.text, **_extra(d.meta, ("_id", "title", "text"))}))
    _write_queries(queries, root / "queries.jsonl")
    write_qrels_tsv(qrels, path)


def write_queries_jsonl(queries: Queries, path: PathLike) -> Path:
    """Write BEIR's ``queries.jsonl`` (one ``{"_id", "text"}`` object per line, in order); returns the path."""
    path = Path(path)
    check_ids(list(queries), "query id", IdSyntax.JSON, target=f"{str(path)!r}", hint="rename it")
    _write_queries(queries, path)
    return path


def _write_queries(queries: Queries, path: Path) -> None:
    """The lines of ``queries.jsonl``, ids already checked."""
    with open_text_write(path) as f:
        for q in queries.values():
            f.write(_dumps({"_id": q.id, "text": q.text, **_extra(q.meta, ("_id", "text"))}))


def write_qrels_tsv(qrels: Qrels, path: PathLike) -> Path:
    """Write BEIR/MTEB qrels (a ``query-id corpus-id score`` header, then one tab-separated line per
    judgement, queries in order); returns the path. A query without judgement has no line."""
    path = Path(path)
    hint = "rename it; BEIR qrels are tab-separated lines"
    check_ids(qrels.qids, "query id", IdSyntax.TSV_FIELD, target=f"{str(path)!r}", hint=hint)
    check_ids(qrels.vocab, "document id", IdSyntax.TSV_FIELD, target=f"{str(path)!r}", hint=hint)
    with open_text_write(path) as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for qid in qrels:
            judged = qrels[qid]
            f.writelines(f"{qid}\t{d}\t{int(g)}\n" for d, g in judged.items())
    return path


# --------------------------------------------------------------------------- internals


def _jsonl(root: Path, stem: str) -> Path:
    for name in (f"{stem}.jsonl", f"{stem}.jsonl.gz"):
        if (root / name).is_file():
            return root / name
    raise FinegrainError(f"no {stem}.jsonl in {str(root)!r}", "a BEIR folder holds corpus.jsonl, queries.jsonl and qrels")


def _extra(meta: Mapping[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in meta.items() if k not in known}


def _dumps(obj: Mapping[str, Any]) -> str:
    try:
        return json.dumps(obj, ensure_ascii=False) + "\n"
    except (TypeError, ValueError) as e:
        raise FinegrainError(f"cannot write record {obj.get('_id')!r} as JSON: {e}") from None
