"""The ``run`` retriever: a saved run served as a retriever (``--set path=RUN``).

A run made elsewhere (Pyserini, a cross-encoder on another machine, ``finegrain fuse``, a model that
is not installed here) can then stand wherever a retriever does: a part of ``hybrid``
(``--set parts=run,dense --set run.path=RUN``), the first stage of ``rerank``, or the teacher of
``finegrain distill``. The file is read as ``Run.from_file`` reads it (TREC, ``run.jsonl``, ranx JSON,
Parquet).

It answers by query id: a query the run holds gets the run's ranking (cut to ``top_k``), a query it
does not hold an empty one, as a retriever that found nothing (``finegrain eval`` counts it missing
from the run, ``finegrain distill`` as ``no_ranking``). For ``finegrain distill`` the teacher's query ids
are ``q0``, ``q1``, ... in the order the query texts first appear in the pairs file
(:func:`finegrain.train.distill.teacher_queries`). A ranked document the corpus does not hold is an
error: the run was made over another corpus. The config records the file's SHA-256, taken once when the
retriever is made, so results say which run they used; a file that changes afterwards is refused when it is
read, not served under the old hash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from finegrain.errors import FinegrainError
from finegrain.io.checksum import sha256_of
from finegrain.types import Corpus, Queries, Run


@dataclass(frozen=True)
class SavedRunRetriever:
    """The saved run at ``path`` as a retriever (``None``: not given yet, refused when it is asked to rank)."""

    path: str | None = None
    name: str = "run"
    sha256: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.path is not None and self.sha256 is None:  # hashed once: config() is asked often
            object.__setattr__(self, "sha256", sha256_of(self.path))

    def config(self) -> dict[str, Any]:
        return {"retriever": self.name, "path": self.path, "sha256": self.sha256}

    def retrieve(self, corpus: Corpus, queries: Queries, *, lang: str, top_k: int | None,
                 show_progress: bool = True) -> Run:
        if self.path is None:
            raise FinegrainError("the run retriever needs the saved run's file",
                                 "pass --set path=RUN (or run.path=RUN as a part of hybrid)")
        run = Run.from_file(self.path)
        if sha256_of(self.path) != self.sha256:
            raise FinegrainError(f"{self.path}: the run file changed after the run retriever was set up "
                                 f"(its SHA-256 is no longer {self.sha256})",
                                 "leave the file alone while it is served, or set the retriever up again")
        out: dict[str, dict[str, float]] = {}
        for qid in (q for q in queries if q in run):
            scores = run[qid]
            out[qid] = {d: float(scores[d]) for d in run.ranked(qid, top_k)}
        stray = next((d for ranked in out.values() for d in ranked if d not in corpus), None)
        if stray is not None:
            raise FinegrainError(f"{self.path}: the run ranks document {stray!r}, which the corpus does not hold",
                                 "serve a run made over this corpus (its document ids)")
        return Run.from_dict(out, name=run.name).with_queries(queries)


def saved_run_retriever(path: str | None = None) -> SavedRunRetriever:
    """``run``: ``--set path=RUN`` (a TREC run, ``run.jsonl``, ranx JSON or Parquet); a path that names no
    file is refused here, before any work."""
    if path is not None and not Path(path).is_file():
        raise FinegrainError(f"{path}: no such run file", "pass --set path=RUN, a TREC run, run.jsonl, ranx JSON "
                             "or Parquet file")
    return SavedRunRetriever(path)
