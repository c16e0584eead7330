"""Zero-answer queries for an album: answerable queries made unanswerable by one injected constraint.

PhotoBench ships three zero-ground-truth queries per album, too few to measure
Reject-Precision / Recall / F1. Its Appendix A.4 / A.5 makes them by
*constraint injection*: add a metadata constraint that contradicts the query
("a year the user never visited that location"). :func:`make_zero_answer` does
this with a proof instead of a human check:

1. **sources**: a query is answerable when the rule planner reads only hard
   constraints from it (time ranges, catalog places, named people; no visual
   residue, role, event word, point of interest or impossible date), the
   catalog has at least one photo meeting all of them, and its public ground
   truth (when it has one) lies inside them; queries with empty ground truth
   are not sources;
2. **constraints** that can be injected, each with its photos in the catalog:

   - ``unvisited_place``: a real place of the planner's gazetteer (the
     vocabulary it understands) that no photo has under any of its names, at
     any admin level, and no GPS photo lies near (50 km of a city, 10 km of a
     district); it matches no photo on its own;
   - ``place``: a city or province of the album (it has photos);
   - ``year`` / ``month``: a year or a calendar month with photos;
   - ``person``: a person of the album (it has photos), never together with
     the source's people / at its place / in its time;

3. a (source, constraint) pair is a **candidate** when the source has no
   constraint of the same role (a second place or time would be read as "either",
   not "both") and, in every language, no photo meets the source's constraints
   and the injected one together (the *proof*: that count is 0);
4. the constraint's words (names from the planner's own vocabulary: the
   gazetteer, the catalog's places and people, dates it parses) are inserted in
   the source's style (:mod:`finegrain.album.bench.zero_answer_phrasing`); the new
   text is kept only when the rule planner reads the injected constraint from it.
   Nothing else about the planner's or the engine's answer is asked, so the
   engine's rejections of these queries are measured, not selected (with the
   rule planner reading the constraint, an engine that combines constraints
   exactly rejects them all; other systems, e.g. an LLM planner or embeddings,
   need not);
5. candidates are drawn with ``random.Random(seed)``: shuffled within each kind,
   then taken in turn from each kind, each source used once before any is used
   twice, until ``n`` groups are made. One group is one (source, constraint) in
   every requested language (``en``, ``zh``); its queries are ``za0001-en``,
   ``za0001-zh``, ...

The proof is a count over the catalog's metadata and faces: a photo without GPS
has no place, one without a capture time no date, and a face the index missed
is not a person, exactly as for PhotoBench's own metadata ground truth. It
rests on the rule planner's reading of the *source* (checked against the
source's public ground truth where there is one); the injected constraint
itself is exact.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from contextlib import ExitStack, closing
from dataclasses import dataclass
from os import PathLike
from typing import Any

from finegrain.album.bench.zero_answer_phrasing import inject
from finegrain.album.bench.zero_answer_pool import (
    KINDS,
    ROLES,
    Constraint,
    Source,
    constraint_pool,
    fits,
    source_of,
)
from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.catalog.store import CatalogStore
from finegrain.album.engine.plan import plan_query
from finegrain.album.engine.plan_catalog import vocabulary_from_catalog
from finegrain.album.engine.search import SearchContext
from finegrain.errors import FinegrainError
from finegrain.io._lines import open_text_write
from finegrain.io.photobench import PhotoQuery
from finegrain.text.lang import parse_lang

__all__ = [
    "KINDS", "Injection", "Proof", "ZeroAnswerQuery", "check_count", "make_zero_answer", "parse_langs",
    "write_zero_answer", "zero_answer_document",
]

LANG_CHOICES = ("en", "zh", "both")
#: The ``type`` of a zero-answer query in a query file (its row in the by-source tables).
ZERO_ANSWER_TYPE = "zero-answer"


@dataclass(frozen=True, slots=True)
class Injection:
    """The injected constraint: its ``kind`` (one of :data:`KINDS`), canonical ``value``
    (``city:东京``, ``2024-03``, ``2024``, ``person:3``) and the ``phrase`` inserted in the text."""

    kind: str
    value: str
    phrase: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "phrase": self.phrase}


@dataclass(frozen=True, slots=True)
class Proof:
    """Why the query has no answer, as catalog counts: each of the source's constraints
    with its photos (``own``), the photos meeting all of them (``own_count`` > 0: the source
    is answerable), the injected constraint's photos alone, and ``count``, the photos meeting
    everything together: 0. ``nearest_km``: for an unvisited city or district, the distance
    from its gazetteer point to the nearest photo with GPS."""

    own: tuple[tuple[str, int], ...]
    own_count: int
    injected: str
    injected_count: int
    count: int
    nearest_km: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "own_constraints": [{"constraint": c, "photos": k} for c, k in self.own],
            "own_count": self.own_count,
            "injected": {"constraint": self.injected, "photos": self.injected_count},
            "nearest_km": None if self.nearest_km is None else round(self.nearest_km, 1),
        }


@dataclass(frozen=True, slots=True)
class ZeroAnswerQuery:
    """A query no photo of the album satisfies: the source query it was made from, the
    injected constraint and the proof. ``group`` links the languages of one injection."""

    id: str
    group: str
    text: str
    lang: str
    source_id: str
    source_text: str
    source_label: str
    injected: Injection
    proof: Proof

    @property
    def ground_truth(self) -> tuple[str, ...]:
        return ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "lang": self.lang,
            "ground_truth": [],
            "type": ZERO_ANSWER_TYPE,
            "group": self.group,
            "source_id": self.source_id,
            "source_text": self.source_text,
            "source_label": self.source_label,
            "injected": self.injected.to_dict(),
            "proof": self.proof.to_dict(),
        }


# --------------------------------------------------------------------------- the API


def parse_langs(value: str | Sequence[str]) -> tuple[str, ...]:
    """``"both"`` -> ``("en", "zh")``; ``"en"``, ``"zh"`` (or ``"cn"``), or a list of them, in that order."""
    items = [value] if isinstance(value, str) else list(value)
    out: set[str] = set()
    for item in items:
        if isinstance(item, str) and item.strip().lower() == "both":
            out |= {"en", "zh"}
            continue
        try:
            out.add(str(parse_lang(item)))
        except FinegrainError:
            raise FinegrainError(f"unknown language {item!r} for zero-answer queries",
                                 f"use one of {', '.join(LANG_CHOICES)}") from None
    if not out:
        raise FinegrainError("no language given for zero-answer queries", f"use one of {', '.join(LANG_CHOICES)}")
    return tuple(code for code in ("en", "zh") if code in out)


def check_count(n: object) -> int:
    """``n`` when it is a positive number of queries, else an error saying so."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise FinegrainError(f"n must be a positive number of zero-answer queries, got {n!r}", "e.g. --n 100")
    return n


def make_zero_answer(
    store_or_catalog: CatalogStore | str | PathLike[str] | Mapping[str, CatalogStore | str | PathLike[str]],
    queries: Iterable[PhotoQuery],
    n: int = 100,
    seed: int = 0,
    *,
    langs: str | Sequence[str] = ("en", "zh"),
) -> tuple[ZeroAnswerQuery, ...]:
    """``n`` groups of zero-answer queries (one query per language of ``langs``) made from the
    answerable ``queries`` of the album in ``store_or_catalog`` (see the module docstring).

    ``store_or_catalog``: a catalog store or file, or ``{lang: store or file}`` when the
    languages' people names live in different catalogs (as ``album import-photobench
    --lang`` makes them). The same ``seed`` gives the same queries. Asking for more than
    can be proven is an error that says how many can.
    """
    check_count(n)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise FinegrainError(f"seed must be an integer, got {seed!r}", "e.g. --seed 1")
    codes = parse_langs(langs)
    sources_in = _check_queries(queries)
    with ExitStack() as stack:
        contexts = {code: SearchContext(store, vocab=vocabulary_from_catalog(store))
                    for code, store in _stores(store_or_catalog, codes, stack).items()}
        sources = [s for q in sources_in if (s := source_of(q, contexts)) is not None]
        pool = constraint_pool(contexts)
        candidates = [(s, c) for s in sources for c in pool if fits(s, c)]
        if n > len(candidates):  # each candidate's text still has to be read back: at most this many
            raise FinegrainError(
                f"at most {len(candidates)} zero-answer queries can be proven from the {len(sources)} answerable "
                f"queries of the album, not {n}",
                f"ask for --n {len(candidates)} or fewer" if candidates
                else "give an album with answerable metadata or face queries")
        chosen = _select(candidates, n, seed, contexts)
    if len(chosen) < n:
        raise FinegrainError(
            f"only {len(chosen)} zero-answer queries can be proven from the {len(sources)} answerable queries "
            f"of the album, not {n} (the planner does not read the injected constraint in "
            f"{len(candidates) - len(chosen)} of the {len(candidates)} candidate texts)",
            f"ask for --n {len(chosen)} or fewer" if chosen else "give an album with answerable metadata or face queries",
        )
    out = []
    for i, (source, c, texts) in enumerate(chosen, 1):
        group = f"za{i:04d}"
        for code in codes:
            text, phrase = texts[code]
            proof = Proof(source.parts[code], len(source.own[code]), f"{c.kind} {c.value}", len(c.ids),
                          len(source.own[code] & c.ids), c.nearest_km)
            out.append(ZeroAnswerQuery(f"{group}-{code}", group, text, code, source.query.id, source.plans[code].query,
                                       source.query.source, Injection(c.kind, c.value, phrase), proof))
    return tuple(out)


def zero_answer_document(queries: Sequence[ZeroAnswerQuery], provenance: Mapping[str, Any]) -> dict[str, Any]:
    """The query file: ``{"queries": [...], "provenance": {...}}`` (``album eval --queries`` reads it)."""
    kinds = Counter(q.injected.kind for q in queries)
    prov = {**provenance, "n_queries": len(queries), "kinds": {k: kinds[k] for k in KINDS if kinds[k]}}
    return {"queries": [q.to_dict() for q in queries], "provenance": prov}


def write_zero_answer(path: str | PathLike[str], queries: Sequence[ZeroAnswerQuery], provenance: Mapping[str, Any]) -> None:
    """Write :func:`zero_answer_document` as UTF-8 JSON to ``path`` (parent folders created)."""
    with open_text_write(path) as f:
        f.write(json.dumps(zero_answer_document(queries, provenance), ensure_ascii=False, indent=2) + "\n")


# --------------------------------------------------------------------------- inputs


def _check_queries(queries: Iterable[PhotoQuery]) -> list[PhotoQuery]:
    out: list[PhotoQuery] = []
    seen: set[str] = set()
    for q in queries:
        if not isinstance(q, PhotoQuery):
            raise FinegrainError(f"zero-answer sources must be PhotoBench queries, got {type(q).__name__} {q!r:.60}",
                                 "pass read_album(DIR).queries")
        if q.id in seen:
            raise FinegrainError(f"query id {q.id!r} is given twice", "pass each source query once")
        seen.add(q.id)
        out.append(q)
    return sorted(out, key=lambda q: q.id)


def _stores(given: Any, codes: tuple[str, ...], stack: ExitStack) -> dict[str, CatalogStore]:
    def opened(item: Any) -> CatalogStore:
        if isinstance(item, CatalogStore):
            return item
        if isinstance(item, str | PathLike):
            return stack.enter_context(closing(open_catalog(item, create=False)))
        raise FinegrainError(f"{item!r:.60} is not a catalog store or file", "pass a CatalogStore, a catalog path or a postgresql:// URL")

    if isinstance(given, Mapping):
        by_lang = {str(parse_lang(k)): v for k, v in given.items()}
        missing = [c for c in codes if c not in by_lang]
        if missing:
            raise FinegrainError(f"no catalog given for language {', '.join(missing)}",
                                 f"pass {{lang: catalog}} for each of {', '.join(codes)}")
        stores = {c: opened(by_lang[c]) for c in codes}
        ids = {c: st.photo_ids() for c, st in stores.items()}
        if len({tuple(sorted(v)) for v in ids.values()}) > 1:
            sizes = ", ".join(f"{c}: {len(v)}" for c, v in ids.items())
            raise FinegrainError(f"the catalogs given per language hold different photos ({sizes})",
                                 "import the same album into each (album import-photobench DIR --lang ...)")
        return stores
    store = opened(given)
    return dict.fromkeys(codes, store)


# --------------------------------------------------------------------------- candidates and selection


def _realise(source: Source, c: Constraint, code: str, ctx: SearchContext) -> tuple[str, str] | None:
    """The new text and the inserted phrase in language ``code``, when the planner reads ``c`` from it."""
    plan = source.plans[code]
    words = c.words_in(code)
    if words is None:
        return None
    text, phrase = inject(plan.query, ROLES[c.kind], words, code, plan.people)
    return (text, phrase) if c.read_by(plan_query(text, ctx.vocab, lang=code)) else None


def _select(
    candidates: list[tuple[Source, Constraint]], n: int, seed: int, contexts: Mapping[str, SearchContext]
) -> list[tuple[Source, Constraint, dict[str, tuple[str, str]]]]:
    rng = random.Random(seed)
    queues: dict[str, list[tuple[Source, Constraint]]] = {}
    for kind in KINDS:
        items = [sc for sc in candidates if sc[1].kind == kind]
        rng.shuffle(items)
        queues[kind] = items
    uses: Counter[str] = Counter()
    chosen: list[tuple[Source, Constraint, dict[str, tuple[str, str]]]] = []
    cap = 1
    while len(chosen) < n and any(queues.values()):
        progressed = False
        for kind in KINDS:
            queue = queues[kind]
            i = 0
            while len(chosen) < n and i < len(queue):
                source, c = queue[i]
                if uses[source.query.id] >= cap:
                    i += 1
                    continue
                del queue[i]
                texts = {code: t for code, ctx in contexts.items() if (t := _realise(source, c, code, ctx))}
                if len(texts) == len(contexts):
                    chosen.append((source, c, texts))
                    uses[source.query.id] += 1
                    progressed = True
                    break
        if not progressed:
            cap += 1
    return chosen
