"""Ids as one pyarrow string array, where Arrow's C-level hashing and sorting give Python's answers.

Arrow compares strings by their UTF-8 bytes: for values that are exactly
``str`` and UTF-8 encode (no lone surrogate), byte equality is Python's string
equality and byte order is Python's code-point order. Anything else (a ``str``
subclass, which may define its own equality, bytes, numbers, ``None``, a lone
surrogate, more than 2 GiB of text) gets ``None``, and the caller keeps its
Python path. So does a machine without pyarrow (the ``interop`` extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

ARROW_MIN_IDS = 50_000
"""Ids from which callers use Arrow: below it, importing pyarrow costs more than its C-level work saves."""


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
