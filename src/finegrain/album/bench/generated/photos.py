"""A generated album's photos, and what each query constraint selects among them.

:func:`make_photos` turns the sessions of a :class:`~.life.Life` into photos (positions a few
metres apart around the session's spot, capture times seconds to minutes apart, the faces of a
subset of the session's group, the session's scene); a few photos lose their GPS position or
their capture time, as exported photos do.

A :class:`Constraint` is what a query asks of the metadata and the faces (and of the scene, for
the visual part); :func:`select` gives the photos that meet it. Every ground truth is
``select`` of the query's constraint, so labels follow from construction.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from finegrain.album.bench.generated.life import Geo, Life, offset_km
from finegrain.album.bench.generated.world import CHINESE_CITIES, CITIES_ABROAD
from finegrain.album.engine.profile.places import km

VENUE_KM = 0.2  # a photo is "at" a venue within this distance of the venue's point


@dataclass(frozen=True, slots=True)
class GenPhoto:
    name: str
    lat: float | None
    lon: float | None
    time: datetime | None
    faces: tuple[str, ...]
    scene: str  # English scene label
    district: str | None  # adcodes, from the boundary data at the stored position
    city: str | None
    province: str | None
    abroad: str | None  # English name of the city abroad whose area holds the photo
    country: str | None  # its country (English)
    venues: frozenset[str]  # English names of the venues and landmarks within VENUE_KM


@dataclass(frozen=True, slots=True)
class Constraint:
    """``place`` is (level, key): ("district"|"city"|"province", adcode), ("abroad", city),
    ("country", country), ("venue", venue); ``days`` inclusive date ranges; ``all_of`` face ids
    that must all appear, ``any_of`` face ids of which one must; ``scene`` the visual part."""

    place: tuple[str, str] | None = None
    days: tuple[tuple[date, date], ...] = ()
    all_of: tuple[str, ...] = ()
    any_of: tuple[str, ...] = ()
    scene: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"place": list(self.place) if self.place else None,
                "days": [[a.isoformat(), b.isoformat()] for a, b in self.days],
                "all_of": list(self.all_of), "any_of": list(self.any_of), "scene": self.scene}


def meets(p: GenPhoto, c: Constraint) -> bool:
    if c.place is not None:
        level, key = c.place
        got = {"district": p.district, "city": p.city, "province": p.province, "abroad": p.abroad,
               "country": p.country}.get(level)
        if level == "venue":
            if key not in p.venues:
                return False
        elif got != key:
            return False
    if c.days:
        if p.time is None or not any(a <= p.time.date() <= b for a, b in c.days):
            return False
    if c.all_of and not set(c.all_of) <= set(p.faces):
        return False
    if c.any_of and not set(c.any_of) & set(p.faces):
        return False
    return c.scene is None or c.scene == p.scene


def select(photos: list[GenPhoto], c: Constraint) -> list[str]:
    return [p.name for p in photos if meets(p, c)]


_ALL_VENUES = [v for c in CHINESE_CITIES for v in c.venues] + [v for c in CITIES_ABROAD for v in c.landmarks]


def make_photos(life: Life, rng: random.Random, geo: Geo) -> list[GenPhoto]:
    photos: list[GenPhoto] = []
    district_codes: dict[tuple[str, str], str] = {}
    n = 0
    for s in life.sessions:
        kind, city, spot = s.place
        if kind == "district":
            key = (city.zh, spot.zh)
            if key not in district_codes:
                district_codes[key] = geo.district_code(city, spot)
            code = district_codes[key]
            anchor = geo.point_in(code, rng)
        elif kind == "venue":
            code = None
            anchor = offset_km(spot.lat, spot.lon, rng.uniform(0, 0.06), rng.uniform(0, 6.283))
        else:
            code = None
            if spot is not None:
                anchor = offset_km(spot.lat, spot.lon, rng.uniform(0, 0.06), rng.uniform(0, 6.283))
            else:
                anchor = offset_km(city.lat, city.lon, rng.uniform(0, city.radius_km * 0.5), rng.uniform(0, 6.283))
        t = s.start
        for _ in range(s.n):
            n += 1
            lat, lon = offset_km(anchor[0], anchor[1], rng.uniform(0, 0.04), rng.uniform(0, 6.283))
            lat, lon = round(lat, 4), round(lon, 4)
            if code is not None and not geo.inside(lat, lon, code):
                lat, lon = anchor
            faces = tuple(sorted((f for f in s.group if rng.random() < 0.65), key=int))
            if s.group and not faces and rng.random() < 0.7:
                faces = (rng.choice(s.group),)
            t = t + timedelta(seconds=rng.randint(5, 600))
            has_gps, has_time = rng.random() > 0.04, rng.random() > 0.025
            photos.append(_photo(f"IMG_{n:04d}.JPG", (lat, lon) if has_gps else None, t if has_time else None,
                                 faces, s.scene[0], geo))
    return photos


def _photo(name: str, point: tuple[float, float] | None, t: datetime | None, faces: tuple[str, ...], scene: str,
           geo: Geo) -> GenPhoto:
    district = city = province = abroad = country = None
    venues: frozenset[str] = frozenset()
    if point is not None:
        lat, lon = point
        r = geo.tool.reverse(lat, lon)
        if r is not None and r.province is not None:
            province = str(r.province.code)
            city = str(r.city.code) if r.city is not None else None
            district = str(r.district.code) if r.district is not None else None
        else:
            for c in CITIES_ABROAD:
                if km(lat, lon, c.lat, c.lon) <= c.radius_km:
                    abroad, country = c.en, c.country_en
        venues = frozenset(v.en for v in _ALL_VENUES if km(lat, lon, v.lat, v.lon) <= VENUE_KM)
    return GenPhoto(name, point[0] if point else None, point[1] if point else None, t, faces, scene,
                    district, city, province, abroad, country, venues)
