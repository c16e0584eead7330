"""``bm25-okapi-expand``: ``bm25-okapi`` with the members of the query's category words added at a weight.

For a query with category words (:func:`finegrain.retrieve.query.expand.expand_query`:
海鲜 -> 螃蟹, 虾, ...; "fruit" -> apple, ...), a document scores

    BM25(query tokens, d) + weight * BM25(expansion tokens, d)

where the expansion tokens are the members' tokens (the query tokenizer's cut),
each once, less those already in the query. A query without a category word
(or ``weight=0``) scores exactly as ``bm25-okapi``: its results come from the
same search. Threshold, cut and tie rule are ``bm25-okapi``'s
(:meth:`finegrain.retrieve.bm25.BM25.cut`).

A-priori defaults: ``weight=0.5`` (a member counts half as much as a query
word, the original-query weight of RM3's usual interpolation, 0.5), at most
``max_members=20`` members per category word. ``--cv`` tunes ``weight`` over
:data:`WEIGHT_GRID` (0 included, so cross-validation may turn expansion off) and
``max_members`` over :data:`MEMBERS_GRID`; the index is built once for every
grid point (:meth:`ExpandedBM25Retriever.retrieve_grid`).

English expands far more queries than Chinese (WordNet gives most nouns hyponyms), so there a fixed
weight adds more noise, and ``--cv`` may shrink it. Measured figures, a priori and cross-validated,
with the folds' choices and the error tags each setting fixes: ``docs/results/levers.md``
(rows "BM25 + category expansion") and ``docs/results/retrieval.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from finegrain.errors import FinegrainError
from finegrain.lexicons.zh_lexicon import zh_lexicon
from finegrain.retrieve.base import ShardForm
from finegrain.retrieve.bm25 import BM25, finite
from finegrain.retrieve.bm25.retriever import BM25Retriever
from finegrain.retrieve.fusion.hybrid import hybrid_retriever
from finegrain.retrieve.query.expand import DEFAULT_MAX_MEMBERS, check_max_members, expand_query
from finegrain.retrieve.registry import RETRIEVERS
from finegrain.text.tokenizer import get_tokenizer
from finegrain.types import Corpus, Queries, Run

DEFAULT_WEIGHT = 0.5
WEIGHT_GRID: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
MEMBERS_GRID: tuple[int, ...] = (5, 10, 20, 50)
GRID_KEYS: tuple[str, ...] = ("weight", "max_members")


@dataclass(frozen=True)
class ExpandedBM25Retriever(BM25Retriever):
    """:class:`~finegrain.retrieve.bm25.retriever.BM25Retriever` whose queries gain their category members at
    ``weight`` (see the module docstring)."""

    shard_form: ClassVar[ShardForm | None] = None  # the member scores are not sharded: runs whole
    name: str = "bm25-okapi-expand"
    weight: float = DEFAULT_WEIGHT
    max_members: int = DEFAULT_MAX_MEMBERS

    def __post_init__(self) -> None:
        super().__post_init__()
        w = self.weight
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not finite(float(w)) or w < 0:
            raise FinegrainError(f"weight={w!r} is not a finite number >= 0",
                                 f"pass weight={DEFAULT_WEIGHT} (0 turns expansion off)")
        check_max_members(self.max_members)

    def config(self) -> dict[str, Any]:
        """The BM25 parameters, the expansion's, and where the category lexicons come from."""
        return {**super().config(), "expansion": expansion_sources()}

    def retrieve(
        self, corpus: Corpus, queries: Queries, *, lang: str, top_k: int | None, show_progress: bool = True
    ) -> Run:
        return self.retrieve_grid([{}], corpus, queries, lang=lang, top_k=top_k, show_progress=show_progress)[0]

    def retrieve_grid(
        self, settings: Sequence[Mapping[str, Any]], corpus: Corpus, queries: Queries, *, lang: str,
        top_k: int | None, show_progress: bool = True,
    ) -> list[Run]:
        """One run per setting (``{"weight": ..., "max_members": ...}``) for cross-validation: the index is
        built and the unexpanded queries searched once."""
        bad = sorted({key for s in settings for key in s} - set(GRID_KEYS))
        if bad:
            raise FinegrainError(f"{self.name} cannot vary {bad[0]!r} without rebuilding its index",
                                 f"cross-validate only {', '.join(GRID_KEYS)} (fix the others with --set)")
        points = [replace(self, **s) for s in settings]  # validates each setting
        bm = self.build_index(corpus, lang=lang, show_progress=show_progress)
        tok = get_tokenizer(lang, self.tokenizer)
        q_tokens = tok.queries(queries.texts)
        k = top_k if top_k is not None else self.default_k
        plain = bm.search(q_tokens, list(queries.ids), k=k, threshold=self.threshold, ties=self.ties, name=self.name,
                          show_progress=show_progress)
        extra: dict[int, list[list[str]]] = {}  # max_members -> expansion tokens per query
        out = []
        for p in points:
            if p.max_members not in extra:
                extra[p.max_members] = expansion_tokens(queries.texts, q_tokens, lang, tok, p.max_members)
            out.append(_combine(bm, plain, q_tokens, extra[p.max_members], float(p.weight), k, self, self.name))
        return out


def expansion_tokens(texts: Sequence[str], q_tokens: Sequence[Sequence[str]], lang: str, tok: Any,
                     max_members: int) -> list[list[str]]:
    """Per query, the tokens of its category members (tokenized as queries), each once, not in the query."""
    out: list[list[str]] = []
    for text, qt in zip(texts, q_tokens, strict=True):
        terms = expand_query(text, lang, max_members=max_members).terms
        if not terms:
            out.append([])
            continue
        own = set(qt)
        toks = [t for member in tok.queries(list(terms)) for t in member if t.strip() and t not in own]
        out.append(list(dict.fromkeys(toks)))
    return out


def _combine(bm: BM25, plain: Run, q_tokens: Sequence[Sequence[str]], extra: Sequence[Sequence[str]],
             weight: float, k: int | None, b: BM25Retriever, name: str) -> Run:
    """``plain`` with each expanded query's row recomputed as BM25(query) + weight * BM25(expansion)."""
    if weight == 0 or not any(extra):
        return plain
    offsets, codes, values = plain.offsets, plain.doc_codes, plain.values
    rows_d: list[np.ndarray] = []
    rows_v: list[np.ndarray] = []
    for i, (qt, et) in enumerate(zip(q_tokens, extra, strict=True)):
        if not et:
            rows_d.append(codes[offsets[i]:offsets[i + 1]])
            rows_v.append(values[offsets[i]:offsets[i + 1]])
            continue
        sq, se = bm.scores(qt), bm.scores(et)
        docs = np.flatnonzero((sq != 0) | (se != 0))  # the documents holding a query or expansion token
        d, v = bm.cut(docs, sq[docs] + weight * se[docs], k=k, threshold=b.threshold, ties=b.ties)
        rows_d.append(d)
        rows_v.append(v)
    counts = np.fromiter(map(len, rows_d), dtype=np.int64, count=len(rows_d))
    new_offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=new_offsets[1:])
    return Run(plain.qids, new_offsets, _cat(rows_d, np.int64), plain.vocab, _cat(rows_v, np.float64), name=name,
               check=False)


def _cat(rows: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(rows).astype(dtype) if rows else np.empty(0, dtype=dtype)


def expansion_sources() -> dict[str, str]:
    """Where each language's category members come from (provenance; nothing fitted to an evaluation set)."""

    return {"zh": zh_lexicon().note + "; members ordered by jieba dictionary frequency",
            "en": "WordNet 3.0 hyponyms of the word's first noun sense, ordered by SemCor count"}


def expand_retriever(**options: Any) -> ExpandedBM25Retriever:
    """``bm25-okapi-expand``: bm25-okapi (CapRetrieval's BM25) plus weighted category members."""

    return ExpandedBM25Retriever(**RETRIEVERS.check("bm25-okapi-expand", options))


def sparse_expand_hybrid_retriever(**options: Any) -> Any:
    """``hybrid-sparse-expand``: ``hybrid-sparse`` with ``bm25-okapi-expand`` in place of ``bm25-okapi``
    (RRF k=60, equal weights; every hybrid option applies, ``--cv`` tunes the fusion weights and k, and
    ``--set bm25-okapi-expand.weight=W`` fixes the expansion weight, else its a-priori 0.5)."""

    checked = RETRIEVERS.check("hybrid-sparse-expand", options)
    built = hybrid_retriever(**{"parts": ("bm25-okapi-expand", "e5", "e5-sparse"), **checked})
    return dataclasses.replace(built, name="hybrid-sparse-expand")


__all__ = ["DEFAULT_WEIGHT", "MEMBERS_GRID", "WEIGHT_GRID", "ExpandedBM25Retriever", "expand_retriever",
           "expansion_tokens", "sparse_expand_hybrid_retriever"]
