"""Entries grouped in segments by offsets: segment ``i`` holds entries ``offsets[i]`` up to ``offsets[i + 1]``
(int64 offsets, non-decreasing, from 0), as a table's queries hold their entries.

Each entry's segment and its position within it, in one compiled pass (:mod:`finegrain.native`) or with numpy.
"""

from __future__ import annotations

import numpy as np

from finegrain.native import NATIVE


def segments_of(offsets: np.ndarray) -> np.ndarray:
    """The segment of every entry."""
    if NATIVE is not None:
        return np.frombuffer(NATIVE.segments_of(np.ascontiguousarray(offsets, dtype=np.int64)), dtype=np.int64)
    return np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))


def positions_of(offsets: np.ndarray) -> np.ndarray:
    """The position of every entry within its segment."""
    if NATIVE is not None:
        return np.frombuffer(NATIVE.positions_of(np.ascontiguousarray(offsets, dtype=np.int64)), dtype=np.int64)
    out: np.ndarray = np.arange(int(offsets[-1]), dtype=np.int64) - np.repeat(offsets[:-1], np.diff(offsets))
    return out
