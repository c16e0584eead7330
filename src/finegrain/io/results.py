"""Saved results: ``DIR/results.json`` and ``DIR/run.trec``.

Reports and comparisons are rendered from these files alone, so everything a
view needs (per-query values, query texts and types, denominators, provenance)
is written here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from finegrain.errors import DataFormatError, FinegrainError

RESULTS_FILE = "results.json"
RUN_FILE = "run.trec"
SCHEMA = "finegrain.results/1"


def write_results(out_dir: str | Path, results: Mapping[str, Any], run: Any | None = None) -> Path:
    """Write ``results.json`` (and ``run.trec`` when a run is given) into ``out_dir``.

    The JSON is written to a temporary file and renamed, so an interrupted
    write never leaves a half file behind.
    """
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise FinegrainError(f"cannot create output folder {str(out)!r}: {e.strerror}", "choose a writable --out") from None
    path = out / RESULTS_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"schema": SCHEMA, **results}, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(path)
    if run is not None:
        from finegrain.io.trec import write_run

        write_run(run, out / RUN_FILE)
    return path


def read_results(path: str | Path) -> dict[str, Any]:
    """Read a results folder (or its ``results.json``)."""
    p = Path(path)
    if p.is_dir():
        p = p / RESULTS_FILE
    if not p.is_file():
        raise FinegrainError(f"no results at {str(p)!r}", "pass a folder written by 'finegrain eval --out DIR'")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise DataFormatError(p, e.lineno, "a JSON object", e.msg) from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise DataFormatError(p, None, f"a finegrain results file (schema {SCHEMA!r})", str(data.get("schema") if isinstance(data, dict) else type(data).__name__))
    return data
