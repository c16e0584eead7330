"""Which items of a bank (phrasing templates, cities, names, scenes) the dev albums may use.

Each bank is split on its own: its items are ordered by the SHA-256 of ``namespace`` and the
item's key, and every third item of that order (about a third of the bank, never all of it) is
**held out**: only test albums use it. Test albums use the whole bank, so rules tuned to the dev
albums' wording, places and names meet, on the test albums, wording, places and names they have
never seen. The split depends only on the bank's contents, not on a seed or on the order the
bank is written in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TypeVar

from finegrain.errors import FinegrainError

T = TypeVar("T")
SPLITS = ("dev", "test")


def _rank(namespace: str, key: str) -> str:
    return hashlib.sha256(f"{namespace}\0{key}".encode()).hexdigest()


def held_out(items: Sequence[T], namespace: str, key: Callable[[T], str] = str) -> tuple[T, ...]:
    """The items of ``items`` only test albums use (every third in hash order; none of a bank of one)."""
    order = sorted(items, key=lambda it: _rank(namespace, key(it)))
    return tuple(it for i, it in enumerate(order) if i % 3 == 2)


def for_split(items: Sequence[T], split: str, namespace: str, key: Callable[[T], str] = str) -> tuple[T, ...]:
    """The items of ``items`` an album of ``split`` may use, in their written order."""
    check_split(split)
    if split == "test":
        return tuple(items)
    out = held_out(items, namespace, key)
    return tuple(it for it in items if it not in out)


def check_split(split: str) -> None:
    if split not in SPLITS:
        raise FinegrainError(f"unknown split {split!r}", "use 'dev' (for developing rules) or 'test' (held out)")
