"""Frozen records of the photo profile: places, time tags and faces.

These are the values the album indexer stores and the query planner matches
against; every one is immutable (a face embedding is a read-only array).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from finegrain.text.lang import Lang, parse_lang

PLACE_LEVELS = ("country", "province", "city", "district", "locality")
"""Administrative levels from broad to narrow. ``locality`` is the nearest
GeoNames town (English only), finer than a district but approximate."""


class PlaceKey(NamedTuple):
    """A place at one level: ``(level, canonical name)``, e.g. ``("district", "柯桥区")``.

    The canonical name is the Chinese name when there is one, else the English
    name (see :attr:`PlaceLevel.name`).
    """

    level: str
    name: str


@dataclass(frozen=True, slots=True)
class PlaceLevel:
    """One administrative level of a place.

    ``en`` and ``zh`` are display names ("Keqiao District", "柯桥区"); ``zh`` is
    ``""`` when unknown (GeoNames gives English only outside China). ``code`` is
    the ISO 3166-1 alpha-2 code of a country, the GB/T 2260 adcode of a Chinese
    region, ``""`` otherwise. ``aliases`` are every lower-cased form a query may
    use, sorted: with and without 省/市/区/县, "city", "district", pinyin.
    """

    level: str
    en: str
    zh: str
    code: str
    aliases: tuple[str, ...]

    @property
    def name(self) -> str:
        """The canonical name: ``zh`` when known, else ``en``."""
        return self.zh or self.en

    @property
    def key(self) -> PlaceKey:
        return PlaceKey(self.level, self.name)


@dataclass(frozen=True, slots=True)
class Place:
    """Where a photo was taken, from the country down to the nearest town.

    ``country`` is always set; the other levels are None when unknown (Taiwan
    has no city or district data, Singapore no province, ...). For Chinese
    municipalities (北京市, 上海市, ...) the province and the city are the same.
    ``source`` names the gazetteers used: ``"geotool-cn+geonames"`` or ``"geonames"``.
    """

    country: PlaceLevel
    province: PlaceLevel | None
    city: PlaceLevel | None
    district: PlaceLevel | None
    locality: PlaceLevel | None
    source: str

    def levels(self) -> tuple[PlaceLevel, ...]:
        """The known levels, broad to narrow."""
        return tuple(
            lv for lv in (self.country, self.province, self.city, self.district, self.locality) if lv is not None
        )

    def keys(self) -> tuple[PlaceKey, ...]:
        return tuple(lv.key for lv in self.levels())

    # Flat names (``city_en``, ``city_zh``, ``country_code``...) for stores that keep one column per name.
    def _name(self, level: str, lang: str) -> str | None:
        lv = getattr(self, level)
        return (getattr(lv, lang) or None) if lv is not None else None

    country_en = property(lambda self: self._name("country", "en"))
    country_zh = property(lambda self: self._name("country", "zh"))
    province_en = property(lambda self: self._name("province", "en"))
    province_zh = property(lambda self: self._name("province", "zh"))
    city_en = property(lambda self: self._name("city", "en"))
    city_zh = property(lambda self: self._name("city", "zh"))
    district_en = property(lambda self: self._name("district", "en"))
    district_zh = property(lambda self: self._name("district", "zh"))
    locality_en = property(lambda self: self._name("locality", "en"))

    @property
    def country_code(self) -> str:
        return self.country.code

    def label(self, lang: str = "en") -> str:
        """A display label: ``"浙江省绍兴市柯桥区"`` (zh; China left out, spaces when a
        level has no Chinese name: ``"日本 Tokyo"``) or ``"Keqiao District, Shaoxing, Zhejiang, China"`` (en)."""
        zh = parse_lang(lang) is Lang.ZH
        names: list[str] = []
        for lv in (self.country, self.province, self.city, self.district):
            if lv is None:
                continue
            text = (lv.zh or lv.en) if zh else lv.en
            if text and text not in names:
                names.append(text)
        if zh:
            parts = names
            if len(names) > 1 and names[0].startswith("中国") and names[1].startswith(names[0][2:]):
                parts = names[1:]  # 中国 / 中国香港 + 香港特别行政区...: the country is implied
            return (" " if any(p.isascii() for p in parts) else "").join(parts)
        return ", ".join(reversed(names))


@dataclass(frozen=True, slots=True)
class Tag:
    """A named time tag: ``key`` is stable (``"mid_autumn"``), ``en``/``zh`` for
    display, ``aliases`` every lower-cased form a query may use (en and zh),
    ``kind`` one of season, part_of_day, weekday, festival, statutory_holiday,
    holiday."""

    key: str
    en: str
    zh: str
    kind: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TimeTags:
    """Calendar facts about one capture time.

    ``weekday`` is 0 = Monday .. 6 = Sunday. ``festivals`` are days such as
    Mid-Autumn (the day itself, lunar festivals for any country);
    ``holidays`` are public holidays: China's statutory days off (the whole
    period, e.g. every day of the National Day golden week) when ``country`` is
    CN, the ``holidays`` package's list otherwise. ``is_day_off`` is China's
    official day-off status (weekends and holidays, minus make-up workdays) for
    CN, ``is_weekend or bool(holidays)`` elsewhere, None for a year the calendar
    does not cover.
    """

    year: int
    month: int
    day: int
    season: Tag
    weekday: int
    weekday_tag: Tag
    is_weekend: bool
    part_of_day: Tag
    festivals: tuple[Tag, ...]
    holidays: tuple[Tag, ...]
    is_day_off: bool | None
    country: str | None

    def tags(self) -> tuple[Tag, ...]:
        return (self.season, self.weekday_tag, self.part_of_day, *self.festivals, *self.holidays)

    def words(self) -> tuple[str, ...]:
        """Every lower-cased en and zh word of the tags, sorted (for full-text matching)."""
        out = {"weekend" if self.is_weekend else "weekday", "周末" if self.is_weekend else "工作日"}
        for t in self.tags():
            out.update(a for a in (t.en.lower(), t.zh, *t.aliases) if a)
        return tuple(sorted(out))


@dataclass(frozen=True, slots=True, eq=False)
class FaceRecord:
    """A detected face: ``box`` is ``(top, right, bottom, left)`` in pixels of the
    upright image (EXIF orientation applied), as dlib / face_recognition give it;
    ``embedding`` is dlib's 128-d face descriptor as a read-only float32 array
    (two faces of one person are usually within euclidean distance 0.6)."""

    box: tuple[int, int, int, int]
    embedding: np.ndarray

    @property
    def width(self) -> int:
        return self.box[1] - self.box[3]

    @property
    def height(self) -> int:
        return self.box[2] - self.box[0]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FaceRecord):
            return NotImplemented
        return self.box == other.box and bool(np.array_equal(self.embedding, other.embedding))

    def __hash__(self) -> int:
        return hash((self.box, self.embedding.tobytes()))
