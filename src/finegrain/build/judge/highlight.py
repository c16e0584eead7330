"""The query's words, marked in the passage as the judge reads it.

Words come from finegrain's text layer: a text with Chinese characters is cut by jieba
(precise mode, the ``zh`` splitter of :func:`finegrain.text.default_splitter`), any other
text into ``\\w+`` runs (the ``en`` splitter). A passage word is marked when its lower-cased
form is a word of the query; nothing is stemmed (``flowers`` does not mark ``flower``), and
stop words of either language (``the``, ``的``) are never marked. The passage is returned
whole, cut into ``(text, marked)`` pieces whose concatenation is the original text.
"""

from __future__ import annotations

from finegrain.text import WORD, has_cjk, load_jieba, split_words, stopwords


def query_terms(query: str) -> frozenset[str]:
    """The lower-cased words of ``query`` worth marking (no stop words, no punctuation)."""
    lang = "zh" if has_cjk(query) else "en"
    stop = stopwords("en") | stopwords("zh")
    return frozenset(w.lower() for w in split_words(query, lang) if WORD.search(w) and w.lower() not in stop)


def word_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each word of ``text`` (jieba for Chinese text, ``\\w+`` runs otherwise)."""
    if has_cjk(text):
        return [(start, end) for _, start, end in load_jieba().tokenize(text) if not text[start:end].isspace()]
    return [m.span() for m in WORD.finditer(text)]


def highlight(text: str, terms: frozenset[str]) -> list[tuple[str, bool]]:
    """``text`` as ``(piece, marked)`` pieces: the words in ``terms`` marked, neighbours merged."""
    pieces: list[tuple[str, bool]] = []
    last = 0

    def add(piece: str, marked: bool) -> None:
        if not piece:
            return
        if pieces and pieces[-1][1] == marked:
            pieces[-1] = (pieces[-1][0] + piece, marked)
        else:
            pieces.append((piece, marked))

    if terms:
        for start, end in word_spans(text):
            if text[start:end].lower() in terms:
                add(text[last:start], False)
                add(text[start:end], True)
                last = end
    add(text[last:], False)
    return pieces
