"""``evaluate_files(QRELS, RUN, metrics)``: read a qrels and a run file and evaluate (what ``finegrain evaluate`` does).

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

from collections.abc import Iterable
from enum import Enum
from pathlib import Path

from finegrain.errors import DataFormatError, FinegrainError
from finegrain.evaluate.compat import Compat
from finegrain.evaluate.evaluate import evaluate
from finegrain.evaluate.result import Evaluation
from finegrain.metrics.spec import MetricSpec
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
    from finegrain.io._lines import decode, iter_byte_lines

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
    path: str | Path, *, compat: Compat | str | None = None, qrels_format: QrelsFormat | str = "auto"
) -> tuple[Qrels, QrelsFormat]:
    """Read TREC or BEIR qrels (``qrels_format`` ``"auto"``, ``"trec"`` or ``"beir"``); returns the format read.

    A file with no judgement is an error in either format.
    """
    from finegrain.interop.files import read_table_file, table_format

    fmt = _format(qrels_format)
    if fmt is None:
        fmt = QrelsFormat.TABLE if table_format(path) is not None else detect_qrels_format(path, compat=compat)
    if fmt is QrelsFormat.TABLE:  # ranx JSON or Parquet
        qrels = read_table_file(path, "qrels")
        assert isinstance(qrels, Qrels)
        if not len(qrels):
            raise FinegrainError(f"{str(path)!r} holds no judgement", "check that this is the qrels file")
        return qrels, fmt
    if fmt is QrelsFormat.TREC:
        from finegrain.io.trec import read_qrels

        return read_qrels(path, compat=Compat.parse(compat).value), fmt
    from finegrain.io.beir import read_qrels_tsv

    return read_qrels_tsv(path), fmt  # refuses a file without judgement


def read_run_file(
    path: str | Path, *, compat: Compat | str | None = None, allow_empty_run: bool = False
) -> Run:
    """Read a run file by its name: ``.jsonl`` (saved by ``finegrain eval``), ``.json`` (ranx
    JSON ``{qid: {doc: score}}``), ``.parquet`` (``q_id, doc_id, score`` columns), else TREC;
    an empty run is an error unless ``allow_empty_run``."""
    from finegrain.interop.files import read_table_file, table_format
    from finegrain.io.trec import read_run

    table = table_format(path) is not None
    if table or Path(path).name.endswith((".jsonl", ".jsonl.gz")):
        from finegrain.io.run_jsonl import read_run_jsonl

        run = read_table_file(path, "run") if table else read_run_jsonl(path)
        assert isinstance(run, Run)
        if not len(run) and not allow_empty_run:
            raise FinegrainError(f"{str(path)!r} holds no query", "pass --allow-empty-run to score an empty run on purpose")
        return run
    return read_run(path, compat=Compat.parse(compat).value, allow_empty=allow_empty_run)


def read_any_run(path: str | Path) -> Run:
    """A run from a results folder written by ``finegrain eval -o DIR`` or from a run file
    (:func:`read_run_file`)."""
    if Path(path).is_dir():
        from finegrain.evaluate.pipeline import read_saved_run

        run: Run = read_saved_run(path)
        return run
    return read_run_file(path)


def evaluate_files(
    qrels_path: str | Path,
    run_path: str | Path,
    metrics: str | MetricSpec | Iterable[str | MetricSpec],
    *,
    compat: Compat | str | None = None,
    complete: bool = False,
    level_for_rel: int | None = None,
    queries: Iterable[str] | None = None,
    allow_empty_run: bool = False,
    qrels_format: QrelsFormat | str = "auto",
) -> Evaluation:
    """Read ``qrels_path`` (TREC or BEIR) and ``run_path`` (TREC) and :func:`evaluate` them.

    ``compat``, ``complete`` and ``level_for_rel`` are those of :func:`evaluate`
    (``compat`` also chooses the reading rules); ``allow_empty_run`` accepts a
    run file with no result line.
    """
    qrels, _ = read_qrels_file(qrels_path, compat=compat, qrels_format=qrels_format)
    run = read_run_file(run_path, compat=compat, allow_empty_run=allow_empty_run)
    return evaluate(qrels, run, metrics, queries=queries, compat=compat, complete=complete,
                    level_for_rel=level_for_rel)


def _format(value: QrelsFormat | str) -> QrelsFormat | None:
    if isinstance(value, QrelsFormat):
        return value
    if value == "auto":
        return None
    for f in QrelsFormat:
        if value == f.value:
            return f
    raise FinegrainError(f"unknown qrels format {value!r}", "use auto, trec or beir (or table for ranx JSON / Parquet qrels)")
