"""The four PhotoBench tools over a catalog (Section 5 / Appendix G of the paper).

- :func:`vector_search` (T_V): cosine similarity of the query text to the caption
  (or image) embeddings the catalog stores under the encoder's ``model_id``;
- :func:`metadata_filter` (T_M): the photos meeting a plan's time ranges (absolute
  dates, every-year ranges, hours of the day, weekdays), places (any admin level;
  several places: nested ones intersect, "Keqiao, Shaoxing" = Keqiao, others
  unite, "Hangzhou or Shanghai") and event words matched to named events;
- :func:`face_search` (T_F): the photos in which ALL listed people appear;
- :func:`compose` (T_S): ``and`` / ``or`` / ``not`` of photo sets.

:func:`restrict_plan` drops from a plan the constraints whose tool is switched off
(the tool ablation of the paper's Table 5; T_S is always on): ``parse_tools("M,F")``.

Every tool returns a plain value; ``None`` from T_M and T_F means "this tool has
no constraint to apply" (every photo passes), never "nothing matched" (an
empty set). Times are local wall-clock times (see :mod:`finegrain.album.engine.records`).

Time ranges with ``every_year``, ``hours`` or ``weekdays`` need each photo's
time; pass a :class:`PhotoTimes` (built once per catalog with
:meth:`PhotoTimes.load`) to answer them with numpy instead of a scan per query.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np

from finegrain.album.engine.catalog.store import CatalogStore, PhotoFilter
from finegrain.album.engine.outcome import VisualGap
from finegrain.album.engine.plan.records import Plan, TimeRange
from finegrain.album.engine.plan.rules import SELFIE_EN, SELFIE_ZH
from finegrain.album.engine.records import Event
from finegrain.errors import FinegrainError

CATALOG_LEVELS = ("country", "province", "city", "district", "locality")
OPS = ("and", "or", "not")
#: The switchable tools: T_V (vector search), T_M (metadata filter), T_F (face search); T_S is always on.
TOOLS = ("V", "M", "F")
ALL_TOOLS = frozenset(TOOLS)
SELFIE_WORDS = frozenset(w.casefold() for w in (*SELFIE_EN, *SELFIE_ZH))


def is_selfie(text: str) -> bool:
    """Whether a person mention is a selfie word ("selfie", "自拍"): visual, not a face constraint."""
    return text.casefold() in SELFIE_WORDS


# --------------------------------------------------------------------------- tool ablation
def parse_tools(spec: str | Iterable[str] | None) -> frozenset[str]:
    """``"V,M"`` (or ``["V", "M"]``, ``"T_V+T_M"``) -> ``{"V", "M"}``; None is every tool."""
    if spec is None:
        return ALL_TOOLS
    parts = spec.replace("+", ",").split(",") if isinstance(spec, str) else list(spec)
    names = [p.strip().upper().removeprefix("T_") for p in parts if p.strip()]
    bad = [n for n in names if n not in TOOLS]
    if bad or not names:
        shown = repr(bad[0]) if bad else repr(spec)
        raise FinegrainError(f"unknown tool {shown} in --tools {spec!r}",
                             "give a comma list of V (vector search), M (metadata filter), F (face search), "
                             "e.g. --tools V,M; set composition is always on")
    return frozenset(names)


def tools_label(tools: Iterable[str]) -> str:
    """The canonical spelling of a tool set: ``"V,M,F"`` order."""
    chosen = set(tools)
    return ",".join(t for t in TOOLS if t in chosen)


def restrict_plan(plan: Plan, tools: Iterable[str]) -> Plan:
    """``plan`` without the constraints whose tool is not in ``tools``; each drop is a ``tools: dropped`` step.

    Without M: time ranges, impossible times, places, event words and unknown places go;
    without F: named people (selfie words are visual), role words and shared nicknames that name
    someone (``people_any``) and unknown people; without V: the
    visual text, social roles and selfie words (the engine then searches no visual part).
    """
    on = set(tools)
    dropped: list[tuple[str, str]] = []
    kw: dict[str, object] = {}
    if "M" not in on:
        dropped += [("time", r.text) for r in plan.time_ranges] + [("time", t.text) for t in plan.impossible_times]
        dropped += [("place", p.text) for p in plan.places] + [("event", w) for w in plan.event_words]
        kw.update(time_ranges=(), impossible_times=(), places=(), event_words=())
    keep_unknown = tuple(u for u in plan.unknown
                         if (u.kind == "place" and "M" in on) or (u.kind == "person" and "F" in on))
    dropped += [(u.kind, u.text) for u in plan.unknown if u not in keep_unknown]
    people = list(plan.people)
    if "F" not in on:
        dropped += [("person", p.text) for p in people if not is_selfie(p.text)]
        dropped += [("person", g.text) for g in plan.people_any if g.constrains]
        people = [p for p in people if is_selfie(p.text)]
        kw.update(people_any=tuple(g for g in plan.people_any if not g.constrains))
    if "V" not in on:
        dropped += [("visual", p.text) for p in people if is_selfie(p.text)] + [("visual", r) for r in plan.roles]
        dropped += [("visual", plan.visual_text)] if plan.visual_text.strip() else []
        people = [p for p in people if not is_selfie(p.text)]
        kw.update(roles=(), visual_text="")
    if not dropped and len(people) == len(plan.people):
        return plan
    steps = (*plan.steps, *((f"tools {tools_label(on)}: dropped {what}", text) for what, text in dropped))
    return replace(plan, people=tuple(people), unknown=keep_unknown, steps=steps, **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- T_V
@dataclass(frozen=True)
class VectorHits:
    """What T_V found: ``hits`` best first, or none with ``note`` saying why."""

    hits: tuple[tuple[str, float], ...]
    n_embedded: int
    model_id: str | None
    note: str | None = None
    best: float | None = None  # the best score among the candidates, before ``threshold`` and ``k``
    gap: VisualGap | None = None  # why nothing could be searched, typed (``note`` says it in words)


def vector_search(store: CatalogStore, text: str, encoder: Any, **options: Any) -> list[tuple[str, float]]:
    """T_V: ``[(photo id, cosine)]`` best first (ties by photo id), at most ``k``, at least ``threshold``.

    The hits of :func:`vector_search_hits` (same ``options``: ``k``, ``threshold``,
    ``candidates``, ``embeddings``); empty when the catalog stores no embedding of
    ``encoder.model_id``, and that function says why.
    """
    return list(vector_search_hits(store, text, encoder, **options).hits)


def vector_search_hits(
    store: CatalogStore,
    text: str,
    encoder: Any,
    *,
    k: int | None = None,
    threshold: float | None = None,
    candidates: Iterable[str] | None = None,
    embeddings: tuple[list[str], np.ndarray] | None = None,
    normalized: bool = False,
) -> VectorHits:
    """:func:`vector_search` with the number of embedded photos and a note when nothing could be searched.

    ``embeddings``: the store's ``(ids, matrix)`` of the model, already read
    (``normalized``: rows already unit length), to skip reading them per query."""
    if encoder is None:
        models = store.embedding_models()
        if not models:
            return VectorHits((), 0, None, "the catalog has no caption or image embeddings", gap=VisualGap.NO_EMBEDDINGS)
        return VectorHits((), 0, None, f"no text encoder given for the catalog's embeddings ({', '.join(models)})",
                          gap=VisualGap.NO_ENCODER)
    model_id = str(getattr(encoder, "model_id", "") or "")
    ids, matrix = embeddings if embeddings is not None else store.get_embeddings(model_id)
    if not ids:
        return VectorHits((), 0, model_id, f"the catalog has no caption or image embeddings of model {model_id!r}",
                          gap=VisualGap.NO_MODEL_EMBEDDINGS)
    if not text.strip():
        return VectorHits((), len(ids), model_id, "no visual text to search", gap=VisualGap.NO_VISUAL_TEXT)
    q = np.asarray(encoder.encode([text], kind="query"), dtype=np.float32)[0]
    m = np.asarray(matrix, dtype=np.float32)
    if not normalized:
        m = _unit_rows(m)
    scores = m @ (q / (np.linalg.norm(q) or 1.0))
    index = np.arange(len(ids))
    if candidates is not None:
        allowed = candidates if isinstance(candidates, set | frozenset) else set(candidates)
        index = np.fromiter((i for i, pid in enumerate(ids) if pid in allowed), dtype=np.int64)
    best = float(scores[index].max()) if len(index) else None
    if threshold is not None:
        index = index[scores[index] >= threshold]
    # one tie-break: score descending, then photo id ascending (``ids`` come in id order)
    order = index[np.lexsort((index, -scores[index]))]
    if k is not None:
        order = order[:k]
    hits = tuple(zip(map(ids.__getitem__, order.tolist()), scores[order].astype(float).tolist()))
    return VectorHits(hits, len(ids), model_id, None, best)


def _unit_rows(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: np.ndarray = m / norms
    return out


# --------------------------------------------------------------------------- T_M
@dataclass(frozen=True)
class PhotoTimes:
    """Every dated photo's local time as arrays (build once per catalog; cheap to filter)."""

    ids: tuple[str, ...]
    year: np.ndarray
    month_day: np.ndarray  # month * 100 + day
    ordinal: np.ndarray  # date.toordinal()
    hour: np.ndarray
    weekday: np.ndarray  # Monday = 0
    seconds: np.ndarray  # ordinal * 86400 + seconds of the day: the capture order

    def position(self) -> dict[str, int]:
        """photo id -> row (build once and keep, e.g. in the engine's context)."""
        return {pid: i for i, pid in enumerate(self.ids)}

    @classmethod
    def load(cls, store: CatalogStore) -> PhotoTimes:
        rows = [(p.id, t) for p in store.iter_photos() if p.taken_at is not None and (t := p.local_time) is not None]
        return cls.from_times(rows)

    @classmethod
    def from_times(cls, rows: Sequence[tuple[str, datetime]]) -> PhotoTimes:
        t = [r[1] for r in rows]
        return cls(
            tuple(r[0] for r in rows),
            np.array([x.year for x in t], dtype=np.int32),
            np.array([x.month * 100 + x.day for x in t], dtype=np.int32),
            np.array([x.toordinal() for x in t], dtype=np.int64),
            np.array([x.hour for x in t], dtype=np.int8),
            np.array([x.weekday() for x in t], dtype=np.int8),
            np.array([x.toordinal() * 86400 + x.hour * 3600 + x.minute * 60 + x.second for x in t], dtype=np.int64),
        )

    def matching(self, r: TimeRange) -> set[str]:
        return {self.ids[i] for i in np.flatnonzero(self.mask(r)).tolist()}

    def mask(self, r: TimeRange) -> np.ndarray:
        """Which rows are in ``r`` (its dates, every year or not, its hours and weekdays)."""
        if r.every_year:
            lo, hi = r.start.month * 100 + r.start.day, r.end.month * 100 + r.end.day
            md = self.month_day
            mask = (md >= lo) & (md <= hi) if lo <= hi else (md >= lo) | (md <= hi)
        else:
            mask = (self.ordinal >= r.start.toordinal()) & (self.ordinal <= r.end.toordinal())
        if r.weekdays is not None:
            mask &= np.isin(self.weekday, np.array(r.weekdays, dtype=np.int8))
        if r.hours is not None:
            first, last = r.hours
            h = self.hour
            mask &= (h >= first) & (h <= last) if first <= last else (h >= first) | (h <= last)
        return mask


def time_filter(store: CatalogStore, ranges: Sequence[TimeRange], times: PhotoTimes | None = None) -> set[str] | None:
    """Photos in any of ``ranges`` (None when there is no range).

    A plain date range goes to the store's indexed ``ids_taken_between``; a range
    with ``every_year``, ``hours`` or ``weekdays`` is checked against each photo's
    time (``times``, loaded from the store when not given).
    """
    if not ranges:
        return None
    out: set[str] = set()
    for r in ranges:
        if not r.every_year and r.hours is None and r.weekdays is None:
            end = None if r.end >= date.max else _midnight(r.end + timedelta(days=1))  # open after 9999-12-31
            out |= store.ids_taken_between(_midnight(r.start), end)
            continue
        if times is None:
            times = PhotoTimes.load(store)
        out |= times.matching(r)
    return out


def _midnight(d: date) -> datetime:
    return datetime(d.year, d.month, d.day)


def place_filter(store: CatalogStore, plan: Plan) -> set[str] | None:
    """Photos at the plan's catalog places (None when it names none).

    A ``poi`` the catalog does not know is not a hard constraint (the catalog has
    no points of interest; it is left to the visual side). Several places: when
    one place's photos contain another's, the wider one is dropped (nested names
    narrow, "Keqiao, Shaoxing"); the remaining ones unite.
    """
    sets: list[set[str]] = []
    for match in plan.places:
        level = match.place.level
        if level == "poi":
            ids = store.ids_at_place(match.place.name)
            if ids:
                sets.append(ids)
            continue
        if not match.in_album:
            sets.append(set())
            continue
        sets.append(store.ids_at_place(match.place.name, level if level in CATALOG_LEVELS else None))
    if not sets:
        return None
    kept = [s for i, s in enumerate(sets)
            if not any(j != i and t and t < s for j, t in enumerate(sets))]
    return set().union(*kept)


def event_filter(store: CatalogStore, words: Sequence[str], events: Sequence[Event] | None = None) -> set[str] | None:
    """Photos of named events whose id contains an event word (None when no event is named
    after a word: catalog events are unnamed time clusters, so the words stay visual).
    ``events``: the store's events, already read."""
    if not words:
        return None
    hits: set[str] = set()
    found = False
    for event in store.events() if events is None else events:
        name = event.id.casefold()
        if any(w.casefold() in name for w in words if w.strip()):
            found = True
            hits |= store.ids_in_event(event.id)
    return hits if found else None


def metadata_filter(store: CatalogStore, plan: Plan, *, times: PhotoTimes | None = None) -> set[str] | None:
    """T_M: photos meeting the plan's time ranges AND places AND named events; None when the
    plan has no metadata constraint."""
    parts = [time_filter(store, plan.time_ranges, times), place_filter(store, plan),
             event_filter(store, plan.event_words)]
    return compose("and", *[p for p in parts if p is not None]) if any(p is not None for p in parts) else None


# --------------------------------------------------------------------------- T_F
def face_search(store: CatalogStore, person_ids: Sequence[str]) -> set[str] | None:
    """T_F: photos in which every one of ``person_ids`` appears (None when none is given)."""
    ids = list(dict.fromkeys(str(p) for p in person_ids))
    if not ids:
        return None
    return store.select_ids(PhotoFilter(people=tuple(ids))) or set()


# --------------------------------------------------------------------------- T_S
def compose(op: str, *sets: Iterable[str]) -> set[str]:
    """T_S: ``and`` (intersection), ``or`` (union) or ``not`` (the first minus all others)."""
    if op not in OPS:
        raise FinegrainError(f"unknown set operation {op!r}", f"use one of {', '.join(OPS)}")
    if not sets:
        if op == "or":
            return set()
        raise FinegrainError(f"set operation {op!r} needs at least one set", "pass the sets to combine")
    first = set(sets[0])
    if op == "and":
        return first.intersection(*sets[1:])
    if op == "or":
        return first.union(*sets[1:])
    return first.difference(*sets[1:])
