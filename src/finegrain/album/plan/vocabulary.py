"""The album's own vocabulary, the input of the query planner.

An :class:`AlbumVocabulary` says which words of a query name the album's people
(nicknames, and "me"/"myself"/"我"/"自己" for the owner), which name places
(aliases in both languages at any admin level, each mapped to a
:class:`~finegrain.album.plan.records.PlaceKey`), the album's latest date (the
"now" of relative expressions such as "last summer"), and optional event words.

``from_photobench`` builds it from a PhotoBench album. Place names come from the
profile's reverse geocoder (``finegrain.album.profile.places.reverse_geocode_many``
and ``place_vocabulary``) when that module and its data are installed; otherwise from the small built-in gazetteer below (Chinese
provinces and cities near the PhotoBench albums, with English and Chinese
names): each photo is assigned the nearest gazetteer city within 80 km. The
gazetteer also serves as a general place lexicon: a known place that has no
photo is still a place constraint (it then matches nothing, and the engine can
abstain).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from types import MappingProxyType
from typing import Any

from finegrain.album.plan.records import PlaceKey
from finegrain.errors import FinegrainError
from finegrain.io.photobench import photobench_lang

OWNER_ID = "1"
OWNER_WORDS = {"en": ("me", "myself"), "zh": ("我", "自己")}

# level|English|Chinese|lat|lon  (provinces carry no coordinates that matter; cities and districts do)
_GAZETTEER = """\
country|China|中国|35.0|103.0
province|Zhejiang|浙江省|29.2|120.2
province|Jiangsu|江苏省|32.9|119.4
province|Shandong|山东省|36.3|118.2
province|Guangdong|广东省|23.4|113.4
province|Guizhou|贵州省|26.8|106.8
province|Hunan|湖南省|27.6|111.7
province|Hubei|湖北省|30.9|112.3
province|Fujian|福建省|26.1|118.1
province|Sichuan|四川省|30.6|102.7
province|Yunnan|云南省|25.0|101.5
province|Hebei|河北省|38.0|114.5
province|Henan|河南省|33.9|113.5
province|Anhui|安徽省|31.8|117.2
province|Jiangxi|江西省|27.6|115.7
province|Shaanxi|陕西省|35.2|108.9
province|Hainan|海南省|19.2|109.7
province|Guangxi|广西|23.8|108.8
province|Beijing|北京市|39.9|116.4
province|Shanghai|上海市|31.2|121.5
province|Tianjin|天津市|39.1|117.2
province|Chongqing|重庆市|29.6|106.5
city|Hangzhou|杭州市|30.27|120.16
city|Shaoxing|绍兴市|30.00|120.58
city|Ningbo|宁波市|29.87|121.54
city|Jiaxing|嘉兴市|30.75|120.76
city|Huzhou|湖州市|30.87|120.09
city|Wenzhou|温州市|28.00|120.67
city|Jinhua|金华市|29.08|119.65
city|Yiwu|义乌市|29.31|120.08
city|Zhuji|诸暨市|29.71|120.24
city|Haining|海宁市|30.51|120.68
city|Shanghai|上海市|31.23|121.47
city|Beijing|北京市|39.90|116.41
city|Tianjin|天津市|39.08|117.20
city|Nanjing|南京市|32.06|118.80
city|Suzhou|苏州市|31.30|120.59
city|Wuxi|无锡市|31.49|120.31
city|Jinan|济南市|36.65|117.12
city|Qingdao|青岛市|36.07|120.38
city|Weihai|威海市|37.51|122.12
city|Yantai|烟台市|37.46|121.45
city|Dezhou|德州市|37.44|116.36
city|Yucheng|禹城市|36.93|116.64
city|Guangzhou|广州市|23.13|113.26
city|Shenzhen|深圳市|22.54|114.06
city|Guiyang|贵阳市|26.65|106.63
city|Zunyi|遵义市|27.73|106.93
city|Yueyang|岳阳市|29.36|113.13
city|Changsha|长沙市|28.23|112.94
city|Wuhan|武汉市|30.59|114.31
city|Chengdu|成都市|30.57|104.07
city|Chongqing|重庆市|29.56|106.55
city|Xi'an|西安市|34.34|108.94
city|Xiamen|厦门市|24.48|118.09
city|Kunming|昆明市|25.04|102.71
city|Sanya|三亚市|18.25|109.51
city|Hong Kong|香港|22.32|114.17
city|Macau|澳门|22.20|113.55
city|Taipei|台北|25.03|121.56
city|Tokyo|东京|35.68|139.69
city|Osaka|大阪|34.69|135.50
city|Kyoto|京都|35.01|135.77
city|Seoul|首尔|37.57|126.98
city|Singapore|新加坡|1.35|103.82
city|Bangkok|曼谷|13.76|100.50
district|Xihu District|西湖区|30.26|120.13
district|Keqiao District|柯桥区|30.08|120.49
district|Yuecheng District|越城区|30.00|120.58
district|Songjiang District|松江区|31.03|121.23
district|Xuhui District|徐汇区|31.19|121.44
district|Changning District|长宁区|31.22|121.42
district|Pudong New Area|浦东新区|31.22|121.54
district|Chuansha|川沙|31.19|121.70
district|Huangpu District|黄浦区|31.23|121.48
district|Minhang District|闵行区|31.11|121.38
district|Jianye District|建邺区|32.00|118.73
district|Nanshan District|南山区|22.53|113.93
district|Futian District|福田区|22.52|114.05
district|Yantian District|盐田区|22.56|114.24
district|Nanming District|南明区|26.57|106.71
district|Dongcheng District|东城区|39.93|116.42
district|Haidian District|海淀区|39.96|116.30
"""

_COUNTRY_FOR_ZH = {"China": "中国"}
_NEAREST_KM = 80.0


@dataclass(frozen=True, slots=True)
class GazetteerPlace:
    level: str
    name_en: str
    name_zh: str
    lat: float
    lon: float

    def aliases(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*_aliases_en(self.name_en), *_aliases_zh(self.name_zh))))


def _aliases_en(name: str) -> list[str]:
    out = [name]
    for suffix in (" District", " New Area", " City", " Province"):
        if name.endswith(suffix):
            out.append(name[: -len(suffix)])
    return out


def _aliases_zh(name: str) -> list[str]:
    out = [name]
    for suffix in ("新区", "省", "市", "区", "县"):
        if name.endswith(suffix) and len(name) - len(suffix) >= 2:
            out.append(name[: -len(suffix)])
            break
    return out


def builtin_gazetteer() -> tuple[GazetteerPlace, ...]:
    """The built-in places (parsed on each call; small)."""
    rows = []
    for line in _GAZETTEER.splitlines():
        level, en, zh, lat, lon = line.split("|")
        rows.append(GazetteerPlace(level, en, zh, float(lat), float(lon)))
    return tuple(rows)


def _km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 6371.0 * 2 * math.asin(math.sqrt(a))


def _name_variants(name: str) -> tuple[str, ...]:
    """A nickname and its usual English spellings: "little li" <-> "xiao li" (小 = xiao),
    "da bao" for "big bao" (大 = da)."""
    out = [name]
    for en, py in (("little ", "xiao "), ("big ", "da "), ("old ", "lao ")):
        if name.startswith(en):
            out.append(py + name[len(en):])
        elif name.startswith(py):
            out.append(en + name[len(py):])
    return tuple(out)


def _norm(alias: str) -> str:
    return " ".join(alias.casefold().split())


@dataclass(frozen=True)
class AlbumVocabulary:
    """What the planner knows about one album.

    ``people``: alias (case-folded) -> person id, the owner's id for "me"/"我".
    ``places``: alias (case-folded) -> place key, for places that have photos.
    ``known_places``: alias -> place key for places known from the gazetteer but without photos.
    ``latest_date``: the album's newest photo date, the "now" of relative time words.
    ``now_note``: where ``latest_date`` came from when it is not the album's newest photo
    (e.g. "today, 2025-06-01: the catalog has no dated photo"); the planner shows it.
    """

    people: Mapping[str, str]
    places: Mapping[str, PlaceKey]
    latest_date: date
    event_words: tuple[str, ...] = ()
    known_places: Mapping[str, PlaceKey] = field(default_factory=lambda: MappingProxyType({}))
    owner_id: str = OWNER_ID
    now_note: str | None = None

    def __post_init__(self) -> None:
        for alias in self.people:
            if alias != _norm(alias) or not alias:
                raise FinegrainError(
                    f"person alias {alias!r} is not normalised", "build the vocabulary with AlbumVocabulary.build"
                )

    @classmethod
    def build(
        cls,
        *,
        people: Mapping[str, Iterable[str]],
        places: Mapping[str, PlaceKey],
        latest_date: date,
        event_words: Iterable[str] = (),
        known_places: Mapping[str, PlaceKey] | None = None,
        owner_id: str = OWNER_ID,
        now_note: str | None = None,
    ) -> AlbumVocabulary:
        """From ``person id -> nicknames``; the owner also gets "me", "myself", "我", "自己"."""
        table: dict[str, str] = {}
        for pid, names in people.items():
            for name in names:
                for key in _name_variants(_norm(name)):
                    if key and key not in table:
                        table[key] = str(pid)
        for lang_words in OWNER_WORDS.values():
            for w in lang_words:
                table.setdefault(w, owner_id)
        place_table = {_norm(a): k for a, k in places.items() if _norm(a)}
        known = {_norm(a): k for a, k in (known_places or {}).items() if _norm(a) and _norm(a) not in place_table}
        return cls(
            MappingProxyType(table),
            MappingProxyType(place_table),
            latest_date,
            tuple(event_words),
            MappingProxyType(known),
            owner_id,
            now_note,
        )

    @classmethod
    def from_photobench(cls, album: Any, lang: str = "en", *, use_profile: bool = True) -> AlbumVocabulary:
        """From a :class:`finegrain.io.photobench.Album`: nicknames of both languages (so a
        query in either language is understood), places of its photos, its latest date.

        ``use_profile=False`` uses only the built-in gazetteer (no geocoder data needed)."""
        photobench_lang(lang)  # validates
        people = {pid: (*p.names_en, *p.names_cn) for pid, p in album.people.items()}
        times = [p.time for p in album.photos.values() if p.time is not None]
        if not times:
            raise FinegrainError(f"album {album.name!r} has no photo with a time", "relative time words need a latest date")
        coords = [(p.latitude, p.longitude) for p in album.photos.values() if p.has_gps]
        places, known = _places_for(coords) if use_profile else ({}, {})
        if not use_profile:
            gaz: dict[str, PlaceKey] = {}
            for g in builtin_gazetteer():
                for a in g.aliases():
                    gaz.setdefault(a, PlaceKey(g.level, g.name_zh))
            places, known = _gazetteer_places(sorted(set(coords))), gaz
        return cls.build(people=people, places=places, latest_date=max(times).date(), known_places=known)


def _places_for(coords: list[tuple[float, float]]) -> tuple[dict[str, PlaceKey], dict[str, PlaceKey]]:
    """Place aliases of the photos (via the profile when installed) and of the gazetteer."""
    known: dict[str, PlaceKey] = {}
    for g in builtin_gazetteer():
        for a in g.aliases():
            known.setdefault(a, PlaceKey(g.level, g.name_zh))
    seen = sorted({(round(lat, 3), round(lon, 3)) for lat, lon in coords})
    profile = _profile_places()
    if profile is not None:
        try:
            geocoded = profile.reverse_geocode_many(seen)
        except (FinegrainError, ImportError):  # the geocoder's own data packages are missing
            geocoded = None
        if geocoded is not None:
            vocab = profile.place_vocabulary(geocoded)
            return {a: PlaceKey(k.level, k.name) for a, k in vocab.items()}, known
    return _gazetteer_places(seen), known


def _gazetteer_places(points: list[tuple[float, float]]) -> dict[str, PlaceKey]:
    """Each point's nearest gazetteer city (within 80 km) and district (within 8 km)."""
    places: dict[str, PlaceKey] = {}
    cities = [g for g in builtin_gazetteer() if g.level in ("city", "district")]
    for lat, lon in {(round(a, 2), round(b, 2)) for a, b in points}:
        near = [g for g in cities if _km(lat, lon, g.lat, g.lon) <= _NEAREST_KM]
        for level, limit in (("city", _NEAREST_KM), ("district", 8.0)):
            best = min((g for g in near if g.level == level), key=lambda g: _km(lat, lon, g.lat, g.lon), default=None)
            if best is not None and _km(lat, lon, best.lat, best.lon) <= limit:
                for a in best.aliases():
                    places.setdefault(a, PlaceKey(best.level, best.name_zh))
    return places


def _profile_places() -> Any | None:
    """``finegrain.album.profile.places`` when it exists and has the functions used here."""
    try:
        mod = importlib.import_module("finegrain.album.profile.places")
    except ImportError:
        return None
    if hasattr(mod, "reverse_geocode_many") and hasattr(mod, "place_vocabulary"):
        return mod
    return None
