"""The text layer: languages, word splitting, jieba, stop words and tokenizers, in one place.

* :mod:`~finegrain.text.lang` -- :class:`Lang` (``zh``, ``en``), :func:`parse_lang`, :func:`detect_lang`;
* :mod:`~finegrain.text.segment` -- :func:`load_jieba`, the one jieba loader (lazy, quiet);
* :mod:`~finegrain.text.words` -- one word splitter per language, :func:`normalize`;
* :mod:`~finegrain.text.stopwords` -- stop-word lists by name;
* :mod:`~finegrain.text.tokenizer` -- ``Tokenizer(splitter, stemmer, stopwords)`` and presets by name.

Importing this package imports neither jieba nor PyStemmer; they load on first use.
"""

from __future__ import annotations

from finegrain.text.lang import LANGS, Lang, detect_lang, has_cjk, parse_lang
from finegrain.text.segment import load_jieba, pos_words
from finegrain.text.stopwords import STOPWORD_LISTS, ZH_STOPWORDS, stopwords
from finegrain.text.tokenizer import (
    PRESETS,
    STEMMERS,
    EnglishTokenizer,
    JiebaTokenizer,
    Tokenizer,
    get_tokenizer,
)
from finegrain.text.words import (
    EN_LETTER_WORD,
    EN_WORD,
    SPLITTERS,
    WORD,
    FunctionSplitter,
    JiebaSplitter,
    RegexSplitter,
    Splitter,
    default_splitter,
    en_word_spans,
    normalize,
    split_words,
)

__all__ = [
    "EN_LETTER_WORD", "EN_WORD", "LANGS", "PRESETS", "SPLITTERS", "STEMMERS", "STOPWORD_LISTS", "WORD", "ZH_STOPWORDS",
    "EnglishTokenizer", "FunctionSplitter", "JiebaSplitter", "JiebaTokenizer", "Lang", "RegexSplitter",
    "Splitter", "Tokenizer", "default_splitter", "detect_lang", "en_word_spans", "get_tokenizer", "has_cjk",
    "load_jieba", "normalize", "parse_lang", "pos_words", "split_words", "stopwords",
]
