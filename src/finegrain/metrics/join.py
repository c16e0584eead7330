"""A run joined to its qrels over one query universe: the arrays every metric reads.

:func:`join` ranks the run once (``Run.order``, the one ranking rule), keeps
the entries of queries in the universe, and looks up the grade of every ranked
entry in its own query's judgements (compiled: the judgements mapped into the
run's vocabulary, each query's judgements mark their documents in a table by
document code; in Python: the run mapped into the qrels' vocabulary, an
integer key ``query * V + doc`` and ``np.searchsorted``); an unjudged entry has
grade 0 and ``judged`` False (a judged 0 has ``judged`` True). Nothing here
loops over queries in Python.

The universe is the qrels' queries, or an explicit list (``--queries``). A
universe query absent from the run has an empty prediction; a run query outside
the universe is ignored and counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import repeat

import numpy as np

from finegrain.errors import check_unique_ids
from finegrain.native import NATIVE
from finegrain.segments import positions_of, segments_of
from finegrain.types import Qrels, Run


@dataclass(frozen=True, eq=False)
class Joined:
    """Ranked run entries with their grades, over a universe of ``U`` queries.

    Entry arrays (``seg``, ``rank``, ``grade``) follow ranked order; the entries
    of one query are contiguous (a block) and ranks within it run 0, 1, 2, ...
    ``seg`` and ``rank`` of every entry are made when first asked for; most
    metrics read them for the relevant entries only (:meth:`located`).
    """

    qids: tuple[str, ...]  # the universe, in order
    in_run: np.ndarray  # bool[U]: the query is in the run (possibly with no result)
    n_returned: np.ndarray  # int64[U]: results the run returned (0 if absent)
    block_seg: np.ndarray  # int64[B]: universe index of each block of ranked entries (one run query's)
    block_start: np.ndarray  # int64[B + 1]: where each block starts among the ranked entries
    grade: np.ndarray  # int64[n]: qrels grade of the entry, 0 when unjudged
    judged: np.ndarray  # bool[n]: the qrels judge the entry (any grade, 0 and negative included)
    judged_seg: np.ndarray  # int64[m]: universe index of each judgement
    judged_grade: np.ndarray  # int64[m]: its grade
    n_ignored_run_queries: int  # run queries outside the universe
    _memo: dict[int, np.ndarray] = field(default_factory=dict, repr=False)  # n_relevant by rel
    _ideal: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)
    _entries: dict[tuple[int, int | None], np.ndarray] = field(default_factory=dict, repr=False)  # hit_entries
    _counts: dict[int | None, tuple[np.ndarray, np.ndarray] | None] = field(default_factory=dict, repr=False)
    _located: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)
    _columns: dict[str, np.ndarray] = field(default_factory=dict, repr=False)  # seg, rank

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    @property
    def seg(self) -> np.ndarray:
        """int64[n]: universe index of each ranked entry (read-only; made on first use)."""
        if "seg" not in self._columns:
            self._columns["seg"] = _ro(self.block_seg[segments_of(self.block_start)])
        return self._columns["seg"]

    @property
    def rank(self) -> np.ndarray:
        """int64[n]: 0-based rank of each ranked entry within its query (read-only; made on first use)."""
        if "rank" not in self._columns:
            self._columns["rank"] = _ro(positions_of(self.block_start))
        return self._columns["rank"]

    def located(self, entries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(seg, rank)`` of the ranked entries ``entries`` (a boolean mask, or ascending positions as
        :meth:`hit_entries` gives), without making them for every entry: each position's block is found
        by a search of the block starts. Kept for the arrays :meth:`hit_entries` gives."""
        got = self._located.get(id(entries))
        if got is not None and got[0] is entries:
            return got[1], got[2]
        if "seg" in self._columns and "rank" in self._columns:
            return self._columns["seg"][entries], self._columns["rank"][entries]
        positions = np.flatnonzero(entries) if entries.dtype == bool else entries
        block = np.searchsorted(self.block_start, positions, side="right") - 1
        return self.block_seg[block], positions - self.block_start[block]

    def n_relevant(self, rel: int = 1) -> np.ndarray:
        """Judged items with grade >= ``rel``, per universe query (int64[U], read-only)."""
        if rel not in self._memo:
            table = self.grade_counts(rel)
            if table is not None:
                counts = table[0].sum(axis=1)
            else:
                counts = np.bincount(self.judged_seg[self.judged_grade >= rel], minlength=self.n_queries)
            self._memo[rel] = _ro(counts.astype(np.int64))
        return self._memo[rel]

    def ideal(self, rel: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Judgements with grade >= ``rel`` in the ideal ranking: ``(seg, grade, rank)`` sorted by query,
        grade descending (``rank`` 0-based within the query)."""
        if rel not in self._ideal:
            keep = self.judged_grade >= rel
            seg, grade = self.judged_seg[keep], self.judged_grade[keep]
            if len(seg):
                lo, hi = int(grade.min()), int(grade.max())
                span = hi - lo + 1
                if span <= 1 << 16 and self.n_queries < (2**62) // span:
                    packed = seg * span
                    packed += hi - grade
                    packed.sort()
                    seg, grade = packed // span, hi - packed % span
                else:
                    order = np.lexsort((-grade, seg))
                    seg, grade = seg[order], grade[order]
                start = np.flatnonzero(np.concatenate(([True], seg[1:] != seg[:-1])))
                rank = np.arange(len(seg)) - np.repeat(start, np.diff(np.append(start, len(seg))))
            else:
                rank = np.zeros(0, dtype=np.int64)
            self._ideal[rel] = (_ro(seg), _ro(grade), _ro(rank))
        return self._ideal[rel]

    def grade_counts(self, rel: int = 1) -> tuple[np.ndarray, np.ndarray] | None:
        """``(counts, grades)``: how many judgements of each query have each grade >= ``rel`` (int64[U, G], one
        column per distinct grade, grades descending: ``grades``, float64[G]), read-only; None when the
        table would be much larger than the judgements (many distinct grades), where :meth:`ideal` sorts.

        One table for every ``rel`` (its first columns), counted once with no mask over the judgements."""
        if not self._counts:
            seg, grade = self.judged_seg, self.judged_grade
            got: tuple[np.ndarray, np.ndarray] | None = (np.zeros((self.n_queries, 0), dtype=np.int64),
                                                          np.zeros(0, dtype=np.int64))
            if len(seg):
                lo, hi = int(grade.min()), int(grade.max())
                if hi - lo < 64:  # grades as offsets below the top one: no sort
                    grades = np.arange(hi, lo - 1, -1, dtype=np.int64)
                    column = hi - grade
                else:
                    grades, column = np.unique(-grade, return_inverse=True)
                    grades = -grades
                G = len(grades)
                if self.n_queries * G <= max(1 << 20, 4 * len(seg)):
                    key = seg * G
                    key += column
                    got = (np.bincount(key, minlength=self.n_queries * G).reshape(self.n_queries, G), grades)
                else:
                    got = None
            self._counts[None] = got
        table = self._counts[None]
        if table is None:
            return None
        if rel not in self._counts:
            counts, grades = table
            n = int(np.count_nonzero(grades >= rel))  # grades descend: the first n columns
            self._counts[rel] = (_ro(counts[:, :n]), _ro(grades[:n].astype(np.float64)))
        return self._counts[rel]

    def hits(self, rel: int = 1, k: int | None = None) -> np.ndarray:
        """Boolean mask of ranked entries that are relevant (grade >= ``rel``) and within the top ``k``."""
        mask = np.zeros(len(self.grade), dtype=bool)
        mask[self.hit_entries(rel, k)] = True
        return mask

    def hit_entries(self, rel: int = 1, k: int | None = None) -> np.ndarray:
        """Positions (ascending) of the ranked entries that are relevant (grade >= ``rel``) and within the top
        ``k``, read-only (:meth:`hits` is the same selection as a mask).

        Indexing with them reads the same entries in the same order as the mask
        does, but a metric then works on the relevant entries only (a few in a
        ranking), not on every ranked entry. Kept per ``(rel, k)``: the metrics
        of one evaluation share them.
        """
        key = (rel, k)
        if key not in self._entries:
            if (rel, None) not in self._entries:
                self._keep((rel, None), np.flatnonzero(self.grade >= rel))
            if k is not None:
                relevant = self._entries[rel, None]
                seg, rank = self.located(relevant)
                within = rank < k
                self._keep(key, relevant[within], seg[within], rank[within])
        return self._entries[key]

    def _keep(self, key: tuple[int, int | None], entries: np.ndarray, seg: np.ndarray | None = None,
              rank: np.ndarray | None = None) -> None:
        """Keep ``entries`` as :meth:`hit_entries` ``key``, with where they are for :meth:`located`."""
        self._entries[key] = _ro(entries)
        if seg is None or rank is None:
            seg, rank = self.located(entries)
        self._located[id(entries)] = (entries, _ro(seg), _ro(rank))

    def count(self, mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Per-query sum of ``weights`` (or count) over the entries selected by ``mask`` (a boolean mask, or
        ascending positions as :meth:`hit_entries` gives) (float64[U])."""
        w = None if weights is None else weights[mask]
        return np.bincount(self.located(mask)[0], weights=w, minlength=self.n_queries).astype(np.float64)

    def before(self, values: np.ndarray) -> np.ndarray:
        """For every ranked entry, the sum of ``values`` (one per entry; a bool mask counts) over the entries
        of its query ranked above it: int64 for a mask, float64 otherwise."""
        v = values.astype(np.int64) if values.dtype == bool else np.asarray(values, dtype=np.float64)
        n = len(self.seg)
        if not n:
            return v
        upto = np.cumsum(v)  # up to and including each entry, over all queries
        start = np.flatnonzero(np.concatenate(([True], self.seg[1:] != self.seg[:-1])))
        base = upto[start] - v[start]  # the sum over earlier queries
        group = np.repeat(np.arange(len(start)), np.diff(np.append(start, n)))
        out: np.ndarray = upto - v - base[group]
        return out

    def first_rank(self, mask: np.ndarray) -> np.ndarray:
        """0-based rank of the first entry selected by ``mask`` (a boolean mask, or ascending positions) per
        query; -1 when there is none."""
        out = np.full(self.n_queries, -1, dtype=np.int64)
        seg, rank = self.located(mask)
        if len(seg):
            first = np.flatnonzero(np.concatenate(([True], seg[1:] != seg[:-1])))
            out[seg[first]] = rank[first]
        return out


def universe_of(qrels: Qrels, queries: Iterable[str] | None) -> tuple[str, ...]:
    """The query universe: ``queries`` if given (ids must be unique), else the qrels' queries."""
    if queries is None:
        return qrels.qids
    ids = tuple(queries)
    check_unique_ids(ids, "query id", " in the query list")
    return ids


def join(qrels: Qrels, run: Run, queries: Iterable[str] | None = None) -> Joined:
    """Join ``run`` to ``qrels`` over the universe (``queries``, default the qrels' queries)."""
    qids = universe_of(qrels, queries)
    U = len(qids)
    run_u = _universe_index(run.qids, qids)
    qrels_u = _universe_index(qrels.qids, qids)

    kept = run_u >= 0
    all_kept = bool(kept.all())
    in_run = np.zeros(U, dtype=bool)
    in_run[run_u[kept]] = True
    counts = run.counts()
    n_returned = np.zeros(U, dtype=np.int64)
    n_returned[run_u[kept]] = counts[kept]

    # Ranked entries of the run, a block per run query in the universe (Run.order never moves an entry out
    # of its query): the entries' positions within blocks are their ranks.
    order = run.order
    if all_kept:
        block_seg, entries = run_u, order
        block_start = run.offsets
    else:
        block_seg = run_u[kept]
        block_start = np.concatenate(([0], np.cumsum(counts[kept]))).astype(np.int64)
        entries = order[np.repeat(kept, counts)]

    # Judgements of universe queries.
    if _is_identity(qrels_u, U):
        jseg, jdocs, jgrade = qrels.segments, qrels.doc_codes, qrels.values
    else:
        jseg = qrels_u[qrels.segments]
        jkeep = jseg >= 0
        jseg, jdocs, jgrade = jseg[jkeep], qrels.doc_codes[jkeep], qrels.values[jkeep]

    grade, judged = _lookup_grades(block_seg, block_start, entries, run, jseg, jdocs, jgrade, qrels)
    return Joined(
        qids=qids,
        in_run=_ro(in_run),
        n_returned=_ro(n_returned),
        block_seg=_ro(np.array(block_seg, dtype=np.int64)),
        block_start=_ro(np.array(block_start, dtype=np.int64)),
        grade=_ro(grade),
        judged=_ro(judged),
        judged_seg=_ro(jseg),
        judged_grade=_ro(np.asarray(jgrade, dtype=np.int64)),
        n_ignored_run_queries=int((~kept).sum()),
    )


def _universe_index(ids: tuple[str, ...], universe: tuple[str, ...]) -> np.ndarray:
    """Universe index of each of ``ids`` (-1 outside it)."""
    if ids is universe or ids == universe:
        return np.arange(len(ids), dtype=np.int64)
    uindex = dict(zip(universe, range(len(universe))))
    return np.fromiter(map(uindex.get, ids, repeat(-1)), dtype=np.int64, count=len(ids))


def _is_identity(index: np.ndarray, size: int) -> bool:
    return len(index) == size and bool((index == np.arange(size)).all())


def _lookup_grades(
    block_seg: np.ndarray,
    block_start: np.ndarray,
    entries: np.ndarray,
    run: Run,
    jseg: np.ndarray,
    jdocs: np.ndarray,
    jgrade: np.ndarray,
    qrels: Qrels,
) -> tuple[np.ndarray, np.ndarray]:
    """Grade of each ranked entry (run entry ``entries[i]``, of the universe query of its block; 0 if
    unjudged) and whether it is judged."""
    n = len(entries)
    if n == 0 or len(jseg) == 0:
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    jrun = _in_run_vocab(jdocs, qrels, run) if NATIVE is not None else None
    got = None if jrun is None else NATIVE.judged_grades(
        _int64(jseg), jrun, _int64(jgrade), _int64(block_seg), _int64(block_start), _int64(entries),
        _int64(run.doc_codes), len(run.vocab), int(max(block_seg.max(), jseg.max())) + 1)
    if got is not None:  # each query's judgements marked their documents (run codes); each entry was one read
        return np.frombuffer(got[0], dtype=np.int64), np.frombuffer(got[1], dtype=bool)
    seg = block_seg[segments_of(block_start)]
    docs = run.doc_codes[entries]
    # In the qrels' vocabulary: key ``seg * V + doc``, one search.
    V = len(qrels.vocab)
    to_qrels = qrels.codes_of(run.vocab)
    jkey, jgrade_sorted = _sorted_judgements(jseg * V + jdocs, np.asarray(jgrade, dtype=np.int64))
    if to_qrels is None:  # the same vocabulary
        rkey = seg * V
        rkey += docs
    else:
        qdoc = to_qrels[docs]
        rkey = seg * V
        rkey += qdoc
        rkey[qdoc < 0] = -1  # the qrels never name the document: no key matches
    pos = _search_blocks(jkey, rkey, seg, V)
    np.minimum(pos, len(jkey) - 1, out=pos)
    judged = jkey[pos] == rkey
    grade = jgrade_sorted[pos]
    grade[~judged] = 0
    return grade, judged


def _in_run_vocab(jdocs: np.ndarray, qrels: Qrels, run: Run) -> np.ndarray | None:
    """The judgements' documents as codes of the run's vocabulary (-1 where the run never names one), or None
    when the compiled lookup cannot tell (ids other than str, or an id twice in the run's vocabulary, whose
    every code must then match: the search below maps the run into the qrels instead)."""
    if run.vocab is qrels.vocab or run.vocab == qrels.vocab:
        return _int64(jdocs)
    found = NATIVE.index_in(run.vocab, qrels.vocab, True)
    return None if found is None else _int64(np.frombuffer(found, dtype=np.int64)[jdocs])


#: Run entries looked up per block: a block's keys fall in a narrow slice of the judgements (entries
#: come query by query), which stays in the CPU's cache while the block is searched.
SEARCH_BLOCK_ENTRIES = 1 << 16


def _search_blocks(jkey: np.ndarray, rkey: np.ndarray, seg: np.ndarray, V: int) -> np.ndarray:
    """``np.searchsorted(jkey, rkey)`` for the keys that can be found (``seg * V`` up to ``(seg + 1) * V``),
    a block of entries at a time, in the slice of ``jkey`` their queries' keys fall in."""
    n = len(rkey)
    if n <= SEARCH_BLOCK_ENTRIES:
        return np.searchsorted(jkey, rkey)
    pos = np.empty(n, dtype=np.int64)
    for a in range(0, n, SEARCH_BLOCK_ENTRIES):
        b = min(a + SEARCH_BLOCK_ENTRIES, n)
        block = seg[a:b]
        lo, hi = np.searchsorted(jkey, [int(block.min()) * V, (int(block.max()) + 1) * V])
        np.add(np.searchsorted(jkey[lo:hi], rkey[a:b]), lo, out=pos[a:b])
    return pos


def _int64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)


def _sorted_judgements(key: np.ndarray, grade: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``key`` sorted and ``grade`` in the same order; one sort of ``key * G + grade`` when that fits."""
    lo, hi = int(grade.min()), int(grade.max())
    span = hi - lo + 1
    if span <= 1 << 16 and int(key.max()) < (2**62) // span:
        packed = key * span
        packed += grade - lo
        packed.sort()
        return packed // span, packed % span + lo
    by_key = np.argsort(key)
    return key[by_key], grade[by_key]


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a
