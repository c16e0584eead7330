"""A run made elsewhere (Pyserini, your own model, ranx, ``finegrain fuse``), scored as if finegrain had retrieved it.

:func:`import_run` reads a run file (TREC, ``run.jsonl``, ranx JSON, Parquet), a results folder's run,
or takes a :class:`~finegrain.types.Run`, and records where it came from (``provenance["run"]``: the
file, its size and SHA-256). :func:`check_run` sets it against the dataset it is scored on: a run
that ranks none of the dataset's queries is refused (the wrong dataset, or other query ids); queries
and documents the dataset does not know are counted in warnings, never dropped in silence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from finegrain.datasets import Dataset
from finegrain.errors import FinegrainError
from finegrain.frozen import EMPTY
from finegrain.io.checksum import sha256_of
from finegrain.results.files import RESULTS_FILE, RUN_JSONL, RUN_TREC, read_any_run
from finegrain.results.saved import SavedResults
from finegrain.types import Run

_ACCEPTED = "a TREC run file, a run.jsonl, a ranx JSON or Parquet run, or a results folder"


@dataclass(frozen=True)
class ImportedRun:
    """A run and its provenance (``source``: ``"file"`` or ``"memory"``; a file's ``path``, ``size``, ``sha256``)."""

    run: Run
    provenance: Any = field(default_factory=lambda: EMPTY)


def import_run(source: str | Path | Run) -> ImportedRun:
    """Read ``source`` (see the module docstring); an error names a path that does not exist."""
    if isinstance(source, Run):
        return ImportedRun(source, MappingProxyType({"source": "memory", "name": source.name,
                                                     "queries": len(source), "results": source.n_entries}))
    path = Path(source).expanduser()
    if not path.exists():
        raise FinegrainError(f"no run file {str(path)!r}", f"give {_ACCEPTED}")
    run = read_any_run(path)
    file = path if path.is_file() else next(path / n for n in (RUN_JSONL, RUN_TREC) if (path / n).is_file())
    return ImportedRun(run, MappingProxyType({
        "source": "file", "path": str(file.resolve()), "size": file.stat().st_size, "sha256": sha256_of(file),
        "name": run.name, "queries": len(run), "results": run.n_entries,
    }))


def check_run(run: Run, ds: Dataset) -> list[str]:
    """Warnings about ``run`` scored on ``ds``: run queries and documents ``ds`` does not have.

    A run that ranks none of ``ds``'s queries is an error naming an id of each."""
    qids = run.qids
    known = [q for q in qids if q in ds.queries]
    if qids and not known:
        example = next(iter(ds.queries), "none")
        raise FinegrainError(
            f"none of the run's {len(qids)} query ids is a query of {ds.name} (the run has {qids[0]!r}, "
            f"the dataset {example!r})",
            "check -d: a run is scored on the dataset whose queries it ranks, by the dataset's query ids")
    warnings = []
    if len(known) < len(qids):
        stray = next(q for q in qids if q not in ds.queries)
        warnings.append(f"{len(qids) - len(known)} of the run's {len(qids)} queries are not queries of {ds.name} "
                        f"(e.g. {stray!r}): they are not scored")
    unknown = [d for d in run.vocab if d not in ds.corpus]
    if unknown:
        warnings.append(f"{len(unknown)} of the {len(run.vocab)} documents the run ranks are not documents of "
                        f"{ds.name} (e.g. {unknown[0]!r}): no judgement names them, so they are never relevant")
    return warnings


def folders_dataset(paths: Sequence[str | Path]) -> tuple[str | None, str | None]:
    """The dataset the results folders among ``paths`` were scored on (``provenance.dataset.name``), or None
    and why: no folder among them, folders scored on different datasets, or none recorded."""
    names: dict[str, str] = {}
    for p in paths:
        if Path(p).is_dir() and (Path(p) / RESULTS_FILE).is_file():
            names[str(p)] = str(SavedResults.load(p).dataset_name or "")
    if not names:
        return None, "no input is a results folder that names its dataset"
    found = sorted(set(names.values()))
    if len(found) > 1 or not found[0]:
        listing = ", ".join(f"{p}: {n or 'none recorded'}" for p, n in names.items())
        return None, f"the input folders name different datasets or none ({listing})"
    return found[0], None


__all__ = ["ImportedRun", "check_run", "folders_dataset", "import_run"]
