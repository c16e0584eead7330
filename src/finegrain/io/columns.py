"""Tables with a query, a document and a value column (DataFrames, Parquet) as Qrels or Run.

The column names are those of ranx (``q_id, doc_id, score``), ir_measures /
ir_datasets (``query_id, doc_id, relevance|score``), pyterrier (``qid,
docno``) and MTEB/BEIR (``query-id, corpus-id``); every role takes the first of
its aliases that the table has:

=========  ==============================================================
role       column names accepted
=========  ==============================================================
query      ``q_id``, ``query_id``, ``qid``, ``query-id``
document   ``doc_id``, ``docno``, ``docid``, ``corpus_id``, ``corpus-id``
grade      ``relevance``, ``rel``, ``grade``, ``label``, ``score`` (qrels)
score      ``score`` (runs)
=========  ==============================================================

ranx writes qrels with a ``score`` column, so qrels take ``score`` when no
grade column is there. Integer ids become strings (``7`` -> ``"7"``); float
ids are refused (``7.0`` would not match ``"7"``), and so are ids that break
the id rule (:mod:`finegrain.io.ids`: empty, blank or over-long). A table
without one of the roles is refused with the columns it has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from finegrain._lazy import require
from finegrain.errors import FinegrainError
from finegrain.io.ids import IdSyntax, first_bad_id, show_id
from finegrain.types import Qrels, Run

Kind = Literal["qrels", "run"]

QUERY_COLUMNS = ("q_id", "query_id", "qid", "query-id")
DOC_COLUMNS = ("doc_id", "docno", "docid", "corpus_id", "corpus-id")
VALUE_COLUMNS: Mapping[str, tuple[str, ...]] = {
    "qrels": ("relevance", "rel", "grade", "label", "score"),
    "run": ("score",),
}


def table_from_columns(
    columns: Mapping[str, Any], kind: Kind, source: str, *, name: str | None = None
) -> Qrels | Run:
    """A Qrels or Run from named columns (``{name: array-like}``, all of one length).

    ``source`` names the table in errors (``"the run DataFrame"``, a path).
    """
    names = list(columns)
    q_col = _pick(names, QUERY_COLUMNS, "query id", kind, source)
    d_col = _pick(names, DOC_COLUMNS, "document id", kind, source)
    v_col = _pick(names, VALUE_COLUMNS[kind], "grade" if kind == "qrels" else "score", kind, source)
    qids = _ids(columns[q_col], q_col, source)
    docs = _ids(columns[d_col], d_col, source)
    values = np.asarray(columns[v_col])
    if values.dtype.kind not in "iufb" and values.size:
        values = _numbers(values, v_col, source)
    if values.dtype.kind == "b":
        raise FinegrainError(f"column {v_col!r} of {source} holds booleans", "give numeric grades or scores")
    records = zip(qids, docs, values.tolist())
    if kind == "qrels":
        return Qrels.from_records(records)
    return Run.from_records(records, name=name or "run")


def frame_columns(frame: Any) -> dict[str, Any]:
    """``{column name: numpy array}`` of a pandas DataFrame (its index is ignored)."""
    names = [str(c) for c in frame.columns]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise FinegrainError(f"the DataFrame has the column name(s) {', '.join(map(repr, twice))} more than once",
                             "give each column one name (frame.loc[:, ~frame.columns.duplicated()])")
    return {name: frame.iloc[:, i].to_numpy() for i, name in enumerate(names)}


def read_parquet_columns(path: str) -> dict[str, Any]:
    """``{column name: numpy array}`` of a Parquet file (pyarrow)."""
    pq = require("pyarrow.parquet", "interop")
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as e:  # pyarrow.ArrowInvalid is a ValueError
        raise FinegrainError(f"cannot read {path!r} as Parquet: {e}", "check that it is a Parquet file") from None
    return {str(n): table.column(n).to_numpy() for n in table.column_names}


# --------------------------------------------------------------------------- internals


def _pick(names: Sequence[str], aliases: tuple[str, ...], role: str, kind: str, source: str) -> str:
    for alias in aliases:
        if alias in names:
            return alias
    shown = ", ".join(repr(n) for n in names) or "none"
    raise FinegrainError(
        f"{source} has no {role} column: its columns are {shown}",
        f"a {kind} table needs a {role} column named one of {', '.join(aliases)} "
        "(rename it, e.g. frame.rename(columns={...}))",
    )


def _ids(column: Any, col: str, source: str) -> list[str]:
    out = _id_strings(column, col, source)
    bad = first_bad_id(out, IdSyntax.JSON)
    if bad is not None:
        raise FinegrainError(f"column {col!r} of {source} holds the id {show_id(bad[0])}, which {bad[1]}",
                             f"ids are {IdSyntax.JSON.expected('strings')}")
    return out


def _id_strings(column: Any, col: str, source: str) -> list[str]:
    a = np.asarray(column)
    if a.dtype.kind in "iu":
        return [str(x) for x in a.tolist()]
    if a.dtype.kind == "f":
        raise FinegrainError(
            f"column {col!r} of {source} holds floats; ids must be strings or integers",
            "convert it, e.g. frame[col].astype('int64').astype(str)",
        )
    out: list[str] = []
    for x in a.tolist():
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, int) and not isinstance(x, bool):
            out.append(str(x))
        else:
            raise FinegrainError(f"column {col!r} of {source} holds {x!r} ({type(x).__name__}), not a string id",
                                 "ids are strings (or integers)")
    return out


def _numbers(values: np.ndarray, col: str, source: str) -> np.ndarray:
    for x in values.tolist():
        if isinstance(x, bool) or not isinstance(x, int | float | np.number):
            raise FinegrainError(f"column {col!r} of {source} holds {x!r}, not a number", "give numeric grades or scores")
    return np.asarray(values.tolist())
