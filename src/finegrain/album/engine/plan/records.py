"""The query plan: the constraints a query puts on photos, and why.

A :class:`Plan` is frozen data. It holds the hard constraints (time ranges,
places, people who must all be present), the event words, the residual visual
text and the predicted PhotoBench source type (``V``, ``M``, ``F``, ``VM``,
``VF``, ``MF``, ``VMF``; Section 4.2 of the PhotoBench paper). ``explain()``
lists the rules that fired with the text each one matched, so a plan can be
printed and checked by a person.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import Enum
from typing import Any

from finegrain.errors import FinegrainError

SOURCE_TYPES = ("V", "M", "F", "VM", "VF", "MF", "VMF")
PLACE_LEVELS = ("country", "province", "city", "district", "locality", "poi")


def source_type(visual: bool, metadata: bool, faces: bool) -> str:
    """The source label for a set of needed sources; nothing needed counts as ``V``."""
    label = ("V" if visual else "") + ("M" if metadata else "") + ("F" if faces else "")
    return label or "V"


def check_source(value: str) -> str:
    if value not in SOURCE_TYPES:
        raise FinegrainError(f"unknown source type {value!r}", f"use one of {', '.join(SOURCE_TYPES)}")
    return value


@dataclass(frozen=True, slots=True)
class TimeRange:
    """An inclusive date range ``start``..``end`` from the query text ``text``, found by ``rule``.

    ``every_year``: only month and day of ``start``/``end`` count (e.g. "in May", "Christmas"),
    the range may wrap the year end. ``hours``: each day narrowed to ``first..last`` hour
    (e.g. "at night" = 18..23). ``weekdays``: the days allowed, Monday = 0 (e.g. weekends = 5, 6).
    """

    start: date
    end: date
    text: str
    rule: str
    every_year: bool = False
    hours: tuple[int, int] | None = None
    weekdays: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.end < self.start and not self.every_year:
            raise FinegrainError(
                f"time range {self.text!r} ends ({self.end}) before it starts ({self.start})",
                "give the earlier date first",
            )

    def contains(self, when: date | datetime) -> bool:
        """Whether a photo taken at ``when`` falls in this range (hours need a datetime)."""
        day = when.date() if isinstance(when, datetime) else when
        if self.every_year:
            md, lo, hi = (day.month, day.day), (self.start.month, self.start.day), (self.end.month, self.end.day)
            ok = lo <= md <= hi if lo <= hi else (md >= lo or md <= hi)
        else:
            ok = self.start <= day <= self.end
        if ok and self.weekdays is not None:
            ok = day.weekday() in self.weekdays
        if ok and self.hours is not None and isinstance(when, datetime):
            first, last = self.hours
            ok = first <= when.hour <= last if first <= last else (when.hour >= first or when.hour <= last)
        return ok

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "every_year": self.every_year,
            "text": self.text,
            "rule": self.rule,
            "hours": list(self.hours) if self.hours else None,
            "weekdays": list(self.weekdays) if self.weekdays is not None else None,
        }


@dataclass(frozen=True, slots=True)
class ImpossibleTime:
    """A time expression of the query that names no day of the calendar ("February 30",
    "2099年13月45日", "year 99999"): the matched ``text`` and ``reason``. No photo can match it."""

    text: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class PlaceKey:
    """A place of the album's catalog: its admin ``level`` and canonical ``name`` (the Chinese
    name when there is one, as in ``finegrain.album.engine.profile``; ``poi`` for a named point of
    interest the catalog may not know)."""

    level: str
    name: str

    def __post_init__(self) -> None:
        if self.level not in PLACE_LEVELS:
            raise FinegrainError(f"unknown place level {self.level!r} for {self.name!r}", f"use one of {', '.join(PLACE_LEVELS)}")


@dataclass(frozen=True, slots=True)
class PlaceMatch:
    """A place named in the query: the matched ``text`` and the catalog place it names."""

    text: str
    place: PlaceKey
    in_album: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "level": self.place.level, "name": self.place.name, "in_album": self.in_album}


@dataclass(frozen=True, slots=True)
class PersonMatch:
    """A person named in the query: the matched ``text`` and the person (face cluster) id."""

    text: str
    person_id: str

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "person_id": self.person_id}


class PeopleReason(str, Enum):
    """Why a word of the query names a set of people rather than one person."""

    SHARED_NICKNAME = "shared_nickname"  # a nickname several people share: ambiguous, any of them counts
    ROLE = "role"  # a role or kinship word ("kids", "my wife"): any person of the album in that role
    NO_ONE_IN_ROLE = "no_one_in_role"  # a role word no person of the album is known in: no face constraint


@dataclass(frozen=True, slots=True)
class AnyOfPeople:
    """A word of the query that names any one of several people (an any-of face constraint), or
    a role word nobody of the album is known in: the matched ``text``, the ``reason``, the
    ``person_ids`` (empty for ``NO_ONE_IN_ROLE``) with their display ``names``, and the ``role``
    (a kin noun such as "child") of a role word."""

    text: str
    reason: PeopleReason
    person_ids: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    role: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.reason, PeopleReason):
            raise FinegrainError(f"people reason {self.reason!r} is not a PeopleReason",
                                 f"use one of {', '.join(r.value for r in PeopleReason)}")
        if (self.reason is PeopleReason.NO_ONE_IN_ROLE) != (not self.person_ids):
            raise FinegrainError(f"{self.text!r}: reason {self.reason.value} with people {self.person_ids!r}",
                                 "give person ids exactly when someone is known")

    @property
    def constrains(self) -> bool:
        """Whether this is a face constraint (someone of the album answers to the word)."""
        return bool(self.person_ids)

    def describe(self) -> str:
        """The plan's explanation ("'Hao Ge' is a nickname of 4 (Zhihao) and 11 (Haoyu): ambiguous")."""
        who = " and ".join(f"{pid} ({name})" if name and name != pid else pid
                           for pid, name in zip(self.person_ids, self.names or self.person_ids))
        if self.reason is PeopleReason.SHARED_NICKNAME:
            return f"ambiguous: {self.text!r} is a nickname of {who}; any of them counts"
        if self.reason is PeopleReason.ROLE:
            return f"role word: any {self.role or 'person'} of the album ({who})"
        return f"no person in the album is known as a {self.role or 'person'}"

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "reason": self.reason.value, "person_ids": list(self.person_ids),
                "names": list(self.names), "role": self.role}


MENTION_KINDS = ("person", "place")


@dataclass(frozen=True, slots=True)
class UnknownMention:
    """A person or place the query names that the album does not have ("photos with Zoe",
    "photos in Yantain"): its ``kind`` ("person" or "place"), the matched ``text`` and the
    album's nearest name as a did-you-mean ``suggestion`` (None when nothing is close)."""

    kind: str
    text: str
    suggestion: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in MENTION_KINDS:
            raise FinegrainError(
                f"unknown mention kind {self.kind!r} for {self.text!r}", f"use one of {', '.join(MENTION_KINDS)}"
            )

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "suggestion": self.suggestion}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UnknownMention:
        try:
            return cls(str(data["kind"]), str(data["text"]), data.get("suggestion"))
        except KeyError as exc:
            raise FinegrainError(
                f"unknown mention {dict(data)!r} lacks {exc.args[0]!r}", "give 'kind', 'text' and optionally 'suggestion'"
            ) from None


@dataclass(frozen=True, slots=True)
class Plan:
    """The constraints of one query. All ``people`` must be present in a photo, and for each
    of ``people_any`` that has person ids, one of them (a role word, "kids"; a nickname several
    people share, reported as ambiguous); ``roles`` are social roles the album's vocabulary
    does not resolve ("friends", "闺蜜");
    ``impossible_times`` are time expressions naming no calendar day (no photo can match);
    ``unknown`` are people or places the query names that the album does not have (the
    engine answers "no such person/place ... did you mean ...?" instead of searching)."""

    query: str
    lang: str
    source: str
    time_ranges: tuple[TimeRange, ...] = ()
    places: tuple[PlaceMatch, ...] = ()
    people: tuple[PersonMatch, ...] = ()
    roles: tuple[str, ...] = ()
    event_words: tuple[str, ...] = ()
    visual_text: str = ""
    steps: tuple[tuple[str, str], ...] = field(default=())
    planner: str = "rules"
    fallback_reason: str | None = None
    impossible_times: tuple[ImpossibleTime, ...] = ()
    unknown: tuple[UnknownMention, ...] = ()
    people_any: tuple[AnyOfPeople, ...] = ()

    def __post_init__(self) -> None:
        check_source(self.source)
        if self.lang not in ("en", "zh"):
            raise FinegrainError(f"unknown plan language {self.lang!r}", "use 'en' or 'zh'")

    @property
    def person_ids(self) -> tuple[str, ...]:
        """The distinct person ids, in order of mention."""
        return tuple(dict.fromkeys(p.person_id for p in self.people))

    @property
    def people_groups(self) -> tuple[tuple[str, ...], ...]:
        """The any-of face constraints: for each, the person ids one of whom must be present."""
        return tuple(g.person_ids for g in self.people_any if g.constrains)

    def explain(self) -> list[tuple[str, str]]:
        """The rules that fired, as ``(rule, matched text)`` pairs in the order they fired."""
        return list(self.steps)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "lang": self.lang,
            "source": self.source,
            "time_ranges": [t.to_dict() for t in self.time_ranges],
            "places": [p.to_dict() for p in self.places],
            "people": [p.to_dict() for p in self.people],
            "roles": list(self.roles),
            "event_words": list(self.event_words),
            "visual_text": self.visual_text,
            "explain": [list(s) for s in self.steps],
            "planner": self.planner,
            "fallback_reason": self.fallback_reason,
            "impossible_times": [t.to_dict() for t in self.impossible_times],
            "unknown": [u.to_dict() for u in self.unknown],
            "people_any": [g.to_dict() for g in self.people_any],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)
