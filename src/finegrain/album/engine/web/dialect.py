"""What differs between the two catalog stores for the page's read-only SQL, in one place.

:class:`~finegrain.album.engine.web.queries.CatalogReader` writes each query once, with ``?``
placeholders and SQL both databases read the same way; a :class:`Dialect` supplies the rest:

* the connection: SQLite opens the file read-only (``mode=ro``, ``query_only``); Postgres opens
  an autocommit connection whose every statement is a read-only transaction;
* the placeholder style (``?`` or ``%s``): :meth:`Dialect.sql` rewrites a statement once;
* the "catalog changed" signal (:meth:`Dialect.version`): SQLite's ``PRAGMA data_version``; in
  Postgres the one-row change counter that every write transaction of
  :class:`~finegrain.album.engine.catalog.postgres.PostgresCatalog` bumps in its own commit
  (:data:`~finegrain.album.engine.catalog.postgres_schema.CHANGES`). Both move exactly when a commit
  changed the catalog (not with the WAL position, which moves for unrelated reasons);
* the nearest integer (:meth:`Dialect.nearest_int`): SQLite's ``ROUND`` rounds halves away from
  zero by adding 0.5 to the magnitude and truncating (so ``ROUND(0.49999999999999994)`` is 1);
  Postgres' ``round(double precision)`` rounds halves to even and its ``CAST`` to integer rounds
  too, so the Postgres form spells SQLite's rule out: ``sign(x) * trunc(abs(x) + 0.5)``, the same
  IEEE operations, the same integers;
* ``NULLS LAST`` (:attr:`Dialect.desc_nulls_last`): SQLite sorts NULLs first ascending and last
  descending; Postgres the other way round, so a descending order that must end with NULLs says so;
* place names: stored as typed under SQLite's ``COLLATE NOCASE``, stored and looked up ASCII-folded
  in Postgres (:func:`~finegrain.album.engine.catalog.postgres_schema.ascii_fold`).

Text compares the same in both (SQLite's BINARY, Postgres columns ``COLLATE "C"``); JSON
columns (people's names, keywords, meta values) are JSON text in both.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from finegrain.album.engine.catalog.postgres_schema import CHANGES, ascii_fold, connect_reader, is_postgres_url, redact


class Dialect:
    """The store-specific parts of the page's SQL (see the module docstring)."""

    name = ""
    desc_nulls_last = ""

    def connect(self) -> Any:
        raise NotImplementedError

    def sql(self, text: str) -> str:
        return text

    def version(self, conn: Any) -> int:
        raise NotImplementedError

    def nearest_int(self, expr: str) -> str:
        raise NotImplementedError

    def place_name(self, name: str) -> str:
        return name

    def describe(self) -> str:
        raise NotImplementedError


class SqliteDialect(Dialect):
    name = "sqlite"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).resolve()

    def connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path.as_uri() + "?mode=ro", uri=True, check_same_thread=False)
        db.execute("PRAGMA busy_timeout=5000")
        db.execute("PRAGMA query_only=1")
        return db

    def version(self, conn: Any) -> int:
        return int(conn.execute("PRAGMA data_version").fetchone()[0])

    def nearest_int(self, expr: str) -> str:
        return f"CAST(ROUND({expr}) AS INTEGER)"

    def describe(self) -> str:
        return str(self.path)


class PostgresDialect(Dialect):
    name = "postgres"
    desc_nulls_last = " NULLS LAST"

    def __init__(self, url: str) -> None:
        self.url = url.strip()

    def connect(self) -> Any:
        return connect_reader(self.url)

    def sql(self, text: str) -> str:
        return text.replace("%", "%%").replace("?", "%s")

    def version(self, conn: Any) -> int:
        return int(conn.execute(CHANGES).fetchone()[0])

    def nearest_int(self, expr: str) -> str:
        return f"CAST(SIGN({expr}) * TRUNC(ABS({expr}) + 0.5) AS BIGINT)"

    def place_name(self, name: str) -> str:
        return ascii_fold(name)

    def describe(self) -> str:
        return redact(self.url)


def dialect_of(target: str | Path) -> Dialect:
    """The dialect of a catalog given as :func:`~finegrain.album.engine.catalog.open_catalog` takes it."""
    return PostgresDialect(str(target)) if is_postgres_url(target) else SqliteDialect(target)
