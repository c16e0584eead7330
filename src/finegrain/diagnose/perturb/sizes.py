"""Size words swapped between a "big" set and a "small" set (the paper's Sec. 5.1).

"Words such as large, big, enormous, huge are substituted with a random choice
among small, little, minor, tiny and vice versa." English uses exactly those
two sets; Chinese uses :data:`~finegrain.diagnose.perturb.zh_lexicon.ZH_BIG` /
``ZH_SMALL``, where a one-character word (``大``, ``小``) is replaced by a
one-character word and a longer word by a longer one, so the phrase stays
well-formed (``小房子`` -> ``大房子``, ``巨大`` -> ``微小``).
"""

from __future__ import annotations

import finegrain.diagnose.perturb.zh_lexicon as zh_lexicon
from finegrain.diagnose.perturb.text import Span, en_words, longest_matches

EN_BIG: tuple[str, ...] = ("large", "big", "enormous", "huge")
EN_SMALL: tuple[str, ...] = ("small", "little", "minor", "tiny")


def en_size_spans(text: str) -> list[tuple[Span, tuple[str, ...]]]:
    """Size words of an English text with their replacements (the other set)."""
    out = []
    for s in en_words(text):
        w = s.word.lower()
        if w in EN_BIG:
            out.append((s, EN_SMALL))
        elif w in EN_SMALL:
            out.append((s, EN_BIG))
    return out


def zh_size_spans(text: str) -> list[tuple[Span, tuple[str, ...]]]:
    """Size words of a Chinese text with their replacements (the other set, same one/more characters)."""
    words = zh_lexicon.ZH_BIG + zh_lexicon.ZH_SMALL
    out = []
    for s in longest_matches(text, words, zh_lexicon.ZH_SIZE_BLOCKERS):
        other = zh_lexicon.ZH_SMALL if s.word in zh_lexicon.ZH_BIG else zh_lexicon.ZH_BIG
        same = tuple(w for w in other if (len(w) == 1) == (len(s.word) == 1))
        out.append((s, same))
    return out
