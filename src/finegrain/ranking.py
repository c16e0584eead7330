"""The one ranking rule.

Every ranked list in finegrain comes from :func:`rank_order`: score descending,
then document id descending, exactly as trec_eval (and pytrec_eval) break ties.
Document ids compare as strings by code point, which is the same order as
trec_eval's ``strcmp`` on their UTF-8 bytes.

A NaN score has no place in that order, so it is refused, never ranked. The
retrievers' top-k cut (:func:`top_k_positions`) refuses +inf too: no retriever
score is infinite, and one that is would win every cut. (``-inf`` sorts last:
a run read from Python may carry it as "no score".)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import numpy as np

from finegrain.arrow_ids import id_array, sort_order, worth_arrow
from finegrain.errors import FinegrainError
from finegrain.native import NATIVE
from finegrain.numbers import INT64_MAX
from finegrain.segments import segments_of


def string_ranks(vocab: Sequence[str]) -> np.ndarray:
    """Position of each string of ``vocab`` in ascending code-point order: sorted by their UTF-8 bytes, which
    is that order, in compiled code (:mod:`finegrain.native`) or, for a large vocabulary without it, by
    Arrow (:mod:`finegrain.arrow_ids`); else by Python."""
    if NATIVE is not None and (got := NATIVE.string_ranks(vocab)) is not None:
        return np.frombuffer(got, dtype=np.int64)
    arr = id_array(vocab) if worth_arrow(len(vocab)) else None
    if arr is not None:
        order = sort_order(arr)
    else:
        order = np.asarray(sorted(range(len(vocab)), key=vocab.__getitem__), dtype=np.int64)
    ranks = np.empty(len(vocab), dtype=np.int64)
    ranks[order] = np.arange(len(vocab), dtype=np.int64)
    return ranks


def rank_order(
    segment: np.ndarray | None,
    scores: np.ndarray,
    doc_codes: np.ndarray,
    vocab: Sequence[str],
    *,
    offsets: np.ndarray | None = None,
) -> np.ndarray:
    """Indices that sort entries by (segment ascending, score descending, doc id descending).

    ``segment`` is the query index of each entry (None when ``offsets`` are given: it is then made only if
    the global sort needs it), ``doc_codes`` index ``vocab``.
    The sort is the same whatever order the entries come in; entries equal in
    all three keys keep their input order.

    When the entries of each segment are contiguous and segments ascend (as in
    a :class:`~finegrain.types.Run`; ``offsets`` gives the segment bounds, or
    they are found), the entries are laid out one row per segment and each
    row is sorted on its own (:func:`_rank_rows`); otherwise one global sort
    (:func:`_rank_global`).
    """
    n = len(scores)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    nan = np.flatnonzero(np.isnan(scores))
    if len(nan):
        raise FinegrainError(f"cannot rank a NaN score (entry {int(nan[0])} of {n})",
                             "every score must be a number; drop or fix that result")
    if offsets is None:
        if segment is None:
            raise ValueError("rank_order needs each entry's segment or the segments' offsets")
        offsets = _contiguous_offsets(np.asarray(segment))
    if offsets is not None:
        counts = np.diff(offsets)
        width = int(counts.max()) if len(counts) else 0
        if len(counts) * width <= 2 * n + 4096:  # padding at most doubles the work
            got = _rank_blocks(np.asarray(offsets, dtype=np.int64), counts, width, scores, doc_codes, vocab)
            if got is not None:
                return got
        if segment is None:
            segment = segments_of(offsets)
    return _rank_global(np.asarray(segment), scores, doc_codes, vocab)


#: Entries per block of the row layout: each block's columns stay in the CPU's cache while it is
#: sorted, where whole columns of tens of millions of entries would stream through memory once per pass.
ROW_BLOCK_ENTRIES = 1 << 16


def _rank_blocks(
    offsets: np.ndarray, counts: np.ndarray, width: int, scores: np.ndarray, doc_codes: np.ndarray,
    vocab: Sequence[str],
) -> np.ndarray | None:
    """:func:`_rank_rows` a block of whole rows at a time (None if a key would overflow)."""
    tie_ranks = _TieRanks(np.asarray(doc_codes), vocab)
    rows = max(1, ROW_BLOCK_ENTRIES // max(width, 1))
    if NATIVE is not None:
        return _rank_blocks_native(offsets, counts, width, scores, tie_ranks, rows)
    if len(counts) <= rows:
        return _rank_rows(offsets, counts, width, scores, doc_codes, tie_ranks)
    parts = []
    for a in range(0, len(counts), rows):
        b = min(a + rows, len(counts))
        lo, hi = int(offsets[a]), int(offsets[b])
        if hi == lo:
            continue  # rows with no entry
        got = _rank_rows(offsets[a : b + 1] - lo, counts[a:b], width, scores[lo:hi], doc_codes[lo:hi], tie_ranks)
        if got is None:
            return None
        got += lo
        parts.append(got)
    return np.concatenate(parts)


def _rank_blocks_native(
    offsets: np.ndarray, counts: np.ndarray, width: int, scores: np.ndarray, tie_ranks: _TieRanks, rows: int,
) -> np.ndarray:
    """The rule of :func:`_rank_rows`, compiled: each block's rows are argsorted by score (numpy), then read
    back in descending order with only the runs of equal scores sorted again, by document id (``rank_rows``):
    they are short, where a second sort of the whole layout is not. The ids' ranks are computed at the
    first such run."""
    values = np.ascontiguousarray(scores, dtype=np.float64)
    out = np.empty(len(values), dtype=np.int64)
    ties = (_EMPTY, _EMPTY)
    for a in range(0, len(counts), rows):
        b = min(a + rows, len(counts))
        lo, hi = int(offsets[a]), int(offsets[b])
        if hi == lo:
            continue  # rows with no entry
        asc = np.argsort(_score_grid(values[lo:hi], counts[a:b], width)[0], axis=1)
        bounds = offsets[a : b + 1]
        if not NATIVE.rank_rows(out[lo:hi], asc, bounds, values, *ties):
            ties = tie_ranks.by_code()
            NATIVE.rank_rows(out[lo:hi], asc, bounds, values, *ties)
    return out


_EMPTY = np.empty(0, dtype=np.int64)


class _TieRanks:
    """Rank of a document code's id among the ids of a run's documents (ascending code-point order), and how
    many: ids are sorted once, when the first tie needs them.

    The vocabulary may be much larger than the run's documents (a dense
    index's whole corpus): then only those documents' ids are sorted.
    """

    def __init__(self, doc_codes: np.ndarray, vocab: Sequence[str]) -> None:
        self._codes = doc_codes
        self._vocab = vocab
        self._ranks: np.ndarray | None = None
        self._present: np.ndarray | None = None
        self._by_code: tuple[np.ndarray, np.ndarray] | None = None

    def by_code(self) -> tuple[np.ndarray, np.ndarray]:
        """``(codes, ranks)``: an int64 index per entry and the rank of each indexed id, such that the rank of
        entry ``i``'s id is ``ranks[codes[i]]``."""
        if self._by_code is None:
            ranks = self._sorted()
            codes = self._codes if self._present is None else np.searchsorted(self._present, self._codes)
            self._by_code = (np.ascontiguousarray(codes, dtype=np.int64), np.ascontiguousarray(ranks))
        return self._by_code

    def __call__(self, codes: np.ndarray) -> tuple[np.ndarray, int]:
        ranks = self._sorted()
        if self._present is None:
            return ranks[codes], len(ranks)
        return ranks[np.searchsorted(self._present, codes)], len(ranks)

    def _sorted(self) -> np.ndarray:
        """The ranks, sorted on first use: of the whole vocabulary, or of the run's documents only
        (``_present``) when the vocabulary is much larger."""
        if self._ranks is None:
            if len(self._codes) * 4 >= len(self._vocab):
                self._ranks = string_ranks(self._vocab)
            else:
                self._present = np.unique(self._codes)
                self._ranks = string_ranks([self._vocab[c] for c in self._present.tolist()])
        return self._ranks


def _contiguous_offsets(segment: np.ndarray) -> np.ndarray | None:
    """Offsets of segments ``0..max`` when ``segment`` is non-decreasing and non-negative, else None."""
    if int(segment[0]) < 0 or (len(segment) > 1 and bool((segment[1:] < segment[:-1]).any())):
        return None
    counts = np.bincount(segment)
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def _rank_rows(
    offsets: np.ndarray, counts: np.ndarray, width: int, scores: np.ndarray, doc_codes: np.ndarray,
    tie_ranks: _TieRanks,
) -> np.ndarray | None:
    """The rule on a ``(segments, width)`` layout: each row sorted on its own (None if a key would overflow).

    1. Rows are sorted by score descending (padding, +inf after negation, last).
    2. Rows with equal neighbouring scores are sorted again on one integer key:
       the score's rank in its row, then the document id descending (padding
       last), then the input position, so equal entries keep their order.
       Document ids are compared only among the documents of those rows.
    """
    values = np.asarray(scores, dtype=np.float64)
    grid, valid = _score_grid(values, counts, width)
    # Ascending sort, read backwards: score descending, padding (-inf) last.
    entry = np.argsort(grid, axis=1)[:, ::-1]
    entry += offsets[:-1, None]  # column -> entry index (padding cells point past their row)
    if valid is not None:
        pad = entry >= offsets[1:, None]
        entry[pad] = 0
        ranked = values[entry]
        ranked[pad] = -np.inf
    else:
        pad = None
        ranked = values[entry]
    same = ranked[:, 1:] == ranked[:, :-1]
    del ranked
    tied_rows = np.flatnonzero(same.any(axis=1))
    if len(tied_rows):
        every = len(tied_rows) == len(counts)
        sub = entry if every else entry[tied_rows]
        sub_same = same if every else same[tied_rows]
        tie, n_tie = tie_ranks(np.asarray(doc_codes)[sub].reshape(-1))
        if width * width * (n_tie + 1) >= 2**62:
            return None
        # key = (score rank in the row, id descending (padding last), position in the row)
        key = np.zeros(sub.shape, dtype=np.int64)
        np.cumsum(~sub_same, axis=1, out=key[:, 1:])
        key *= n_tie + 1
        tie = tie.reshape(sub.shape)
        np.subtract(n_tie - 1, tie, out=tie)
        if pad is not None:
            tie[pad if every else pad[tied_rows]] = n_tie
        key += tie
        del tie
        key *= width
        key += _row_positions(sub, offsets, tied_rows, every)
        resorted = np.take_along_axis(sub, np.argsort(key, axis=1), axis=1)
        if every:
            entry = resorted
        else:
            entry[tied_rows] = resorted
    return entry.reshape(-1) if valid is None else entry[valid]


def _score_grid(values: np.ndarray, counts: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray | None]:
    """``(grid, valid)``: the scores of rows of ``counts`` entries laid out ``(rows, width)``, padding cells -inf
    (``valid`` marks the real cells; None when every row is full and the grid is a view of ``values``)."""
    if bool((counts == width).all()):
        return values.reshape(len(counts), width), None
    grid = np.full((len(counts), width), -np.inf)
    valid = np.arange(width) < counts[:, None]
    grid[valid] = values
    return grid, valid


def _row_positions(sub: np.ndarray, offsets: np.ndarray, rows: np.ndarray, every: bool) -> np.ndarray:
    """Position within its row of each entry index in ``sub`` (padding cells: anything below the width)."""
    starts = offsets[:-1] if every else offsets[rows]
    pos: np.ndarray = sub - starts[:, None]
    np.maximum(pos, 0, out=pos)
    return pos


def _rank_global(segment: np.ndarray, scores: np.ndarray, doc_codes: np.ndarray, vocab: Sequence[str]) -> np.ndarray:
    """The rule as one sort over all entries (any segment layout)."""
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
    nan = next((d for d, v in scores.items() if v != v), None)
    if nan is not None:
        raise FinegrainError(f"cannot rank the NaN score of document {nan!r}",
                             "every score must be a number; drop or fix that result")
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


@overload
def cut_depth(k: int, n: int, what: str = "k") -> int: ...
@overload
def cut_depth(k: None, n: int, what: str = "k") -> None: ...
@overload
def cut_depth(k: int | None, n: int, what: str = "k") -> int | None: ...
def cut_depth(k: int | None, n: int, what: str = "k") -> int | None:
    """The results a cut at ``k`` keeps out of ``n`` candidates: ``k``, or ``n`` when ``k`` is larger (a
    deeper cut is the same cut, and nothing may be allocated for results that cannot exist); None: no cut.

    ``k`` must be a whole number >= 1 within int64 (``what`` names it in the error).
    """
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= INT64_MAX:
        raise FinegrainError(f"{what}={k!r} is not a whole number >= 1 (at most 2^63-1)",
                             f"pass {what}=10, say; a {what} above the number of results keeps them all")
    return min(int(k), n)


def top_k_positions(scores: np.ndarray, docs: np.ndarray, k: int, tie_key: np.ndarray) -> np.ndarray:
    """Positions (into ``scores``) of the ``k`` best entries: higher score first, then higher
    ``tie_key[doc]`` (a document's rank in the id order, so ties cut as the one rule cuts them).

    A partial selection, not a sort: the positions come back unordered. Used by the BM25 and
    dense searches to cut each query's candidates before ranking them; a NaN or +inf score
    is refused (it would win every cut).
    """
    bad = np.flatnonzero(~(scores < np.inf))
    if len(bad):
        i = int(bad[0])
        raise FinegrainError(f"a retriever scored a candidate {float(scores[i])}, which cannot be ranked",
                             "scores must be finite; check the retriever's options (finegrain list retrievers)")
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
