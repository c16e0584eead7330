"""The one streaming file hash: a file's SHA-256, read a megabyte at a time."""

from __future__ import annotations

import hashlib
from os import PathLike


def sha256_of(path: str | PathLike[str]) -> str:
    """The hex SHA-256 of the file at ``path``."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
