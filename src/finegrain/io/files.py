"""Qrels and run files by format: ``read_qrels_file`` and ``read_run_file`` (what ``finegrain evaluate`` reads).

The qrels file may be TREC qrels or a BEIR/MTEB qrels ``.tsv`` (what
``finegrain`` itself writes for a BEIR folder). :func:`detect_qrels_format`
decides from the first line that is not blank (nor, under ``--compat
trec_eval``, a ``#`` comment), by one explicit rule:

- 3 tab-separated fields (``query-id corpus-id score``, as a header line or
  as a judgement; ids may hold spaces): BEIR/MTEB;
- else 4 whitespace-separated fields (``qid iter docid grade``): TREC;
- else 3 whitespace-separated fields: BEIR/MTEB (its reader splits a line
  without a tab on whitespace);
- anything else: an error naming both formats and what the line holds.

An empty qrels file is an error; so is an empty run file, unless
``allow_empty_run`` (every query then counts as missing from the run).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import decode, iter_byte_lines
from finegrain.io.beir import read_qrels_tsv
from finegrain.io.run_jsonl import read_run_jsonl
from finegrain.io.tables import read_table_file, table_format
from finegrain.io.trec import Compat, read_qrels, read_run
from finegrain.types import Qrels, Run


class QrelsFormat(Enum):
    """The two qrels formats ``finegrain evaluate`` reads."""

    TREC = "trec"
    BEIR = "beir"
    TABLE = "table"  # ranx JSON {qid: {doc: grade}} or Parquet, chosen by suffix (.json, .parquet)

    @property
    def label(self) -> str:
        if self is QrelsFormat.TREC:
            return "TREC qrels 'qid iter docid grade'"
        if self is QrelsFormat.TABLE:
            return "qrels table (ranx JSON or Parquet)"
        return "BEIR/MTEB qrels tsv 'query-id corpus-id score'"


_EXPECTED = (
    "TREC qrels (4 whitespace-separated fields 'qid iter docid grade') or BEIR/MTEB qrels "
    "(3 tab-separated fields 'query-id corpus-id score', header line optional)"
)


def detect_qrels_format(path: str | Path, *, compat: Compat | str | None = None) -> QrelsFormat:
    """TREC or BEIR, from the first record line of ``path`` (see the module docstring).

    A line whose first character is ``#`` is skipped when looking; the TREC
    reader then refuses it in strict mode (with its hint) or skips it under
    ``compat="trec_eval"``.
    """
    Compat.parse(compat)  # a bad mode fails here, before the file is read
    comments = 0
    for n, raw in iter_byte_lines(path):
        if not raw.strip():
            continue
        if raw[:1] == b"#":
            comments += 1
            continue
        if b"\t" in raw and len(raw.split(b"\t")) == 3:
            return QrelsFormat.BEIR  # BEIR splits on tabs: ids may hold spaces
        fields = raw.split()
        if len(fields) == 4:
            return QrelsFormat.TREC
        if len(fields) == 3:
            return QrelsFormat.BEIR
        raise DataFormatError(path, n, _EXPECTED, f"{len(fields)} field(s): {decode(path, n, raw)!r}",
                              "give the qrels file first and the run file second")
    raise DataFormatError(
        path, None, _EXPECTED, f"no judgement line ({comments} comment line(s) only)" if comments else "an empty file",
        "check that this is the qrels file; nothing can be scored without judgements",
    )


def read_qrels_file(
    path: str | Path, *, compat: Compat | str | None = None, qrels_format: QrelsFormat | str = "auto",
    table: str | None = None,
) -> tuple[Qrels, QrelsFormat]:
    """Read TREC or BEIR qrels (``qrels_format`` ``"auto"``, ``"trec"`` or ``"beir"``); returns the format read.

    ``table`` (``"json"`` or ``"parquet"``) reads a qrels table whatever the file name. A file with no
    judgement is an error in every format.
    """

    fmt = QrelsFormat.TABLE if table is not None else _format(qrels_format)
    if fmt is None:
        fmt = QrelsFormat.TABLE if table_format(path) is not None else detect_qrels_format(path, compat=compat)
    if fmt is QrelsFormat.TABLE:  # ranx JSON or Parquet
        qrels = read_table_file(path, "qrels", fmt=table)
        assert isinstance(qrels, Qrels)
        if not len(qrels):
            raise FinegrainError(f"{str(path)!r} holds no judgement", "check that this is the qrels file")
        return qrels, fmt
    if fmt is QrelsFormat.TREC:
        return read_qrels(path, compat=Compat.parse(compat).value), fmt
    return read_qrels_tsv(path), fmt  # refuses a file without judgement


def read_run_file(
    path: str | Path, *, compat: Compat | str | None = None, allow_empty_run: bool = False
) -> Run:
    """Read a run file by its name: ``.jsonl`` (saved by ``finegrain eval``), ``.json`` (ranx
    JSON ``{qid: {doc: score}}``), ``.parquet`` (``q_id, doc_id, score`` columns), else TREC;
    an empty run is an error unless ``allow_empty_run``."""

    table = table_format(path) is not None
    if table or Path(path).name.endswith((".jsonl", ".jsonl.gz")):
        run = read_table_file(path, "run") if table else read_run_jsonl(path)
        assert isinstance(run, Run)
        if not len(run) and not allow_empty_run:
            raise FinegrainError(f"{str(path)!r} holds no query", "pass --allow-empty-run to score an empty run on purpose")
        return run
    return read_run(path, compat=Compat.parse(compat).value, allow_empty=allow_empty_run)


def _format(value: QrelsFormat | str) -> QrelsFormat | None:
    if isinstance(value, QrelsFormat):
        return value
    if value == "auto":
        return None
    for f in QrelsFormat:
        if value == f.value:
            return f
    raise FinegrainError(f"unknown qrels format {value!r}", "use auto, trec or beir (or table for ranx JSON / Parquet qrels)")
