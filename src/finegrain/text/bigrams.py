"""Character bigrams for CJK text, in the style of Lucene's ``CJKAnalyzer``: no dictionary, no segmenter.

:class:`CJKBigramSplitter` cuts a text the way Lucene's ``CJKAnalyzer``
(``StandardTokenizer`` -> ``CJKWidthFilter`` -> ``LowerCaseFilter`` ->
``CJKBigramFilter``) does, simplified to what Chinese captions need:

1. **Width folding** (``CJKWidthFilter``): full-width ASCII variants
   (U+FF01-U+FF5E, ``ＡＢＣ１２３！``) become their ASCII forms and the
   ideographic space U+3000 a space.
2. **Lower-casing** (``LowerCaseFilter``), when ``lowercase`` (the default).
3. **CJK runs become overlapping bigrams** (``CJKBigramFilter``): a maximal run
   of Han (CJK unified ideographs, extensions A and B-F, compatibility
   ideographs), Hiragana, Katakana or Hangul characters gives each pair of
   neighbours, ``一只小猫`` -> ``一只``, ``只小``, ``小猫``; a run of one
   character gives that character (Lucene's lone-unigram rule), ``猫`` -> ``猫``.
   Anything else (a space, punctuation, a Latin letter, a digit) ends a run, so
   no bigram spans ``猫，狗`` or ``猫a``.
4. **Other words are kept whole** (``StandardTokenizer``'s UAX #29 words,
   simplified): a run of letters and digits (``\\w`` without ``_`` and without
   the CJK scripts), joined across a single inner ``.`` or ``'``
   (``u.s.a``, ``it's``, ``3.5``) and, between digits, ``,`` (``1,000``).
   Punctuation, symbols and ``_`` are dropped.

What Lucene's analyzer does and this one does not: its default stop set (33
English function words such as ``the``, ``and``) is not applied (BM25's idf
already weighs them down; pass ``stopwords=`` to the
:class:`~finegrain.text.Tokenizer` to drop them), tokens are not cut at 255
characters, and half-width Katakana is not widened.

The splitter is a frozen value whose ``config()`` rebuilds it
(:func:`~finegrain.text.words.splitter_from_config`, type ``"cjk-bigram"``), so
a saved BM25 index restores it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: The scripts ``CJKBigramFilter`` bigrams by default: Han, Hiragana, Katakana, Hangul.
CJK_SCRIPTS = (
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3400-\u4dbf"  # CJK unified ideographs extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0002fa1f"  # extensions B-F and the compatibility supplement
)
_CJK_RUN = f"[{CJK_SCRIPTS}]+"
_ALNUM = rf"[^\W_{CJK_SCRIPTS}]"
_WORD = rf"{_ALNUM}+(?:[.']{_ALNUM}+|(?<=\d),\d+)*"
_TOKEN = re.compile(rf"({_CJK_RUN})|({_WORD})")

# Full-width ASCII variants U+FF01..U+FF5E -> U+0021..U+007E; the ideographic space -> a space.
_WIDTH = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}


def fold_width(text: str) -> str:
    """Full-width ASCII variants as ASCII and U+3000 as a space (Lucene's ``CJKWidthFilter`` for Latin)."""
    return text.translate(_WIDTH)


def cjk_bigrams(run: str) -> list[str]:
    """Overlapping bigrams of one CJK run; a single character is its own token."""
    if len(run) < 2:
        return [run] if run else []
    return [run[i : i + 2] for i in range(len(run) - 1)]


@dataclass(frozen=True)
class CJKBigramSplitter:
    """CJK runs as overlapping character bigrams, other words whole (see the module docstring)."""

    lowercase: bool = True

    def split(self, texts: Sequence[str]) -> list[list[str]]:
        return [self.split_one(t) for t in texts]

    def split_one(self, text: str) -> list[str]:
        text = fold_width(text)
        if self.lowercase:
            text = text.lower()
        out: list[str] = []
        for cjk, word in _TOKEN.findall(text):
            if cjk:
                out.extend(cjk_bigrams(cjk))
            else:
                out.append(word)
        return out

    def config(self) -> dict[str, Any]:
        return {"type": "cjk-bigram", "lowercase": self.lowercase}


__all__ = ["CJK_SCRIPTS", "CJKBigramSplitter", "cjk_bigrams", "fold_width"]
