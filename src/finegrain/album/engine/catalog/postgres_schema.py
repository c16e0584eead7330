"""The catalog's Postgres layout, the pgvector adapters and the connection (with errors that say what to do).

The tables mirror :mod:`finegrain.album.engine.catalog.schema` (same names, same columns, the rows
converted by the same functions) with these differences:

* every text column is ``COLLATE "C"``: ids, times and names sort and compare byte-wise, as in
  SQLite, whatever the database's locale (so both stores list photos in one order);
* a one-row table ``changes`` counts the write transactions (:data:`CHANGES`), so a reader
  (the album page) learns exactly when the catalog changed; it is bookkeeping, not catalog
  content (not in dumps, not copied by migrations), created by :func:`connect` in older catalogs;
* embeddings (``embeddings.vector``) and face descriptors (``faces.embedding``) are pgvector
  ``vector`` columns (float4, no fixed dimension: one table holds every model), read and written
  in pgvector's binary format as float32 numpy arrays, bit for bit.

Place names are stored as :func:`ascii_fold` of the name and looked up the same way, which is
SQLite's ``COLLATE NOCASE`` (ASCII letters only).

:func:`connect` opens one connection (autocommit; the store issues BEGIN/COMMIT itself), creates
the ``vector`` extension when it is missing and allowed, creates the tables (under an advisory
lock, so processes opening a new database at once do not race) and refuses a catalog written
by a newer schema.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from finegrain.album.engine.catalog.schema import SCHEMA_VERSION
from finegrain.errors import FinegrainError

#: Prefixes of a catalog given as a Postgres URL (anything else is a SQLite file path).
URL_PREFIXES = ("postgresql://", "postgres://")
#: Advisory lock keys (two int4): ``(LOCK_SPACE, WRITER)`` serialises write transactions, ``(LOCK_SPACE, SCHEMA)``
#: the creation of the tables, ``(LOCK_SPACE, INDEXER)`` (held by a session) admits one index run at a time.
LOCK_SPACE, WRITER, SCHEMA_LOCK, INDEXER = 0x66696E65, 1, 2, 3
EXTENSION = "vector"

_T = 'TEXT COLLATE "C"'
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key {_T} PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS photos (
    id {_T} PRIMARY KEY,
    path {_T} NOT NULL,
    size BIGINT, mtime DOUBLE PRECISION, sha256 {_T},
    taken_at {_T}, tz {_T}, taken_local {_T},
    lat DOUBLE PRECISION, lon DOUBLE PRECISION, camera {_T}, width INTEGER, height INTEGER,
    caption {_T}, keywords {_T} NOT NULL DEFAULT '[]',
    event_id {_T}, place_id BIGINT
);
CREATE INDEX IF NOT EXISTS photos_place ON photos(place_id, id);
CREATE INDEX IF NOT EXISTS photos_path ON photos(path);
CREATE INDEX IF NOT EXISTS photos_taken ON photos(taken_local, id);
CREATE INDEX IF NOT EXISTS photos_event ON photos(event_id, id);
CREATE INDEX IF NOT EXISTS photos_sha ON photos(sha256);
CREATE TABLE IF NOT EXISTS places (
    id BIGSERIAL PRIMARY KEY, key {_T} NOT NULL UNIQUE,
    country_en {_T}, country_zh {_T}, province_en {_T}, province_zh {_T},
    city_en {_T}, city_zh {_T}, district_en {_T}, district_zh {_T}, country_code {_T},
    locality_en {_T}, aliases {_T} NOT NULL DEFAULT '[]'
);
CREATE TABLE IF NOT EXISTS place_names (
    name {_T} NOT NULL, level {_T} NOT NULL, place_id BIGINT NOT NULL,
    PRIMARY KEY (name, level, place_id)
);
CREATE TABLE IF NOT EXISTS time_tags (tag {_T} NOT NULL, photo_id {_T} NOT NULL, PRIMARY KEY (tag, photo_id));
CREATE INDEX IF NOT EXISTS time_tags_photo ON time_tags(photo_id);
CREATE TABLE IF NOT EXISTS people (id {_T} PRIMARY KEY, names {_T} NOT NULL DEFAULT '[]', is_me BOOLEAN NOT NULL DEFAULT false);
CREATE TABLE IF NOT EXISTS faces (
    photo_id {_T} NOT NULL, idx INTEGER NOT NULL, person_id {_T},
    box_top INTEGER, box_right INTEGER, box_bottom INTEGER, box_left INTEGER,
    embedding vector,
    PRIMARY KEY (photo_id, idx)
);
CREATE INDEX IF NOT EXISTS faces_person ON faces(person_id, photo_id);
CREATE TABLE IF NOT EXISTS events (id {_T} PRIMARY KEY, start {_T}, "end" {_T}, n_photos INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS embeddings (
    model_id {_T} NOT NULL, photo_id {_T} NOT NULL, dim INTEGER NOT NULL, vector vector NOT NULL,
    PRIMARY KEY (model_id, photo_id)
);
CREATE INDEX IF NOT EXISTS embeddings_photo ON embeddings(photo_id);
CREATE TABLE IF NOT EXISTS steps (step {_T} NOT NULL, photo_id {_T} NOT NULL, PRIMARY KEY (step, photo_id));
CREATE TABLE IF NOT EXISTS changes (id INTEGER PRIMARY KEY CHECK (id = 1), n BIGINT NOT NULL);
INSERT INTO changes (id, n) VALUES (1, 0) ON CONFLICT DO NOTHING;
"""

#: The catalog's change counter (:data:`CHANGES`): one row, bumped by every write transaction that
#: changed a row, in that transaction (see :meth:`PostgresCatalog.transaction`). Readers poll it
#: (``SELECT n FROM changes``) to learn that the catalog changed, as SQLite's ``PRAGMA data_version``.
CHANGES = "SELECT n FROM changes WHERE id = 1"
#: Run just before COMMIT: bumps the counter when the transaction wrote anything (it then has a
#: transaction id; a transaction that only read, or whose writes matched no row, has none).
BUMP_CHANGES = "UPDATE changes SET n = n + 1 WHERE id = 1 AND pg_current_xact_id_if_assigned() IS NOT NULL"

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_INSTALL = "pip install 'finegrain[postgres]'"


def ascii_fold(name: str) -> str:
    """``name`` with ASCII letters lower-cased (SQLite's NOCASE): how place names are stored and matched."""
    return name.translate(_ASCII_LOWER)


def is_postgres_url(target: object) -> bool:
    """Whether a ``--catalog`` value names a Postgres database rather than a SQLite file."""
    return isinstance(target, str) and target.strip().lower().startswith(URL_PREFIXES)


def redact(url: str) -> str:
    """The URL without its password (for messages and printed summaries)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[1]}"))


# ---------------------------------------------------------------------- pgvector in binary

class PgVector:
    """A float32 vector bound to a ``vector`` parameter (pgvector's binary format: two big-endian
    uint16, the dimension and 0, then big-endian float32)."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


def register_vector(conn: Any) -> None:
    """Dump :class:`PgVector` and load ``vector`` columns (binary results) as float32 arrays on ``conn``."""
    from psycopg.adapt import Dumper, Loader
    from psycopg.pq import Format
    from psycopg.types import TypeInfo

    info = TypeInfo.fetch(conn, EXTENSION)
    if info is None:  # connect() created the extension; this is a database changed under us
        raise FinegrainError("the pgvector type 'vector' is missing from the catalog database",
                             "run CREATE EXTENSION vector in it (as a superuser) and open the catalog again")

    class VectorDumper(Dumper):
        format = Format.BINARY
        oid = info.oid

        def dump(self, obj: PgVector) -> bytes:
            a = obj.array
            return np.array([a.shape[0], 0], ">u2").tobytes() + a.astype(">f4").tobytes()

    class VectorLoader(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> np.ndarray:
            return np.frombuffer(data, ">f4", offset=4).astype(np.float32)

    conn.adapters.register_dumper(PgVector, VectorDumper)
    conn.adapters.register_loader(info.oid, VectorLoader)


def vector_param(vector: Any, what: str) -> PgVector:
    """A finite, non-empty float32 vector for a ``vector`` column; ``what`` names it in errors."""
    vec = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
    if vec.shape[0] == 0 or vec.shape[0] > 16000:
        raise FinegrainError(f"{what} has {vec.shape[0]} dimensions", "pgvector stores 1 to 16000 dimensions")
    if not np.isfinite(vec).all():
        raise FinegrainError(f"{what} has NaN or infinite values", "pgvector stores finite numbers only; check the encoder")
    return PgVector(vec)


# ---------------------------------------------------------------------- connecting

def connect(url: str, *, create: bool) -> Any:
    """A connection to the catalog at ``url`` with its tables (created when ``create``) and vector types."""
    try:
        import psycopg
    except ImportError as e:
        raise FinegrainError(f"a Postgres catalog needs psycopg 3 ({e})", _INSTALL) from e
    shown = redact(url)
    conn = _open(psycopg, url, shown)
    try:
        _init(conn, shown, create)
        register_vector(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def connect_reader(url: str) -> Any:
    """A read-only connection (autocommit, every statement its own read-only transaction) to the
    existing catalog at ``url``: no tables created, no vector types (the album page's reads)."""
    try:
        import psycopg
    except ImportError as e:
        raise FinegrainError(f"a Postgres catalog needs psycopg 3 ({e})", _INSTALL) from e
    shown = redact(url)
    conn = _open(psycopg, url, shown, options="-c default_transaction_read_only=on")
    try:
        if not conn.execute("SELECT to_regclass('changes') IS NOT NULL").fetchone()[0]:
            raise FinegrainError(f"no catalog (or one from an older finegrain) in the database {shown!r}",
                                 f"open it once with this finegrain (e.g. `finegrain album people --catalog {shown}`), "
                                 "or build one with `finegrain album index PHOTO_DIR --catalog URL`")
    except BaseException:
        conn.close()
        raise
    return conn


def _open(psycopg: Any, url: str, shown: str, **kwargs: Any) -> Any:
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10, application_name="finegrain", **kwargs)
    except psycopg.Error as e:
        raise FinegrainError(
            f"cannot connect to the catalog database {shown!r}: {_first_line(e)}",
            "start the server or fix the URL (postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE); "
            "a database that does not exist yet is made with `createdb DATABASE`",
        ) from e


def _init(conn: Any, shown: str, create: bool) -> None:
    import psycopg

    conn.execute("BEGIN")
    try:
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_SPACE, SCHEMA_LOCK))
        has_meta = conn.execute("SELECT to_regclass('meta') IS NOT NULL").fetchone()[0]
        if not has_meta and not create:
            raise FinegrainError(
                f"no catalog in the database {shown!r}",
                "build one with `finegrain album index PHOTO_DIR --catalog URL` or "
                "`finegrain album migrate --from CATALOG.sqlite --to URL`",
            )
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() if has_meta else None
        if row is not None and json.loads(row[0]) > SCHEMA_VERSION:
            raise FinegrainError(
                f"catalog {shown!r} has schema version {json.loads(row[0])}, newer than {SCHEMA_VERSION}",
                "upgrade finegrain to read it",
            )
        _ensure_extension(conn, shown)
        conn.execute(SCHEMA)
        if row is None:
            conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', %s) ON CONFLICT DO NOTHING",
                         (json.dumps(SCHEMA_VERSION),))
    except psycopg.Error as e:
        conn.execute("ROLLBACK")
        raise FinegrainError(f"cannot open the catalog in {shown!r}: {_first_line(e)}",
                             "connect as the user who created the catalog, or have its owner GRANT this user "
                             "SELECT, INSERT, UPDATE, DELETE on its tables") from e
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except psycopg.Error as e:
        raise FinegrainError(f"cannot create the catalog tables in {shown!r}: {_first_line(e)}",
                             "connect as a user who may create tables in that database") from e


def _ensure_extension(conn: Any, shown: str) -> None:
    import psycopg

    if conn.execute("SELECT 1 FROM pg_extension WHERE extname=%s", (EXTENSION,)).fetchone():
        return
    conn.execute("SAVEPOINT ext")
    try:
        conn.execute(f"CREATE EXTENSION IF NOT EXISTS {EXTENSION}")
    except psycopg.Error as e:
        conn.execute("ROLLBACK TO SAVEPOINT ext")
        code = getattr(e, "sqlstate", None)
        if code == "42501":  # insufficient_privilege
            hint = (f"ask a superuser to run `CREATE EXTENSION {EXTENSION};` in that database "
                    "(pgvector is not a trusted extension), then open the catalog again")
        else:
            hint = ("install pgvector on the database server (https://github.com/pgvector/pgvector: a package such "
                    "as postgresql-16-pgvector, or `make install` from source), then open the catalog again")
        raise FinegrainError(f"the catalog database {shown!r} has no pgvector extension: {_first_line(e)}", hint) from e


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return re.split(r"\n", text, maxsplit=1)[0] if text else type(e).__name__
