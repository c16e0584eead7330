"""The album's own vocabulary, the input of the query planner.

An :class:`AlbumVocabulary` says which words of a query name the album's people
(nicknames, and "me"/"myself"/"我"/"自己" for the owner), which name places
(aliases in both languages at any admin level, each mapped to a
:class:`~finegrain.album.engine.plan.records.PlaceKey`), the album's latest date (the
"now" of relative expressions such as "last summer"), and optional event words.

``from_photobench`` builds it from a PhotoBench album. Place names come from the
profile's reverse geocoder (``finegrain.album.engine.profile.places.reverse_geocode_many``
and ``place_vocabulary``) when that module and its data are installed; otherwise from the small built-in gazetteer ``gazetteer.txt`` (Chinese
provinces and cities near the PhotoBench albums, with English and Chinese
names): each photo is assigned the nearest gazetteer city within 80 km. The
gazetteer also serves as a general place lexicon: a known place that has no
photo is still a place constraint (it then matches nothing, and the engine can
abstain).

Names in either language: every alias of a person is a match pattern, whatever the
language it was given in, and a Chinese alias of two or more syllables also answers
to its pinyin ("薇薇" to "weiwei" and "wei wei", "小周" to "xiao zhou"), so an English
query finds a person named only in Chinese. :meth:`AlbumVocabulary.suggest_person` and
:meth:`AlbumVocabulary.suggest_place` give the album's nearest name to a mention that
matched nothing ("Yantain" -> "Yantian District"), pinyin-aware and within an
edit-distance threshold that grows with the name's length (:mod:`finegrain.album.engine.plan.fuzzy`).

People by role: a nickname that is a role word ("Dad", "my wife", "宝宝", "老公") tells the
vocabulary that person's role (:mod:`finegrain.album.engine.plan.people`), and so does a role
the user states (``build(roles=...)``); :meth:`AlbumVocabulary.people_in_role` gives the
people a role word of a query names. A nickname given to several people is kept with all
of them (``shared``), so the planner reports it as ambiguous rather than picking one.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any

from finegrain.album.engine.plan.fuzzy import name_key, nearest, pinyin_syllables
from finegrain.album.engine.plan.people import Role, people_in_role, roles_of
from finegrain.album.engine.plan.records import PlaceKey
from finegrain.album.engine.profile.place_names import LEVEL_EN
from finegrain.album.engine.profile.places import km
from finegrain.errors import FinegrainError
from finegrain.io.photobench import photobench_lang
from finegrain.text.distance import osa_distance
from finegrain.text.lang import has_cjk

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


def _pinyin_variants(alias: str) -> tuple[str, ...]:
    """A Chinese alias of two or more syllables written in pinyin, spaced and joined
    ("薇薇" -> "wei wei", "weiwei"); nothing for other aliases (one syllable is too ambiguous)."""
    if not has_cjk(alias):
        return ()
    sylls = [s for s in pinyin_syllables(alias) if s.isascii() and s.isalpha()]
    if len(sylls) < 2 or len(sylls) != len(pinyin_syllables(alias)):
        return ()
    return (" ".join(sylls), "".join(sylls))


def _display(names: Iterable[str], shared: Mapping[str, tuple[str, ...]]) -> str:
    """A person's display name: the first name no one else has (so two people who share a
    nickname are told apart), else the first name."""
    given = list(names)
    own = next((n for n in given if _norm(n) not in shared), given[0])
    return " ".join(own.split())


def _title(alias: str) -> str:
    """A lower-case Latin alias as a name: "yantian district" -> "Yantian District", "xi'an" -> "Xi'an"."""
    return " ".join(w[:1].upper() + w[1:] for w in alias.split(" "))


# Level words of a district's English name ("Shan County", "Pudong New Area"), the most specific first: every
# district also answers to "<name> district", so that one is the last resort of a display name.
_LEVEL_WORDS = tuple(sorted({f" {w.lower()}" for w in LEVEL_EN.values()}, key=lambda w: (w == " district", -len(w), w)))


@dataclass(frozen=True)
class AlbumVocabulary:
    """What the planner knows about one album.

    ``people``: alias (case-folded) -> person id, the owner's id for "me"/"我".
    ``places``: alias (case-folded) -> place key, for places that have photos.
    ``known_places``: alias -> place key for places known from the gazetteer but without photos.
    ``latest_date``: the album's newest photo date, the "now" of relative time words.
    ``now_note``: where ``latest_date`` came from when it is not the album's newest photo
    (e.g. "today, 2025-06-01: the catalog has no dated photo"); the planner shows it.
    ``spellings``: alias (case-folded) -> the name as given ("weiwei" -> "Weiwei"), for suggestions.
    ``shared``: alias -> every person id it was given to, for the aliases of several people
    (``people`` keeps the first of them).
    ``roles``: person id -> the person's roles (:class:`~finegrain.album.engine.plan.people.Role`),
    from role-word nicknames and the user's statement.
    ``names``: person id -> display name (the first name given).
    """

    people: Mapping[str, str]
    places: Mapping[str, PlaceKey]
    latest_date: date
    event_words: tuple[str, ...] = ()
    known_places: Mapping[str, PlaceKey] = field(default_factory=lambda: MappingProxyType({}))
    owner_id: str = OWNER_ID
    now_note: str | None = None
    spellings: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    shared: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    roles: Mapping[str, tuple[Role, ...]] = field(default_factory=lambda: MappingProxyType({}))
    names: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

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
        roles: Mapping[str, Iterable[str | Role]] | None = None,
    ) -> AlbumVocabulary:
        """From ``person id -> nicknames``; the owner also gets "me", "myself", "我", "自己".

        ``roles``: person id -> the roles the user states for that person ("child", "parent",
        "partner", or a role word such as "son", "妈妈"), added to those of role-word nicknames."""
        table: dict[str, str] = {}
        given: dict[str, list[str]] = {}
        spellings: dict[str, str] = {}
        people = {str(pid): tuple(names) for pid, names in people.items()}
        stated = {str(pid): tuple(rs) for pid, rs in (roles or {}).items()}
        for pid in stated:
            if pid not in people:
                raise FinegrainError(f"a role is stated for person {pid!r}, who is not in the album",
                                     f"use one of the person ids {', '.join(sorted(people)) or '(none)'}")
        for pid, names in people.items():
            for name in names:
                spellings.setdefault(_norm(name), " ".join(name.split()))
                for key in _name_variants(_norm(name)):
                    if key and key not in table:
                        table[key] = pid
                    if key and pid not in given.setdefault(key, []):
                        given[key].append(pid)
        # pinyin of Chinese aliases after every given name, so a name given in Latin letters wins
        for pid, names in people.items():
            for name in names:
                for key in _pinyin_variants(_norm(name)):
                    if key not in table:
                        table[key] = str(pid)
        for lang_words in OWNER_WORDS.values():
            for w in lang_words:
                table.setdefault(w, owner_id)
        place_table = {_norm(a): k for a, k in places.items() if _norm(a)}
        known = {_norm(a): k for a, k in (known_places or {}).items() if _norm(a) and _norm(a) not in place_table}
        person_roles = {pid: roles_of(names, stated.get(pid, ())) for pid, names in people.items()}
        shared = {k: tuple(pids) for k, pids in given.items() if len(pids) > 1}
        return cls(
            MappingProxyType(table),
            MappingProxyType(place_table),
            latest_date,
            tuple(event_words),
            MappingProxyType(known),
            owner_id,
            now_note,
            MappingProxyType(spellings),
            MappingProxyType(shared),
            MappingProxyType({pid: rs for pid, rs in person_roles.items() if rs}),
            MappingProxyType({pid: _display(names, shared) for pid, names in people.items() if names}),
        )

    def people_in_role(self, role: Role) -> tuple[str, ...]:
        """The ids of the album's people known in a role ``role`` accepts (the owner never is)."""
        return tuple(pid for pid in people_in_role(role, self.roles) if pid != self.owner_id)

    # ------------------------------------------------------------------ did you mean

    def suggest_person(self, text: str) -> str | None:
        """The album's person name nearest to ``text`` (a mention that matched no one), in the
        script of ``text`` when the person has a name in it, else None. Owner words ("me",
        "我") are never suggested."""
        owner_words = {w for words in OWNER_WORDS.values() for w in words}
        candidates = [a for a in self.people if a not in owner_words]
        found = self._nearest_in_script(text, candidates)
        if found is None:
            return None
        pid = self.people[found]
        # the person's own spelling of that name in the query's script
        same = [a for a in self.spellings if self.people.get(a) == pid and has_cjk(a) == has_cjk(text)]
        if found not in self.spellings and same:  # a pinyin variant matched: name the person in Latin letters
            found = min(same, key=lambda a: (osa_distance(name_key(text), name_key(a)), -len(a), a))
        return self.spellings.get(found) or _title(found)

    def suggest_place(self, text: str) -> str | None:
        """The album's place name nearest to ``text`` (a mention that matched no place), or of a
        known place without photos when no album place is near; in the script of ``text``
        ("Yantain" -> "Yantian District", "盐天" -> "盐田区"); None when nothing is near."""
        for table in (self.places, self.known_places):
            found = self._nearest_in_script(text, list(table))
            if found is not None:
                return self._place_display(found, table[found], table)
        return None

    def _nearest_in_script(self, text: str, aliases: list[str]) -> str | None:
        """Nearest alias, preferring aliases in the script of ``text`` (Latin or Chinese)."""
        same = [a for a in aliases if has_cjk(a) == has_cjk(text)]
        for pool in (same, aliases):
            hit = nearest(_norm(text), pool)
            if hit is not None:
                return hit[0]
        return None

    def _place_display(self, alias: str, key: PlaceKey, table: Mapping[str, PlaceKey]) -> str:
        """The place's name in the script of ``alias``, with its level word when it has one."""
        if has_cjk(alias):
            return key.name if has_cjk(key.name) and key.name.startswith(alias) else alias
        if not alias.endswith(_LEVEL_WORDS):
            for word in _LEVEL_WORDS:
                if table.get(alias + word) == key:
                    alias += word
                    break
        return self.spellings.get(alias) or _title(alias)

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
    seen = sorted(set(coords))  # exact points, as the catalog geocodes them (rounding moved 6 album1 photos)
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
    """``finegrain.album.engine.profile.places`` when it exists and has the functions used here."""
    try:
        mod = importlib.import_module("finegrain.album.engine.profile.places")
    except ImportError:
        return None
    if hasattr(mod, "reverse_geocode_many") and hasattr(mod, "place_vocabulary"):
        return mod
    return None
