"""Tokenizers for lexical retrieval: jieba for Chinese, regex words + Porter stems for English.

A tokenizer turns texts into token lists, with one method for documents and one
for queries, because the two sides may be cut differently (the CapRetrieval
paper segments documents in jieba's search mode and queries in precise mode).

Normalisation is the one the CapRetrieval reference code uses::

    normalize(text) = " ".join(text.lower().split())

i.e. lower-casing and folding every run of whitespace into one space.

Presets (:func:`get_tokenizer`):

* ``"default"``: both sides normalised; for ``zh`` jieba search mode for
  documents and precise mode for queries, with pure-whitespace tokens dropped;
  for ``en`` ``\\w+`` words, Porter stems.
* ``"capretrieval"``: for ``zh`` exactly the published CapRetrieval BM25
  configuration (Xu et al., 2025, "Dense Retrievers Can Fail on Simple Queries:
  Revealing The Granularity Dilemma of Embeddings", Appx. C, and the reference
  ``run.py`` of github.com/lxucs/CapRetrieval)::

      documents: jieba.lcut_for_search(text)            # raw text, NOT normalised
      queries:   jieba.lcut(normalize(text))            # lower-cased, folded

  keeping every token jieba yields (spaces and punctuation included). The paper
  gives no English BM25 configuration; for ``en`` this preset is the same as
  ``"default"``, which lands within 1 point of the published CapRetrievalEn
  row.

jieba is imported on first use only and initialised quietly (its "Building
prefix dict" messages go through its own logger, set to WARNING). It uses
jieba's process-wide default dictionary.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any, Literal, Protocol, runtime_checkable

from finegrain.errors import FinegrainError, MissingDependencyError, UnknownNameError

JiebaMode = Literal["search", "precise"]
_JIEBA_MODES = ("search", "precise")
_WORD = re.compile(r"\w+")


@runtime_checkable
class Tokenizer(Protocol):
    """Turns texts into token lists; documents and queries may be cut differently."""

    def documents(self, texts: Sequence[str]) -> list[list[str]]: ...

    def queries(self, texts: Sequence[str]) -> list[list[str]]: ...

    def config(self) -> dict[str, Any]: ...


def normalize(text: str) -> str:
    """Lower-case and fold whitespace: ``" ".join(text.lower().split())``."""
    return " ".join(text.lower().split())


# --------------------------------------------------------------------------- Chinese


@dataclass(frozen=True)
class JiebaTokenizer:
    """Chinese word segmentation with jieba.

    ``document_mode`` / ``query_mode``: ``"search"`` is ``jieba.lcut_for_search``
    (words plus their in-dictionary sub-words, e.g. 中华人民共和国 -> 中华, 华人,
    人民, 共和, 共和国, 中华人民共和国), ``"precise"`` is ``jieba.lcut``.
    ``normalize_documents`` / ``normalize_queries`` apply :func:`normalize`
    first. ``keep_whitespace=False`` drops tokens that are only whitespace
    (jieba returns the spaces between Latin words as tokens). ``hmm`` is jieba's
    HMM switch for unknown words.
    """

    document_mode: JiebaMode = "search"
    query_mode: JiebaMode = "precise"
    normalize_documents: bool = True
    normalize_queries: bool = True
    keep_whitespace: bool = False
    hmm: bool = True

    def __post_init__(self) -> None:
        for what, mode in (("document_mode", self.document_mode), ("query_mode", self.query_mode)):
            if mode not in _JIEBA_MODES:
                raise FinegrainError(
                    f"unknown jieba {what} {mode!r}",
                    f"use one of {', '.join(repr(m) for m in _JIEBA_MODES)}",
                )

    @classmethod
    def capretrieval(cls) -> JiebaTokenizer:
        """The published CapRetrieval BM25 configuration (see the module docstring)."""
        return cls(normalize_documents=False, normalize_queries=True, keep_whitespace=True)

    def documents(self, texts: Sequence[str]) -> list[list[str]]:
        return self._cut(texts, self.document_mode, self.normalize_documents)

    def queries(self, texts: Sequence[str]) -> list[list[str]]:
        return self._cut(texts, self.query_mode, self.normalize_queries)

    def config(self) -> dict[str, Any]:
        return {"tokenizer": "jieba", **asdict(self)}

    def _cut(self, texts: Sequence[str], mode: JiebaMode, norm: bool) -> list[list[str]]:
        _check_texts(texts)
        jieba = _jieba()
        cut = jieba.lcut_for_search if mode == "search" else jieba.lcut
        hmm = self.hmm
        out = [cut(normalize(t) if norm else t, HMM=hmm) for t in texts]
        if not self.keep_whitespace:
            out = [[w for w in toks if not w.isspace()] for toks in out]
        return out


@cache
def _jieba() -> Any:
    """Import and initialise jieba once, without its start-up chatter on stderr."""
    import warnings

    try:
        with warnings.catch_warnings():
            # jieba imports pkg_resources, which recent setuptools flags as deprecated on stderr.
            warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
            import jieba
    except ImportError:  # pragma: no cover - jieba is a core dependency
        raise MissingDependencyError("jieba", "zh") from None
    import logging

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


# --------------------------------------------------------------------------- English


@dataclass(frozen=True)
class EnglishTokenizer:
    """English words: lower-case, ``\\w+`` runs, optional stop words, Porter stems.

    ``stem=True`` applies the Porter (1980) stemmer of PyStemmer (Snowball's
    ``porter`` algorithm; a word whose stem would be empty, like "s", is kept
    unstemmed). ``stopwords`` is ``None`` (keep all words), ``"en"``
    (the English list shipped with bm25s) or an iterable of words (kept
    lower-cased, as a sorted tuple); stop words are removed before stemming. Documents and queries are treated
    the same way.
    """

    stem: bool = True
    stopwords: str | tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        sw = self.stopwords
        if isinstance(sw, str):
            if sw != "en":
                raise FinegrainError(
                    f"unknown stop-word list {sw!r}", "use stopwords='en', an iterable of words, or None"
                )
        elif sw is not None:
            # Any iterable of words becomes a sorted tuple: hashable, comparable, JSON-able.
            object.__setattr__(self, "stopwords", tuple(sorted({str(w).lower() for w in sw})))

    def documents(self, texts: Sequence[str]) -> list[list[str]]:
        return self._split(texts)

    def queries(self, texts: Sequence[str]) -> list[list[str]]:
        return self._split(texts)

    def config(self) -> dict[str, Any]:
        sw = self.stopwords
        return {"tokenizer": "english", "pattern": _WORD.pattern, "lowercase": True,
                "stemmer": "porter" if self.stem else None, "stopwords": list(sw) if isinstance(sw, tuple) else sw}

    def _split(self, texts: Sequence[str]) -> list[list[str]]:
        _check_texts(texts)
        find = _WORD.findall
        out = [find(t.lower()) for t in texts]
        if self.stopwords:
            stop = _english_stopwords() if self.stopwords == "en" else frozenset(self.stopwords)
            out = [[w for w in ws if w not in stop] for ws in out]
        if self.stem:
            # Stem each distinct word once: PyStemmer is fast, a dict lookup is faster.
            unique = list({w: None for ws in out for w in ws})
            # Porter reduces the word "s" to "": a word whose stem would be empty is kept as is.
            stems = {w: s or w for w, s in zip(unique, _porter().stemWords(unique))}
            out = [[stems[w] for w in ws] for ws in out]
        return out


@cache
def _english_stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


@cache
def _porter() -> Any:
    try:
        import Stemmer
    except ImportError:  # pragma: no cover - PyStemmer is a core dependency
        raise MissingDependencyError("PyStemmer", "en") from None
    return Stemmer.Stemmer("porter")


# --------------------------------------------------------------------------- lookup

PRESETS: tuple[str, ...] = ("default", "capretrieval")


def get_tokenizer(lang: str, preset: str = "default") -> JiebaTokenizer | EnglishTokenizer:
    """The tokenizer for a language code (``"zh"`` or ``"en"``) and a preset (see module docstring)."""
    if preset not in PRESETS:
        raise UnknownNameError("tokenizer preset", preset, PRESETS)
    if lang == "zh":
        return JiebaTokenizer.capretrieval() if preset == "capretrieval" else JiebaTokenizer()
    if lang == "en":
        return EnglishTokenizer()
    raise UnknownNameError("tokenizer language", lang, ("en", "zh"))


def _check_texts(texts: Sequence[str]) -> None:
    if isinstance(texts, str):
        raise FinegrainError(
            f"expected a list of texts, got one string {texts[:40]!r}",
            "wrap a single text in a list: tokenizer.queries([text])",
        )
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise FinegrainError(
                f"text {i} is a {type(t).__name__}, not a string: {t!r:.60}",
                "pass strings (use '' for an empty text)",
            )
