"""Near names for "did you mean …?": pinyin keys and edit distance, pure functions.

A name is compared through its *key*: case-folded, Chinese characters written as
tone-less pinyin (``pypinyin``, when installed), spaces, apostrophes, hyphens and
dots dropped — so "薇薇", "Weiwei" and "wei wei" share the key ``weiwei``, and a
Chinese homophone typo (伟伟 for 薇薇) is distance 0. Keys are compared with the
Damerau–Levenshtein distance in its optimal-string-alignment form (insertions,
deletions, substitutions and transpositions of adjacent letters cost 1; Boytsov
2011, "Indexing methods for approximate dictionary searching", §2) — "Yantain" is
one transposition from "Yantian".

A candidate is near when its distance is at most :func:`max_edits` of the shorter
key's length: 0 for keys of up to 3 letters (only an exact pinyin match), 1 up
to 5, 2 up to 12, 3 beyond. :func:`nearest` returns the closest candidate, ties
broken by the distance of the spellings themselves ("yantian" before "yan tian" for
"Yantain"), then the longer candidate, then the candidate string, so the answer
does not depend on the order of the candidates.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from finegrain.text.distance import osa_distance
from finegrain.text.lang import has_cjk

__all__ = ["max_edits", "name_key", "nearest", "pinyin_syllables"]

_DROP = re.compile(r"[\s'’\-.·・_]+")


@lru_cache(maxsize=16384)
def pinyin_syllables(text: str) -> tuple[str, ...]:
    """Tone-less pinyin syllables of the Chinese characters of ``text`` (non-Chinese runs kept
    as they are, lower-cased); ``()`` for an empty text. Without ``pypinyin`` the characters
    stand for themselves."""
    try:
        from pypinyin import lazy_pinyin
    except ImportError:  # the "geo" extra is not installed: compare characters
        return tuple(text.casefold().split())
    return tuple(s.casefold() for s in lazy_pinyin(text) if s.strip())


@lru_cache(maxsize=16384)
def name_key(text: str) -> str:
    """The comparison key of a name: NFKC, case-folded, pinyin for Chinese, no separators."""
    text = unicodedata.normalize("NFKC", text).casefold()
    if has_cjk(text):
        text = " ".join(pinyin_syllables(text))
    return _DROP.sub("", text)


def max_edits(length: int) -> int:
    """Edits allowed between keys whose shorter one has ``length`` letters."""
    if length <= 3:
        return 0
    if length <= 5:
        return 1
    if length <= 12:
        return 2
    return 3


def nearest(text: str, candidates: Iterable[str]) -> tuple[str, int] | None:
    """The candidate nearest to ``text`` by key and its distance, None when none is near enough."""
    key = name_key(text)
    if not key:
        return None
    best: tuple[int, int, int, str] | None = None
    for cand in candidates:
        ckey = name_key(cand)
        if not ckey:
            continue
        limit = max_edits(min(len(key), len(ckey)))
        d = osa_distance(key, ckey, limit)
        if d > limit:
            continue
        rank = (d, osa_distance(text.casefold(), cand.casefold()), -len(cand), cand)
        if best is None or rank < best:
            best = rank
    return None if best is None else (best[3], best[0])
