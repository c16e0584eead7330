"""A synthetic album catalog of any size, for query-latency benchmarks.

``build_synthetic_catalog(path, n, seed)`` writes ``n`` photos taken in
sessions (a burst of photos a few minutes apart at one spot, as people shoot),
spread over 2019-2025, around real Chinese cities (plus a few abroad), with
people appearing in social sessions and events for sessions of 3 or more
photos. Places come from the profile's reverse geocoder for a fixed set of
spots when it is installed (else from a built-in table); time tags from the
profile's ``time_tags`` when installed. The same ``(n, seed)`` gives the same
catalog.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from finegrain.album.engine.catalog import describe, is_postgres_url, open_catalog
from finegrain.album.engine.indexer import Profiler
from finegrain.album.engine.records import FaceOccurrence, Person, Photo, PhotoPlace
from finegrain.errors import FinegrainError

if TYPE_CHECKING:
    from finegrain.album.engine.catalog.postgres import PostgresCatalog
    from finegrain.album.engine.catalog.sqlite import SqliteCatalog

# (en, zh, province_en, province_zh, lat, lon, weight): the owner lives in Hangzhou.
CITIES = (
    ("Hangzhou", "杭州市", "Zhejiang", "浙江省", 30.274, 120.155, 40),
    ("Shaoxing", "绍兴市", "Zhejiang", "浙江省", 30.030, 120.580, 10),
    ("Shanghai", "上海市", "Shanghai", "上海市", 31.230, 121.473, 10),
    ("Beijing", "北京市", "Beijing", "北京市", 39.904, 116.407, 6),
    ("Nanjing", "南京市", "Jiangsu", "江苏省", 32.060, 118.796, 4),
    ("Suzhou", "苏州市", "Jiangsu", "江苏省", 31.299, 120.585, 4),
    ("Shenzhen", "深圳市", "Guangdong", "广东省", 22.543, 114.058, 4),
    ("Guangzhou", "广州市", "Guangdong", "广东省", 23.129, 113.264, 3),
    ("Chengdu", "成都市", "Sichuan", "四川省", 30.573, 104.066, 3),
    ("Xi'an", "西安市", "Shaanxi", "陕西省", 34.341, 108.940, 2),
    ("Guiyang", "贵阳市", "Guizhou", "贵州省", 26.647, 106.630, 2),
    ("Kunming", "昆明市", "Yunnan", "云南省", 25.038, 102.718, 2),
    ("Sanya", "三亚市", "Hainan", "海南省", 18.253, 109.512, 2),
    ("Qingdao", "青岛市", "Shandong", "山东省", 36.067, 120.383, 2),
    ("Xiamen", "厦门市", "Fujian", "福建省", 24.480, 118.089, 2),
    ("Harbin", "哈尔滨市", "Heilongjiang", "黑龙江省", 45.803, 126.535, 1),
)
SPOTS_PER_CITY = 6
N_PEOPLE = 40
START, END = datetime(2019, 1, 1), datetime(2025, 10, 31)
_SURNAMES = ("Wang", "Li", "Zhang", "Liu", "Chen", "Yang", "Zhao", "Huang", "Zhou", "Wu")
_SURNAMES_ZH = ("王", "李", "张", "刘", "陈", "杨", "赵", "黄", "周", "吴")
_GIVEN = ("Wei", "Fang", "Min", "Jing", "Lei", "Yan", "Tao", "Hui", "Ning", "Jun", "Xin", "Yu")
_GIVEN_ZH = ("伟", "芳", "敏", "静", "磊", "燕", "涛", "慧", "宁", "军", "欣", "宇")


@dataclass(frozen=True)
class SyntheticSummary:
    path: str
    photos: int
    people: int
    events: int
    photos_with_faces: int
    seconds: float


def build_synthetic_catalog(
    path: str | Path, n: int, seed: int = 0, *, profiler: Profiler | None = None, chunk: int = 5000
) -> SyntheticSummary:
    """Write ``n`` synthetic photos to a new catalog at ``path``: a file (refuses an existing one) or a
    ``postgresql://`` URL (refuses a database that holds photos)."""

    if n < 1:
        raise FinegrainError(f"n must be a positive number of photos, got {n!r}", "e.g. 100000")
    target = str(path).strip() if is_postgres_url(path) else Path(path)
    if isinstance(target, Path) and target.exists():
        raise FinegrainError(f"{str(target)!r} already exists", "pass a new path; a synthetic catalog is built from scratch")
    started = time.perf_counter()
    rng = random.Random(seed)
    prof = profiler if profiler is not None else Profiler.load(faces=False, events=False)
    spots = _spots(rng, prof)
    weights = [w for *_, w in CITIES for _ in range(SPOTS_PER_CITY)]
    people = _people(rng)
    store = open_catalog(target)
    if store.count_photos():
        store.close()
        raise FinegrainError(f"the catalog {describe(target)!r} already holds photos",
                             "pass an empty database; a synthetic catalog is built from scratch")
    tag_cache: dict[tuple[str, int, str | None], tuple[str, ...]] = {}
    n_faces = 0
    events: dict[str, str] = {}
    try:
        store.set_meta("source", {"kind": "synthetic", "n": n, "seed": seed})
        with store.transaction():
            for p in people:
                store.put_person(p)
        span = (END - START).total_seconds()
        made = session = 0
        pending: list[tuple[Photo, PhotoPlace | None, tuple[str, ...], list[FaceOccurrence]]] = []
        while made < n:
            session += 1
            size = min(n - made, max(1, int(rng.expovariate(1 / 6))))
            t = START + timedelta(seconds=rng.uniform(0, span))
            spot = rng.choices(range(len(spots)), weights)[0]
            lat0, lon0, place = spots[spot]
            group = rng.sample(range(2, N_PEOPLE + 1), rng.randint(1, 3)) if rng.random() < 0.35 else []
            with_me = bool(group) and rng.random() < 0.5
            event = f"e{session:06d}" if size >= 3 else None
            for _ in range(size):
                made += 1
                pid = f"IMG_{made:07d}.jpg"
                no_gps, no_time = rng.random() < 0.02, rng.random() < 0.01
                photo = Photo(
                    id=pid, path=pid, taken_at=None if no_time else t.replace(microsecond=0),
                    lat=None if no_gps else round(lat0 + rng.gauss(0, 0.0005), 6),
                    lon=None if no_gps else round(lon0 + rng.gauss(0, 0.0005), 6),
                    camera="Apple iPhone 13", event_id=None,
                )
                faces: list[FaceOccurrence] = []
                if group and rng.random() < 0.7:
                    who = [f"{g}" for g in group if rng.random() < 0.8] + (["1"] if with_me and rng.random() < 0.7 else [])
                    faces = [FaceOccurrence(pid, w, None, i) for i, w in enumerate(who)]
                    n_faces += bool(faces)
                tags: tuple[str, ...] = ()
                if photo.taken_at is not None:
                    cc = place.country_code if place else None
                    key = (photo.taken_at.date().isoformat(), photo.taken_at.hour, cc)
                    if key not in tag_cache:
                        tag_cache[key] = prof.tags(photo.taken_at, cc)
                    tags = tag_cache[key]
                    if event is not None:
                        events[pid] = event
                pending.append((photo, None if no_gps else place, tags, faces))
                t += timedelta(seconds=rng.randint(10, 1800))
                if len(pending) >= chunk:
                    _flush(store, pending)
        _flush(store, pending)
        store.set_events(events)
        summary = SyntheticSummary(describe(target), n, len(people), len(store.events()), n_faces, time.perf_counter() - started)
    finally:
        store.close()
    return summary


def _flush(store: SqliteCatalog | PostgresCatalog, pending: list[tuple[Photo, PhotoPlace | None, tuple[str, ...], list[FaceOccurrence]]]) -> None:
    with store.transaction():
        store.put_photos(p for p, *_ in pending)
        for photo, place, tags, faces in pending:
            if place is not None:
                store.set_place(photo.id, place)
            if tags:
                store.set_time_tags(photo.id, tags)
            if faces:
                store.set_faces(photo.id, faces)
    pending.clear()


def _spots(rng: random.Random, prof: Profiler) -> list[tuple[float, float, PhotoPlace | None]]:
    out = []
    for en, zh, prov_en, prov_zh, lat, lon, _ in CITIES:
        for _ in range(SPOTS_PER_CITY):
            la, lo = round(lat + rng.uniform(-0.08, 0.08), 5), round(lon + rng.uniform(-0.08, 0.08), 5)
            place = prof.place(la, lo)
            if place is None:
                place = PhotoPlace(country_en="China", country_zh="中国", province_en=prov_en, province_zh=prov_zh,
                                   city_en=en, city_zh=zh, country_code="CN")
            out.append((la, lo, place))
    return out


def _people(rng: random.Random) -> list[Person]:
    people = [Person("1", ("me", "myself", "我"), True)]
    for i in range(2, N_PEOPLE + 1):
        s = rng.randrange(len(_SURNAMES))
        g = rng.randrange(len(_GIVEN))
        people.append(Person(str(i), (f"{_SURNAMES[s]} {_GIVEN[g]}", f"Xiao {_GIVEN[g]}", _SURNAMES_ZH[s] + _GIVEN_ZH[g])))
    return people
