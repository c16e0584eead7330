"""Read-only views of a catalog for the album page: the timeline, people, places, the map and one photo.

:class:`CatalogReader` reads a catalog in either store, a SQLite file or a Postgres database
(``postgresql://`` URL), with one read-only connection per thread, so page reads run beside
searches and never wait for a writer. Each query is written once; what the two databases
spell differently (placeholders, the "catalog changed" signal, rounding, NULL order, place
names) comes from :mod:`finegrain.album.engine.web.dialect`. It reads the layout of
:mod:`finegrain.album.engine.catalog.schema` and writes nothing; writes (naming and merging people)
go through the :class:`~finegrain.album.engine.catalog.store.CatalogStore`.

Orders (one rule each, ties broken by id so pages never overlap or skip):

* timeline and photo lists: local capture time, newest first, then id descending; undated
  photos after every dated one, by id descending;
* people: photo count descending, then id; a person's cover: their face in their newest photo
  with a face box (then photo id descending, face index ascending);
* places: photo count descending, then name.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from finegrain.album.engine.web.dialect import Dialect, dialect_of
from finegrain.errors import FinegrainError

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_PHOTO_SELECT = (
    "SELECT p.id, p.taken_local, p.caption, p.camera, p.lat, p.lon, "
    "pl.district_en, pl.district_zh, pl.city_en, pl.city_zh, pl.province_en, pl.province_zh, "
    "pl.country_en, pl.country_zh FROM photos p LEFT JOIN places pl ON pl.id = p.place_id"
)
_ORDER = " ORDER BY p.taken_local DESC, p.id DESC"
LEVELS = ("district", "city", "province", "country")


def is_chinese(name: str) -> bool:
    """Whether ``name`` is written in Chinese characters (an alias for the zh page)."""
    return bool(_CJK.search(name))


def photo_urls(photo_id: str) -> dict[str, str]:
    q = quote(photo_id, safe="/")
    return {"thumb": f"/thumb/{q}", "photo": f"/photo/{q}"}


def face_url(photo_id: str, index: int) -> str:
    return f"/face/{quote(photo_id, safe='/')}?i={int(index)}"


def place_label(names: dict[str, str | None], lang: str) -> str | None:
    """The two most precise known levels of a place in ``lang`` (the other language filling gaps):
    ``"Xihu District, Hangzhou"`` / ``"杭州市西湖区"``."""
    order = ("zh", "en") if lang == "zh" else ("en", "zh")
    found: list[str] = []
    for level in LEVELS:
        value = next((v for lg in order if (v := names.get(f"{level}_{lg}"))), None)
        if value and value not in found:
            found.append(value)
    if not found:
        return None
    two = found[:2]
    return "".join(reversed(two)) if lang == "zh" else ", ".join(two)


@dataclass(frozen=True)
class Cursor:
    """A position in the timeline: after the photo ``(taken_local, photo_id)``; ``taken_local``
    None is a position among the undated photos."""

    taken_local: str | None
    photo_id: str

    def encode(self) -> str:
        return f"{self.taken_local or ''}|{self.photo_id}"

    @classmethod
    def parse(cls, text: str) -> Cursor:
        """A cursor (``next`` of a page: ``TIME|ID``) or a date/time (photos strictly before it:
        ``2023-05``, ``2023-05-01``, ``2023-05-01T10:30:00``)."""
        raw = text.strip()
        if "\x00" in raw:  # no id or time holds one (and Postgres text cannot)
            raise FinegrainError(f"timeline cursor {text!r} has a NUL character", "pass the 'next' value of the last page unchanged")
        if "|" in raw:
            when, _, pid = raw.partition("|")
            if not pid:
                raise FinegrainError(f"timeline cursor {text!r} has no photo id after '|'", "pass the 'next' value of the last page unchanged")
            return cls(_iso(when, text) if when else None, pid)
        return cls(_iso(raw, text), "")


def _iso(value: str, original: str) -> str:
    v = value.strip()
    if re.fullmatch(r"\d{4}-\d{2}", v):
        v += "-01"
    try:
        t = datetime.fromisoformat(v)
    except ValueError:
        raise FinegrainError(
            f"before={original!r} is not a date or a timeline cursor",
            "pass a date (2023-05, 2023-05-01, 2023-05-01T10:30:00) or the 'next' value of a page",
        ) from None
    return t.replace(tzinfo=None).isoformat(timespec="seconds")


class _Connection:
    """One thread's read-only connection: statements written with ``?``, rewritten once per text
    for the dialect."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.raw = dialect.connect()
        self._texts: dict[str, str] = {}

    def execute(self, sql: str, args: Any = ()) -> Any:
        text = self._texts.get(sql)
        if text is None:
            text = self._texts[sql] = self.dialect.sql(sql)
        return self.raw.execute(text, list(args))

    def close(self) -> None:
        self.raw.close()


class CatalogReader:
    """Read-only queries over the catalog at ``target`` (a SQLite file path or a ``postgresql://``
    URL; one connection per thread)."""

    def __init__(self, target: str | Path) -> None:
        self.dialect = dialect_of(target)
        self._local = threading.local()
        self._all: list[_Connection] = []
        self._guard = threading.Lock()
        self._watch: _Connection | None = None

    def _db(self) -> _Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = _Connection(self.dialect)
            self._local.db = db
            with self._guard:
                self._all.append(db)
        return db

    def data_version(self) -> int:
        """A number that changes whenever a commit changed the catalog, from any connection or
        process (SQLite's ``PRAGMA data_version``, or the Postgres catalog's change counter, read
        on a connection of its own that never writes)."""
        with self._guard:
            if self._watch is None:
                self._watch = _Connection(self.dialect)
                self._all.append(self._watch)
            return self.dialect.version(self._watch.raw)

    def close(self) -> None:
        with self._guard:
            self._watch = None
            for db in self._all:
                db.close()
            self._all.clear()
        self._local = threading.local()

    # ------------------------------------------------------------------ files

    def photo_path(self, photo_id: str) -> tuple[str, str] | None:
        """``(id, path)`` of a photo (the row the file server resolves), None for an unknown id."""
        if not _storable(photo_id):
            return None
        row = self._db().execute("SELECT id, path FROM photos WHERE id = ?", (photo_id,)).fetchone()
        return None if row is None else (row[0], row[1])

    def roots(self) -> list[str]:
        row = self._db().execute("SELECT value FROM meta WHERE key = 'roots'").fetchone()
        return list(json.loads(row[0])) if row else []

    # ------------------------------------------------------------------ photos

    def _item(self, row: tuple[Any, ...], lang: str) -> dict[str, Any]:
        names = dict(zip(("district_en", "district_zh", "city_en", "city_zh", "province_en", "province_zh",
                          "country_en", "country_zh"), row[6:14], strict=True))
        when = row[1]
        return {
            "id": row[0],
            **photo_urls(row[0]),
            "taken_at": when[:16].replace("T", " ") if when else None,
            "month": when[:7] if when else None,
            "place": place_label(names, lang),
            "caption": row[2],
        }

    def items(self, photo_ids: list[str], lang: str) -> dict[str, dict[str, Any]]:
        """Grid items (id, urls, time, place label, caption) of ``photo_ids``, by id (unknown ids absent)."""
        out: dict[str, dict[str, Any]] = {}
        db = self._db()
        for i in range(0, len(photo_ids), 500):
            chunk = photo_ids[i:i + 500]
            marks = ",".join("?" * len(chunk))
            for row in db.execute(f"{_PHOTO_SELECT} WHERE p.id IN ({marks})", chunk):
                out[row[0]] = self._item(row, lang)
        return out

    def timeline(self, before: str | None, limit: int, lang: str,
                 months: Callable[[], list[dict[str, Any]]] | None = None) -> dict[str, Any]:
        """One page of the timeline (``limit`` photos after ``before``), its ``next`` cursor (None at
        the end) and, on the first page (``before`` None), the month index with counts (from
        ``months``, e.g. a cached :meth:`months`, when given)."""
        cursor = Cursor.parse(before) if before else None
        db = self._db()
        rows: list[tuple[Any, ...]] = []
        dated_done = cursor is not None and cursor.taken_local is None
        if not dated_done:
            if cursor is None:
                rows = db.execute(f"{_PHOTO_SELECT} WHERE p.taken_local IS NOT NULL{_ORDER} LIMIT ?", (limit,)).fetchall()
            elif cursor.photo_id:
                rows = db.execute(  # a row-value bound: one range scan of the (taken_local, id) index
                    f"{_PHOTO_SELECT} WHERE p.taken_local IS NOT NULL AND (p.taken_local, p.id) < (?, ?){_ORDER} LIMIT ?",
                    (cursor.taken_local, cursor.photo_id, limit),
                ).fetchall()
            else:
                rows = db.execute(f"{_PHOTO_SELECT} WHERE p.taken_local < ?{_ORDER} LIMIT ?",
                                  (cursor.taken_local, limit)).fetchall()
        if len(rows) < limit:
            undated_after = cursor.photo_id if dated_done and cursor is not None else None
            sql = f"{_PHOTO_SELECT} WHERE p.taken_local IS NULL" + (" AND p.id < ?" if undated_after else "")
            args: tuple[Any, ...] = (undated_after,) if undated_after else ()
            rows += db.execute(sql + " ORDER BY p.id DESC LIMIT ?", (*args, limit - len(rows))).fetchall()
        nxt = Cursor(rows[-1][1], rows[-1][0]).encode() if len(rows) == limit else None
        body: dict[str, Any] = {"photos": [self._item(r, lang) for r in rows], "next": nxt}
        if cursor is None:
            body["months"] = (months or self.months)()
            body["total"] = sum(m["count"] for m in body["months"])
        return body

    def months(self) -> list[dict[str, Any]]:
        """``[{"month": "2025-10", "count": n}]`` newest first; undated photos as month None, last."""
        rows = self._db().execute(
            "SELECT m, n FROM (SELECT substr(taken_local, 1, 7) AS m, COUNT(*) AS n FROM photos "
            "GROUP BY substr(taken_local, 1, 7)) AS t ORDER BY m IS NULL, m DESC"
        ).fetchall()
        return [{"month": m, "count": n} for m, n in rows]

    def photos(self, *, lang: str, offset: int, limit: int, person: str | None = None,
               place: str | None = None, level: str | None = None,
               bbox: tuple[float, float, float, float] | None = None) -> dict[str, Any]:
        """Photos of one person, one place (``level``: city, district, ... or any) or inside a
        ``(south, west, north, east)`` box, newest first; ``total`` counts them all."""
        where: list[str] = []
        args: list[Any] = []
        if not _storable(person, place):  # a name no catalog holds: nothing matches
            return {"photos": [], "total": 0, "offset": offset, "next_offset": None}
        if person is not None:
            where.append("p.id IN (SELECT photo_id FROM faces WHERE person_id = ?)")
            args.append(person)
        if place is not None:
            sub = "SELECT place_id FROM place_names WHERE name = ?" + (" AND level = ?" if level else "")
            where.append(f"p.place_id IN ({sub})")
            name = self.dialect.place_name(place)
            args += [name, level] if level else [name]
        if bbox is not None:
            where.append("p.lat BETWEEN ? AND ? AND p.lon BETWEEN ? AND ?")
            args += [bbox[0], bbox[2], bbox[1], bbox[3]]
        cond = (" WHERE " + " AND ".join(where)) if where else ""
        db = self._db()
        total = db.execute(f"SELECT COUNT(*) FROM photos p{cond}", args).fetchone()[0]
        order = f" ORDER BY p.taken_local DESC{self.dialect.desc_nulls_last}, p.id DESC"  # undated photos last
        rows = db.execute(f"{_PHOTO_SELECT}{cond}{order} LIMIT ? OFFSET ?", (*args, limit, offset)).fetchall()
        return {"photos": [self._item(r, lang) for r in rows], "total": total, "offset": offset,
                "next_offset": offset + len(rows) if offset + len(rows) < total else None}

    def photo(self, photo_id: str) -> dict[str, Any] | None:
        """Everything the detail panel shows of one photo (None: no such id)."""
        if not _storable(photo_id):
            return None
        db = self._db()
        row = db.execute(
            "SELECT p.id, p.path, p.taken_local, p.tz, p.lat, p.lon, p.camera, p.width, p.height, p.caption, "
            "p.keywords, p.event_id, p.size, pl.district_en, pl.district_zh, pl.city_en, pl.city_zh, "
            "pl.province_en, pl.province_zh, pl.country_en, pl.country_zh "
            "FROM photos p LEFT JOIN places pl ON pl.id = p.place_id WHERE p.id = ?", (photo_id,)
        ).fetchone()
        if row is None:
            return None
        place = dict(zip(("district_en", "district_zh", "city_en", "city_zh", "province_en", "province_zh",
                          "country_en", "country_zh"), row[13:21], strict=True))
        faces = db.execute(
            "SELECT f.idx, f.person_id, pe.names FROM faces f LEFT JOIN people pe ON pe.id = f.person_id "
            "WHERE f.photo_id = ? ORDER BY f.idx", (photo_id,)
        ).fetchall()
        tags = [t for (t,) in db.execute("SELECT tag FROM time_tags WHERE photo_id = ? ORDER BY tag", (photo_id,))]
        people = []
        for _idx, pid, names in faces:
            if pid is None:
                continue
            people.append(person_names(pid, json.loads(names) if names else []))
        return {
            "id": row[0], **photo_urls(row[0]), "path": row[1],
            "taken_at": row[2].replace("T", " ") if row[2] else None, "tz": row[3],
            "lat": row[4], "lon": row[5], "camera": row[6], "width": row[7], "height": row[8],
            "caption": row[9], "keywords": json.loads(row[10]) if row[10] else [], "event": row[11],
            "size": row[12], "place_names": {k: v for k, v in place.items() if v},
            "place": {"en": place_label(place, "en"), "zh": place_label(place, "zh")},
            "people": list({p["id"]: p for p in people}.values()),
            "unnamed_faces": sum(1 for _, pid, _ in faces if pid is None),
            "time_tags": tags,
        }

    # ------------------------------------------------------------------ people

    def people(self) -> list[dict[str, Any]]:
        """Every person (face cluster) with names by language, photo count and a cover: their face in
        their newest photo that has a face box (``/face/ID?i=N``), else that photo's thumbnail."""
        db = self._db()
        counts = dict(db.execute(
            "SELECT f.person_id, COUNT(DISTINCT f.photo_id) FROM faces f JOIN photos p ON p.id = f.photo_id "
            "WHERE f.person_id IS NOT NULL GROUP BY f.person_id").fetchall())
        covers = {pid: (photo, idx, box) for pid, photo, idx, box in db.execute(
            "SELECT person_id, photo_id, idx, has_box FROM (SELECT f.person_id, f.photo_id, f.idx, "
            "CASE WHEN f.box_top IS NULL THEN 0 ELSE 1 END AS has_box, ROW_NUMBER() OVER (PARTITION BY f.person_id "
            "ORDER BY CASE WHEN f.box_top IS NULL THEN 0 ELSE 1 END DESC, COALESCE(p.taken_local, '') DESC, "
            "f.photo_id DESC, f.idx) AS r FROM faces f JOIN photos p ON p.id = f.photo_id "
            "WHERE f.person_id IS NOT NULL) AS c WHERE r = 1").fetchall()}
        out = []
        for pid, names, is_me in db.execute("SELECT id, names, is_me FROM people").fetchall():
            cover, idx, box = covers.get(pid, (None, None, 0))
            n = int(counts.get(pid, 0))
            entry = person_names(pid, json.loads(names))
            url = None if cover is None else face_url(cover, idx) if box else photo_urls(cover)["thumb"]
            entry.update(is_me=bool(is_me), count=n, cover=url)
            out.append(entry)
        out.sort(key=lambda p: (-p["count"], _natural(p["id"])))
        return out

    def face_box(self, photo_id: str, index: int) -> tuple[int, int, int, int] | None:
        """The (top, right, bottom, left) box of face ``index`` in the photo; None when unknown."""
        if not _storable(photo_id):
            return None
        row = self._db().execute(
            "SELECT box_top, box_right, box_bottom, box_left FROM faces WHERE photo_id = ? AND idx = ?",
            (photo_id, index)).fetchone()
        return None if row is None or row[0] is None else (int(row[0]), int(row[1]), int(row[2]), int(row[3]))

    def person(self, person_id: str) -> dict[str, Any] | None:
        return next((p for p in self.people() if p["id"] == person_id), None)

    # ------------------------------------------------------------------ places and the map

    def places(self, lang: str) -> list[dict[str, Any]]:
        """Cities (or the most precise level above, e.g. a province without cities) with counts, mean
        coordinates and their districts, names in ``lang`` with the other language beside."""
        rows = self._db().execute(
            "SELECT pl.country_en, pl.country_zh, pl.province_en, pl.province_zh, pl.city_en, pl.city_zh, "
            "pl.district_en, pl.district_zh, COUNT(*), AVG(p.lat), AVG(p.lon) "
            "FROM photos p JOIN places pl ON pl.id = p.place_id GROUP BY pl.id ORDER BY pl.key"
        ).fetchall()  # rows in an order both stores share (the first row of a city names its region)
        cities: dict[tuple[str, str], dict[str, Any]] = {}
        for c_en, c_zh, pr_en, pr_zh, ci_en, ci_zh, d_en, d_zh, n, lat, lon in rows:
            if ci_en or ci_zh:
                level, en, zh = "city", ci_en, ci_zh
            elif pr_en or pr_zh:
                level, en, zh = "province", pr_en, pr_zh
            else:
                level, en, zh = "country", c_en, c_zh
            if not (en or zh):
                continue
            key = (level, (en or zh or "").lower())
            city = cities.setdefault(key, _place_entry(level, en, zh, lang) | {
                "count": 0, "districts": {}, "_lat": 0.0, "_lon": 0.0, "_geo": 0,
                "region": {"en": pr_en or c_en, "zh": pr_zh or c_zh}})
            city["count"] += n
            if lat is not None and lon is not None:
                city["_lat"] += lat * n
                city["_lon"] += lon * n
                city["_geo"] += n
            if d_en or d_zh:
                dkey = (d_en or d_zh or "").lower()
                district = city["districts"].setdefault(dkey, _place_entry("district", d_en, d_zh, lang) | {"count": 0})
                district["count"] += n
        out = []
        for city in cities.values():
            geo = city.pop("_geo")
            lat, lon = city.pop("_lat"), city.pop("_lon")
            city["lat"], city["lon"] = (round(lat / geo, 5), round(lon / geo, 5)) if geo else (None, None)
            city["districts"] = sorted(city["districts"].values(), key=lambda d: (-d["count"], d["name"]))
            out.append(city)
        out.sort(key=lambda c: (-c["count"], c["name"]))
        return out

    def map_points(self, cell: float) -> dict[str, Any]:
        """Photo positions binned on a ``cell``-degree grid: ``[[lat, lon, count]]`` (cell centres,
        raw coordinates as stored), their bounds, and how many photos have no position."""
        db = self._db()
        near = self.dialect.nearest_int
        rows = db.execute(  # the cell of a point: the nearest integer of lat / cell, halves away from zero
            f"SELECT {near('x')}, {near('y')}, COUNT(*) FROM (SELECT lat / ? AS x, lon / ? AS y FROM photos "
            "WHERE lat IS NOT NULL AND lon IS NOT NULL) AS q GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2",
            (float(cell), float(cell)),
        ).fetchall()
        (total,) = db.execute("SELECT COUNT(*) FROM photos").fetchone()
        points = [[round(a * cell, 6), round(b * cell, 6), n] for a, b, n in rows]
        located = sum(n for *_, n in points)
        bounds = None
        if points:
            lats, lons = [p[0] for p in points], [p[1] for p in points]
            bounds = {"south": min(lats), "west": min(lons), "north": max(lats), "east": max(lons)}
        return {"cell": cell, "points": points, "bounds": bounds, "located": located, "unlocated": total - located}


def _place_entry(level: str, en: str | None, zh: str | None, lang: str) -> dict[str, Any]:
    name = (zh or en) if lang == "zh" else (en or zh)
    other = (en if lang == "zh" else zh) or None
    # the name the catalog's place index knows (either language matches, case-insensitive)
    return {"level": level, "name": name or "", "other_name": other if other != name else None,
            "name_en": en, "name_zh": zh, "key": en or zh}


def person_names(person_id: str, names: list[str]) -> dict[str, Any]:
    """A person's names split by language (Chinese characters or not), the display name first."""
    zh = [n for n in names if is_chinese(n)]
    en = [n for n in names if not is_chinese(n)]
    return {"id": person_id, "names": names, "names_en": en, "names_zh": zh,
            "display": names[0] if names else None}


def _storable(*texts: str | None) -> bool:
    """Whether these look-up values could be in a catalog: no NUL character (no photo id, person
    id or place name holds one, and Postgres text cannot, so both stores answer "none")."""
    return not any(t is not None and "\x00" in t for t in texts)


def _natural(text: str) -> tuple[Any, ...]:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text))
