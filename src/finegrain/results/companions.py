"""The files saved beside ``results.json`` (the run), recorded by size and SHA-256 so a reader knows they are whole.

``finegrain eval -o DIR`` writes the run first and ``results.json`` last, each
through :mod:`finegrain.atomic`; ``results.json`` records each companion's
size and SHA-256 in its ``"files"`` section. A folder killed between the two
writes, or whose run was replaced or truncated later, has a run that does not
match the record: :func:`check_companion` refuses it with one error naming
the file and the fix, so no reader (``pool``, ``report``, ``relabel``) works
on part of a run. Folders written before the record existed have none and are
read as before.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path
from typing import Annotated

from pydantic import StringConstraints

from finegrain.errors import DataFormatError
from finegrain.io.checksum import sha256_of
from finegrain.results.schema import Count, Saved

Sha256 = Annotated[str, StringConstraints(strict=True, pattern=r"^[0-9a-f]{64}$")]


class Companion(Saved):
    """A file saved beside ``results.json``: its size in bytes and its SHA-256 (hex)."""

    size: Count
    sha256: Sha256

    @classmethod
    def of(cls, path: str | PathLike[str]) -> Companion:
        """The record of the file at ``path`` as it is now."""
        return cls(size=Path(path).stat().st_size, sha256=sha256_of(path))


class IncompleteFolderError(DataFormatError):
    """A companion file does not match what ``results.json`` recorded: the folder was written in part."""


def check_companion(path: str | PathLike[str], record: Companion) -> None:
    """Refuse ``path`` unless its size and SHA-256 are those recorded (the size is checked first: no hash
    of a file of the wrong length)."""
    p = Path(path)
    found = p.stat().st_size if p.is_file() else None
    if found == record.size and sha256_of(p) == record.sha256:
        return
    what = "no file" if found is None else (f"{found} bytes" if found != record.size
                                            else f"{record.size} bytes with other content")
    raise IncompleteFolderError(
        p, None, f"the {record.size} bytes (SHA-256 {record.sha256[:12]}...) recorded in results.json", what,
        "the folder was written in part (an interrupted 'finegrain eval -o') or the file was changed since; "
        "run 'finegrain eval -o' into it again")


__all__ = ["Companion", "IncompleteFolderError", "Sha256", "check_companion"]
