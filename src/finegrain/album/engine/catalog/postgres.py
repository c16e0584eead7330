"""The catalog in a Postgres database, with pgvector columns for the embeddings.

``PostgresCatalog("postgresql://USER@HOST/DB")`` is a
:class:`~finegrain.album.engine.catalog.store.CatalogStore` that answers every method exactly as
:class:`~finegrain.album.engine.catalog.sqlite.SqliteCatalog` does (the same records, id orders and
float32 arrays; ``dump()`` of a catalog copied from one to the other is equal). The layout
is in :mod:`finegrain.album.engine.catalog.postgres_schema`.

Concurrency. Several processes (indexers, searchers, the web page) may use one database at once:

* a write transaction (:meth:`PostgresCatalog.transaction`, and every write method on its own)
  is READ COMMITTED and first takes one transaction-scoped advisory lock of the catalog, so write
  transactions run one after the other, as SQLite's ``BEGIN IMMEDIATE`` does: a read-modify-write
  (a person's names, the roots, the place table) never loses another writer's update, and an
  index run's expensive work (EXIF, faces, embeddings) runs outside it;
* one index run at a time: :meth:`PostgresCatalog.index_lock` is a session-level advisory lock, so
  a second run (another machine's included) fails at once instead of adding the same photos again;
* every write transaction that changed a row also bumps the one-row change counter
  (:data:`~finegrain.album.engine.catalog.postgres_schema.CHANGES`) in the same commit, so readers
  (the album page, its search worker) learn exactly when to drop what they computed;
* reads never wait for writers (MVCC); :meth:`PostgresCatalog.snapshot` runs several reads in one
  REPEATABLE READ transaction, so they see one committed state;
* one object holds one connection; its methods may be called from several threads (a lock keeps
  one statement, transaction or snapshot at a time on the connection). Open one store per
  process (a store does not survive ``fork``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any

import numpy as np

from finegrain.album.engine.catalog.postgres_schema import (
    BUMP_CHANGES,
    INDEXER,
    LOCK_SPACE,
    WRITER,
    ascii_fold,
    connect,
    redact,
    vector_param,
)
from finegrain.album.engine.catalog.schema import (
    LEVELS,
    PHOTO_COLS,
    PLACE_COLS,
    dump_catalog,
    local_key,
    parse_dt,
    photo_of,
    photo_row,
    place_of,
)
from finegrain.album.engine.catalog.store import (
    IndexRunningError,
    PhotoFilter,
    clean_names,
    merge_names,
    natural_key,
)
from finegrain.album.engine.records import Event, FaceOccurrence, Person, Photo, PhotoPlace
from finegrain.errors import FinegrainError, UnknownNameError

_COLS = ", ".join(PHOTO_COLS)
_UPSERT_PHOTO = (
    f"INSERT INTO photos ({_COLS}) VALUES ({', '.join(['%s'] * len(PHOTO_COLS))}) "
    f"ON CONFLICT (id) DO UPDATE SET {', '.join(f'{c}=excluded.{c}' for c in PHOTO_COLS[1:])}"
)


class PostgresCatalog:
    """A :class:`~finegrain.album.engine.catalog.store.CatalogStore` in a Postgres database with pgvector.

    ``create`` makes the tables (and the ``vector`` extension) when the database has none;
    without it a database with no catalog is an error. Use it as a context manager or call :meth:`close`.
    """

    def __init__(self, url: str, *, create: bool = True) -> None:
        self.url = redact(url)
        self._db = connect(url, create=create)
        self._depth = 0
        self._reading = 0
        self._wrote = False  # the open transaction may write: bump the change counter before its COMMIT
        self._lock = threading.RLock()
        self._place_cache: dict[str, int] = {}

    # ------------------------------------------------------------------ lifecycle, statements

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> PostgresCatalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transaction(self) -> AbstractContextManager[None]:
        """Group writes into one commit (writers take turns); nested uses join the outer transaction."""
        return self._outermost("_depth")

    def snapshot(self) -> AbstractContextManager[None]:
        """Run several reads against one committed state (REPEATABLE READ); nested uses, and uses
        inside :meth:`transaction`, join the outer one."""
        return self._outermost("_reading")

    @contextmanager
    def index_lock(self) -> Iterator[None]:
        """Hold the index lock: a session-level advisory lock ``(LOCK_SPACE, INDEXER)`` of this
        store's connection, taken outside any transaction; the server drops it with the session."""
        with self._lock:
            if self._depth or self._reading:
                raise FinegrainError("the index lock is taken outside a transaction", "take it before the transaction")
            held = self._execute("SELECT pg_try_advisory_lock(%s, %s)", (LOCK_SPACE, INDEXER)).fetchone()[0]
        if not held:
            raise IndexRunningError(self.url)
        try:
            yield
        finally:
            with self._lock:
                if not self._db.closed:
                    self._execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_SPACE, INDEXER))

    @contextmanager
    def _outermost(self, counter: str) -> Iterator[None]:
        with self._lock:
            if self._depth or self._reading:
                if counter == "_depth" and not self._depth and not self._wrote:
                    # a write inside a snapshot: take the writers' turn (and count the change at COMMIT)
                    self._execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_SPACE, WRITER))
                    self._wrote = True
                setattr(self, counter, getattr(self, counter) + 1)
                try:
                    yield
                finally:
                    setattr(self, counter, getattr(self, counter) - 1)
                return
            if counter == "_depth":
                self._execute("BEGIN ISOLATION LEVEL READ COMMITTED")
                setattr(self, counter, 1)
                self._wrote = True
                try:
                    self._execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_SPACE, WRITER))
                except BaseException:
                    setattr(self, counter, 0)
                    self._rollback()
                    raise
            else:
                self._execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                setattr(self, counter, 1)
            try:
                yield
            except BaseException:
                setattr(self, counter, 0)
                self._wrote = False
                self._place_cache.clear()  # place rows created in this transaction are gone
                self._rollback()
                raise
            setattr(self, counter, 0)
            if self._wrote:  # the change counter, in the same commit as the change (readers see both or neither)
                self._wrote = False
                try:
                    self._execute(BUMP_CHANGES)
                except BaseException:
                    self._rollback()
                    raise
            self._execute("COMMIT")

    def _rollback(self) -> None:
        if not self._db.closed:
            self._db.execute("ROLLBACK")

    def _execute(self, sql: str, args: Sequence[Any] | None = None, *, binary: bool = False) -> Any:
        import psycopg

        try:
            return self._db.execute(sql, args, binary=binary)
        except psycopg.OperationalError as e:
            raise FinegrainError(f"lost the connection to the catalog database {self.url!r}: {e}",
                                 "check the server and run again (what was committed stays)") from e
        except psycopg.DataError as e:
            nul = _nul_error(args)
            if nul is None:
                raise
            raise nul from e

    def _all(self, sql: str, args: Sequence[Any] | None = None, *, binary: bool = False) -> list[tuple[Any, ...]]:
        with self._lock:
            return list(self._execute(sql, args, binary=binary).fetchall())

    def _one(self, sql: str, args: Sequence[Any] | None = None) -> tuple[Any, ...] | None:
        with self._lock:
            row = self._execute(sql, args).fetchone()
        return None if row is None else tuple(row)

    def _many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        import psycopg

        values = list(rows)
        with self._lock:
            try:
                self._db.cursor().executemany(sql, values)
            except psycopg.DataError as e:
                nul = _nul_error([v for row in values for v in row])
                if nul is None:
                    raise
                raise nul from e

    # ------------------------------------------------------------------ photos

    def put_photo(self, photo: Photo) -> None:
        with self.transaction():
            self._execute(_UPSERT_PHOTO, photo_row(photo))

    def put_photos(self, photos: Iterable[Photo]) -> None:
        """Insert or replace many photos in one transaction (bulk imports)."""
        with self.transaction():
            self._many(_UPSERT_PHOTO, (photo_row(p) for p in photos))

    def get_photo(self, photo_id: str) -> Photo | None:
        row = self._one(f"SELECT {_COLS} FROM photos WHERE id=%s", (photo_id,))
        return None if row is None else photo_of(row)

    def find_by_path(self, path: str) -> Photo | None:
        row = self._one(f"SELECT {_COLS} FROM photos WHERE path=%s ORDER BY id LIMIT 1", (path,))
        return None if row is None else photo_of(row)

    def iter_photos(self) -> Iterator[Photo]:
        return (photo_of(r) for r in self._all(f"SELECT {_COLS} FROM photos ORDER BY id"))

    def photo_ids(self) -> list[str]:
        return [r[0] for r in self._all("SELECT id FROM photos ORDER BY id")]

    def count_photos(self) -> int:
        row = self._one("SELECT COUNT(*) FROM photos")
        return int(row[0]) if row else 0

    def delete_photo(self, photo_id: str) -> None:
        with self.transaction():
            for table, col in (("photos", "id"), ("time_tags", "photo_id"), ("steps", "photo_id"),
                               ("faces", "photo_id"), ("embeddings", "photo_id")):
                self._execute(f"DELETE FROM {table} WHERE {col}=%s", (photo_id,))

    # ------------------------------------------------------------------ places, tags

    def set_place(self, photo_id: str, place: PhotoPlace | None) -> None:
        """Set the place of a stored photo (None clears it)."""
        with self.transaction():
            place_id = None if place is None else self._place_id(place)
            cur = self._execute("UPDATE photos SET place_id=%s WHERE id=%s", (place_id, photo_id))
            if cur.rowcount == 0:
                raise FinegrainError(f"no photo {photo_id!r} in the catalog", "store the photo (put_photo) before its place")

    def _place_id(self, place: PhotoPlace) -> int:
        aliases = json.dumps([list(a) for a in place.aliases], ensure_ascii=False)
        values = (*(getattr(place, c) for c in PLACE_COLS[:-1]), aliases)
        key = json.dumps(values, ensure_ascii=False)
        cached = self._place_cache.get(key)
        if cached is not None:
            return cached
        row = self._one(
            f"INSERT INTO places (key, {', '.join(PLACE_COLS)}) VALUES (%s{', %s' * len(PLACE_COLS)}) "
            "ON CONFLICT (key) DO NOTHING RETURNING id", (key, *values))
        if row is None:
            found = self._one("SELECT id FROM places WHERE key=%s", (key,))
            assert found is not None  # inserted by a committed transaction: the conflict says so
            place_id = int(found[0])
        else:
            place_id = int(row[0])
            self._many(
                "INSERT INTO place_names (name, level, place_id) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                [(ascii_fold(name), level, place_id) for level, name in place.names()],
            )
        self._place_cache[key] = place_id
        return place_id

    def get_place(self, photo_id: str) -> PhotoPlace | None:
        row = self._one(
            f"SELECT {', '.join('pl.' + c for c in PLACE_COLS)} FROM photos p JOIN places pl ON pl.id = p.place_id "
            "WHERE p.id=%s", (photo_id,))
        return None if row is None else place_of(row)

    def places(self) -> dict[str, PhotoPlace]:
        with self.snapshot():
            by_id = {r[0]: place_of(r[1:]) for r in self._all(f"SELECT id, {', '.join(PLACE_COLS)} FROM places")}
            rows = self._all("SELECT id, place_id FROM photos WHERE place_id IS NOT NULL ORDER BY id")
        return {pid: by_id[plid] for pid, plid in rows}

    def place_names(self) -> list[tuple[str, str, int]]:
        rows = self._all(
            "SELECT n.level, n.name, COUNT(p.id) FROM place_names n JOIN photos p ON p.place_id = n.place_id "
            "GROUP BY n.level, n.name ORDER BY n.level, n.name")
        return [(r[0], r[1], int(r[2])) for r in rows]

    def set_time_tags(self, photo_id: str, tags: Iterable[str]) -> None:
        with self.transaction():
            self._execute("DELETE FROM time_tags WHERE photo_id=%s", (photo_id,))
            self._many("INSERT INTO time_tags (tag, photo_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                       [(t, photo_id) for t in dict.fromkeys(tags)])

    def get_time_tags(self, photo_id: str) -> tuple[str, ...]:
        return tuple(r[0] for r in self._all("SELECT tag FROM time_tags WHERE photo_id=%s ORDER BY tag", (photo_id,)))

    # ------------------------------------------------------------------ faces, people

    def set_faces(
        self, photo_id: str, faces: Sequence[FaceOccurrence], embeddings: Sequence[np.ndarray | None] | None = None
    ) -> None:
        if embeddings is not None and len(embeddings) != len(faces):
            raise FinegrainError(
                f"{len(faces)} faces but {len(embeddings)} embeddings for photo {photo_id!r}",
                "pass one embedding (or None) per face",
            )
        rows = []
        for i, f in enumerate(faces):
            if f.photo_id != photo_id:
                raise FinegrainError(f"face of photo {f.photo_id!r} passed for photo {photo_id!r}", "group faces by photo")
            emb = None if embeddings is None or embeddings[i] is None else vector_param(
                embeddings[i], f"the embedding of face {f.index} of photo {photo_id!r}")
            box = f.box or (None, None, None, None)
            rows.append((photo_id, f.index, f.person_id, *box, emb))
        with self.transaction():
            self._execute("DELETE FROM faces WHERE photo_id=%s", (photo_id,))
            self._many("INSERT INTO faces (photo_id, idx, person_id, box_top, box_right, box_bottom, box_left, embedding) "
                       "VALUES (%s, %s, %s, %s, %s, %s, %s, %b)", rows)

    def faces(self, photo_id: str | None = None) -> list[FaceOccurrence]:
        sql = "SELECT photo_id, person_id, box_top, box_right, box_bottom, box_left, idx FROM faces"
        rows = (self._all(sql + " WHERE photo_id=%s ORDER BY idx", (photo_id,)) if photo_id is not None
                else self._all(sql + " ORDER BY photo_id, idx"))
        return [FaceOccurrence(r[0], r[1], None if r[2] is None else (r[2], r[3], r[4], r[5]), r[6]) for r in rows]

    def face_embeddings(self) -> tuple[list[tuple[str, int]], np.ndarray]:
        rows = self._all("SELECT photo_id, idx, embedding FROM faces WHERE embedding IS NOT NULL ORDER BY photo_id, idx",
                         binary=True)
        keys = [(r[0], int(r[1])) for r in rows]
        return keys, (np.vstack([r[2] for r in rows]) if rows else np.zeros((0, 128), np.float32))

    def assign_faces(self, labels: Mapping[tuple[str, int], str | None]) -> None:
        with self.transaction():
            self._many("UPDATE faces SET person_id=%s WHERE photo_id=%s AND idx=%s",
                       [(person, pid, idx) for (pid, idx), person in labels.items()])

    def put_person(self, person: Person) -> None:
        with self.transaction():
            if person.is_me:
                self._execute("UPDATE people SET is_me=false WHERE id<>%s AND is_me", (person.id,))
            self._execute(
                "INSERT INTO people (id, names, is_me) VALUES (%s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET names=excluded.names, is_me=excluded.is_me",
                (person.id, json.dumps(list(person.names), ensure_ascii=False), bool(person.is_me)))

    def get_person(self, person_id: str) -> Person | None:
        row = self._one("SELECT id, names, is_me FROM people WHERE id=%s", (person_id,))
        return None if row is None else Person(row[0], tuple(json.loads(row[1])), bool(row[2]))

    def people(self) -> list[Person]:
        people = [Person(r[0], tuple(json.loads(r[1])), bool(r[2])) for r in self._all("SELECT id, names, is_me FROM people")]
        return sorted(people, key=lambda p: natural_key(p.id))

    def person_photo_counts(self) -> dict[str, int]:
        rows = self._all("SELECT person_id, COUNT(DISTINCT photo_id) FROM faces WHERE person_id IS NOT NULL "
                         "GROUP BY person_id")
        return {r[0]: int(r[1]) for r in rows}

    def name_person(self, person_id: str, names: Sequence[str]) -> Person:
        with self.transaction():
            person = self._require_person(person_id)
            clean = clean_names(names)
            if not clean:
                raise FinegrainError(f"no name given for person {person_id!r}", "pass at least one non-empty name")
            named = Person(person.id, clean, person.is_me)
            self.put_person(named)
        return named

    def add_person_names(self, person_id: str, names: Sequence[str]) -> Person:
        with self.transaction():
            person = self._require_person(person_id)
            added = clean_names(names)
            if not added:
                raise FinegrainError(f"no name given for person {person_id!r}", "pass at least one non-empty name")
            named = Person(person.id, merge_names(person.names, added), person.is_me)
            self.put_person(named)
        return named

    def merge_people(self, into_id: str, from_ids: Sequence[str]) -> Person:
        sources = [f for f in dict.fromkeys(f.strip() for f in from_ids) if f and f != into_id]
        if not sources:
            raise FinegrainError(
                f"nothing to merge into person {into_id!r}: from_ids {list(from_ids)!r} names no other person",
                "pass the ids of other face clusters, e.g. --merge p3,p7 (p7 goes into p3)",
            )
        with self.transaction():
            target = self._require_person(into_id)
            others = [self._require_person(f) for f in sources]
            names = target.names
            for o in others:
                names = merge_names(names, o.names)
            merged = Person(target.id, names, target.is_me or any(o.is_me for o in others))
            for o in others:
                self._execute("UPDATE faces SET person_id=%s WHERE person_id=%s", (target.id, o.id))
                self._execute("DELETE FROM people WHERE id=%s", (o.id,))
            self.put_person(merged)
        return merged

    def set_me(self, person_id: str) -> Person:
        with self.transaction():
            person = self._require_person(person_id)
            me = Person(person.id, person.names, True)
            self.put_person(me)
        return me

    def _require_person(self, person_id: str) -> Person:
        with self.snapshot():
            person = self.get_person(person_id)
            known = [p.id for p in self.people()] if person is None else []
        if person is None:
            raise UnknownNameError("person (face cluster)", person_id, known)
        return person

    # ------------------------------------------------------------------ events

    def set_events(self, assignment: Mapping[str, str | None]) -> None:
        with self.transaction():
            self._execute("UPDATE photos SET event_id=NULL WHERE event_id IS NOT NULL")
            self._execute("DELETE FROM events")
            self._many("UPDATE photos SET event_id=%s WHERE id=%s",
                       [(eid, pid) for pid, eid in assignment.items() if eid is not None])
            self._execute(
                'INSERT INTO events (id, start, "end", n_photos) '
                "SELECT event_id, MIN(taken_local), MAX(taken_local), COUNT(*) FROM photos "
                "WHERE event_id IS NOT NULL GROUP BY event_id")

    def events(self) -> list[Event]:
        rows = self._all('SELECT id, start, "end", n_photos FROM events')
        out = [Event(r[0], parse_dt(r[1]), parse_dt(r[2]), int(r[3])) for r in rows]
        return sorted(out, key=lambda e: (e.start or datetime.min, natural_key(e.id)))

    # ------------------------------------------------------------------ embeddings

    def put_embedding(self, photo_id: str, model_id: str, vector: np.ndarray) -> None:
        vec = vector_param(vector, f"the {model_id!r} embedding of photo {photo_id!r}")
        with self.transaction():
            self._execute(
                "INSERT INTO embeddings (model_id, photo_id, dim, vector) VALUES (%s, %s, %s, %b) "
                "ON CONFLICT (model_id, photo_id) DO UPDATE SET dim=excluded.dim, vector=excluded.vector",
                (model_id, photo_id, int(vec.array.shape[0]), vec))

    def get_embeddings(self, model_id: str) -> tuple[list[str], np.ndarray]:
        rows = self._all("SELECT photo_id, dim, vector FROM embeddings WHERE model_id=%s ORDER BY photo_id",
                         (model_id,), binary=True)
        ids = [r[0] for r in rows]
        dim = int(rows[-1][1]) if rows else 0
        return ids, (np.vstack([r[2] for r in rows]) if rows else np.zeros((0, dim), np.float32))

    def delete_embedding(self, photo_id: str, model_id: str) -> None:
        with self.transaction():
            self._execute("DELETE FROM embeddings WHERE model_id=%s AND photo_id=%s", (model_id, photo_id))

    def embedding_models(self) -> list[str]:
        return [r[0] for r in self._all("SELECT DISTINCT model_id FROM embeddings ORDER BY model_id")]

    # ------------------------------------------------------------------ processing steps

    def mark_done(self, photo_id: str, step: str) -> None:
        with self.transaction():
            self._execute("INSERT INTO steps (step, photo_id) VALUES (%s, %s) ON CONFLICT DO NOTHING", (step, photo_id))

    def is_done(self, photo_id: str, step: str) -> bool:
        return self._one("SELECT 1 FROM steps WHERE step=%s AND photo_id=%s", (step, photo_id)) is not None

    def clear_done(self, photo_id: str) -> None:
        with self.transaction():
            self._execute("DELETE FROM steps WHERE photo_id=%s", (photo_id,))

    # ------------------------------------------------------------------ metadata

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self._one("SELECT value FROM meta WHERE key=%s", (key,))
        return default if row is None else json.loads(row[0])

    def set_meta(self, key: str, value: Any) -> None:
        with self.transaction():
            self._execute("INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value=excluded.value",
                          (key, json.dumps(value, ensure_ascii=False)))

    def roots(self) -> list[str]:
        return list(self.get_meta("roots", []))

    def add_root(self, root: str) -> None:
        with self.transaction():  # the writers' lock makes this read-modify-write safe
            roots = self.roots()
            if root not in roots:
                self.set_meta("roots", sorted([*roots, root]))

    def latest_time(self) -> datetime | None:
        row = self._one("SELECT MAX(taken_local) FROM photos")
        return parse_dt(row[0]) if row else None

    # ------------------------------------------------------------------ filters

    def ids_taken_between(self, start: datetime | None, end: datetime | None) -> set[str]:
        sql, args = "SELECT id FROM photos WHERE taken_local IS NOT NULL", []
        if start is not None:
            sql += " AND taken_local >= %s"
            args.append(local_key(start))
        if end is not None:
            sql += " AND taken_local < %s"
            args.append(local_key(end))
        return {r[0] for r in self._all(sql, args)}

    def ids_at_place(self, name: str, level: str | None = None) -> set[str]:
        sql = "SELECT id FROM photos WHERE place_id IN (SELECT place_id FROM place_names WHERE name=%s"
        if level is None:
            return {r[0] for r in self._all(sql + ")", (ascii_fold(name.strip()),))}
        if level not in LEVELS:
            raise FinegrainError(f"unknown place level {level!r}", f"use one of {', '.join(LEVELS)}")
        return {r[0] for r in self._all(sql + " AND level=%s)", (ascii_fold(name.strip()), level))}

    def ids_with_tag(self, tag: str) -> set[str]:
        return {r[0] for r in self._all("SELECT photo_id FROM time_tags WHERE tag=%s", (tag,))}

    def ids_with_person(self, person_id: str) -> set[str]:
        return {r[0] for r in self._all("SELECT photo_id FROM faces WHERE person_id=%s", (person_id,))}

    def ids_in_event(self, event_id: str) -> set[str]:
        return {r[0] for r in self._all("SELECT id FROM photos WHERE event_id=%s", (event_id,))}

    def select_ids(self, where: PhotoFilter) -> set[str] | None:
        """Photos meeting every constraint of ``where``, intersected by Postgres in one query (its
        planner picks the index that drives); None when it has none (all photos)."""
        conds: list[str] = []
        args: list[Any] = []
        if where.start is not None or where.end is not None:
            conds.append("taken_local >= %s AND taken_local < %s")
            args += [local_key(where.start) if where.start is not None else "",
                     local_key(where.end) if where.end is not None else "\uffff"]
        if where.places:
            names: list[str] = []
            for item in where.places:
                if isinstance(item, tuple):
                    level, name = item
                    if level not in LEVELS:
                        raise FinegrainError(f"unknown place level {level!r}", f"use one of {', '.join(LEVELS)}")
                    names.append("(name=%s AND level=%s)")
                    args += [ascii_fold(name.strip()), level]
                else:
                    names.append("name=%s")
                    args.append(ascii_fold(item.strip()))
            conds.append(f"place_id IN (SELECT place_id FROM place_names WHERE {' OR '.join(names)})")
        for person in where.people:
            conds.append("EXISTS (SELECT 1 FROM faces f WHERE f.person_id=%s AND f.photo_id=photos.id)")
            args.append(person)
        for tag in where.tags:
            conds.append("EXISTS (SELECT 1 FROM time_tags t WHERE t.tag=%s AND t.photo_id=photos.id)")
            args.append(tag)
        if where.event_id is not None:
            conds.append("event_id=%s")
            args.append(where.event_id)
        if not conds:
            return None
        return {r[0] for r in self._all(f"SELECT id FROM photos WHERE {' AND '.join(conds)}", args)}

    # ------------------------------------------------------------------ dump

    def dump(self) -> dict[str, Any]:
        """Everything stored, in the canonical form of :meth:`SqliteCatalog.dump` (equal for equal catalogs)."""
        with self.snapshot():
            return dump_catalog(self, lambda sql: self._all(sql, binary=True))

    def size_on_disk(self) -> int:
        """Bytes of the catalog database (tables, indexes and their TOAST)."""
        row = self._one("SELECT pg_database_size(current_database())")
        return int(row[0]) if row else 0


def _nul_error(args: Iterable[Any] | None) -> FinegrainError | None:
    """The error for a text with a NUL character among ``args`` (Postgres text cannot hold one),
    naming it; None when there is none (another data error)."""
    bad = next((a for a in args or () if isinstance(a, str) and "\x00" in a), None)
    if bad is None:
        return None
    return FinegrainError(f"{bad!r} has a NUL character, which a Postgres catalog cannot store",
                          "remove the \\x00 from the name or id")
