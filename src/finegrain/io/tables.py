"""Qrels and runs in ranx's JSON layout and in Parquet files.

* ``.json`` (or ``.json.gz``): one object ``{qid: {doc_id: value}}``, what
  ranx's ``Qrels.save`` / ``Run.save("x.json")`` write;
* ``.parquet`` / ``.parq``: a table with query, document and value columns
  (:mod:`finegrain.io.columns`), what ranx's ``save("x.parquet")`` and
  pandas' ``to_parquet`` write.

:func:`finegrain.evaluate.files.read_run_file` and ``read_qrels_file`` route
these suffixes here, so ``finegrain evaluate QRELS run.json`` works too.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from finegrain.errors import DataFormatError
from finegrain.io._lines import line_of, read_json
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


def read_table_file(path: str | os.PathLike[str], kind: Kind, *, name: str | None = None) -> Qrels | Run:
    """Read a ``.json`` or ``.parquet`` qrels/run file (see the module docstring); a run is named after the file stem."""
    fmt = table_format(path)
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
