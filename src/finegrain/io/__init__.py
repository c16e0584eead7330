"""Readers and writers: TREC qrels and runs, id lists, BEIR/MTEB folders, CapRetrieval, PhotoBench.

Loaders stream typed records and fail with a
:class:`~finegrain.errors.DataFormatError` naming path, line, what was
expected and what was found. Plain files and ``.gz`` files are handled by
suffix. The names below are imported on first use.
"""

from __future__ import annotations

from finegrain._lazy import lazy_exports

__all__ = [
    "Album", "DuplicateRecordError", "read_album", "read_beir", "read_capretrieval", "read_ids", "read_qrels",
    "read_run", "write_beir", "write_capretrieval", "write_qrels", "write_run",
]

__getattr__, __dir__ = lazy_exports(__name__, {
    ".trec": "read_qrels write_qrels read_run write_run", ".idlist": "read_ids", ".beir": "read_beir write_beir",
    ".capretrieval": "read_capretrieval write_capretrieval", ".photobench": "read_album Album",
    "._lines": "DuplicateRecordError",
})
