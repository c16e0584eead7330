"""Term coverage: how much of the query a passage says, as a reranking score.

The error taxonomy (:mod:`finegrain.diagnose.taxonomy`) of the fused retrievers on
CapRetrieval points here: most of their failures are ``modifier_mismatch`` (the wrong
passage shares the head but drops a condition of the query: CapRetrieval Sec. 3,
"ignored conditions") and ``term_over_sensitivity`` (the wrong passage shares one rare
word but not the head). Both are passages that say *less of the query* than the
relevant one, which a dense score averages away. :class:`TermCoverage` measures it
directly:

    coverage(q, p) = sum of idf(t) over the query's terms t that p contains
                     / sum of idf(t) over all the query's terms

with ``idf(t) = log((N + 1) / (df(t) + 0.5))`` over the N passages of the corpus it is
fitted on (:meth:`TermCoverage.fit`), so a rare condition word weighs more than a
common one; a term no passage holds gets the largest idf. Terms are the query's tokens
by the tokenizer preset (jieba for Chinese, Porter stems for English:
:mod:`finegrain.text.tokenizer`), each counted once; a Chinese term of two or more
characters also counts when it is a substring of the passage (jieba may cut the passage
differently). Texts are lower-cased first (the CapRetrieval protocol). A query without
terms scores 0 everywhere. Coverage lies in [0, 1].

Coverage alone is a poor ranker (many passages cover a short query fully); it is meant
as the scorer of ``rerank`` over a fused first stage, mixed with the first stage's
ranks by a weight chosen by ``--cv`` (see :mod:`finegrain.retrieve.rerank.retriever`).
Pure and deterministic; nothing is downloaded.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.text.tokenizer import PRESETS, Tokenizer, get_tokenizer
from finegrain.text.words import normalize


@dataclass(frozen=True)
class TermCoverage:
    """The idf-weighted share of a query's terms that a passage contains (module docstring).

    Build it with :meth:`fit` on the corpus the first stage searched; ``score`` follows the
    :class:`~finegrain.retrieve.rerank.cross_encoder.Reranker` protocol.
    """

    lang: str
    idf: Mapping[str, float]
    n_documents: int
    preset: str = "default"
    name: str = "coverage"
    _tokens: dict[str, frozenset[str]] = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def fit(cls, texts: Iterable[str], lang: str, *, preset: str = "default") -> TermCoverage:
        """Document frequencies of ``texts`` (the corpus) under the ``preset`` tokenizer for ``lang``."""
        tok = get_tokenizer(lang, preset)  # unknown lang or preset: UnknownNameError with the known ones
        docs = tok.documents([normalize(t) for t in texts])
        df = Counter(t for ts in docs for t in set(ts))
        n = len(docs)
        idf = {t: math.log((n + 1) / (c + 0.5)) for t, c in df.items()}
        return cls(lang=lang, idf=MappingProxyType(idf), n_documents=n, preset=preset)

    def config(self) -> dict[str, Any]:
        return {"scorer": self.name, "lang": self.lang, "preset": self.preset, "n_documents": self.n_documents,
                "idf": "log((N + 1) / (df + 0.5)) over the searched corpus"}

    @cached_property
    def _tokenizer(self) -> Tokenizer:
        return get_tokenizer(self.lang, self.preset)

    def weight(self, term: str) -> float:
        """idf of ``term``; a term the corpus lacks gets the largest possible idf."""
        return self.idf.get(term, math.log((self.n_documents + 1) / 0.5))

    def terms(self, query: str) -> tuple[str, ...]:
        """The query's distinct terms, in first-seen order."""
        seen: dict[str, None] = {}
        for t in self._tokenizer.queries([normalize(query)])[0]:
            if t.strip():
                seen.setdefault(t, None)
        return tuple(seen)

    def score(self, query: str, passages: list[str]) -> np.ndarray:
        out = np.zeros(len(passages), dtype=np.float64)
        terms = self.terms(query)
        total = sum(self.weight(t) for t in terms)
        if not passages or not terms or total <= 0:
            return out
        substring = self.lang == "zh"
        for i, passage in enumerate(passages):
            text = normalize(passage)
            toks = self._passage_tokens(text)
            hit = sum(self.weight(t) for t in terms if t in toks or (substring and len(t) > 1 and t in text))
            out[i] = hit / total
        return out

    def _passage_tokens(self, text: str) -> frozenset[str]:
        toks = self._tokens.get(text)
        if toks is None:
            toks = frozenset(self._tokenizer.documents([text])[0])
            if len(self._tokens) < 200_000:  # bounded memo: a passage is usually reranked for many queries
                self._tokens[text] = toks
        return toks


@dataclass(frozen=True)
class CoverageScorer:
    """``rerank --set scorer=coverage``: a :class:`TermCoverage` fitted on the corpus being searched.

    The rerank step calls :meth:`fit_corpus` with every passage of the corpus (and its language)
    before any :meth:`score`; fitting again on the same texts reuses the fit.
    """

    preset: str = "default"
    name: str = "coverage"
    _state: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.preset not in PRESETS:  # now, not when the first stage has run
            raise UnknownNameError("tokenizer preset", self.preset, PRESETS)

    def config(self) -> dict[str, Any]:
        fitted = self._state.get("fitted")
        return fitted.config() if fitted is not None else {"scorer": self.name, "preset": self.preset}

    def fit_corpus(self, texts: list[str], *, lang: str | None) -> None:
        if lang is None:
            raise FinegrainError("the coverage scorer needs the corpus language", "evaluate a dataset with a language")
        key = (lang, len(texts), hash(tuple(texts)))
        if self._state.get("key") != key:
            self._state["fitted"] = TermCoverage.fit(texts, lang, preset=self.preset)
            self._state["key"] = key

    def score(self, query: str, passages: list[str]) -> np.ndarray:
        fitted = self._state.get("fitted")
        if fitted is None:
            raise FinegrainError("the coverage scorer was not fitted on a corpus",
                                 "call fit_corpus(corpus texts, lang=...) first (rerank does)")
        return fitted.score(query, passages)


__all__ = ["CoverageScorer", "TermCoverage"]
