"""Which concepts a query mentions: the basis of the query-informed variants.

A synset counts as mentioned when one of its WordNet lemma names occurs in the query: single
words directly or through WordNet's noun morphology (``zebras`` -> ``zebra``, ``geese`` ->
``goose``), multi-word lemmas (``hot_dog``, ``traffic_light``) as consecutive words. Only the
synset's own lemmas count, not hypernyms: a query saying "animal" does not mention ``dog.n.01``.
Single function words ("a", "in", "it", ...) are never concepts, though WordNet lists some as nouns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from finegrain.diagnose.concepts.similarity import synset
from finegrain.lexicons.wordnet import wordnet

_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_MAX_WORDS = 3  # longest multi-word lemma considered
# Function words that are also WordNet noun lemmas ("a" = vitamin A, "in" = inch, "it", "be", ...):
# never read as a concept on their own.
_STOPWORDS = frozenset(["a", "an", "the", "in", "on", "at", "of", "is", "are", "be", "it", "its", "i", "as", "or", "and", "to", "with", "by", "for", "from", "this", "that", "there", "he", "she", "we", "they", "his", "her", "their", "who", "are", "was", "were", "has", "have"])


@lru_cache(maxsize=16384)
def _noun_bases(word: str) -> tuple[str, ...]:
    wn = wordnet()
    forms = {word}
    try:
        forms.update(wn._morphy(word, "n"))  # all base forms, not only the first
    except AttributeError:  # pragma: no cover - an nltk without the private _morphy
        base = wn.morphy(word, "n")
        if base:
            forms.add(base)
    return tuple(sorted(forms))


@lru_cache(maxsize=4096)
def query_forms(query: str) -> frozenset[str]:
    """Lemma-name forms (lower case, ``_`` joining words) the query contains."""
    words = _WORD.findall(query.lower())
    out: set[str] = set()
    for n in range(1, _MAX_WORDS + 1):
        for k in range(len(words) - n + 1):
            head, last = words[k:k + n - 1], words[k + n - 1]
            if n == 1 and last in _STOPWORDS:
                continue
            for base in _noun_bases(last):
                out.add("_".join([*head, base]))
    return frozenset(out)


@lru_cache(maxsize=1 << 14)
def _lemma_names(name: str) -> tuple[str, ...]:
    return tuple(lemma.lower() for lemma in synset(name).lemma_names())


def mentioned(query: str, synsets: Iterable[str]) -> frozenset[str]:
    """The synsets among ``synsets`` that ``query`` mentions by one of their lemma names."""
    forms = query_forms(query)
    return frozenset(s for s in synsets if any(lemma in forms for lemma in _lemma_names(s)))
