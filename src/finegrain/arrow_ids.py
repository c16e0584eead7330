"""Ids as one pyarrow array, where Arrow's C-level hashing and sorting give the answers Python would.

Arrow compares strings by their UTF-8 bytes: for values that are exactly
``str`` and UTF-8 encode (no lone surrogate), byte equality is Python's string
equality and byte order is Python's code-point order. Anything else (a ``str``
subclass, which may define its own equality, bytes, numbers, ``None``, a lone
surrogate, more than 2 GiB of text) gets ``None``, and the caller keeps its
Python path. So does a machine without pyarrow (the ``interop`` extra).
Ids already read as rows of bytes (:func:`byte_rows`) are equal when their
bytes are. The Arrow kernels the callers use (dictionary encoding, sorting,
the hash join) are called here, so this is the one module that touches pyarrow.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

ARROW_MIN_IDS = 1_000_000
"""Ids from which Arrow is used even when pyarrow is not yet imported: about where its C-level work saves
more than the import costs."""
ARROW_WARM_MIN_IDS = 10_000
"""Ids from which Arrow is used once pyarrow is imported: below it, Python's per-id work is as quick."""


def worth_arrow(n: int) -> bool:
    """Whether ``n`` ids are worth handing to Arrow (:data:`ARROW_MIN_IDS`, :data:`ARROW_WARM_MIN_IDS`)."""
    return n >= ARROW_MIN_IDS or (n >= ARROW_WARM_MIN_IDS and "pyarrow" in sys.modules)


def id_array(ids: Sequence[Any]) -> Any | None:
    """``ids`` as a ``pyarrow.StringArray`` when Arrow's equality and order are Python's for them, else ``None``."""
    if not ids or set(map(type, ids)) != {str}:
        return None
    try:
        import pyarrow as pa
    except ImportError:
        return None
    try:
        arr = pa.array(ids, type=pa.string())
    except UnicodeError:  # a lone surrogate
        return None
    return arr if isinstance(arr, pa.Array) else None  # over 2 GiB of text comes back in chunks


def byte_rows(rows: Any) -> Any | None:
    """The rows of a 2-d numpy array as a ``pyarrow.FixedSizeBinaryArray`` (no copy of a C-contiguous array), or
    ``None`` without pyarrow."""
    try:
        import pyarrow as pa
    except ImportError:
        return None
    rows = np.ascontiguousarray(rows)
    width = rows.shape[1] * rows.itemsize
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), len(rows), [None, pa.py_buffer(rows)])


def dictionary_codes(arr: Any) -> tuple[Any, np.ndarray]:
    """``(distinct values, int64 code of each value)`` of an Arrow array, in order of first appearance."""
    encoded = arr.dictionary_encode()
    return encoded.dictionary, np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)


def sort_order(arr: Any) -> np.ndarray:
    """The int64 positions that sort an Arrow array ascending (by bytes)."""
    import pyarrow.compute as pc

    return np.asarray(pc.sort_indices(arr).to_numpy(), dtype=np.int64)


def positions_in(arr: Any, value_set: Any) -> np.ndarray:
    """The int64 position in ``value_set`` of each value of ``arr`` (-1 where absent), by Arrow's hash join."""
    import pyarrow.compute as pc

    found = pc.index_in(arr, value_set=value_set).fill_null(-1)
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64)
