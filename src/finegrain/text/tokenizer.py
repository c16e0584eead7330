"""Tokenizers: a splitter, an optional stemmer and optional stop words, injected (as in bm25s).

    Tokenizer(splitter, stemmer=None, stopwords=None, query_splitter=None)

turns texts into token lists: split (``query_splitter`` for queries when
given, because the two sides may be cut differently: the CapRetrieval paper
segments documents in jieba's search mode and queries in precise mode), drop
stop words, stem. ``splitter`` is a :class:`~finegrain.text.words.Splitter`
or any function ``text -> words``; ``stemmer`` is a name of :data:`STEMMERS`
(``"porter"``) or any function ``words -> stems`` (PyStemmer's
``Stemmer.Stemmer("porter").stemWords``); ``stopwords`` is a list name of
:mod:`finegrain.text.stopwords` (``"en"``, ``"zh"``) or an iterable of words.
A stem that comes out empty (Porter reduces "s" to "") keeps the word.

``config()`` is JSON-able and :meth:`Tokenizer.from_config` rebuilds the same
tokenizer from it (a saved BM25 index restores its tokenizer this way).

Presets (:func:`get_tokenizer`, by language and preset name):

* ``"default"``: ``zh`` :class:`JiebaTokenizer` -- both sides normalised
  (:func:`~finegrain.text.words.normalize`), jieba search mode for documents,
  precise mode for queries, pure-whitespace tokens dropped; ``en``
  :class:`EnglishTokenizer` -- lower-cased ``\\w+`` words, Porter stems.
* ``"capretrieval"``: for ``zh`` exactly the published CapRetrieval BM25
  configuration (Xu et al., 2025, "Dense Retrievers Can Fail on Simple Queries:
  Revealing The Granularity Dilemma of Embeddings", Appx. C, and the reference
  ``run.py`` of github.com/lxucs/CapRetrieval)::

      documents: jieba.lcut_for_search(text)            # raw text, NOT normalised
      queries:   jieba.lcut(normalize(text))            # lower-cased, folded

  keeping every token jieba yields (spaces and punctuation included). The paper
  gives no English BM25 configuration; for ``en`` this preset is the same as
  ``"default"``, which lands within 1 point of the published CapRetrievalEn row.
* ``"jieba-search"`` / ``"jieba-precise"``: ``"capretrieval"`` with jieba's
  search mode (``lcut_for_search``) or precise mode (``lcut``) on *both*
  sides, all else equal (raw documents, normalised queries, whitespace kept);
  ``en`` as in ``"default"``.
* ``"cjk-bigram"``: ``zh`` overlapping character bigrams of CJK runs, other
  words whole (:class:`~finegrain.text.bigrams.CJKBigramSplitter`, Lucene
  ``CJKAnalyzer`` style), the same on both sides; ``en`` as in ``"default"``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any, ClassVar

from finegrain.errors import FinegrainError, MissingDependencyError, UnknownNameError
from finegrain.text.bigrams import CJKBigramSplitter
from finegrain.text.lang import Lang, parse_lang
from finegrain.text.stopwords import STOPWORD_LISTS
from finegrain.text.stopwords import stopwords as stopword_list
from finegrain.text.words import (
    JIEBA_MODES,
    JiebaMode,
    JiebaSplitter,
    RegexSplitter,
    Splitter,
    as_splitter,
    splitter_from_config,
)

StemFunction = Callable[[list[str]], list[str]]


@cache
def _porter() -> StemFunction:
    try:
        import Stemmer
    except ImportError:  # pragma: no cover - PyStemmer is a core dependency
        raise MissingDependencyError("PyStemmer", "en") from None
    return Stemmer.Stemmer("porter").stemWords  # type: ignore[no-any-return]


# Stemmers by name: the Porter (1980) stemmer of PyStemmer (Snowball's ``porter`` algorithm).
STEMMERS: Mapping[str, Callable[[], StemFunction]] = MappingProxyType({"porter": _porter})


@dataclass(frozen=True)
class Tokenizer:
    """Split, drop stop words, stem (see the module docstring); documents and queries may be split differently."""

    splitter: Splitter
    stemmer: str | StemFunction | None = None
    stopwords: str | tuple[str, ...] | None = None
    query_splitter: Splitter | None = None

    kind: ClassVar[str] = "custom"

    def __post_init__(self) -> None:
        object.__setattr__(self, "splitter", as_splitter(self.splitter))
        if self.query_splitter is not None:
            object.__setattr__(self, "query_splitter", as_splitter(self.query_splitter))
        st = self.stemmer
        if isinstance(st, str):
            if st not in STEMMERS:
                raise UnknownNameError("stemmer", st, STEMMERS)
        elif st is not None and not callable(st):
            raise FinegrainError(f"stemmer {st!r} is neither a name nor a function",
                                 f"use one of {', '.join(repr(s) for s in STEMMERS)}, a function words -> stems, or None")
        sw = self.stopwords
        if isinstance(sw, str):
            if sw not in STOPWORD_LISTS:
                raise FinegrainError(
                    f"unknown stop-word list {sw!r}",
                    f"use stopwords={', '.join(repr(s) for s in STOPWORD_LISTS)}, an iterable of words, or None",
                )
        elif sw is not None:
            # Any iterable of words becomes a sorted tuple: hashable, comparable, JSON-able.
            object.__setattr__(self, "stopwords", tuple(sorted({str(w).lower() for w in sw})))

    # -- tokenizing --------------------------------------------------------------

    def documents(self, texts: Sequence[str]) -> list[list[str]]:
        """One token list per document text."""
        _check_texts(texts)
        return self._finish(self.splitter.split(texts))

    def queries(self, texts: Sequence[str]) -> list[list[str]]:
        """One token list per query text (``query_splitter`` when given)."""
        _check_texts(texts)
        return self._finish((self.query_splitter or self.splitter).split(texts))

    def _finish(self, out: list[list[str]]) -> list[list[str]]:
        if self.stopwords:
            stop = stopword_list(self.stopwords) if isinstance(self.stopwords, str) else frozenset(self.stopwords)
            out = [[w for w in ws if w not in stop] for ws in out]
        if self.stemmer is not None:
            stem = STEMMERS[self.stemmer]() if isinstance(self.stemmer, str) else self.stemmer
            # Stem each distinct word once: the stemmer is fast, a dict lookup is faster.
            unique = list({w: None for ws in out for w in ws})
            # Porter reduces the word "s" to "": a word whose stem would be empty is kept as is.
            stems = {w: s or w for w, s in zip(unique, stem(unique))}
            out = [[stems[w] for w in ws] for ws in out]
        return out

    # -- config ------------------------------------------------------------------

    def config(self) -> dict[str, Any]:
        """JSON-able description; :meth:`from_config` rebuilds the tokenizer from it."""
        st, sw = self.stemmer, self.stopwords
        return {
            "tokenizer": self.kind,
            "splitter": self.splitter.config(),
            "query_splitter": self.query_splitter.config() if self.query_splitter is not None else None,
            "stemmer": st if isinstance(st, str) or st is None else {"type": "function", "name": _name(st)},
            "stopwords": list(sw) if isinstance(sw, tuple) else sw,
        }

    @staticmethod
    def from_config(config: Mapping[str, Any]) -> Tokenizer:
        """The tokenizer ``config()`` described (a preset class when it was one); a clear error when it
        cannot be rebuilt (a function splitter or stemmer)."""
        if not isinstance(config, Mapping) or "splitter" not in config:
            raise FinegrainError(f"tokenizer config {config!r} has no 'splitter'", "write it with Tokenizer.config()")
        stemmer = config.get("stemmer")
        if stemmer is not None and not isinstance(stemmer, str):
            raise FinegrainError(f"tokenizer stemmer {stemmer!r} was a function and cannot be rebuilt",
                                 "pass the tokenizer again (BM25.load(folder, tokenizer=...))")
        qs = config.get("query_splitter")
        tok = Tokenizer(
            splitter_from_config(config["splitter"]),
            stemmer=stemmer,
            stopwords=config.get("stopwords"),
            query_splitter=splitter_from_config(qs) if qs is not None else None,
        )
        for cls in (JiebaTokenizer, EnglishTokenizer):
            if config.get("tokenizer") == cls.kind:
                preset = cls._from_parts(tok)
                if preset is not None and _parts(Tokenizer.config(preset)) == _parts(tok.config()):
                    return preset
        return tok

    @classmethod
    def _from_parts(cls, tok: Tokenizer) -> Tokenizer | None:
        return None


class JiebaTokenizer(Tokenizer):
    """Chinese word segmentation with jieba (:class:`~finegrain.text.words.JiebaSplitter` on both sides).

    ``document_mode`` / ``query_mode``: ``"search"`` is ``jieba.lcut_for_search``,
    ``"precise"`` is ``jieba.lcut``. ``normalize_documents`` / ``normalize_queries``
    apply :func:`~finegrain.text.words.normalize` first. ``keep_whitespace=False``
    drops tokens that are only whitespace. ``hmm`` is jieba's HMM switch.
    """

    kind: ClassVar[str] = "jieba"

    def __init__(
        self,
        document_mode: JiebaMode = "search",
        query_mode: JiebaMode = "precise",
        normalize_documents: bool = True,
        normalize_queries: bool = True,
        keep_whitespace: bool = False,
        hmm: bool = True,
    ) -> None:
        for what, mode in (("document_mode", document_mode), ("query_mode", query_mode)):
            if mode not in JIEBA_MODES:
                raise FinegrainError(
                    f"unknown jieba {what} {mode!r}", f"use one of {', '.join(repr(m) for m in JIEBA_MODES)}"
                )
        super().__init__(
            splitter=JiebaSplitter(document_mode, normalize_documents, keep_whitespace, hmm),
            query_splitter=JiebaSplitter(query_mode, normalize_queries, keep_whitespace, hmm),
        )

    def config(self) -> dict[str, Any]:
        """The generic config plus the constructor's arguments (``document_mode``, ``normalize_documents``, ...)."""
        d, q = self.splitter, self.query_splitter
        assert isinstance(d, JiebaSplitter) and isinstance(q, JiebaSplitter)
        return {**super().config(), "document_mode": d.mode, "query_mode": q.mode, "normalize_documents": d.normalize,
                "normalize_queries": q.normalize, "keep_whitespace": d.keep_whitespace, "hmm": d.hmm}

    @classmethod
    def capretrieval(cls) -> JiebaTokenizer:
        """The published CapRetrieval BM25 configuration (see the module docstring)."""
        return cls(normalize_documents=False, normalize_queries=True, keep_whitespace=True)

    @classmethod
    def _from_parts(cls, tok: Tokenizer) -> JiebaTokenizer | None:
        d, q = tok.splitter, tok.query_splitter
        if not (isinstance(d, JiebaSplitter) and isinstance(q, JiebaSplitter)):
            return None
        return cls(d.mode, q.mode, d.normalize, q.normalize, d.keep_whitespace, d.hmm)


class EnglishTokenizer(Tokenizer):
    """English words: lower-case, ``\\w+`` runs, optional stop words, Porter stems (``stem=True``).

    ``stopwords`` is ``None`` (keep all words), ``"en"`` (the English list
    shipped with bm25s) or an iterable of words (kept lower-cased, as a sorted
    tuple); stop words are removed before stemming. Documents and queries are
    treated the same way.
    """

    kind: ClassVar[str] = "english"

    def __init__(self, stem: bool = True, stopwords: str | Iterable[str] | None = None) -> None:
        super().__init__(splitter=RegexSplitter(), stemmer="porter" if stem else None,
                         stopwords=stopwords)  # type: ignore[arg-type]

    @property
    def stem(self) -> bool:
        return self.stemmer is not None

    def with_stopwords(self, stopwords: str | Iterable[str] | None) -> EnglishTokenizer:
        """The same tokenizer with other stop words."""
        return EnglishTokenizer(self.stem, stopwords)

    @classmethod
    def _from_parts(cls, tok: Tokenizer) -> EnglishTokenizer | None:
        if tok.query_splitter is not None or tok.splitter != RegexSplitter() or tok.stemmer not in (None, "porter"):
            return None
        return cls(tok.stemmer is not None, tok.stopwords)


# --------------------------------------------------------------------------- presets

def _capretrieval_mode(mode: JiebaMode) -> Callable[[], Tokenizer]:
    """The ``capretrieval`` preset with jieba in ``mode`` on both sides (nothing else changed)."""
    return lambda: JiebaTokenizer(mode, mode, normalize_documents=False, normalize_queries=True, keep_whitespace=True)


def _cjk_bigram() -> Tokenizer:
    return Tokenizer(CJKBigramSplitter())


_PRESETS: Mapping[str, Mapping[Lang, Callable[[], Tokenizer]]] = MappingProxyType({
    "default": MappingProxyType({Lang.ZH: JiebaTokenizer, Lang.EN: EnglishTokenizer}),
    "capretrieval": MappingProxyType({Lang.ZH: JiebaTokenizer.capretrieval, Lang.EN: EnglishTokenizer}),
    "jieba-search": MappingProxyType({Lang.ZH: _capretrieval_mode("search"), Lang.EN: EnglishTokenizer}),
    "jieba-precise": MappingProxyType({Lang.ZH: _capretrieval_mode("precise"), Lang.EN: EnglishTokenizer}),
    "cjk-bigram": MappingProxyType({Lang.ZH: _cjk_bigram, Lang.EN: EnglishTokenizer}),
})
PRESETS: tuple[str, ...] = tuple(_PRESETS)


def get_tokenizer(lang: str | Lang, preset: str = "default") -> Tokenizer:
    """The tokenizer for a language (``"zh"`` or ``"en"``) and a preset name (see the module docstring)."""
    if preset not in _PRESETS:
        raise UnknownNameError("tokenizer preset", preset, PRESETS)
    try:
        code = parse_lang(lang)
    except FinegrainError:
        raise UnknownNameError("tokenizer language", str(lang), [str(x) for x in Lang]) from None
    return _PRESETS[preset][code]()


def _parts(config: Mapping[str, Any]) -> dict[str, Any]:
    return {k: config.get(k) for k in ("splitter", "query_splitter", "stemmer", "stopwords")}


def _name(fn: object) -> str:
    return f"{getattr(fn, '__module__', None) or ''}.{getattr(fn, '__qualname__', repr(fn))}".lstrip(".")


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
