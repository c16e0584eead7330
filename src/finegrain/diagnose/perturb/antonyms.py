"""Antonyms of the adjectives of a query: English from WordNet, Chinese from the built-in lexicon.

English (the paper, Sec. 5.1: "Antonyms are extracted via relevant WordNet
functions for any adjective present in a query. If more than one antonyms are
returned, one is randomly picked"): a word is an adjective of the query when
WordNet knows it as an adjective at least as often as a noun (sense counts of
``cntlist``; there is no POS tagger offline); its antonyms are the
``lemma.antonyms()`` of its own lemmas in its adjective synsets (head and
satellite), in WordNet order, without duplicates. Prepositions, particles and
ordinals (:data:`EN_STOP`) are left out.
"""

from __future__ import annotations

from functools import lru_cache

import finegrain.diagnose.perturb.zh_lexicon as zh_lexicon
from finegrain.diagnose.perturb.text import (
    Span,
    en_words,
    invert_pairs,
    longest_matches,
)
from finegrain.diagnose.perturb.text import word_list as _split
from finegrain.lexicons.wordnet import wordnet

# Closed-class words WordNet also lists as adjectives ("on" -> "off", "first" -> "second"):
# prepositions, particles and ordinals are not the salient attributes the paper reverses.
EN_STOP: frozenset[str] = frozenset(_split(
    "on off in out up down over under above below inside outside "
    "before after first second last next all some any no each every"
))


def _count(synsets: object, word: str) -> int:
    return sum(l.count() for s in synsets for l in s.lemmas() if l.name().lower() == word)  # type: ignore[attr-defined]


def _adjective_synsets(word: str) -> list[object]:
    wn = wordnet()
    return list(dict.fromkeys(wn.synsets(word, pos="a") + wn.synsets(word, pos="s")))


@lru_cache(maxsize=8192)
def adjective_dominant(word: str) -> bool:
    """WordNet knows ``word`` as an adjective, at least as often as a noun (sense counts)."""

    w = word.lower()
    adj = _adjective_synsets(w)
    return bool(adj) and _count(adj, w) >= _count(wordnet().synsets(w, pos="n"), w)


@lru_cache(maxsize=4096)
def en_antonyms(word: str) -> tuple[str, ...]:
    """WordNet antonyms of ``word`` used as an adjective; ``()`` when it is not (mainly) one."""
    w = word.lower()
    if w in EN_STOP or not adjective_dominant(w):
        return ()
    adj = _adjective_synsets(w)
    out: list[str] = []
    for s in adj:
        for lemma in s.lemmas():
            if lemma.name().lower() != w:
                continue
            for a in lemma.antonyms():
                name = a.name().replace("_", " ")
                if name.lower() != w and name not in out:
                    out.append(name)
    return tuple(out)


def en_antonym_spans(text: str) -> list[tuple[Span, tuple[str, ...]]]:
    """Words of an English text that have WordNet antonyms, with them."""
    return [(s, a) for s in en_words(text) if (a := en_antonyms(s.word))]


@lru_cache(maxsize=1)
def zh_antonym_table() -> dict[str, tuple[str, ...]]:
    """The Chinese antonym lexicon, made symmetric."""
    return invert_pairs(zh_lexicon.ZH_ANTONYM_PAIRS)


def zh_antonym_spans(text: str) -> list[tuple[Span, tuple[str, ...]]]:
    """Lexicon words of a Chinese text (longest match, blockers skipped), with their antonyms."""
    table = zh_antonym_table()
    return [(s, table[s.word]) for s in longest_matches(text, table, zh_lexicon.ZH_ANTONYM_BLOCKERS)]
