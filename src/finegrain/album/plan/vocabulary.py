"""The album's own vocabulary, the input of the query planner.

An :class:`AlbumVocabulary` says which words of a query name the album's people
(nicknames, and "me"/"myself"/"我"/"自己" for the owner), which name places
(aliases in both languages at any admin level, each mapped to a
:class:`~finegrain.album.plan.records.PlaceKey`), the album's latest date (the
"now" of relative expressions such as "last summer"), and optional event words.

``from_photobench`` builds it from a PhotoBench album. Place names come from the
profile's reverse geocoder (``finegrain.album.profile.places.reverse_geocode_many``
and ``place_vocabulary``) when that module and its data are installed; otherwise from the small built-in gazetteer ``gazetteer.txt`` (Chinese
provinces and cities near the PhotoBench albums, with English and Chinese
names): each photo is assigned the nearest gazetteer city within 80 km. The
gazetteer also serves as a general place lexicon: a known place that has no
photo is still a place constraint (it then matches nothing, and the engine can
abstain).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any

from finegrain.album.plan.records import PlaceKey
from finegrain.album.profile.places import km
from finegrain.errors import FinegrainError
from finegrain.io.photobench import photobench_lang

OWNER_ID = "1"
OWNER_WORDS = {"en": ("me", "myself"), "zh": ("我", "自己")}

_GAZETTEER = Path(__file__).with_name("gazetteer.txt")  # level|English|Chinese|lat|lon, one place a line

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
    for line in _GAZETTEER.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        level, en, zh, lat, lon = line.split("|")
        rows.append(GazetteerPlace(level, en, zh, float(lat), float(lon)))
    return tuple(rows)


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
        near = [g for g in cities if km(lat, lon, g.lat, g.lon) <= _NEAREST_KM]
        for level, limit in (("city", _NEAREST_KM), ("district", 8.0)):
            best = min((g for g in near if g.level == level), key=lambda g: km(lat, lon, g.lat, g.lon), default=None)
            if best is not None and km(lat, lon, best.lat, best.lon) <= limit:
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
