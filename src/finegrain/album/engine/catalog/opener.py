"""One way to open a catalog: a SQLite file path, or a ``postgresql://`` URL.

Every ``--catalog`` of the album commands and every caller that is handed a catalog location
goes through :func:`open_catalog`, so anything that reads or writes a catalog works on both.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from finegrain.album.engine.catalog.postgres import PostgresCatalog
from finegrain.album.engine.catalog.postgres_schema import is_postgres_url, redact
from finegrain.album.engine.catalog.sqlite import SqliteCatalog

if TYPE_CHECKING:
    from finegrain.album.engine.catalog.postgres import PostgresCatalog
    from finegrain.album.engine.catalog.sqlite import SqliteCatalog

#: What ``--catalog`` accepts, for help texts.
CATALOG_HELP = "a catalog file (SQLite), or a Postgres database URL postgresql://USER[:PASSWORD]@HOST[:PORT]/DB (pgvector)"


def open_catalog(target: str | Path, *, create: bool = True) -> SqliteCatalog | PostgresCatalog:
    """The catalog at ``target``: a Postgres database when it is a ``postgresql://`` (or
    ``postgres://``) URL, else the SQLite file at that path. ``create`` makes a missing one;
    without it a missing catalog is an error that says how to build one."""
    if is_postgres_url(target):
        return PostgresCatalog(str(target).strip(), create=create)

    return SqliteCatalog(target, create=create)


def catalog_target(value: str | Path) -> str | Path:
    """A ``--catalog`` value as :func:`open_catalog` takes it: the URL as given, else a path."""
    return str(value).strip() if is_postgres_url(value) else Path(value)


def describe(target: str | Path) -> str:
    """``target`` for printing: the path, or the URL without its password."""
    return redact(str(target).strip()) if is_postgres_url(target) else str(target)
