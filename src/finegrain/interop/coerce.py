"""``as_qrels(x)`` / ``as_run(x)``: the one place that turns a qrels-like or run-like value into a finegrain table.

What is accepted is one table, :data:`_SOURCES`, tried in order; the first
whose test matches converts. Nothing here imports pandas, pyarrow, ranx or
ir_measures: objects are recognised by their type's module and name, so that
``import finegrain`` stays light and none of them is required.

=============  =================================================================
source         recognised by
=============  =================================================================
finegrain      a :class:`~finegrain.types.Qrels` / :class:`~finegrain.types.Run`
path           ``str`` or ``os.PathLike``: ``.json`` (``{qid: {doc: value}}``,
               ranx's ``save("x.json")``), ``.parquet``, ``.jsonl`` (runs saved by
               ``finegrain eval``), else TREC (qrels: TREC or BEIR ``.tsv``)
ranx           ``ranx.Qrels`` / ``ranx.Run`` (their ``to_dict()`` and ``name``)
DataFrame      a pandas DataFrame (:mod:`finegrain.io.columns`)
mapping        ``{qid: {doc_id: grade|score}}``
records        any other iterable of ``Qrel(query_id, doc_id, relevance, ...)``,
               ``ScoredDoc(query_id, doc_id, score)`` (ir_measures,
               ir_datasets) or ``(qid, doc_id, value)`` triples
=============  =================================================================

Integer query and document ids become strings. Bad values are refused by
:class:`~finegrain.types.Qrels` / :class:`~finegrain.types.Run` themselves
(non-integer grades, NaN scores, a (query, document) pair twice).
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from finegrain.errors import FinegrainError
from finegrain.io.columns import Kind, frame_columns, table_from_columns
from finegrain.io.files import read_qrels_file, read_run_file
from finegrain.types import Qrels, Run

if TYPE_CHECKING:
    from finegrain.io.trec import Compat

QrelsLike: TypeAlias = Qrels | Mapping[str, Mapping[str, int]] | str | os.PathLike[str] | Iterable[Any] | Any
RunLike: TypeAlias = Run | Mapping[str, Mapping[str, float]] | str | os.PathLike[str] | Iterable[Any] | Any

_VALUE_FIELD = {"qrels": "relevance", "run": "score"}
_HINT = {
    "qrels": "pass a finegrain Qrels, a {qid: {doc_id: grade}} dict, a DataFrame with q_id, doc_id, relevance "
    "columns, a ranx Qrels, ir_measures Qrel records or a qrels file path",
    "run": "pass a finegrain Run, a {qid: {doc_id: score}} dict, a DataFrame with q_id, doc_id, score columns, "
    "a ranx Run, ir_measures ScoredDoc records or a run file path",
}


def as_qrels(obj: QrelsLike, *, what: str = "qrels", compat: Compat | str | None = None) -> Qrels:
    """``obj`` as a :class:`~finegrain.types.Qrels` (see the module docstring for what is accepted).

    ``what`` names the argument in errors; ``compat`` is the reading mode of
    TREC files (see :func:`finegrain.evaluate.files.read_qrels_file`).
    """
    table = _convert(obj, "qrels", what, None, compat)
    assert isinstance(table, Qrels)  # each converter builds the kind it is asked for
    return table


def as_run(
    obj: RunLike, *, name: str | None = None, what: str = "run", compat: Compat | str | None = None
) -> Run:
    """``obj`` as a :class:`~finegrain.types.Run`; ``name`` overrides the name it carries.

    A ranx Run keeps its ``name``, a file its stem (or TREC tag); otherwise the
    name is ``"run"``.
    """
    table = _convert(obj, "run", what, name, compat)
    assert isinstance(table, Run)
    if name is not None and table.name != name:
        table = Run(table.qids, table.offsets, table.doc_codes, table.vocab, table.values, name=name, check=False)
    return table


# --------------------------------------------------------------------------- the sources


def _convert(obj: Any, kind: Kind, what: str, name: str | None, compat: Any) -> Qrels | Run:
    for _label, test, convert in _SOURCES:
        if test(obj):
            return convert(obj, kind, what, name, compat)
    raise FinegrainError(f"{what} is a {type(obj).__name__}, which finegrain cannot read as {kind}", _HINT[kind])


def _from_finegrain(obj: Qrels | Run, kind: Kind, what: str, name: str | None, compat: Any) -> Qrels | Run:
    want = Qrels if kind == "qrels" else Run
    if not isinstance(obj, want):
        raise FinegrainError(
            f"{what} is a finegrain {type(obj).__name__}, not a {want.__name__}",
            "pass the qrels first and the run second" if kind == "qrels" or isinstance(obj, Qrels) else _HINT[kind],
        )
    return obj


def _from_path(obj: str | os.PathLike[str], kind: Kind, what: str, name: str | None, compat: Any) -> Qrels | Run:
    path = Path(obj)
    if not path.is_file():
        raise FinegrainError(
            f"{what} {str(obj)!r} is not a file" + (" (it is a folder)" if path.is_dir() else ""),
            "give the path of a TREC, JSON, JSON-lines or Parquet file, or pass the data itself",
        )

    if kind == "qrels":
        return read_qrels_file(path, compat=compat)[0]
    return read_run_file(path, compat=compat)


def _is_ranx(obj: Any) -> bool:
    t = type(obj)
    return t.__module__.split(".")[0] == "ranx" and t.__name__ in ("Qrels", "Run")


def _from_ranx(obj: Any, kind: Kind, what: str, name: str | None, compat: Any) -> Qrels | Run:
    got = type(obj).__name__.lower()
    if got != kind:
        raise FinegrainError(f"{what} is a ranx {type(obj).__name__}, not a ranx {kind.capitalize()}",
                             "pass the qrels first and the run second")
    return _from_mapping(obj.to_dict(), kind, what, name or getattr(obj, "name", None), compat)


def _is_frame(obj: Any) -> bool:
    t = type(obj)
    return t.__module__.split(".")[0] == "pandas" and t.__name__ == "DataFrame"


def _from_frame(obj: Any, kind: Kind, what: str, name: str | None, compat: Any) -> Qrels | Run:
    return table_from_columns(frame_columns(obj), kind, f"the {what} DataFrame", name=name)


def _from_mapping(obj: Mapping[Any, Any], kind: Kind, what: str, name: str | None, compat: Any) -> Qrels | Run:
    data: dict[str, Mapping[str, Any]] = {}
    for q, docs in obj.items():
        qid = _id(q, f"a query id of {what}")
        if not isinstance(docs, Mapping):
            unit = "grade" if kind == "qrels" else "score"
            raise FinegrainError(
                f"{what}[{q!r}] is a {type(docs).__name__} ({_short(docs)}), not a {{doc_id: {unit}}} mapping",
                f"{what} is nested: {{qid: {{doc_id: {unit}}}}}",
            )
        if all(type(d) is str for d in docs):
            data[qid] = docs
        else:
            data[qid] = {_id(d, f"a document id of {what}[{q!r}]"): v for d, v in docs.items()}
    _check_values(data, kind, what)
    if kind == "qrels":
        return Qrels.from_dict(data)
    return Run.from_dict(data, name=name or "run")


def _is_records(obj: Any) -> bool:
    return isinstance(obj, Iterable) and not isinstance(obj, str | bytes | Mapping)


def _from_records(obj: Iterable[Any], kind: Kind, what: str, name: str | None, compat: Any) -> Qrels | Run:
    field = _VALUE_FIELD[kind]
    triples: list[tuple[str, str, Any]] = []
    for i, rec in enumerate(obj):
        if hasattr(rec, "query_id") and hasattr(rec, "doc_id"):
            if not hasattr(rec, field):
                raise FinegrainError(
                    f"record {i} of {what} is a {type(rec).__name__} without a {field!r} field: {_short(rec)}",
                    "pass the qrels first and the run second" if kind == "qrels" else _HINT[kind],
                )
            q, d, v = rec.query_id, rec.doc_id, getattr(rec, field)
        elif isinstance(rec, tuple | list) and len(rec) == 3:
            q, d, v = rec
        else:
            raise FinegrainError(
                f"record {i} of {what} is {_short(rec)}; expected (query_id, doc_id, {field})",
                _HINT[kind],
            )
        triples.append((_id(q, f"the query id of record {i} of {what}"), _id(d, f"the document id of record {i} of {what}"), v))
    _check_record_values(triples, kind, what)
    if kind == "qrels":
        return Qrels.from_records(triples)
    return Run.from_records(triples, name=name or "run")


_Converter = Callable[[Any, Kind, str, "str | None", Any], "Qrels | Run"]
_SOURCES: tuple[tuple[str, Callable[[Any], bool], _Converter], ...] = (
    ("finegrain", lambda o: isinstance(o, Qrels | Run), _from_finegrain),
    ("path", lambda o: isinstance(o, str | os.PathLike), _from_path),
    ("ranx", _is_ranx, _from_ranx),
    ("DataFrame", _is_frame, _from_frame),
    ("mapping", lambda o: isinstance(o, Mapping), _from_mapping),
    ("records", _is_records, _from_records),
)


# --------------------------------------------------------------------------- checks


def _id(x: Any, where: str) -> str:
    if type(x) is str:
        return x
    if isinstance(x, str):
        return str(x)
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return str(int(x))
    raise FinegrainError(f"{where} is {x!r} ({type(x).__name__}); ids are strings", "use string (or integer) ids")


def _check_values(data: Mapping[str, Mapping[str, Any]], kind: Kind, what: str) -> None:
    for q, docs in data.items():
        for d, v in docs.items():
            if not _ok_value(v, kind):
                raise FinegrainError(f"{what}[{q!r}][{d!r}] is {v!r}", _value_hint(kind))


def _check_record_values(triples: list[tuple[str, str, Any]], kind: Kind, what: str) -> None:
    for q, d, v in triples:
        if not _ok_value(v, kind):
            raise FinegrainError(f"the {_VALUE_FIELD[kind]} of document {d!r} for query {q!r} in {what} is {v!r}",
                                 _value_hint(kind))


def _ok_value(v: Any, kind: Kind) -> bool:
    """A real number (numpy's included), never a bool; finer checks are the table's (integer grades, no NaN)."""
    return isinstance(v, numbers.Real) and not isinstance(v, bool | np.bool_)


def _value_hint(kind: Kind) -> str:
    return "grades are integers (0, 1, 2, ...)" if kind == "qrels" else "scores are numbers"


def _short(x: Any, width: int = 60) -> str:
    text = repr(x)
    return text if len(text) <= width else text[: width - 3] + "..."
