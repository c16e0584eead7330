"""Hooks: a method of a lower layer that calls what a higher layer provides, without importing it.

The layer contract (``pyproject.toml``, import-linter) lets a module import only from the layers
below it. A few conveniences of the low types need a higher layer:

- ``Qrels.from_file`` / ``Run.save`` / ``Run.from_df`` (:mod:`finegrain.types`, the core) need the
  readers and writers of :mod:`finegrain.io` (:data:`TABLE_IO`);
- ``Evaluation.save`` / ``Evaluation.to_saved`` (:mod:`finegrain.evaluate.result`) need the one
  ``results.json`` schema, :class:`finegrain.results.saved.SavedResults`, which sits above
  evaluate (:data:`SAVED_RESULTS`).

Such a method calls a :class:`Hook` defined here. The root package (``finegrain/__init__.py``, the
public API, which stands above every layer and which Python runs before any of its modules) fills
each hook with a loader taken from its lazy table (:func:`finegrain._lazy.lazy_exports`). So no
layer imports upwards, every edge is written once (in the root's table), nothing is imported before
the first call, and ``import finegrain`` stays light.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from finegrain.errors import FinegrainError

if TYPE_CHECKING:
    import os

    from finegrain.types import Qrels, Run

T = TypeVar("T")


class Hook(Generic[T]):
    """A slot that a higher layer fills with a loader (a function of no argument returning the provider)."""

    __slots__ = ("_loader", "what")

    def __init__(self, what: str) -> None:
        self.what = what
        self._loader: Callable[[], T] | None = None

    def fill(self, loader: Callable[[], T]) -> None:
        """Provide the loader (the root package does this once per import of ``finegrain``)."""
        self._loader = loader

    def __call__(self) -> T:
        """The provider, loaded on first use."""
        if self._loader is None:
            raise FinegrainError(f"{self.what} is not wired up", "import finegrain itself: its root fills this hook")
        return self._loader()

    def __repr__(self) -> str:
        return f"Hook({self.what!r}, {'filled' if self._loader is not None else 'empty'})"


class TableIO(Protocol):
    """What :mod:`finegrain.io` provides to ``Qrels`` and ``Run``: files and DataFrames in every format.

    ``format`` is None (from the file name, or its content for qrels) or a format name of
    :data:`finegrain.io.formats.FORMATS`; ``columns`` maps a role (``"query"``, ``"doc"``, ``"value"``)
    to a column name, a missing role being found among the usual names.
    """

    def read_qrels(self, path: str | os.PathLike[str], format: str | None) -> Qrels: ...

    def read_run(self, path: str | os.PathLike[str], format: str | None, name: str | None) -> Run: ...

    def write(self, table: Qrels | Run, path: str | os.PathLike[str], format: str | None) -> os.PathLike[str]: ...

    def from_frame(self, frame: Any, kind: str, columns: dict[str, str], name: str | None) -> Qrels | Run: ...

    def to_frame(self, table: Qrels | Run) -> Any: ...


TABLE_IO: Hook[TableIO] = Hook("reading and writing qrels and runs (finegrain.io)")
SAVED_RESULTS: Hook[Any] = Hook("saving an evaluation (finegrain.results)")  # SavedResults, the class

__all__ = ["SAVED_RESULTS", "TABLE_IO", "Hook", "TableIO"]
