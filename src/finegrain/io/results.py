"""Saved results: ``DIR/results.json`` (the run beside it is ``run.trec`` or ``run.jsonl``).

Reports and comparisons are rendered from these files alone, so everything a
view needs (per-query values, query texts and types, denominators, provenance)
is written here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import read_json

RESULTS_FILE = "results.json"
SCHEMA = "finegrain.results/1"


def write_results(out_dir: str | Path, results: Mapping[str, Any]) -> Path:
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
    path = out / RESULTS_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"schema": SCHEMA, **results}, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(path)
    return path


def read_results(path: str | Path) -> dict[str, Any]:
    """Read a results folder (or its ``results.json``), checking the shape of every section it relies on.

    A file that is not JSON, has another schema, or holds a section of the
    wrong shape (a metric value that is not a number or null, a denominator
    that is not a count, ...) is a DataFormatError naming the file and the
    place inside it, never a crash later in ``compare`` or ``report``.
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
    _check_sections(p, data)
    return data


# --------------------------------------------------------------------------- shape checks

_Check = Callable[[Any], bool]


def _number(v: Any) -> bool:
    return v is None or (isinstance(v, int | float) and not isinstance(v, bool))


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _mapping_of(check: _Check) -> _Check:
    return lambda v: isinstance(v, dict) and all(check(x) for x in v.values())


def _query_record(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and isinstance(v.get("text", ""), str)
        and (v.get("type") is None or isinstance(v.get("type"), str))
    )


def _slice(v: Any) -> bool:
    return isinstance(v, dict) and _number(v.get("value")) and _count(v.get("n", 0))


# section -> (required, check of the whole section, what it should be)
_SECTIONS: dict[str, tuple[bool, _Check, str]] = {
    "aggregate": (True, _mapping_of(_number), "{metric: number or null}"),
    "per_query": (True, _mapping_of(_mapping_of(_number)), "{metric: {query id: number or null}}"),
    "denominators": (False, _mapping_of(_mapping_of(_count)), "{metric: {name: count}}"),
    "by_type": (False, _mapping_of(_mapping_of(_slice)), "{type: {metric: {value, n}}}"),
    "curves": (False, _mapping_of(_mapping_of(_number)), "{metric: {k: number or null}}"),
    "queries": (False, _mapping_of(_query_record), "{query id: {text, type}}"),
    "provenance": (False, lambda v: isinstance(v, dict), "an object"),
    "errors": (False, lambda v: isinstance(v, dict) and isinstance(v.get("schema"), str), "an object with a schema"),
    "taxonomy": (False, lambda v: isinstance(v, dict) and isinstance(v.get("schema"), str), "an object with a schema"),
}


def _check_sections(path: Path, data: Mapping[str, Any]) -> None:
    for name, (required, check, shape) in _SECTIONS.items():
        if name not in data:
            if required:
                raise DataFormatError(path, None, f"a section {name!r} {shape}", "none", "write the folder again with 'finegrain eval'")
            continue
        if not check(data[name]):
            raise DataFormatError(
                path, None, f"section {name!r} as {shape}", _first_bad(data[name]),
                "the file was edited or damaged; write it again with 'finegrain eval'",
            )
    unknown = set(data["per_query"]) - set(data["aggregate"])
    if unknown:
        raise DataFormatError(path, None, "per-query values only for metrics in 'aggregate'", ", ".join(sorted(unknown)))


def _first_bad(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."
