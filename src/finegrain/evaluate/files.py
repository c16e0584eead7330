"""``evaluate_files(QRELS, RUN, metrics)``: read a qrels and a run file (:mod:`finegrain.io.files`) and
evaluate them (what ``finegrain evaluate`` does)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from finegrain.evaluate.evaluate import evaluate
from finegrain.evaluate.result import Evaluation
from finegrain.io.files import QrelsFormat, read_qrels_file, read_run_file
from finegrain.io.trec import Compat
from finegrain.metrics.spec import MetricSpec


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
    warn: bool = True,
) -> Evaluation:
    """Read ``qrels_path`` (TREC or BEIR) and ``run_path`` (TREC) and :func:`evaluate` them.

    ``compat``, ``complete`` and ``level_for_rel`` are those of :func:`evaluate`
    (``compat`` also chooses the reading rules, ``warn`` the warning of queries left out);
    ``allow_empty_run`` accepts a run file with no result line.
    """
    qrels, _ = read_qrels_file(qrels_path, compat=compat, qrels_format=qrels_format)
    run = read_run_file(run_path, compat=compat, allow_empty_run=allow_empty_run)
    return evaluate(qrels, run, metrics, queries=queries, compat=compat, complete=complete,
                    level_for_rel=level_for_rel, warn=warn)
