"""Runs as JSON lines (``run.jsonl``): any query or document id survives, spaces and all.

A TREC run line is whitespace-separated, so an id with a space, a tab or a
newline in it (PhotoBench file names, for one) cannot be written there. This
format keeps every id exactly::

    {"format": "finegrain.run/1", "name": "bm25-okapi"}
    {"qid": "q 1", "results": [["IMG 0001.jpg", 12.5], ["IMG\\t2.jpg", 3.0]]}

The first line is a header; then one line per query, its results in ranked
order (the one rule of :mod:`finegrain.ranking`) as ``[doc_id, score]`` pairs.
Scores are JSON numbers written with ``repr`` precision, so they read back to
the same floats (infinite scores are written as ``Infinity``, as Python's
:mod:`json` does). A ``.gz`` path is gzip-compressed. Ids and the run name
follow the id rule of JSON formats (:mod:`finegrain.io.ids`: not blank, not
over-long, valid text), checked by the writer before it writes and by the
reader with the line.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._columns import Decline, Fields, Interner, NativeLines, fast_blocks, repeated_pair
from finegrain.io._columns import check_ids as check_fast_ids
from finegrain.io._lines import iter_lines, open_text_write, parse_json
from finegrain.io.ids import IdSyntax, check_ids, first_bad_id, id_error, id_problem, trec_safe
from finegrain.numbers import decimal_rows
from finegrain.types import Run

FORMAT = "finegrain.run/1"
_HINT = "write it with finegrain.io.run_jsonl.write_run_jsonl (or 'finegrain eval --out DIR')"


def is_trec_safe(run: Run) -> bool:
    """True when every query id, document id and the run name can be a TREC field.

    The id rule of :mod:`finegrain.io.ids` for whitespace-separated fields:
    not blank, not over-long, free of whitespace (any Unicode space) and of
    control characters, and a query id does not start with ``#`` (a comment
    line for trec_eval-compatible readers).
    """
    return trec_safe([run.name]) and trec_safe(run.qids, first_field=True) and trec_safe(run.vocab)


def write_run_jsonl(run: Run, path: str | os.PathLike[str]) -> Path:
    """Write ``run`` to ``path`` (whole or not at all); returns the path.

    Ids and the name that break the id rule are refused before anything is written.
    """
    p = Path(path)
    target = f"the run file {str(p)!r}"
    check_ids([run.name], "run name", IdSyntax.JSON, target=target, hint="give the run another name")
    check_ids(run.qids, "query id", IdSyntax.JSON, target=target, hint=_RENAME)
    check_ids(run.vocab, "document id", IdSyntax.JSON, target=target, hint=_RENAME)
    order = run.order
    docs = run.doc_codes[order].tolist()
    values = run.values[order].tolist()
    offsets = run.offsets.tolist()
    vocab = run.vocab
    try:
        with open_text_write(p) as f:
            f.write(_dumps({"format": FORMAT, "name": run.name}))
            for i, qid in enumerate(run.qids):
                a, b = offsets[i], offsets[i + 1]
                pairs = [[vocab[c], s] for c, s in zip(docs[a:b], values[a:b])]
                f.write(_dumps({"qid": qid, "results": pairs}))
    except OSError as e:
        raise FinegrainError(f"cannot write the run to {str(p)!r}: {e.strerror}", "choose a writable folder") from None
    return p


_RENAME = "rename it where the run was made"


def read_run_jsonl(path: str | os.PathLike[str], name: str | None = None) -> Run:
    """Read a file written by :func:`write_run_jsonl`; ``name`` overrides the saved run name.

    Fails with :class:`~finegrain.errors.DataFormatError` (path, line, expected,
    found) on anything else.

    Fast: lines in the shape :func:`write_run_jsonl` writes (no escape in a string, plain numbers) are
    read a block at a time, ids interned and scores converted in compiled code (:mod:`finegrain.native`)
    or with numpy column by column (:mod:`finegrain.io._columns`); any other file (other spacing or key
    order, ``Infinity``, an escape, any error) is read again line by line with :mod:`json`, which names
    the line of an error. Both accept the same files with the same run.
    """
    try:
        return _read_run_jsonl_fast(Path(path), name)
    except Decline:
        return _read_run_jsonl_lines(Path(path), name)


def _read_run_jsonl_lines(p: Path, name: str | None) -> Run:
    """The run, line by line through :mod:`json`: the reading that names the line of every error."""
    qids: list[str] = []
    seen_q: set[str] = set()
    offsets = [0]
    codes: list[int] = []
    values: list[float] = []
    vocab: dict[str, int] = {}
    saved_name: str | None = None
    header = False
    for line_no, obj in _iter_objects(p):
        if not header:
            if obj.get("format") != FORMAT:
                raise DataFormatError(p, line_no, f'a header line {{"format": "{FORMAT}", ...}}',
                                      _short(obj), hint=_HINT)
            name_value = obj.get("name", "run")
            if not isinstance(name_value, str):
                raise DataFormatError(p, line_no, "a string run name", _short(name_value), hint=_HINT)
            problem = id_problem(name_value, IdSyntax.JSON)
            if problem is not None:
                raise id_error(p, line_no, name_value, "a run name", IdSyntax.JSON, problem)
            saved_name, header = name_value, True
            continue
        qid, results = obj.get("qid"), obj.get("results")
        if not isinstance(qid, str) or not isinstance(results, list):
            raise DataFormatError(p, line_no, '{"qid": string, "results": [[doc_id, score], ...]}', _short(obj), hint=_HINT)
        if qid in seen_q:
            raise DataFormatError(p, line_no, "each query on one line", f"query {qid!r} again",
                                  hint="merge its results into one line")
        seen_q.add(qid)
        seen_d: set[str] = set()
        for pair in results:
            if (not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], str)
                    or isinstance(pair[1], bool) or not isinstance(pair[1], int | float)):
                raise DataFormatError(p, line_no, "[doc_id, score] pairs (a string and a number)", _short(pair), hint=_HINT)
            doc, score = pair
            if isinstance(score, float) and math.isnan(score):
                raise DataFormatError(p, line_no, "a number score", f"NaN for document {doc!r}")
            if doc in seen_d:
                raise DataFormatError(p, line_no, "each document once per query", f"document {doc!r} twice in query {qid!r}")
            seen_d.add(doc)
            try:
                value = float(score)
            except OverflowError:
                raise DataFormatError(p, line_no, "a score in the double range", f"{str(score)[:40]}... for document {doc!r}") from None
            codes.append(vocab.setdefault(doc, len(vocab)))
            values.append(value)
        qids.append(qid)
        offsets.append(len(codes))
    if not header:
        raise DataFormatError(p, None, f'a header line {{"format": "{FORMAT}", ...}}', "an empty file", hint=_HINT)
    _check_read_ids(p, qids, list(vocab))
    return Run(qids, np.asarray(offsets, dtype=np.int64), np.asarray(codes, dtype=np.int64), list(vocab),
               np.asarray(values, dtype=np.float64), name=name if name is not None else (saved_name or "run"))


# --------------------------------------------------------------------------- the fast path


def _read_run_jsonl_fast(p: Path, name: str | None) -> Run:
    """The run, read a block at a time; :class:`Decline` on anything but the header and query
    lines exactly as :func:`write_run_jsonl` writes them, which :func:`_read_run_jsonl_lines` then reads
    or refuses."""
    native = NativeLines.run_jsonl() if NativeLines.available() else None
    queries, docs = Interner(), Interner()
    counts: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    saved_name: str | None = None
    for _, block in fast_blocks(p, numbered=native is None):  # the compiled reader names no line
        if saved_name is None:
            saved_name, block = _header(block)
        if not block:
            continue
        if native is not None:
            native.add(block)
            continue
        q, d, n, v = _query_lines(block)
        queries.add(q, 0)
        docs.add(d, 0)
        counts.append(n)
        scores.append(v)
    if native is not None:
        qids, _, vocab, dc, score_column = native.finish()
        per_query = native.counts
    else:
        qids, _ = queries.codes()
        vocab, dc = docs.codes()
        per_query = np.concatenate(counts) if counts else np.empty(0, dtype=np.int64)
        score_column = np.concatenate(scores) if scores else np.empty(0, dtype=np.float64)
    if saved_name is None or not len(per_query):
        raise Decline
    if len(qids) != len(per_query):  # a query on two lines
        raise Decline
    check_fast_ids(qids, IdSyntax.JSON)
    check_fast_ids(vocab, IdSyntax.JSON)
    offsets = np.zeros(len(per_query) + 1, dtype=np.int64)
    np.cumsum(per_query, out=offsets[1:])
    if repeated_pair(np.repeat(np.arange(len(qids), dtype=np.int64), per_query), dc, len(vocab)):
        raise Decline  # a document twice in one query
    return Run(qids, offsets, dc, vocab, score_column, name=name if name is not None else saved_name, check=False)


def _header(block: bytes) -> tuple[str, bytes]:
    """``(saved name, the rest of the block)`` of the file's first block: a header line with no escape."""
    end = block.find(b"\n")
    line = block if end < 0 else block[:end]
    if b"\\" in line or b"\r" in line:
        raise Decline
    try:
        obj = json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError):  # not JSON (JSONDecodeError), a constant, too deep: json names it
        raise Decline from None
    value = obj.get("name", "run") if isinstance(obj, dict) and obj.get("format") == FORMAT else None
    if not isinstance(value, str) or id_problem(value, IdSyntax.JSON) is not None:
        raise Decline
    return value, block[len(line) + 1 :]


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _word(text: bytes) -> int:
    return int.from_bytes(text, "little")


_QID, _RESULTS = _word(b"qid"), _word(b"results")
_OPEN, _COLON, _COMMA, _FIRST = _word(b"{"), _word(b": "), _word(b", "), _word(b": [[")
_NEXT, _LAST, _NONE = _word(b"], ["), _word(b"]]}"), _word(b": []}")
_MASK = np.array([(1 << (8 * r)) - 1 for r in range(9)], dtype=np.uint64)
_MAX_NUMBER_BYTES = 64


def _query_lines(block: bytes) -> tuple[Fields, Fields, np.ndarray, np.ndarray]:
    """``(query ids, document ids, results per line, scores)`` of a block of lines
    ``{"qid": "q", "results": [["d", 1.5], ...]}`` with no escape, checked byte for byte."""
    buf = np.frombuffer(block, dtype=np.uint8)
    if b"\\" in block or ((buf < 32) & (buf != 10)).any():  # an escape, a control character: json's
        raise Decline
    newlines = np.flatnonzero(buf == 10)
    ends = newlines if block.endswith(b"\n") else np.append(newlines, len(buf))
    starts = np.concatenate(([0], newlines[: len(ends) - 1] + 1))
    quotes = np.flatnonzero(buf == 34)
    if len(quotes) % 2:
        raise Decline
    opens, closes = quotes[0::2] + 1, quotes[1::2]  # string k is block[opens[k]:closes[k]]
    line = np.searchsorted(newlines, opens)  # the line of each string
    if (np.searchsorted(newlines, closes) != line).any():
        raise Decline
    per_line = np.bincount(line, minlength=len(ends))
    if (per_line < 3).any():
        raise Decline
    first = np.concatenate(([0], np.cumsum(per_line)[:-1]))  # each line's first string
    words = np.ndarray((len(block) + 1,), dtype="<u8", buffer=block + bytes(8), strides=(1,))

    def equal(at: np.ndarray, length: np.ndarray | int, value: int) -> bool:
        return bool(((words[np.minimum(at, len(words) - 1)] & _MASK[np.clip(length, 0, 8)]) == value).all()
                    and (np.asarray(length) == (value.bit_length() + 7) // 8).all())

    # {"qid": "Q", "results": [ ... ]}: the bytes around the first three strings of every line
    key, qid, res = first, first + 1, first + 2
    if not (equal(starts, opens[key] - 1 - starts, _OPEN) and equal(opens[key], closes[key] - opens[key], _QID)
            and equal(closes[key] + 1, opens[qid] - 1 - closes[key] - 1, _COLON)
            and equal(closes[qid] + 1, opens[res] - 1 - closes[qid] - 1, _COMMA)
            and equal(opens[res], closes[res] - opens[res], _RESULTS)):
        raise Decline
    empty = per_line == 3
    if not equal(closes[res[empty]] + 1, ends[empty] - closes[res[empty]] - 1, _NONE):
        raise Decline
    full = ~empty
    if not equal(closes[res[full]] + 1, opens[res[full] + 1] - 1 - closes[res[full]] - 1, _FIRST):
        raise Decline
    # every document string is followed by ", " NUMBER and "], [" (the next document) or "]]}" (the line end)
    is_doc = np.ones(len(opens), dtype=bool)
    is_doc[key], is_doc[qid], is_doc[res] = False, False, False
    doc = np.flatnonzero(is_doc)
    last = np.zeros(len(opens), dtype=bool)
    last[first + per_line - 1] = True
    last_doc = last[doc]
    after = np.where(last_doc, ends[line[doc]] - 3, opens[np.minimum(doc + 1, len(opens) - 1)] - 1 - 4)
    if not (equal(closes[doc] + 1, 2, _COMMA) and equal(after[~last_doc], 4, _NEXT)
            and equal(after[last_doc], 3, _LAST)):
        raise Decline
    number = Fields(words, (closes[doc] + 3)[:, None], after[:, None], doc)
    lines = np.arange(len(ends))
    return (Fields(words, opens[qid][:, None], closes[qid][:, None], lines),
            Fields(words, opens[doc][:, None], closes[doc][:, None], doc),
            per_line - 3, _json_numbers(number))


def _json_numbers(f: Fields) -> np.ndarray:
    """The scores of JSON number literals (``-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?``), the doubles
    :mod:`json` gives (an integer literal through ``int``: ``-0`` is 0.0); else :class:`Decline`."""
    lengths = f.ends[:, 0] - f.starts[:, 0]
    if not len(lengths):
        return np.empty(0, dtype=np.float64)
    w = int(lengths.max())
    if w > _MAX_NUMBER_BYTES or (lengths <= 0).any():
        raise Decline
    chars = f.column(0, w // 8 + 1).view(np.uint8)[:, : w + 1]  # one zero byte past every field
    values = decimal_rows(chars[:, :w], lengths)  # C's decimal grammar, finite
    if values is None:
        raise Decline
    rows = np.arange(len(chars))
    digit = (chars >= 48) & (chars <= 57)
    lead = (chars[:, 0] == 45).astype(np.int64)  # where the digits start
    dot = chars == 46
    if ((chars[:, 0] == 43).any() or not digit[rows, lead].all()  # a sign "+" or a number starting ".5"
            or ((chars[rows, lead] == 48) & digit[rows, lead + 1]).any()  # a leading zero "01"
            or (dot[:, :-1] & ~digit[:, 1:]).any()):  # a dot without a digit after it: "1." "1.e5"
        raise Decline
    integer = ~(dot | (chars == 101) | (chars == 69)).any(axis=1)
    values[integer] += 0.0  # json reads "-0" as the integer 0, then 0.0
    return values


# --------------------------------------------------------------------------- internals


def _dumps(obj: Any) -> str:
    """One JSON line, readable UTF-8 (no ``\\uXXXX`` escapes: the ids were checked to be valid text)."""
    return json.dumps(obj, ensure_ascii=False) + "\n"


def _check_read_ids(path: Path, qids: list[str], docs: list[str]) -> None:
    """The id rule of JSON formats for the ids just read; an error names the first line that holds a bad one."""
    for what, values in (("a query id", qids), ("a document id", docs)):
        bad = first_bad_id(values, IdSyntax.JSON)
        if bad is None:
            continue
        value = bad[0]
        for line_no, obj in _iter_objects(path):
            results = obj.get("results")
            here = (obj.get("qid") == value if what == "a query id"
                    else isinstance(results, list) and any(isinstance(r, list) and r[:1] == [value] for r in results))
            if here:
                raise id_error(path, line_no, value, what, IdSyntax.JSON, bad[1])
        raise id_error(path, None, value, what, IdSyntax.JSON, bad[1])


def _iter_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of every non-blank line, through finegrain's one JSON reader."""
    if not path.is_file():
        raise FinegrainError(f"no run file at {str(path)!r}", "pass a run.jsonl written by 'finegrain eval --out DIR'")
    for line_no, line in iter_lines(path):
        if not line.strip():
            continue
        obj = parse_json(path, line_no, line, infinity=True)
        if not isinstance(obj, dict):
            raise DataFormatError(path, line_no, "a JSON object", type(obj).__name__)
        yield line_no, obj


def _short(value: Any, width: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"
