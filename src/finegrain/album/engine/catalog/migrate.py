"""Copy a catalog from one store to another (SQLite to Postgres, or back) and check the copy.

:func:`migrate_catalog` reads the source in one snapshot, writes everything into an empty
target in one transaction (photos, places, time tags, faces with their descriptors, people,
events, embeddings, processing steps, metadata) and, before that transaction commits, compares
the two catalogs: the row counts of every part and the canonical ``dump()`` (which hashes every
embedding, so vectors must be equal bit for bit). A difference rolls the copy back and is an
error naming the part that differs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from finegrain.album.engine.catalog.opener import describe, open_catalog
from finegrain.album.engine.catalog.postgres_schema import is_postgres_url
from finegrain.album.engine.catalog.store import VOLATILE_META, CatalogStore
from finegrain.errors import FinegrainError

#: The parts counted, in the order printed.
PARTS = ("photos", "places", "time_tags", "faces", "face_embeddings", "people", "events", "embeddings", "steps", "meta")


@dataclass(frozen=True)
class MigrationReport:
    """What :func:`migrate_catalog` copied: rows per part (equal in source and target), and how long it took."""

    source: str
    target: str
    counts: tuple[tuple[str, int], ...]
    seconds: float

    def summary(self) -> str:
        rows = "\n".join(f"  {name:<16}{n:>10}" for name, n in self.counts)
        return (f"copied {self.source} -> {self.target} in {self.seconds:.1f}s; "
                f"counts verified equal in both:\n{rows}")


def catalog_counts(dump: Mapping[str, Any]) -> dict[str, int]:
    """Rows per part of a catalog, from its ``dump()``."""
    return {
        "photos": len(dump["photos"]),
        "places": len(dump["places"]),
        "time_tags": sum(len(v) for v in dump["time_tags"].values()),
        "faces": len(dump["faces"]),
        "face_embeddings": sum(f["embedding_sha256"] is not None for f in dump["faces"]),
        "people": len(dump["people"]),
        "events": len(dump["events"]),
        "embeddings": len(dump["embeddings"]),
        "steps": sum(len(v) for v in dump["steps"].values()),
        "meta": len(dump["meta"]),
    }


def migrate_catalog(source: str | Path, target: str | Path) -> MigrationReport:
    """Copy the catalog at ``source`` (which must exist) into ``target`` (created; it must hold no
    photo, person or embedding), verify the copy and commit it; see the module doc."""
    shown_src, shown_dst = describe(source), describe(target)
    if _same(source, target):
        raise FinegrainError(f"--from and --to name the same catalog {shown_src!r}", "copy into another file or database")
    started = time.perf_counter()
    with open_catalog(source, create=False) as src, open_catalog(target) as dst:
        held = dst.count_photos(), len(dst.people()), len(dst.embedding_models())
        if any(held):
            raise FinegrainError(
                f"the target catalog {shown_dst!r} is not empty ({held[0]} photos, {held[1]} people, "
                f"{held[2]} embedding models)",
                "migrate into a new file or an empty database (createdb NAME), or drop the old one first",
            )
        with src.snapshot():
            expected = src.dump()
            _copy(src, dst, expected)
    return _verified(source, target, expected, shown_src, shown_dst, started)


def _copy(src: CatalogStore, dst: Any, dump: Mapping[str, Any]) -> None:
    photos = list(src.iter_photos())
    places = src.places()
    faces = src.faces()
    keys, matrix = src.face_embeddings()
    face_vectors = {k: matrix[i] for i, k in enumerate(keys)}
    with dst.transaction():  # all or nothing
        for key, value in dump["meta"].items():
            dst.set_meta(key, value)
        for key in sorted(VOLATILE_META):
            value = src.get_meta(key)
            if value is not None:
                dst.set_meta(key, value)
        put_many = getattr(dst, "put_photos", None)
        if callable(put_many):
            put_many(photos)
        else:
            for p in photos:
                dst.put_photo(p)
        for pid, place in places.items():
            dst.set_place(pid, place)
        for pid, tags in dump["time_tags"].items():
            dst.set_time_tags(pid, tags)
        for person in src.people():
            dst.put_person(person)
        by_photo: dict[str, list[Any]] = {}
        for f in faces:
            by_photo.setdefault(f.photo_id, []).append(f)
        for pid, occurrences in by_photo.items():
            vectors: list[np.ndarray | None] = [face_vectors.get((pid, f.index)) for f in occurrences]
            dst.set_faces(pid, occurrences, vectors)
        dst.set_events({p.id: p.event_id for p in photos if p.event_id is not None})
        for model in src.embedding_models():
            ids, vecs = src.get_embeddings(model)
            for i, pid in enumerate(ids):
                dst.put_embedding(pid, model, vecs[i])
        for pid, steps in dump["steps"].items():
            for step in steps:
                dst.mark_done(pid, step)
        _check(dump, dst.dump(), "nothing was written")  # before the commit: a difference rolls the copy back


def _check(expected: Mapping[str, Any], got: Mapping[str, Any], outcome: str) -> None:
    want, have = catalog_counts(expected), catalog_counts(got)
    hint = "report this as a bug, with the part named (the source may hold values the target cannot store)"
    for part in PARTS:
        if want[part] != have[part]:
            raise FinegrainError(f"the copy has {have[part]} {part} where the source has {want[part]}; {outcome}", hint)
    for part in expected:
        if expected[part] != got.get(part):
            raise FinegrainError(f"the copy's {part} differ from the source's; {outcome}", hint)


def _verified(source: str | Path, target: str | Path, expected: Mapping[str, Any], shown_src: str, shown_dst: str,
              started: float) -> MigrationReport:
    """Read the committed target once more (a fresh connection) and compare it with the source's dump."""
    with open_catalog(target, create=False) as dst:
        got = dst.dump()
    _check(expected, got, "the target holds a bad copy: drop it")
    counts = catalog_counts(expected)
    return MigrationReport(shown_src, shown_dst, tuple((p, counts[p]) for p in PARTS), time.perf_counter() - started)


def _same(a: str | Path, b: str | Path) -> bool:
    if is_postgres_url(a) or is_postgres_url(b):
        return str(a).strip() == str(b).strip()
    return Path(a).resolve() == Path(b).resolve()
