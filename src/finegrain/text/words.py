"""Word splitting: one splitter per language, and the word patterns other modules match with.

* ``en``: :class:`RegexSplitter` -- lower-case, then runs of ``\\w`` (letters,
  digits, underscore; ``"it's 3.5"`` -> ``it``, ``s``, ``3``, ``5``).
* ``zh``: :class:`JiebaSplitter` -- jieba in ``"search"`` mode
  (``jieba.lcut_for_search``: words plus their in-dictionary sub-words,
  中华人民共和国 -> 中华, 华人, 人民, 共和, 共和国, 中华人民共和国) or
  ``"precise"`` mode (``jieba.lcut``).

:func:`split_words` gives a language's words with the default splitter.
:data:`EN_WORD` (letters and digits with inner hyphens kept: ``second-hand``)
is the word pattern of the error taxonomy, which needs a word's offsets and
keeps hyphenated words whole; :data:`EN_LETTER_WORD` is the same without digits,
the words a perturbation may swap (a number is never a colour or a size).

Splitters are frozen values with a ``config()`` that :func:`splitter_from_config`
turns back into the same splitter (a saved BM25 index restores its tokenizer
this way); :data:`SPLITTERS` is the table of splitter types.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, Protocol, runtime_checkable

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.text.bigrams import CJKBigramSplitter
from finegrain.text.lang import Lang, parse_lang
from finegrain.text.segment import load_jieba

JiebaMode = Literal["search", "precise"]
JIEBA_MODES: tuple[str, ...] = ("search", "precise")

WORD = re.compile(r"\w+")
EN_WORD = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
EN_LETTER_WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")


def normalize(text: str) -> str:
    """Lower-case and fold whitespace: ``" ".join(text.lower().split())`` (the CapRetrieval reference code's)."""
    return " ".join(text.lower().split())


def normalize_texts(texts: Sequence[str], *, lowercase: bool = True, normalize_space: bool = True) -> list[str]:
    """:func:`normalize`'s two steps, each switchable: lower-case, then collapse runs of whitespace."""
    out = list(texts)
    if lowercase:
        out = [t.lower() for t in out]
    if normalize_space:
        out = [" ".join(t.split()) for t in out]
    return out


@runtime_checkable
class Splitter(Protocol):
    """Cuts texts into words; ``config()`` is JSON-able and names the splitter ``type``."""

    def split(self, texts: Sequence[str]) -> list[list[str]]: ...

    def config(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class RegexSplitter:
    """Every match of ``pattern`` in the (optionally lower-cased) text."""

    pattern: str = WORD.pattern
    lowercase: bool = True

    def __post_init__(self) -> None:
        try:
            re.compile(self.pattern)
        except re.error as e:
            raise FinegrainError(f"splitter pattern {self.pattern!r} is not a regular expression: {e}",
                                 "pass a valid pattern, e.g. r'\\w+'") from None

    def split(self, texts: Sequence[str]) -> list[list[str]]:
        find = re.compile(self.pattern).findall
        if self.lowercase:
            return [find(t.lower()) for t in texts]
        return [find(t) for t in texts]

    def config(self) -> dict[str, Any]:
        return {"type": "regex", "pattern": self.pattern, "lowercase": self.lowercase}


@dataclass(frozen=True)
class JiebaSplitter:
    """jieba words in ``mode`` (``"search"`` or ``"precise"``).

    ``normalize`` applies :func:`normalize` first; ``keep_whitespace=False``
    drops tokens that are only whitespace (jieba returns the spaces between
    Latin words as tokens); ``hmm`` is jieba's HMM switch for unknown words.
    """

    mode: JiebaMode = "search"
    normalize: bool = True
    keep_whitespace: bool = False
    hmm: bool = True

    def __post_init__(self) -> None:
        if self.mode not in JIEBA_MODES:
            raise FinegrainError(
                f"unknown jieba mode {self.mode!r}", f"use one of {', '.join(repr(m) for m in JIEBA_MODES)}"
            )

    def split(self, texts: Sequence[str]) -> list[list[str]]:
        jieba = load_jieba()
        cut = jieba.lcut_for_search if self.mode == "search" else jieba.lcut
        hmm = self.hmm
        out = [cut(normalize(t), HMM=hmm) for t in texts] if self.normalize else [cut(t, HMM=hmm) for t in texts]
        if not self.keep_whitespace:
            out = [[w for w in toks if not w.isspace()] for toks in out]
        return out

    def config(self) -> dict[str, Any]:
        return {"type": "jieba", "mode": self.mode, "normalize": self.normalize,
                "keep_whitespace": self.keep_whitespace, "hmm": self.hmm}


@dataclass(frozen=True)
class FunctionSplitter:
    """Any function ``text -> list of words`` (``str.split``, a bm25s-style splitter); not restorable from config."""

    function: Callable[[str], list[str]]

    def split(self, texts: Sequence[str]) -> list[list[str]]:
        fn = self.function
        return [list(fn(t)) for t in texts]

    def config(self) -> dict[str, Any]:
        fn = self.function
        name = f"{getattr(fn, '__module__', None) or ''}.{getattr(fn, '__qualname__', repr(fn))}".lstrip(".")
        return {"type": "function", "name": name}


SPLITTERS: Mapping[str, type] = MappingProxyType({"regex": RegexSplitter, "jieba": JiebaSplitter,
                                                   "cjk-bigram": CJKBigramSplitter})


def as_splitter(value: Splitter | Callable[[str], list[str]]) -> Splitter:
    """``value`` as a :class:`Splitter` (a plain function is wrapped in :class:`FunctionSplitter`)."""
    if isinstance(value, Splitter):
        return value
    if callable(value):
        return FunctionSplitter(value)
    raise FinegrainError(f"splitter {value!r} is neither a Splitter nor a function",
                         "pass RegexSplitter(), JiebaSplitter() or a function text -> list of words")


def splitter_from_config(config: Mapping[str, Any]) -> Splitter:
    """The splitter a ``config()`` describes; an error for a type that cannot be rebuilt (a function)."""
    kind = str(config.get("type"))
    if kind not in SPLITTERS:
        raise UnknownNameError("splitter type", kind, tuple(SPLITTERS))
    params = {k: v for k, v in config.items() if k != "type"}
    try:
        return SPLITTERS[kind](**params)  # type: ignore[no-any-return]
    except TypeError as e:
        raise FinegrainError(f"splitter config {dict(config)!r} does not fit {kind!r}: {e}",
                             "write it with the splitter's config()") from None


_DEFAULT: Mapping[Lang, Splitter] = MappingProxyType({
    Lang.EN: RegexSplitter(),
    Lang.ZH: JiebaSplitter(mode="precise"),
})


def default_splitter(lang: str | Lang) -> Splitter:
    """The word splitter of a language: ``en`` lower-cased ``\\w+`` runs, ``zh`` jieba precise mode (normalised)."""
    return _DEFAULT[parse_lang(lang)]


def split_words(text: str, lang: str | Lang) -> list[str]:
    """The words of one text in ``lang`` (see :func:`default_splitter`); whitespace tokens dropped."""
    return default_splitter(lang).split([text])[0]


def en_word_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, word)`` for each :data:`EN_WORD` in ``text`` (letters/digits, inner hyphens kept)."""
    return [(m.start(), m.end(), m.group()) for m in EN_WORD.finditer(text)]
