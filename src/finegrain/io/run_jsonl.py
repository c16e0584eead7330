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
from finegrain.io._lines import iter_lines, open_text_write, parse_json
from finegrain.io.ids import IdSyntax, check_ids, first_bad_id, id_error, id_problem, trec_safe
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
    """
    p = Path(path)
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
