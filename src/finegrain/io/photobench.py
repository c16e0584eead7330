"""The PhotoBench album format (Xu et al., "PhotoBench: Beyond Visual Matching Towards
Personalized Intent-Driven Photo Retrieval").

An album folder holds::

    metadata.json         {filename: {"latitude", "longitude", "time"}}   null / "" when missing
    face_info_en.json     {"face_id_to_nicknames": {face id: [names]},
    face_info_cn.json      "image_to_face_ids": {filename: [face ids]}}   face "1" is the owner
    *_query.json          [{"query_cn", "query_en", "Source",
                            "Location"|"Time"|"Person"|"Object"|"Concept"|"Genre": null|"fact"|"cognitive",
                            "ground_truth": [filenames] (only in samples), "ground_truth_count",
                            "Class": [tags] (optional; not in PhotoBench's own files)}]

``Source`` is the source-aware taxonomy of the paper (Section 4.2): the
information a query needs, V (vision), M (metadata: time, place), F (faces)
or a combination VM, VF, MF, VMF; the categories do not overlap. The six
dimension fields say whether a query refers to that aspect as a plain
``fact`` or needs ``cognitive`` inference.

Queries have no ids upstream. Here a query's id is its position in the
merged query list, ``q000``, ``q001``, ...: the queries of
``protected_query.json`` in file order first, then those of the other
``*_query.json`` files (sorted by name) that are not already listed; a query
is the same query when both its Chinese and English texts are equal. Ground
truth comes from the files that carry it (``samples_query.json``);
``ground_truth`` is None for a query whose ground truth is not public and an
empty tuple for a zero-ground-truth query (the system should return no
photo). Only queries with known ground truth are scored.

``Class`` is finegrain's own optional field, written by album generators that
know what each query tests: a list of tags from :data:`QUERY_CLASSES`
(``place:district``, ``people:role``, ``holiday``, ...). ``PhotoQuery.classes`` is
None when a query has no such field; an evaluation then derives the classes from
the query's plan.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import PathLike, line_of, read_json
from finegrain.text.lang import Lang, parse_lang
from finegrain.types import Corpus, Document, Qrels, Queries, Query

SOURCES = ("V", "M", "F", "VM", "VF", "MF", "VMF")
DIMENSIONS = ("Location", "Time", "Person", "Object", "Concept", "Genre")
DIMENSION_VALUES = (None, "fact", "cognitive")
LANGS = ("en", "cn")  # PhotoBench's spellings; photobench_lang() maps finegrain's languages to them
OWNER_FACE_ID = "1"
#: The tags of a query's optional ``Class`` field: what the query tests. Place level of the
#: place it names (a Chinese district, city or province; a place abroad; a venue, campus,
#: store or landmark below the district), people named by name, by role or kinship word
#: ("dad", "宝宝"), or by a nickname two people share, a statutory holiday, another time
#: expression, and a query whose right answer is no photo.
QUERY_CLASSES = (
    "place:district", "place:city", "place:province", "place:abroad", "place:venue",
    "people:name", "people:role", "people:shared", "holiday", "time", "zero",
)



@dataclass(frozen=True, slots=True)
class Photo:
    """One photo: its file name (the id), GPS position and capture time (None when missing), faces."""

    id: str
    latitude: float | None
    longitude: float | None
    time: datetime | None
    faces: tuple[str, ...] = ()

    @property
    def has_gps(self) -> bool:
        return self.latitude is not None and self.longitude is not None


@dataclass(frozen=True, slots=True)
class Person:
    """A recurring face cluster with its nicknames in each language; face ``"1"`` is the owner."""

    id: str
    names_en: tuple[str, ...]
    names_cn: tuple[str, ...]

    @property
    def is_owner(self) -> bool:
        return self.id == OWNER_FACE_ID

    def names(self, lang: str) -> tuple[str, ...]:
        return self.names_en if photobench_lang(lang) == "en" else self.names_cn


@dataclass(frozen=True, slots=True)
class PhotoQuery:
    """A bilingual query with its Source label, dimension tags, ground truth (None = not public)
    and class tags (:data:`QUERY_CLASSES`; None when the file gives none)."""

    id: str
    text_en: str
    text_cn: str
    source: str
    dimensions: Mapping[str, str | None]
    ground_truth: tuple[str, ...] | None = None
    classes: tuple[str, ...] | None = None

    def text(self, lang: str) -> str:
        return self.text_en if photobench_lang(lang) == "en" else self.text_cn

    @property
    def has_ground_truth(self) -> bool:
        return self.ground_truth is not None

    @property
    def is_zero_gt(self) -> bool:
        return self.ground_truth is not None and not self.ground_truth


@dataclass(frozen=True)
class Album:
    """A PhotoBench album: photos by file name, people by face id, queries in id order."""

    name: str
    path: str
    photos: Mapping[str, Photo]
    people: Mapping[str, Person]
    queries: tuple[PhotoQuery, ...]

    @property
    def judged_queries(self) -> tuple[PhotoQuery, ...]:
        """The queries whose ground truth is known (possibly empty)."""
        return tuple(q for q in self.queries if q.ground_truth is not None)

    def corpus(self, lang: str = "en") -> Corpus:
        """The photos as documents: empty text (no captions are public) and a meta of
        ``latitude``, ``longitude``, ``time`` (ISO string or None), ``faces`` (ids) and
        ``people`` (first nickname of each face in ``lang``)."""
        lang = photobench_lang(lang)
        docs = []
        for p in self.photos.values():
            meta = {
                "latitude": p.latitude,
                "longitude": p.longitude,
                "time": p.time.isoformat() if p.time else None,
                "faces": p.faces,
                "people": tuple(self.people[f].names(lang)[0] for f in p.faces if self.people[f].names(lang)),
            }
            docs.append(Document(p.id, "", "", MappingProxyType(meta)))
        return Corpus(docs)

    def queries_and_qrels(self, lang: str = "en", *, judged_only: bool = True) -> tuple[Queries, Qrels]:
        """Queries in ``lang`` (type = Source label) and qrels (grade 1 per ground-truth photo).

        Zero-ground-truth queries are kept with an empty mapping. With
        ``judged_only`` (the default) queries whose ground truth is not public
        are left out; otherwise they are in the Queries but not in the Qrels.
        """
        lang = photobench_lang(lang)
        chosen = self.judged_queries if judged_only else self.queries
        queries = Queries(
            Query(
                q.id,
                q.text(lang),
                q.source,
                MappingProxyType(
                    {"source": q.source, "dimensions": q.dimensions, "text_en": q.text_en, "text_cn": q.text_cn,
                     **({"classes": q.classes} if q.classes is not None else {})}
                ),
            )
            for q in chosen
        )
        qrels = Qrels.from_dict(
            {q.id: {p: 1 for p in q.ground_truth} for q in chosen if q.ground_truth is not None}
        )
        return queries, qrels


# --------------------------------------------------------------------------- reading


def read_album(folder: PathLike) -> Album:
    """Read a PhotoBench album folder (see the module docstring)."""
    root = Path(folder)
    meta_path = root / "metadata.json"
    query_files = sorted(root.glob("*_query.json"), key=lambda p: (p.name != "protected_query.json", p.name))
    if not meta_path.is_file() or not query_files:
        raise FinegrainError(
            f"{str(root)!r} is not a PhotoBench album folder",
            "it needs metadata.json and at least one *_query.json",
        )
    people = _read_people(root)
    photos = _read_photos(meta_path, root, people)
    queries = _read_queries(query_files, photos)
    return Album(root.name, str(root), MappingProxyType(photos), MappingProxyType(people), queries)


def _read_photos(path: Path, root: Path, people: Mapping[str, Person]) -> dict[str, Photo]:
    data, text = read_json(path)
    if not isinstance(data, dict):
        raise DataFormatError(path, 1, "a JSON object {filename: {latitude, longitude, time}}", type(data).__name__)
    faces = _read_image_faces(root, people, data)
    photos: dict[str, Photo] = {}
    for name, rec in data.items():
        where = line_of(text, name)
        if not isinstance(rec, dict):
            raise DataFormatError(path, where, f"an object with latitude, longitude, time for {name!r}", repr(rec))
        lat = _coord(path, where, name, rec, "latitude", 90.0)
        lon = _coord(path, where, name, rec, "longitude", 180.0)
        if (lat is None) != (lon is None):
            raise DataFormatError(path, where, f"both or neither of latitude and longitude for {name!r}", repr(rec))
        photos[name] = Photo(name, lat, lon, _time(path, where, name, rec.get("time")), faces.get(name, ()))
    return photos


def _coord(path: Path, where: int | None, name: str, rec: Mapping[str, Any], key: str, limit: float) -> float | None:
    value = rec.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not -limit <= value <= limit:
        raise DataFormatError(path, where, f"{key} of {name!r} as a number in [-{limit:g}, {limit:g}] or null", repr(value))
    return float(value)


def _time(path: Path, where: int | None, name: str, value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            pass
    raise DataFormatError(path, where, f"time of {name!r} as an ISO date-time like 2025-10-04T16:40:41, or empty", repr(value))


def _read_people(root: Path) -> dict[str, Person]:
    names: dict[str, dict[str, tuple[str, ...]]] = {}
    for lang in LANGS:
        path = root / f"face_info_{lang}.json"
        if not path.is_file():
            continue
        data, text = read_json(path)
        table = data.get("face_id_to_nicknames") if isinstance(data, dict) else None
        if not isinstance(table, dict):
            raise DataFormatError(path, 1, 'an object with "face_id_to_nicknames"', _short(data))
        for fid, nicks in table.items():
            if not isinstance(nicks, list) or not all(isinstance(x, str) for x in nicks):
                raise DataFormatError(path, line_of(text, fid), f"a list of nicknames for face {fid!r}", repr(nicks))
            names.setdefault(str(fid), {})[lang] = tuple(nicks)
    return {
        fid: Person(fid, by_lang.get("en", ()), by_lang.get("cn", ()))
        for fid, by_lang in sorted(names.items(), key=lambda kv: _face_key(kv[0]))
    }


def _read_image_faces(root: Path, people: Mapping[str, Person], photos: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """filename -> face ids; the files of both languages must agree."""
    result: dict[str, tuple[str, ...]] | None = None
    first: Path | None = None
    for lang in LANGS:
        path = root / f"face_info_{lang}.json"
        if not path.is_file():
            continue
        data, text = read_json(path)
        table = data.get("image_to_face_ids", {})
        if not isinstance(table, dict):
            raise DataFormatError(path, line_of(text, "image_to_face_ids"), "an object filename -> list of face ids", _short(table))
        faces: dict[str, tuple[str, ...]] = {}
        for name, ids in table.items():
            where = line_of(text, name)
            if not isinstance(ids, list):
                raise DataFormatError(path, where, f"a list of face ids for {name!r}", repr(ids))
            ids = tuple(str(i) for i in ids)
            if name not in photos:
                raise DataFormatError(path, where, "file names of metadata.json", name)
            unknown = [i for i in ids if i not in people]
            if unknown:
                raise DataFormatError(path, where, "face ids listed in face_id_to_nicknames", unknown[0])
            faces[name] = ids
        if result is None:
            result, first = faces, path
        elif faces != result:
            bad = next(k for k in sorted(set(faces) | set(result)) if faces.get(k) != result.get(k))
            raise DataFormatError(
                path, line_of(text, bad), f"the same faces as {first.name} for {bad!r}", repr(faces.get(bad)),
            )
    return result or {}


def _read_queries(files: Sequence[Path], photos: Mapping[str, Photo]) -> tuple[PhotoQuery, ...]:
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for path in files:
        data, text = read_json(path)
        if not isinstance(data, list):
            raise DataFormatError(path, 1, "a JSON list of query objects", type(data).__name__)
        in_file: set[tuple[str, str]] = set()
        for i, obj in enumerate(data):
            rec = _parse_query(path, text, i, obj, photos)
            key = (rec["text_cn"], rec["text_en"])
            where = rec["line"]
            if key in in_file:
                raise DataFormatError(path, where, "each query once per file", f"{key[1]!r} / {key[0]!r} again")
            in_file.add(key)
            if key not in merged:
                merged[key] = rec
                continue
            old = merged[key]
            for k in ("source", "dimensions"):
                if old[k] != rec[k]:
                    raise DataFormatError(
                        path, where, f"the same {k} as in {old['file']} for query {key[1]!r}", repr(rec[k]),
                    )
            if rec["ground_truth"] is not None:
                if old["ground_truth"] is not None and set(old["ground_truth"]) != set(rec["ground_truth"]):
                    raise DataFormatError(
                        path, where, f"the same ground truth as in {old['file']} for query {key[1]!r}",
                        repr(rec["ground_truth"]),
                    )
                old["ground_truth"] = rec["ground_truth"]
            if rec["classes"] is not None:
                if old["classes"] is not None and old["classes"] != rec["classes"]:
                    raise DataFormatError(
                        path, where, f"the same 'Class' as in {old['file']} for query {key[1]!r}",
                        repr(list(rec["classes"])), "give a query the same class tags in every file",
                    )
                old["classes"] = rec["classes"]
    width = max(3, len(str(len(merged) - 1)))
    return tuple(
        PhotoQuery(
            f"q{i:0{width}d}",
            r["text_en"],
            r["text_cn"],
            r["source"],
            MappingProxyType(r["dimensions"]),
            r["ground_truth"],
            r["classes"],
        )
        for i, r in enumerate(merged.values())
    )


def _parse_query(path: Path, text: str, i: int, obj: Any, photos: Mapping[str, Photo]) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise DataFormatError(path, None, f"query #{i} as a JSON object", _short(obj))
    anchor = [obj[k] for k in ("query_cn", "query_en") if isinstance(obj.get(k), str)]
    where = line_of(text, anchor[0]) if anchor else None
    texts = {}
    for key in ("query_en", "query_cn"):
        value = obj.get(key)
        if not isinstance(value, str) or not value.strip():
            raise DataFormatError(path, where, f"query #{i} to have a non-empty {key!r}", _short(obj))
        texts[key] = value
    source = obj.get("Source")
    if source not in SOURCES:
        raise DataFormatError(path, where, f"'Source' one of {', '.join(SOURCES)}", repr(source))
    dims = {}
    for d in DIMENSIONS:
        value = obj.get(d)
        if value not in DIMENSION_VALUES:
            raise DataFormatError(path, where, f"{d!r} null, 'fact' or 'cognitive'", repr(value))
        dims[d] = value
    gt = obj.get("ground_truth")
    if gt is not None:
        if not isinstance(gt, list) or not all(isinstance(x, str) for x in gt):
            raise DataFormatError(path, where, "'ground_truth' as a list of file names", _short(gt))
        if len(set(gt)) != len(gt):
            dup = next(x for x in gt if gt.count(x) > 1)
            raise DataFormatError(path, where, "each ground-truth file once", dup)
        missing = [x for x in gt if x not in photos]
        if missing:
            raise DataFormatError(path, where, "ground-truth file names of metadata.json", missing[0])
        count = obj.get("ground_truth_count")
        if count is not None and count != len(gt):
            raise DataFormatError(
                path, where, f"'ground_truth_count' equal to the {len(gt)} listed files", repr(count)
            )
        gt = tuple(gt)
    return {
        "classes": _classes(path, where, i, texts["query_en"], obj.get("Class")),
        "text_en": texts["query_en"],
        "text_cn": texts["query_cn"],
        "source": source,
        "dimensions": dims,
        "ground_truth": gt,
        "file": path.name,
        "line": where,
    }


def _classes(path: Path, where: int | None, i: int, text: str, value: Any) -> tuple[str, ...] | None:
    """The ``Class`` tags of query #``i`` (None when absent), each a known tag, each once, in file order."""
    if value is None:
        return None
    known = ", ".join(QUERY_CLASSES)
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise DataFormatError(path, where, f"'Class' of query #{i} ({text!r}) as a list of tags", _short(value),
                              f"write e.g. [\"place:city\", \"holiday\"]; tags: {known}")
    for tag in value:
        if tag not in QUERY_CLASSES:
            close = difflib.get_close_matches(tag, QUERY_CLASSES, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise DataFormatError(path, where, f"'Class' tags of query #{i} ({text!r}) from the known tags", repr(tag),
                                  f"{hint}use {known}")
    if len(set(value)) != len(value):
        dup = next(x for x in value if value.count(x) > 1)
        raise DataFormatError(path, where, f"each 'Class' tag of query #{i} ({text!r}) once", repr(dup),
                              "list each tag once")
    return tuple(value)


def photobench_lang(lang: str) -> Literal["en", "cn"]:
    """PhotoBench's spelling of a language (``"en"`` or ``"cn"``, its field suffixes) for ``lang``
    (anything :func:`finegrain.text.parse_lang` reads: ``zh``, ``en``, ``cn``...). The one place ``cn`` is made."""
    try:
        code = parse_lang(lang)
    except FinegrainError:
        raise FinegrainError(f"unknown PhotoBench language {lang!r}", "use 'en' or 'zh' (also written 'cn')") from None
    return "cn" if code is Lang.ZH else "en"



def _face_key(fid: str) -> tuple[int, int, str, str]:
    """Numeric face ids in numeric order (compared by length, then text: no int() of a huge id), others after."""
    if fid.isascii() and fid.isdigit():
        digits = fid.lstrip("0") or "0"
        return (0, len(digits), digits, fid)
    return (1, 0, fid, fid)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
