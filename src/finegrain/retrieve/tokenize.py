"""Tokenizers for lexical retrieval -- they live in :mod:`finegrain.text`; this module keeps the old import path.

See :mod:`finegrain.text.tokenizer` for ``Tokenizer(splitter, stemmer, stopwords)``,
the jieba and English tokenizers and the ``default`` / ``capretrieval`` presets.
"""

from __future__ import annotations

from finegrain.text.segment import load_jieba as _jieba
from finegrain.text.tokenizer import (
    PRESETS,
    EnglishTokenizer,
    JiebaTokenizer,
    Tokenizer,
    get_tokenizer,
)
from finegrain.text.words import JiebaMode, normalize

__all__ = ["PRESETS", "EnglishTokenizer", "JiebaMode", "JiebaTokenizer", "Tokenizer", "_jieba", "get_tokenizer",
           "normalize"]
