"""Lists of ids: one id per line, or JSON lines with an ``"id"`` or ``"_id"`` field.

The format is decided by the file: ``.jsonl`` / ``.jsonl.gz`` files, or files
whose first non-blank line starts with ``{``, are JSON lines; anything else is
one id per line (surrounding whitespace stripped, blank lines skipped, an id
may not contain whitespace). Ids follow the id rule of
:mod:`finegrain.io.ids` (of JSON strings for JSON lines, of whitespace-separated
fields for one id per line). An id listed twice is an error naming both lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from finegrain.errors import DataFormatError
from finegrain.io._lines import DuplicateRecordError, PathLike, get_id, iter_jsonl, iter_lines, iter_tokens


def read_ids(path: PathLike) -> list[str]:
    """The ids of ``path`` in file order."""
    seen: dict[str, int] = {}
    out: list[str] = []
    for n, value in _iter_ids(path):
        first = seen.setdefault(value, n)
        if first != n:
            raise DuplicateRecordError(path, n, first, "id", repr(value))
        out.append(value)
    return out


def _iter_ids(path: PathLike) -> Iterator[tuple[int, str]]:
    if _is_jsonl(path):
        for n, obj in iter_jsonl(path):
            yield n, get_id(path, n, obj, "id", "_id")
        return
    yield from iter_tokens(path, "one id per line (no whitespace inside an id)")


def _is_jsonl(path: PathLike) -> bool:
    name = str(path)
    if name.endswith((".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")):
        return True
    for _, line in iter_lines(path):
        if line.strip():
            return line.lstrip().startswith("{")
    return False


def read_overlap_ids(path: str | Path) -> tuple[str, ...]:
    """The ids of A's overlapping items listed in ``path``, in file order, each once.

    ``path`` is the pairs file :func:`write_pairs` writes (JSON lines with
    ``a_id``; an id on many lines is one id), or a plain list of ids (one per
    line, or JSON lines with ``id`` / ``_id``: :func:`finegrain.io.idlist.read_ids`).
    """
    first: dict[str, Any] | None = None
    if _is_jsonl(path):
        for _, obj in iter_jsonl(path):
            first = obj
            break
    if first is not None and "a_id" in first:
        ids: dict[str, None] = {}
        for n, obj in iter_jsonl(path):
            ids.setdefault(get_id(path, n, obj, "a_id", what="query id"), None)
        out = tuple(ids)
    else:
        out = tuple(read_ids(path))
    if not out:
        raise DataFormatError(path, None, "query ids (an overlap pairs file or one id per line)", "no id",
                              "write it with 'finegrain overlap A B -o FILE'")
    return out
