"""Calendar tags of a capture time: season, weekday, part of day, festivals, holidays.

Definitions (all on the photo's local wall-clock time; a time-zone aware
datetime is read as its own local time, the offset is not converted):

- **season**: northern-hemisphere meteorological seasons: spring = March-May,
  summer = June-August, autumn = September-November, winter = December-February.
- **part of day** by hour: night 00:00-04:59, morning 05:00-10:59, noon
  11:00-12:59, afternoon 13:00-16:59, evening 17:00-20:59, night 21:00-23:59.
- **weekend**: Saturday and Sunday (the calendar weekend, whatever make-up
  workdays China declares; those are in ``is_day_off``).
- **festivals** (the day itself, for every country): the Chinese lunar
  festivals (Spring Festival and its eve 除夕, Lantern, Dragon Boat, Qixi,
  Mid-Autumn, Double Ninth, Laba) from ``lunardate``; Qingming (the solar term,
  via ``chinese-calendar``) and fixed-date days: New Year's Day and Eve,
  Valentine's, Women's Day, Labour Day, Children's Day, National Day, Halloween,
  Christmas and its Eve, Teachers' Day.
- **holidays**: public holidays of ``country``: for CN the official days off
  of ``chinese-calendar`` (every day of the period, e.g. 国庆假期 Oct 1-7), for
  other countries the ``holidays`` package's list (English names; Chinese
  ones where the package has them).

:func:`festival_dates` turns a festival name (key, English or Chinese name,
alias) and a year into its dates; :func:`festival_names` lists the names.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

from finegrain._lazy import require
from finegrain.album.engine.profile.records import Tag, TimeTags
from finegrain.errors import FinegrainError, UnknownNameError

__all__ = ["time_tags", "festival_dates", "festival_names", "find_festival", "SEASONS", "PARTS_OF_DAY", "FESTIVALS"]

SEASONS: dict[str, Tag] = {
    "spring": Tag("spring", "spring", "春天", "season", ("spring", "春天", "春季", "春")),
    "summer": Tag("summer", "summer", "夏天", "season", ("summer", "夏天", "夏季", "夏")),
    "autumn": Tag("autumn", "autumn", "秋天", "season", ("autumn", "fall", "秋天", "秋季", "秋")),
    "winter": Tag("winter", "winter", "冬天", "season", ("winter", "冬天", "冬季", "冬")),
}
_SEASON_OF_MONTH = {12: "winter", 1: "winter", 2: "winter", 3: "spring", 4: "spring", 5: "spring",
                    6: "summer", 7: "summer", 8: "summer", 9: "autumn", 10: "autumn", 11: "autumn"}

# (key, start hour inclusive, end hour exclusive)
_PARTS = (("night", 0, 5), ("morning", 5, 11), ("noon", 11, 13), ("afternoon", 13, 17), ("evening", 17, 21), ("night", 21, 24))
PARTS_OF_DAY: dict[str, Tag] = {
    "morning": Tag("morning", "morning", "上午", "part_of_day", ("morning", "早上", "上午", "清晨", "早晨")),
    "noon": Tag("noon", "noon", "中午", "part_of_day", ("noon", "midday", "lunchtime", "中午", "午间")),
    "afternoon": Tag("afternoon", "afternoon", "下午", "part_of_day", ("afternoon", "下午", "午后")),
    "evening": Tag("evening", "evening", "傍晚", "part_of_day", ("evening", "傍晚", "晚上", "黄昏")),
    "night": Tag("night", "night", "夜里", "part_of_day", ("night", "at night", "夜里", "夜晚", "深夜", "晚上", "半夜")),
}
PART_OF_DAY_HOURS = {k: (s, e) for k, s, e in _PARTS}

_WEEKDAYS = tuple(
    Tag(en.lower(), en, zh, "weekday", (en.lower(), zh, alt))
    for en, zh, alt in (
        ("Monday", "星期一", "周一"), ("Tuesday", "星期二", "周二"), ("Wednesday", "星期三", "周三"),
        ("Thursday", "星期四", "周四"), ("Friday", "星期五", "周五"), ("Saturday", "星期六", "周六"),
        ("Sunday", "星期日", "周日"),
    )
)


@dataclass(frozen=True, slots=True)
class Festival:
    """A festival: ``calendar`` is ``"lunar"`` (month, day of the Chinese
    calendar), ``"solar"`` (month, day) or ``"term"`` (a solar term, Qingming);
    ``offset`` days are added (除夕 is the day before lunar 1/1)."""

    tag: Tag
    calendar: str
    month: int
    day: int
    offset: int = 0


def _f(key: str, en: str, zh: str, cal: str, month: int, day: int, aliases: tuple[str, ...] = (), offset: int = 0) -> Festival:
    al = tuple(dict.fromkeys((en.lower(), zh, *aliases)))
    return Festival(Tag(key, en, zh, "festival", al), cal, month, day, offset)


FESTIVALS: dict[str, Festival] = {f.tag.key: f for f in (
    _f("spring_festival", "Spring Festival", "春节", "lunar", 1, 1,
       ("chinese new year", "lunar new year", "the spring festival", "大年初一", "春节")),
    _f("chuxi", "Lunar New Year's Eve", "除夕", "lunar", 1, 1,
       ("chinese new year's eve", "new_years_eve_lunar", "new year's eve dinner", "年三十", "大年三十", "大年夜", "除夕夜", "年夜饭"), offset=-1),
    _f("lantern", "Lantern Festival", "元宵节", "lunar", 1, 15, ("元宵", "yuanxiao festival")),
    _f("dragon_boat", "Dragon Boat Festival", "端午节", "lunar", 5, 5, ("端午", "duanwu festival", "duanwu")),
    _f("qixi", "Qixi Festival", "七夕节", "lunar", 7, 7, ("七夕", "qixi", "chinese valentine's day", "double seventh festival")),
    _f("mid_autumn", "Mid-Autumn Festival", "中秋节", "lunar", 8, 15,
       ("mid autumn festival", "mid-autumn", "mid autumn", "moon festival", "中秋")),
    _f("double_ninth", "Double Ninth Festival", "重阳节", "lunar", 9, 9, ("重阳", "chongyang festival")),
    _f("laba", "Laba Festival", "腊八节", "lunar", 12, 8, ("腊八", "laba")),
    _f("qingming", "Qingming Festival", "清明节", "term", 4, 4, ("清明", "tomb-sweeping day", "tomb sweeping day", "qingming")),
    _f("new_year", "New Year's Day", "元旦", "solar", 1, 1, ("new year", "new years day", "元旦节", "新年")),
    _f("new_years_eve", "New Year's Eve", "跨年夜", "solar", 12, 31, ("new years eve", "跨年")),
    _f("valentines", "Valentine's Day", "情人节", "solar", 2, 14, ("valentines day", "valentine's", "valentine", "西方情人节")),
    _f("womens_day", "Women's Day", "妇女节", "solar", 3, 8, ("international women's day", "三八节", "女神节")),
    _f("labour_day", "Labour Day", "劳动节", "solar", 5, 1, ("labor day", "may day", "五一", "五一劳动节")),
    _f("childrens_day", "Children's Day", "儿童节", "solar", 6, 1, ("六一", "六一儿童节")),
    _f("teachers_day", "Teachers' Day", "教师节", "solar", 9, 10, ("teachers day", "teacher's day")),
    _f("national_day", "National Day", "国庆节", "solar", 10, 1, ("国庆", "china national day")),
    _f("halloween", "Halloween", "万圣节", "solar", 10, 31, ("万圣夜", "万圣节前夜")),
    _f("christmas_eve", "Christmas Eve", "平安夜", "solar", 12, 24, ()),
    _f("christmas", "Christmas", "圣诞节", "solar", 12, 25, ("christmas day", "xmas", "圣诞")),
)}

# chinese-calendar's holiday names -> (key, en, zh) of the statutory day-off period
_CN_STATUTORY = {
    "New Year's Day": ("new_year_holiday", "New Year holiday", "元旦假期"),
    "Spring Festival": ("spring_festival_holiday", "Spring Festival holiday", "春节假期"),
    "Tomb-sweeping Day": ("qingming_holiday", "Qingming holiday", "清明假期"),
    "Labour Day": ("labour_day_holiday", "Labour Day holiday", "五一假期"),
    "Dragon Boat Festival": ("dragon_boat_holiday", "Dragon Boat Festival holiday", "端午假期"),
    "National Day": ("national_day_holiday", "National Day holiday", "国庆假期"),
    "Mid-autumn Festival": ("mid_autumn_holiday", "Mid-Autumn Festival holiday", "中秋假期"),
    "Anti-Fascist 70th Day": ("victory_day_holiday", "Victory Day holiday", "抗战胜利纪念日假期"),
}
_STATUTORY_ALIASES = {
    "national_day_holiday": ("golden week", "national day golden week", "国庆长假", "十一", "十一假期", "国庆黄金周", "黄金周"),
    "spring_festival_holiday": ("chinese new year holiday", "春节长假", "过年"),
    "labour_day_holiday": ("may day holiday", "五一长假", "五一小长假"),
}


def _statutory_tag(name: str) -> Tag:
    key, en, zh = _CN_STATUTORY.get(name, (name.lower().replace(" ", "_") + "_holiday", name + " holiday", ""))
    aliases = tuple(dict.fromkeys(a for a in (en.lower(), zh, *_STATUTORY_ALIASES.get(key, ())) if a))
    return Tag(key, en, zh, "statutory_holiday", aliases)


@lru_cache(maxsize=64)
def _festival_days(year: int) -> dict[date, tuple[Tag, ...]]:
    """Festival tags by date for one Gregorian year."""
    out: dict[date, list[Tag]] = {}
    for f in FESTIVALS.values():
        for d in _dates_of(f, year):
            out.setdefault(d, []).append(f.tag)
    return {d: tuple(tags) for d, tags in out.items()}


def _dates_of(f: Festival, year: int) -> list[date]:
    if f.calendar == "solar":
        return [date(year, f.month, f.day) + timedelta(days=f.offset)]
    if f.calendar == "term":
        return [_qingming(year)]
    lunardate = require("lunardate", "time")
    # A lunar date of lunar year Y (or Y-1 shifted by the offset) may fall in Gregorian year `year`.
    days = []
    for ly in (year - 1, year):
        try:
            d = lunardate.LunarDate(ly, f.month, f.day).to_solar_date() + timedelta(days=f.offset)
        except (ValueError, IndexError):  # outside lunardate's range (1900-2099)
            continue
        if d.year == year:
            days.append(d)
    return days


def _qingming(year: int) -> date:
    """The Qingming solar term (April 4 or 5), from chinese-calendar where it covers the year."""
    cc = require("chinese_calendar", "time", "chinese-calendar")
    try:
        terms = cc.get_solar_terms(date(year, 4, 1), date(year, 4, 10))
        for d, name in terms:
            if name in ("清明", "Pure Brightness", "qing_ming"):
                return d
    except Exception:  # noqa: BLE001 - out of the covered years: the usual date below
        pass
    return date(year, 4, 4)  # approximate: the term falls on April 4 or 5


@lru_cache(maxsize=4096)
def _day_tags(day: date, country: str | None) -> tuple[tuple[Tag, ...], tuple[Tag, ...], bool | None]:
    festivals = _festival_days(day.year).get(day, ())
    holidays: list[Tag] = []
    weekend = day.weekday() >= 5
    day_off: bool | None
    if country == "CN":
        periods = _cn_periods(day.year)
        if periods is None:
            day_off = None
        else:
            names, day_off = periods.get(day, ((), weekend))
            holidays.extend(_statutory_tag(n) for n in names)
    elif country:
        table = _country_table(country, day.year)
        names = table.get_list(day) if table is not None else []
        for n in names:
            holidays.append(Tag(n.lower().replace(" ", "_"), n, "", "holiday", (n.lower(),)))
        day_off = weekend or bool(names)
    else:
        day_off = weekend
    return tuple(festivals), tuple(holidays), day_off


@lru_cache(maxsize=64)
def _cn_periods(year: int) -> dict[date, tuple[tuple[str, ...], bool]] | None:
    """China's official days off around ``year``: date -> (holiday names of its
    period, is day off). A period is a maximal run of consecutive days off that
    holds at least one named holiday day, so the weekend joined to a holiday
    (and Mid-Autumn merged into the National Day week) belong to it.
    None when chinese-calendar does not cover ``year``."""
    cc = require("chinese_calendar", "time", "chinese-calendar")
    status: dict[date, tuple[bool, str | None]] = {}
    d, end = date(year - 1, 12, 1), date(year + 1, 1, 31)
    while d <= end:
        try:
            on, name = cc.get_holiday_detail(d)
            status[d] = (bool(on), str(name) if on and name else None)
        except NotImplementedError:
            if d.year == year:
                return None
        d += timedelta(days=1)
    out: dict[date, tuple[tuple[str, ...], bool]] = {}
    days = sorted(status)
    i = 0
    while i < len(days):
        j = i
        while j + 1 < len(days) and status[days[j + 1]][0] and status[days[i]][0] and days[j + 1] - days[j] == timedelta(days=1):
            j += 1
        run = days[i : j + 1]
        names = tuple(dict.fromkeys(n for x in run if (n := status[x][1])))
        for x in run:
            if x.year == year:
                out[x] = (names if status[x][0] else (), status[x][0])
        i = j + 1
    return out


@lru_cache(maxsize=256)
def _country_table(country: str, year: int) -> Any:
    hol = require("holidays", "time")
    try:
        return hol.country_holidays(country, years=year, language="en_US")
    except NotImplementedError:
        try:
            return hol.country_holidays(country, years=year)
        except NotImplementedError:
            return None


def time_tags(t: datetime, *, country: str | None = "CN") -> TimeTags:
    """The calendar tags of capture time ``t`` (see the module docstring for every rule).

    ``country`` (ISO 3166-1 alpha-2) chooses the public holidays; None for none.
    """
    if not isinstance(t, datetime):
        raise FinegrainError(f"time_tags needs a datetime, got {t!r}", "parse the time first, e.g. datetime.fromisoformat(...)")
    if country is not None:
        if not (isinstance(country, str) and len(country) == 2 and country.isalpha()):
            raise FinegrainError(f"country must be an ISO 3166-1 alpha-2 code, got {country!r}", "e.g. 'CN', 'JP', 'US' or None")
        country = country.upper()
        if country != "CN" and _country_table(country, t.year) is None:
            raise UnknownNameError("holiday country", country, require("holidays", "time").list_supported_countries())
    festivals, holidays, day_off = _day_tags(t.date(), country)
    part = next(k for k, s, e in _PARTS if s <= t.hour < e)
    return TimeTags(
        year=t.year,
        month=t.month,
        day=t.day,
        season=SEASONS[_SEASON_OF_MONTH[t.month]],
        weekday=t.weekday(),
        weekday_tag=_WEEKDAYS[t.weekday()],
        is_weekend=t.weekday() >= 5,
        part_of_day=PARTS_OF_DAY[part],
        festivals=festivals,
        holidays=holidays,
        is_day_off=day_off,
        country=country,
    )


def _norm(name: str) -> str:
    return " ".join(name.strip().lower().replace("’", "'").replace("_", " ").split())


@lru_cache(maxsize=1)
def _name_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for key, f in FESTIVALS.items():
        for a in (key, f.tag.en, f.tag.zh, *f.tag.aliases):
            index.setdefault(_norm(a), key)
    for _, (key, en, zh) in _CN_STATUTORY.items():
        for a in (key, en, zh, *_STATUTORY_ALIASES.get(key, ())):
            index.setdefault(_norm(a), key)
    return index


def festival_names() -> dict[str, str]:
    """Every accepted festival / holiday name (lower-cased, en and zh) -> its key."""
    return dict(_name_index())


def find_festival(name: str) -> str | None:
    """The key of festival or statutory holiday ``name`` (any alias, either language), or None."""
    return _name_index().get(_norm(name))


def festival_dates(name: str, year: int) -> list[date]:
    """The dates of festival ``name`` in Gregorian ``year``, sorted.

    ``name`` is a key (``"mid_autumn"``), an English or Chinese name or an alias
    ("Mid-Autumn Festival", "中秋节", "moon festival"). A festival is one day
    (two lunar dates may fall in one Gregorian year only for 除夕-type edge
    cases, then both are listed). A statutory holiday period of China
    ("national day holiday", "国庆假期", "golden week") gives every official
    day off of that period in the year, from ``chinese-calendar``.
    """
    key = find_festival(name)
    if key is None:
        raise UnknownNameError("festival", name, [k for k in _name_index() if k.isascii()])
    if not isinstance(year, int) or not 1901 <= year <= 2099:
        raise FinegrainError(f"festival year out of range: {year!r}", "use a year in 1901-2099")
    if key in FESTIVALS:
        return sorted(_dates_of(FESTIVALS[key], year))
    wanted = next(n for n, v in _CN_STATUTORY.items() if v[0] == key)
    periods = _cn_periods(year)
    if periods is None:
        raise FinegrainError(
            f"chinese-calendar has no official holidays for {year}", "upgrade chinese-calendar, or use the festival day itself",
        )
    days = [d for d, (names, _) in sorted(periods.items()) if wanted in names]
    return days


