"""Error analysis: the false negatives and false positives of a run in its top k, tagged by cause.

Follows the error analysis of the CapRetrieval paper (Xu et al., 2025, Sec. 3,
"False Negatives" / "False Positives") and the "term over-sensitivity" of
DuReader-retrieval (Qiu et al., 2022, Sec. 3.6), with rules simple enough to
run on every query:

For each query with at least one relevant item (grade >= ``rel``; queries
without one are skipped and counted, as ranking metrics skip them):

- a **false negative** is a relevant item not in the top ``k``, tagged

  - ``literal_miss``: the passage contains the query text verbatim, or every
    query term -- lexical matching would have found it (the paper's
    "literal error");
  - ``semantic_miss``: the rest (paraphrase, taxonomy, commonsense);

- a **false positive** is an item of the top ``k`` with grade < ``rel``
  (judged irrelevant, or unjudged: ``grade`` None), tagged, first rule that fires:

  - ``partial_condition``: the query has several parts and the passage
    matches some of them but not all ("purple flower" -> "purple butterflies");
  - ``over_generalization``: the passage shares query terms (or contains all
    parts / the whole query) yet is not relevant ("term over-sensitivity");
  - ``no_overlap``: the passage shares no query term (a purely semantic false
    positive).

Terms and parts
    Query terms are the tokens of :func:`finegrain.text.get_tokenizer`
    for ``lang``, without stop words and punctuation: for ``zh`` jieba precise
    mode (and, for sharing, also jieba's search-mode sub-words, so 火车票 shares
    火车 with a passage about 火车站); for ``en`` lower-cased ``\\w+`` words,
    English stop words removed, Porter stems. A ``zh`` term is present in a
    passage when it occurs in its normalised text with whitespace removed (a
    substring: 白猫 is in 小白猫); an ``en`` term when its stem is one of the
    passage's stems. The query is found verbatim when its normalised text
    (``zh``: without whitespace) occurs in the passage's (``en``: at word
    boundaries).

    Parts: the query is split on whitespace (``zh``), on separators
    ``、，,;；/&+`` and on conjunctions (``zh`` tokens 和 与 及 以及 跟 同 或
    或者 还有 并且; ``en`` words and, with, or, plus); when that yields one
    part, every query term is a part ("紫色的花" -> 紫色 | 花). A part matches a
    passage when it occurs verbatim or all its terms are present.

The result is frozen and pure data: :meth:`ErrorAnalysis.to_json_dict` is
what ``results.json`` stores under ``"errors"``, with a few examples per tag
(query, passage id and text), so reports need nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any, Literal

from finegrain.errors import FinegrainError
from finegrain.evaluate.groups import group_of, order_groups  # the one group rule
from finegrain.text import WORD, EnglishTokenizer, get_tokenizer, normalize
from finegrain.text.stopwords import ZH_STOPWORDS
from finegrain.types import Corpus, Qrels, Queries, Run

SCHEMA = "finegrain.errors/1"

Kind = Literal["fn", "fp"]

TAGS: Mapping[str, tuple[Kind, str]] = MappingProxyType({
    "literal_miss": ("fn", "a missed relevant passage contains the query text, or all its terms, verbatim"),
    "semantic_miss": ("fn", "a missed relevant passage contains neither the query text nor all its terms"),
    "partial_condition": ("fp", "a retrieved irrelevant passage matches only some parts of a multi-part query"),
    "over_generalization": ("fp", "a retrieved irrelevant passage shares query terms but is not relevant"),
    "no_overlap": ("fp", "a retrieved irrelevant passage shares no query term"),
})

ZH_CONJUNCTIONS = frozenset("和 与 及 以及 跟 同 或 或者 还有 并且".split())
EN_CONJUNCTIONS = frozenset("and with or plus".split())
_SEPARATORS = re.compile(r"[、，,;；/&+]")
_EN_SPLIT = re.compile(r"\s*(?:[、，,;；/&+]|\b(?:" + "|".join(sorted(EN_CONJUNCTIONS)) + r")\b)\s*", re.IGNORECASE)
_WORDLIKE = re.compile(r"\w")
_EXAMPLE_CHARS = 400


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class ErrorItem:
    """One false negative (``kind="fn"``) or false positive (``"fp"``) of one query.

    ``rank``: 1-based rank in the run (None: not retrieved at all); ``grade``:
    the qrels grade (None: unjudged); ``matched``: the query terms or parts found
    in the passage that the rule refers to, as the query writes them (``Ranges``,
    not the stem ``rang``); ``stems``: the keys they were matched by (``en``
    Porter stems), when those differ from ``matched``.
    """

    doc_id: str
    kind: Kind
    tag: str
    rule: str
    matched: tuple[str, ...]
    rank: int | None
    grade: int | None
    stems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = {"doc_id": self.doc_id, "tag": self.tag, "rule": self.rule, "matched": list(self.matched),
               "rank": self.rank, "grade": self.grade}
        if self.stems:
            out["stems"] = list(self.stems)
        return out


@dataclass(frozen=True)
class QueryErrors:
    """The errors of one query in the top k."""

    qid: str
    text: str
    type: str | None
    terms: tuple[str, ...]
    parts: tuple[str, ...]
    n_relevant: int
    false_negatives: tuple[ErrorItem, ...]
    false_positives: tuple[ErrorItem, ...]
    words: tuple[str, ...] = ()  # ``terms`` as the query writes them (en: the first word of each stem)

    @property
    def items(self) -> tuple[ErrorItem, ...]:
        return self.false_negatives + self.false_positives


@dataclass(frozen=True)
class Example:
    """A query and one passage illustrating a tag (kept with texts for reports)."""

    tag: str
    qid: str
    query: str
    type: str | None
    doc_id: str
    text: str
    rule: str
    matched: tuple[str, ...]
    rank: int | None
    grade: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"qid": self.qid, "query": self.query, "type": self.type, "doc_id": self.doc_id, "text": self.text,
                "rule": self.rule, "matched": list(self.matched), "rank": self.rank, "grade": self.grade}


@dataclass(frozen=True, eq=False)
class ErrorAnalysis:
    """Tagged errors of every analysed query, with examples per tag; see the module docstring."""

    lang: str
    k: int
    rel: int
    queries: tuple[QueryErrors, ...]
    examples: Mapping[str, tuple[Example, ...]]
    skipped_no_relevant: tuple[str, ...]

    def __getitem__(self, qid: str) -> QueryErrors:
        try:
            return self._by_qid[qid]
        except KeyError:
            raise KeyError(qid) from None

    @cached_property
    def _by_qid(self) -> Mapping[str, QueryErrors]:
        return MappingProxyType({q.qid: q for q in self.queries})

    def counts(self, qids: Iterable[str] | None = None) -> dict[str, dict[str, int]]:
        """``{tag: {"items": errors with the tag, "queries": queries with at least one}}`` (all tags)."""
        pool = self.queries if qids is None else tuple(self._by_qid[q] for q in qids if q in self._by_qid)
        out = {t: {"items": 0, "queries": 0} for t in TAGS}
        for q in pool:
            seen = set()
            for it in q.items:
                out[it.tag]["items"] += 1
                seen.add(it.tag)
            for t in seen:
                out[t]["queries"] += 1
        return out

    def counts_by_type(self) -> dict[str, dict[str, Any]]:
        """``{type: {"n_queries": n, "counts": counts()}}``, types sorted, ``"untyped"`` last."""
        groups: dict[str, list[str]] = {}
        for q in self.queries:
            groups.setdefault(group_of(q.type), []).append(q.qid)
        names = order_groups(groups)
        return {g: {"n_queries": len(groups[g]), "counts": self.counts(groups[g])} for g in names}

    def to_json_dict(self, max_examples_per_tag: int = 5, *, per_query: bool = True) -> dict[str, Any]:
        """JSON-able summary (schema ``finegrain.errors/1``); ``per_query`` adds every query's tagged items."""
        n_fn = sum(len(q.false_negatives) for q in self.queries)
        n_fp = sum(len(q.false_positives) for q in self.queries)
        body: dict[str, Any] = {
            "schema": SCHEMA,
            "k": self.k,
            "rel": self.rel,
            "lang": self.lang,
            "tags": {t: {"kind": kind, "description": desc} for t, (kind, desc) in TAGS.items()},
            "method": method_notes(self.lang),
            "n_queries": len(self.queries),
            "n_skipped_no_relevant": len(self.skipped_no_relevant),
            "totals": {
                "false_negatives": n_fn,
                "false_positives": n_fp,
                "unjudged_false_positives": sum(1 for q in self.queries for it in q.false_positives
                                                if it.grade is None),
            },
            "counts": self.counts(),
            "by_type": self.counts_by_type(),
            "examples": {t: [e.to_dict() for e in self.examples.get(t, ())[:max(0, max_examples_per_tag)]]
                         for t in TAGS},
        }
        if per_query:
            body["per_query"] = {
                q.qid: {"type": q.type, "terms": list(q.words or q.terms),
                        **({"stems": list(q.terms)} if q.words and q.words != q.terms else {}),
                        "parts": list(q.parts), "n_relevant": q.n_relevant,
                        "false_negatives": [i.to_dict() for i in q.false_negatives],
                        "false_positives": [i.to_dict() for i in q.false_positives]}
                for q in self.queries
            }
        return body


def method_notes(lang: str) -> dict[str, str]:
    terms = ("jieba precise-mode tokens (plus search-mode sub-words for sharing), stop words and punctuation "
             "removed; present = substring of the passage's normalised text without whitespace"
             if lang == "zh" else
             "lower-cased \\w+ words, English stop words removed, Porter stems; present = stem among the "
             "passage's stems")
    return {
        "terms": terms,
        "parts": "split on whitespace (zh), separators 、，,;；/&+ and conjunctions (和 与 及 以及 跟 同 或 或者 还有 并且 / "
                 "and with or plus); a single part falls back to one part per term",
        "fp_precedence": "partial_condition, then over_generalization, then no_overlap",
        "skipped": "queries with no item of grade >= rel",
    }


# --------------------------------------------------------------------------- text matching


@dataclass(frozen=True)
class _QueryView:
    text: str  # normalised; zh: without whitespace
    terms: tuple[str, ...]  # content terms (zh tokens / en stems)
    share_terms: tuple[str, ...]  # terms + (zh) search-mode sub-words
    parts: tuple[tuple[str, tuple[str, ...]], ...]  # (display text, terms)
    surface: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # term -> the query's word as written (en: stem -> word)

    def show(self, terms: Iterable[str]) -> tuple[str, ...]:
        """Terms as the query writes them (a term without a written form as is)."""
        return tuple(self.surface.get(t, t) for t in terms)


class _Matcher:
    """Query and passage views for one language (tokenizers built once)."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self._normalize = normalize
        tok = get_tokenizer(lang)
        if isinstance(tok, EnglishTokenizer):
            tok = tok.with_stopwords("en")
        self.tok = tok
        self._doc_cache: dict[str, Any] = {}

    # -- query side --------------------------------------------------------------

    def query(self, text: str) -> _QueryView:
        norm = self._normalize(text)
        if self.lang == "zh":
            return self._zh_query(norm)
        return self._en_query(norm, text)

    def _zh_content(self, tokens: Iterable[str]) -> list[str]:
        return [t for t in tokens if _WORDLIKE.search(t) and t not in ZH_STOPWORDS]

    def _zh_query(self, norm: str) -> _QueryView:
        groups: list[list[str]] = []
        for chunk in _SEPARATORS.split(norm):
            for piece in chunk.split():
                current: list[str] = []
                for t in self.tok.queries([piece])[0]:
                    if t in ZH_CONJUNCTIONS:
                        groups.append(current)
                        current = []
                    else:
                        current.append(t)
                groups.append(current)
        parts = [("".join(g), tuple(_unique(self._zh_content(g)))) for g in groups]
        parts = [p for p in parts if p[1]]
        terms = tuple(_unique(t for _, ts in parts for t in ts))
        if len(parts) < 2 and len(terms) >= 2:
            parts = [(t, (t,)) for t in terms]
        subwords = self._zh_content(self.tok.documents([norm])[0])
        compact = "".join(norm.split())
        return _QueryView(compact, terms, tuple(_unique([*terms, *subwords])), tuple(parts))

    def _en_words(self, text: str) -> list[tuple[str, str]]:
        """``(word, stem)`` for the content words of ``text`` (stop words dropped)."""
        out = []
        for w in WORD.findall(text):
            stems = self.tok.queries([w])[0]
            if stems:
                out.append((w, stems[0]))
        return out

    def _en_query(self, norm: str, written: str) -> _QueryView:
        parts = []
        for chunk in _EN_SPLIT.split(norm):
            words = self._en_words(chunk)
            if words:
                parts.append((chunk.strip(), tuple(_unique(s for _, s in words))))
        words = self._en_words(norm)
        terms = tuple(_unique(s for _, s in words))
        surface: dict[str, str] = {}
        for w, s in self._en_words(written):  # the words as written (case kept), by stem
            surface.setdefault(s, w)
        for w, s in words:
            surface.setdefault(s, w)
        if len(parts) < 2 and len(terms) >= 2:
            parts = [(surface[s], (s,)) for s in terms]
        return _QueryView(norm, terms, terms, tuple(parts), MappingProxyType(surface))

    # -- passage side ------------------------------------------------------------

    def passage(self, doc_id: str, text: str) -> Any:
        cached = self._doc_cache.get(doc_id)
        if cached is None:
            norm = self._normalize(text)
            if self.lang == "zh":
                cached = "".join(norm.split())
            else:
                cached = (norm, frozenset(self.tok.documents([norm])[0]))
            self._doc_cache[doc_id] = cached
        return cached

    def has_term(self, passage: Any, term: str) -> bool:
        return term in passage if self.lang == "zh" else term in passage[1]

    def verbatim(self, passage: Any, text: str) -> bool:
        if not text:
            return False
        if self.lang == "zh":
            return text in passage
        return re.search(rf"(?<!\w){re.escape(text)}(?!\w)", passage[0]) is not None

    def part_matches(self, passage: Any, part: tuple[str, tuple[str, ...]]) -> bool:
        text, terms = part
        compact = "".join(text.split()) if self.lang == "zh" else text
        return self.verbatim(passage, compact) or all(self.has_term(passage, t) for t in terms)


# --------------------------------------------------------------------------- tagging


def _tag_fn(m: _Matcher, q: _QueryView, passage: Any) -> tuple[str, str, tuple[str, ...]]:
    """``(tag, rule, matched keys)``; the rule names terms as the query writes them."""
    if m.verbatim(passage, q.text):
        return "literal_miss", "query text found verbatim", (q.text,)
    present = tuple(t for t in q.terms if m.has_term(passage, t))
    n = len(q.terms)
    if n and len(present) == n:
        rule = f"the query term {q.show(present)[0]} present" if n == 1 else f"all {n} query terms present"
        return "literal_miss", rule, present
    if not n:
        return "semantic_miss", "the query has no content term", ()
    if not present:
        return "semantic_miss", f"none of the {n} query terms present", ()
    return "semantic_miss", f"only {len(present)} of {n} query terms present: {' | '.join(q.show(present))}", present


def _tag_fp(m: _Matcher, q: _QueryView, passage: Any) -> tuple[str, str, tuple[str, ...]]:
    n_parts = len(q.parts)
    if n_parts >= 2:
        matched = [p for p in q.parts if m.part_matches(passage, p)]
        if 0 < len(matched) < n_parts:
            missing = [p[0] for p in q.parts if p not in matched]
            return ("partial_condition",
                    f"matches {len(matched)} of {n_parts} parts: {' | '.join(p[0] for p in matched)}"
                    f" (missing: {' | '.join(missing)})",
                    tuple(p[0] for p in matched))
        if matched:
            return ("over_generalization", f"contains all {n_parts} query parts but is not relevant",
                    tuple(p[0] for p in matched))
    if m.verbatim(passage, q.text):
        return "over_generalization", "contains the query text verbatim but is not relevant", (q.text,)
    shared = tuple(t for t in q.share_terms if m.has_term(passage, t))
    if shared:
        return "over_generalization", "shares terms {" + ", ".join(q.show(shared)) + "}", shared
    return "no_overlap", "shares no query term", ()


# --------------------------------------------------------------------------- the analysis


def check_run_inputs(corpus: Corpus, queries: Queries, qrels: Qrels, run: Run, k: int) -> None:
    """The inputs every failure analysis takes: finegrain's own types and a cutoff ``k >= 1``."""
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise FinegrainError(f"k must be a positive integer, got {k!r}", "e.g. k=10")
    for what, obj, cls in (("corpus", corpus, Corpus), ("queries", queries, Queries),
                           ("qrels", qrels, Qrels), ("run", run, Run)):
        if not isinstance(obj, cls):
            raise FinegrainError(f"{what} must be a finegrain {cls.__name__}, got {type(obj).__name__}",
                                 "load it with finegrain.datasets.load_dataset or the finegrain.io readers")


def analyse_errors(
    corpus: Corpus,
    queries: Queries,
    qrels: Qrels,
    run: Run,
    *,
    lang: str,
    k: int = 10,
    rel: int = 1,
    max_examples: int = 10,
    fully_judged: bool = False,
) -> ErrorAnalysis:
    """Tag the false negatives and false positives of ``run`` in its top ``k`` (see the module docstring).

    Every query of ``queries`` is analysed except those with no item of grade
    >= ``rel`` (listed in ``skipped_no_relevant``); a query missing from the
    run has an empty top k (all its relevant items are false negatives).
    False negatives are listed by grade (highest first) then document id;
    false positives by rank. A retrieved item absent from the query's qrels
    is a false positive with ``grade`` None (unjudged), or 0 when
    ``fully_judged`` (the dataset lists only its relevant items and every other
    pair is a judged 0, as ``Dataset.meta["fully_judged"]`` says). A document
    id absent from ``corpus`` is matched as an empty text. ``max_examples`` examples are kept per tag, taken
    round-robin over queries in query order (one item per query first).
    """
    check_run_inputs(corpus, queries, qrels, run, k)
    if max_examples < 0:
        raise FinegrainError(f"max_examples must be >= 0, got {max_examples!r}", "e.g. max_examples=10")
    m = _Matcher(lang)

    def passage(doc_id: str) -> Any:
        doc = corpus.get(doc_id)
        return m.passage(doc_id, "" if doc is None else doc.text)

    analysed: list[QueryErrors] = []
    skipped: list[str] = []
    for qid, query in queries.items():
        judged: Mapping[str, int] = qrels[qid] if qid in qrels else {}
        relevant = {d for d, g in judged.items() if g >= rel}
        if not relevant:
            skipped.append(qid)
            continue
        ranking = run.ranked(qid) if qid in run else []
        rank_of = {d: i + 1 for i, d in enumerate(ranking)}
        top = ranking[:k]
        view = m.query(query.text)
        fns = []
        for d in sorted(relevant - set(top), key=lambda d: (-int(judged[d]), d)):
            tag, rule, matched = _tag_fn(m, view, passage(d))
            shown, stems = _shown(view, matched)
            fns.append(ErrorItem(d, "fn", tag, rule, shown, rank_of.get(d), int(judged[d]), stems))
        fps = []
        for d in top:
            if d in relevant:
                continue
            tag, rule, matched = _tag_fp(m, view, passage(d))
            shown, stems = _shown(view, matched)
            grade = judged.get(d, 0 if fully_judged else None)
            fps.append(ErrorItem(d, "fp", tag, rule, shown, rank_of[d], None if grade is None else int(grade), stems))
        analysed.append(QueryErrors(qid, query.text, query.type, view.terms, tuple(p[0] for p in view.parts),
                                    len(relevant), tuple(fns), tuple(fps), view.show(view.terms)))
    examples = _examples(analysed, corpus, queries, max_examples)
    return ErrorAnalysis(lang, k, rel, tuple(analysed), examples, tuple(skipped))


def _examples(analysed: list[QueryErrors], corpus: Corpus, queries: Queries,
              max_examples: int) -> Mapping[str, tuple[Example, ...]]:
    out: dict[str, list[Example]] = {t: [] for t in TAGS}
    by_tag: dict[str, list[list[ErrorItem]]] = {t: [] for t in TAGS}
    for q in analysed:
        per: dict[str, list[ErrorItem]] = {}
        for it in q.items:
            per.setdefault(it.tag, []).append(it)
        for t, items in per.items():
            by_tag[t].append(items)
    owner = {id(it): q for q in analysed for it in q.items}
    for t, lists in by_tag.items():
        depth = 0
        while len(out[t]) < max_examples and any(depth < len(lst) for lst in lists):
            for lst in lists:
                if depth < len(lst) and len(out[t]) < max_examples:
                    it = lst[depth]
                    q = owner[id(it)]
                    doc = corpus.get(it.doc_id)
                    text = "" if doc is None else doc.text
                    if len(text) > _EXAMPLE_CHARS:
                        text = text[:_EXAMPLE_CHARS - 1] + "…"
                    out[t].append(Example(t, q.qid, q.text, q.type, it.doc_id, text, it.rule, it.matched,
                                          it.rank, it.grade))
            depth += 1
    return MappingProxyType({t: tuple(v) for t, v in out.items()})


def _shown(view: _QueryView, matched: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(matched as the query writes it, the matching keys when they differ, else ())``."""
    shown = view.show(matched)
    return shown, (matched if shown != matched else ())


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
