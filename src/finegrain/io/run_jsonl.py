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
:mod:`json` does). A ``.gz`` path is gzip-compressed.
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
from finegrain.types import Run

FORMAT = "finegrain.run/1"
_HINT = "write it with finegrain.io.run_jsonl.write_run_jsonl (or 'finegrain eval --out DIR')"


def is_trec_safe(run: Run) -> bool:
    """True when every query id, document id and the run name can be a TREC field.

    A TREC field must be non-empty, free of whitespace (any Unicode space, not
    only ASCII) and of control characters, and a query id must not start with
    ``#`` (a comment line for trec_eval-compatible readers).
    """

    def ok(s: str) -> bool:
        return bool(s) and s.isprintable() and not any(ch.isspace() for ch in s)

    return (ok(run.name) and all(ok(q) and not q.startswith("#") for q in run.qids)
            and all(ok(d) for d in run.vocab))


def write_run_jsonl(run: Run, path: str | os.PathLike[str]) -> Path:
    """Write ``run`` to ``path``, whole or not at all (:func:`finegrain.io._lines.open_text_write`); returns the path."""
    p = Path(path)
    order = run.order
    docs = run.doc_codes[order].tolist()
    values = run.values[order].tolist()
    offsets = run.offsets.tolist()
    vocab = run.vocab
    with open_text_write(p) as f:
        f.write(_dumps({"format": FORMAT, "name": run.name}))
        for i, qid in enumerate(run.qids):
            a, b = offsets[i], offsets[i + 1]
            pairs = [[vocab[c], s] for c, s in zip(docs[a:b], values[a:b])]
            f.write(_dumps({"qid": qid, "results": pairs}))
    return p


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
    return Run(qids, np.asarray(offsets, dtype=np.int64), np.asarray(codes, dtype=np.int64), list(vocab),
               np.asarray(values, dtype=np.float64), name=name if name is not None else (saved_name or "run"))


# --------------------------------------------------------------------------- internals


def _dumps(obj: Any) -> str:
    """One JSON line, readable UTF-8; ``\\uXXXX`` escapes only where UTF-8 cannot hold a character (a lone surrogate)."""
    text = json.dumps(obj, ensure_ascii=False)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(obj)
    return text + "\n"



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
