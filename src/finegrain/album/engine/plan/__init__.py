"""Query planning for the personal album: a query (zh or en) -> a :class:`Plan` of constraints.

``plan_query(text, vocab)`` is the rule-based planner (explainable: ``plan.explain()``);
``plan_query_llm(text, vocab, config)`` asks an OpenAI-compatible endpoint and falls back
to the rules. ``AlbumVocabulary`` is the album knowledge both use.
"""

from finegrain.album.engine.plan.llm import LLMConfig, plan_query_llm
from finegrain.album.engine.plan.records import (
    SOURCE_TYPES,
    PersonMatch,
    PlaceKey,
    PlaceMatch,
    Plan,
    TimeRange,
    UnknownMention,
)
from finegrain.album.engine.plan.rules import plan_query
from finegrain.album.engine.plan.vocabulary import AlbumVocabulary
from finegrain.text.lang import detect_lang

__all__ = [
    "SOURCE_TYPES",
    "AlbumVocabulary",
    "LLMConfig",
    "PersonMatch",
    "PlaceKey",
    "PlaceMatch",
    "Plan",
    "TimeRange",
    "UnknownMention",
    "detect_lang",
    "plan_query",
    "plan_query_llm",
]
