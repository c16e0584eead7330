"""Offline reverse geocoding to place names in English and Chinese.

Two gazetteers, both offline:

Both expect WGS-84 points (a GPS fix). Coordinates a Chinese map SDK wrote in
GCJ-02 are converted first (:mod:`finegrain.album.engine.profile.datum`, ``--datum gcj02``).

- ``geotool-cn`` (DataV.GeoAtlas boundaries, published in GCJ-02 and shipped
  converted to WGS-84, per its ``DATA_VERSION.json``): the Chinese province,
  city and district *containing* the point (point in polygon), Chinese names and
  adcodes. Used first; it covers mainland China, Hong Kong, Macao and Taiwan
  (Taiwan at province level only).
- ``reverse_geocoder`` (GeoNames towns of 1,000+ people, worldwide, English):
  the *nearest* town with its country code, admin1 and admin2. It gives the
  country and the levels outside China, and the ``locality`` (nearest town) everywhere.
- ``cities.txt`` (:mod:`finegrain.album.engine.profile.cities`): the areas of large cities
  abroad and of their boroughs. A point inside one has that city as its ``city`` (and the
  borough as its ``district``) whatever town is nearest: a photo at the Eiffel Tower is in
  Paris, not in the nearest town's Hauts-de-Seine (kept as an alias of the city level).

English names of Chinese regions are their readings with the level word ("Keqiao
District", "Changzhi", "Shan County", "Zhejiang"): the level suffix and the reading of a name
(conventional names such as Shaanxi and Inner Mongolia, then CC-CEDICT's place-name readings,
then pypinyin) are decided in :mod:`finegrain.album.engine.profile.place_names`. Country names in both languages come from a
table of about 90 countries (the code itself when a country is not in it).

A point farther than ``max_km`` (default 150 km) from any GeoNames town and
outside China is in the open sea or a desert: :func:`reverse_geocode` returns None.

Aliases are what a query may say, lower-cased: the full Chinese name and the
name without its suffix (柯桥区, 柯桥), the pinyin (keqiao, "ke qiao"), the
English name with the level word ("keqiao district", "shaoxing city",
"zhejiang province") and well-known English names.

The gazetteers load lazily on first use (reverse_geocoder takes a few
seconds), once per :class:`Geocoder`; module functions share one default
instance. Lookups are cached per point rounded to 4 decimals (about 11 m).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from finegrain._lazy import require
from finegrain.album.engine.profile.cities import areas_at, km
from finegrain.album.engine.profile.place_names import (
    CONVENTIONAL_EN,
    LEVEL_EN,
    english_name,
    join_syllables,
    short_zh,
    split_level,
)
from finegrain.album.engine.profile.records import PLACE_LEVELS, Place, PlaceKey, PlaceLevel
from finegrain.errors import FinegrainError

__all__ = [
    "Geocoder",
    "km",
    "reverse_geocode",
    "reverse_geocode_many",
    "place_vocabulary",
    "country_level",
    "chinese_level",
]

DEFAULT_MAX_KM = 150.0
_CACHE_DIGITS = 4

_COUNTRIES_FILE = Path(__file__).with_name("countries.txt")  # code|English|Chinese|aliases;...


@lru_cache(maxsize=1)
def _countries() -> dict[str, tuple[str, str, tuple[str, ...]]]:
    """ISO code -> (English, Chinese, extra aliases), from ``countries.txt`` beside this module."""
    out = {}
    for line in _COUNTRIES_FILE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            code, en, zh, aliases = line.split("|")
            out[code] = (en, zh, tuple(a for a in aliases.split(";") if a))
    return out

_EN_LEVEL = {"province": "province", "city": "city", "district": "district"}


def _short_zh(name: str) -> str:
    """柯桥区 -> 柯桥, 广西壮族自治区 -> 广西, 恩施土家族苗族自治州 -> 恩施; the name itself if nothing strips
    (:func:`finegrain.album.engine.profile.place_names.short_zh`)."""
    return short_zh(name)


def chinese_level(level: str, zh: str, code: str = "") -> PlaceLevel:
    """A Chinese region as a :class:`PlaceLevel` with its English names and aliases.

    The English name is the stem's reading (:mod:`~finegrain.album.engine.profile.place_names`)
    and, at district level, the level word ("Changzhi", "Guoyang County", "Shan County",
    "Wanbailin District", "Shennongjia Forestry District"). A one-character stem is written with
    its suffix's pinyin as well ("Shanxian", "shan xian"); alone it is no alias, a single syllable
    being an English word too often (和县 "he", 攸县 "you", 陇县 "long")."""
    parts = split_level(zh)
    short = short_zh(zh)
    name = english_name(zh)
    ens, sylls = name.spellings, name.syllables
    level_en = LEVEL_EN.get(parts.suffix) if level == "district" else None
    one_char = len(parts.stem) == 1
    suffix_sylls = _suffix_syllables(parts.suffix) if one_char else ()
    whole = join_syllables((*sylls, *suffix_sylls)).capitalize() if one_char and sylls else ""
    en = ens[0] if ens else zh
    if level_en:
        en = f"{en} {level_en}"
    elif whole:  # 芒市 at district level: "Mangshi", not "Mang"
        en = whole
    aliases = {zh, short}
    if parts.suffix in ("市", "区", "县", "省") and not parts.ethnic and len(parts.stem) >= 2:
        aliases.add(parts.stem + parts.suffix)
    if level == "district" and parts.ethnic and parts.suffix == "自治县":
        aliases.add(parts.stem + "县")  # 长白朝鲜族自治县 -> 长白县
    level_word = _EN_LEVEL.get(level)
    for e in ens:
        low = e.lower()
        plain = low.replace("'", "")
        if not one_char:
            aliases.update({low, plain})
            if level_word:
                aliases.update({f"{low} {level_word}", f"{plain} {level_word}"})
        if level_en:
            aliases.update({f"{low} {level_en.lower()}", f"{plain} {level_en.lower()}"})
            if parts.suffix.startswith("自治"):  # "changbai county" for "Changbai Autonomous County"
                aliases.add(f"{plain} {level_en.lower().removeprefix('autonomous ')}")
        if parts.suffix == "市" and level == "district":  # county-level city: 诸暨市 -> "zhuji city"
            aliases.add(f"{plain} city")
    if whole:
        aliases.update({whole.lower().replace("'", ""), " ".join((*sylls, *suffix_sylls))})
    if len(sylls) > 1 and parts.stem not in CONVENTIONAL_EN:
        aliases.add(" ".join(sylls))
    return PlaceLevel(level, en, zh, code, tuple(sorted(a for a in aliases if a)))


def _suffix_syllables(suffix: str) -> tuple[str, ...]:
    """Pinyin of a level suffix (县 -> xian, 市 -> shi, 区 -> qu)."""
    return tuple(s.lower() for s in require("pypinyin", "geo").lazy_pinyin(suffix, errors="ignore"))


def country_level(code: str) -> PlaceLevel:
    """A country by its ISO 3166-1 alpha-2 code, named in English and Chinese when in the table."""
    code = code.upper()
    en, zh, extra = _countries().get(code, (code, "", ()))
    aliases = {en.lower(), zh, code.lower(), *(a.lower() for a in extra)}
    if zh.startswith("中国") and len(zh) > 2:
        aliases.add(zh[2:])
    return PlaceLevel("country", en, zh, code, tuple(sorted(a for a in aliases if a)))


def _foreign_level(level: str, name: str) -> PlaceLevel | None:
    name = name.strip()
    if not name:
        return None
    low = name.lower()
    aliases = {low}
    for tail in (" sheng", " shi", " province", " prefecture", " city", " district", " county"):
        if low.endswith(tail) and len(low) > len(tail) + 1:
            aliases.add(low[: -len(tail)])
    if level in _EN_LEVEL:
        aliases |= {f"{a} {_EN_LEVEL[level]}" for a in list(aliases)}
    return PlaceLevel(level, name, "", "", tuple(sorted(aliases)))


# adcode prefix of the regions GeoNames lists as their own country code
_SPECIAL_REGIONS = {"81": "HK", "82": "MO", "71": "TW"}


class Geocoder:
    """Both gazetteers, loaded on first use, with a per-point cache.

    ``max_km``: a point outside China farther than this from the nearest
    GeoNames town has no place (None).
    """

    def __init__(self, *, max_km: float = DEFAULT_MAX_KM) -> None:
        if not max_km > 0:
            raise FinegrainError(f"max_km must be positive, got {max_km!r}", "use e.g. 150 (kilometres)")
        self.max_km = float(max_km)
        self._lock = threading.Lock()
        self._rg: Any = None
        self._cn: Any = None
        self._cache: dict[tuple[float, float], Place | None] = {}

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._rg is None:
                rg = require("reverse_geocoder", "geo")
                geotool = require("GeoToolCN", "geo", "geotool-cn")
                require("pypinyin", "geo")
                require("pypinyin_dict", "geo", "pypinyin-dict")
                self._cn = geotool.GeoTool()
                self._rg = rg.RGeocoder(mode=1, verbose=False)
        return self._rg, self._cn

    def reverse(self, lat: float, lon: float) -> Place | None:
        return self.reverse_many([(lat, lon)])[0]

    def reverse_many(self, points: Iterable[tuple[float, float]]) -> list[Place | None]:
        """Places of many (lat, lon) points, in order; one GeoNames query for all new points."""
        keys = [_check_point(p) for p in points]
        todo = sorted({k for k in keys if k not in self._cache})
        if todo:
            rg, cn = self._load()
            towns = rg.query(todo)
            for k, town in zip(todo, towns, strict=True):
                self._cache[k] = self._place(k, town, cn.reverse(*k))
        return [self._cache[k] for k in keys]

    def _place(self, point: tuple[float, float], town: dict[str, str], cn: Any) -> Place | None:
        lat, lon = point
        near = km(lat, lon, float(town["lat"]), float(town["lon"])) <= self.max_km
        locality = _foreign_level("locality", town.get("name", "")) if near else None
        if cn.province is not None:
            code = _SPECIAL_REGIONS.get(cn.province.code[:2], "CN")
            province = chinese_level("province", cn.province.name, cn.province.code)
            city = chinese_level("city", cn.city.name, cn.city.code) if cn.city is not None else None
            district = chinese_level("district", cn.district.name, cn.district.code) if cn.district else None
            if city is None and code == "TW":  # GeoToolCN stops at Taiwan's province: its cities' areas
                area, borough = areas_at(lat, lon, code)
                city = area.place_level() if area is not None else None
                district = borough.place_level() if borough is not None else None
            return Place(country_level(code), province, city, district, locality, "geotool-cn+geonames")
        if not near:
            return None
        admin1, admin2 = town.get("admin1", ""), town.get("admin2", "")
        name = town.get("name", "")
        province = _foreign_level("province", admin1)
        city = _foreign_level("city", admin2 or name)
        # a large city covers its area, whatever town is nearest (the Eiffel Tower is in Paris, not
        # Vanves); the nearest town's own admin area stays an alias ("greater london")
        area, borough = areas_at(lat, lon, town["cc"])
        district = None
        if area is not None:
            city = area.place_level(city.aliases if city is not None else ())
            district = borough.place_level() if borough is not None else None
        return Place(country_level(town["cc"]), province, city, district, locality, "geonames")


def _check_point(p: Any) -> tuple[float, float]:
    try:
        lat, lon = (float(v) for v in p)
    except (TypeError, ValueError) as exc:
        raise FinegrainError(f"not a (latitude, longitude) pair: {p!r}", "pass two numbers in degrees") from exc
    if not (-90.0 <= lat <= 90.0 and -180.0 <= lon <= 180.0) or math.isnan(lat) or math.isnan(lon):
        raise FinegrainError(
            f"coordinates out of range: latitude {lat!r}, longitude {lon!r}",
            "latitude must be in [-90, 90] and longitude in [-180, 180] (degrees, WGS-84)",
        )
    return (round(lat, _CACHE_DIGITS), round(lon, _CACHE_DIGITS))


@lru_cache(maxsize=1)
def _default() -> Geocoder:
    return Geocoder()


def reverse_geocode(lat: float, lon: float) -> Place | None:
    """The place of a WGS-84 point, or None in the open sea / far from any town."""
    return _default().reverse(lat, lon)


def reverse_geocode_many(points: Iterable[tuple[float, float]]) -> list[Place | None]:
    """:func:`reverse_geocode` for many points at once (much faster than one by one)."""
    return _default().reverse_many(points)


# county-level names that are also everyday nouns ("探访老城区": the old town, not Luoyang's district)
_GENERIC_ADMIN_ZH = frozenset({"城区", "老城区", "新城区", "市区", "郊区", "矿区", "新区", "开发区", "高新区"})


@lru_cache(maxsize=1)
def chinese_admin_names() -> frozenset[str]:
    """Every prefecture- and county-level name of mainland China in GeoToolCN ("长宁区", "湟中区",
    "杭州市"), less the ones that are also everyday nouns; empty when GeoToolCN is not installed."""
    try:
        geotool = require("GeoToolCN", "geo", "geotool-cn")
    except (FinegrainError, ImportError):
        return frozenset()
    tool = geotool.GeoTool()
    names = {r.name for level in ("city", "district") for r in tool.list_regions(level)}
    return frozenset(names - _GENERIC_ADMIN_ZH)


_LEVEL_RANK = {lv: i for i, lv in enumerate(PLACE_LEVELS)}


def place_vocabulary(
    places: Iterable[Place | None], *, include_locality: bool = False
) -> dict[str, PlaceKey]:
    """Alias -> :class:`PlaceKey` for the planner, over the given places (None skipped).

    An alias shared by several places goes to the broadest level (country >
    province > city > district > locality: "beijing" is the province 北京市,
    "shaoxing" the city not the town), then to the smallest name. The
    ``locality`` level (nearest GeoNames town) is left out unless asked for:
    the catalog may not store it.
    """
    best: dict[str, tuple[int, str, PlaceKey]] = {}
    for place in places:
        if place is None:
            continue
        for lv in place.levels():
            if lv.level == "locality" and not include_locality:
                continue
            rank = (_LEVEL_RANK[lv.level], lv.name)
            for alias in lv.aliases:
                old = best.get(alias)
                if old is None or rank < old[:2]:
                    best[alias] = (*rank, lv.key)
    return {alias: best[alias][2] for alias in sorted(best)}
