"""What each query tests (its classes), and the album evaluation sliced by class.

A query's classes are tags of :data:`finegrain.io.photobench.QUERY_CLASSES`: the place level
it names (``place:district``, ``place:city``, ``place:province``, ``place:abroad``,
``place:venue``), how it names people (``people:name``, ``people:role`` for a role or kinship
word, ``people:shared`` for a nickname two people share), ``holiday``, another ``time``
expression, and ``zero`` (no photo is the right answer). A query may carry several.

They come from the query's own ``Class`` field when the album has it (**gold**: an album
generator knows what each query tests), else they are read off the engine's plan
(**derived**, :func:`derive_classes`):

- each place of the plan by its level; a named point of interest or a venue word
  (airport, zoo, 博物馆 ...) is ``place:venue``; a country other than China, or a place whose
  name holds no Chinese character (places outside China, and GeoNames towns, carry only
  their GeoNames name) is ``place:abroad``;
- a person matched by a role or kinship word (a nickname such as "Dad", "wife", "爸爸" that is a
  word of the role tables, :mod:`finegrain.album.engine.plan.people`), a role word of the query
  ("kids", "爸妈" naming someone of the album: ``Plan.people_any``, reason ``role``), or a social
  role the album does not resolve, is ``people:role``; one matched by another nickname is
  ``people:name`` (the owner's "me" / "selfie" counts as neither); a nickname several people
  share (reason ``shared_nickname``) is ``people:shared``;
- a festival or holiday range is ``holiday``, any other time range or impossible date ``time``;
- ``zero`` when the query's gold set is empty.

A derived class says what the engine *understood*, so a query the planner misread lands
in the wrong row: only gold classes measure a class the engine missed. The table says
which it holds (``origin``: gold, derived or mixed, with both counts).

:func:`class_table` slices the evaluation by class: queries, routing accuracy over the
queries whose Source label is known, set precision / recall / F1 over the normal queries
(as PhotoBench's Table 3; :func:`finegrain.album.bench.analysis.slice_row`), and the reject
rate (queries answered with no photo). :class:`ClassTable` writes and reads the
``classes`` section of ``results.json``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from finegrain.album.bench.analysis import slice_row
from finegrain.album.engine.plan.people import role_word
from finegrain.album.engine.plan.records import PeopleReason, Plan
from finegrain.album.engine.plan.rules import VENUES_EN, VENUES_ZH
from finegrain.evaluate.result import Evaluation
from finegrain.io.photobench import QUERY_CLASSES, SOURCES
from finegrain.results.schema import Count, Saved, Share, Text
from finegrain.text.lang import CJK

SET_METRICS = ("set_precision", "set_recall", "set_f1")
NO_CLASS = "(none)"
ALL = "all"
_VENUE_WORDS = frozenset(w.lower() for w in (*VENUES_EN, *VENUES_ZH))
_CHINA = frozenset({"中国", "china", "cn"})


def derive_classes(plan: Plan, *, zero: bool) -> tuple[str, ...]:
    """The classes of a query read off its ``plan`` (see the module docstring), in the order of
    :data:`QUERY_CLASSES`; ``zero``: the query's gold set is empty."""
    tags: set[str] = set()
    for p in plan.places:
        place = _place_class(p.place.level, p.place.name)
        if place is not None:
            tags.add(place)
    if any(w.lower() in _VENUE_WORDS for w in plan.event_words):
        tags.add("place:venue")
    owner_words = {"selfie", "selfies", "self-portrait", "自拍", "me", "myself", "i", "我", "自己"}
    ids_by_text: dict[str, set[str]] = {}
    for m in plan.people:
        ids_by_text.setdefault(m.text.lower(), set()).add(m.person_id)
    for text, ids in ids_by_text.items():
        if len(ids) > 1:
            tags.add("people:shared")
        word = text.removesuffix("'s").strip()
        if role_word(word) is not None:
            tags.add("people:role")
        elif word not in owner_words:
            tags.add("people:name")
    for g in plan.people_any:  # a role word nobody of the album has stays visual: no people class
        if g.constrains:
            tags.add("people:shared" if g.reason is PeopleReason.SHARED_NICKNAME else "people:role")
    if plan.roles:
        tags.add("people:role")
    for r in plan.time_ranges:
        tags.add("holiday" if r.rule.startswith(("festival", "holiday")) else "time")
    if plan.impossible_times:
        tags.add("time")
    if zero:
        tags.add("zero")
    return tuple(t for t in QUERY_CLASSES if t in tags)


def _place_class(level: str, name: str) -> str | None:
    """The class of a place of the plan (None for China as a whole: no level below it is named)."""
    if level == "poi":
        return "place:venue"
    if level == "country":
        return None if name.lower() in _CHINA else "place:abroad"
    if not CJK.search(name) or level == "locality":
        return "place:abroad"
    return f"place:{level}"


class Cell(Saved):
    """One aggregate: ``value`` (None when undefined: no query entered it) over ``n`` queries."""

    value: Share | None
    n: Count


class ClassRow(Saved):
    """The evaluation over the queries of one class (``tag``; ``all`` and ``(none)`` too)."""

    tag: Text
    n_queries: Count
    n_zero_ground_truth: Count
    routing: Cell  # predicted Source = gold Source, over the queries with a known Source label
    set_precision: Cell  # over the normal queries that returned photos
    set_recall: Cell  # over the normal queries
    set_f1: Cell  # over the normal queries
    reject_rate: Cell  # queries answered with no photo, over all queries of the class


class ClassTable(Saved):
    """The ``classes`` section of an album evaluation's ``results.json``: one row per class
    present, then ``(none)`` (queries with no class) and ``all``. ``origin`` says where the
    classes came from: ``gold`` (the queries' ``Class`` field), ``derived`` (their plans) or
    ``mixed``, with the counts ``n_gold`` and ``n_derived``."""

    origin: Literal["gold", "derived", "mixed"]
    n_gold: Count
    n_derived: Count
    rows: tuple[ClassRow, ...]

    def row(self, tag: str) -> ClassRow:
        """The row of ``tag`` (KeyError when no query has it)."""
        for r in self.rows:
            if r.tag == tag:
                return r
        raise KeyError(tag)


def class_table(
    ev: Evaluation,
    classes: Mapping[str, Iterable[str]],
    gold: Iterable[str],
    zero: frozenset[str],
    sources: Mapping[str, str | None],
    predicted_sources: Mapping[str, str],
    rejected: Iterable[str],
) -> ClassTable:
    """The evaluation ``ev`` by class.

    ``classes``: each query's tags (every scored query a key); ``gold``: the queries whose tags
    came from their ``Class`` field; ``zero``: the zero-ground-truth queries; ``sources`` and
    ``predicted_sources``: each query's gold Source label (None or another label when unknown)
    and the planner's; ``rejected``: the queries answered with no photo.
    """
    tags = {q: tuple(ts) for q, ts in classes.items()}
    n_gold = len(set(gold) & set(tags))
    n_derived = len(tags) - n_gold
    origin: Literal["gold", "derived", "mixed"] = "gold" if not n_derived else "derived" if not n_gold else "mixed"
    out = frozenset(rejected)
    groups = [(t, [q for q, ts in tags.items() if t in ts]) for t in QUERY_CLASSES]
    groups += [(NO_CLASS, [q for q, ts in tags.items() if not ts]), (ALL, list(tags))]
    rows = []
    for tag, qids in groups:
        if not qids:
            continue
        sliced = slice_row(ev, "class", tag, qids, zero, SET_METRICS).metrics
        known = [q for q in qids if sources.get(q) in SOURCES]
        right = sum(predicted_sources.get(q) == sources[q] for q in known)
        rows.append(ClassRow(
            tag=tag,
            n_queries=len(qids),
            n_zero_ground_truth=len(set(qids) & zero),
            routing=Cell(value=right / len(known) if known else None, n=len(known)),
            **{k: Cell(value=sliced[k].value, n=sliced[k].n) for k in SET_METRICS},
            reject_rate=Cell(value=sum(q in out for q in qids) / len(qids), n=len(qids)),
        ))
    return ClassTable(origin=origin, n_gold=n_gold, n_derived=n_derived, rows=tuple(rows))


def read_class_table(data: Any, where: str) -> ClassTable:
    """The ``classes`` section of a saved album evaluation, validated (one error naming ``where``
    and the JSON path of the first wrong value)."""
    return ClassTable.read(data, where, "classes")
