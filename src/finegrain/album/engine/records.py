"""Photo-level records of the personal album catalog.

These are the values the catalog stores and returns; they never hold a
database handle. Enrichment records (``Place``, ``TimeTags``, ``FaceRecord``)
live in :mod:`finegrain.album.engine.profile.records`; the catalog keeps what it
needs of them as the flat records below (:class:`PhotoPlace`), so it does not
depend on how the profile functions are built.

Time: ``taken_at`` is time-zone aware when the camera wrote an offset
(EXIF ``OffsetTimeOriginal``) and naive local wall-clock time otherwise;
``tz`` is the offset as written (``"+08:00"``) or None. Filters on
"March 2023" or "in the evening" use the local wall-clock time
(:attr:`Photo.local_time`), which is what the person remembers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

ME = "me"


@dataclass(frozen=True, slots=True)
class Photo:
    """One photo in the catalog.

    ``id`` is the path relative to the catalog root in POSIX form for indexed
    folders (stable across machines), or the file name for a PhotoBench album.
    ``path`` is where the file is (absolute for indexed folders; the file name
    for PhotoBench, which ships no images). ``size``, ``mtime`` and
    ``sha256`` identify the file's content (None when there is no file).
    """

    id: str
    path: str
    size: int | None = None
    mtime: float | None = None
    sha256: str | None = None
    taken_at: datetime | None = None
    tz: str | None = None
    lat: float | None = None
    lon: float | None = None
    camera: str | None = None
    width: int | None = None
    height: int | None = None
    caption: str | None = None
    keywords: tuple[str, ...] = ()
    event_id: str | None = None

    @property
    def has_gps(self) -> bool:
        return self.lat is not None and self.lon is not None

    @property
    def local_time(self) -> datetime | None:
        """The wall-clock time where the photo was taken, naive (the offset dropped)."""
        return None if self.taken_at is None else self.taken_at.replace(tzinfo=None)


@dataclass(frozen=True, slots=True)
class PhotoPlace:
    """Administrative place names of a photo in English and Chinese; None where unknown."""

    country_en: str | None = None
    country_zh: str | None = None
    province_en: str | None = None
    province_zh: str | None = None
    city_en: str | None = None
    city_zh: str | None = None
    district_en: str | None = None
    district_zh: str | None = None
    country_code: str | None = None
    locality_en: str | None = None
    aliases: tuple[tuple[str, str], ...] = ()

    LEVELS = ("country", "province", "city", "district")

    def names(self) -> tuple[tuple[str, str], ...]:
        """``(level, name)`` pairs of every non-empty name (both languages, the locality) and alias, unique."""
        out = []
        for level in self.LEVELS:
            for lang in ("en", "zh"):
                value = getattr(self, f"{level}_{lang}")
                if value:
                    out.append((level, value))
        if self.locality_en:
            out.append(("locality", self.locality_en))
        out.extend(self.aliases)
        seen: dict[tuple[str, str], None] = {}
        for level, name in out:
            seen.setdefault((level, name.lower()), None)
        return tuple(seen)

    @classmethod
    def from_place(cls, place: object) -> PhotoPlace:
        """Copy the fields of any place-like record (``Place`` of the profile package,
        a mapping or an object with ``city_en``/``city_zh``... or ``city``/``city_zh``
        attributes)."""
        get = place.get if isinstance(place, dict) else (lambda k, d=None: getattr(place, k, d))
        values: dict[str, str | None] = {}
        for level in cls.LEVELS:
            en = get(f"{level}_en") or get(level)
            zh = get(f"{level}_zh") or get(f"{level}_cn")
            values[f"{level}_en"] = _text(en)
            values[f"{level}_zh"] = _text(zh)
        values["country_code"] = _text(get("country_code") or get("cc"))
        values["locality_en"] = _text(get("locality_en"))
        aliases: list[tuple[str, str]] = []
        levels = getattr(place, "levels", None)
        if callable(levels):  # the profile Place: every alias of every level (pinyin, without 市/区, ...)
            for lv in levels():
                aliases.extend((lv.level, a) for a in getattr(lv, "aliases", ()) if a)
        return cls(**values, aliases=tuple(sorted(set(aliases))))


@dataclass(frozen=True, slots=True)
class Person:
    """A recurring person: a face cluster with the names the owner gave it.

    ``names`` are the person's names and nicknames (the first is the display
    name); ``is_me`` marks the album owner.
    """

    id: str
    names: tuple[str, ...] = ()
    is_me: bool = False

    @property
    def display_name(self) -> str:
        return self.names[0] if self.names else self.id


@dataclass(frozen=True, slots=True)
class FaceOccurrence:
    """One face in one photo: ``box`` is (top, right, bottom, left) in pixels, None when unknown;
    ``person_id`` is None until the face is clustered or named."""

    photo_id: str
    person_id: str | None
    box: tuple[int, int, int, int] | None = None
    index: int = 0


@dataclass(frozen=True, slots=True)
class Event:
    """A temporal event: photos taken close together (Section 3.1.2 of PhotoBench)."""

    id: str
    start: datetime | None
    end: datetime | None
    n_photos: int


def _text(value: object) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None
