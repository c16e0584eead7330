"""Pooling: the union of several systems' top ``depth`` per query, ordered for judging.

TREC-style pooling (DuReader_retrieval §2.3: the top results of several
contributing retrievers are pooled and judged by people, which turned many
"negatives" into relevant passages). For every query:

- the pool is the union of each run's top ``depth`` (ranks from the one
  ranking rule, :mod:`finegrain.ranking`);
- each item records how many systems retrieved it (``n_systems``), its best
  1-based rank over them (``best_rank``) and which systems (in the given
  order);
- ``grade`` is the judgement the qrels already have (any grade, 0 included),
  ``None`` when unjudged; with ``fully_judged`` qrels (a dataset that judges
  every pair and lists only its relevant ones, like CapRetrieval) an unlisted
  item is a judged 0;
- items are ordered for judging query by query (queries in the first run's
  order): more systems first, then better best rank, then a shuffle of the
  remaining ties drawn from ``seed``. The shuffle draws one number per item in
  (query, doc id) order, so the same runs and seed give the same pool whatever
  the order of the runs.

:func:`pool_table` does the work on arrays (no loop over queries or items: a
sorted 64-bit key per retrieved entry, queries in blocks of a few million
entries) and returns a :class:`PoolTable`; :func:`pool_runs` turns it into
the :class:`~finegrain.build.pool_file.Pool` that
:func:`~finegrain.build.pool_file.write_pool` writes; :func:`pool_results`
reads ``finegrain eval`` folders (or run files), the dataset's qrels and texts
first. :func:`summarise` is what ``finegrain pool`` prints.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from finegrain.build.pool_file import DEFAULT_GRADES, Pool, PoolItem
from finegrain.datasets import load_dataset
from finegrain.errors import FinegrainError
from finegrain.io.files import read_qrels_file, read_run_file
from finegrain.ranking import string_ranks
from finegrain.results.files import RESULTS_FILE, read_saved_run
from finegrain.results.saved import SavedResults
from finegrain.types import Qrels, Run
from finegrain.version import __version__

_BLOCK_ENTRIES = 4_000_000  # retrieved entries sorted at once (memory ~ 40 bytes each)

Source = str | os.PathLike[str] | Run


# --------------------------------------------------------------------------- the columnar pool


@dataclass(frozen=True, eq=False)
class PoolTable:
    """A pool as columns in judging order (item ``i`` is row ``i`` of every array).

    ``members[i, w]`` has bit ``s % 64`` of word ``w = s // 64`` set when system
    ``s`` has the item in its top ``depth``. ``grade`` is meaningful where
    ``judged``.
    """

    qids: tuple[str, ...]  # the query universe, in order
    doc_ids: tuple[str, ...]  # every pooled document id, in code-point order
    systems: tuple[str, ...]
    depth: int
    seed: int
    query: np.ndarray  # int32[n]: index into qids
    doc: np.ndarray  # int32[n] (int64 past 2**31 documents): index into doc_ids
    n_systems: np.ndarray  # int32[n]
    best_rank: np.ndarray  # int32[n], 1-based
    members: np.ndarray  # uint64[n, ceil(S / 64)]
    grade: np.ndarray  # int64[n]
    judged: np.ndarray  # bool[n]

    def __post_init__(self) -> None:
        for name in ("query", "doc", "n_systems", "best_rank", "members", "grade", "judged"):
            getattr(self, name).setflags(write=False)

    def __len__(self) -> int:
        return len(self.query)

    def system_mask(self, s: int) -> np.ndarray:
        """Items system ``s`` retrieved (bool[n])."""
        word = self.members[:, s // 64]
        return np.asarray((word >> np.uint64(s % 64)) & np.uint64(1) == 1, dtype=bool)

    def unique_counts(self) -> np.ndarray:
        """Per system, the items no other system retrieved (int64[S])."""
        alone = self.n_systems == 1
        return np.array([int((self.system_mask(s) & alone).sum()) for s in range(len(self.systems))], dtype=np.int64)

    def items(self) -> tuple[PoolItem, ...]:
        """The :class:`PoolItem` s, numbered in judging order."""
        if not len(self):
            return ()
        # each distinct membership row decoded once: its bits, little-endian, are the systems in order
        rows, inverse = _distinct_rows(self.members)
        bits = np.unpackbits(rows.astype("<u8").view(np.uint8).reshape(len(rows), -1), axis=1, bitorder="little")
        row, col = np.nonzero(bits[:, : len(self.systems)])
        bounds = np.searchsorted(row, np.arange(len(rows) + 1)).tolist()
        cols, systems = col.tolist(), self.systems
        names = [tuple(map(systems.__getitem__, cols[a:b])) for a, b in zip(bounds[:-1], bounds[1:])]
        qids, docs = self.qids, self.doc_ids
        grades: list[int | None] = self.grade.tolist()
        for i in np.flatnonzero(~self.judged).tolist():
            grades[i] = None
        columns = ([qids[q] for q in self.query.tolist()], [docs[d] for d in self.doc.tolist()], range(len(self)),
                   self.n_systems.tolist(), self.best_rank.tolist(), [names[k] for k in inverse.tolist()], grades)
        collecting = gc.isenabled()
        gc.disable()  # millions of new objects and no cycle among them: the collector would only rescan them
        try:
            return tuple(map(PoolItem, *columns))
        finally:
            if collecting:
                gc.enable()


def pool_table(
    runs: Sequence[Run],
    *,
    depth: int,
    qrels: Qrels | None = None,
    seed: int = 0,
    names: Sequence[str] | None = None,
    fully_judged: bool = False,
    _block_entries: int = _BLOCK_ENTRIES,
) -> PoolTable:
    """Pool the top ``depth`` of every run per query (see the module docstring), as columns.

    ``names`` are the systems' names (default: the runs' names, made unique
    with ``#2``, ``#3``, ...). ``fully_judged``: the qrels judge every pair,
    so an item they do not list is a judged 0. Errors: no run, a run with no result, ``depth`` < 1,
    runs over different query sets (naming both runs and a query only one has).
    """
    runs = list(runs)
    systems = _check(runs, depth, seed, names)
    S = len(runs)
    qids = runs[0].qids
    U = len(qids)
    uindex = {q: i for i, q in enumerate(qids)}

    cuts = [_Cut(run, uindex, depth) for run in runs]
    doc_ids, luts = _global_docs(cuts)
    bits = _Bits(U, len(doc_ids), S, depth)
    judged_keys, judged_grades = _judgements(qrels, uindex, doc_ids, bits)

    per_query = np.zeros(U, dtype=np.int64)
    for c in cuts:
        per_query += c.lens
    rng = np.random.default_rng(seed)
    columns: list[list[np.ndarray]] = [[] for _ in range(7)]
    start = 0
    while start < U:
        # a block of queries holding about _block_entries entries (at least one query)
        n = int(np.searchsorted(np.cumsum(per_query[start:]), _block_entries, side="right"))
        end = min(U, start + max(1, n), start + bits.max_block)
        for column, part in zip(columns, _pool_block(cuts, luts, start, end, bits, rng, judged_keys, judged_grades)):
            column.append(part)
        start = end
    query, doc, n_sys, best, grade, judged, members = (_concat(columns, i) for i in range(7))
    if fully_judged and qrels is not None:
        judged[:] = True  # unlisted: a true 0 (grade is already 0 there)
    return PoolTable(qids, doc_ids, systems, depth, seed, query, doc, n_sys, best, members, grade, judged)


def pool_runs(
    runs: Sequence[Run],
    *,
    depth: int,
    qrels: Qrels | None = None,
    seed: int = 0,
    queries: Mapping[str, Any] | None = None,
    corpus: Mapping[str, Any] | None = None,
    dataset: Any = None,
    lang: str | None = None,
    grades: Sequence[int] | None = None,
    names: Sequence[str] | None = None,
    fully_judged: bool = False,
    provenance: Mapping[str, Any] | None = None,
) -> Pool:
    """Pool the top ``depth`` of ``runs`` per query into a :class:`Pool` ready for :func:`write_pool`.

    ``qrels`` marks what is already judged. ``queries`` and ``corpus`` (a
    :class:`~finegrain.types.Queries` / :class:`~finegrain.types.Corpus`, or
    ``{id: text}``) give the texts the pool embeds for its judging page.
    ``dataset`` is a dataset name for the header, or a loaded
    :class:`~finegrain.datasets.registry.Dataset`, which also supplies qrels,
    queries, corpus, language and ``fully_judged`` (from its meta) where those
    are not given. ``fully_judged``: see :func:`pool_table`. ``grades`` is the
    judging scale (default: 0 up to the qrels' top grade, at least 0, 1;
    without qrels CapRetrieval's 0, 1, 2).
    """
    name = dataset
    if dataset is not None and not isinstance(dataset, str):
        name = getattr(dataset, "name", None)
        qrels = dataset.qrels if qrels is None else qrels
        queries = dataset.queries if queries is None else queries
        corpus = dataset.corpus if corpus is None else corpus
        lang = lang or getattr(dataset, "lang", None)
        fully_judged = fully_judged or (qrels is dataset.qrels and bool(dataset.meta.get("fully_judged", False)))
    table = pool_table(runs, depth=depth, qrels=qrels, seed=seed, names=names, fully_judged=fully_judged)
    items = table.items()
    pooled_qids = dict.fromkeys(it.qid for it in items)
    pooled_docs = dict.fromkeys(it.doc_id for it in items)
    return Pool(
        items=items, depth=depth, systems=table.systems, seed=seed, dataset=name, lang=lang,
        grades=_grades(grades, qrels), queries=_texts(queries, pooled_qids), texts=_texts(corpus, pooled_docs),
        provenance={"n_queries": len(table.qids), "fully_judged": fully_judged, **dict(provenance or {})},
    )


def pool_results(
    sources: Iterable[Source],
    *,
    depth: int,
    qrels: Qrels | str | os.PathLike[str] | None = None,
    seed: int = 0,
    texts: bool = True,
    lang: str | None = None,
    grades: Sequence[int] | None = None,
    settings: Any = None,
) -> Pool:
    """Pool the top ``depth`` of several systems per query, in judging order (``finegrain.pool``).

    Items retrieved by more systems come first, then better best rank, then a seeded shuffle of the
    remaining ties. A folder's run is completed with the queries its ``results.json`` scored and the run
    file could not hold (a query with no result has no TREC line). What could not be loaded is listed in
    ``pool.provenance["warnings"]``.

    Args:
        sources: ``finegrain eval`` results folders, run files (TREC, ``run.jsonl``, ranx JSON, Parquet) or
            ``Run`` objects, one per system.
        depth: How many of each system's top results to pool per query.
        qrels: The judgements already made (a ``Qrels`` or a file); default: the qrels of the dataset the
            folders' ``results.json`` name, when it loads.
        seed: The seed of the shuffle of ties, so that the same runs give the same pool in any order.
        texts: Embed the query and passage texts of the dataset, for the judging page.
        lang: The language of the texts (default: the dataset's).
        grades: The grade scale of the judging page (default 0, 1, 2).
        settings: Where the data root is (default: from the environment).

    Returns:
        A frozen ``Pool``: its ``items`` in judging order, each with the systems that retrieved it, its best
        rank and the grade the qrels already have (``None``: unjudged). ``write_pool`` saves it for
        ``finegrain judge``.

    Raises:
        FinegrainError: No source, a source that cannot be read, a depth below 1, or two systems of the
            same name.

    Examples:
        >>> from finegrain import Qrels, Run, pool
        >>> qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 0}})
        >>> bm25 = Run.from_dict({"q1": {"d1": 0.9, "d2": 0.5}}, name="bm25")
        >>> e5 = Run.from_dict({"q1": {"d3": 1.0}}, name="e5")
        >>> [(item.doc_id, item.systems, item.grade) for item in pool([bm25, e5], depth=10, qrels=qrels).items]
        [('d3', ('e5',), None), ('d1', ('bm25',), 2), ('d2', ('bm25',), 0)]
    """

    loaded = [_load_source(s) for s in sources]
    if not loaded:
        raise FinegrainError("no run to pool", "give two or more results folders written by 'finegrain eval -o DIR'")
    names = _unique([sr.name for sr in loaded], [sr.fallback for sr in loaded])
    dataset = _one_dataset(loaded)
    warnings: list[str] = []
    qrels_obj: Qrels | None = None
    qrels_source: str | None = None
    if qrels is not None:
        qrels_obj, qrels_source = _read_qrels(qrels)
    ds = None
    if dataset is not None and (qrels_obj is None or texts):
        ds, problem = _load_dataset(dataset, lang, settings)
        if problem:
            lost = (["no judged marks (give --qrels)"] if qrels_obj is None else []) + (
                ["query texts from results.json only, no passage texts"] if texts else [])
            warnings.append(f"dataset {dataset!r} did not load ({problem}): {'; '.join(lost)}")
    fully_judged = False
    if qrels_obj is None and ds is not None:
        qrels_obj, qrels_source = ds.qrels, f"{dataset}'s qrels"
        fully_judged = bool(ds.meta.get("fully_judged", False))
    if qrels_obj is None and dataset is None:
        warnings.append("no qrels: every item is unjudged (give --qrels to mark what is judged)")
    if texts and dataset is None:
        warnings.append("no passage texts: no results.json names a dataset (pool folders of 'finegrain eval')")
    queries: Mapping[str, Any] | None = None
    corpus: Mapping[str, Any] | None = None
    if texts:
        if ds is not None:
            queries, corpus = ds.queries, ds.corpus
        else:
            queries = {q: r.text for sr in loaded if sr.results is not None for q, r in sr.results.queries.items()
                       if r.text}
    provenance = {
        "finegrain_version": __version__,
        "runs": [{"system": n, **sr.describe()} for n, sr in zip(names, loaded)],
        "qrels": qrels_source,
        "fully_judged": fully_judged,
        "warnings": warnings,
    }
    return pool_runs(
        [sr.run for sr in loaded], depth=depth, qrels=qrels_obj, seed=seed, queries=queries, corpus=corpus,
        dataset=dataset, lang=lang or (ds.lang if ds is not None else _saved_lang(loaded)), grades=grades,
        names=names, fully_judged=fully_judged, provenance=provenance,
    )


#: ``finegrain.pool``: runs, results folders or run files in, a :class:`Pool` out.
pool = pool_results


# --------------------------------------------------------------------------- the summary


@dataclass(frozen=True)
class PoolSummary:
    """What a pool holds, in numbers (``finegrain pool`` prints :meth:`lines`)."""

    n_queries: int  # queries with at least one pooled item
    n_items: int
    n_judged: int
    depth: int
    per_query_min: int
    per_query_max: int
    systems: tuple[tuple[str, int, int, int], ...]  # (name, items, unique, unique and unjudged)
    qrels: str | None = None
    n_universe: int | None = None  # queries the runs were over, when the pool records it
    fully_judged: bool = False

    @property
    def per_query(self) -> float:
        return self.n_items / self.n_queries if self.n_queries else 0.0

    @property
    def judged_share(self) -> float | None:
        return self.n_judged / self.n_items if self.n_items else None

    def lines(self, width: int = 80, max_systems: int = 20) -> list[str]:
        """The summary as lines of at most ``width`` characters; past ``max_systems`` systems, those
        with the most unique items."""
        share = "-" if self.judged_share is None else f"{100 * self.judged_share:.1f}%"
        out = [f"pool: {self.n_items} items over {self.n_queries} queries, depth {self.depth}, "
               f"{len(self.systems)} systems"]
        if self.n_universe is not None and self.n_universe > self.n_queries:
            out.append(f"  ({self.n_universe - self.n_queries} of {self.n_universe} queries: no system retrieved "
                       "anything)")
        out.append(f"items per query: {self.per_query:.1f} (min {self.per_query_min}, max {self.per_query_max})")
        out.append(f"already judged: {self.n_judged} of {self.n_items} ({share})"
                   + (f" by {self.qrels}" if self.qrels else " (no qrels)")
                   + f"; to judge: {self.n_items - self.n_judged}")
        if self.fully_judged:
            out.append("  (a fully judged dataset: an item its qrels do not list is a judged 0)")
        name_w = max(6, min(width - 34, max((len(s[0]) for s in self.systems), default=6)))
        out.append(f"{'system':<{name_w}}  {'in pool':>8}  {'unique':>8}  {'unjudged':>8}")
        shown_systems = self.systems
        if len(shown_systems) > max_systems:
            shown_systems = tuple(sorted(shown_systems, key=lambda r: -r[2])[:max_systems])
        for name, n, unique, unjudged in shown_systems:
            shown = name if len(name) <= name_w else name[: name_w - 1] + "…"
            out.append(f"{shown:<{name_w}}  {n:>8}  {unique:>8}  {unjudged:>8}")
        if len(shown_systems) < len(self.systems):
            rest = len(self.systems) - len(shown_systems)
            out.append(f"... {rest} more systems with fewer unique items (fewest: {min(r[2] for r in self.systems)})")
        out.append("unique: items no other system retrieved; unjudged: of those, not in the qrels")
        return [_clip(line, width) for line in out]


def summarise(pool: Pool) -> PoolSummary:
    """Queries, items, judged share, items per query and each system's unique contribution."""
    per_query: dict[str, int] = {}
    n_in = dict.fromkeys(pool.systems, 0)
    unique = dict.fromkeys(pool.systems, 0)
    unique_unjudged = dict.fromkeys(pool.systems, 0)
    for it in pool.items:
        per_query[it.qid] = per_query.get(it.qid, 0) + 1
        for s in it.systems:
            n_in[s] = n_in.get(s, 0) + 1
        if len(it.systems) == 1:
            s = it.systems[0]
            unique[s] = unique.get(s, 0) + 1
            unique_unjudged[s] = unique_unjudged.get(s, 0) + (it.grade is None)
    counts = list(per_query.values())
    prov = pool.provenance
    n_universe = prov.get("n_queries")
    return PoolSummary(
        n_queries=len(per_query), n_items=len(pool.items), n_judged=sum(it.grade is not None for it in pool.items),
        depth=pool.depth, per_query_min=min(counts, default=0), per_query_max=max(counts, default=0),
        systems=tuple((s, n_in[s], unique[s], unique_unjudged[s]) for s in pool.systems),
        qrels=str(prov["qrels"]) if prov.get("qrels") else None,
        n_universe=n_universe if isinstance(n_universe, int) else None, fully_judged=prov.get("fully_judged") is True,
    )


# --------------------------------------------------------------------------- internals: checks


def _check(runs: list[Run], depth: int, seed: int, names: Sequence[str] | None) -> tuple[str, ...]:
    if not runs:
        raise FinegrainError("no run to pool", "give two or more runs (or results folders)")
    for r in runs:
        if not isinstance(r, Run):
            raise FinegrainError(f"cannot pool {type(r).__name__} {r!r}", "give finegrain Run objects")
    if isinstance(depth, bool) or not isinstance(depth, int | np.integer) or depth < 1:
        raise FinegrainError(f"pool depth {depth!r} is not a whole number >= 1",
                             "give --depth K, the number of top results of each system to pool, e.g. --depth 10")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise FinegrainError(f"seed {seed!r} is not a whole number >= 0", "give e.g. --seed 0")
    systems = _unique([r.name for r in runs]) if names is None else tuple(names)
    if len(systems) != len(runs) or len(set(systems)) != len(systems):
        raise FinegrainError(f"system names {list(systems)!r} must be one distinct name per run",
                             "give each run its own name")
    for r, name in zip(runs, systems):
        if r.n_entries == 0:
            raise FinegrainError(f"run {name!r} has no result for any query: nothing to pool",
                                 "check that it is the run you meant, or leave it out")
    first, first_name = set(runs[0].qids), systems[0]
    for r, name in zip(runs[1:], systems[1:]):
        this = set(r.qids)
        if this != first:
            only_first = [q for q in runs[0].qids if q not in this]
            only_this = [q for q in r.qids if q not in first]
            q, has, lacks = ((only_first[0], first_name, name) if only_first else (only_this[0], name, first_name))
            raise FinegrainError(
                f"runs {first_name!r} and {name!r} are over different queries: query {q!r} is in {has!r} but "
                f"not in {lacks!r} ({len(only_first) + len(only_this)} queries differ)",
                "pool runs of the same queries: evaluate every system on the same dataset and split "
                "('finegrain eval -d DATASET ...'), or drop the run of the other query set",
            )
    return systems


def _unique(names: Sequence[str], fallbacks: Sequence[str] | None = None) -> tuple[str, ...]:
    """``names`` made distinct: a repeated name takes its fallback (a folder name), then ``#2``, ``#3``..."""
    out = list(names)
    if fallbacks is not None:
        out = [f if f and out.count(n) > 1 else n for n, f in zip(out, fallbacks)]
    seen: dict[str, int] = {}
    result = []
    for n in out:
        seen[n] = seen.get(n, 0) + 1
        result.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return tuple(result)


# --------------------------------------------------------------------------- internals: arrays


class _Cut:
    """One run's top ``depth`` per universe query, as positions into its ranked order."""

    def __init__(self, run: Run, uindex: Mapping[str, int], depth: int) -> None:
        self.run = run
        to_u = np.fromiter((uindex[q] for q in run.qids), dtype=np.int64, count=len(run.qids))
        self.rq = np.empty(len(uindex), dtype=np.int64)  # universe index -> run query index
        self.rq[to_u] = np.arange(len(to_u), dtype=np.int64)
        counts = run.counts()[self.rq]
        self.starts = run.offsets[:-1][self.rq]  # per universe query
        self.lens = np.minimum(counts, depth)
        self.order = run.order  # the one ranking rule (computed once per run, cached on it)

    def used_codes(self) -> np.ndarray:
        """Run vocabulary codes of the documents in its top ``depth``."""
        codes: np.ndarray = self.run.doc_codes[self.order[_ranges(self.starts, self.lens)]]
        return codes


def _global_docs(cuts: list[_Cut]) -> tuple[tuple[str, ...], list[np.ndarray]]:
    """Every pooled document id in code-point order, and per run a run-code -> global-code table."""
    groups: list[tuple[tuple[str, ...], np.ndarray]] = []  # (vocab, used mask), runs sharing a vocab share it
    which: list[int] = []
    for c in cuts:
        vocab = c.run.vocab
        g = next((i for i, (v, _) in enumerate(groups) if v is vocab or (len(v) == len(vocab) and v == vocab)), None)
        if g is None:
            groups.append((vocab, np.zeros(len(vocab), dtype=bool)))
            g = len(groups) - 1
        groups[g][1][c.used_codes()] = True
        which.append(g)
    used = [np.flatnonzero(mask) for _, mask in groups]
    strings = [[vocab[i] for i in u.tolist()] for (vocab, _), u in zip(groups, used)]
    if len(groups) == 1:
        doc_ids = strings[0]
        ranks = string_ranks(doc_ids)
        doc_ids = [doc_ids[i] for i in np.argsort(ranks).tolist()]
        group_codes = [ranks]
    else:
        doc_ids = list(dict.fromkeys(s for ss in strings for s in ss))
        doc_ids = [doc_ids[i] for i in np.argsort(string_ranks(doc_ids)).tolist()]
        code = {d: i for i, d in enumerate(doc_ids)}
        group_codes = [np.fromiter(map(code.__getitem__, ss), dtype=np.int64, count=len(ss)) for ss in strings]
    luts = []
    for (vocab, _), u, codes in zip(groups, used, group_codes):
        lut = np.full(len(vocab), -1, dtype=np.int64)
        lut[u] = codes
        luts.append(lut)
    return tuple(doc_ids), [luts[g] for g in which]


@dataclass(frozen=True)
class _Bits:
    """The bit fields of one 64-bit key per retrieved entry: ``query | doc | system | rank``."""

    n_queries: int
    n_docs: int
    n_systems: int
    depth: int

    @property
    def rank(self) -> int:
        return max(self.depth - 1, 1).bit_length()

    @property
    def system(self) -> int:
        return max(self.n_systems - 1, 1).bit_length()

    @property
    def doc(self) -> int:
        return max(self.n_docs - 1, 1).bit_length()

    @property
    def item_shift(self) -> int:
        """Where the item (query, doc) starts."""
        return self.system + self.rank

    @property
    def max_block(self) -> int:
        """Most queries one block may hold."""
        free = 63 - self.doc - self.item_shift
        if free < 1 or self.n_queries.bit_length() + self.doc > 62:
            raise FinegrainError(
                f"{self.n_systems} runs x {self.n_docs} documents x depth {self.depth} is too large to pool at once",
                "pool fewer runs or a smaller --depth at a time")
        return 1 << (free - 1)


def _judgements(qrels: Qrels | None, uindex: Mapping[str, int], doc_ids: tuple[str, ...],
                bits: _Bits) -> tuple[np.ndarray, np.ndarray]:
    """Sorted keys ``query << doc bits | doc`` of the judgements that can meet a pooled item, and their grades."""
    if qrels is None or qrels.n_entries == 0 or not doc_ids:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    q_of = np.fromiter((uindex.get(q, -1) for q in qrels.qids), dtype=np.int64, count=len(qrels.qids))
    d_of = _codes_in(doc_ids, qrels.vocab)
    q = q_of[qrels.segments]
    d = d_of[qrels.doc_codes]
    keep = (q >= 0) & (d >= 0)
    keys = (q[keep] << bits.doc) | d[keep]
    by = np.argsort(keys, kind="stable")
    return keys[by], np.asarray(qrels.values, dtype=np.int64)[keep][by]


def _codes_in(sorted_ids: tuple[str, ...], ids: Sequence[str]) -> np.ndarray:
    """Position of each of ``ids`` in ``sorted_ids`` (code-point order), -1 when absent."""
    if not ids or not sorted_ids:
        return np.full(len(ids), -1, dtype=np.int64)
    if "\0" in "".join(sorted_ids) or "\0" in "".join(ids):  # numpy's unicode arrays drop trailing NULs
        code = {d: k for k, d in enumerate(sorted_ids)}
        return np.fromiter((code.get(i, -1) for i in ids), dtype=np.int64, count=len(ids))
    # numpy compares unicode by code point, as Python does: a binary search in C, then an exact check
    pos = np.minimum(np.searchsorted(np.asarray(sorted_ids), np.asarray(ids)), len(sorted_ids) - 1)
    return np.fromiter((p if sorted_ids[p] == i else -1 for p, i in zip(pos.tolist(), ids)),
                       dtype=np.int64, count=len(ids))


def _pool_block(cuts: list[_Cut], luts: list[np.ndarray], a: int, b: int, bits: _Bits,
                rng: np.random.Generator, jkeys: np.ndarray, jgrades: np.ndarray) -> tuple[np.ndarray, ...]:
    """Items of universe queries ``a..b-1`` in judging order: (query, doc, n_systems, best_rank, grade,
    judged, members)."""
    q_shift = bits.doc + bits.item_shift
    d_shift = bits.item_shift
    keys = []
    for s, (c, lut) in enumerate(zip(cuts, luts)):
        starts, lens = c.starts[a:b], c.lens[a:b]
        pos = _ranges(starts, lens)
        rank0 = pos - np.repeat(starts, lens)
        doc = lut[c.run.doc_codes[c.order[pos]]]
        ql = np.repeat(np.arange(b - a, dtype=np.int64) << q_shift, lens)
        keys.append(ql | (doc << d_shift) | ((s << bits.rank) | rank0))
    key = np.concatenate(keys).view(np.uint64)
    del keys
    key.sort()  # (query, doc, system, rank): one integer key, one sort
    item = key >> np.uint64(d_shift)
    n = len(item)
    first = np.flatnonzero(np.concatenate(([True], item[1:] != item[:-1]))) if n else np.zeros(0, dtype=np.int64)
    item = item[first].view(np.int64)
    n_sys = np.diff(np.append(first, n))
    rank = (key & np.uint64((1 << bits.rank) - 1)).view(np.int64) + 1
    best = np.minimum.reduceat(rank, first) if n else np.zeros(0, dtype=np.int64)
    del rank
    system = (key >> np.uint64(bits.rank)) & np.uint64((1 << bits.system) - 1)
    del key
    words = (bits.n_systems + 63) // 64
    members = np.zeros((len(first), words), dtype=np.uint64)
    if n:
        one = np.left_shift(np.uint64(1), system & np.uint64(63))
        for w in range(words):
            word = one if words == 1 else np.where(system >> np.uint64(6) == w, one, np.uint64(0))
            members[:, w] = np.bitwise_or.reduceat(word, first)
    ql = item >> bits.doc
    doc = item & ((1 << bits.doc) - 1)
    # judged marks: the items' keys looked up in the sorted judgements
    grade = np.zeros(len(first), dtype=np.int64)
    judged = np.zeros(len(first), dtype=bool)
    if len(jkeys) and len(first):
        gkey = ((ql + a) << bits.doc) | doc
        at = np.minimum(np.searchsorted(jkeys, gkey), len(jkeys) - 1)
        judged = jkeys[at] == gkey
        grade[judged] = jgrades[at[judged]]
    # judging order: query, more systems first, better best rank, then the seeded shuffle
    u = rng.random(len(first))  # one draw per item in (query, doc id) order
    S, R = bits.n_systems, bits.depth
    free = 62 - int(max(b - a, 1) * (S + 1) * (R + 1)).bit_length()  # bits left for the shuffle
    if free >= 24:
        order_key = ((ql * (S + 1) + (S - n_sys)) * (R + 1) + best) << free | (u * (1 << free)).astype(np.int64)
        perm = np.argsort(order_key, kind="stable")
    else:
        perm = np.lexsort((u, best, -n_sys, ql))
    small = np.int32
    return ((ql[perm] + a).astype(small), doc[perm].astype(small if bits.doc < 31 else np.int64),
            n_sys[perm].astype(small), best[perm].astype(small), grade[perm], judged[perm], members[perm])


def _distinct_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(a, axis=0, return_inverse=True)`` for a 2-D integer array, by one lexsort."""
    if a.shape[1] == 1:
        values, inverse = np.unique(a[:, 0], return_inverse=True)
        return values.reshape(-1, 1), inverse.reshape(-1)
    order = np.lexsort(a.T[::-1])
    ordered = a[order]
    new = np.concatenate(([True], (ordered[1:] != ordered[:-1]).any(axis=1)))
    inverse = np.empty(len(a), dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], inverse


def _concat(columns: list[list[np.ndarray]], i: int) -> np.ndarray:
    """Column ``i`` of every block in one array; the blocks' copies are let go at once (half the peak)."""
    out = np.concatenate(columns[i])
    columns[i] = []
    return out


def _ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + n) for s, n in zip(starts, lens)])`` without the loop."""
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lens)
    out: np.ndarray = np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - lens), lens)
    return out


# --------------------------------------------------------------------------- internals: texts, grades


def _texts(source: Mapping[str, Any] | None, ids: Iterable[str]) -> dict[str, str]:
    """``{id: text}`` of ``ids`` found in ``source`` (records with ``.text`` (and ``.title``), or strings)."""
    if source is None:
        return {}
    out = {}
    for i in ids:
        rec = source.get(i)
        if rec is None:
            continue
        if isinstance(rec, str):
            out[i] = rec
        else:
            title = getattr(rec, "title", "") or ""
            out[i] = f"{title}\n{rec.text}" if title else str(rec.text)
    return out


def _grades(grades: Sequence[int] | None, qrels: Qrels | None) -> tuple[int, ...]:
    if grades is not None:
        out = tuple(grades)
        if not out or any(isinstance(g, bool) or not isinstance(g, int | np.integer) for g in out) \
                or len(set(out)) != len(out):
            raise FinegrainError(f"judging scale {list(out)!r} is not a list of distinct whole numbers",
                                 "give e.g. --grades 0,1,2")
        return tuple(int(g) for g in out)
    if qrels is None or qrels.n_entries == 0:
        return DEFAULT_GRADES
    top = int(qrels.values.max())
    return tuple(range(0, max(top, 1) + 1))


# --------------------------------------------------------------------------- internals: reading sources


@dataclass(frozen=True)
class _Loaded:
    run: Run
    name: str
    fallback: str  # the folder or file name, for a name two sources share
    source: str
    results: Any = None  # SavedResults, for a results folder

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source}
        if self.results is not None:
            out["dataset"] = self.results.dataset_name
            out["retriever"] = self.results.retriever_name
        return out


def _load_source(src: Source) -> _Loaded:
    if isinstance(src, Run):
        return _Loaded(src, src.name, src.name, f"<Run {src.name}>")
    p = Path(src)
    if p.is_file() and p.name == RESULTS_FILE:
        p = p.parent
    if p.is_dir():
        results = SavedResults.load(p) if (p / RESULTS_FILE).is_file() else None
        try:
            run = read_saved_run(p, results)
        except FinegrainError as e:
            raise FinegrainError(f"results folder {str(p)!r} holds no run: {e.message}",
                                 "pool folders written by 'finegrain eval -o DIR' (they hold run.trec or run.jsonl), "
                                 "or give the run files themselves") from None
        name = (results.retriever_name if results is not None else None) or run.name
        return _Loaded(run, name, p.name, str(src), results)
    if p.is_file():
        run = read_run_file(p)
        return _Loaded(run, run.name, p.name, str(src))
    raise FinegrainError(f"no results folder or run file {str(src)!r}",
                         "give folders written by 'finegrain eval -o DIR', or TREC / run.jsonl run files")


def _one_dataset(loaded: list[_Loaded]) -> str | None:
    named = [(sr.results.dataset_name, sr.source) for sr in loaded
             if sr.results is not None and sr.results.dataset_name]
    for name, src in named[1:]:
        if name != named[0][0]:
            raise FinegrainError(
                f"the runs are of different datasets: {named[0][0]!r} ({named[0][1]}) and {name!r} ({src})",
                "pool runs of one dataset: evaluate every system with the same -d",
            )
    return named[0][0] if named else None


def _saved_lang(loaded: list[_Loaded]) -> str | None:
    for sr in loaded:
        if sr.results is not None:
            lang = (sr.results.provenance.get("dataset") or {}).get("lang")
            if lang:
                return str(lang)
    return None


def _read_qrels(qrels: Qrels | str | os.PathLike[str]) -> tuple[Qrels, str]:
    if isinstance(qrels, Qrels):
        return qrels, "the given qrels"

    if not Path(qrels).is_file():
        raise FinegrainError(f"no qrels file {str(qrels)!r}", "give --qrels a TREC or BEIR qrels file")
    return read_qrels_file(Path(qrels))[0], str(qrels)


def _load_dataset(name: str, lang: str | None, settings: Any) -> tuple[Any, str | None]:
    """The dataset, or None and why it did not load."""

    try:
        return load_dataset(name, settings, lang=lang), None
    except FinegrainError as e:
        return None, e.message


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
