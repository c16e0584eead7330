"""Saved results: ``DIR/results.json`` (the run beside it is ``run.trec`` or ``run.jsonl``).

Reports and comparisons are rendered from these files alone, so everything a
view needs (per-query values, query texts and types, denominators, provenance)
is written here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import read_json

if TYPE_CHECKING:
    from finegrain.evaluate.saved import SavedResults

RESULTS_FILE = "results.json"
SCHEMA = "finegrain.results/1"  # the schema of results.json (finegrain.evaluate.saved reads it)


def write_results(out_dir: str | Path, results: Mapping[str, Any] | SavedResults) -> Path:
    """Write ``results.json`` into ``out_dir`` (the run goes beside it through
    :func:`finegrain.evaluate.pipeline.save_run`: ``run.trec``, or ``run.jsonl`` for ids TREC cannot hold).

    The JSON is written to a temporary file and renamed, so an interrupted
    write never leaves a half file behind.
    """
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise FinegrainError(f"cannot create output folder {str(out)!r}: {e.strerror}", "choose a writable --out") from None
    if not isinstance(results, Mapping):
        results = results.to_json()
    path = out / RESULTS_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"schema": SCHEMA, **results}, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(path)
    return path


def read_results(path: str | Path) -> dict[str, Any]:
    """Read a results folder (or its ``results.json``) and return its content, validated.

    A thin wrapper over :meth:`finegrain.evaluate.saved.SavedResults.load`
    (which validates every section and migrates older files: use it for the
    typed object): a file that is not JSON, has another schema, or holds a
    section of the wrong shape is a DataFormatError naming the file and the
    place inside it. The dict returned is the file as written.
    """
    from finegrain.evaluate.saved import SavedResults

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
