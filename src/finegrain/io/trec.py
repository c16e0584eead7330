"""TREC qrels and run files (plain, or gzipped when the name ends in ``.gz``).

Qrels lines are ``qid iter docid grade`` (4 whitespace-separated fields, the
grade an integer, ``iter`` ignored); run lines are ``qid Q0 docid rank score
tag`` (6 fields, the score a finite number). The rank column of a run is not
trusted: rankings always come from the scores by the one rule of
:mod:`finegrain.ranking`, as trec_eval does. Blank lines are skipped. A
(qid, docid) pair may appear once; a second one is an error naming both lines.

Ids (and the run tag) follow the id rule of :mod:`finegrain.io.ids` for
whitespace-separated fields: readers refuse an id with a control character,
an inner Unicode space or over :data:`~finegrain.io.ids.MAX_ID_CHARS`
characters, naming the line; writers refuse such an id, or a query id
starting with ``#``, before writing anything.

Queries with no entry (an empty mapping in :class:`Qrels` or :class:`Run`)
cannot be written in these formats and are absent after a round trip.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum
from pathlib import Path

import numpy as np

from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io import _columns
from finegrain.io._columns import COMMENT_LINE as _COMMENT_LINE
from finegrain.io._columns import WHITESPACE as _WS
from finegrain.io._columns import (
    Decline,
    Interner,
    NativeLines,
    blocks,
    check_line_lengths,
    fast_blocks,
    split_fields,
)
from finegrain.io._lines import DuplicateRecordError, PathLike, decode, iter_byte_lines, open_text_write
from finegrain.io.ids import IdSyntax, check_ids, first_bad_id, id_error
from finegrain.numbers import NumberError, decimal_column, parse_float, parse_grade
from finegrain.types import Qrels, Run

QRELS_EXPECTED = "4 whitespace-separated fields 'qid iter docid grade'"
RUN_EXPECTED = "6 whitespace-separated fields 'qid Q0 docid rank score tag'"


# --------------------------------------------------------------------------- reading modes

class Compat(Enum):
    """Which rules a reading and an evaluation follow: finegrain's strict default or trec_eval's.

    Defined here, where the first rule (how files are read) applies; the
    evaluation rules of ``TREC_EVAL`` live in :mod:`finegrain.evaluate.compat`.
    """

    STRICT = "strict"
    TREC_EVAL = "trec_eval"

    @classmethod
    def parse(cls, value: Compat | str | None) -> Compat:
        """``None`` or ``"strict"`` -> STRICT, ``"trec_eval"`` -> TREC_EVAL; anything else is an error."""
        if isinstance(value, Compat):
            return value
        if value is None:
            return cls.STRICT
        for mode in cls:
            if value == mode.value:
                return mode
        raise FinegrainError(
            f"unknown compatibility mode {value!r}", f"use one of: {', '.join(m.value for m in cls)}"
        )


_COMMENT_HINT = (
    "a line starting with '#' is a comment only in trec_eval's reading; "
    "read the file with --compat trec_eval (compat='trec_eval') or remove the line"
)


# --------------------------------------------------------------------------- qrels


def read_qrels(path: PathLike, *, compat: Compat | str | None = None) -> Qrels:
    """Read a TREC qrels file; queries keep the order of their first line.

    Strict (default): every non-blank line is ``qid iter docid grade``; a line
    whose first field starts with ``#`` is refused (it would otherwise become a
    query ``#301``). ``compat="trec_eval"``: a line whose first character is
    ``#`` is a comment and skipped, as trec_eval's ``get_qrels.c`` does. In
    both modes grades follow :mod:`finegrain.numbers`, ids the id rule
    (module docstring), NUL bytes are refused (trec_eval: "File may contain
    no NULL characters"), and a file with no judgement at all is an error.

    Fast: plain judgement lines are read a block at a time, in compiled code
    (:mod:`finegrain.native`) or with numpy (:mod:`finegrain.io._columns`);
    any other file (comments in strict mode, a 19-digit grade, any error) is
    read again line by line, which names the line of an error; both accept
    the same files with the same result.
    """
    te = Compat.parse(compat) is Compat.TREC_EVAL
    try:
        return _read_qrels_fast(path, te)
    except Decline:
        return _read_qrels_lines(path, te)


def _read_qrels_fast(path: PathLike, te: bool) -> Qrels:
    """The qrels, read a block at a time (:mod:`finegrain.io._columns`); :class:`Decline` on
    anything but plain judgement lines, which :func:`_read_qrels_lines` then reads or refuses."""
    native = NativeLines(4, 3, integral=True) if NativeLines.available() else None
    queries, docs = Interner(), Interner()
    g: list[np.ndarray] = []
    for first_line, block in fast_blocks(path, numbered=native is None):  # the compiled reader names no line
        if b"#" in block:
            if te:
                block = _FIRST_CHAR_COMMENT.sub(b"", block)  # keeps the line ends, so line numbers stay right
            elif _COMMENT_LINE.search(block):
                raise Decline
        if native is not None:
            native.add(block)
            continue
        f = split_fields(block, first_line, 4)
        queries.add(f, 0)
        docs.add(f, 2)
        g.append(_columns.grades(f, 3))
    if native is not None:
        return _columns.judgement_table(*native.finish(), IdSyntax.TOKEN)
    return _columns.judgements(queries, docs, g, IdSyntax.TOKEN)


_FIRST_CHAR_COMMENT = re.compile(rb"^#[^\n]*", re.MULTILINE)  # trec_eval's get_qrels.c: '#' as the first character


def _read_qrels_lines(path: PathLike, te: bool) -> Qrels:
    """The qrels, line by line: the reading that names the line of every error."""
    seen: dict[tuple[str, str], int] = {}
    records: list[tuple[str, str, int]] = []
    comments = 0
    for n, raw in iter_byte_lines(path):
        if te and raw[:1] == b"#":
            comments += 1
            continue
        parts = raw.split()
        if not parts:
            continue
        if b"\0" in raw:
            raise _nul(path, n, raw)
        if not te and parts[0][:1] == b"#":
            raise DataFormatError(path, n, QRELS_EXPECTED, decode(path, n, raw), _COMMENT_HINT)
        if len(parts) != 4:
            hint = "trec_eval refuses trailing fields in qrels too" if len(parts) > 4 else None
            raise DataFormatError(path, n, QRELS_EXPECTED, decode(path, n, raw), hint)
        qid, _, doc, grade_s = (decode(path, n, p) for p in parts)
        try:
            grade = parse_grade(grade_s)
        except NumberError as e:
            raise DataFormatError(path, n, "an integer grade in field 4", e.reason, e.hint) from None
        first = seen.setdefault((qid, doc), n)
        if first != n:
            raise DuplicateRecordError(path, n, first, "(qid, docid) pair", f"{qid} {doc}")
        records.append((qid, doc, grade))
    if not records:
        raise DataFormatError(
            path, None, "at least one judgement line 'qid iter docid grade'",
            f"no judgement ({comments} comment lines)" if comments else "an empty file",
            "check that this is the qrels file; nothing can be scored without judgements",
        )
    qrels = Qrels.from_records(records)
    _check_read_ids(path, qrels, seen)
    return qrels


def write_qrels(qrels: Qrels, path: PathLike) -> None:
    """Write ``qid 0 docid grade`` lines, queries in their order, documents by id (whole or not at all).

    Ids that break the id rule are refused before anything is written.
    """
    _check_write_ids(path, "qrels", qrels.qids, qrels.vocab)
    with open_text_write(path) as f:
        for qid in qrels:
            judged = qrels[qid]
            f.writelines(f"{qid} 0 {d} {int(judged[d])}\n" for d in sorted(judged))


# --------------------------------------------------------------------------- runs


def read_run(
    path: PathLike, name: str | None = None, *, compat: Compat | str | None = None, allow_empty: bool = False
) -> Run:
    """Read a TREC run file; ``name`` defaults to the tag of the first line, else the file stem.

    Strict (default): every non-blank line has exactly 6 fields and a line
    starting with ``#`` is refused. ``compat="trec_eval"`` reads as
    trec_eval's ``get_trec_results.c``: lines whose first non-blank character
    is ``#`` are comments, and fields after the sixth (the run tag) are
    ignored. In both modes scores follow :mod:`finegrain.numbers` (no
    ``1_0``, no non-ASCII digits, finite), NUL bytes are refused, and a file
    with no result line is an error unless ``allow_empty`` (then the run has
    no query: every query scores as missing from the run).

    Fast: the file is read in blocks split into fields, ids interned and
    scores converted in compiled code (:mod:`finegrain.native`) or with numpy
    column by column (:mod:`finegrain.io._columns`),
    so no Python object is made per line. A file that path does not take as it
    is (a comment line, a hex score, any error) is read again by a block reader
    that takes one Python object per field and names the exact line of an
    error; both accept the same files with the same result. The rank field (4)
    is not checked or used.
    """
    te = Compat.parse(compat) is Compat.TREC_EVAL
    try:
        return _read_run_fast(path, name, te)
    except Decline:
        return _read_run_blocks(path, name, te, allow_empty)


def _read_run_fast(path: PathLike, name: str | None, te: bool) -> Run:
    """The run, read a block at a time (:mod:`finegrain.io._columns`); :class:`Decline` on
    anything but plain result lines, which :func:`_read_run_blocks` then reads or refuses."""
    native = NativeLines(6, 4, integral=False, more=te) if NativeLines.available() else None
    queries, docs = Interner(), Interner()
    s: list[np.ndarray] = []
    tag: str | None = None
    for first_line, block in fast_blocks(path, numbered=native is None):  # the compiled reader names no line
        if b"#" in block and _COMMENT_LINE.search(block):
            if not te:
                raise Decline
            block = _COMMENT_LINE.sub(b"", block)
        if native is not None:
            native.add(block)
            if tag is None and (row := _columns.first_row(block)):
                tag = row[5].decode("utf-8")  # fast_blocks gives valid UTF-8 only
            continue
        f = split_fields(block, first_line, 6, more=te)
        if not len(f):
            continue
        if tag is None:
            tag = _columns.text(f, 0, 5)
        queries.add(f, 0)
        docs.add(f, 2)
        s.append(_columns.scores(f, 4))
    if tag is None:
        raise Decline
    if native is not None:
        qids, qc, vocab, dc, scores = native.finish()
    else:
        qids, qc = queries.codes()
        vocab, dc = docs.codes()
        scores = np.concatenate(s)
    _columns.check_ids(qids, IdSyntax.TOKEN)
    _columns.check_ids(vocab, IdSyntax.TOKEN)
    _columns.check_ids([tag], IdSyntax.TOKEN)
    if _columns.repeated_pair(qc, dc, len(vocab)):
        raise Decline
    offsets, order = _by_query(qc, len(qids))
    if order is not None:
        dc, scores = dc[order], scores[order]
    return Run(qids, offsets, dc, vocab, scores, name=tag if name is None else name, check=False)


def _by_query(q: np.ndarray, n_queries: int) -> tuple[np.ndarray, np.ndarray | None]:
    """``(offsets, order)``: the entries of each query together, in file order within a query; ``order``
    None when the file lists each query's lines together already (as run files do)."""
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(np.bincount(q, minlength=n_queries), out=offsets[1:])
    grouped = bool((q[1:] >= q[:-1]).all())  # codes follow first appearance: grouped means non-decreasing
    return offsets, None if grouped else np.argsort(q, kind="stable")


def _read_run_blocks(path: PathLike, name: str | None, te: bool, allow_empty: bool) -> Run:
    """The run, a block at a time with one Python object per field: the reading that names the line of
    every error."""
    qindex: dict[bytes, int] = {}
    dindex: dict[bytes, int] = {}
    q_parts: list[np.ndarray] = []
    d_parts: list[np.ndarray] = []
    s_parts: list[np.ndarray] = []
    line_parts: list[np.ndarray] = []
    tag: bytes | None = None
    for first_line, block in blocks(path):
        fields, line_nos = _split_block(path, first_line, block, te)
        if not fields:
            continue
        if tag is None:
            tag = fields[5]
        q_parts.append(_codes(fields[0::6], qindex, runs=True))
        d_parts.append(_codes(fields[2::6], dindex))
        s_parts.append(_scores(path, fields[4::6], line_nos))
        line_parts.append(line_nos)

    qids = _decode_keys(path, qindex)
    vocab = _decode_keys(path, dindex)
    _check_read_keys(path, qids, 0)
    _check_read_keys(path, vocab, 2)
    if tag is not None:
        tag_line = int(line_parts[0][0])
        tag_s = decode(path, tag_line, tag)
        bad = first_bad_id([tag_s], IdSyntax.TOKEN)
        if bad is not None:
            raise id_error(path, tag_line, tag_s, "a run tag", IdSyntax.TOKEN, bad[1])
    if name is None:
        name = tag_s if tag is not None else _stem(path)
    if not q_parts:
        if not allow_empty:
            raise DataFormatError(
                path, None, "at least one result line 'qid Q0 docid rank score tag'",
                "no result line (only comment lines)" if te and _has_comment_line(path) else "an empty file",
                "check that the system wrote its results; to score an empty run on purpose "
                "(every query counts as missing), pass --allow-empty-run (allow_empty=True)",
            )
        return Run((), np.zeros(1, np.int64), np.empty(0, np.int64), (), np.empty(0), name=name, check=False)

    q = np.concatenate(q_parts)
    d = np.concatenate(d_parts)
    scores = np.concatenate(s_parts)
    lines = np.concatenate(line_parts)
    # One sort puts duplicate (qid, docid) pairs next to each other, the first line first.
    key = q * max(len(vocab), 1) + d
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    dup = np.flatnonzero(sorted_key[1:] == sorted_key[:-1])
    if len(dup):
        # The sort is stable, so each pair is (earlier line, later line); report
        # the pair whose repeat comes first in the file.
        k = dup[np.argmin(lines[order[dup + 1]])]
        i, j = order[k], order[k + 1]
        a, b = int(lines[i]), int(lines[j])
        raise DuplicateRecordError(path, b, a, "(qid, docid) pair", f"{qids[q[i]]} {vocab[d[i]]}")
    offsets, grouping = _by_query(q, len(qids))
    if grouping is not None:
        d, scores = d[grouping], scores[grouping]
    return Run(qids, offsets, d, vocab, scores, name=name, check=False)


def write_run(run: Run, path: PathLike, tag: str | None = None) -> None:
    """Write ``qid Q0 docid rank score tag`` lines, each query ranked by the one rule.

    Ranks are 1-based; scores are written with ``repr`` so reading the file
    back gives exactly the same floats. ``tag`` defaults to the run name.
    Ids or a tag that break the id rule are refused before anything is
    written; :func:`finegrain.results.files.save_run` saves such a run as
    ``run.jsonl`` instead.
    """
    tag = run.name if tag is None else tag
    target = f"the TREC run {str(path)!r}"
    check_ids([tag], "run tag", IdSyntax.TOKEN, target=target, hint="give a tag without spaces (--name / name=...)")
    _check_write_ids(path, "run", run.qids, run.vocab)
    order = run.order
    docs = run.doc_codes[order].tolist()
    values = run.values[order].tolist()
    offsets = run.offsets.tolist()
    vocab = run.vocab
    with open_text_write(path) as f:
        for i, qid in enumerate(run.qids):
            a, b = offsets[i], offsets[i + 1]
            f.writelines(
                f"{qid} Q0 {vocab[c]} {r} {s!r} {tag}\n"
                for r, (c, s) in enumerate(zip(docs[a:b], values[a:b]), 1)
            )


# --------------------------------------------------------------------------- internals


def _split_block(path: PathLike, first_line: int, block: bytes, trec_eval: bool = False) -> tuple[list[bytes], np.ndarray]:
    """The block's fields as one flat list (6 per line) and the line number of every row.

    Blank lines are dropped; a line with any other number of fields is an
    error naming it (with ``trec_eval``, more than 6 fields are allowed and
    the rest dropped, and comment lines are blanked first). Field counts per
    line are found with numpy on the raw bytes, so no Python object is made
    per line on the common path.
    """
    if b"\0" in block:
        k = block.index(b"\0")
        n = first_line + block.count(b"\n", 0, k)
        a = block.rfind(b"\n", 0, k) + 1
        z = block.find(b"\n", k)
        raise _nul(path, n, block[a : z if z >= 0 else len(block)])
    b = np.frombuffer(block, dtype=np.uint8)
    newlines = np.flatnonzero(b == 10)
    check_line_lengths(path, first_line, newlines, len(block))
    if b"#" in block:
        m = _COMMENT_LINE.search(block)
        if m is not None:
            if not trec_eval:
                n = first_line + block.count(b"\n", 0, m.start())
                raise DataFormatError(path, n, RUN_EXPECTED, decode(path, n, m.group().strip()), _COMMENT_HINT)
            block = _COMMENT_LINE.sub(b"", block)  # keeps the line ends, so line numbers stay right
            b = np.frombuffer(block, dtype=np.uint8)
            newlines = np.flatnonzero(b == 10)
    fields = block.split()
    ws = _WS[b]
    starts = np.flatnonzero(~ws & np.concatenate(([True], ws[:-1])))
    n_lines = len(newlines) + (0 if block.endswith(b"\n") else 1)
    # Fields before each line end, differenced: the number of fields on each line.
    ends = np.searchsorted(starts, newlines)
    if n_lines > len(newlines):
        ends = np.append(ends, len(starts))
    counts = np.diff(ends, prepend=0)
    bad = np.flatnonzero((counts < 6) & (counts != 0) if trec_eval else (counts != 6) & (counts != 0))
    if len(bad):
        k = int(bad[0])
        a = int(newlines[k - 1]) + 1 if k > 0 else 0
        z = int(newlines[k]) if k < len(newlines) else len(block)
        n = first_line + k
        hint = "trailing fields after the run tag are read with --compat trec_eval" if counts[k] > 6 else None
        raise DataFormatError(path, n, RUN_EXPECTED, decode(path, n, block[a:z].rstrip(b"\r")), hint)
    if len(fields) == 6 * n_lines and (counts == 6).all():
        return fields, np.arange(first_line, first_line + n_lines, dtype=np.int64)
    rows = np.flatnonzero(counts)
    if trec_eval and len(fields) != 6 * len(rows):
        firsts = (ends - counts)[rows].tolist()
        fields = [x for f in firsts for x in fields[f : f + 6]]
    return fields, rows + first_line


def _has_comment_line(path: PathLike) -> bool:
    return any(_COMMENT_LINE.match(raw) for _, raw in iter_byte_lines(path))


def _nul(path: PathLike, n: int, raw: bytes) -> DataFormatError:
    return DataFormatError(
        path, n, "text without NUL bytes (as trec_eval requires)", repr(raw)[2:-1],
        "the file is binary or corrupt; write it again as text",
    )


def _codes(column: list[bytes], index: dict[bytes, int], runs: bool = False) -> np.ndarray:
    """Codes of ``column`` in ``index``, adding unseen keys in order of appearance.

    With ``runs``, only the first of each run of equal values is looked up
    (query ids come grouped in run files).
    """
    if runs and column:
        # An object array compares the bytes themselves: no fixed-width copy (which
        # would drop trailing NULs and size every id like the longest).
        a = np.empty(len(column), dtype=object)
        a[:] = column
        heads = np.flatnonzero(np.concatenate(([True], a[1:] != a[:-1])))
        head_codes = _codes([column[i] for i in heads.tolist()], index)
        return np.repeat(head_codes, np.diff(np.append(heads, len(column))))
    for key in dict.fromkeys(column):
        if key not in index:
            index[key] = len(index)
    return np.fromiter(map(index.__getitem__, column), np.int64, len(column))


def _scores(path: PathLike, column: list[bytes], line_nos: np.ndarray) -> np.ndarray:
    scores = decimal_column(column)
    if scores is not None:
        return scores
    values = np.empty(len(column), dtype=np.float64)
    for k, x in enumerate(column):
        try:
            values[k] = parse_float(x)
        except NumberError as e:
            n = int(line_nos[k])
            raise DataFormatError(path, n, "a finite number as the score in field 5", e.reason, e.hint) from None
    return values


def _decode_keys(path: PathLike, index: dict[bytes, int]) -> list[str]:
    try:
        return [k.decode("utf-8") for k in index]
    except UnicodeDecodeError:
        bad = next(k for k in index if not _is_utf8(k))
        for n, raw in iter_byte_lines(path):
            if bad in raw.split():
                decode(path, n, raw)
        raise DataFormatError(path, None, "UTF-8 text", repr(bad)) from None


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _check_write_ids(path: PathLike, kind: str, qids: Sequence[str], docs: Sequence[str]) -> None:
    """The id rule for a TREC file about to be written: query ids first on their line, then document ids."""
    target = f"the TREC {kind} file {str(path)!r}"
    hint = ("rename it, or save the run as run.jsonl, where spaces and control characters are fine" if kind == "run"
            else "rename it, or write BEIR qrels (.tsv), where ids may hold spaces")
    check_ids(qids, "query id", IdSyntax.TOKEN, target=target, hint=hint, first_field=True)
    check_ids(docs, "document id", IdSyntax.TOKEN, target=target, hint=hint)


def _check_read_ids(path: PathLike, qrels: Qrels, lines: dict[tuple[str, str], int]) -> None:
    """The id rule for the ids of a qrels file just read (``lines``: (qid, docid) -> line), naming the line."""
    for k, what, ids in ((0, "a query id", qrels.qids), (1, "a document id", qrels.vocab)):
        bad = first_bad_id(ids, IdSyntax.TOKEN)
        if bad is not None:
            n = next(n for pair, n in lines.items() if pair[k] == bad[0])
            raise id_error(path, n, bad[0], what, IdSyntax.TOKEN, bad[1])


def _check_read_keys(path: PathLike, keys: list[str], field: int) -> None:
    """The id rule for the ids of a run just read (``field``: 0 query ids, 2 document ids), naming the line."""
    bad = first_bad_id(keys, IdSyntax.TOKEN)
    if bad is None:
        return
    value = str(bad[0])
    raw_value = value.encode("utf-8")
    what = "a query id" if field == 0 else "a document id"
    for n, raw in iter_byte_lines(path):
        parts = raw.split()
        if len(parts) > field and parts[field] == raw_value and not _COMMENT_LINE.match(raw):
            raise id_error(path, n, value, what, IdSyntax.TOKEN, bad[1])
    raise id_error(path, None, value, what, IdSyntax.TOKEN, bad[1])


def _stem(path: PathLike) -> str:
    p = Path(path)
    if p.suffix == ".gz":
        p = p.with_suffix("")
    return p.stem if p.suffix else p.name
