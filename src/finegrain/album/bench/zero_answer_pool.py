"""What a zero-answer query is made of: the answerable source queries and the constraints to inject.

:func:`source_of` reads one PhotoBench query as a *source* (see
:mod:`finegrain.album.bench.zero_answer`, step 1): its plan in every language, the
photos meeting its constraints and each constraint's count.
:func:`constraint_pool` lists every constraint of :data:`KINDS` the album
offers with its photos; :func:`fits` says whether a constraint can be injected
into a source with a proven empty answer.

Constraints, per kind:

- ``unvisited_place``: a gazetteer place (not the country) the planner reads as a
  known place without photos, with no photo under any of its names at any admin
  level and no GPS photo within :data:`NEAR_KM` of it (cities and districts);
- ``place``: a province or city of the catalog that the planner reads by the same
  key in every language, with its photos;
- ``year`` / ``month``: each year / calendar month that has photos;
- ``person``: each person with photos and a name the planner reads as them in
  every language (not a role word such as "Boyfriend"; "me" / "我" for the owner).
"""

from __future__ import annotations

import calendar
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime

from finegrain.album.bench.zero_answer_phrasing import PERSON, PLACE, TIME
from finegrain.album.engine.catalog.store import CatalogStore
from finegrain.album.engine.plan import Plan, plan_query
from finegrain.album.engine.plan.people import ROLE_WORDS_EN, ROLE_WORDS_ZH
from finegrain.album.engine.plan.records import PlaceKey
from finegrain.album.engine.plan.rules import ROLES_EN, ROLES_ZH, SELFIE_EN, SELFIE_ZH
from finegrain.album.engine.plan.vocabulary import AlbumVocabulary, builtin_gazetteer
from finegrain.album.engine.profile.places import km as gazetteer_km
from finegrain.album.engine.search import SearchContext
from finegrain.album.engine.tools import place_filter, time_filter
from finegrain.io.photobench import PhotoQuery
from finegrain.text.lang import has_cjk

KINDS = ("unvisited_place", "place", "year", "month", "person")
#: Which part of a query each kind constrains (one constraint of a role per query).
ROLES = {"unvisited_place": PLACE, "place": PLACE, "year": TIME, "month": TIME, "person": PERSON}
#: An unvisited city (district) has no GPS photo within this many km of its gazetteer point.
NEAR_KM = {"city": 50.0, "district": 10.0}
_SELFIE = frozenset(w.casefold() for w in (*SELFIE_EN, *SELFIE_ZH))
_ROLE_WORDS = frozenset(w.casefold() for w in (*ROLES_EN, *ROLES_ZH, *ROLE_WORDS_EN, *ROLE_WORDS_ZH))


@dataclass(frozen=True)
class Source:
    """An answerable query: its plan, its photos and its constraints' counts, per language."""

    query: PhotoQuery
    plans: Mapping[str, Plan]
    own: Mapping[str, frozenset[str]]
    parts: Mapping[str, tuple[tuple[str, int], ...]]


def source_of(q: PhotoQuery, contexts: Mapping[str, SearchContext]) -> Source | None:
    """The query's plan and answer in every language, or None when it is not an answerable source."""
    if q.is_zero_gt:
        return None
    plans, own, parts = {}, {}, {}
    for code, ctx in contexts.items():
        text = q.text(code)
        if not text or not text.strip():
            return None
        plan = plan_query(text, ctx.vocab, lang=code)
        read = hard_sets(plan, ctx)
        if read is None:
            return None
        ids, pieces = read
        if not ids or (q.ground_truth is not None and not set(q.ground_truth) <= ids):
            return None
        plans[code], own[code], parts[code] = plan, frozenset(ids), pieces
    return Source(q, plans, own, parts)


def hard_sets(plan: Plan, ctx: SearchContext) -> tuple[set[str], tuple[tuple[str, int], ...]] | None:
    """The photos meeting every constraint of a plan made only of hard constraints, and each
    constraint with its count; None when the plan has anything else (visual words, roles...)."""
    if plan.visual_text.strip() or plan.roles or plan.people_groups or plan.event_words or plan.impossible_times:
        return None
    if any(p.text.casefold() in _SELFIE for p in plan.people) or any(p.place.level == "poi" for p in plan.places):
        return None
    store = ctx.store
    sets: list[tuple[str, set[str]]] = []
    if plan.time_ranges:
        ids = time_filter(store, plan.time_ranges, ctx.times) or set()
        sets.append(("time " + ", ".join(f"{r.text} ({r.start}..{r.end})" for r in plan.time_ranges), ids))
    if plan.places:
        ids = place_filter(store, plan) or set()
        sets.append(("place " + ", ".join(f"{p.place.level}:{p.place.name}" for p in plan.places), ids))
    for pid in plan.person_ids:
        sets.append((f"person:{pid}", store.ids_with_person(pid)))
    if not sets:
        return None
    together = set.intersection(*(s for _, s in sets))
    return together, tuple((label, len(s)) for label, s in sets)


# --------------------------------------------------------------------------- constraints


@dataclass(frozen=True, slots=True)
class Constraint:
    """A constraint to inject: kind, canonical value, its words per language, its photos alone."""

    kind: str
    value: str
    words: tuple[tuple[str, str], ...]  # (lang, the words naming it)
    ids: frozenset[str]
    place: PlaceKey | None = None
    span: tuple[date, date] | None = None
    person_id: str | None = None
    nearest_km: float | None = None

    def words_in(self, code: str) -> str | None:
        return dict(self.words).get(code)

    def read_by(self, plan: Plan) -> bool:
        """Whether ``plan`` holds this constraint (the planner read its words as this place,
        this date range or this person)."""
        if self.span is not None:
            return any((r.start, r.end) == self.span and not r.every_year and r.hours is None and r.weekdays is None
                       for r in plan.time_ranges)
        if self.place is not None:
            return any(p.place == self.place and p.in_album == (self.kind == "place") for p in plan.places)
        return self.person_id in plan.person_ids


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def constraint_pool(contexts: Mapping[str, SearchContext]) -> list[Constraint]:
    """Every constraint of :data:`KINDS` the album offers, in a fixed order."""
    first = next(iter(contexts.values()))
    store = first.store
    vocabs = {code: ctx.vocab for code, ctx in contexts.items()}
    return [*_unvisited(store, vocabs), *_album_places(store, vocabs), *_times(first), *_people(contexts)]


def _unvisited(store: CatalogStore, vocabs: Mapping[str, AlbumVocabulary]) -> list[Constraint]:
    gps = [(p.lat, p.lon) for p in store.iter_photos() if p.lat is not None and p.lon is not None]
    out = []
    for g in builtin_gazetteer():
        if g.level == "country":
            continue
        key = PlaceKey(g.level, g.name_zh)
        words = {"en": g.name_en, "zh": g.name_zh}
        if any(vocabs[c].known_places.get(_norm(words[c])) != key for c in vocabs):
            continue  # the planner would not read this name as this place
        if any(_norm(a) in v.places for a in g.aliases() for v in vocabs.values()):
            continue
        if any(store.ids_at_place(_norm(a)) for a in g.aliases()):
            continue
        near = None
        if g.level in NEAR_KM:
            near = min((gazetteer_km(g.lat, g.lon, lat, lon) for lat, lon in gps), default=float("inf"))
            if near < NEAR_KM[g.level]:
                continue
            near = None if near == float("inf") else near
        out.append(Constraint("unvisited_place", f"{g.level}:{g.name_zh}", tuple(words.items()), frozenset(),
                               place=key, nearest_km=near))
    return out


def _album_places(store: CatalogStore, vocabs: Mapping[str, AlbumVocabulary]) -> list[Constraint]:
    seen: dict[PlaceKey, Constraint] = {}
    for place in sorted(set(store.places().values()), key=lambda p: (p.province_en or "", p.city_en or "")):
        for level in ("province", "city"):
            words = {"en": getattr(place, f"{level}_en"), "zh": getattr(place, f"{level}_zh")}
            if not all(words.values()):
                continue
            keys = {vocabs[c].places.get(_norm(words[c])) for c in vocabs}
            key = keys.pop() if len(keys) == 1 else None
            if key is None or key in seen or key.level not in ("province", "city"):
                continue
            ids = frozenset(store.ids_at_place(key.name, key.level))
            if ids:
                seen[key] = Constraint("place", f"{key.level}:{key.name}", tuple(words.items()), ids, place=key)
    return sorted(seen.values(), key=lambda c: c.value)


def _times(ctx: SearchContext) -> list[Constraint]:
    store, times = ctx.store, ctx.times
    out = []
    for y in sorted({int(v) for v in times.year.tolist()}):
        ids = frozenset(store.ids_taken_between(datetime(y, 1, 1), datetime(y + 1, 1, 1)))
        out.append(Constraint("year", str(y), (("en", str(y)), ("zh", f"{y}年")), ids,
                               span=(date(y, 1, 1), date(y, 12, 31))))
    for y, m in sorted({(int(v) // 100, int(v) % 100) for v in (times.year * 100 + times.month_day // 100).tolist()}):
        last = calendar.monthrange(y, m)[1]
        end = datetime(y + 1, 1, 1) if m == 12 else datetime(y, m + 1, 1)
        ids = frozenset(store.ids_taken_between(datetime(y, m, 1), end))
        out.append(Constraint("month", f"{y}-{m:02d}", (("en", f"{calendar.month_name[m]} {y}"), ("zh", f"{y}年{m}月")),
                               ids, span=(date(y, m, 1), date(y, m, last))))
    return [c for c in out if c.ids]


def _people(contexts: Mapping[str, SearchContext]) -> list[Constraint]:
    store = next(iter(contexts.values())).store
    out = []
    for person in sorted(store.people(), key=lambda p: (len(p.id), p.id)):
        words = {code: name for code, ctx in contexts.items() if (name := _name_for(ctx, person.id, code))}
        ids = frozenset(store.ids_with_person(person.id))
        if ids and len(words) == len(contexts):
            out.append(Constraint("person", f"person:{person.id}", tuple(words.items()), ids, person_id=person.id))
    return out


def _name_for(ctx: SearchContext, person_id: str, code: str) -> str | None:
    """The first name of the person in language ``code`` that the planner reads as this
    person (not a role word such as "Boyfriend"); "me" / "我" for the owner."""
    person = ctx.store.get_person(person_id)
    if person is None:
        return None
    names = ["me", "我"] if person.is_me else list(person.names)
    for name in names:
        if name.casefold() in _ROLE_WORDS or has_cjk(name) != (code == "zh"):
            continue
        if ctx.vocab.people.get(_norm(name)) == person_id:
            return name
    return None


def fits(source: Source, c: Constraint) -> bool:
    """Whether ``c`` can go into ``source``: it has words in every language, the source has no
    constraint of its role, and no photo meets the source's constraints and ``c`` together."""
    role = ROLES[c.kind]
    for code, plan in source.plans.items():
        if c.words_in(code) is None:
            return False
        if (role == PLACE and plan.places) or (role == TIME and plan.time_ranges):
            return False
        if role == PERSON and c.person_id in plan.person_ids:
            return False
        if source.own[code] & c.ids:
            return False
    return True
