"""Saved results: ``DIR/results.json`` (the run beside it is ``run.trec`` or ``run.jsonl``).

Reports and comparisons are rendered from these files alone, so everything a
view needs (per-query values, query texts and types, denominators, provenance)
is written here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from finegrain.atomic import atomic_path, remove_stale
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import read_json
from finegrain.io.files import read_run_file
from finegrain.io.run_jsonl import is_trec_safe, read_run_jsonl, write_run_jsonl
from finegrain.io.trec import read_run, write_run
from finegrain.results.companions import Companion, IncompleteFolderError, check_companion
from finegrain.results.saved import RESULTS_FILE, SCHEMA, SavedResults
from finegrain.types import Run

__all__ = ["RESULTS_FILE", "RUN_FILES", "RUN_JSONL", "RUN_TREC", "SCHEMA", "read_any_run", "read_results",
           "read_saved_run", "run_file_name", "save_folder", "save_run", "write_results"]


def write_results(out_dir: str | Path, results: Mapping[str, Any] | SavedResults) -> Path:
    """Write ``results.json`` into ``out_dir`` through :meth:`SavedResults.save` (a results dict is
    validated first); the run goes beside it through :func:`save_run`."""
    return SavedResults.coerce(results).save(out_dir)


def read_results(path: str | Path) -> dict[str, Any]:
    """Read a results folder (or its ``results.json``) and return its content, validated.

    A thin wrapper over :meth:`finegrain.results.saved.SavedResults.load`
    (which validates every section and migrates older files: use it for the
    typed object): a file that is not JSON, has another schema, or holds a
    section of the wrong shape is a DataFormatError naming the file and the
    place inside it. The dict returned is the file as written.
    """
    p = Path(path)
    if p.is_dir():
        p = p / RESULTS_FILE
    if not p.is_file():
        raise FinegrainError(f"no results at {str(p)!r}", "pass a folder written by 'finegrain eval --out DIR'")
    data, _ = read_json(p)
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise DataFormatError(p, None, f"a finegrain results file (schema {SCHEMA!r})", str(found))
    SavedResults.from_json(data, source=str(p))  # validation: errors name the file and the section
    return data


# --------------------------------------------------------------------------- the saved run
# ids with spaces (PhotoBench file names) cannot be TREC fields: such a run is saved as run.jsonl

RUN_TREC = "run.trec"
RUN_JSONL = "run.jsonl"
RUN_FILES = (RUN_TREC, RUN_JSONL)


def run_file_name(run: Any) -> str:
    """``run.trec`` when every id (and the run name) is a valid TREC field, else ``run.jsonl``."""
    return RUN_TREC if is_trec_safe(run) else RUN_JSONL


def save_run(out_dir: str | os.PathLike[str], run: Any, name: str | None = None) -> Path:
    """Write ``run`` into a results folder as :func:`run_file_name` chooses (``name``: its answer,
    when the caller already has it), whole or not at all (:func:`finegrain.atomic.atomic_path`);
    returns its path.

    The other format's file, left by an earlier eval into the same folder, is
    removed, so a folder never holds two runs that disagree.
    """
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise FinegrainError(f"cannot create output folder {str(out)!r}: {e.strerror}", "choose a writable --out") from None
    name = name if name in RUN_FILES else run_file_name(run)
    path = out / name
    with atomic_path(path) as tmp:
        if name == RUN_TREC:
            write_run(run, tmp)
        else:
            write_run_jsonl(run, tmp)
    for other in RUN_FILES:
        if other != name:
            (out / other).unlink(missing_ok=True)
    return path


def save_folder(out_dir: str | os.PathLike[str], results: SavedResults, run: Any) -> tuple[Path, Path]:
    """Write a results folder: the run first, then ``results.json`` recording the run's size and SHA-256
    (:mod:`finegrain.results.companions`), each file whole or not at all; returns both paths.

    A kill at any moment leaves a folder that :func:`read_saved_run` either reads whole or refuses: before
    ``results.json`` is renamed into place the folder holds the previous ``results.json`` (whose record the
    new run does not match) or none.
    """
    remove_stale(out_dir)
    run_path = save_run(out_dir, run, results.run_file)
    recorded = replace(results, files=MappingProxyType({**results.files, run_path.name: Companion.of(run_path)}))
    return recorded.save(Path(out_dir)), run_path


def read_saved_run(folder: str | os.PathLike[str], results: Any = None) -> Any:
    """The run of a results folder written by ``finegrain eval`` (``run.trec`` or ``run.jsonl``).

    A query its ``results.json`` scored but the run file lacks (a query that
    retrieved nothing has no TREC line) gets an empty result list, so the run
    has every query it was asked. ``results``: the folder's
    :class:`~finegrain.results.saved.SavedResults`, when the caller has read it already.
    """
    d = Path(folder)
    if d.is_file():
        d = d.parent
    if results is None and (d / RESULTS_FILE).is_file():
        results = SavedResults.load(d)
    candidates = [RUN_JSONL, RUN_TREC]  # save_run leaves one of them, never both
    if results is not None and results.files:
        for name, record in results.files.items():  # what results.json recorded must be there, whole
            check_companion(d / name, record)
    for name in candidates:
        path = d / name
        if path.is_file():
            if results is not None and results.files and name not in results.files:
                raise IncompleteFolderError(
                    path, None, f"only the files recorded in {RESULTS_FILE} ({', '.join(results.files)})",
                    "a run it does not record", "run 'finegrain eval -o' into the folder again")
            if name == RUN_JSONL:
                run = read_run_jsonl(path)
            else:
                run = read_run(path)
            if results is not None:
                run = run.with_queries(results.query_ids)
            return run
    raise FinegrainError(f"no saved run in {str(d)!r} (looked for {' or '.join(candidates)})",
                         "pass a folder written by 'finegrain eval --out DIR'")


def read_any_run(path: str | Path) -> Run:
    """A run from a results folder written by ``finegrain eval -o DIR`` or from a run file
    (:func:`read_run_file`)."""
    if Path(path).is_dir():
        run: Run = read_saved_run(path)
        return run
    return read_run_file(path)
