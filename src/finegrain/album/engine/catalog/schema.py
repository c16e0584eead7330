"""The catalog's SQLite layout and the conversion between rows and records.

Layout (schema version :data:`SCHEMA_VERSION`, stored in ``meta``):

* ``photos`` — one row per photo; ``taken_local`` (local wall-clock time,
  ISO seconds) is indexed for time filters, ``path`` for incremental
  re-indexing, ``event_id`` for event look-ups;
* ``places`` — one row per distinct place (names per admin level and
  language, aliases), referenced by ``photos.place_id`` (indexed), and
  ``place_names`` (``name, level, place_id``, case-insensitive) so a place
  filter is one index look-up of a few place ids, then the photos of those;
* ``time_tags`` (``tag, photo_id``) for tags such as ``season:summer``;
* ``faces`` (box, 128-d float32 embedding, person) indexed by person;
  ``people`` (names as JSON, ``is_me``);
* ``events``, ``embeddings`` (float32 bytes per photo and model id), ``meta``
  (JSON values: roots, schema version, source).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any

from finegrain.album.engine.catalog.store import VOLATILE_META, CatalogStore
from finegrain.album.engine.records import Photo, PhotoPlace

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS photos (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    size INTEGER, mtime REAL, sha256 TEXT,
    taken_at TEXT, tz TEXT, taken_local TEXT,
    lat REAL, lon REAL, camera TEXT, width INTEGER, height INTEGER,
    caption TEXT, keywords TEXT NOT NULL DEFAULT '[]',
    event_id TEXT, place_id INTEGER
);
CREATE INDEX IF NOT EXISTS photos_place ON photos(place_id, id);
CREATE INDEX IF NOT EXISTS photos_path ON photos(path);
CREATE INDEX IF NOT EXISTS photos_taken ON photos(taken_local, id);
CREATE INDEX IF NOT EXISTS photos_event ON photos(event_id, id);
CREATE INDEX IF NOT EXISTS photos_sha ON photos(sha256);
CREATE TABLE IF NOT EXISTS places (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE,
    country_en TEXT, country_zh TEXT, province_en TEXT, province_zh TEXT,
    city_en TEXT, city_zh TEXT, district_en TEXT, district_zh TEXT, country_code TEXT,
    locality_en TEXT, aliases TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE IF NOT EXISTS place_names (
    name TEXT NOT NULL COLLATE NOCASE, level TEXT NOT NULL, place_id INTEGER NOT NULL,
    PRIMARY KEY (name, level, place_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS time_tags (
    tag TEXT NOT NULL, photo_id TEXT NOT NULL, PRIMARY KEY (tag, photo_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS time_tags_photo ON time_tags(photo_id);
CREATE TABLE IF NOT EXISTS people (
    id TEXT PRIMARY KEY, names TEXT NOT NULL DEFAULT '[]', is_me INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS faces (
    photo_id TEXT NOT NULL, idx INTEGER NOT NULL, person_id TEXT,
    box_top INTEGER, box_right INTEGER, box_bottom INTEGER, box_left INTEGER,
    embedding BLOB,
    PRIMARY KEY (photo_id, idx)
);
CREATE INDEX IF NOT EXISTS faces_person ON faces(person_id, photo_id);
CREATE TABLE IF NOT EXISTS events (id TEXT PRIMARY KEY, start TEXT, end TEXT, n_photos INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS embeddings (
    model_id TEXT NOT NULL, photo_id TEXT NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (model_id, photo_id)
);
CREATE INDEX IF NOT EXISTS embeddings_photo ON embeddings(photo_id);
CREATE TABLE IF NOT EXISTS steps (
    step TEXT NOT NULL, photo_id TEXT NOT NULL, PRIMARY KEY (step, photo_id)
) WITHOUT ROWID;
"""

PHOTO_COLS = (
    "id", "path", "size", "mtime", "sha256", "taken_at", "tz", "taken_local", "lat", "lon",
    "camera", "width", "height", "caption", "keywords", "event_id",
)
PLACE_COLS = (
    "country_en", "country_zh", "province_en", "province_zh",
    "city_en", "city_zh", "district_en", "district_zh", "country_code", "locality_en", "aliases",
)
LEVELS = ("country", "province", "city", "district", "locality")


def local_key(t: datetime) -> str:
    return t.replace(tzinfo=None).isoformat(timespec="seconds")


def photo_row(p: Photo) -> tuple[Any, ...]:
    return (
        p.id, p.path, p.size, p.mtime, p.sha256,
        p.taken_at.isoformat() if p.taken_at else None, p.tz,
        local_key(p.taken_at) if p.taken_at else None,
        p.lat, p.lon, p.camera, p.width, p.height, p.caption,
        json.dumps(list(p.keywords), ensure_ascii=False), p.event_id,
    )


def photo_of(r: Sequence[Any]) -> Photo:
    return Photo(
        id=r[0], path=r[1], size=r[2], mtime=r[3], sha256=r[4], taken_at=parse_dt(r[5]), tz=r[6],
        lat=r[8], lon=r[9], camera=r[10], width=r[11], height=r[12], caption=r[13],
        keywords=tuple(json.loads(r[14])), event_id=r[15],
    )


def place_of(r: Sequence[Any]) -> PhotoPlace:
    fields = dict(zip(PLACE_COLS[:-1], r[:-1], strict=True))
    return PhotoPlace(**fields, aliases=tuple((a[0], a[1]) for a in json.loads(r[-1])))


def parse_dt(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


#: What ``dump()`` reads as rows besides the records (SQL both stores run as is), in canonical order.
DUMP_QUERIES = {
    "faces": "SELECT photo_id, idx, person_id, box_top, box_right, box_bottom, box_left, embedding FROM faces "
             "ORDER BY photo_id, idx",
    "time_tags": "SELECT tag, photo_id FROM time_tags ORDER BY photo_id, tag",
    "embeddings": "SELECT model_id, photo_id, dim, vector FROM embeddings ORDER BY model_id, photo_id",
    "meta": "SELECT key, value FROM meta ORDER BY key",
    "steps": "SELECT step, photo_id FROM steps ORDER BY photo_id, step",
}


def dump_catalog(store: CatalogStore, rows: Callable[[str], Iterable[Sequence[Any]]]) -> dict[str, Any]:
    """The canonical ``dump()`` of ``store``: its records, and the rows ``rows(sql)`` returns for each of
    :data:`DUMP_QUERIES` (a vector cell as float32 bytes or a float32 array: both hash alike). Call it
    inside one snapshot."""
    photos = []
    for p in store.iter_photos():
        d = asdict(p)
        d["taken_at"] = p.taken_at.isoformat() if p.taken_at else None
        d["keywords"] = list(p.keywords)
        photos.append(d)
    faces = [
        {"photo_id": r[0], "index": r[1], "person_id": r[2], "box": None if r[3] is None else list(r[3:7]),
         "embedding_sha256": None if r[7] is None else _sha256(r[7])}
        for r in rows(DUMP_QUERIES["faces"])
    ]
    tags: dict[str, list[str]] = {}
    for tag, pid in rows(DUMP_QUERIES["time_tags"]):
        tags.setdefault(pid, []).append(tag)
    embeddings = [{"model_id": r[0], "photo_id": r[1], "dim": r[2], "sha256": _sha256(r[3])}
                  for r in rows(DUMP_QUERIES["embeddings"])]
    meta = {k: json.loads(v) for k, v in rows(DUMP_QUERIES["meta"]) if k not in VOLATILE_META}
    steps: dict[str, list[str]] = {}
    for step, pid in rows(DUMP_QUERIES["steps"]):
        steps.setdefault(pid, []).append(step)
    return {
        "meta": meta,
        "steps": steps,
        "photos": photos,
        "places": {pid: asdict(pl) | {"aliases": [list(a) for a in pl.aliases]} for pid, pl in store.places().items()},
        "time_tags": tags,
        "faces": faces,
        "people": [asdict(p) | {"names": list(p.names)} for p in store.people()],
        "events": [
            {"id": e.id, "start": e.start.isoformat() if e.start else None,
             "end": e.end.isoformat() if e.end else None, "n_photos": e.n_photos}
            for e in store.events()
        ],
        "embeddings": embeddings,
    }


def _sha256(vector: Any) -> str:
    """SHA-256 of a float32 vector's bytes (a SQLite blob, or an array read from Postgres)."""
    return hashlib.sha256(vector.tobytes() if hasattr(vector, "tobytes") else bytes(vector)).hexdigest()
