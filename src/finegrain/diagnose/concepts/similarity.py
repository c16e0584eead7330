"""WordNet path similarity between synset names, cached.

``ps(a, b) = 1 / (1 + shortest hypernym-path length)`` (nltk's ``path_similarity``), in (0, 1] for
two nouns. nltk returns ``None`` when no path exists (e.g. a noun and an adjective); that counts
as 0 here: the concepts share nothing WordNet can measure.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from finegrain.lexicons.wordnet import wordnet


@lru_cache(maxsize=4096)
def synset(name: str) -> Any:
    """The nltk synset for ``name`` (cached; raises nltk's WordNetError when unknown)."""

    return wordnet().synset(name)


@lru_cache(maxsize=1 << 18)
def _path_similarity(a: str, b: str) -> float:
    value = synset(a).path_similarity(synset(b))
    return float(value) if value is not None else 0.0


def path_similarity(a: str, b: str) -> float:
    """Symmetric, cached WordNet path similarity of two synset names (0 when there is no path)."""
    return _path_similarity(a, b) if a <= b else _path_similarity(b, a)
