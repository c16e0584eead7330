"""Generated PhotoBench-style albums unlike album1: a holdout that measures generalisation.

``make_generated_album(dst, seed, split)`` writes a PhotoBench album folder (the five files
:mod:`finegrain.io.photobench` reads) for the life of an invented owner (:mod:`.life`): another
home city and province than album1's, trips in China and abroad, venues and landmarks, other
years with statutory holidays and birthdays, people named by name, role and kinship, a shared
nickname and children; about a thousand photos and three hundred bilingual queries in
PhotoBench's style, labelled by construction (:mod:`.queries`). Every query, with its ground
truth, is in ``samples_query.json`` (so ``evaluate_album`` scores them all) and, without it, in
``protected_query.json``; each has a ``Class`` list. ``generated.json`` records the seed, the
split, the people's roles, the places and every query's constraint.

**Dev and test.** Rules are developed on album1 and on dev albums; test albums are held out.
Seeds decide the split: dev seeds are 1-999 (:data:`DEV_SEEDS`), test seeds 1001-1999
(:data:`TEST_SEEDS`); a seed of one split is refused for the other. A test album also draws from
the held-out third of every bank (:mod:`.split`): phrasing templates, Chinese cities and cities
abroad, surnames, given names, English names, children's pet names and scenes that no dev album
uses.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from finegrain.album.bench.generated.life import Geo, Life, make_life
from finegrain.album.bench.generated.photos import GenPhoto, make_photos
from finegrain.album.bench.generated.queries import GenQuery, QueryMaker
from finegrain.album.bench.generated.split import check_split
from finegrain.atomic import write_text
from finegrain.errors import FinegrainError

__all__ = ["DEV_SEEDS", "TEST_SEEDS", "QUERY_PLAN", "GeneratedAlbum", "make_generated_album", "split_of_seed"]

DEV_SEEDS = range(1, 1000)
TEST_SEEDS = range(1001, 2000)

# query kind -> how many an album gets (fewer when the album has nothing to ask)
QUERY_PLAN: dict[str, int] = {
    "district": 14, "city": 8, "province": 5, "abroad": 7, "country": 3, "venue": 12, "time": 22, "holiday": 26,
    "zero_place": 8, "zero_time": 3,
    "person": 18, "kids": 4, "shared": 4, "people": 16, "zero_people": 4,
    "people_place": 12, "people_time": 12, "people_holiday": 6, "zero_people_place": 4,
    "scene": 40, "scene_place": 15, "scene_time": 15, "scene_people": 24, "scene_people_place": 6, "scene_people_time": 6,
}


@dataclass(frozen=True)
class GeneratedAlbum:
    """What ``make_generated_album`` wrote."""

    path: Path
    seed: int
    split: str
    n_photos: int
    n_queries: int
    sources: dict[str, int]
    classes: dict[str, int]


def split_of_seed(seed: int) -> str:
    if seed in DEV_SEEDS:
        return "dev"
    if seed in TEST_SEEDS:
        return "test"
    raise FinegrainError(f"seed {seed} is neither a dev seed (1-999) nor a test seed (1001-1999)",
                         "pick a seed from one of the two ranges")


@lru_cache(maxsize=1)
def _geo() -> Geo:
    """The boundary data, loaded once for all the albums a process writes."""
    return Geo()


def make_generated_album(dst: str | Path, seed: int, split: str = "dev", *, holiday_reading: str = "span",
                         plan: dict[str, int] | None = None) -> GeneratedAlbum:
    """Write the generated album of ``seed`` (of ``split``: 'dev' or 'test') to the folder ``dst``.

    ``holiday_reading``: what a plain holiday name means ("National Day 2019"): 'span', the
    official days off (default), or 'day', the day the holiday is named after. ``plan``: query
    counts by kind (default :data:`QUERY_PLAN`)."""
    check_split(split)
    if split_of_seed(seed) != split:
        raise FinegrainError(f"seed {seed} is a {split_of_seed(seed)} seed, not a {split} one",
                             "dev seeds are 1-999, test seeds 1001-1999")
    rng = random.Random(f"finegrain-generated-{seed}")
    geo = _geo()
    life = make_life(rng, split)
    photos = make_photos(life, rng, geo)
    maker = QueryMaker(life, photos, rng, split, geo, holiday_reading)
    queries: list[GenQuery] = []
    seen: set[tuple[str, str]] = set()
    for kind, count in (plan or QUERY_PLAN).items():
        got = tries = 0
        while got < count and tries < count * 12:
            tries += 1
            q = maker.make(kind)
            if q is None or (q.en, q.zh) in seen:
                continue
            zero_kind = kind.startswith("zero")
            if zero_kind != (not q.ground_truth) and kind != "holiday":
                continue
            seen.add((q.en, q.zh))
            queries.append(q)
            got += 1
    dst = Path(dst)
    _write(dst / "metadata.json", {p.name: {"latitude": p.lat, "longitude": p.lon,
                                            "time": p.time.isoformat() if p.time else ""} for p in photos})
    faces = {p.name: list(p.faces) for p in photos if p.faces}
    for lang in ("en", "cn"):
        names = {p.id: (p.en if lang == "en" else p.zh) for p in life.people}
        _write(dst / f"face_info_{lang}.json", {"face_id_to_nicknames": names, "image_to_face_ids": faces})
    _write(dst / "protected_query.json", [q.to_json(False) for q in queries])
    _write(dst / "samples_query.json", [q.to_json(True) for q in queries])
    _write(dst / "generated.json", _record(seed, split, holiday_reading, life, photos, queries))
    return GeneratedAlbum(dst, seed, split, len(photos), len(queries), dict(Counter(q.source for q in queries)),
                          dict(Counter(c for q in queries for c in q.classes)))


def _record(seed: int, split: str, reading: str, life: Life, photos: list[GenPhoto], queries: list[GenQuery]) -> dict[str, Any]:
    return {
        "seed": seed, "split": split, "holiday_reading": reading, "years": list(life.years),
        "people": [{"id": p.id, "en": p.en, "cn": p.zh, "role_en": p.role_en, "role_cn": p.role_zh, "circle": p.circle,
                    "birthday": list(p.birthday) if p.birthday else None} for p in life.people],
        "shared_nickname": {"en": life.shared[0], "cn": life.shared[1], "ids": list(life.shared[2])},
        "home": life.home.zh, "home_districts": [d.zh for d in life.home_districts],
        "trips": [c.zh for c in life.trips], "abroad": [c.en for c in life.abroad],
        "holiday_days": {f"{k}/{y}": [d.isoformat() for d in days] for (k, y), days in sorted(life.holidays_with_photos.items())},
        "scenes": {p.name: p.scene for p in photos},
        "queries": [{"query_en": q.en, "query_cn": q.zh, "kind": q.kind, "constraint": q.constraint.to_dict(),
                     "templates": [list(t) for t in q.templates]}
                    for q in queries],
    }


def _write(path: Path, data: Any) -> None:
    write_text(path, json.dumps(data, ensure_ascii=False, indent=1))
