"""Readers and writers: TREC qrels and runs, id lists, BEIR/MTEB folders, CapRetrieval, PhotoBench.

Loaders stream typed records and fail with a
:class:`~finegrain.errors.DataFormatError` naming path, line, what was
expected and what was found. Plain files and ``.gz`` files are handled by
suffix. The names below are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "read_qrels": "trec",
    "write_qrels": "trec",
    "read_run": "trec",
    "write_run": "trec",
    "read_ids": "idlist",
    "read_beir": "beir",
    "write_beir": "beir",
    "read_capretrieval": "capretrieval",
    "write_capretrieval": "capretrieval",
    "read_album": "photobench",
    "Album": "photobench",
    "DuplicateRecordError": "_lines",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'finegrain.io' has no attribute {name!r}")
    return getattr(importlib.import_module(f"finegrain.io.{module}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
