"""The album search engine: plan a query, run the tools, fuse, and abstain when nothing matches.

``search(store, query)`` does what the PhotoBench agent does with its four tools
(Section 5 of the paper), with fixed rules instead of an LLM loop:

1. plan the query (:func:`finegrain.album.engine.plan.plan_query` with the catalog's own
   vocabulary, :func:`finegrain.album.engine.plan_catalog.vocabulary_from_catalog`), and drop
   the constraints of tools switched off (``tools``, the paper's Table 5 ablation);
   A plan with a time expression that names no calendar day ("February 30",
   ``Plan.impossible_times``) is **abstained** on at once, with the reason, and so is
   one naming a person or place the album does not have (``Plan.unknown``: "no place
   called 'Yantain' in the album; did you mean Yantian District?");
2. run each hard constraint on its own: time (T_M), place (T_M), named events
   (T_M), and the people the album's vocabulary names, all present, with one of each
   any-of group (a role word such as "kids", a nickname several people share) (T_F);
   **abstain** with the constraint's name when one matches no photo, and when
   their intersection (T_S ``and``) is empty. A place that matches no photo by name is looked
   up by position before that (a city's photos in a catalog indexed before city areas,
   :mod:`finegrain.album.engine.area_photos`). A "selfie" and unresolved social
   roles ("with friends") are not face constraints: face indexes miss most
   selfies (in PhotoBench album1 only 1 of 22 judged selfie photos lists the
   owner's face), so they join the visual text. A plan with time ranges, at most
   one album place and named people is answered from the context's constraint
   index (photo sets as positions in capture order,
   :mod:`finegrain.album.engine.photo_order`); the constraints are run one by one only
   when that finds nothing (to name the one that fails) or the plan is more
   complex (events, several places);
3. when the plan has visual text (the residue, selfie and role words, event
   words no event is named after, points of interest the catalog does not
   know), score it with T_V over the candidates; **abstain** when the best
   score is below the visual threshold, else keep the candidates scoring at
   least the threshold;
4. without any visual evidence in the catalog (no caption or image embeddings,
   as for PhotoBench albums, which ship neither), the visual part cannot be
   checked. A purely visual query is then abstained on with that reason. A
   query with hard constraints and unverifiable visual text follows
   ``unverified_visual``: ``"abstain"`` (the default: no evidence is evidence
   below any threshold, so abstain, as the rule above says) or
   ``"candidates"`` (return the hard-constraint set, the reason saying the
   visual part was not checked) or ``"one_day"`` (``candidates`` when the
   query's dates name one single day, e.g. "selfie documenting makeup on
   November 16, 2025, afternoon": the person then names the moment and the
   visual words describe it; ``abstain`` otherwise). ``one_day`` was written
   after reading PhotoBench's 20 sample queries, so its scores on them are not
   an unbiased estimate.

Every search ends in a typed :class:`~finegrain.album.engine.outcome.Outcome` (found, or
the one cause of abstaining: which constraint or pair of constraints is empty, why
the visual part cannot be checked ...); ``SearchResult.reason`` is its rendering in
the plan's language (:func:`finegrain.album.engine.outcome.render` for another).

The ranked list is the predicted set ordered by visual score, or by capture
time (oldest first) when there is no visual score; scores are then
``1 - rank / n`` so the order survives any sort by score.

The visual threshold (:func:`calibrate_visual_threshold`) comes from the
catalog's own embeddings, never from evaluation queries: each of up to 500
sampled photos' embeddings is used as a pseudo-query with the photo itself left
out, i.e. a query whose right answer is not in the album; the threshold is the
95th percentile of their best scores, so at most about 5 % of such
"no answer" queries would be accepted. (The pseudo-queries are passage
embeddings of captions, not query encodings of them; with an asymmetric encoder
the threshold is only an approximation. Pass ``visual_threshold`` to override.)
Image embeddings (``album index --image-encoder clip:PATH``) cannot be calibrated that
way: an image is far closer to other images than any text is (the modality gap), so a
leave-one-out threshold would reject every text query. Their default is instead
:data:`IMAGE_TEXT_THRESHOLD` = 0.30, the text-image cosine LAION-400M required for an
alt text to count as describing its image (CLIP ViT-B/32); other CLIP models need their
own value (``--threshold``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import Any

import numpy as np

from finegrain.album.engine.area_photos import photos_in_areas
from finegrain.album.engine.catalog.store import EMBEDDING_KINDS, CatalogStore, PhotoFilter
from finegrain.album.engine.outcome import Constraint, ConstraintKind, Outcome, OutcomeKind, VisualGap, render
from finegrain.album.engine.photo_order import ConstraintIndex, OrderedIds, PhotoOrder
from finegrain.album.engine.plan import AlbumVocabulary, Plan, plan_query
from finegrain.album.engine.plan.holidays import DEFAULT_HOLIDAY_READING, check_holiday_reading
from finegrain.album.engine.plan.records import TimeRange
from finegrain.album.engine.plan_catalog import vocabulary_from_catalog
from finegrain.album.engine.records import Event
from finegrain.album.engine.tools import (
    ALL_TOOLS,
    CATALOG_LEVELS,
    PhotoTimes,
    compose,
    event_filter,
    face_search,
    is_selfie,
    parse_tools,
    place_filter,
    restrict_plan,
    time_filter,
    tools_label,
    vector_search_hits,
)
from finegrain.errors import FinegrainError

Planner = Callable[[str, AlbumVocabulary, str | None], Plan]
UNVERIFIED_VISUAL = ("abstain", "candidates", "one_day")
CALIBRATION_QUANTILE = 0.95
#: Text-image cosine above which a text is taken to describe an image, for image embeddings
#: (CLIP): the filter LAION-400M applied to its image-alt-text pairs with CLIP ViT-B/32.
IMAGE_TEXT_THRESHOLD = 0.30
CALIBRATION_SAMPLE = 500


@dataclass(frozen=True)
class SearchResult:
    """The answer to one query: the predicted set (empty when abstaining), the ranked list, why.

    ``ranked`` orders exactly ``photo_ids``; it is built on first access (ordering tens of
    thousands of photos by time costs more than finding them), so read it while the catalog
    is open, and :meth:`head` gives its first ``k`` without building the rest when it can.
    ``photo_ids`` is a frozenset, or for a time-ranked answer an
    :class:`~finegrain.album.engine.photo_order.OrderedIds` (a set held as positions in capture order);
    ``timings`` are milliseconds per step of finding the set. ``outcome`` is why, typed;
    ``reason`` renders it in the plan's language.
    """

    plan: Plan
    photo_ids: AbstractSet[str]
    abstained: bool
    reason: str
    timings: dict[str, float] = field(default_factory=dict)
    visual_threshold: float | None = None
    best_visual: float | None = None
    rank: Callable[[], list[tuple[str, float]]] | None = field(default=None, repr=False, compare=False)
    outcome: Outcome | None = None

    @cached_property
    def ranked(self) -> tuple[tuple[str, float], ...]:
        """``[(photo id, score)]`` best first: by visual score, or by capture time without one."""
        return tuple(self.rank()) if self.rank is not None else ()

    def head(self, k: int | None) -> Sequence[tuple[str, float]]:
        """The first ``k`` of :attr:`ranked` (all when None); a time ranking builds those alone."""
        head = getattr(self.rank, "head", None)
        if "ranked" not in self.__dict__ and callable(head):
            return tuple(head(k))
        return self.ranked if k is None else self.ranked[:k]

    def to_dict(self, *, top: int | None = None) -> dict[str, Any]:
        ranked = self.ranked if top is None else self.ranked[:top]
        return {
            "query": self.plan.query,
            "plan": self.plan.to_dict(),
            "abstained": self.abstained,
            "reason": self.reason,
            "outcome": None if self.outcome is None else self.outcome.to_dict(),
            "n_photos": len(self.photo_ids),
            "photo_ids": sorted(self.photo_ids),
            "ranked": [[pid, round(s, 6)] for pid, s in ranked],
            "visual_threshold": self.visual_threshold,
            "best_visual": self.best_visual,
            "timings_ms": {k: round(v, 3) for k, v in self.timings.items()},
        }


class SearchContext:
    """What search needs per catalog, computed once and reused across queries: the vocabulary,
    photo times, the embeddings of the encoder's model (unit rows) and the calibrated visual
    threshold. It does not see later changes to the catalog; build a new one then."""

    def __init__(self, store: CatalogStore, *, encoder: Any = None, vocab: AlbumVocabulary | None = None,
                 visual_threshold: float | None = None, today: date | None = None) -> None:
        self.store = store
        self.encoder = encoder
        self.today = today
        self._vocab = vocab
        self._times: PhotoTimes | None = None
        self._order: PhotoOrder | None = None
        self._index: ConstraintIndex | None = None
        self._events: list[Event] | None = None
        self._embeddings: tuple[list[str], np.ndarray] | None = None
        self._threshold = visual_threshold

    def select_ids(self, where: PhotoFilter, ranges: Sequence[TimeRange] = ()) -> OrderedIds | None:
        """``store.select_ids(where)`` as positions in capture order, further limited to any of the
        time ``ranges`` (None when there is no constraint); each constraint's photos are read
        from the store once per context (:class:`~finegrain.album.engine.photo_order.ConstraintIndex`)."""
        if self._index is None:
            self._index = ConstraintIndex(self.store, self.order, self.times)
        return self._index.select(where, ranges)

    def time_ranked(self, ids: AbstractSet[str]) -> OrderedIds:
        """``ids`` in capture order, oldest first (undated last, by id); calling the result gives
        ``[(id, 1 - rank / n)]``, its ``head(k)`` the first ``k`` alone."""
        return self.order.of(ids)

    def warm(self) -> SearchContext:
        """Build now what the first queries would otherwise build: the vocabulary, the capture
        order and the planner's segmenter (jieba's dictionary, loaded by the first Chinese plan)."""
        _ = self.order
        for query, lang in (("photos from 2020", "en"), ("2020年的照片", "zh")):
            plan_query(query, self.vocab, lang=lang)
        return self

    @property
    def order(self) -> PhotoOrder:
        """Every photo's position in capture order (built once per context)."""
        if self._order is None:
            self._order = PhotoOrder.from_times(self.times, self.store)
        return self._order

    @property
    def vocab(self) -> AlbumVocabulary:
        if self._vocab is None:
            self._vocab = vocabulary_from_catalog(self.store, today=self.today)
        return self._vocab

    @property
    def times(self) -> PhotoTimes:
        if self._times is None:
            self._times = PhotoTimes.load(self.store)
        return self._times

    @property
    def events(self) -> list[Event]:
        if self._events is None:
            self._events = self.store.events()
        return self._events

    @property
    def embeddings(self) -> tuple[list[str], np.ndarray]:
        if self._embeddings is None:
            if self.encoder is None:
                self._embeddings = ([], np.zeros((0, 0), dtype=np.float32))
            else:
                ids, matrix = self.store.get_embeddings(str(self.encoder.model_id))
                m = np.asarray(matrix, dtype=np.float32)
                if len(ids):
                    norms = np.linalg.norm(m, axis=1, keepdims=True)
                    norms[norms == 0] = 1.0
                    m = m / norms
                self._embeddings = (ids, m)
        return self._embeddings

    @property
    def embeds_images(self) -> bool:
        """Whether the encoder's vectors in the catalog are image embeddings (not captions)."""
        if self.encoder is None:
            return False
        kinds = self.store.get_meta(EMBEDDING_KINDS, {}) or {}
        return kinds.get(str(self.encoder.model_id)) == "image"

    @property
    def visual_threshold(self) -> float | None:
        """The given threshold, else one calibrated on the catalog's embeddings (None without any);
        for image embeddings :data:`IMAGE_TEXT_THRESHOLD` (see the module docstring)."""
        if self._threshold is None and self.embeddings[0]:
            self._threshold = (IMAGE_TEXT_THRESHOLD if self.embeds_images
                               else calibrate_visual_threshold(self.embeddings[1]))
        return self._threshold


def calibrate_visual_threshold(
    matrix: np.ndarray, *, quantile: float = CALIBRATION_QUANTILE, sample: int = CALIBRATION_SAMPLE, seed: int = 0
) -> float:
    """The ``quantile`` of leave-one-out best cosines of sampled rows (see the module docstring)."""
    m = np.asarray(matrix, dtype=np.float32)
    if len(m) < 2:
        return 1.0
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    m = m / norms
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(m), size=min(sample, len(m)), replace=False)
    sims = m[rows] @ m.T
    sims[np.arange(len(rows)), rows] = -np.inf
    return float(np.quantile(sims.max(axis=1), quantile))


def search(
    store: CatalogStore,
    query: str,
    *,
    lang: str | None = None,
    encoder: Any = None,
    vocab: AlbumVocabulary | None = None,
    planner: Planner | None = None,
    visual_threshold: float | None = None,
    context: SearchContext | None = None,
    unverified_visual: str = "abstain",
    today: date | None = None,
    tools: str | Iterable[str] | None = None,
    holiday: str = DEFAULT_HOLIDAY_READING,
) -> SearchResult:
    """Answer ``query`` over ``store`` (see the module docstring).

    ``visual_threshold=None`` calibrates it on the catalog's embeddings; pass a
    :class:`SearchContext` to reuse the vocabulary, times and embeddings across queries.
    ``today``: the "now" of relative dates (default: the newest photo's date, or the real
    date when no photo is dated; the plan says which). ``tools``: the tools switched on
    (``"V,M"``; default all), a plan constraint whose tool is off is dropped
    (:func:`finegrain.album.engine.tools.restrict_plan`). ``holiday``: how the rule planner reads a
    statutory holiday with a year, ``"span"`` (its official days off) or ``"day"`` (its own day);
    a ``planner`` given here plans on its own.
    """
    check_holiday_reading(holiday)
    if unverified_visual not in UNVERIFIED_VISUAL:
        raise FinegrainError(f"unknown unverified_visual policy {unverified_visual!r}",
                             f"use one of {', '.join(UNVERIFIED_VISUAL)}")
    enabled = parse_tools(tools)
    ctx = context if context is not None else SearchContext(
        store, encoder=encoder, vocab=vocab, visual_threshold=visual_threshold, today=today)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    full_plan = planner(query, ctx.vocab, lang) if planner is not None else plan_query(query, ctx.vocab, lang=lang,
                                                                                        holiday=holiday)
    plan = restrict_plan(full_plan, enabled) if enabled != ALL_TOOLS else full_plan
    timings["plan"] = _ms(t0)

    def done(ids: AbstractSet[str], ranked: Any, outcome: Outcome, **kw: Any) -> SearchResult:
        timings["total"] = _ms(t0)
        rank = ranked if callable(ranked) else (lambda: ranked)
        found = ids if isinstance(ids, OrderedIds) else frozenset(ids)
        return SearchResult(plan, found, not ids, render(outcome, plan.lang), timings, rank=rank,
                            outcome=outcome, **kw)

    if plan.impossible_times:
        return done(set(), [], Outcome(
            OutcomeKind.IMPOSSIBLE_DATE, tuple(Constraint(ConstraintKind.TIME, t.text) for t in plan.impossible_times),
            note="; ".join(t.reason for t in plan.impossible_times)))
    if plan.unknown:
        return done(set(), [], _unknown_outcome(plan))

    t = time.perf_counter()
    named = [p for p in plan.people if not is_selfie(p.text)]
    events = event_filter(store, plan.event_words, ctx.events) if plan.event_words else None
    labels = _constraints(store, plan, named, events is not None)

    hard: AbstractSet[str] | None = _one_query(ctx, plan, named) if events is None else None
    if hard is None or not hard:
        # each constraint on its own: the general path, and the reason when the fast path found nothing
        places = place_filter(store, plan)
        if places is not None and not places:  # a catalog that names a city's photos by their nearest town
            places = photos_in_areas(store, plan)
        sets = {
            "time": time_filter(store, plan.time_ranges, ctx.times if _needs_times(plan) else None),
            "place": places,
            "event": events,
            "people": _people_filter(store, named, plan.people_groups),
        }
        checks = [(k, ids) for k, ids in sets.items() if ids is not None]
        for key, ids in checks:
            if not ids:
                timings["filters"] = _ms(t)
                return done(set(), [], _empty_constraint(key, plan, labels))
        hard = compose("and", *[ids for _, ids in checks]) if checks else None
        if hard is not None and not hard:
            timings["filters"] = _ms(t)
            return done(set(), [], Outcome(OutcomeKind.EMPTY_TOGETHER, _empty_pair(checks, labels)))
    timings["filters"] = _ms(t)
    matched = tuple(labels.values())

    visual = _visual_text(plan, events is not None, store) if "V" in enabled else ""
    if not visual:
        if hard is None:
            if plan is not full_plan and any(s.startswith("tools ") for s, _ in plan.steps):
                return done(set(), [], Outcome(OutcomeKind.TOOLS_DISABLED, _dropped(plan),
                                               note=tools_label(enabled)))
            return done(set(), [], Outcome(OutcomeKind.NOTHING_TO_SEARCH))
        ordered = ctx.time_ranked(hard)
        return done(ordered, ordered, Outcome(OutcomeKind.FOUND, matched, count=len(hard)))

    t = time.perf_counter()
    threshold = ctx.visual_threshold
    hits = vector_search_hits(store, visual, ctx.encoder, candidates=hard, normalized=True, threshold=threshold,
                              embeddings=ctx.embeddings if ctx.encoder is not None else None)
    timings["visual"] = _ms(t)
    seen = (*matched, Constraint(ConstraintKind.VISUAL, visual))
    if not hits.n_embedded:
        gap = hits.gap or VisualGap.NO_EMBEDDINGS
        note = (", ".join(store.embedding_models()) if gap is VisualGap.NO_ENCODER
                else hits.model_id if gap is VisualGap.NO_MODEL_EMBEDDINGS else None)
        if hard is None:
            return done(set(), [], Outcome(OutcomeKind.VISUAL_UNCHECKABLE, seen, gap=gap, note=note))
        if unverified_visual == "abstain" or (unverified_visual == "one_day" and not _one_day(plan)):
            return done(set(), [], Outcome(OutcomeKind.VISUAL_UNCHECKABLE, seen, gap=gap, note=note,
                                           count=len(hard)))
        ordered = ctx.time_ranked(hard)
        return done(ordered, ordered,
                    Outcome(OutcomeKind.FOUND_VISUAL_UNCHECKED, seen, count=len(hard), gap=gap, note=note))
    best = hits.best
    if best is None or threshold is None or best < threshold:
        return done(set(), [], Outcome(OutcomeKind.VISUAL_BELOW_THRESHOLD, seen, best=best, threshold=threshold),
                    visual_threshold=threshold, best_visual=best)
    kept = list(hits.hits)
    return done({pid for pid, _ in kept}, kept,
                Outcome(OutcomeKind.FOUND, seen, count=len(kept), best=best, threshold=threshold),
                visual_threshold=threshold, best_visual=best)


def _unknown_outcome(plan: Plan) -> Outcome:
    """No such person / place: the kind of the first unknown mention, all mentions of that kind,
    and the first suggestion among them."""
    kind = plan.unknown[0].kind
    same = [u for u in plan.unknown if u.kind == kind]
    ck = ConstraintKind.PERSON if kind == "person" else ConstraintKind.PLACE
    suggestion = next((u.suggestion for u in same if u.suggestion), None)
    return Outcome(OutcomeKind.NO_SUCH_PERSON if kind == "person" else OutcomeKind.NO_SUCH_PLACE,
                   tuple(Constraint(ck, u.text) for u in same), suggestion=suggestion)


_EMPTY_KIND = {"time": OutcomeKind.NO_PHOTO_IN_TIME, "place": OutcomeKind.NO_PHOTO_AT_PLACE,
               "event": OutcomeKind.NO_PHOTO_IN_EVENT, "people": OutcomeKind.NO_PHOTO_WITH_PEOPLE}


def _empty_constraint(key: str, plan: Plan, labels: dict[str, Constraint]) -> Outcome:
    """A constraint that matches no photo on its own; for places, the ones with no photo when known."""
    if key == "place":
        missing = [p.text for p in plan.places if not p.in_album]
        if missing:
            return Outcome(OutcomeKind.NO_PHOTO_AT_PLACE, (Constraint(ConstraintKind.PLACE, ", ".join(missing)),))
    c = labels.get(key)
    return Outcome(_EMPTY_KIND[key], (c,) if c is not None else ())


def _empty_pair(checks: Sequence[tuple[str, set[str]]], labels: dict[str, Constraint]) -> tuple[Constraint, ...]:
    """The first pair of constraints whose photos do not meet, else all of them (each pair meets,
    but not every one together)."""
    for i, (a, sa) in enumerate(checks):
        for b, sb in checks[i + 1:]:
            if sa.isdisjoint(sb):
                return tuple(labels[k] for k in (a, b) if k in labels)
    return tuple(labels[k] for k, _ in checks if k in labels)


def _dropped(plan: Plan) -> tuple[Constraint, ...]:
    """The constraints :func:`restrict_plan` dropped (from its steps)."""
    kinds = {"time": ConstraintKind.TIME, "place": ConstraintKind.PLACE, "event": ConstraintKind.EVENT,
             "person": ConstraintKind.PERSON, "visual": ConstraintKind.VISUAL}
    out = []
    for step, text in plan.steps:
        if step.startswith("tools ") and " dropped " in step:
            out.append(Constraint(kinds.get(step.rsplit(" ", 1)[-1], ConstraintKind.VISUAL), text))
    return tuple(out)


def _constraints(store: CatalogStore, plan: Plan, named: Sequence[Any], events_matched: bool) -> dict[str, Constraint]:
    """Each hard constraint of the plan as a :class:`Constraint` (for outcomes)."""
    out: dict[str, Constraint] = {}
    if plan.time_ranges:
        out["time"] = Constraint(ConstraintKind.TIME, ", ".join(r.text for r in plan.time_ranges))
    places = [p.text for p in plan.places if p.place.level != "poi" or store.ids_at_place(p.place.name)]
    if places:
        out["place"] = Constraint(ConstraintKind.PLACE, ", ".join(places))
    if events_matched:
        out["event"] = Constraint(ConstraintKind.EVENT, ", ".join(plan.event_words))
    groups = [g.text for g in plan.people_any if g.constrains]
    if named or groups:
        who = ", ".join(dict.fromkeys([*(p.text for p in named), *groups]))
        several = len({p.person_id for p in named}) + len(groups) > 1
        out["people"] = Constraint(ConstraintKind.PEOPLE if several else ConstraintKind.PERSON, who)
    return out


def _people_filter(store: CatalogStore, named: Sequence[Any], groups: Sequence[Sequence[str]]) -> set[str] | None:
    """T_F: photos with every named person and, for each any-of group (a role word, a shared
    nickname), at least one of its people; None when the plan names no one."""
    parts = [face_search(store, [p.person_id for p in named])] if named else []
    for ids in groups:
        parts.append(compose("or", *[face_search(store, [pid]) or set() for pid in ids]))
    found = [p for p in parts if p is not None]
    return compose("and", *found) if found else None


def _one_query(ctx: SearchContext, plan: Plan, named: Sequence[Any]) -> OrderedIds | None:
    """The hard set from the context's constraint index (:meth:`SearchContext.select_ids`) when
    the plan is simple enough: its time ranges, at most one album place and the named people;
    None otherwise (or with no constraint)."""
    if len(plan.places) > 1 or plan.people_groups:
        return None
    if plan.places and (not plan.places[0].in_album or plan.places[0].place.level not in CATALOG_LEVELS):
        return None
    kw: dict[str, Any] = {}
    if plan.places:
        kw["places"] = [(plan.places[0].place.level, plan.places[0].place.name)]
    if named:
        kw["people"] = list(dict.fromkeys(p.person_id for p in named))
    return ctx.select_ids(PhotoFilter(**kw), plan.time_ranges) if kw or plan.time_ranges else None


def _one_day(plan: Plan) -> bool:
    """Whether the plan's dates name one single day (not every year)."""
    return bool(plan.time_ranges) and all(not r.every_year and r.start == r.end for r in plan.time_ranges)


def _needs_times(plan: Plan) -> bool:
    return any(r.every_year or r.hours is not None or r.weekdays is not None for r in plan.time_ranges)


def _visual_text(plan: Plan, events_matched: bool, store: CatalogStore) -> str:
    """The text T_V must match: the residue, unmatched event words, unknown points of interest."""
    parts = [p.text for p in plan.people if is_selfie(p.text)]
    parts.extend(plan.roles)
    parts.append(plan.visual_text.strip())
    if not events_matched:
        parts.extend(plan.event_words)
    parts.extend(p.text for p in plan.places if p.place.level == "poi" and not store.ids_at_place(p.place.name))
    return " ".join(dict.fromkeys(p for p in parts if p))


def _ms(t: float) -> float:
    return (time.perf_counter() - t) * 1000.0

