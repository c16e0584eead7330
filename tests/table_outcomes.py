"""What a reader made of a file, comparable across the fast and the line-by-line paths of the readers
(tests/io/test_fast_*.py): the table column by column, or the one error it raised."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from finegrain.errors import FinegrainError
from finegrain.io import _columns


def outcome(read: Callable[[Path], Any], path: Path) -> tuple[Any, ...]:
    """``("ok", name, qids, offsets, codes, vocab, values)`` of the table ``read(path)`` returns, values by
    ``repr`` (a float's repr is its exact double, the sign of zero included), or ``("error", type, text)``."""
    try:
        table = read(path)
    except FinegrainError as e:
        return "error", type(e).__name__, str(e)
    return ("ok", getattr(table, "name", None), table.qids, table.offsets.tolist(), table.doc_codes.tolist(),
            table.vocab, [repr(v) for v in table.values.tolist()])


@contextlib.contextmanager
def blocks_of(size: int | None) -> Iterator[None]:
    """Both block readers read ``size`` bytes at a time inside the block (None: their defaults), so lines
    straddle block ends; for hypothesis tests, which cannot take pytest's function-scoped monkeypatch."""
    saved = _columns.CHUNK, _columns.FAST_CHUNK
    if size is not None:
        _columns.CHUNK = _columns.FAST_CHUNK = size
    try:
        yield
    finally:
        _columns.CHUNK, _columns.FAST_CHUNK = saved
