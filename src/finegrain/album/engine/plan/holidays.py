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
"""

from __future__ import annotations

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


def _dates(key: str, year: int) -> list[date]:
    try:
        return timetags.festival_dates(key, year)
    except (FinegrainError, ImportError, ValueError, OverflowError):  # no tables, or a year they do not cover
        return []
