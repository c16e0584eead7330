"""The album search engine: plan a query, run the tools, fuse, and abstain when nothing matches.

``search(store, query)`` does what the PhotoBench agent does with its four tools
(Section 5 of the paper), with fixed rules instead of an LLM loop:

1. plan the query (:func:`finegrain.album.plan.plan_query` with the catalog's own
   vocabulary, :func:`finegrain.album.plan_catalog.vocabulary_from_catalog`), and drop
   the constraints of tools switched off (``tools``, the paper's Table 5 ablation);
   A plan with a time expression that names no calendar day ("February 30",
   ``Plan.impossible_times``) is **abstained** on at once, with the reason, and so is
   one naming a person or place the album does not have (``Plan.unknown``: "no place
   called 'Yantain' in the album; did you mean Yantian District?");
2. run each hard constraint on its own: time (T_M), place (T_M), named events
   (T_M), and the people the album's vocabulary names, all present (T_F);
   **abstain** with the constraint's name when one matches no photo, and when
   their intersection (T_S ``and``) is empty. A "selfie" and unresolved social
   roles ("with friends") are not face constraints: face indexes miss most
   selfies (in PhotoBench album1 only 1 of 22 judged selfie photos lists the
   owner's face), so they join the visual text. A plan with at most one plain
   date range and one album place is answered by one indexed store query
   (``select_ids``); the constraints are run one by one only when that finds
   nothing (to name the one that fails) or the plan is more complex;
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

Every search ends in a typed :class:`~finegrain.album.outcome.Outcome` (found, or
the one cause of abstaining: which constraint or pair of constraints is empty, why
the visual part cannot be checked ...); ``SearchResult.reason`` is its rendering in
the plan's language (:func:`finegrain.album.outcome.render` for another).

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
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import cached_property
from typing import Any, Generic, TypeVar

import numpy as np

from finegrain.album.catalog.store import EMBEDDING_KINDS, CatalogStore, PhotoFilter
from finegrain.album.outcome import Constraint, ConstraintKind, Outcome, OutcomeKind, VisualGap, render
from finegrain.album.plan import AlbumVocabulary, Plan, plan_query
from finegrain.album.plan_catalog import vocabulary_from_catalog
from finegrain.album.records import Event
from finegrain.album.tools import (
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

    ``ranked`` is built on first access (ordering tens of thousands of photos by
    time costs more than finding them), so read it while the catalog is open;
    ``timings`` are milliseconds per step of finding the set. ``outcome`` is why, typed;
    ``reason`` renders it in the plan's language.
    """

    plan: Plan
    photo_ids: frozenset[str]
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


#: photo ids a SearchContext keeps in each of its two caches (sets per filter, time orders per set)
CACHED_IDS = 400_000

K = TypeVar("K")
V = TypeVar("V")


class _SizedLRU(Generic[K, V]):
    """A least-recently-used map bounded by the total ``size`` of its values (photo ids held)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._data: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._held = 0

    def get(self, key: K) -> tuple[bool, V | None]:
        entry = self._data.get(key)
        if entry is None:
            return False, None
        self._data.move_to_end(key)
        return True, entry[0]

    def put(self, key: K, value: V, size: int) -> None:
        if size > self.capacity:
            return
        old = self._data.pop(key, None)
        self._held -= old[1] if old else 0
        self._data[key] = (value, size)
        self._held += size
        while self._held > self.capacity:
            _, (_, n) = self._data.popitem(last=False)
            self._held -= n


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
        self._positions: dict[str, int] | None = None
        self._events: list[Event] | None = None
        self._embeddings: tuple[list[str], np.ndarray] | None = None
        self._threshold = visual_threshold
        # sets and time orders of constraint combinations already asked for (queries that differ in
        # wording or language, or a chip removed and put back, share them); bounded by photo ids held
        self._filtered: _SizedLRU[PhotoFilter, frozenset[str] | None] = _SizedLRU(CACHED_IDS)
        self._ordered: _SizedLRU[frozenset[str], tuple[tuple[str, float], ...]] = _SizedLRU(CACHED_IDS)

    def select_ids(self, where: PhotoFilter) -> frozenset[str] | None:
        """``store.select_ids(where)``, remembered for this context (it sees one state of the catalog)."""
        found, hit = self._filtered.get(where)
        if not found:
            ids = self.store.select_ids(where)
            hit = None if ids is None else frozenset(ids)
            self._filtered.put(where, hit, len(hit or ()))
        return hit

    def time_ranked(self, ids: frozenset[str]) -> tuple[tuple[str, float], ...]:
        """:func:`_time_ranked` of ``ids``, remembered (a frozenset's hash is computed once)."""
        found, hit = self._ordered.get(ids)
        if not found or hit is None:
            hit = tuple(_time_ranked(ids, self))
            self._ordered.put(ids, hit, len(ids))
        return hit

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
    def positions(self) -> dict[str, int]:
        if self._positions is None:
            self._positions = self.times.position()
        return self._positions

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
) -> SearchResult:
    """Answer ``query`` over ``store`` (see the module docstring).

    ``visual_threshold=None`` calibrates it on the catalog's embeddings; pass a
    :class:`SearchContext` to reuse the vocabulary, times and embeddings across queries.
    ``today``: the "now" of relative dates (default: the newest photo's date, or the real
    date when no photo is dated; the plan says which). ``tools``: the tools switched on
    (``"V,M"``; default all), a plan constraint whose tool is off is dropped
    (:func:`finegrain.album.tools.restrict_plan`).
    """
    if unverified_visual not in UNVERIFIED_VISUAL:
        raise FinegrainError(f"unknown unverified_visual policy {unverified_visual!r}",
                             f"use one of {', '.join(UNVERIFIED_VISUAL)}")
    enabled = parse_tools(tools)
    ctx = context if context is not None else SearchContext(
        store, encoder=encoder, vocab=vocab, visual_threshold=visual_threshold, today=today)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    full_plan = (planner or _rules)(query, ctx.vocab, lang)
    plan = restrict_plan(full_plan, enabled) if enabled != ALL_TOOLS else full_plan
    timings["plan"] = _ms(t0)

    def done(ids: AbstractSet[str], ranked: Any, outcome: Outcome, **kw: Any) -> SearchResult:
        timings["total"] = _ms(t0)
        rank = ranked if callable(ranked) else (lambda: ranked)
        return SearchResult(plan, frozenset(ids), not ids, render(outcome, plan.lang), timings, rank=rank,
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
        sets = {
            "time": time_filter(store, plan.time_ranges, ctx.times if _needs_times(plan) else None),
            "place": place_filter(store, plan),
            "event": events,
            "people": face_search(store, [p.person_id for p in named]),
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
        return done(hard, (lambda: ctx.time_ranked(frozenset(hard))), Outcome(OutcomeKind.FOUND, matched, count=len(hard)))

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
        return done(hard, (lambda: ctx.time_ranked(frozenset(hard))),
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
    if named:
        who = ", ".join(dict.fromkeys(p.text for p in named))
        several = len({p.person_id for p in named}) > 1
        out["people"] = Constraint(ConstraintKind.PEOPLE if several else ConstraintKind.PERSON, who)
    return out


def _one_query(ctx: SearchContext, plan: Plan, named: Sequence[Any]) -> frozenset[str] | None:
    """The hard set in one indexed store query (``select_ids``) when the plan is simple enough:
    at most one plain date range and one album place; None otherwise (or with no constraint)."""
    if len(plan.time_ranges) > 1 or _needs_times(plan) or len(plan.places) > 1:
        return None
    if plan.places and (not plan.places[0].in_album or plan.places[0].place.level not in CATALOG_LEVELS):
        return None
    kw: dict[str, Any] = {}
    if plan.time_ranges:
        r = plan.time_ranges[0]
        kw["start"], kw["end"] = _midnight(r.start), _day_after(r.end)
    if plan.places:
        kw["places"] = [(plan.places[0].place.level, plan.places[0].place.name)]
    if named:
        kw["people"] = list(dict.fromkeys(p.person_id for p in named))
    return ctx.select_ids(PhotoFilter(**kw)) if kw else None


def _midnight(d: Any) -> datetime:
    return datetime(d.year, d.month, d.day)


def _day_after(d: date) -> datetime | None:
    """Midnight after day ``d``; None (an open end) after the calendar's last day."""
    return None if d >= date.max else _midnight(d + timedelta(days=1))


def _rules(query: str, vocab: AlbumVocabulary, lang: str | None) -> Plan:
    return plan_query(query, vocab, lang=lang)


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


def _time_ranked(ids: AbstractSet[str], ctx: SearchContext) -> list[tuple[str, float]]:
    """``ids`` oldest first (undated last), ties by id; scores ``1 - rank / n``."""
    pos = ctx.positions
    times = ctx.times
    dated = ids & pos.keys()
    rows = np.fromiter(map(pos.__getitem__, dated), dtype=np.int64, count=len(dated))
    rows.sort()  # rows follow id order, so a stable sort by time breaks ties by id
    rows = rows[np.argsort(times.seconds[rows], kind="stable")]
    order = list(map(times.ids.__getitem__, rows.tolist()))
    if len(dated) < len(ids):
        order.extend(sorted(ids - dated))
    n = len(order)
    return list(zip(order, (1.0 - np.arange(n) / n).tolist()))


def _ms(t: float) -> float:
    return (time.perf_counter() - t) * 1000.0

