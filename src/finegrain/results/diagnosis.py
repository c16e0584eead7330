"""The diagnosis sections of ``results.json``: the error analysis and the error taxonomy, typed.

``"errors"`` (:class:`ErrorsSection`, schema ``finegrain.errors/1``) is what
:meth:`finegrain.diagnose.errors.ErrorAnalysis.to_json_dict` writes: each
query's false negatives and false positives in the top ``k`` tagged literal,
semantic, partial, ...; ``"taxonomy"`` (:class:`TaxonomySection`, schema
``finegrain.taxonomy/1``) what
:meth:`finegrain.diagnose.taxonomy.Taxonomy.to_json_dict` writes: each failed
query with one error type after DuReader-retrieval's Table 9. Either may be
*skipped* (``{"schema", "skipped": reason}``: an empty run, a language without
a tagger, a failed analysis), which :attr:`skipped` says; the counts are then
empty. Both are validated when ``results.json`` is read (see
:mod:`finegrain.results.schema`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from finegrain.results.schema import Count, Int, Saved, Share, Text

ERRORS_SCHEMA = "finegrain.errors/1"
TAXONOMY_SCHEMA = "finegrain.taxonomy/1"


# --------------------------------------------------------------------------- error analysis


class ErrorTag(Saved):
    """What a tag of the error analysis means: ``kind`` ``"fn"`` (false negative) or ``"fp"``."""

    kind: Text = ""
    description: Text = ""


class TagCount(Saved):
    """Error items with a tag, and the queries with at least one."""

    items: Count = 0
    queries: Count = 0


class TypeCounts(Saved):
    n_queries: Count = 0
    counts: dict[Text, TagCount] = {}


class ErrorTotals(Saved):
    false_negatives: Count = 0
    false_positives: Count = 0
    unjudged_false_positives: Count = 0


class TaggedItem(Saved):
    """One false negative or false positive of one query (rank None: not retrieved; grade None: unjudged)."""

    doc_id: Text
    tag: Text = ""
    rule: Text = ""
    matched: tuple[Text, ...] = ()
    rank: Count | None = None
    grade: Int | None = None


class ErrorExample(TaggedItem):
    """A tagged item with its query and passage text, kept for reports."""

    qid: Text = ""
    query: Text = ""
    type: Text | None = None
    text: Text = ""


class QueryErrorsRecord(Saved):
    """Every tagged item of one query."""

    type: Text | None = None
    terms: tuple[Text, ...] = ()
    parts: tuple[Text, ...] = ()
    n_relevant: Count = 0
    false_negatives: tuple[TaggedItem, ...] = ()
    false_positives: tuple[TaggedItem, ...] = ()


class ErrorsSection(Saved):
    """The ``"errors"`` section; see the module docstring."""

    schema_: Literal["finegrain.errors/1"] = Field(alias="schema")
    skipped: Text | None = None
    k: Count | None = None
    rel: Int | None = None
    lang: Text | None = None
    tags: dict[Text, ErrorTag] = {}
    method: dict[Text, Text] = {}
    n_queries: Count = 0
    n_skipped_no_relevant: Count = 0
    totals: ErrorTotals = ErrorTotals()
    counts: dict[Text, TagCount] = {}
    by_type: dict[Text, TypeCounts] = {}
    examples: dict[Text, tuple[ErrorExample, ...]] = {}
    per_query: dict[Text, QueryErrorsRecord] = {}

    @property
    def analysed(self) -> bool:
        """True when the analysis ran (it has counts); False when it was skipped or not saved whole."""
        return self.skipped is None and bool(self.counts)

    @property
    def tag_names(self) -> list[str]:
        return list(self.tags) or list(self.counts)


# --------------------------------------------------------------------------- error taxonomy


class TaxonomyTag(Saved):
    """What a taxonomy tag means, and its share in DuReader-retrieval's manual analysis (None: not a row of it)."""

    description: Text = ""
    dureader_share: Share | None = None


class TypeShares(Saved):
    n_queries: Count = 0
    n_failures: Count = 0
    counts: dict[Text, Count] = {}
    proportions: dict[Text, Share | None] = {}


class Failure(Saved):
    """One failed query: its tag, the rule that fired, the wrong and the relevant passage."""

    type: Text | None = None
    kind: Text = ""
    tag: Text = ""
    rule: Text = ""
    evidence: tuple[Text, ...] = ()
    also: tuple[Text, ...] = ()
    wrong_id: Text | None = None
    wrong_rank: Count | None = None
    wrong_grade: Int | None = None
    relevant_id: Text = ""
    relevant_rank: Count | None = None


class FailureExample(Failure):
    """A failure with its query and both passages' texts, kept for reports."""

    qid: Text = ""
    query: Text = ""
    wrong_text: Text = ""
    relevant_text: Text = ""


class TaxonomySection(Saved):
    """The ``"taxonomy"`` section; see the module docstring."""

    schema_: Literal["finegrain.taxonomy/1"] = Field(alias="schema")
    skipped: Text | None = None
    k: Count | None = None
    rel: Int | None = None
    lang: Text | None = None
    tags: dict[Text, TaxonomyTag] = {}
    order: tuple[Text, ...] = ()
    method: dict[Text, Text] = {}
    n_queries: Count = 0
    n_failures: Count = 0
    n_skipped_no_relevant: Count = 0
    failure_kinds: dict[Text, Count] = {}
    counts: dict[Text, Count] = {}
    proportions: dict[Text, Share | None] = {}
    by_type: dict[Text, TypeShares] = {}
    examples: dict[Text, tuple[FailureExample, ...]] = {}
    per_query: dict[Text, Failure] = {}

    @property
    def analysed(self) -> bool:
        """True when the taxonomy ran (it has counts); False when it was skipped or not saved whole."""
        return self.skipped is None and bool(self.counts)

    @property
    def tag_names(self) -> list[str]:
        return list(self.tags) or list(self.counts)


__all__ = [
    "ERRORS_SCHEMA", "TAXONOMY_SCHEMA", "ErrorExample", "ErrorTag", "ErrorTotals", "ErrorsSection", "Failure",
    "FailureExample", "QueryErrorsRecord", "TagCount", "TaggedItem", "TaxonomySection", "TaxonomyTag", "TypeCounts",
    "TypeShares",
]
