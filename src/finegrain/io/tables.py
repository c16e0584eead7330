"""Qrels and runs in ranx's JSON layout and in Parquet files, read and written.

* ``.json`` (or ``.json.gz``): one object ``{qid: {doc_id: value}}``, what
  ranx's ``Qrels.save`` / ``Run.save("x.json")`` write;
* ``.parquet`` / ``.parq``: a table with query, document and value columns
  (:mod:`finegrain.io.columns`), what ranx's ``save("x.parquet")`` and
  pandas' ``to_parquet`` write.

:func:`finegrain.evaluate.files.read_run_file` and ``read_qrels_file`` route
these suffixes here, so ``finegrain evaluate QRELS run.json`` works too.
:func:`write_table_file` writes both layouts, whole or not at all: a run's
documents in ranked order (JSON) or its rows ranked query by query (Parquet
columns ``q_id, doc_id, score``, as ranx's ``to_dataframe`` names them; qrels
too). A query without entry has no row and is absent after a round trip.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from finegrain._lazy import require
from finegrain.atomic import atomic_path
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import line_of, open_text_write, read_json
from finegrain.io.columns import Kind, read_parquet_columns, table_from_columns
from finegrain.io.ids import IdSyntax, id_error, id_problem
from finegrain.types import Qrels, Run

JSON_SUFFIXES = (".json", ".json.gz")
PARQUET_SUFFIXES = (".parquet", ".parq")


def table_format(path: str | os.PathLike[str]) -> str | None:
    """``"json"``, ``"parquet"`` or None (another format) from the file name."""
    name = Path(path).name.lower()
    if name.endswith(JSON_SUFFIXES):
        return "json"
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    return None


def read_table_file(
    path: str | os.PathLike[str], kind: Kind, *, name: str | None = None, fmt: str | None = None
) -> Qrels | Run:
    """Read a ``.json`` or ``.parquet`` qrels/run file (see the module docstring); a run is named after the file stem.

    ``fmt`` (``"json"`` or ``"parquet"``) overrides the choice by file name."""
    fmt = fmt or table_format(path)
    stem = _stem(path)
    if fmt == "parquet":
        return table_from_columns(read_parquet_columns(str(path)), kind, repr(str(path)), name=name or stem)
    if fmt == "json":
        return _read_json_table(Path(path), kind, name or stem)
    raise DataFormatError(path, None, "a .json or .parquet file name", Path(path).name)


def _read_json_table(path: Path, kind: Kind, name: str) -> Qrels | Run:
    unit = "grade" if kind == "qrels" else "score"
    expected = f'{{"qid": {{"doc_id": {unit}, ...}}, ...}} (ranx JSON)'
    data, text = read_json(path)
    if not isinstance(data, dict):
        raise DataFormatError(path, None, expected, f"a JSON {type(data).__name__}")
    for q, docs in data.items():
        if not isinstance(docs, dict):
            raise DataFormatError(path, line_of(text, q), f"an object of {unit}s for query {q!r}", repr(docs)[:60])
        _check_id(path, text, q, "a query id")
        for d, v in docs.items():
            _check_id(path, text, d, "a document id")
            ok = not isinstance(v, bool) and isinstance(v, int | float)
            if kind == "qrels":
                ok = ok and (isinstance(v, int) or (math.isfinite(v) and v == int(v)))
            if not ok:
                raise DataFormatError(path, line_of(text, d), f"a number ({unit}) for document {d!r} of query {q!r}",
                                      repr(v)[:60], "grades are integers" if kind == "qrels" else None)
    if kind == "qrels":
        return Qrels.from_dict(data)
    return Run.from_dict(data, name=name)


def _check_id(path: Path, text: str, value: str, what: str) -> None:
    problem = id_problem(value, IdSyntax.JSON)
    if problem is not None:
        raise id_error(path, line_of(text, value), value, what, IdSyntax.JSON, problem)


def _stem(path: str | os.PathLike[str]) -> str:
    name = Path(path).name
    for suffix in JSON_SUFFIXES + PARQUET_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)] or name
    return Path(path).stem


def write_table_file(table: Qrels | Run, path: str | os.PathLike[str], fmt: str | None = None) -> Path:
    """Write ``table`` as ranx JSON or Parquet (``fmt``, else from the file name); returns the path."""
    p = Path(path)
    fmt = fmt or table_format(p)
    if fmt == "json":
        _write_json_table(table, p)
    elif fmt == "parquet":
        _write_parquet_table(table, p)
    else:
        raise DataFormatError(p, None, "a .json or .parquet file name", p.name)
    return p


def _ranked_columns(table: Qrels | Run) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Query index, document code and value of every entry: a run's entries in ranked order, qrels' as stored."""
    order = table.order if isinstance(table, Run) else np.arange(table.n_entries)
    return table.segments[order], table.doc_codes[order], table.values[order]


def _write_json_table(table: Qrels | Run, path: Path) -> None:
    segs, docs, values = _ranked_columns(table)
    if isinstance(table, Run) and not np.isfinite(values).all():
        bad = float(values[~np.isfinite(values)][0])
        raise FinegrainError(f"score {bad} cannot be written to {path.name}: JSON has no infinity",
                             "save the run as .jsonl or give it finite scores")
    data: dict[str, dict[str, Any]] = {q: {} for q in table.qids}
    qids, vocab = table.qids, table.vocab
    for q, d, v in zip(segs.tolist(), docs.tolist(), values.tolist()):
        data[qids[q]][vocab[d]] = v
    with open_text_write(path) as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
        f.write("\n")


def _write_parquet_table(table: Qrels | Run, path: Path) -> None:
    pa = require("pyarrow", "interop")
    pq = require("pyarrow.parquet", "interop")
    segs, docs, values = _ranked_columns(table)
    qids, vocab = np.asarray(table.qids, dtype=object), np.asarray(table.vocab, dtype=object)
    columns = {
        "q_id": pa.array(qids[segs] if len(segs) else [], type=pa.string()),
        "doc_id": pa.array(vocab[docs] if len(docs) else [], type=pa.string()),
        "score": pa.array(values, type=pa.int64() if isinstance(table, Qrels) else pa.float64()),
    }
    with atomic_path(path) as tmp:
        pq.write_table(pa.table(columns), tmp)
