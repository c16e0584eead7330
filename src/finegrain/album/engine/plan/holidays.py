"""China's statutory holidays read as the official days off (``span``) or as the day itself (``day``).

"National Day 2021" can mean the festival's own day (October 1) or the holiday people
take for it: the days off the State Council announces each year, with the weekend and
make-up days joined to them (2021: October 1-7; 2023: September 29 - October 6, when
Mid-Autumn fell in the same week; New Year's Day 2023: December 31, 2022 - January 2).
Photos of a holiday trip are taken on any of those days, so ``span`` is the default
reading; ``day`` keeps only the day itself.

The default follows PhotoBench: its queries say "photos taken during National Day in
2024" and "celebrating Labor Day in 2023" (``Time``: cognitive), and in its album1 several
holiday queries have no photo on the holiday's own day but photos on its other days off,
which a benchmark written from the album's photos would not ask; the dates are in
``docs/tutorials/photo-album.md`` ("Holidays").

The seven statutory holidays are New Year's Day, Spring Festival, Qingming, Labour Day,
Dragon Boat, Mid-Autumn and National Day. Their days off come from ``chinese-calendar``
(the ``time`` extra; through :func:`finegrain.album.engine.profile.timetags.festival_dates`,
which joins the weekends to each period); their own days from the same module (lunar
dates from ``lunardate``, Qingming's solar term). Without those packages, or for a year
the tables do not cover, :func:`official_span` and :func:`holiday_day` give None and the
planner falls back to its usual dates (``time_rules``), saying so in the rule.

**The query's own wording decides before the default.** Words that name the days off ("the
Spring Festival holiday", "the National Day break", "days off", "golden week", 假期, 放假, 小长假,
黄金周) select ``span``; words that name the day ("the very day of Labor Day", "Dragon Boat
Festival itself", "on the day of", 当天, 当日, 那一天) select ``day``, whatever ``holiday=`` says;
:func:`holiday_wording` finds them next to the holiday's name.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from functools import lru_cache

from finegrain.album.engine.profile import timetags
from finegrain.errors import FinegrainError

HOLIDAY_READINGS = ("span", "day")
DEFAULT_HOLIDAY_READING = "span"

#: the planner's festival key -> (timetags' key of the day itself, timetags' key of the days off)
STATUTORY: dict[str, tuple[str, str]] = {
    "new_year": ("new_year", "new_year_holiday"),
    "spring_festival": ("spring_festival", "spring_festival_holiday"),
    "qingming": ("qingming", "qingming_holiday"),
    "labor_day": ("labour_day", "labour_day_holiday"),
    "dragon_boat": ("dragon_boat", "dragon_boat_holiday"),
    "mid_autumn": ("mid_autumn", "mid_autumn_holiday"),
    "national_day": ("national_day", "national_day_holiday"),
}
# wording right after a holiday's name (and its year): the days off, or the day itself
_AFTER = {
    "en": re.compile(r"\s*(?:(?P<span>holidays?|break|vacation|days?\s+off|time\s+off|long\s+weekend)"
                     r"|(?P<day>(?:the\s+)?(?:very\s+|actual\s+)?(?:day\s+)?itself|proper))\b", re.IGNORECASE),
    "zh": re.compile(r"的?(?:(?P<span>小长假|长假|黄金周|假期|放假|休假|假日)(?:期间|里|中)?"
                     r"|(?P<day>当天|当日|那天|那一天|这一天|正日子))"),
}
# wording right before it: "on the very day of National Day", "the actual day of Labor Day"
_BEFORE = {
    "en": re.compile(r"\b(?P<day>(?:on\s+)?the\s+(?:very\s+|actual\s+|exact\s+)?day\s+of)\s+(?:the\s+)?$",
                     re.IGNORECASE),
    "zh": re.compile(r"(?P<day>就在|恰好在|正好在)$"),
}
# a holiday name that itself names the days off ("golden week", "十一假期")
_SPAN_NAME = re.compile(r"golden week|假期|黄金周|长假", re.IGNORECASE)
_NEAR_DAYS = 7  # a period this close to the day itself belongs to it (the day may fall on a workday)


def check_holiday_reading(value: str) -> str:
    """``value`` when it is a known reading; else one error naming it and the choices."""
    if value not in HOLIDAY_READINGS:
        raise FinegrainError(f"unknown holiday reading {value!r}",
                             "use 'span' (the official days off, the default) or 'day' (the holiday's own day)")
    return value


@lru_cache(maxsize=512)
def holiday_day(name: str, year: int) -> date | None:
    """The statutory holiday ``name``'s own day in ``year`` (None when the tables cannot say)."""
    days = _dates(STATUTORY[name][0], year)
    return days[0] if days else None


@lru_cache(maxsize=512)
def official_span(name: str, year: int) -> tuple[date, date] | None:
    """The first and last official day off of statutory holiday ``name`` in ``year``: the run of
    consecutive days off that holds the holiday's own day (or starts or ends within a week of
    it). None when the tables do not cover the year."""
    day = holiday_day(name, year)
    if day is None:
        return None
    period = STATUTORY[name][1]
    off = sorted({d for y in (year - 1, year, year + 1) for d in _dates(period, y)})
    runs: list[list[date]] = []
    for d in off:
        if runs and d - runs[-1][-1] == timedelta(days=1):
            runs[-1].append(d)
        else:
            runs.append([d])
    best = min(runs, key=lambda r: 0 if r[0] <= day <= r[-1] else min(abs((r[0] - day).days), abs((r[-1] - day).days)),
               default=None)
    if best is None or not (best[0] - timedelta(days=_NEAR_DAYS) <= day <= best[-1] + timedelta(days=_NEAR_DAYS)):
        return None
    return best[0], best[-1]


def holiday_wording(text: str, lang: str, name: tuple[int, int], year: tuple[int, int] | None = None
                    ) -> tuple[str, tuple[int, int] | None] | None:
    """The reading the query's words select for the holiday named at ``text[name[0]:name[1]]``:
    ``("span", where)`` or ``("day", where)``, ``where`` the words' span (None when the name
    itself says it: "golden week"), or None when the wording leaves it to the default.
    ``year``: the span of the holiday's year when it stands next to the name ("Labor Day 2019
    itself", "the 2019 National Day holiday"); the wording may follow or precede it."""
    s, e = name
    if _SPAN_NAME.search(text[s:e]):
        return "span", None
    if year is not None and year[0] >= e and _filler(text[e:year[0]], lang):
        e = year[1]
    if year is not None and year[1] <= s and _filler(text[year[1]:s], lang):
        s = year[0]
    after = _AFTER["zh" if lang == "zh" else "en"].match(text, e)
    if after is not None:
        kind = "span" if after.group("span") else "day"
        return kind, (after.start(kind), after.end())
    before = _BEFORE["zh" if lang == "zh" else "en"].search(text[:s])
    if before is not None:
        return "day", before.span("day")
    return None


def _filler(gap: str, lang: str) -> bool:
    """Whether ``gap`` between a holiday's name and its year joins them ("of", "in", ",", 的)."""
    if lang == "zh":
        return re.fullmatch(r"[的\s]*", gap) is not None
    return re.fullmatch(r"(?:\s|,|'s\b|\bof\b|\bin\b)*", gap, re.IGNORECASE) is not None


def _dates(key: str, year: int) -> list[date]:
    try:
        return timetags.festival_dates(key, year)
    except (FinegrainError, ImportError, ValueError, OverflowError):  # no tables, or a year they do not cover
        return []
