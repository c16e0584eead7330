"""Frozen values, one place for each rule: the empty read-only mapping, deep-frozen JSON data,
read-only numpy arrays. Frozen dataclasses use these for their mapping and array fields."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

#: The read-only empty mapping: a default for mapping fields (``field(default_factory=lambda: EMPTY)``).
EMPTY: Mapping[str, Any] = MappingProxyType({})


def freeze(value: Any) -> Any:
    """A deep read-only copy of JSON data: dicts -> MappingProxyType, lists -> tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """The JSON data of a :func:`freeze` d value (mappings -> dicts, tuples -> lists)."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value


def read_only(a: np.ndarray) -> np.ndarray:
    """``a`` itself, marked read-only (a view derived from it stays read-only too)."""
    a.setflags(write=False)
    return a
