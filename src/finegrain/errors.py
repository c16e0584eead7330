"""Errors a person can act on.

Every error finegrain raises for bad input is a :class:`FinegrainError`: its
message names the bad value (and where it was found) and says how to fix it.
The CLI prints ``error: <message>`` on one line and exits non-zero; it never
shows a traceback for these.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from os import PathLike


class FinegrainError(Exception):
    """Base class for errors caused by input, configuration or environment."""

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(self.__str__())

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled with its attributes, not its constructor's arguments, so every subclass crosses a
        process boundary (a search worker, a process pool) as itself, message and hint intact."""
        return _restore, (type(self), self.args, dict(self.__dict__))


def _restore(cls: type[FinegrainError], args: tuple[object, ...], state: dict[str, object]) -> FinegrainError:
    err = cls.__new__(cls)
    Exception.__init__(err, *args)
    err.__dict__.update(state)
    return err


class DataFormatError(FinegrainError):
    """A file does not have the format it should: names path, line, expected and found."""

    def __init__(
        self,
        path: str | PathLike[str],
        line: int | None,
        expected: str,
        found: str,
        hint: str | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.expected = expected
        self.found = found
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: expected {expected}, found {_clip(found)}", hint)


class DuplicateIdError(FinegrainError):
    """An identifier appears twice where it must be unique."""


class UnknownNameError(FinegrainError):
    """A name (metric, dataset, retriever, ...) is not known; suggests near names."""

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        known = sorted(known)
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"did you mean {' or '.join(repr(c) for c in close)}?" if close else None
        listing = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "")
        super().__init__(f"unknown {kind} {name!r}; known: {listing}", hint)
        self.kind = kind
        self.name = name
        self.suggestions = close


class MissingDependencyError(FinegrainError):
    """An optional dependency is not installed; says which extra installs it."""

    def __init__(self, module: str, extra: str) -> None:
        super().__init__(
            f"this feature needs the Python package {module!r}, which is not installed",
            f"install it with: pip install 'finegrain[{extra}]'",
        )


class FinegrainWarning(UserWarning):
    """Base class of finegrain's warnings: ``warnings.filterwarnings("ignore", category=FinegrainWarning)``
    silences them all."""


def _clip(text: str, width: int = 120) -> str:
    text = repr(text)
    return text if len(text) <= width else text[: width - 3] + "..."


def check_unique_ids(ids: Iterable[object], what: str, where: str = "") -> None:
    """Each of ``ids`` a string, and none twice: else the error names the id (``what`` is "query id",
    "document id", ...; ``where`` ends the duplicate message, e.g. " in the query list")."""
    seen: set[str] = set()
    for x in ids:
        if not isinstance(x, str):
            raise FinegrainError(f"{what} {x!r} is a {type(x).__name__}, not a string", f"give {what}s as strings")
        if x in seen:
            raise DuplicateIdError(f"{what} {x!r} appears twice{where}", f"list every {what} once")
        seen.add(x)
