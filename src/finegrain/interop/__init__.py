"""Qrels and runs from other libraries and files, as finegrain :class:`~finegrain.types.Qrels` / :class:`~finegrain.types.Run`.

One place decides what a "qrels-like" or "run-like" value is
(:mod:`finegrain.interop.coerce`): ``evaluate``, ``compare`` and the fusion
API call :func:`as_qrels` / :func:`as_run` and never test types themselves.

Accepted: finegrain objects; nested dicts ``{qid: {doc_id: grade|score}}``;
pandas DataFrames and Parquet files with ``q_id, doc_id, relevance|score``
columns (aliases in :mod:`finegrain.io.columns`); ranx ``Qrels``/``Run``;
ir_measures / ir_datasets records (``Qrel(query_id, doc_id, relevance)``,
``ScoredDoc(query_id, doc_id, score)``) and plain ``(qid, doc_id, value)``
triples; paths to TREC, BEIR ``.tsv``, ``run.jsonl``, ranx JSON and Parquet
files. pandas / pyarrow are imported only when a DataFrame or Parquet file is
met.
"""

from finegrain.interop.coerce import QrelsLike, RunLike, as_qrels, as_run

__all__ = ["QrelsLike", "RunLike", "as_qrels", "as_run"]
