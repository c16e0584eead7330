"""The one ranking rule.

Every ranked list in finegrain comes from :func:`rank_order`: score descending,
then document id descending, exactly as trec_eval (and pytrec_eval) break ties.
Document ids compare as strings by code point, which is the same order as
trec_eval's ``strcmp`` on their UTF-8 bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def string_ranks(vocab: Sequence[str]) -> np.ndarray:
    """Position of each string of ``vocab`` in ascending code-point order."""
    order = sorted(range(len(vocab)), key=vocab.__getitem__)
    ranks = np.empty(len(vocab), dtype=np.int64)
    ranks[np.asarray(order, dtype=np.int64)] = np.arange(len(vocab), dtype=np.int64)
    return ranks


def rank_order(
    segment: np.ndarray, scores: np.ndarray, doc_codes: np.ndarray, vocab: Sequence[str]
) -> np.ndarray:
    """Indices that sort entries by (segment ascending, score descending, doc id descending).

    ``segment`` is the query index of each entry, ``doc_codes`` index ``vocab``.
    The sort is the same whatever order the entries come in.
    """
    if len(scores) == 0:
        return np.empty(0, dtype=np.int64)
    doc_rank = string_ranks(vocab)[doc_codes]
    # One integer key (segment, score rank descending, doc rank descending) sorts
    # several times faster than a three-key lexsort; same order, same stability.
    distinct, score_rank = np.unique(scores, return_inverse=True)
    n_s, n_v = len(distinct), max(len(vocab), 1)
    n_seg = int(segment.max()) + 1 if len(segment) else 1
    if int(segment.min()) >= 0 and n_seg * n_s * n_v < 2**63:
        seg64 = np.asarray(segment, dtype=np.int64)
        key = seg64 * (n_s * n_v) + (n_s - 1 - score_rank.reshape(-1).astype(np.int64)) * n_v + (n_v - 1 - doc_rank)
        return np.argsort(key, kind="stable")
    # lexsort: last key is primary.
    return np.lexsort((-doc_rank, -scores, segment))


def rank_docs(scores: dict[str, float]) -> list[str]:
    """Rank one query's ``{doc_id: score}`` by the same rule (for small, pure-Python uses)."""
    return sorted(scores, key=lambda d: (-scores[d], _Desc(d)))


class _Desc:
    """Wraps a string so that sorting ascending orders it descending."""

    __slots__ = ("s",)

    def __init__(self, s: str) -> None:
        self.s = s

    def __lt__(self, other: _Desc) -> bool:
        return self.s > other.s

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.s == other.s


def top_k_positions(scores: np.ndarray, docs: np.ndarray, k: int, tie_key: np.ndarray) -> np.ndarray:
    """Positions (into ``scores``) of the ``k`` best entries: higher score first, then higher
    ``tie_key[doc]`` (a document's rank in the id order, so ties cut as the one rule cuts them).

    A partial selection, not a sort: the positions come back unordered. Used by the BM25 and
    dense searches to cut each query's candidates before ranking them.
    """
    n = len(scores)
    if n <= k:
        return np.arange(n)
    kth = scores[np.argpartition(scores, n - k)[n - k]]
    above = np.flatnonzero(scores > kth)
    tied = np.flatnonzero(scores == kth)
    need = k - len(above)
    if len(tied) > need:
        tied = tied[np.argsort(-tie_key[docs[tied]], kind="stable")[:need]]
    return np.concatenate([above, tied])
