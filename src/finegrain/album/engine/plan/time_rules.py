"""Time expressions of a query, in Chinese and English, as date ranges.

Rules, applied in this order, each consuming the text it matched:

1. full dates: "June 30, 2025", "2025年6月30日", "25年11月16号", "6月30日" (no year: the latest
   such date on or before the album's latest date);
2. festivals and holidays (Spring Festival/春节, Mid-Autumn/中秋, National Day/国庆, Labor Day/
   劳动节/五一, Dragon Boat/端午, Qixi/七夕, Qingming/清明, Christmas/圣诞, New Year/元旦, ...);
   lunar dates come from the profile's ``timetags.festival_dates`` when installed, else from
   ``lunardate`` when installed, else the festival is recorded without dates. China's seven
   statutory holidays with a year ("National Day 2021") are read as ``holiday``
   (:mod:`~finegrain.album.engine.plan.holidays`): ``"span"`` (the default) is the official days off
   that year, ``"day"`` the holiday's own day; the query's wording next to the holiday ("the
   National Day holiday", "放假期间"; "the very day of Labor Day", "当天") selects the reading
   before the option does (``holidays.holiday_wording``); without a year a fixed-date holiday
   recurs every year (its usual days, or its one day) and a lunar one covers the last ten years;
   "十一" right after a year ("2019年十一", "去年的十一") is National Day, not the number eleven;
3. year halves ("second half of 2022", "2022's first half", "2022年下半年"), thirds of a year or
   month ("early 2019" = January-April, "mid-2019", "the end of May" = May 21-31, "2019年底", "5月初"), seasons ("summer", "夏天", "秋日"),
   months ("May", "五月", "5月");
4. year anchors: "2023", "2023年", "23年", relative "last year"/"去年", "this year"/"今年",
   "the year before last"/"前年"; a season/month/festival/half takes the query's year anchor,
   "last summer" is the latest summer that ended before the album's latest date,
   "this spring" the spring of the latest date's year; without any anchor it recurs every year;
5. other relative words: "last month"/"上个月", "last week"/"上周", "recently"/"最近";
6. weekends/周末, weekdays/工作日, and parts of the day (morning/早上, afternoon/下午,
   night/晚上, ...), which narrow every range (or form one on their own).

``find_times`` returns the ranges and the matched spans, so the planner can explain them
and remove them from the visual text.

A date that does not exist ("February 30", "2023年2月29日", "13月", "year 99999") or that
falls outside the calendar Python can count (before year 1, after year 9999: "last week"
of an album whose newest photo is dated 0001-01-02) gives no range: its match carries the
reason (``TimeMatch.impossible``), so the planner can say so and the engine can answer
"no photo can match" instead of failing.
"""

from __future__ import annotations

import calendar
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import MAXYEAR, MINYEAR, date, timedelta
from typing import Any

from finegrain.album.engine.plan.holidays import (
    DEFAULT_HOLIDAY_READING,
    STATUTORY,
    check_holiday_reading,
    holiday_day,
    holiday_wording,
    official_span,
)
from finegrain.album.engine.plan.records import TimeRange

_MONTHS_EN = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS_EN.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m and m != "May"})
_MONTHS_EN["sept"] = 9
_ZH_DIGIT = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}

SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11), "winter": (12, 2)}
_SEASON_ZH = {"春": "spring", "夏": "summer", "秋": "autumn", "冬": "winter"}
_PART_EN = {"early": 1, "beginning": 1, "start": 1, "mid": 2, "middle": 2, "late": 3, "end": 3}

# name -> (aliases en, aliases zh, fixed (month, day, n days) or None for lunar (lunar month, day, n days, offset))
_FESTIVALS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str, tuple[int, int, int, int]]] = {
    "spring_festival": (("spring festival", "chinese new year", "lunar new year"), ("春节", "过年", "大年初一", "新春"),
                        "lunar", (1, 1, 7, -1)),
    "new_years_eve_lunar": ((), ("除夕", "年三十", "大年夜"), "lunar", (1, 1, 1, -1)),
    "lantern": (("lantern festival",), ("元宵节", "元宵"), "lunar", (1, 15, 1, 0)),
    "dragon_boat": (("dragon boat festival", "dragon boat"), ("端午节", "端午"), "lunar", (5, 5, 3, -1)),
    "qixi": (("qixi festival", "qixi", "chinese valentine's day"), ("七夕节", "七夕"), "lunar", (7, 7, 1, 0)),
    "mid_autumn": (("mid-autumn festival", "mid-autumn", "mid autumn", "moon festival"), ("中秋节", "中秋"),
                   "lunar", (8, 15, 3, -1)),
    "double_ninth": (("double ninth festival", "chongyang"), ("重阳节", "重阳"), "lunar", (9, 9, 1, 0)),
    "qingming": (("qingming festival", "tomb-sweeping day", "qingming"), ("清明节", "清明"), "fixed", (4, 4, 3, 0)),
    "national_day": (("national day", "golden week"), ("国庆节", "国庆", "十一假期", "十一黄金周"), "fixed", (10, 1, 7, 0)),
    "labor_day": (("labor day", "labour day", "may day"), ("劳动节", "五一"), "fixed", (5, 1, 5, 0)),
    "new_year": (("new year's day", "new year"), ("元旦", "新年"), "fixed", (1, 1, 1, 0)),
    "new_years_eve": (("new year's eve",), ("跨年",), "fixed", (12, 31, 2, 0)),
    "christmas_eve": (("christmas eve",), ("平安夜",), "fixed", (12, 24, 1, 0)),
    "christmas": (("christmas",), ("圣诞节", "圣诞"), "fixed", (12, 24, 2, 0)),
    "valentine": (("valentine's day", "valentines day", "valentine"), ("情人节",), "fixed", (2, 14, 1, 0)),
    "halloween": (("halloween",), ("万圣节",), "fixed", (10, 31, 1, 0)),
    "childrens_day": (("children's day",), ("儿童节", "六一"), "fixed", (6, 1, 1, 0)),
}

DAY_PARTS_EN = {
    "early morning": (5, 8), "morning": (5, 11), "noon": (11, 13), "midday": (11, 13), "afternoon": (12, 17),
    "evening": (17, 21), "dusk": (17, 19), "night": (18, 4), "tonight": (18, 4), "late night": (22, 4),
    "midnight": (23, 2),
}
DAY_PARTS_ZH = {
    "清晨": (5, 8), "早晨": (5, 10), "早上": (5, 10), "一早": (5, 9), "上午": (8, 11), "中午": (11, 13),
    "午后": (12, 16), "下午": (12, 17), "傍晚": (17, 19), "黄昏": (17, 19), "晚上": (18, 4), "夜晚": (18, 4),
    "夜里": (19, 4), "深夜": (22, 4), "半夜": (23, 3), "凌晨": (0, 5), "夜间": (18, 4),
}


@dataclass(frozen=True, slots=True)
class TimeMatch:
    """A time expression at ``span`` of the query; ``impossible`` says why it names no day
    of the calendar (None for an expression that gave ranges)."""

    span: tuple[int, int]
    text: str
    rule: str
    impossible: str | None = None


class NoCalendarDate(ValueError):
    """A festival (or other date) the calendar tables cannot place in the year asked."""


@dataclass(frozen=True, slots=True)
class _Impossible:
    """The value of a match that names no day of the calendar, with the reason."""

    reason: str


@dataclass
class _Found:
    kind: str  # date | festival | half | part | season | month | year | relspan | weekdays | hours | wording
    span: tuple[int, int]
    rule: str
    value: Any
    relative: str | None = None  # "last" | "this" for "last summer" / "this spring"
    reading: str | None = None  # a holiday's reading its wording selects ("span" | "day"); None: the option's
    part: int | None = None  # a year's or month's third: 1 early, 2 mid, 3 late ("late 2019", "5月底")


MODIFIER_RULE = "festival word used as a modifier (kept as visual)"
NAME_RULE = "part of a person's name (not a date)"


def find_times(
    text: str, lang: str, latest: date, *, modifier: Callable[[int], bool] | None = None,
    is_name: Callable[[tuple[int, int]], bool] | None = None, holiday: str = DEFAULT_HOLIDAY_READING,
) -> tuple[tuple[TimeRange, ...], tuple[TimeMatch, ...]]:
    """The time ranges of ``text`` (``lang`` 'en' or 'zh') against the album's ``latest`` date.

    ``modifier(end)`` says whether the festival word ending at ``end`` modifies a noun
    ("Christmas tree"); such a word gives no range and is reported with ``MODIFIER_RULE``.
    ``is_name(span)`` says whether the text at ``span`` belongs to a person's name ("Jun" in
    "Li Jun"); such a match gives no range and is reported with ``NAME_RULE``.
    ``holiday``: how a statutory holiday is read, ``"span"`` or ``"day"`` (module docstring).
    """
    check_holiday_reading(holiday)
    taken = [False] * len(text)
    found: list[_Found] = []
    for kind, rule, pattern, make in (_scan_en() if lang == "en" else _scan_zh(latest)):
        for m in pattern.finditer(text):
            s, e = m.span()
            if s == e or any(taken[s:e]):
                continue
            value = make(m)
            if value is None:
                continue
            rel = None
            if isinstance(value, _Relative):
                rel, value = value.word, value.value
            found.append(_Found(kind, (s, e), rule, value, rel))
            for i in range(s, e):
                taken[i] = True
    found.sort(key=lambda f: f.span)
    names = [f for f in found if is_name is not None and is_name(f.span)]
    dropped = [f for f in found if f.kind == "festival" and modifier is not None and modifier(f.span[1])
               and f not in names]
    found = _with_holiday_wording(found, text, lang, taken, skip=[*names, *dropped])
    _attach_parts(found, text, lang)
    kept = [f for f in found if f not in dropped and f not in names]
    failed: dict[int, str] = {id(f): f.value.reason for f in kept if isinstance(f.value, _Impossible)}
    ranges = _resolve([f for f in kept if id(f) not in failed], text, latest, failed, holiday)
    matches = tuple(
        TimeMatch(f.span, text[f.span[0]:f.span[1]],
                  NAME_RULE if f in names else MODIFIER_RULE if f in dropped else f.rule, failed.get(id(f)))
        for f in found
    )
    return ranges, matches


def _with_holiday_wording(found: list[_Found], text: str, lang: str, taken: list[bool], skip: list[_Found]
                          ) -> list[_Found]:
    """``found`` with each festival's reading set from the words next to it, and those words
    (free text only) as matches of their own, so the planner consumes them; festivals in
    ``skip`` (part of a name, or a modifier) are left alone."""
    years = [f for f in found if f.kind == "year"]
    out = list(found)
    for f in found:
        if f.kind != "festival" or f in skip:
            continue
        near = min(years, key=lambda y: min(abs(y.span[0] - f.span[1]), abs(f.span[0] - y.span[1])), default=None)
        said = holiday_wording(text, lang, f.span, near.span if near is not None else None)
        if said is None:
            continue
        reading, where = said
        if where is not None:
            if any(taken[where[0]:where[1]]):
                continue
            for i in range(*where):
                taken[i] = True
            rule = "holiday wording: the official days off" if reading == "span" else "holiday wording: the day itself"
            out.append(_Found("wording", where, rule, reading))
        f.reading = reading
    return sorted(out, key=lambda f: f.span)


def _attach_parts(found: list[_Found], text: str, lang: str) -> None:
    """Give each "early"/"mid"/"late" (年初, 月底, ...) to the year or month it qualifies: in
    English the one right after it ("late 2019", "the end of May"), in Chinese the one right
    before ("2019年底", "5月初")."""
    anchors = [f for f in found if f.kind in ("year", "month")]
    for p in (f for f in found if f.kind == "part"):
        if lang == "zh":
            near = [a for a in anchors if a.span[1] == p.span[0]]
        else:
            near = [a for a in anchors if a.span[0] >= p.span[1] and not text[p.span[1]:a.span[0]].strip()]
        if near:
            min(near, key=lambda a: abs(a.span[0] - p.span[1])).part = p.value


# --------------------------------------------------------------------------- patterns


def _month_day_year(month: int, day: int, year: int | None) -> Any:
    """The date (or ``("date", month, day, None)`` without a year), or why there is none."""
    why = no_such_date(month, day, year)
    if why is not None:
        return _Impossible(why)
    return ("date", month, day, year) if year is None else date(year, month, day)


def no_such_date(month: int, day: int | None = None, year: int | None = None) -> str | None:
    """Why ``year-month-day`` names no day of the calendar (None when it does). Without a
    year, a day counts when it exists in some year (February 29 does)."""
    if year is not None and not MINYEAR <= year <= MAXYEAR:
        return f"year {year} is outside the calendar ({MINYEAR}-{MAXYEAR})"
    if not 1 <= month <= 12:
        return f"there is no month {month} (months are 1-12)"
    if day is None:
        return None
    name = calendar.month_name[month]
    if year is None:
        most = 29 if month == 2 else calendar.monthrange(2001, month)[1]
        return None if 1 <= day <= most else f"{name} has no day {day} (it has {most} days at most)"
    most = calendar.monthrange(year, month)[1]
    if 1 <= day <= most:
        return None
    if month == 2 and day == 29:
        return f"{year} is not a leap year: February {year} has 28 days"
    return f"{name} {year} has no day {day} (it has {most} days)"


def _year_value(y: int) -> Any:
    """An absolute year anchor, or why it cannot be one."""
    if not MINYEAR <= y <= MAXYEAR:
        return _Impossible(f"year {y} is outside the calendar ({MINYEAR}-{MAXYEAR})")
    return ("abs", y)


def _zh_int(s: str) -> int | None:
    """A number written in digits or in Chinese numerals up to 99 (十, 十三, 二十, 三十一)."""
    if s.isdigit():
        return int(s)
    if "十" in s:
        tens, _, ones = s.partition("十")
        t = 1 if not tens else _ZH_DIGIT.get(tens)
        o = 0 if not ones else _ZH_DIGIT.get(ones)
        return None if t is None or o is None else t * 10 + o
    return _ZH_DIGIT.get(s)


def _scan_en() -> list[tuple[str, str, re.Pattern[str], Callable[[re.Match[str]], Any]]]:
    mon = r"(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?"
    fest_alts = sorted(((a, k) for k, v in _FESTIVALS.items() for a in v[0]), key=lambda x: -len(x[0]))
    fest_pat = "|".join(re.escape(a) for a, _ in fest_alts)
    fest_of = dict(fest_alts)
    seasons = "spring|summer|autumn|fall|winter"
    rel = r"(?:(last|this|past|previous)\s+)?"
    I = re.IGNORECASE
    return [
        ("date", "date: month day, year", re.compile(rf"\b{mon}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)\b"),
         lambda m: _month_day_year(_MONTHS_EN[m[1].lower()], int(m[2]), int(m[3]))),
        ("date", "date: day month year", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{mon},?\s+((?:19|20)\d\d)\b"),
         lambda m: _month_day_year(_MONTHS_EN[m[2].lower()], int(m[1]), int(m[3]))),
        ("date", "date: ISO", re.compile(r"\b((?:19|20)\d\d)-(\d{1,2})-(\d{1,2})\b"),
         lambda m: _month_day_year(int(m[2]), int(m[3]), int(m[1]))),
        ("date", "date: month day", re.compile(rf"\b{mon}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!\s*(?:,\s*)?(?:19|20)\d\d)"),
         lambda m: _month_day_year(_MONTHS_EN[m[1].lower()], int(m[2]), None)),
        ("festival", "festival", re.compile(rf"\b(?:(last|this)\s+)?({fest_pat})(?:'s)?\b", I),
         lambda m: _rel(m[1], fest_of[m[2].lower()])),
        # "early 2019", "mid-2020", "the end of May": a third of the year or month that follows
        ("part", "early/mid/late", re.compile(
            r"\b(early|mid|late|the\s+(?:beginning|start|middle|end)\s+of)(?:\s+|-)(?=(?:19|20)\d\d\b|(?:january|february|"
            r"march|april|may|june|july|august|september|october|november|december)\b)", I),
         lambda m: _PART_EN[m[1].lower().split()[1 if m[1].lower().startswith("the") else 0]]),
        ("half", "year half", re.compile(r"\b(first|second|1st|2nd)\s+half\s+of\s+(?:the\s+year\s+)?", I),
         lambda m: 1 if m[1].lower() in ("first", "1st") else 2),
        # "2019's first half", "2019 second half": the half after its year
        ("half", "year half", re.compile(r"(?:(?<=\d\d\d\d's\s)|(?<=\d\d\d\d\s))(first|second|1st|2nd)\s+half\b", I),
         lambda m: 1 if m[1].lower() in ("first", "1st") else 2),
        ("season", "season", re.compile(rf"\b{rel}({seasons})(?:time)?\b", I),
         lambda m: _rel(m[1], "autumn" if m[2].lower() == "fall" else m[2].lower())),
        ("month", "month", re.compile(rf"\b{rel}{mon}\b"),
         lambda m: _rel(m[1], _MONTHS_EN[m[2].lower()])),
        ("month", "month", re.compile(r"\b(?:(last|this|past|previous)\s+)?(january|february|march|april|june|july|august|september|october|november|december)\b", I),
         lambda m: _rel(m[1], _MONTHS_EN[m[2].lower()])),
        ("year", "relative year", re.compile(r"\b(?:the\s+)?year\s+before\s+last\b", I), lambda m: -2),
        # "year 2023", and years no calendar holds ("year 0", "year -44", "year 99999"); not "year 12"
        # or "year 2 at uni", which name a school year, not a date
        ("year", "year", re.compile(r"\byear\s+(-\d+|0+|\d{4}|\d{5,})\b", I),
         lambda m: _year_value(int(m[1]) if len(m[1]) <= 12 else MAXYEAR + 1)),
        ("year", "relative year", re.compile(r"\b(last|this|past|previous)\s+year\b", I),
         lambda m: 0 if m[1].lower() == "this" else -1),
        # not inside a date or a range of numbers ("2019-05", "1998-2003"), but "mid-2020" is a year
        ("year", "year", re.compile(r"(?<!\d)(?<!\d-)((?:19|20)\d\d)s?(?![\d-])"), lambda m: ("abs", int(m[1]))),
        ("relspan", "relative span", re.compile(r"\b(last|past|previous|this)\s+(week|month|weekend)\b", I),
         lambda m: (m[1].lower(), m[2].lower())),
        ("relspan", "relative span", re.compile(r"\b(recently|lately|recent|yesterday)\b", I), lambda m: ("", m[1].lower())),
        # "a long weekend" is a holiday's days off (holidays.holiday_wording), not Saturdays and Sundays
        ("weekdays", "weekend", re.compile(r"\b(?<!long\s)weekends?\b", I), lambda m: (5, 6)),
        ("weekdays", "weekday", re.compile(r"\bweekdays?\b|\bworkdays?\b", I), lambda m: (0, 1, 2, 3, 4)),
        ("hours", "part of day",
         re.compile(r"\b(early morning|late night|morning|midday|noon|afternoon|evening|dusk|tonight|midnight|night)(?:time|s)?\b", I),
         lambda m: DAY_PARTS_EN[m[1].lower()]),
    ]


@dataclass(frozen=True, slots=True)
class _Relative:
    word: str
    value: Any


def _rel(word: str | None, value: Any) -> Any:
    if not word:
        return value
    return _Relative("this" if word.lower() == "this" else "last", value)


def two_digit_year(yy: int, latest: date) -> int:
    """The full year of "25年"/"'25": the latest year ending in ``yy`` that is not after the
    album's latest year plus one (an album ending in 1998 reads "95年" as 1995, one ending in
    2025 reads it as 1995 too but "23年" as 2023)."""
    year = latest.year // 100 * 100 + yy
    return year - 100 if year > latest.year + 1 else year


def _scan_zh(latest: date) -> list[tuple[str, str, re.Pattern[str], Callable[[re.Match[str]], Any]]]:
    num = r"(?<!\d)(\d{1,3}|[一二三四五六七八九]?十[一二三四五六七八九]?|[一二三四五六七八九两])"
    yr = r"(?<!\d)(\d{4}|\d\d)年"
    fest_alts = sorted(((a, k) for k, v in _FESTIVALS.items() for a in v[1]), key=lambda x: -len(x[0]))
    fest_pat = "|".join(re.escape(a) for a, _ in fest_alts)
    fest_of = dict(fest_alts)
    parts = "|".join(sorted(DAY_PARTS_ZH, key=len, reverse=True))

    def full_year(s: str) -> int:
        return two_digit_year(int(s), latest) if len(s) == 2 else int(s)

    def md(m: re.Match[str], year: int | None, mi: int, di: int) -> Any:
        mo, d = _zh_int(m[mi]), _zh_int(m[di])
        return None if mo is None or d is None else _month_day_year(mo, d, year)

    def zh_month(m: re.Match[str]) -> Any:
        mo = _zh_int(m[2])
        if mo is None:
            return None
        if not 1 <= mo <= 12:
            return _Impossible(f"there is no month {mo} (months are 1-12)")
        return _rel({"上": "last", "上个": "last"}.get(m[1] or "", "this" if m[1] else None), mo)

    return [
        ("date", "date: 年月日", re.compile(rf"{yr}{num}月{num}[日号]"), lambda m: md(m, full_year(m[1]), 2, 3)),
        ("date", "date: ISO", re.compile(r"((?:19|20)\d\d)[-./](\d{1,2})[-./](\d{1,2})"),
         lambda m: _month_day_year(int(m[2]), int(m[3]), int(m[1]))),
        ("date", "date: 月日", re.compile(rf"{num}月{num}[日号]"), lambda m: md(m, None, 1, 2)),
        ("festival", "festival", re.compile(rf"({fest_pat})(?:节)?(?:期间)?"), lambda m: fest_of[m[1]]),
        # "2019年十一", "去年的十一": National Day; not 十一月 (November), 十一日 or 十一点 (the number)
        ("festival", "festival", re.compile(r"(?:(?<=年)|(?<=年的))十一(?![月日号点岁个届期\d一二三四五六七八九十])(?:期间)?"),
         lambda m: "national_day"),
        ("half", "year half", re.compile(r"([上下])半年"), lambda m: 1 if m[1] == "上" else 2),
        # "2019年底", "年初", "5月初", "5月中旬", "5月底": a third of the year or month before it
        ("part", "early/mid/late", re.compile(r"(?:(?<=年)|(?<=月)|(?<=月份))(初|上旬|中旬|下旬|底|末)(?![一二三四五六七八九十])"),
         lambda m: {"初": 1, "上旬": 1, "中旬": 2, "下旬": 3, "底": 3, "末": 3}[m[1]]),
        ("season", "season", re.compile(r"([春夏秋冬])(?:天|季|日|夜|末|初)"), lambda m: _SEASON_ZH[m[1]]),
        ("year", "relative year", re.compile(r"(去年|今年|前年)"), lambda m: {"去年": -1, "今年": 0, "前年": -2}[m[1]]),
        ("year", "year", re.compile(r"(?<!\d)(-?\d{5,}|-\d+)年"), lambda m: _year_value(int(m[1]))),
        ("year", "year", re.compile(rf"{yr}"), lambda m: _year_value(full_year(m[1]))),
        ("year", "year", re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)"), lambda m: ("abs", int(m[1]))),
        ("month", "month", re.compile(rf"(上个?|这个?|本)?{num}月(?:份)?"), zh_month),
        ("relspan", "relative span", re.compile(r"(上个月|这个月|本月|上周|上个?星期|这周|本周|上周末|最近|近期|昨天)"),
         lambda m: {"上个月": ("last", "month"), "这个月": ("this", "month"), "本月": ("this", "month"),
                    "上周": ("last", "week"), "上星期": ("last", "week"), "上个星期": ("last", "week"),
                    "这周": ("this", "week"), "本周": ("this", "week"), "上周末": ("last", "weekend"),
                    "最近": ("", "recently"), "近期": ("", "recently"), "昨天": ("", "yesterday")}[m[1]]),
        ("weekdays", "weekend", re.compile(r"(周末|星期六|星期天|星期日|礼拜天)"), lambda m: (5, 6)),
        ("weekdays", "weekday", re.compile(r"(工作日)"), lambda m: (0, 1, 2, 3, 4)),
        ("hours", "part of day", re.compile(rf"({parts})"), lambda m: DAY_PARTS_ZH[m[1]]),
    ]


# --------------------------------------------------------------------------- resolution


def _resolve(found: list[_Found], text: str, latest: date, failed: dict[int, str],
             holiday: str = DEFAULT_HOLIDAY_READING) -> tuple[TimeRange, ...]:
    """The ranges of ``found``; a match whose dates fall outside the calendar gives none and
    its reason goes to ``failed`` (keyed by ``id`` of the match)."""
    years = [f for f in found if f.kind == "year"]
    anchor: int | None = None
    if years:
        v = years[0].value
        anchor = v[1] if isinstance(v, tuple) else latest.year + v
    subs = [f for f in found if f.kind in ("festival", "half", "season", "month")]
    anchor_text = text[years[0].span[0]:years[0].span[1]] if years else ""
    ranges: list[TimeRange] = []
    for f in found:
        t = text[f.span[0]:f.span[1]]
        try:
            ranges.extend(_ranges_of(f, t, years, subs, anchor, anchor_text, latest, holiday))
        except NoCalendarDate as e:
            failed[id(f)] = str(e)
        except (ValueError, OverflowError) as e:  # a date before year 1 or after 9999
            failed[id(f)] = f"{t!r} falls outside the calendar ({MINYEAR}-{MAXYEAR}) counted from {latest} ({e})"
    narrow = [f for f in found if f.kind in ("weekdays", "hours")]
    for f in narrow:
        t = text[f.span[0]:f.span[1]]
        if not ranges and not failed:  # (a part of the day after an impossible date narrows nothing)
            ranges.append(TimeRange(date(2000, 1, 1), date(2000, 12, 31), t, f.rule, every_year=True))
        key = "weekdays" if f.kind == "weekdays" else "hours"
        ranges = [replace(r, **{key: f.value}, text=f"{r.text} + {t}" if r.text != t else t) for r in ranges]
    return tuple(ranges)


def _ranges_of(f: _Found, t: str, years: list[_Found], subs: list[_Found], anchor: int | None, anchor_text: str,
               latest: date, holiday: str = DEFAULT_HOLIDAY_READING) -> list[TimeRange]:
    """The ranges of one match (raises ValueError/OverflowError past the calendar's ends), a
    year or month narrowed to the third its "early"/"mid"/"late" names."""
    ranges = _match_ranges(f, t, years, subs, anchor, anchor_text, latest, holiday)
    if f.part is None or f.kind not in ("year", "month"):
        return ranges
    return [_third(r, f.part, f.kind) for r in ranges]


def _third(r: TimeRange, part: int, kind: str) -> TimeRange:
    """The early (1), mid (2) or late (3) third of a year (January-April, May-August,
    September-December) or of a month (days 1-10, 11-20, 21 to its end)."""
    word = ("early", "mid", "late")[part - 1]
    if kind == "year":
        first, last = ((1, 4), (5, 8), (9, 12))[part - 1]
        y = r.start.year
        start, end = date(y, first, 1), date(y, last, calendar.monthrange(y, last)[1])
    else:
        y, m = r.start.year, r.start.month
        first, last = ((1, 10), (11, 20), (21, calendar.monthrange(y, m)[1]))[part - 1]
        start, end = date(y, m, first), date(y, m, last)
    return replace(r, start=start, end=end, rule=f"{r.rule} ({word} third)")


def _match_ranges(f: _Found, t: str, years: list[_Found], subs: list[_Found], anchor: int | None, anchor_text: str,
                  latest: date, holiday: str = DEFAULT_HOLIDAY_READING) -> list[TimeRange]:
    if f.kind == "date":
        return [_date_range(f.value, t, f.rule, latest)]
    if f.kind in ("festival", "half", "season", "month"):
        label = f"{anchor_text} {t}" if anchor is not None and f.relative is None else t
        return _sub_ranges(f, label, anchor, latest, f.reading or holiday)
    if f.kind == "year" and not subs and f is years[0] and anchor is not None:
        return [TimeRange(date(anchor, 1, 1), date(anchor, 12, 31), t, f.rule)]
    if f.kind == "year" and f is not years[0]:
        v = f.value
        y = v[1] if isinstance(v, tuple) else latest.year + v
        return [] if subs else [TimeRange(date(y, 1, 1), date(y, 12, 31), t, f.rule)]
    if f.kind == "relspan":
        r = _relspan(f.value, t, f.rule, latest)
        return [] if r is None else [r]
    return []


def _date_range(value: Any, t: str, rule: str, latest: date) -> TimeRange:
    if isinstance(value, date):
        return TimeRange(value, value, t, rule)
    _, month, day, _ = value
    for y in (latest.year, latest.year - 1):
        try:
            d = date(y, month, day)
        except ValueError:
            continue
        if d <= latest:
            return TimeRange(d, d, t, rule + " (latest before the album's last date)")
    return TimeRange(date(2000, month, day), date(2000, month, day), t, rule, every_year=True)


def _season_bounds(name: str, year: int) -> tuple[date, date]:
    first, last = SEASONS[name]
    if first <= last:
        return date(year, first, 1), date(year, last, calendar.monthrange(year, last)[1])
    # winter of a year: December of that year through February of the next
    return date(year, 12, 1), date(year + 1, 2, calendar.monthrange(year + 1, 2)[1])


def _sub_ranges(f: _Found, t: str, anchor: int | None, latest: date,
                holiday: str = DEFAULT_HOLIDAY_READING) -> list[TimeRange]:
    if f.kind == "season":
        name = f.value
        if f.relative == "this":
            s, e = _season_bounds(name, latest.year if name != "winter" or latest.month == 12 else latest.year - 1)
            return [TimeRange(s, e, t, "season: this (the latest date's year)")]
        if f.relative == "last":
            for y in range(latest.year, latest.year - 3, -1):
                s, e = _season_bounds(name, y)
                if e < latest:
                    return [TimeRange(s, e, t, "season: last (latest one ended before the album's last date)")]
        if anchor is not None:
            if name == "winter":
                # "winter photos from 2023" = photos from 2023 that are winter photos: the year and the
                # season are two constraints on the same date, so the winter months *of that calendar
                # year* (Jan-Feb and Dec), not the winter that starts in its December.
                end_feb = date(anchor, 2, calendar.monthrange(anchor, 2)[1])
                return [TimeRange(date(anchor, 1, 1), end_feb, t, f"winter months of {anchor} (Jan-Feb)"),
                        TimeRange(date(anchor, 12, 1), date(anchor, 12, 31), t, f"winter months of {anchor} (Dec)")]
            s, e = _season_bounds(name, anchor)
            return [TimeRange(s, e, t, f"season of {anchor}")]
        first, last = SEASONS[name]
        return [TimeRange(date(2000, first, 1), date(2000, last, calendar.monthrange(2000, last)[1]), t,
                          "season (every year)", every_year=True)]
    if f.kind == "month":
        m = f.value
        if f.relative in ("last", "this"):
            y = latest.year if (m <= latest.month or f.relative == "this") else latest.year - 1
            if f.relative == "last" and m >= latest.month:
                y = latest.year - 1
            return [TimeRange(date(y, m, 1), date(y, m, calendar.monthrange(y, m)[1]), t, f"month: {f.relative}")]
        if anchor is not None:
            return [TimeRange(date(anchor, m, 1), date(anchor, m, calendar.monthrange(anchor, m)[1]), t, f"month of {anchor}")]
        return [TimeRange(date(2000, m, 1), date(2000, m, calendar.monthrange(2000, m)[1]), t, "month (every year)",
                          every_year=True)]
    if f.kind == "half":
        y = anchor if anchor is not None else latest.year
        s, e = (date(y, 1, 1), date(y, 6, 30)) if f.value == 1 else (date(y, 7, 1), date(y, 12, 31))
        return [TimeRange(s, e, t, f"year half of {y}")]
    # festival
    name = f.value
    if f.relative == "last":
        for rs in _festival_years(name, range(latest.year, latest.year - 3, -1), t, holiday):
            if rs and rs[0].end < latest:
                return [rs[0]]
        return []
    if anchor is not None or f.relative == "this":
        return festival_ranges(name, anchor if anchor is not None else latest.year, t, holiday)
    _, _, kind, (mo, d, n, off) = _FESTIVALS[name]
    if holiday == "day" and name in STATUTORY:
        n, off = 1, 0
        if name == "qingming":  # a solar term: its day moves (April 4 or 5), so year by year
            kind = "lunar"
    if kind == "fixed":
        s = date(2000, mo, d) + timedelta(days=off)
        return [TimeRange(s, s + timedelta(days=n - 1), t, f"festival {name} (every year)", every_year=True)]
    return [r for rs in _festival_years(name, range(latest.year - 9, latest.year + 1), t, holiday) for r in rs]


def _festival_years(name: str, years: range, text: str, holiday: str = DEFAULT_HOLIDAY_READING) -> list[list[TimeRange]]:
    """The festival's ranges in each of ``years`` that has them; a year the calendar (or the
    lunar tables) cannot reach is left out, and when every year is, its error is raised."""
    out, error = [], None
    for y in years:
        try:
            out.append(festival_ranges(name, y, text, holiday))
        except (ValueError, OverflowError) as e:
            error = e
    if not out and error is not None:
        raise error
    return out


def festival_ranges(name: str, year: int, text: str = "", holiday: str = DEFAULT_HOLIDAY_READING) -> list[TimeRange]:
    """The date ranges of festival ``name`` in ``year``: for a statutory holiday its official days
    off (``holiday="span"``) or its own day (``"day"``) when the tables have them; else the
    profile's dates, then lunardate, then fixed dates (a statutory holiday's usual days)."""
    _, _, kind, (mo, d, n, off) = _FESTIVALS[name]
    rule = f"festival {name} {year}"
    if name in STATUTORY:
        if holiday == "day":
            day = holiday_day(name, year)
            if day is not None:
                return [TimeRange(day, day, text or name, f"holiday {name} {year}: the day itself")]
            n, off, rule = 1, 0, rule + ": the day itself"
        else:
            span = official_span(name, year)
            if span is not None:
                return [TimeRange(span[0], span[1], text or name, f"holiday {name} {year}: the official days off")]
            rule += ": its usual days (no official days off known for the year)"
    if kind == "fixed":
        s = date(year, mo, d) + timedelta(days=off)
        return [TimeRange(s, s + timedelta(days=n - 1), text or name, rule)]
    days = _profile_festival(name, year)
    if days:
        anchor, source = min(days), " (profile festival date)"
    else:
        try:
            lunardate = importlib.import_module("lunardate")
        except ImportError:
            return []
        try:
            lunar = lunardate.LunarDate(year, mo, d)
            anchor, source = (getattr(lunar, "to_solar_date", None) or lunar.toSolarDate)(), " (lunar calendar)"
        except (ValueError, OverflowError, IndexError, KeyError) as e:  # past the lunar tables (1900-2099)
            raise NoCalendarDate(f"the lunar calendar tables have no date of {name} in {year} ({e})") from e
    s = anchor + timedelta(days=off)
    return [TimeRange(s, s + timedelta(days=n - 1), text or name, rule + source)]


def _profile_festival(name: str, year: int) -> list[date]:
    try:
        mod = importlib.import_module("finegrain.album.engine.profile.timetags")
    except ImportError:
        return []
    fn = getattr(mod, "festival_dates", None)
    if fn is None:
        return []
    try:
        return list(fn(name, year))
    except Exception:  # the profile may not know this festival name  # noqa: BLE001
        return []


def _relspan(value: tuple[str, str], t: str, rule: str, latest: date) -> TimeRange | None:
    which, unit = value
    if unit == "recently":
        return TimeRange(latest - timedelta(days=30), latest, t, rule + " (30 days before the album's last date)")
    if unit == "yesterday":
        d = latest - timedelta(days=1)
        return TimeRange(d, d, t, rule)
    if unit == "month":
        if which == "this":
            return TimeRange(latest.replace(day=1), latest, t, rule)
        first = (latest.replace(day=1) - timedelta(days=1)).replace(day=1)
        return TimeRange(first, first.replace(day=calendar.monthrange(first.year, first.month)[1]), t, rule)
    monday = latest - timedelta(days=latest.weekday())
    if which != "this":
        monday -= timedelta(days=7)
    if unit == "weekend":
        return TimeRange(monday + timedelta(days=5), monday + timedelta(days=6), t, rule)
    return TimeRange(monday, monday + timedelta(days=6), t, rule)
