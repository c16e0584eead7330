"""Where judgments live: one SQLite file per pool, written one click at a time.

:class:`JudgmentStore` opens (or creates) the file in WAL mode with ``synchronous=FULL``:
each :meth:`~JudgmentStore.record` is one transaction, committed before it returns, so
a killed server loses nothing that the page was told was saved. Nothing is ever updated
or deleted: every click is a row (history kept); an annotator's latest grade for an item
wins (:meth:`~JudgmentStore.latest`). A skip is a row without a grade: it never erases
a grade given before.

The file is bound to its pool: it stores the pool's fingerprint (:func:`pool_fingerprint`:
the (qid, doc_id) pairs and their texts) and its items, and refuses to open for another
pool. The grading scale is fixed when the file is made.

Tables: ``meta(key, value)``, ``items(ord, qid, doc_id)``, ``annotators(name, created_at)``,
``judgments(id, annotator, qid, doc_id, grade, at)`` (``grade`` NULL: a skip).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from finegrain.build.judge.scale import Scale
from finegrain.build.pool_file import Pool
from finegrain.errors import FinegrainError, UnknownNameError

SCHEMA = "finegrain.judgments/1"
MAX_NAME = 64
_START = "start judging with `finegrain judge POOL --db DB --serve`"

_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE items (ord INTEGER PRIMARY KEY, qid TEXT NOT NULL, doc_id TEXT NOT NULL, UNIQUE (qid, doc_id));
CREATE TABLE annotators (name TEXT PRIMARY KEY, created_at TEXT NOT NULL);
CREATE TABLE judgments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    annotator TEXT NOT NULL REFERENCES annotators (name),
    qid TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    grade INTEGER,
    at TEXT NOT NULL
);
CREATE INDEX judgments_by_annotator ON judgments (annotator, qid, doc_id, id);
"""


class UnknownItemError(FinegrainError):
    """A (qid, doc_id) pair that is not in the pool."""


class BadGradeError(FinegrainError):
    """A grade that is not on the scale."""


class BadAnnotatorError(FinegrainError):
    """An annotator name that is empty, too long, has control characters, or never logged in."""


@dataclass(frozen=True)
class Judgment:
    """One click: ``grade`` None is a skip. ``seq`` orders the clicks of the whole store."""

    seq: int
    annotator: str
    qid: str
    doc_id: str
    grade: int | None
    at: str  # ISO 8601, UTC, milliseconds

    @property
    def skipped(self) -> bool:
        return self.grade is None


@dataclass(frozen=True)
class Progress:
    """An annotator's progress over ``total`` items: ``judged`` have a grade, ``skipped`` only a skip."""

    annotator: str
    judged: int
    skipped: int
    total: int

    @property
    def left(self) -> int:
        return self.total - self.judged


def pool_fingerprint(pool: Pool) -> str:
    """SHA-256 of the pool's (qid, doc_id) pairs with their query and passage texts, in a fixed order.

    The judging order, the pooled systems and the qrels' existing grades are left out: a pool
    re-ordered or re-pooled over the same items and texts keeps its judgments.
    """
    h = hashlib.sha256(b"finegrain.pool-items/1\n")
    for it in sorted(pool.items, key=lambda it: (it.qid, it.doc_id)):
        row = [it.qid, it.doc_id, pool.queries.get(it.qid), pool.texts.get(it.doc_id)]
        h.update(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n")
    return h.hexdigest()


def check_annotator(name: object) -> str:
    """The annotator name, stripped; an error for an empty or overlong name or one with control characters."""
    if not isinstance(name, str):
        raise BadAnnotatorError(f"annotator name {name!r} is not text", "type your name")
    text = unicodedata.normalize("NFC", name.strip())
    if not text:
        raise BadAnnotatorError("annotator name is empty", "type your name: any text, no password")
    if len(text) > MAX_NAME:
        raise BadAnnotatorError(f"annotator name {text[:20]!r}... has {len(text)} characters",
                                f"use at most {MAX_NAME}")
    if any(unicodedata.category(c).startswith("C") for c in text):
        raise BadAnnotatorError(f"annotator name {text!r} has control characters", "type a plain name")
    return text


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JudgmentStore:
    """Judgments of one pool in one SQLite file; thread-safe (one connection behind a lock).

    Open with :meth:`open`; use as a context manager or call :meth:`close`.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        self._lock = threading.RLock()
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        self.fingerprint: str = meta["pool_fingerprint"]
        self.scale: Scale = Scale.from_json(meta["scale"])
        self.pool_name: str = meta.get("pool_name", "")
        rows = conn.execute("SELECT qid, doc_id FROM items ORDER BY ord").fetchall()
        self.items: tuple[tuple[str, str], ...] = tuple((q, d) for q, d in rows)
        self._item_set = frozenset(self.items)

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: str | os.PathLike[str], pool: Pool | None = None, *, scale: Scale | None = None,
             create: bool = True, pool_name: str | None = None) -> JudgmentStore:
        """Open the store at ``path``, creating it for ``pool`` when it does not exist and ``create`` is set.

        ``pool`` given: an existing store must have been made for it (same fingerprint).
        ``scale`` (default: the pool's grades) is fixed at creation; given for an existing store,
        its grades must be the stored ones.
        """
        p = Path(path)
        if p.is_dir():
            raise FinegrainError(f"--db {str(p)!r} is a folder", "give a file name, e.g. --db judgments.sqlite")
        exists = p.is_file() and p.stat().st_size > 0
        if not exists:
            if not create:
                raise FinegrainError(f"no judgments database at {str(p)!r}", _START)
            if pool is None:
                raise FinegrainError(f"no judgments database at {str(p)!r} and no pool to make one for", _START)
        conn = cls._connect(p)
        try:
            if pool is not None and not exists:
                cls._create(conn, pool, scale or Scale(pool.grades), pool_name or "")
            cls._check_schema(conn, p)
            store = cls(p, conn)
        except BaseException:
            conn.close()
            raise
        if pool is not None:
            found = pool_fingerprint(pool)
            if found != store.fingerprint:
                store.close()
                raise FinegrainError(
                    f"{str(p)!r} holds judgments of another pool (made for {store.pool_name or 'a pool'} with "
                    f"fingerprint {store.fingerprint[:12]}, this pool's is {found[:12]})",
                    "pass the pool this database was made for, or start a new --db for this pool")
        if scale is not None and not scale.same_grades(store.scale):
            store.close()
            raise FinegrainError(
                f"{str(p)!r} was started with grades {','.join(map(str, store.scale.grades))}, "
                f"not {','.join(map(str, scale.grades))}",
                "drop --grades to keep the stored scale, or start a new --db")
        return store

    @staticmethod
    def _connect(p: Path) -> sqlite3.Connection:
        try:
            if not p.parent.is_dir():
                raise FinegrainError(f"the folder of --db {str(p)!r} does not exist", "create it first")
            conn = sqlite3.connect(p, isolation_level=None, check_same_thread=False, timeout=10.0)
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise FinegrainError(f"{str(p)!r} is not a judgments database ({e})",
                                 "pass the file `finegrain judge` made, or a new file name") from None
        if str(mode).lower() != "wal":
            conn.close()
            raise FinegrainError(f"{str(p)!r} cannot be switched to WAL mode (got {mode!r})",
                                 "put the database on a local disk")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    @staticmethod
    def _create(conn: sqlite3.Connection, pool: Pool, scale: Scale, pool_name: str) -> None:
        with _transaction(conn):
            for stmt in filter(str.strip, _DDL.split(";")):
                conn.execute(stmt)
            meta = {"schema": SCHEMA, "pool_fingerprint": pool_fingerprint(pool), "scale": scale.to_json(),
                    "pool_name": pool_name, "dataset": pool.dataset or "", "created_at": _now()}
            conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", meta.items())
            conn.executemany("INSERT INTO items (ord, qid, doc_id) VALUES (?, ?, ?)",
                             ((i, it.qid, it.doc_id) for i, it in enumerate(pool.items)))

    @staticmethod
    def _check_schema(conn: sqlite3.Connection, p: Path) -> None:
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.DatabaseError as e:
            raise FinegrainError(f"{str(p)!r} is not a judgments database ({e})",
                                 "pass the file `finegrain judge` made, or a new file name") from None
        if row is None or row[0] != SCHEMA:
            raise FinegrainError(f"{str(p)!r} has schema {row[0] if row else None!r}, not {SCHEMA!r}",
                                 "pass the file `finegrain judge` made, or a new file name")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> JudgmentStore:
        return self

    def __exit__(self, t: type[BaseException] | None, v: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    # ------------------------------------------------------------------ writing

    def login(self, name: object) -> str:
        """Register ``name`` (stripped) as an annotator, once; returns the stored name."""
        annotator = check_annotator(name)
        with self._lock, _transaction(self._conn):
            self._conn.execute("INSERT OR IGNORE INTO annotators (name, created_at) VALUES (?, ?)", (annotator, _now()))
        return annotator

    def record(self, annotator: str, qid: str, doc_id: str, grade: int | None) -> Judgment:
        """Store one click (``grade`` None: a skip) in its own committed transaction; returns it."""
        name = check_annotator(annotator)
        self._check_item(qid, doc_id)
        if grade is not None and grade not in self.scale:
            raise BadGradeError(f"grade {grade!r} is not on the scale {self.scale.spelled()}",
                                f"give one of {', '.join(map(str, self.scale.grades))}")
        at = _now()
        with self._lock:
            if name not in self._annotator_set():
                raise BadAnnotatorError(f"annotator {name!r} has not logged in", "log in with your name first")
            with _transaction(self._conn):
                cur = self._conn.execute(
                    "INSERT INTO judgments (annotator, qid, doc_id, grade, at) VALUES (?, ?, ?, ?, ?)",
                    (name, qid, doc_id, grade, at))
        return Judgment(int(cur.lastrowid or 0), name, qid, doc_id, grade, at)

    def skip(self, annotator: str, qid: str, doc_id: str) -> Judgment:
        """Record that ``annotator`` skipped the item (a grade given before still stands)."""
        return self.record(annotator, qid, doc_id, None)

    # ------------------------------------------------------------------ reading

    def annotators(self) -> tuple[str, ...]:
        """Annotator names in the order they first logged in."""
        with self._lock:
            rows = self._conn.execute("SELECT name FROM annotators ORDER BY rowid").fetchall()
        return tuple(r[0] for r in rows)

    def check_known(self, annotator: str, what: str = "annotator") -> str:
        """``annotator`` if it has logged in, else an error suggesting near names."""
        known = self.annotators()
        if annotator not in known:
            raise UnknownNameError(what, annotator, known)
        return annotator

    def history(self, annotator: str | None = None, qid: str | None = None,
                doc_id: str | None = None) -> tuple[Judgment, ...]:
        """Every click (skips included), oldest first, optionally of one annotator and/or item."""
        where, args = _filters(annotator=annotator, qid=qid, doc_id=doc_id)
        with self._lock:
            rows = self._conn.execute(
                f"SELECT id, annotator, qid, doc_id, grade, at FROM judgments{where} ORDER BY id", args).fetchall()
        return tuple(Judgment(*r) for r in rows)

    def latest(self, annotator: str | None = None) -> tuple[Judgment, ...]:
        """Each annotator's latest grade per item (skips ignored), in the order they were given."""
        where, args = _filters(annotator=annotator)
        cond = f"{where} AND grade IS NOT NULL" if where else " WHERE grade IS NOT NULL"
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, annotator, qid, doc_id, grade, at FROM judgments WHERE id IN "
                f"(SELECT MAX(id) FROM judgments{cond} GROUP BY annotator, qid, doc_id) ORDER BY id", args).fetchall()
        return tuple(Judgment(*r) for r in rows)

    def grades_of(self, annotator: str) -> dict[tuple[str, str], int]:
        """``(qid, doc_id) -> grade``: the annotator's latest grade per item."""
        return {(j.qid, j.doc_id): j.grade for j in self.latest(annotator) if j.grade is not None}

    def skipped_by(self, annotator: str) -> frozenset[tuple[str, str]]:
        """Items the annotator skipped and never graded."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT DISTINCT qid, doc_id FROM judgments WHERE annotator = ? AND grade IS NULL EXCEPT "
                "SELECT DISTINCT qid, doc_id FROM judgments WHERE annotator = ? AND grade IS NOT NULL",
                (annotator, annotator)).fetchall()
        return frozenset((q, d) for q, d in rows)

    def progress(self, annotator: str, items: Iterable[tuple[str, str]] | None = None) -> Progress:
        """How many of ``items`` (default: all of the pool's) the annotator graded, and skipped without a grade."""
        pairs = set(self.items if items is None else items)
        graded = self.grades_of(annotator).keys() & pairs
        skipped = self.skipped_by(annotator) & pairs
        return Progress(annotator, len(graded), len(skipped), len(pairs))

    # ------------------------------------------------------------------ internals

    def _check_item(self, qid: object, doc_id: object) -> None:
        if (qid, doc_id) not in self._item_set:
            raise UnknownItemError(f"({qid!r}, {doc_id!r}) is not an item of this pool",
                                   "judge only the items the page shows")

    def _annotator_set(self) -> frozenset[str]:
        rows = self._conn.execute("SELECT name FROM annotators").fetchall()
        return frozenset(r[0] for r in rows)


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error) on an autocommit connection."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _filters(**values: str | None) -> tuple[str, tuple[str, ...]]:
    given = [(k, v) for k, v in values.items() if v is not None]
    if not given:
        return "", ()
    return " WHERE " + " AND ".join(f"{k} = ?" for k, _ in given), tuple(v for _, v in given)
