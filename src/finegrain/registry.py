"""One registry pattern for datasets, retrievers and metrics.

A registry maps names to factories. It refuses duplicate names, suggests near
names for unknown ones, and imports nothing until an entry is asked for
(entries may be given as ``"module:attribute"`` strings).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from finegrain.errors import FinegrainError, UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T | str] = {}
        self._help: dict[str, str] = {}

    def register(self, name: str, entry: T | str, help: str = "") -> None:
        if name in self._entries:
            raise FinegrainError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = entry
        self._help[name] = help

    def get(self, name: str) -> T:
        try:
            entry = self._entries[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self._entries) from None
        if isinstance(entry, str) and ":" in entry:
            module, _, attr = entry.partition(":")
            entry = getattr(importlib.import_module(module), attr)
            self._entries[name] = entry
        return entry  # type: ignore[return-value]

    def help(self, name: str) -> str:
        return self._help.get(name, "")

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def names(self) -> list[str]:
        return list(self._entries)


def lazy(target: str) -> Callable[..., object]:
    """A factory that imports ``module:attribute`` on first call."""

    def call(*args: object, **kw: object) -> object:
        module, _, attr = target.partition(":")
        return getattr(importlib.import_module(module), attr)(*args, **kw)

    return call
