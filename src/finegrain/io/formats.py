"""Qrels and runs to and from files and DataFrames by format: what ``Qrels`` / ``Run`` call for their I/O.

``Qrels.from_file``, ``Run.save``, ``Run.from_df``, ``Run.to_df`` and the rest live on the core types
(:mod:`finegrain.types`), which sit below this package; they reach :data:`TABLE_IO` through the hook
:data:`finegrain.hooks.TABLE_IO`, which the root package fills (see :mod:`finegrain.hooks`). Everything
here dispatches to the one reader or writer of each format; nothing reads a file itself.

=========  ==========================================  ============================================
format     reads / writes                              chosen from the file name
=========  ==========================================  ============================================
trec       TREC qrels ``qid iter docid grade`` and     anything else (``.trec``, ``.txt``, ``.run``,
           runs ``qid Q0 docid rank score tag``        ``.qrels``, ...; ``.gz`` compressed)
           (:mod:`finegrain.io.trec`)
beir       BEIR/MTEB qrels ``query-id corpus-id        ``.tsv`` (``.tsv.gz``); qrels only
           score`` (:mod:`finegrain.io.beir`)
json       ranx JSON ``{qid: {doc_id: value}}``        ``.json`` (``.json.gz``)
           (:mod:`finegrain.io.tables`)
parquet    columns ``q_id, doc_id, score``             ``.parquet``, ``.parq``
           (:mod:`finegrain.io.tables`)
jsonl      finegrain's ``run.jsonl``: any id, spaces   ``.jsonl`` (``.jsonl.gz``); runs only
           and all (:mod:`finegrain.io.run_jsonl`)
=========  ==========================================  ============================================

Reading qrels without a format tells TREC from BEIR by the first line
(:func:`finegrain.io.files.detect_qrels_format`). Writing picks the format from the name and refuses
a name it does not know (a ``.csv`` is not silently written as TREC): give ``format=`` then. A query
without entry cannot be written in any of these formats and is absent after a round trip.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from finegrain._lazy import require
from finegrain.errors import FinegrainError
from finegrain.io.beir import write_qrels_tsv
from finegrain.io.columns import DOC_COLUMNS, QUERY_COLUMNS, VALUE_COLUMNS, Kind, frame_columns, table_from_columns
from finegrain.io.files import read_qrels_file, read_run_file
from finegrain.io.run_jsonl import read_run_jsonl, write_run_jsonl
from finegrain.io.tables import read_table_file, table_format, write_table_file
from finegrain.io.trec import read_run, write_qrels, write_run
from finegrain.types import Qrels, Run

QRELS_FORMATS = ("trec", "beir", "json", "parquet")
RUN_FORMATS = ("trec", "json", "parquet", "jsonl")
FORMATS = ("trec", "beir", "json", "parquet", "jsonl")
TREC_SUFFIXES = (".trec", ".txt", ".run", ".res", ".qrels", ".qrel")


def format_of(path: str | os.PathLike[str], kind: str) -> str | None:
    """The format a file name says (see the module docstring), or None when it says none."""
    name = Path(path).name.lower().removesuffix(".gz")
    table = table_format(name)
    if table is not None:
        return table
    if name.endswith(".jsonl"):
        return "jsonl"
    if name.endswith(".tsv"):
        return "beir"
    if name.endswith(TREC_SUFFIXES):
        return "trec"
    return None


def _check(format: str | None, kind: str) -> str | None:
    allowed = QRELS_FORMATS if kind == "qrels" else RUN_FORMATS
    if format is None or format in allowed:
        return format
    if format in FORMATS:
        raise FinegrainError(f"{kind} cannot be {format!r}: that format holds "
                             f"{'qrels' if format == 'beir' else 'runs'} only", f"use one of {', '.join(allowed)}")
    raise FinegrainError(f"unknown {kind} format {format!r}", f"use one of {', '.join(allowed)}")


class TableFiles:
    """The provider of :class:`finegrain.hooks.TableIO`: one method per operation, each a dispatch."""

    def read_qrels(self, path: str | os.PathLike[str], format: str | None = None) -> Qrels:
        fmt = _check(format, "qrels")
        if fmt in ("json", "parquet"):
            return read_qrels_file(Path(path), table=fmt)[0]
        return read_qrels_file(Path(path), qrels_format=fmt or "auto")[0]

    def read_run(self, path: str | os.PathLike[str], format: str | None = None, name: str | None = None) -> Run:
        fmt = _check(format, "run")
        if fmt is None:
            run = read_run_file(Path(path))
        elif fmt == "trec":
            run = read_run(path)
        elif fmt == "jsonl":
            run = read_run_jsonl(path)
        else:
            table = read_table_file(path, "run", fmt=fmt)
            assert isinstance(table, Run)
            run = table
        return run if name is None else run.renamed(name)

    def write(self, table: Qrels | Run, path: str | os.PathLike[str], format: str | None = None) -> Path:
        kind = "qrels" if isinstance(table, Qrels) else "run"
        fmt = _check(format, kind) or _check(format_of(path, kind), kind)
        if fmt is None:
            allowed = QRELS_FORMATS if kind == "qrels" else RUN_FORMATS
            raise FinegrainError(
                f"cannot tell the {kind} format from the file name {Path(path).name!r}",
                f"name it .trec, .json, .parquet{', .tsv' if kind == 'qrels' else ', .jsonl'} (optionally .gz), "
                f"or pass format= one of {', '.join(allowed)}",
            )
        p = Path(path)
        if fmt in ("json", "parquet"):
            return write_table_file(table, p, fmt)
        if isinstance(table, Qrels):
            if fmt == "beir":
                return write_qrels_tsv(table, p)
            write_qrels(table, p)
            return p
        if fmt == "jsonl":
            return write_run_jsonl(table, p)
        write_run(table, p)
        return p

    def from_frame(self, frame: Any, kind: str, columns: dict[str, str], name: str | None = None) -> Qrels | Run:
        found = frame_columns(frame)
        table: Kind = "qrels" if kind == "qrels" else "run"
        data = dict(found)
        first = {"query": QUERY_COLUMNS[0], "doc": DOC_COLUMNS[0], "value": VALUE_COLUMNS[table][0]}
        for role, column in columns.items():  # a named column takes its role's first name, which is read first
            if column not in found:
                raise FinegrainError(f"the {kind} DataFrame has no column {column!r}: its columns are "
                                     f"{', '.join(map(repr, found)) or 'none'}", f"name one of them as the {role} column")
            data[first[role]] = found[column]
        return table_from_columns(data, table, f"the {kind} DataFrame", name=name)

    def to_frame(self, table: Qrels | Run) -> Any:
        pd = require("pandas", "interop")
        order = table.order if isinstance(table, Run) else np.arange(table.n_entries)
        qids, vocab = np.asarray(table.qids, dtype=object), np.asarray(table.vocab, dtype=object)
        segs, docs = table.segments[order], table.doc_codes[order]
        return pd.DataFrame({  # ids as object columns: ranx's from_df refuses pandas' "str" dtype
            "q_id": pd.Series(qids[segs] if len(segs) else [], dtype=object),
            "doc_id": pd.Series(vocab[docs] if len(docs) else [], dtype=object),
            "score": table.values[order],
        })


TABLE_IO = TableFiles()

__all__ = ["FORMATS", "QRELS_FORMATS", "RUN_FORMATS", "TABLE_IO", "TableFiles", "format_of"]
