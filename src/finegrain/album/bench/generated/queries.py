"""A generated album's queries, labelled by construction.

Each query kind draws a :class:`~.photos.Constraint` from the album (a district with photos, a
person and a month they appear in, a holiday of a year the album covers, a scene and a city, ...),
words it with the split's templates (:mod:`.phrasing`) in both languages, and takes its ground
truth as the photos meeting the constraint (:func:`~.photos.select`). So:

- ``Source`` is what the constraint uses: M (place, time), F (faces), MF, and V, VM, VF, VMF when
  a scene is part of it; a venue (campus, store, landmark) is VM: no offline gazetteer places it;
- ``ground_truth`` is exactly the photos meeting the constraint; for a V part it is the photos
  whose session shows the scene (routing and the M/F/MF sets are what is scored);
- ``Class`` lists what the query exercises: place:district, place:city, place:province,
  place:abroad, place:venue, people:name, people:role (a role or kinship nickname, "me", or
  a word for the album's children), people:shared (a nickname two people share), holiday, time,
  and zero (no photo meets the constraint; the engine should answer nothing).

Readings where the wording alone does not decide:

- a **holiday**: "on National Day 2019" / "2019年国庆节当天" is the day the holiday is named after,
  "during the National Day holiday in 2019" / "2019年国庆假期" the official days off; the plain
  name ("National Day 2019", "2019年国庆节") takes ``holiday_reading`` ("span", the default, or "day");
- a **shared nickname** ("Xiao Song" for two people) is either of them (the union);
- several people ("photos of me, Dad and Doudou") must all appear; a word for the children
  ("photos of the kids") is any of them.
"""

from __future__ import annotations

import calendar
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from finegrain.album.bench.generated.life import OWNER, Geo, Life
from finegrain.album.bench.generated.photos import Constraint, GenPhoto, select
from finegrain.album.bench.generated.phrasing import JOINS_EN, JOINS_ZH, join_en, join_zh, templates, time_templates
from finegrain.album.bench.generated.world import (
    CHINESE_CITIES,
    CITIES_ABROAD,
    HOLIDAY_DATES,
    HOLIDAYS,
    KIDS_WORDS_EN,
    KIDS_WORDS_ZH,
    OCCASION_SCENES,
    ChineseCity,
)
from finegrain.errors import FinegrainError

HOLIDAY_READINGS = ("span", "day")
CLASSES = ("place:district", "place:city", "place:province", "place:abroad", "place:venue", "people:name",
           "people:role", "people:shared", "holiday", "time", "zero")
DIMENSIONS = ("Location", "Time", "Person", "Object", "Concept", "Genre")
_SEASONS = {"spring": (3, 5, "春"), "summer": (6, 8, "夏"), "autumn": (9, 11, "秋")}


@dataclass
class GenQuery:
    en: str
    zh: str
    source: str
    classes: list[str]
    constraint: Constraint
    ground_truth: list[str]
    kind: str
    dims: dict[str, str] = field(default_factory=dict)
    templates: list[tuple[str, str, str]] = field(default_factory=list)  # (bank, language, template) used

    def to_json(self, with_truth: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"query_cn": self.zh, "query_en": self.en}
        if with_truth:
            out["ground_truth"] = list(self.ground_truth)
            out["ground_truth_count"] = len(self.ground_truth)
        out.update({d: self.dims.get(d) for d in DIMENSIONS})
        out["Source"] = self.source
        out["Class"] = list(self.classes)
        return out


@dataclass(frozen=True)
class Phrase:
    en: str
    zh: str
    classes: tuple[str, ...] = ()
    en_p: str = ""  # a time with its preposition


class QueryMaker:
    """Draws queries of each kind for one album."""

    def __init__(self, life: Life, photos: list[GenPhoto], rng: random.Random, split: str, geo: Geo,
                 holiday_reading: str = "span") -> None:
        if holiday_reading not in HOLIDAY_READINGS:
            raise FinegrainError(f"unknown holiday reading {holiday_reading!r}",
                                 "use 'span' (the official days off) or 'day' (the day the holiday is named after)")
        self.life, self.photos, self.rng, self.split, self.geo = life, photos, rng, split, geo
        self.reading = holiday_reading
        self._used: list[tuple[str, str, str]] = []
        self.people = {p.id: p for p in life.people}
        self.children = tuple(p.id for p in life.people if p.circle == "child")
        self.cities = {c.zh: c for c in (life.home, *life.trips)}
        self.city_code = {c.zh: self._city_code(c) for c in CHINESE_CITIES}
        self.district_of = {}  # adcode -> (city, District) for the table's districts of the cities visited
        for c in self.cities.values():
            for d in c.districts:
                self.district_of[geo.district_code(c, d)] = (c, d)
        self.visited = {"district": {p.district for p in photos if p.district},
                        "city": {p.city for p in photos if p.city}, "province": {p.province for p in photos if p.province},
                        "abroad": {p.abroad for p in photos if p.abroad}, "country": {p.country for p in photos if p.country},
                        "venue": {v for p in photos for v in p.venues}}
        zh_names = [d.zh for _, d in self.district_of.values()]
        self.unique_districts = [code for code, (_, d) in self.district_of.items() if zh_names.count(d.zh) == 1]

    def _city_code(self, city: ChineseCity) -> str:
        code = self.geo.district_code(city, city.districts[0])
        return code[:4] + "00"

    # ------------------------------------------------------------------ wording

    def fill(self, frame: str, **slots: Phrase) -> tuple[str, str]:
        en_t = self.rng.choice(templates(frame, "en", self.split))
        zh_t = self.rng.choice(templates(frame, "zh", self.split))
        self._used += [(frame, "en", en_t), (frame, "zh", zh_t)]
        en = en_t.format(**{k: v.en for k, v in slots.items()}, **{k + "_p": v.en_p for k, v in slots.items()})
        zh = zh_t.format(**{k: v.zh for k, v in slots.items()})
        return en, zh

    def place(self, level: str, key: str) -> Phrase:
        r = self.rng.random() < 0.5
        if level == "district":
            city, d = self.district_of[key]
            short_en = d.en.rsplit(" ", 1)[0] if d.en.endswith((" District", " County")) else d.en
            short_zh = d.zh[:-1] if len(d.zh) > 2 and d.zh[-1] in "区县" and not d.zh.endswith("回族区") else d.zh
            return Phrase(d.en if r or short_en == d.en else short_en, d.zh if self.rng.random() < 0.5 else short_zh,
                          ("place:district",))
        if level == "city":
            c = next(c for c in CHINESE_CITIES if self.city_code[c.zh] == key)
            return Phrase(c.en, c.zh if r else c.short_zh, ("place:city",))
        if level == "province":
            c = next(c for c in CHINESE_CITIES if self.city_code[c.zh][:2] + "0000" == key)
            short = c.province_zh.replace("壮族自治区", "").replace("自治区", "").rstrip("省")
            en = c.province_en if r or c.province_en == "Inner Mongolia" else f"{c.province_en} Province" \
                if c.province_zh.endswith("省") else c.province_en
            return Phrase(en, c.province_zh if self.rng.random() < 0.5 else short, ("place:province",))
        if level == "abroad":
            a = next(a for a in CITIES_ABROAD if a.en == key)
            return Phrase(a.en, a.zh, ("place:abroad",))
        if level == "country":
            a = next(a for a in CITIES_ABROAD if a.country_en == key)
            return Phrase(a.country_en, a.country_zh, ("place:abroad",))
        if level == "venue":
            for c in CHINESE_CITIES:
                for v in c.venues:
                    if v.en == key:
                        return Phrase(v.en, v.zh, ("place:venue",))
            for a in CITIES_ABROAD:
                for v in a.landmarks:
                    if v.en == key:
                        return Phrase(("the " if self.rng.random() < 0.5 and " " in v.en else "") + v.en, v.zh,
                                      ("place:venue", "place:abroad"))
        raise FinegrainError(f"no place {level} {key}", "a generator bug")

    def person(self, pid: str, *, role: bool | None = None) -> Phrase:
        p = self.people[pid]
        shared_en, shared_zh, _ = self.life.shared
        if pid == OWNER:
            return Phrase(self.rng.choice(p.en), self.rng.choice(p.zh), ("people:role",))
        named = [n for n in p.en if n not in p.role_en]
        use_role = bool(p.role_en) and (not named or (self.rng.random() < 0.6 if role is None else role))
        if use_role:
            return Phrase(self.rng.choice(p.role_en), self.rng.choice(p.role_zh), ("people:role",))
        en = self.rng.choice([n for n in p.names("en") if n != shared_en])
        zh = self.rng.choice([n for n in p.names("zh") if n != shared_zh])
        return Phrase(en, zh, ("people:name",))

    def people_list(self, ids: list[str]) -> Phrase:
        parts = [self.person(i) for i in ids]
        self.rng.shuffle(parts)
        return Phrase(join_en([p.en for p in parts], self.rng.choice(JOINS_EN)),
                      join_zh([p.zh for p in parts], self.rng.choice(JOINS_ZH)),
                      tuple(dict.fromkeys(c for p in parts for c in p.classes)))

    def kids(self) -> Phrase:
        return Phrase(self.rng.choice(KIDS_WORDS_EN), self.rng.choice(KIDS_WORDS_ZH), ("people:role",))

    def when(self, kind: str, d: date) -> tuple[Phrase, tuple[date, date]]:
        """A time expression of ``kind`` around day ``d`` and the days it covers."""
        y, m = d.year, d.month
        slots: dict[str, Any] = {"Y": y, "m": m, "d": d.day, "Month": calendar.month_name[m]}
        if kind == "month":
            rng = (date(y, m, 1), date(y, m, calendar.monthrange(y, m)[1]))
        elif kind == "day":
            rng = (d, d)
        elif kind == "season":
            name = next((s for s, (a, b, _) in _SEASONS.items() if a <= m <= b), "summer")
            a, b, zh = _SEASONS[name]
            slots.update(Season=("fall" if name == "autumn" and self.rng.random() < 0.4 else name), season_zh=zh)
            rng = (date(y, a, 1), date(y, b, calendar.monthrange(y, b)[1]))
        elif kind == "half":
            first = m <= 6
            slots.update(Half="first" if first else "second", half_zh="上" if first else "下")
            rng = (date(y, 1, 1), date(y, 6, 30)) if first else (date(y, 7, 1), date(y, 12, 31))
        else:
            rng = (date(y, 1, 1), date(y, 12, 31))
        return self._time_phrase(kind, slots), rng

    def _time_phrase(self, kind: str, slots: dict[str, Any]) -> Phrase:
        en_t = self.rng.choice(time_templates(kind, "en", self.split))
        zh_t = self.rng.choice(time_templates(kind, "zh", self.split))
        self._used += [("time-" + kind, "en", en_t), ("time-" + kind, "zh", zh_t)]
        bare, prep = en_t.split("|")
        cls = ("holiday",) if kind.startswith("holiday") else ("time",)
        return Phrase(bare.format(**slots), zh_t.format(**slots), cls, prep.format(**slots))

    def holiday(self, key: str, year: int, wording: str) -> tuple[Phrase, tuple[date, date]]:
        h = next(h for h in HOLIDAYS if h.key == key)
        named, first, last = HOLIDAY_DATES[(key, year)]
        zh_names = h.zh if wording != "holiday_day" else h.zh[:1]
        slots = {"Y": year, "H": self.rng.choice(h.en), "HZ": self.rng.choice(zh_names), "HS": h.zh_holiday}
        if wording == "holiday_span" and slots["HZ"] == "十一":
            slots["HZ"] = "国庆"
        reading = {"holiday_day": "day", "holiday_span": "span"}.get(wording, self.reading)
        return self._time_phrase(wording, slots), ((named, named) if reading == "day" else (first, last))

    # ------------------------------------------------------------------ kinds

    def _photo(self, cond: Callable[[GenPhoto], bool]) -> GenPhoto | None:
        cands = [p for p in self.photos if cond(p)]
        return self.rng.choice(cands) if cands else None

    def _query(self, kind: str, frame: str, source: str, c: Constraint, dims: dict[str, str], **slots: Phrase) -> GenQuery:
        en, zh = self.fill(frame, **slots)
        classes = list(dict.fromkeys(cl for s in slots.values() for cl in s.classes))
        gt = select(self.photos, c)
        if not gt:
            classes.append("zero")
        return GenQuery(en, zh, source, classes, c, gt, kind, dims, list(self._used))

    def _place_of(self, p: GenPhoto) -> tuple[str, str]:
        if p.abroad:
            return ("abroad", p.abroad) if self.rng.random() < 0.8 else ("country", p.country or "")
        levels = [lv for lv in ("district", "city", "province") if getattr(p, lv)]
        if p.district not in self.unique_districts and "district" in levels:
            levels.remove("district")
        level = self.rng.choice(levels)
        return level, getattr(p, level)

    def make(self, kind: str) -> GenQuery | None:
        """One query of ``kind`` (None when the album has nothing to ask it about)."""
        self._used = []
        rng = self.rng
        loc, tim, per, obj = {"Location": "fact"}, {"Time": "fact"}, {"Person": "fact"}, {"Object": "cognitive"}
        if kind in ("district", "city", "province", "abroad", "country", "venue"):
            keys = sorted(k for k in self.visited[kind] if k and (kind != "district" or k in self.unique_districts))
            if not keys:
                return None
            key = rng.choice(keys)
            # No point-of-interest gazetteer ships offline, so a venue is read as a visual constraint
            # beside the album's places (VM), as the planner routes it; its gold is the photos there.
            source = "VM" if kind == "venue" else "M"
            return self._query(kind, "venue" if kind == "venue" else "place", source, Constraint(place=(kind, key)), loc,
                               **{"venue" if kind == "venue" else "place": self.place(kind, key)})
        if kind == "time":
            p = self._photo(lambda q: q.time is not None)
            if p is None or p.time is None:
                return None
            phrase, days = self.when(rng.choice(["month", "month", "day", "season", "half", "year"]), p.time.date())
            return self._query(kind, "time", "M", Constraint(days=(days,)), tim, time=phrase)
        if kind == "holiday":
            years = [y for y in self.life.years if any((h.key, y) in HOLIDAY_DATES for h in HOLIDAYS)]
            all_keys = [(h.key, y) for h in HOLIDAYS for y in years]
            with_photos = list(self.life.holidays_with_photos)
            hkey, year = rng.choice(with_photos if with_photos and rng.random() < 0.85 else all_keys)
            phrase, days = self.holiday(hkey, year, rng.choice(["holiday_day", "holiday_span", "holiday_plain"]))
            return self._query(kind, "time", "M", Constraint(days=(days,)), {"Time": "cognitive"}, time=phrase)
        if kind == "zero_place":
            return self._zero_place()
        if kind == "zero_time":
            y = rng.choice(self.life.years)
            m = rng.randint(1, 12)
            phrase, days = self.when("month", date(y, m, 1))
            q = self._query(kind, "time", "M", Constraint(days=(days,)), tim, time=phrase)
            return q if not q.ground_truth else None
        if kind == "person":
            pid = rng.choice([p.id for p in self.life.people])
            return self._query(kind, "person", "F", Constraint(all_of=(pid,)), per, people=self.person(pid))
        if kind == "kids":
            return self._query(kind, "person", "F", Constraint(any_of=self.children), {"Person": "cognitive"},
                               people=self.kids())
        if kind == "shared":
            en, zh, pair = self.life.shared
            return self._query(kind, "person", "F", Constraint(any_of=pair), per,
                               people=Phrase(en, zh, ("people:shared",)))
        if kind == "people":
            p = self._photo(lambda q: len(q.faces) >= 2)
            if p is None:
                return None
            ids = rng.sample(p.faces, min(len(p.faces), rng.choice([2, 2, 3])))
            return self._query(kind, "people", "F", Constraint(all_of=tuple(sorted(ids, key=int))), per,
                               people=self.people_list(ids))
        if kind == "zero_people":
            ids = [p.id for p in self.life.people if p.id != OWNER]
            for _ in range(30):
                two = tuple(sorted(rng.sample(ids, 2), key=int))
                if not select(self.photos, Constraint(all_of=two)):
                    return self._query(kind, "people", "F", Constraint(all_of=two), per, people=self.people_list(list(two)))
            return None
        if kind in ("people_place", "people_time", "people_holiday", "zero_people_place"):
            return self._people_meta(kind)
        if kind.startswith("scene"):
            return self._scene(kind, obj)
        raise FinegrainError(f"unknown query kind {kind!r}", "a generator bug")

    def _zero_place(self) -> GenQuery | None:
        rng = self.rng
        choice = rng.choice(["district", "city", "abroad"])
        if choice == "district":
            cands = [code for code, (c, _) in self.district_of.items()
                     if c is self.life.home and code not in self.visited["district"] and code in self.unique_districts]
        elif choice == "city":
            cands = [self.city_code[c.zh] for c in CHINESE_CITIES if self.city_code[c.zh] not in self.visited["city"]
                     and c.province_zh not in {x.province_zh for x in self.cities.values()}]
        else:
            cands = [a.en for a in CITIES_ABROAD if a.en not in self.visited["abroad"]
                     and a.country_en not in self.visited["country"]]
        if not cands:
            return None
        key = rng.choice(sorted(cands))
        if choice == "district":  # a district of the home city with no photo (the place layer knows it, the album does not)
            c, d = self.district_of[key]
            phrase = Phrase(d.en, d.zh, ("place:district",))
        else:
            phrase = self.place(choice, key)
        return self._query("zero_place", "place", "M", Constraint(place=(choice, key)), {"Location": "fact"}, place=phrase)

    def _people_meta(self, kind: str) -> GenQuery | None:
        rng = self.rng
        dims = {"Person": "cognitive"}
        p = self._photo(lambda q: bool(set(q.faces) - {OWNER}) and q.time is not None and q.lat is not None)
        if p is None or p.time is None:
            return None
        pid = rng.choice([f for f in p.faces if f != OWNER])
        who = self.person(pid)
        if kind == "people_place":
            level, key = self._place_of(p)
            return self._query(kind, "people_place", "MF", Constraint(place=(level, key), all_of=(pid,)),
                               {**dims, "Location": "fact"}, people=who, place=self.place(level, key))
        if kind == "zero_people_place":
            places = [("city", c) for c in sorted(self.visited["city"])] + [("abroad", a) for a in sorted(self.visited["abroad"])]
            rng.shuffle(places)
            for level, key in places:
                c = Constraint(place=(level, key), all_of=(pid,))
                if not select(self.photos, c):
                    return self._query(kind, "people_place", "MF", c, {**dims, "Location": "fact"}, people=who,
                                       place=self.place(level, key))
            return None
        if kind == "people_time":
            phrase, days = self.when(rng.choice(["month", "season", "year", "day"]), p.time.date())
            return self._query(kind, "people_time", "MF", Constraint(days=(days,), all_of=(pid,)),
                               {**dims, "Time": "fact"}, people=who, time=phrase)
        with_photos = sorted(self.life.holidays_with_photos)
        if not with_photos:
            return None
        hkey, year = rng.choice(with_photos)
        named, first, last = HOLIDAY_DATES[(hkey, year)]
        on_holiday = [q for q in self.photos if q.time is not None and first <= q.time.date() <= last
                      and set(q.faces) - {OWNER}]
        if on_holiday:
            pid = rng.choice([f for f in rng.choice(on_holiday).faces if f != OWNER])
            who = self.person(pid)
        phrase, days = self.holiday(hkey, year, rng.choice(["holiday_span", "holiday_plain"]))
        return self._query(kind, "people_time", "MF", Constraint(days=(days,), all_of=(pid,)),
                           {**dims, "Time": "cognitive"}, people=who, time=phrase)

    def _scene(self, kind: str, obj: dict[str, str]) -> GenQuery | None:
        rng = self.rng
        need_face = "people" in kind
        p = self._photo(lambda q: (not need_face or bool(set(q.faces) - {OWNER}))
                        and (q.time is not None or "time" not in kind) and (q.lat is not None or "place" not in kind))
        if p is None:
            return None
        scene = self._scene_phrase(p.scene)
        slots: dict[str, Phrase] = {"scene": scene}
        c: dict[str, Any] = {"scene": p.scene}
        dims = dict(obj)
        source = "V"
        if need_face:
            others = [f for f in p.faces if f != OWNER]
            kid = [f for f in others if f in self.children]
            if kid and rng.random() < 0.3:
                slots["people"], c["any_of"] = self.kids(), self.children
            else:
                pid = rng.choice(others)
                slots["people"], c["all_of"] = self.person(pid), (pid,)
            dims["Person"] = "cognitive"
            source = "VF"
        if "place" in kind:
            level, key = self._place_of(p)
            slots["place"], c["place"] = self.place(level, key), (level, key)
            dims["Location"] = "fact"
            source = "VM" + source[1:]
        if "time" in kind and p.time is not None:
            slots["time"], days = self.when(rng.choice(["month", "year", "season"]), p.time.date())
            c["days"] = (days,)
            dims["Time"] = "fact"
            source = "VM" + source[1:]
        frame = {"V": "scene", "VM": f"scene_{'place' if 'place' in kind else 'time'}", "VF": "scene_people",
                 "VMF": f"scene_people_{'place' if 'place' in kind else 'time'}"}[source]
        q = self._query(kind, frame, source, Constraint(**c), dims, **slots)
        q.classes = [cl for cl in q.classes if cl != "zero"]  # the visual part's truth is the generator's scene labels
        return q

    def _scene_phrase(self, scene_en: str) -> Phrase:
        for en, zh in [*self.life.scenes, *(s for occ in OCCASION_SCENES.values() for s in occ)]:
            if en == scene_en:
                return Phrase(en, zh)
        raise FinegrainError(f"no scene {scene_en!r}", "a generator bug")

