"""The embedded catalog: one SQLite file in WAL mode.

The layout (schema version :data:`SCHEMA_VERSION`, stored in ``meta``) is in
:mod:`finegrain.album.engine.catalog.schema`.

Every write method runs in its own short transaction unless it is inside
:meth:`SqliteCatalog.transaction`, which groups writes (all of one photo)
into one commit. WAL keeps readers unblocked while an index run writes.

Every read method that needs more than one SELECT (``places``, ``select_ids``, ``dump``,
``people``' error path) runs them in one read transaction (:meth:`SqliteCatalog.snapshot`),
so a write committed by another connection in between (an index run while the web page
searches) is either wholly seen or not at all. Callers can group several reads the same way.

One index run at a time: :meth:`SqliteCatalog.index_lock` is an OS file lock beside the catalog,
so a second run fails at once instead of adding the same photos again.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from finegrain.album.engine.catalog.schema import (
    LEVELS,
    PHOTO_COLS,
    PLACE_COLS,
    SCHEMA,
    SCHEMA_VERSION,
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


class SqliteCatalog:
    """A :class:`~finegrain.album.engine.catalog.store.CatalogStore` in one SQLite file (WAL mode).

    ``SqliteCatalog(path)`` creates the file and its schema when missing and
    refuses a file written by a newer schema. Use it as a context manager or
    call :meth:`close`.
    """

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise FinegrainError(
                f"no catalog at {str(self.path)!r}",
                "build one with `finegrain album index PHOTO_DIR` or `finegrain album import-photobench`",
            )
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.DatabaseError as e:
            raise FinegrainError(
                f"{str(self.path)!r} is not a usable SQLite catalog ({e})",
                "point --catalog to a catalog file or to a new path",
            ) from e
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._depth = 0
        self._reading = 0
        self._lock = threading.RLock()  # one transaction (read or write) per connection at a time
        self._place_cache: dict[str, int] = {}
        self._init_schema()

    # ------------------------------------------------------------------ lifecycle

    def _init_schema(self) -> None:
        try:
            row = self._db.execute(
                "SELECT value FROM meta WHERE key='schema_version'"
            ).fetchone() if self._has_table("meta") else None
        except sqlite3.DatabaseError as e:
            raise FinegrainError(f"{str(self.path)!r} is not a finegrain catalog ({e})", "use a new --catalog path") from e
        if row is not None and json.loads(row[0]) > SCHEMA_VERSION:
            raise FinegrainError(
                f"catalog {str(self.path)!r} has schema version {json.loads(row[0])}, newer than {SCHEMA_VERSION}",
                "upgrade finegrain to read it",
            )
        self._db.executescript(SCHEMA)  # idempotent (IF NOT EXISTS)
        if row is None:
            self.set_meta("schema_version", SCHEMA_VERSION)

    def _has_table(self, name: str) -> bool:
        return self._db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone() is not None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SqliteCatalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transaction(self) -> AbstractContextManager[None]:
        """Group writes into one commit; nested uses join the outer transaction (or snapshot)."""
        return self._outermost("_depth", "BEGIN IMMEDIATE")

    def snapshot(self) -> AbstractContextManager[None]:
        """Run several reads against one consistent state of the catalog (one read transaction:
        writes other connections commit meanwhile stay invisible until it ends). Nested uses,
        and uses inside :meth:`transaction`, join the outer one."""
        return self._outermost("_reading", "BEGIN")

    @contextmanager
    def _outermost(self, counter: str, begin: str) -> Iterator[None]:
        """Join the open transaction or snapshot (counting the nesting in ``counter``: ``_depth`` for
        writes, ``_reading`` for snapshots), else ``begin`` one, COMMIT it at the end and ROLLBACK on error."""
        with self._lock:
            if self._depth or self._reading:
                setattr(self, counter, getattr(self, counter) + 1)
                try:
                    yield
                finally:
                    setattr(self, counter, getattr(self, counter) - 1)
                return
            self._db.execute(begin)
            setattr(self, counter, 1)
            try:
                yield
            except BaseException:
                setattr(self, counter, 0)
                self._place_cache.clear()  # place rows created in this transaction are gone
                self._db.execute("ROLLBACK")
                raise
            setattr(self, counter, 0)
            self._db.execute("COMMIT")

    @contextmanager
    def index_lock(self) -> Iterator[None]:
        """Hold the index lock: an OS lock (``flock``) on the file ``CATALOG.lock`` beside the
        catalog, made when missing and never written or removed (the lock is the open file's, so
        the file must stay the same one). The OS drops it when the process ends, however it ends."""
        lock_file = self.path.with_name(self.path.name + ".lock")
        try:
            fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise FinegrainError(f"cannot open the index lock {str(lock_file)!r}: {e.strerror or e}",
                                 "check that the catalog's folder is writable") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise IndexRunningError(str(self.path)) from None
            yield
        finally:
            os.close(fd)  # releases the lock

    # ------------------------------------------------------------------ photos

    def put_photo(self, photo: Photo) -> None:
        row = photo_row(photo)
        sets = ", ".join(f"{c}=excluded.{c}" for c in PHOTO_COLS[1:])
        with self.transaction():
            self._db.execute(
                f"INSERT INTO photos ({', '.join(PHOTO_COLS)}) VALUES ({', '.join('?' * len(PHOTO_COLS))}) "
                f"ON CONFLICT(id) DO UPDATE SET {sets}",
                row,
            )

    def put_photos(self, photos: Iterable[Photo]) -> None:
        """Insert or replace many photos in one transaction (bulk imports)."""
        sets = ", ".join(f"{c}=excluded.{c}" for c in PHOTO_COLS[1:])
        with self.transaction():
            self._db.executemany(
                f"INSERT INTO photos ({', '.join(PHOTO_COLS)}) VALUES ({', '.join('?' * len(PHOTO_COLS))}) "
                f"ON CONFLICT(id) DO UPDATE SET {sets}",
                (photo_row(p) for p in photos),
            )

    def get_photo(self, photo_id: str) -> Photo | None:
        row = self._db.execute(f"SELECT {', '.join(PHOTO_COLS)} FROM photos WHERE id=?", (photo_id,)).fetchone()
        return None if row is None else photo_of(row)

    def find_by_path(self, path: str) -> Photo | None:
        row = self._db.execute(
            f"SELECT {', '.join(PHOTO_COLS)} FROM photos WHERE path=? ORDER BY id LIMIT 1", (path,)
        ).fetchone()
        return None if row is None else photo_of(row)

    def iter_photos(self) -> Iterator[Photo]:
        rows = self._db.execute(f"SELECT {', '.join(PHOTO_COLS)} FROM photos ORDER BY id").fetchall()
        return (photo_of(r) for r in rows)

    def photo_ids(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT id FROM photos ORDER BY id")]

    def count_photos(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM photos").fetchone()[0])

    def delete_photo(self, photo_id: str) -> None:
        with self.transaction():
            for table, col in (("photos", "id"), ("time_tags", "photo_id"), ("steps", "photo_id"), ("faces", "photo_id"), ("embeddings", "photo_id")):
                self._db.execute(f"DELETE FROM {table} WHERE {col}=?", (photo_id,))

    # ------------------------------------------------------------------ places, tags

    def set_place(self, photo_id: str, place: PhotoPlace | None) -> None:
        """Set the place of a stored photo (None clears it)."""
        with self.transaction():
            place_id = None if place is None else self._place_id(place)
            cur = self._db.execute("UPDATE photos SET place_id=? WHERE id=?", (place_id, photo_id))
            if cur.rowcount == 0:
                raise FinegrainError(f"no photo {photo_id!r} in the catalog", "store the photo (put_photo) before its place")

    def _place_id(self, place: PhotoPlace) -> int:
        aliases = json.dumps([list(a) for a in place.aliases], ensure_ascii=False)
        values = (*(getattr(place, c) for c in PLACE_COLS[:-1]), aliases)
        key = json.dumps(values, ensure_ascii=False)
        cached = self._place_cache.get(key)
        if cached is not None:
            return cached
        row = self._db.execute("SELECT id FROM places WHERE key=?", (key,)).fetchone()
        if row is None:
            cur = self._db.execute(
                f"INSERT INTO places (key, {', '.join(PLACE_COLS)}) VALUES (?{', ?' * len(PLACE_COLS)})",
                (key, *values),
            )
            rowid = cur.lastrowid
            place_id = int(rowid if rowid is not None else self._db.execute(
                "SELECT id FROM places WHERE key=?", (key,)).fetchone()[0])
            self._db.executemany(
                "INSERT OR IGNORE INTO place_names (name, level, place_id) VALUES (?, ?, ?)",
                [(name, level, place_id) for level, name in place.names()],
            )
        else:
            place_id = int(row[0])
        self._place_cache[key] = place_id
        return place_id

    def get_place(self, photo_id: str) -> PhotoPlace | None:
        row = self._db.execute(
            f"SELECT {', '.join('pl.' + c for c in PLACE_COLS)} FROM photos p JOIN places pl ON pl.id = p.place_id "
            "WHERE p.id=?", (photo_id,),
        ).fetchone()
        return None if row is None else place_of(row)

    def places(self) -> dict[str, PhotoPlace]:
        with self.snapshot():  # a photo committed between the two reads may name a place not yet read
            by_id = {
                r[0]: place_of(r[1:]) for r in self._db.execute(f"SELECT id, {', '.join(PLACE_COLS)} FROM places")
            }
            rows = self._db.execute(
                "SELECT id, place_id FROM photos WHERE place_id IS NOT NULL ORDER BY id").fetchall()
        return {pid: by_id[plid] for pid, plid in rows}

    def place_names(self) -> list[tuple[str, str, int]]:
        rows = self._db.execute(
            "SELECT n.level, n.name, COUNT(p.id) FROM place_names n JOIN photos p ON p.place_id = n.place_id "
            "GROUP BY n.level, n.name ORDER BY n.level, n.name"
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def set_time_tags(self, photo_id: str, tags: Iterable[str]) -> None:
        with self.transaction():
            self._db.execute("DELETE FROM time_tags WHERE photo_id=?", (photo_id,))
            self._db.executemany(
                "INSERT OR IGNORE INTO time_tags (tag, photo_id) VALUES (?, ?)", [(t, photo_id) for t in tags]
            )

    def get_time_tags(self, photo_id: str) -> tuple[str, ...]:
        return tuple(r[0] for r in self._db.execute("SELECT tag FROM time_tags WHERE photo_id=? ORDER BY tag", (photo_id,)))

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
            emb = None if embeddings is None or embeddings[i] is None else np.asarray(embeddings[i], np.float32).tobytes()
            box = f.box or (None, None, None, None)
            rows.append((photo_id, f.index, f.person_id, *box, emb))
        with self.transaction():
            self._db.execute("DELETE FROM faces WHERE photo_id=?", (photo_id,))
            self._db.executemany("INSERT INTO faces VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def faces(self, photo_id: str | None = None) -> list[FaceOccurrence]:
        sql = "SELECT photo_id, person_id, box_top, box_right, box_bottom, box_left, idx FROM faces"
        rows = (self._db.execute(sql + " WHERE photo_id=? ORDER BY idx", (photo_id,)) if photo_id is not None
                else self._db.execute(sql + " ORDER BY photo_id, idx"))
        return [
            FaceOccurrence(r[0], r[1], None if r[2] is None else (r[2], r[3], r[4], r[5]), r[6]) for r in rows
        ]

    def face_embeddings(self) -> tuple[list[tuple[str, int]], np.ndarray]:
        keys, vecs = [], []
        for pid, idx, blob in self._db.execute(
            "SELECT photo_id, idx, embedding FROM faces WHERE embedding IS NOT NULL ORDER BY photo_id, idx"
        ):
            keys.append((pid, idx))
            vecs.append(np.frombuffer(blob, dtype=np.float32))
        return keys, (np.vstack(vecs) if vecs else np.zeros((0, 128), np.float32))

    def assign_faces(self, labels: Mapping[tuple[str, int], str | None]) -> None:
        with self.transaction():
            self._db.executemany(
                "UPDATE faces SET person_id=? WHERE photo_id=? AND idx=?",
                [(person, pid, idx) for (pid, idx), person in labels.items()],
            )

    def put_person(self, person: Person) -> None:
        with self.transaction():
            if person.is_me:
                self._db.execute("UPDATE people SET is_me=0 WHERE id<>?", (person.id,))
            self._db.execute(
                "INSERT INTO people (id, names, is_me) VALUES (?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET names=excluded.names, is_me=excluded.is_me",
                (person.id, json.dumps(list(person.names), ensure_ascii=False), int(person.is_me)),
            )

    def get_person(self, person_id: str) -> Person | None:
        row = self._db.execute("SELECT id, names, is_me FROM people WHERE id=?", (person_id,)).fetchone()
        return None if row is None else Person(row[0], tuple(json.loads(row[1])), bool(row[2]))

    def people(self) -> list[Person]:
        rows = self._db.execute("SELECT id, names, is_me FROM people").fetchall()
        people = [Person(r[0], tuple(json.loads(r[1])), bool(r[2])) for r in rows]
        return sorted(people, key=lambda p: natural_key(p.id))

    def person_photo_counts(self) -> dict[str, int]:
        rows = self._db.execute(
            "SELECT person_id, COUNT(DISTINCT photo_id) FROM faces WHERE person_id IS NOT NULL GROUP BY person_id"
        )
        return {r[0]: r[1] for r in rows}

    def name_person(self, person_id: str, names: Sequence[str]) -> Person:
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
                self._db.execute("UPDATE faces SET person_id=? WHERE person_id=?", (target.id, o.id))
                self._db.execute("DELETE FROM people WHERE id=?", (o.id,))
            self.put_person(merged)
        return merged

    def set_me(self, person_id: str) -> Person:
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
            self._db.execute("UPDATE photos SET event_id=NULL WHERE event_id IS NOT NULL")
            self._db.execute("DELETE FROM events")
            self._db.executemany(
                "UPDATE photos SET event_id=? WHERE id=?",
                [(eid, pid) for pid, eid in assignment.items() if eid is not None],
            )
            self._db.execute(
                "INSERT INTO events (id, start, end, n_photos) "
                "SELECT event_id, MIN(taken_local), MAX(taken_local), COUNT(*) FROM photos "
                "WHERE event_id IS NOT NULL GROUP BY event_id"
            )

    def events(self) -> list[Event]:
        rows = self._db.execute("SELECT id, start, end, n_photos FROM events").fetchall()
        out = [Event(r[0], parse_dt(r[1]), parse_dt(r[2]), r[3]) for r in rows]
        return sorted(out, key=lambda e: (e.start or datetime.min, natural_key(e.id)))

    # ------------------------------------------------------------------ embeddings

    def put_embedding(self, photo_id: str, model_id: str, vector: np.ndarray) -> None:
        vec = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
        with self.transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO embeddings (model_id, photo_id, dim, vector) VALUES (?, ?, ?, ?)",
                (model_id, photo_id, int(vec.shape[0]), vec.tobytes()),
            )

    def get_embeddings(self, model_id: str) -> tuple[list[str], np.ndarray]:
        ids, vecs, dim = [], [], 0
        for pid, d, blob in self._db.execute(
            "SELECT photo_id, dim, vector FROM embeddings WHERE model_id=? ORDER BY photo_id", (model_id,)
        ):
            ids.append(pid)
            dim = d
            vecs.append(np.frombuffer(blob, dtype=np.float32))
        return ids, (np.vstack(vecs) if vecs else np.zeros((0, dim), np.float32))

    def delete_embedding(self, photo_id: str, model_id: str) -> None:
        with self.transaction():
            self._db.execute("DELETE FROM embeddings WHERE model_id=? AND photo_id=?", (model_id, photo_id))

    def embedding_models(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT DISTINCT model_id FROM embeddings ORDER BY model_id")]

    # ------------------------------------------------------------------ processing steps

    def mark_done(self, photo_id: str, step: str) -> None:
        with self.transaction():
            self._db.execute("INSERT OR IGNORE INTO steps (step, photo_id) VALUES (?, ?)", (step, photo_id))

    def is_done(self, photo_id: str, step: str) -> bool:
        return self._db.execute("SELECT 1 FROM steps WHERE step=? AND photo_id=?", (step, photo_id)).fetchone() is not None

    def clear_done(self, photo_id: str) -> None:
        with self.transaction():
            self._db.execute("DELETE FROM steps WHERE photo_id=?", (photo_id,))

    # ------------------------------------------------------------------ metadata

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def set_meta(self, key: str, value: Any) -> None:
        with self.transaction():
            self._set_meta(key, value)

    def _set_meta(self, key: str, value: Any) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, json.dumps(value, ensure_ascii=False))
        )

    def roots(self) -> list[str]:
        return list(self.get_meta("roots", []))

    def add_root(self, root: str) -> None:
        with self.transaction():
            roots = self.roots()
            if root not in roots:
                self._set_meta("roots", sorted([*roots, root]))

    def latest_time(self) -> datetime | None:
        row = self._db.execute("SELECT MAX(taken_local) FROM photos").fetchone()
        return parse_dt(row[0]) if row else None

    # ------------------------------------------------------------------ filters

    def ids_taken_between(self, start: datetime | None, end: datetime | None) -> set[str]:
        sql, args = "SELECT id FROM photos WHERE taken_local IS NOT NULL", []
        if start is not None:
            sql += " AND taken_local >= ?"
            args.append(local_key(start))
        if end is not None:
            sql += " AND taken_local < ?"
            args.append(local_key(end))
        return {r[0] for r in self._db.execute(sql, args)}

    def ids_at_place(self, name: str, level: str | None = None) -> set[str]:
        sql = "SELECT id FROM photos WHERE place_id IN (SELECT place_id FROM place_names WHERE name=?"
        if level is None:
            rows = self._db.execute(sql + ")", (name.strip(),))
        else:
            if level not in LEVELS:
                raise FinegrainError(f"unknown place level {level!r}", f"use one of {', '.join(LEVELS)}")
            rows = self._db.execute(sql + " AND level=?)", (name.strip(), level))
        return {r[0] for r in rows}

    def ids_with_tag(self, tag: str) -> set[str]:
        return {r[0] for r in self._db.execute("SELECT photo_id FROM time_tags WHERE tag=?", (tag,))}

    def ids_with_person(self, person_id: str) -> set[str]:
        return {r[0] for r in self._db.execute("SELECT photo_id FROM faces WHERE person_id=?", (person_id,))}

    def ids_in_event(self, event_id: str) -> set[str]:
        return {r[0] for r in self._db.execute("SELECT id FROM photos WHERE event_id=?", (event_id,))}

    def select_ids(self, where: PhotoFilter) -> set[str] | None:
        """Photos meeting every constraint of ``where``, intersected inside SQLite (one query);
        None when it has none (all photos). The row counts that order the constraints and the
        final query read one snapshot."""
        with self.snapshot():
            return self._select_ids(where)

    def _select_ids(self, where: PhotoFilter) -> set[str] | None:
        start, end, places, people, tags, event_id = (
            where.start, where.end, where.places, where.people, where.tags, where.event_id)
        # Each constraint is (estimated rows, SQL that drives the query from its index,
        # SQL that only checks a candidate row). The most selective constraint drives;
        # the others check (``+col`` keeps SQLite from choosing their index instead).
        parts: list[tuple[int, str, str, list[Any]]] = []
        if start is not None or end is not None:
            lo = local_key(start) if start is not None else ""
            hi = local_key(end) if end is not None else "\uffff"
            n = self._count("SELECT COUNT(*) FROM photos WHERE taken_local >= ? AND taken_local < ?", [lo, hi])
            parts.append((n, "taken_local >= ? AND taken_local < ?", "+taken_local >= ? AND +taken_local < ?", [lo, hi]))
        if places:
            names: list[str] = []
            pargs: list[str] = []
            for item in places:
                if isinstance(item, tuple):
                    level, name = item
                    if level not in LEVELS:
                        raise FinegrainError(f"unknown place level {level!r}", f"use one of {', '.join(LEVELS)}")
                    names.append("(name=? AND level=?)")
                    pargs.extend((name.strip(), level))
                else:
                    names.append("name=?")
                    pargs.append(item.strip())
            sub = f"(SELECT place_id FROM place_names WHERE {' OR '.join(names)})"
            n = self._count(f"SELECT COUNT(*) FROM photos WHERE place_id IN {sub}", pargs)
            parts.append((n, f"place_id IN {sub}", f"+place_id IN {sub}", pargs))
        for person in people:
            n = self._count("SELECT COUNT(*) FROM faces WHERE person_id=?", [person])
            parts.append((n, "id IN (SELECT photo_id FROM faces WHERE person_id=?)",
                          "EXISTS (SELECT 1 FROM faces f WHERE f.person_id=? AND f.photo_id=photos.id)", [person]))
        for tag in tags:
            n = self._count("SELECT COUNT(*) FROM time_tags WHERE tag=?", [tag])
            parts.append((n, "id IN (SELECT photo_id FROM time_tags WHERE tag=?)",
                          "EXISTS (SELECT 1 FROM time_tags t WHERE t.tag=? AND t.photo_id=photos.id)", [tag]))
        if event_id is not None:
            n = self._count("SELECT COUNT(*) FROM photos WHERE event_id=?", [event_id])
            parts.append((n, "event_id=?", "+event_id=?", [event_id]))
        if not parts:
            return None
        order = sorted(range(len(parts)), key=lambda k: (parts[k][0], k))
        if parts[order[0]][0] == 0:
            return set()
        conds, args = [], []
        for rank, k in enumerate(order):
            _, drive, check, a = parts[k]
            conds.append(drive if rank == 0 else check)
            args.extend(a)
        return {r[0] for r in self._db.execute(f"SELECT id FROM photos WHERE {' AND '.join(conds)}", args)}

    def _count(self, sql: str, args: Sequence[Any]) -> int:
        return int(self._db.execute(sql, list(args)).fetchone()[0])

    # ------------------------------------------------------------------ dump

    def dump(self) -> dict[str, Any]:
        with self.snapshot():
            return dump_catalog(self, self._db.execute)

    def size_on_disk(self) -> int:
        """Bytes of the catalog file plus its WAL, after a checkpoint."""
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        total = 0
        for suffix in ("", "-wal", "-shm"):
            f = Path(str(self.path) + suffix)
            if f.exists():
                total += f.stat().st_size
        return total
