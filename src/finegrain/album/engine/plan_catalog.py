"""The planner's vocabulary read from a catalog (any :class:`CatalogStore`).

``vocabulary_from_catalog(store)`` gives the :class:`AlbumVocabulary` of the
album a catalog holds, so queries can be planned without the original
PhotoBench files or photos:

- people: every person's names and nicknames (``Person.names``); the owner
  (``is_me``) also answers to "me"/"myself"/"我"/"自己";
- places: every name and alias of the catalog's places at each admin level
  (both languages, pinyin spellings, names without 市/区), and the aliases today's naming rule
  gives a Chinese division (so a catalog indexed under an older rule answers to the right
  English name), each mapped to the
  place's canonical name at that level (the Chinese name when there is one,
  else the English one), the key :func:`finegrain.album.engine.tools.metadata_filter`
  looks up with ``ids_at_place(name, level)``;
- known places: the built-in gazetteer's places the catalog has no photo of,
  so "photos in Tokyo" is a place constraint that matches nothing (the engine
  abstains) rather than visual text;
- latest date: ``store.latest_time()``, the "now" of "last summer"; a catalog with no
  dated photo (or a caller that passes ``today``) counts from ``today`` instead, the real
  date by default, and the vocabulary's ``now_note`` says so (the plan shows it).
"""

from __future__ import annotations

from datetime import date, datetime

from finegrain.album.engine.catalog.store import CatalogStore
from finegrain.album.engine.plan.records import PlaceKey
from finegrain.album.engine.plan.vocabulary import OWNER_ID, AlbumVocabulary, builtin_gazetteer
from finegrain.album.engine.profile.places import chinese_level
from finegrain.errors import FinegrainError, MissingDependencyError
from finegrain.text.lang import has_cjk

_LEVELS = ("country", "province", "city", "district")
_CHINESE_DIVISIONS = frozenset({"CN", "HK", "MO", "TW"})  # where the geocoder names places in Chinese


def parse_today(text: str | None, option: str = "--today") -> date | None:
    """``YYYY-MM-DD`` as a date (None stays None); a FinegrainError naming ``option`` otherwise."""
    if text is None:
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError as e:
        raise FinegrainError(f"{option} {text!r} is not a calendar date ({e})", "write it as YYYY-MM-DD, e.g. 2025-06-01") from e


def _current_chinese_aliases(level: str, zh: str | None) -> tuple[str, ...]:
    """The aliases today's naming rule gives a Chinese division (``profile.places.chinese_level``), so a
    catalog indexed under an older rule ("Zhangzhi" for 长治市) still answers to the right name; none
    for a country, a name without Chinese characters, or without the geo extra."""
    if level == "country" or not zh or not has_cjk(zh):
        return ()
    try:
        return chinese_level(level, zh).aliases
    except MissingDependencyError:
        return ()


def vocabulary_from_catalog(store: CatalogStore, *, today: date | None = None) -> AlbumVocabulary:
    """The planner vocabulary of the album in ``store`` (see the module docstring).

    ``today``: the "now" of relative dates ("last summer"), given explicitly (``--today``);
    None counts from the newest photo, or from the real current date when no photo is dated.
    """
    if today is not None and not isinstance(today, date):
        raise FinegrainError(f"today={today!r} is not a date", "pass a datetime.date (YYYY-MM-DD on the command line)")
    if isinstance(today, datetime):
        today = today.date()
    latest = store.latest_time()
    note = None
    if today is not None:
        latest_date = today
        note = f"{today.isoformat()} (given as today)"
    elif latest is None:
        latest_date = date.today()
        note = f"today, {latest_date.isoformat()}: the catalog has no dated photo (set another with --today)"
    else:
        latest_date = latest.date()
    people: dict[str, tuple[str, ...]] = {}
    owner = OWNER_ID
    for person in store.people():
        people[person.id] = person.names
        if person.is_me:
            owner = person.id
    places: dict[str, PlaceKey] = {}
    seen: set[object] = set()
    for place in store.places().values():
        if place in seen:
            continue
        seen.add(place)
        names = place.names()
        for level in _LEVELS:
            canonical = getattr(place, f"{level}_zh") or getattr(place, f"{level}_en")
            if not canonical:
                continue
            key = PlaceKey(level, canonical)
            for lv, alias in names:
                if lv == level:
                    places.setdefault(alias, key)
            if place.country_code in _CHINESE_DIVISIONS:
                for alias in _current_chinese_aliases(level, getattr(place, f"{level}_zh")):
                    places.setdefault(alias, key)
    known: dict[str, PlaceKey] = {}
    for g in builtin_gazetteer():
        for alias in g.aliases():
            known.setdefault(alias, PlaceKey(g.level, g.name_zh))
    return AlbumVocabulary.build(
        people=people, places=places, latest_date=latest_date, known_places=known, owner_id=owner, now_note=note
    )
