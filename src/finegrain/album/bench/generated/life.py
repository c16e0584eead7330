"""The owner's life in a generated album: people, places visited and photo sessions.

:func:`make_life` draws, from a seed and the banks a split may use (:mod:`.split`):

- **people**: the owner (face ``"1"``: "me"/"myself", 我/自己); a household, either a partner
  named by role and by name ("wife", "honey", 老婆; "Boyfriend", 男朋友) with one or two
  children ("son"/儿子, "baby"/宝宝, each with a pet name: "Doudou"/豆豆) and parents ("Dad"/爸爸,
  "Mom"/妈妈), or a partner, parents and a nephew or niece ("Nephew"/侄子); friends with Chinese
  names in several nickname styles (full name, given name, "Xiao Sun"/小孙, "Lao Sun"/老孙,
  "Hanghang"/航航, "Hang Ge"/航哥, "Ahang"/阿航) and with English names (Emma/艾玛); two friends
  share one nickname ("Xiao Song"/小宋);
- **places**: a home city (three of its districts and its venues), two or three other Chinese
  cities for trips, one or two cities abroad (landmarks included);
- **sessions**: bursts of photos at one spot with one group of people and one scene, over four
  years: everyday sessions at home, trips (some during a statutory holiday), holiday sessions on
  some but not all days of a holiday's official span, birthdays of the household's children and
  partner.

Positions inside China are drawn inside the district they stand for and checked with the offline
boundary data (``geotool-cn``) at 4 and at 3 decimals, so the engine's place layer sees the place
the generator meant.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from finegrain._lazy import require
from finegrain.album.bench.generated.split import for_split
from finegrain.album.bench.generated.world import (
    CHINESE_CITIES,
    CITIES_ABROAD,
    ENGLISH_NAMES,
    GIVEN_NAMES,
    HOLIDAY_DATES,
    HOLIDAY_YEARS,
    HOLIDAYS,
    OCCASION_SCENES,
    ROLE_BABY,
    ROLE_BOYFRIEND,
    ROLE_DAD,
    ROLE_DAUGHTER,
    ROLE_GIRLFRIEND,
    ROLE_GRANDMA,
    ROLE_HUSBAND,
    ROLE_MOM,
    ROLE_NEPHEW,
    ROLE_NIECE,
    ROLE_SON,
    ROLE_WIFE,
    SCENES,
    SURNAMES,
    YEARS,
    ChineseCity,
    CityAbroad,
    District,
)
from finegrain.errors import FinegrainError

PET_NAMES = (("豆豆", "Doudou"), ("乐乐", "Lele"), ("果果", "Guoguo"), ("糖糖", "Tangtang"), ("朵朵", "Duoduo"),
             ("团团", "Tuantuan"), ("妞妞", "Niuniu"), ("小宝", "Xiaobao"), ("天天", "Tiantian"), ("悠悠", "Youyou"))
OWNER = "1"


@dataclass
class GenPerson:
    """A face cluster: its nicknames (aligned English/Chinese lists), which of them are role words."""

    id: str
    en: list[str]
    zh: list[str]
    role_en: list[str] = field(default_factory=list)  # nicknames that are role or kinship words
    role_zh: list[str] = field(default_factory=list)
    circle: str = "friends"  # owner | partner | child | parent | friends
    birthday: tuple[int, int] | None = None

    def names(self, lang: str) -> list[str]:
        """Nicknames that are names (not roles), else all."""
        pool, roles = (self.en, self.role_en) if lang == "en" else (self.zh, self.role_zh)
        named = [n for n in pool if n not in roles]
        return named or list(pool)


@dataclass
class Session:
    start: datetime
    n: int
    place: tuple[str, Any, Any]  # ("district", ChineseCity, District) | ("venue", ChineseCity, Venue) | ("abroad", CityAbroad, Venue|None)
    group: tuple[str, ...]  # face ids that may appear
    scene: tuple[str, str]
    occasion: str | None = None  # a holiday key or "birthday"


@dataclass
class Life:
    people: list[GenPerson]
    shared: tuple[str, str, tuple[str, str]]  # (English, Chinese nickname, the two face ids)
    home: ChineseCity
    home_districts: tuple[District, ...]
    trips: tuple[ChineseCity, ...]
    abroad: tuple[CityAbroad, ...]
    years: tuple[int, ...]
    sessions: list[Session]
    scenes: tuple[tuple[str, str], ...]
    holidays_with_photos: dict[tuple[str, int], tuple[date, ...]]  # (holiday, year) -> the days that have photos


def _city_key(c: Any) -> str:
    return str(c.zh)


# ------------------------------------------------------------------------------------ people


def _chinese_nicks(rng: random.Random, surname: tuple[str, str], given: tuple[str, str, str], k: int) -> list[tuple[str, str]]:
    s_zh, s_py = surname
    g_zh, p1, p2 = given
    full = (f"{s_py} {p1}{p2}", f"{s_zh}{g_zh}")
    styles = [
        (f"{p1}{p2}", g_zh),
        (f"Xiao {s_py}", f"小{s_zh}"),
        (f"Lao {s_py}", f"老{s_zh}"),
        (f"{p2.capitalize()}{p2}", g_zh[1] * 2),
        (f"{p2.capitalize()} {rng.choice(['Ge', 'Jie'])}", ""),
        (f"A{p2}", f"阿{g_zh[1]}"),
        (f"Little {s_py}", f"小{s_zh}"),
    ]
    out = [full]
    for en, zh in rng.sample(styles, len(styles)):
        if len(out) > k:
            break
        if not zh:  # "Hang Ge" / 航哥, "Hang Jie" / 航姐
            zh = g_zh[1] + ("哥" if en.endswith("Ge") else "姐")
        if zh in (z for _, z in out):
            continue
        out.append((en, zh))
    rng.shuffle(out)
    return out


def _role_person(pid: str, role: tuple[tuple[str, ...], tuple[str, ...]], circle: str,
                 name: list[tuple[str, str]] = ()) -> GenPerson:  # type: ignore[assignment]
    r_en, r_zh = list(role[0]), list(role[1])
    while len(r_en) < len(r_zh):
        r_en.append(r_en[-1].lower() if r_en[-1].lower() not in r_en else r_en[-1].upper())
    while len(r_zh) < len(r_en):
        r_zh.append(r_zh[-1])
    pairs = list(zip(r_en, r_zh)) + list(name)
    return GenPerson(pid, [e for e, _ in pairs], [z for _, z in pairs], r_en, r_zh, circle)


def make_people(rng: random.Random, split: str) -> tuple[list[GenPerson], tuple[str, str, tuple[str, str]]]:
    surnames = list(for_split(SURNAMES, split, "names/surnames", key=lambda s: s[0]))
    given = list(for_split(GIVEN_NAMES, split, "names/given", key=lambda g: g[0]))
    english = list(for_split(ENGLISH_NAMES, split, "names/english", key=lambda e: e[0]))
    pets = list(for_split(PET_NAMES, split, "names/pets", key=lambda p: p[0]))
    for pool in (surnames, given, english, pets):
        rng.shuffle(pool)
    owner = GenPerson(OWNER, ["me", "myself"], ["我", "自己"], ["me", "myself"], ["我", "自己"], "owner")
    people = [owner]
    next_id = iter(str(i) for i in range(2, 100))
    married = rng.random() < 0.6
    partner_role = rng.choice([ROLE_WIFE, ROLE_HUSBAND] if married else [ROLE_BOYFRIEND, ROLE_GIRLFRIEND])
    s, g = surnames.pop(), given.pop()
    partner = _role_person(next(next_id), partner_role, "partner", _chinese_nicks(rng, s, g, 1)[:2])
    partner.birthday = (rng.randint(1, 12), rng.randint(1, 28))
    people.append(partner)
    if married:
        for _ in range(rng.choice([1, 2])):
            pet = pets.pop()
            role = rng.choice([ROLE_SON, ROLE_DAUGHTER, ROLE_BABY])
            child = _role_person(next(next_id), role, "child", [(pet[1], pet[0])])
            child.birthday = (rng.randint(1, 12), rng.randint(1, 28))
            people.append(child)
    else:
        pet = pets.pop()
        child = _role_person(next(next_id), rng.choice([ROLE_NEPHEW, ROLE_NIECE]), "child", [(pet[1], pet[0])])
        child.birthday = (rng.randint(1, 12), rng.randint(1, 28))
        people.append(child)
    people.append(_role_person(next(next_id), ROLE_DAD, "parent"))
    people.append(_role_person(next(next_id), ROLE_MOM, "parent"))
    if rng.random() < 0.4:
        people.append(_role_person(next(next_id), ROLE_GRANDMA, "parent"))
    # friends: two share a surname and the nickname built on it
    shared_surname = surnames.pop()
    shared_style = rng.choice([("Xiao", "小"), ("Lao", "老")])
    shared_en, shared_zh = f"{shared_style[0]} {shared_surname[1]}", f"{shared_style[1]}{shared_surname[0]}"
    pair = []
    for _ in range(2):
        nicks = [n for n in _chinese_nicks(rng, shared_surname, given.pop(), 2) if n[1] != shared_zh][:2]
        nicks.append((shared_en, shared_zh))
        p = GenPerson(next(next_id), [e for e, _ in nicks], [z for _, z in nicks])
        people.append(p)
        pair.append(p.id)
    for _ in range(rng.randint(3, 4)):
        nicks = _chinese_nicks(rng, surnames.pop(), given.pop(), rng.randint(1, 3))
        nicks = [n for n in nicks if n[1] != shared_zh]
        people.append(GenPerson(next(next_id), [e for e, _ in nicks], [z for _, z in nicks]))
    for _ in range(rng.randint(1, 2)):
        en, zh = english.pop()
        people.append(GenPerson(next(next_id), [en], [zh if rng.random() < 0.6 else en]))
    return people, (shared_en, shared_zh, (pair[0], pair[1]))


# ------------------------------------------------------------------------------------ places


class Geo:
    """Points inside named Chinese districts, checked with the offline boundary data."""

    def __init__(self) -> None:
        self.tool = require("GeoToolCN", "geo", "geotool-cn").GeoTool()
        self._cities = {r.name: r for r in self.tool.list_regions("city")}
        self._districts = self.tool.list_regions("district")

    def district_code(self, city: ChineseCity, district: District) -> str:
        c = self._cities.get(city.zh)
        found = [d for d in self._districts if c is not None and d.code[:4] == c.code[:4] and d.name == district.zh]
        if not found:
            raise FinegrainError(f"district {district.zh} of {city.zh} is not in the offline boundary data",
                                 "fix the table in finegrain/album/bench/generated/world.py")
        return str(found[0].code)

    def region(self, code: str) -> Any:
        return self.tool.get_region(code)

    def district_at(self, lat: float, lon: float) -> str | None:
        r = self.tool.reverse(lat, lon)
        return None if r is None or r.district is None else str(r.district.code)

    def inside(self, lat: float, lon: float, code: str) -> bool:
        return all(self.district_at(round(lat, k), round(lon, k)) == code for k in (4, 3))

    def point_in(self, code: str, rng: random.Random) -> tuple[float, float]:
        r = self.region(code)
        for spread in (0.02, 0.05, 0.1, 0.2):
            for _ in range(60):
                lat = round(r.latitude + rng.uniform(-spread, spread), 4)
                lon = round(r.longitude + rng.uniform(-spread, spread), 4)
                if self.inside(lat, lon, code):
                    return lat, lon
        raise FinegrainError(f"found no point inside district {code}", "check the district table")


def offset_km(lat: float, lon: float, dist_km: float, bearing: float) -> tuple[float, float]:
    dlat = dist_km / 111.2 * math.cos(bearing)
    dlon = dist_km / (111.2 * max(0.1, math.cos(math.radians(lat)))) * math.sin(bearing)
    return lat + dlat, lon + dlon


# ------------------------------------------------------------------------------------ sessions


def _window(rng: random.Random) -> tuple[int, ...]:
    start = rng.choice(range(len(YEARS) - 3))
    return YEARS[start:start + 4]


def _random_day(rng: random.Random, years: tuple[int, ...]) -> date:
    first, last = date(years[0], 1, 1), date(years[-1], 12, 31)
    return first + timedelta(days=rng.randrange((last - first).days + 1))


def _at(day: date, rng: random.Random, hours: tuple[int, int] = (8, 21)) -> datetime:
    return datetime(day.year, day.month, day.day, rng.randint(*hours), rng.randrange(60), rng.randrange(60))


def make_life(rng: random.Random, split: str) -> Life:
    people, shared = make_people(rng, split)
    cities = list(for_split(CHINESE_CITIES, split, "places/chinese-cities", key=_city_key))
    abroad_pool = list(for_split(CITIES_ABROAD, split, "places/abroad", key=_city_key))
    scenes = for_split(SCENES, split, "scenes", key=lambda s: s[0])
    homes = [c for c in cities if len(c.districts) >= 4 and c.venues]
    home = rng.choice(homes)
    home_districts = tuple(rng.sample(home.districts, 3))
    others = [c for c in cities if c is not home]
    rng.shuffle(others)
    trips = tuple(others[: rng.randint(2, 3)])
    same_province = [c for c in cities if c is not home and c.province_zh == home.province_zh and c not in trips]
    if same_province and rng.random() < 0.5:
        trips = (*trips[:-1], same_province[0])
    abroad = tuple(rng.sample(abroad_pool, rng.randint(1, 2)))
    years = _window(rng)
    ids = {p.circle: [q.id for q in people if q.circle == p.circle] for p in people}
    friends = ids.get("friends", [])
    household = ids["partner"] + ids["child"]

    def group() -> tuple[str, ...]:
        kind = rng.choices(["solo", "household", "parents", "friends", "shared"], [3, 4, 2, 4, 1])[0]
        if kind == "solo":
            return (OWNER,) if rng.random() < 0.5 else ()
        if kind == "household":
            return (OWNER, *household)
        if kind == "parents":
            return (OWNER, *ids["parent"], *rng.sample(ids["child"], 1))
        if kind == "shared":
            return (OWNER, *shared[2])
        return (OWNER, *rng.sample(friends, rng.randint(1, 3)))

    sessions: list[Session] = []

    def add(day: date, place: tuple[str, Any, Any], occasion: str | None = None, grp: tuple[str, ...] | None = None,
            scene: tuple[str, str] | None = None) -> None:
        sessions.append(Session(_at(day, rng), rng.randint(3, 9), place, group() if grp is None else grp,
                                scene or rng.choice(scenes), occasion))

    def home_place() -> tuple[str, Any, Any]:
        if rng.random() < 0.15:
            return ("venue", home, rng.choice(home.venues))
        return ("district", home, rng.choice(home_districts))

    # everyday life at home
    for _ in range(95):
        add(_random_day(rng, years), home_place())
    # trips in China and abroad: a few consecutive days
    for city in trips:
        day = _random_day(rng, years)
        dists = rng.sample(city.districts, min(2, len(city.districts)))
        for k in range(rng.randint(2, 4)):
            place = ("venue", city, rng.choice(city.venues)) if city.venues and rng.random() < 0.4 \
                else ("district", city, rng.choice(dists))
            add(day + timedelta(days=k), place)
    for far in abroad:
        day = _random_day(rng, years)
        grp = group()
        for k in range(rng.randint(3, 5)):
            for _ in range(2):
                lm = rng.choice(far.landmarks) if rng.random() < 0.7 else None
                add(day + timedelta(days=k), ("abroad", far, lm), grp=grp)
    # holidays: some holidays of the window's holiday years, photos on some but not all days of the span
    holiday_days: dict[tuple[str, int], tuple[date, ...]] = {}
    for year in (y for y in years if y in HOLIDAY_YEARS):
        for h in rng.sample(HOLIDAYS, 4):
            named, first, last = HOLIDAY_DATES[(h.key, year)]
            span = [first + timedelta(days=i) for i in range((last - first).days + 1)]
            k = rng.randint(1, max(1, len(span) - 1))
            days = sorted(rng.sample(span, k))
            holiday_days[(h.key, year)] = tuple(days)
            trip = rng.choice(trips) if len(span) >= 5 and rng.random() < 0.5 else None
            for day in days:
                place = ("district", trip, rng.choice(trip.districts)) if trip else home_place()
                occ = OCCASION_SCENES[h.key]
                add(day, place, h.key, scene=rng.choice(occ) if rng.random() < 0.6 else None)
    # birthdays of the partner and the children
    for p in people:
        if p.birthday is None:
            continue
        for year in rng.sample(years, 2):
            month, dom = p.birthday
            add(date(year, month, dom), ("district", home, rng.choice(home_districts)), "birthday",
                grp=(OWNER, p.id, *rng.sample(household, 1)), scene=rng.choice(OCCASION_SCENES["birthday"]))
    sessions.sort(key=lambda s: s.start)
    return Life(people, shared, home, home_districts, trips, abroad, years, sessions, scenes, holiday_days)
