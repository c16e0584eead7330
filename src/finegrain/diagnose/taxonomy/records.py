"""Records of the error taxonomy: the tags, one tagged :class:`Failure`, the :class:`Taxonomy` of a run.

:meth:`Taxonomy.to_json_dict` is the ``"taxonomy"`` section of ``results.json``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any

from finegrain.evaluate.groups import (
    UNTYPED as UNTYPED,  # re-exported: the one group rule
)
from finegrain.evaluate.groups import group_of, order_groups
from finegrain.lexicons.zh_lexicon import zh_lexicon

SCHEMA = "finegrain.taxonomy/1"
_EXAMPLE_CHARS = 300

# tag -> (description, share in DuReader-retrieval's manual analysis of 500 pairs, Table 9; None: not a row of it)
TAGS: Mapping[str, tuple[str, float | None]] = MappingProxyType({
    "suspected_false_negative": ("the wrong passage was never judged and holds every query term: likely relevant, "
                                 "a false negative of the qrels (judge it: finegrain triage)", 0.148),
    "taxonomy_miss": ("the relevant passage names a member or hyponym of a query category (海鲜 -> 螃蟹, fruit -> "
                      "watermelon), not the category: CapRetrieval Sec. 3 'taxonomy knowledge' (not in DuReader's "
                      "table)", None),
    "entity_mismatch": ("the main entity of the query is replaced by a different one in the wrong passage", 0.39),
    "numerical_mismatch": ("a number, date or quantity of the query differs in the wrong passage", 0.05),
    "modifier_mismatch": ("the head is shared but a modifier of the query differs or is missing", 0.094),
    "syntax_mismatch": ("the same terms in another role or order (A bites B vs B bites A)", 0.01),
    "typo": ("a query word is a likely misspelling of a corpus word", 0.016),
    "term_over_sensitivity": ("the wrong passage shares surface terms but not the meaning", 0.21),
    "other": ("no rule fired", 0.082),
})


@dataclass(frozen=True)
class Failure:
    """One failed query with its tag, the rule that fired and the tokens it rests on."""

    qid: str
    query: str
    type: str | None
    kind: str  # "miss" (no relevant item in the top k) | "outranked" | "empty" (nothing retrieved)
    tag: str
    rule: str
    evidence: tuple[str, ...]
    also: tuple[str, ...]  # other tags whose rules fire too (later in the order)
    wrong_id: str | None
    wrong_rank: int | None
    wrong_grade: int | None
    relevant_id: str
    relevant_rank: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "kind": self.kind, "tag": self.tag, "rule": self.rule,
                "evidence": list(self.evidence), "also": list(self.also), "wrong_id": self.wrong_id,
                "wrong_rank": self.wrong_rank, "wrong_grade": self.wrong_grade, "relevant_id": self.relevant_id,
                "relevant_rank": self.relevant_rank}


@dataclass(frozen=True, eq=False)
class Taxonomy:
    """Tagged failures of a run; proportions are over failures (every failure has exactly one tag)."""

    lang: str
    k: int
    rel: int
    types: Mapping[str, str | None]  # analysed query (with a relevant item) -> its type
    failures: tuple[Failure, ...]
    skipped_no_relevant: tuple[str, ...]
    texts: Mapping[str, str]  # doc id -> text, for the examples' passages

    @property
    def n_queries(self) -> int:
        return len(self.types)

    @cached_property
    def by_qid(self) -> Mapping[str, Failure]:
        return MappingProxyType({f.qid: f for f in self.failures})

    def counts(self, failures: tuple[Failure, ...] | None = None) -> dict[str, int]:
        c = Counter(f.tag for f in (self.failures if failures is None else failures))
        return {t: c.get(t, 0) for t in TAGS}

    def proportions(self, failures: tuple[Failure, ...] | None = None) -> dict[str, float | None]:
        """Share of each tag among the failures (None for every tag when there is no failure)."""
        c = self.counts(failures)
        n = sum(c.values())
        return {t: (v / n if n else None) for t, v in c.items()}

    def by_type(self) -> dict[str, dict[str, Any]]:
        """``{type: {n_queries, n_failures, counts, proportions}}``, types sorted, ``"untyped"`` last."""
        n_q = Counter(group_of(t) for t in self.types.values())
        groups: dict[str, list[Failure]] = {}
        for f in self.failures:
            groups.setdefault(group_of(f.type), []).append(f)
        names = order_groups(set(n_q) | set(groups))
        return {g: {"n_queries": n_q.get(g, 0), "n_failures": len(groups.get(g, ())),
                    "counts": self.counts(tuple(groups.get(g, ()))),
                    "proportions": self.proportions(tuple(groups.get(g, ())))} for g in names}

    def to_json_dict(self, *, max_examples: int = 5, per_query: bool = True) -> dict[str, Any]:
        """The ``"taxonomy"`` section of ``results.json`` (schema ``finegrain.taxonomy/1``): counts and
        proportions per tag, overall and per query type, the first ``max_examples`` failures of each tag
        (query order) with both passages' texts, and (``per_query``) every failure's tag, rule and evidence."""
        def clip(doc_id: str | None) -> str:
            text = self.texts.get(doc_id or "", "")
            return text if len(text) <= _EXAMPLE_CHARS else text[:_EXAMPLE_CHARS - 1] + "…"

        examples: dict[str, list[dict[str, Any]]] = {t: [] for t in TAGS}
        for f in self.failures:
            if len(examples[f.tag]) < max_examples:
                examples[f.tag].append({"qid": f.qid, "query": f.query, **f.to_dict(), "wrong_text": clip(f.wrong_id),
                                        "relevant_text": clip(f.relevant_id)})
        kinds = Counter(f.kind for f in self.failures)
        body: dict[str, Any] = {
            "schema": SCHEMA, "k": self.k, "rel": self.rel, "lang": self.lang,
            "tags": {t: {"description": d, "dureader_share": s} for t, (d, s) in TAGS.items()},
            "order": list(RULE_ORDER),
            "method": method_notes(self.lang),
            "n_queries": self.n_queries,
            "n_failures": len(self.failures),
            "n_skipped_no_relevant": len(self.skipped_no_relevant),
            "failure_kinds": {k: kinds.get(k, 0) for k in ("miss", "outranked", "empty")},
            "counts": self.counts(),
            "proportions": self.proportions(),
            "by_type": self.by_type(),
            "examples": examples,
        }
        if per_query:
            body["per_query"] = {f.qid: f.to_dict() for f in self.failures}
        return body


RULE_ORDER = ("typo", "numerical_mismatch", "syntax_mismatch", "suspected_false_negative", "taxonomy_miss",
              "entity_mismatch (named)", "modifier_mismatch", "entity_mismatch (head)", "term_over_sensitivity",
              "other")


def method_notes(lang: str) -> dict[str, str]:
    return {
        "failure": "the first-ranked item is not relevant (miss: no relevant item in the top k; outranked: the "
                   "first relevant item is lower); compared: the query, that wrong passage and the highest-ranked "
                   "relevant passage",
        "order": "first rule that fires: " + ", ".join(RULE_ORDER),
        "words": ("jieba part-of-speech words; presence = substring of the passage" if lang == "zh" else
                  "\\w words, Porter stems, suffix and case rules; presence = stem among the passage's stems"),
        "lexicons": "built-in modifier classes (colour, size, age, shape, material, state, time, quantity, "
                    "position), number words, common verbs; typo by edit distance over the corpus vocabulary"
                    + (" and same toneless pinyin (pypinyin)" if lang == "zh" else ""),
        "taxonomy": ("taxonomy_miss: a query word (or two adjacent ones) absent from the relevant passage, which "
                     "names a member of it from "
                     + (zh_lexicon().note if lang == "zh" else
                        "WordNet 3.0's hyponym closure of its 3 most frequent noun senses")),
        "proportions": "over failed queries; one tag per failure",
        "false negatives": "suspected_false_negative needs an unjudged wrong passage (not fully judged qrels) that "
                           "holds every query term; a relevant passage in other words (DuReader's 14.8%, Table 9) "
                           "is not detected here: 'finegrain triage' ranks such candidates with more evidence",
    }
