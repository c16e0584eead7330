"""The frozen core types: Query/Queries, Document/Corpus, Qrels and Run.

``Qrels`` and ``Run`` behave as immutable mappings ``qid -> {doc_id -> value}``.
Underneath they are one columnar table (query offsets, document codes into a
vocabulary, values) so that metrics can work on arrays; those arrays are
read-only and derived once, never the identity of the object.

A query may have an empty entry (``{}``): in qrels that is a query with no
judged item, in a run a query for which the system returned nothing. Both are
kept: they matter for zero-answer queries and rejection metrics.

As in ranx, ``Qrels`` and ``Run`` carry their I/O: ``from_file`` / ``save``
(TREC, BEIR qrels ``.tsv``, ranx JSON, Parquet, ``run.jsonl``; by file name or
``format=``), ``from_dict``, ``from_df`` / ``to_df`` (pandas, ranx's columns
``q_id, doc_id, score``) and ``to_dict``. A run lists each query's documents
in ranked order (score descending, the one tie rule), in ``run[qid]``,
``to_dict()`` and every file and frame it writes.

The readers and writers live in :mod:`finegrain.io`, a layer above this one,
which this module may not import. The methods call them through the hook
:data:`finegrain.hooks.TABLE_IO`, which the root package fills with
:mod:`finegrain.io.formats` (loaded on the first call): see :mod:`finegrain.hooks`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, repeat
from operator import eq, itemgetter, methodcaller
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, cast

import numpy as np

from finegrain.arrow_ids import dictionary_codes, id_array, positions_in, worth_arrow
from finegrain.errors import DuplicateIdError, FinegrainError
from finegrain.frozen import EMPTY, read_only
from finegrain.hooks import TABLE_IO
from finegrain.native import NATIVE
from finegrain.ranking import cut_depth, rank_order
from finegrain.segments import positions_of, segments_of

if TYPE_CHECKING:
    import os

    import pandas as pd

# --------------------------------------------------------------------------- queries, corpus


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    text: str
    type: str | None = None
    meta: Mapping[str, Any] = field(default_factory=lambda: EMPTY, compare=False)


@dataclass(frozen=True, slots=True)
class Document:
    id: str
    text: str
    title: str = ""
    meta: Mapping[str, Any] = field(default_factory=lambda: EMPTY, compare=False)


T = TypeVar("T", Query, Document)


class _Records(Mapping[str, T], Generic[T]):
    """An immutable, ordered ``id -> record`` mapping that refuses duplicate ids."""

    __slots__ = ("_items",)
    _kind = "record"
    _items: dict[str, T]

    def __init__(self, records: Iterable[T]) -> None:
        items: dict[str, T] = {}
        for r in records:
            if r.id in items:
                raise DuplicateIdError(
                    f"duplicate {self._kind} id {r.id!r}", "every id must appear once"
                )
            items[r.id] = r
        self._items = items

    def __getitem__(self, key: str) -> T:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} {self._kind}s)"

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._items)

    @property
    def texts(self) -> list[str]:
        return [r.text for r in self._items.values()]


class Queries(_Records[Query]):
    __slots__ = ()
    _kind = "query"

    def types(self) -> dict[str, str | None]:
        return {q.id: q.type for q in self._items.values()}


class Corpus(_Records[Document]):
    __slots__ = ()
    _kind = "document"


# --------------------------------------------------------------------------- qrels, run


class _Table(Mapping[str, Mapping[str, Any]]):
    """Columnar ``qid -> {doc_id -> value}``; entries of one query are contiguous."""

    _value_dtype: type = np.float64
    _what = "entry"

    def __init__(
        self,
        qids: Sequence[str],
        offsets: np.ndarray,
        doc_codes: np.ndarray,
        vocab: Sequence[str],
        values: np.ndarray,
        *,
        check: bool = True,
    ) -> None:
        """Build from columns (the fast path). Prefer the ``from_*`` constructors."""
        self._qids = tuple(qids)
        self._index = dict(zip(self._qids, range(len(self._qids))))
        if len(self._index) != len(self._qids):
            dup = next(q for q in self._qids if self._qids.count(q) > 1)
            raise DuplicateIdError(f"query id {dup!r} appears twice in the table")
        self._offsets = read_only(np.asarray(offsets, dtype=np.int64))
        self._docs = read_only(np.asarray(doc_codes, dtype=np.int64))
        self._vocab = tuple(vocab)
        self._values = read_only(_value_column(values, self._value_dtype, self._what))
        if check:
            self._check()

    def __getstate__(self) -> dict[str, Any]:
        """What pickling keeps: the columns (and a run's name), not what is cached from them, which is made
        again where it is read. A cached hash index holds this process's string hashes, and another process
        (a worker, a later run) hashes strings with another seed."""
        derived = {name for klass in type(self).__mro__ for name, attr in vars(klass).items()
                   if isinstance(attr, cached_property)}
        return {key: value for key, value in self.__dict__.items() if key not in derived}

    # -- construction --------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, Any]], **kw: Any) -> Self:
        """From ``{qid: {doc_id: value}}`` (the fast path from Python data: a few C-level passes, no
        per-entry Python code). Document codes follow first occurrence."""
        values: Any
        flat = NATIVE.flatten(data, cls._value_dtype is np.int64) if NATIVE is not None else None
        if flat is not None:  # plain dicts of str ids and numbers: one C pass, the same columns
            offsets, codes = np.frombuffer(flat[0], dtype=np.int64), np.frombuffer(flat[1], dtype=np.int64)
            vocab, values = flat[2], np.frombuffer(flat[3], dtype=cls._value_dtype)
        else:
            per_query = list(data.values())
            counts = np.fromiter(map(len, per_query), dtype=np.int64, count=len(per_query))
            offsets = np.zeros(len(per_query) + 1, dtype=np.int64)
            np.cumsum(counts, out=offsets[1:])
            keys = list(chain.from_iterable(per_query))
            vocab, codes = _intern(keys)
            del keys
            values = _values(per_query, int(offsets[-1]), cls._value_dtype)
        check = kw.pop("check", True)
        table = cls(list(data), offsets, codes, vocab, values, check=False, **kw)
        if check:
            table._check(duplicates=False)  # a mapping holds each document once per query
        return table

    @classmethod
    def from_records(cls, records: Iterable[tuple[str, str, Any]], **kw: Any) -> Self:
        """From ``(qid, doc_id, value)`` triples in any order; (qid, doc_id) must be unique."""
        qindex: dict[str, int] = {}
        vocab: dict[str, int] = {}
        seg: list[int] = []
        codes: list[int] = []
        values: list[Any] = []
        for q, d, v in records:
            seg.append(qindex.setdefault(q, len(qindex)))
            codes.append(vocab.setdefault(d, len(vocab)))
            values.append(v)
        seg_a = np.asarray(seg, dtype=np.int64)
        order = np.argsort(seg_a, kind="stable")
        offsets = np.zeros(len(qindex) + 1, dtype=np.int64)
        np.cumsum(np.bincount(seg_a, minlength=len(qindex)), out=offsets[1:])
        return cls(
            list(qindex),
            offsets,
            np.asarray(codes, dtype=np.int64)[order],
            list(vocab),
            np.asarray(values)[order] if values else np.asarray(values),
            **kw,
        )

    def _check(self, *, duplicates: bool = True) -> None:
        n = len(self._docs)
        if len(self._offsets) != len(self._qids) + 1 or self._offsets[0] != 0 or self._offsets[-1] != n:
            raise ValueError("inconsistent table offsets")
        if len(self._values) != n:
            raise ValueError("values and documents differ in length")
        if n == 0 or not duplicates:
            return
        seg = self.segments
        key = seg * max(len(self._vocab), 1) + self._docs
        sorted_key = np.sort(key)
        dup = np.flatnonzero(sorted_key[1:] == sorted_key[:-1])
        if len(dup):
            k = int(sorted_key[dup[0]])
            q, d = self._qids[k // max(len(self._vocab), 1)], self._vocab[k % max(len(self._vocab), 1)]
            raise DuplicateIdError(
                f"document {d!r} appears twice for query {q!r} in the {self._what}s",
                "each (query, document) pair must appear once",
            )

    # -- mapping ---------------------------------------------------------------

    def __getitem__(self, qid: str) -> Mapping[str, Any]:
        i = self._index[qid]
        a, b = self._offsets[i], self._offsets[i + 1]
        vocab = self._vocab
        return MappingProxyType(
            {vocab[c]: v for c, v in zip(self._docs[a:b].tolist(), self._values[a:b].tolist())}
        )

    def __iter__(self) -> Iterator[str]:
        return iter(self._qids)

    def __len__(self) -> int:
        return len(self._qids)

    def __contains__(self, qid: object) -> bool:
        return qid in self._index

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Table):
            return NotImplemented
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} queries, {self.n_entries} {self._what}s)"

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """``{qid: {doc_id: value}}`` (a run's documents in ranked order)."""
        return {q: dict(self[q]) for q in self._qids}

    # -- files and frames (through finegrain.hooks.TABLE_IO: see the module docstring) ---------

    def save(self, path: str | os.PathLike[str], format: str | None = None) -> Path:
        """Write to ``path`` in ``format`` (``trec``, ``json``, ``parquet``; qrels ``beir``, runs ``jsonl``),
        by default the one its name says (``.trec``/``.txt``, ``.tsv``, ``.json``, ``.parquet``, ``.jsonl``;
        ``.gz`` compressed); the file is written whole or not at all. Returns the path.

        A query without entry has no line in any of these formats: it is absent when read back."""
        return Path(TABLE_IO().write(cast("Qrels | Run", self), path, format))

    def to_df(self) -> pd.DataFrame:
        """A pandas DataFrame with ranx's columns ``q_id, doc_id, score`` (a run's rows in ranked order)."""
        return TABLE_IO().to_frame(cast("Qrels | Run", self))

    def to_dataframe(self) -> pd.DataFrame:
        """The same as :meth:`to_df` (ranx's name)."""
        return self.to_df()

    # -- columnar views (read-only) ----------------------------------------

    @property
    def qids(self) -> tuple[str, ...]:
        return self._qids

    @property
    def offsets(self) -> np.ndarray:
        return self._offsets

    @property
    def doc_codes(self) -> np.ndarray:
        return self._docs

    @property
    def vocab(self) -> tuple[str, ...]:
        return self._vocab

    @property
    def values(self) -> np.ndarray:  # type: ignore[override]  # the value column; Mapping.values() is shadowed
        return self._values

    @property
    def n_entries(self) -> int:
        return len(self._docs)

    @cached_property
    def segments(self) -> np.ndarray:
        """Query index of every entry."""
        return read_only(segments_of(self._offsets))

    @cached_property
    def positions(self) -> np.ndarray:
        """0-based position of every entry within its query."""
        return read_only(positions_of(self._offsets))

    def counts(self) -> np.ndarray:
        return np.diff(self._offsets)

    def index_of(self, qid: str) -> int:
        return self._index[qid]


class Qrels(_Table):
    """Graded judgements ``qid -> {doc_id -> grade}`` (integers; > 0 is relevant), read-only.

    Queries whose grades are all <= 0, or that have no judged item at all, are
    kept: they are the zero-answer queries.

    Examples:
        >>> from finegrain import Qrels
        >>> qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}})
        >>> qrels
        Qrels(2 queries, 3 judgements)
        >>> dict(qrels["q1"])
        {'d1': 2, 'd2': 0}

    ``Qrels.from_file`` reads TREC, BEIR ``.tsv``, ranx JSON or Parquet; ``Qrels.from_df`` a DataFrame.
    """

    _value_dtype = np.int64
    _what = "judgement"

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], format: str | None = None) -> Qrels:
        """Read TREC qrels, BEIR/MTEB ``.tsv``, ranx ``.json`` or ``.parquet`` (``format``: ``trec``, ``beir``,
        ``json``, ``parquet``; by default from the name, TREC or BEIR from the first line)."""
        return TABLE_IO().read_qrels(path, format)

    @classmethod
    def from_df(
        cls, df: Any, q_id_col: str | None = None, doc_id_col: str | None = None, score_col: str | None = None
    ) -> Qrels:
        """From a pandas DataFrame; a column not named is found by its usual names (``q_id``/``query_id``/...,
        ``doc_id``/``docno``/..., ``relevance``/``rel``/``grade``/``score``: :mod:`finegrain.io.columns`)."""
        table = TABLE_IO().from_frame(df, "qrels", _named(q_id_col, doc_id_col, score_col), None)
        assert isinstance(table, Qrels)
        return table

    def has_relevant(self, qid: str, rel: int = 1) -> bool:
        return qid in self and any(g >= rel for g in self[qid].values())

    def relevant(self, qid: str, rel: int = 1) -> frozenset[str]:
        if qid not in self:
            return frozenset()
        return frozenset(d for d, g in self[qid].items() if g >= rel)

    def codes_of(self, doc_ids: Sequence[str]) -> np.ndarray | None:
        """The code of each of ``doc_ids`` in this table's vocabulary (-1 where absent); None if it is this vocabulary.

        Ids are matched by their Python hash with numpy (one sorted column of
        this vocabulary's hashes, one search) and every match is confirmed by
        comparing the two strings, so equal hashes never match unequal ids.
        """
        if doc_ids is self._vocab or doc_ids == self._vocab:
            return None
        found = NATIVE.index_in(self._vocab, doc_ids) if NATIVE is not None else None
        if found is not None:  # str ids: one compiled hash table, equal strings match
            return np.frombuffer(found, dtype=np.int64)
        n = len(doc_ids)
        if worth_arrow(n + len(self._vocab)):
            codes = self._arrow_codes_of(doc_ids)
            if codes is not None:
                return codes
        index = self._hash_index
        if index is None or n == 0:
            lookup = self._code_index
            return np.fromiter(map(lookup.get, doc_ids, repeat(-1)), dtype=np.int64, count=n)
        sorted_hashes, by_hash = index
        theirs = _hashes(doc_ids)
        pos = np.searchsorted(sorted_hashes, theirs)
        np.minimum(pos, len(sorted_hashes) - 1, out=pos)
        cand = by_hash[pos]
        hit = np.flatnonzero(sorted_hashes[pos] == theirs)
        codes = np.full(n, -1, dtype=np.int64)
        if len(hit):
            mine = itemgetter_list(self._vocab, cand[hit])
            same = np.fromiter(map(eq, itemgetter_list(doc_ids, hit), mine), dtype=bool, count=len(hit))
            codes[hit[same]] = cand[hit[same]]
        return codes

    def _arrow_codes_of(self, doc_ids: Sequence[str]) -> np.ndarray | None:
        """:meth:`codes_of` by Arrow's hash join (``index_in``), when :func:`~finegrain.arrow_ids.id_array` takes
        both vocabularies; else None."""
        mine = self._arrow_vocab
        theirs = id_array(doc_ids) if mine is not None else None
        return None if theirs is None else positions_in(theirs, mine)

    @cached_property
    def _arrow_vocab(self) -> Any:
        return id_array(self._vocab)

    @cached_property
    def _hash_index(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(sorted hashes, code of each)`` of the vocabulary; None when two of its ids share a hash."""
        if not self._vocab:
            return None
        hashes = _hashes(self._vocab)
        by_hash = np.argsort(hashes)
        sorted_hashes = hashes[by_hash]
        if bool((sorted_hashes[1:] == sorted_hashes[:-1]).any()):
            return None
        return sorted_hashes, by_hash

    @cached_property
    def _code_index(self) -> dict[str, int]:
        return dict(zip(self._vocab, range(len(self._vocab))))


class Run(_Table):
    """Scores ``qid -> {doc_id -> score}`` of one system, with a name; read-only.

    Rankings come from one rule only (``finegrain.ranking``): score
    descending, then document id descending, as trec_eval does.

    Examples:
        >>> from finegrain import Run
        >>> run = Run.from_dict({"q1": {"d2": 0.5, "d1": 0.9, "d3": 0.5}}, name="bm25")
        >>> run
        Run('bm25', 1 queries, 3 results)
        >>> run.ranked("q1")
        ['d1', 'd3', 'd2']

    ``Run.from_file`` reads TREC, ``run.jsonl``, ranx JSON or Parquet; ``run.save(path)`` writes one.
    """

    _value_dtype = np.float64
    _what = "result"

    def __init__(self, *args: Any, name: str = "run", **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.name = name

    def __getitem__(self, qid: str) -> Mapping[str, Any]:
        """``{doc_id: score}`` of one query, in ranked order."""
        i = self._index[qid]
        at = self.order[self._offsets[i]:self._offsets[i + 1]]
        vocab = self._vocab
        return MappingProxyType({vocab[c]: v for c, v in zip(self._docs[at].tolist(), self._values[at].tolist())})

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {len(self)} queries, {self.n_entries} results)"

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, Any]], name: str | None = None, **kw: Any) -> Run:
        """From ``{qid: {doc_id: score}}`` (any order: the ranking comes from the scores), named ``name``
        (default ``"run"``)."""
        return super().from_dict(data, name=name or "run", **kw)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], format: str | None = None, name: str | None = None) -> Run:
        """Read a TREC run, ranx ``.json``, ``.parquet`` or ``run.jsonl`` (``format``: ``trec``, ``json``,
        ``parquet``, ``jsonl``; by default from the name, else TREC). The name is ``name``, else the file's
        (the TREC tag, the saved name, the file stem)."""
        return TABLE_IO().read_run(path, format, name)

    @classmethod
    def from_df(
        cls, df: Any, q_id_col: str | None = None, doc_id_col: str | None = None, score_col: str | None = None,
        name: str | None = None,
    ) -> Run:
        """From a pandas DataFrame; a column not named is found by its usual names (``q_id``/``query_id``/...,
        ``doc_id``/``docno``/..., ``score``: :mod:`finegrain.io.columns`)."""
        table = TABLE_IO().from_frame(df, "run", _named(q_id_col, doc_id_col, score_col), name)
        assert isinstance(table, Run)
        return table

    def _check(self, *, duplicates: bool = True) -> None:
        self._refuse_nan()
        super()._check(duplicates=duplicates)

    def _refuse_nan(self) -> None:
        bad = np.flatnonzero(np.isnan(self._values))
        if len(bad):
            q, d = self._entry(int(bad[0]))
            raise FinegrainError(f"score of document {d!r} for query {q!r} is NaN",
                                 "every score must be a number; drop or fix that result")

    def _entry(self, i: int) -> tuple[str, str]:
        """The (query id, document id) of entry ``i``."""
        return self._qids[int(np.searchsorted(self._offsets, i, side="right") - 1)], self._vocab[self._docs[i]]

    def require_finite(self, owner: str) -> Run:
        """This run; or, when a score is NaN or infinite, a FinegrainError naming ``owner`` (the retriever), the
        query and the document. A retriever's scores must be finite: they are ranked and saved, and the run
        files hold finite numbers only."""
        bad = np.flatnonzero(~np.isfinite(self._values))
        if len(bad):
            i = int(bad[0])
            q, d = self._entry(i)
            raise FinegrainError(
                f"{owner} scored document {d!r} for query {q!r} {float(self._values[i])}, which cannot be ranked",
                "scores must be finite; check the retriever's options (finegrain list retrievers shows their ranges)",
            )
        return self

    @cached_property
    def order(self) -> np.ndarray:
        """Entry indices in ranked order, query by query (the trec_eval sort); a NaN score is refused."""
        self._refuse_nan()
        return read_only(rank_order(None, self._values, self._docs, self._vocab, offsets=self._offsets))

    def ranked(self, qid: str, k: int | None = None) -> list[str]:
        """Document ids of one query in ranked order, optionally cut at ``k``."""
        i = self._index[qid]
        a, b = self._offsets[i], self._offsets[i + 1]
        if k is not None:
            b = min(b, a + k)
        vocab = self._vocab
        return [vocab[c] for c in self._docs[self.order[a:b]].tolist()]

    def cut(self, k: int) -> Run:
        """The top ``k`` of every query (ties broken by the one rule)."""
        k = cut_depth(k, int(self.counts().max(initial=0)))
        keep = self.order[(np.arange(self.n_entries) - self._offsets[self.segments]) < k]
        counts = np.minimum(self.counts(), k)
        offsets = np.concatenate([[0], np.cumsum(counts)])
        return Run(self._qids, offsets, self._docs[keep], self._vocab, self._values[keep], name=self.name, check=False)

    def with_queries(self, qids: Iterable[str]) -> Run:
        """This run with an empty result list for each of ``qids`` it lacks (appended in their order).

        A TREC run file has no line for a query that retrieved nothing; the
        query list saved beside it puts those queries back.
        """
        have = self._index
        missing = list(dict.fromkeys(q for q in qids if q not in have))
        if not missing:
            return self
        offsets = np.concatenate([self._offsets, np.full(len(missing), self._offsets[-1], dtype=self._offsets.dtype)])
        return Run((*self._qids, *missing), offsets, self._docs, self._vocab, self._values, name=self.name, check=False)

    def renamed(self, name: str) -> Run:
        """The same results under another name (the arrays are shared, not copied)."""
        if name == self.name:
            return self
        return Run(self._qids, self._offsets, self._docs, self._vocab, self._values, name=name, check=False)


_INT64 = np.iinfo(np.int64)


def _named(q_id_col: str | None, doc_id_col: str | None, score_col: str | None) -> dict[str, str]:
    """``{role: column}`` of the columns a caller named (the others are found by their usual names)."""
    named = {"query": q_id_col, "doc": doc_id_col, "value": score_col}
    return {role: col for role, col in named.items() if col is not None}


def _intern(keys: list[Any]) -> tuple[list[Any], np.ndarray]:
    """``(vocab, codes)``: the distinct keys in order of first appearance (the first of equal keys, as
    ``dict.fromkeys`` keeps) and the code of every key.

    Keys are grouped by their Python hash with numpy; one ``set`` of the keys
    checks that no two unequal keys share a hash (then the groups are exactly
    the classes of equal keys). When some do, the keys go through a dict.
    """
    if not keys:
        return [], np.empty(0, dtype=np.int64)
    if worth_arrow(len(keys)):
        interned = _arrow_intern(keys)
        if interned is not None:
            return interned
    try:
        hashes = _hashes(keys)
    except TypeError:  # an unhashable key: the dict below names it
        hashes = None
    if hashes is not None:
        first, codes = first_appearance(hashes)
        if len(set(keys)) == len(first):
            return itemgetter_list(keys, first), codes
    vocab = list(dict.fromkeys(keys))
    return vocab, _codes(keys, dict(zip(vocab, range(len(vocab)))))


def _arrow_intern(keys: list[Any]) -> tuple[list[Any], np.ndarray] | None:
    """:func:`_intern` by pyarrow's dictionary encoding (first appearance order, as ``dict.fromkeys``)
    when :func:`~finegrain.arrow_ids.id_array` takes the keys, else ``None``."""
    arr = id_array(keys)
    if arr is None:
        return None
    distinct, codes = dictionary_codes(arr)
    return distinct.to_pylist(), codes


def _hashes(keys: Sequence[Any]) -> np.ndarray:
    """The Python hash of every key, as int64 (strings cache theirs: one C-level pass)."""
    return np.fromiter(map(hash, keys), dtype=np.int64, count=len(keys))


def itemgetter_list(items: Sequence[Any], at: np.ndarray) -> list[Any]:
    """``[items[i] for i in at]``, in one C-level call."""
    if len(at) == 1:
        return [items[int(at[0])]]
    return list(itemgetter(*at.tolist())(items))


def first_appearance(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)`` of a column of integer keys: the position of the first occurrence of each
    distinct key, in order of first appearance, and the index into ``first`` of every key
    (``key == key[first][inverse]``). One sort; no Python object per key."""
    n = len(key)
    if n == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    order = np.argsort(key)
    sorted_key = key[order]
    new = np.empty(n, dtype=bool)
    new[:1] = True
    np.not_equal(sorted_key[1:], sorted_key[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    group_first = np.minimum.reduceat(order, starts)
    rank = np.argsort(group_first)
    code = np.empty(len(rank), dtype=np.int64)
    code[rank] = np.arange(len(rank))
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.repeat(code, np.diff(np.append(starts, n)))
    return group_first[rank], inverse


def _codes(keys: list[Any], index: dict[Any, int]) -> np.ndarray:
    """``index[k]`` for every key, as int64 (one C-level lookup pass)."""
    if len(keys) < 2:  # itemgetter of one key returns the value itself, not a tuple
        return np.asarray([index[k] for k in keys], dtype=np.int64)
    return np.asarray(itemgetter(*keys)(index), dtype=np.int64)


def _values(per_query: list[Mapping[str, Any]], n: int, dtype: type) -> Any:
    """The values of every mapping, in order: float64 read straight from the iterator when they convert,
    else a list for :func:`_value_column` (which refuses what would wrap or truncate, with the reason)."""
    if dtype is np.float64:
        try:
            return np.fromiter(chain.from_iterable(map(_mapping_values, per_query)), dtype=np.float64, count=n)
        except (TypeError, ValueError, OverflowError):
            pass
    return list(chain.from_iterable(map(_mapping_values, per_query)))


_mapping_values = methodcaller("values")


def _value_column(values: Any, dtype: type, what: str) -> np.ndarray:
    """``values`` as a column of ``dtype``, refusing what would wrap, truncate or fail inside numpy.

    Grades (int64) must be integers in the int64 range: numpy would wrap a
    uint64 2^63 to a negative grade and truncate 1.5 to 1 without a word.
    Scores (float64) must convert to doubles.
    """
    try:
        a = np.asarray(values)
        if dtype is np.int64 and a.size:
            if a.dtype.kind == "u" and int(a.max()) > _INT64.max:
                raise OverflowError(int(a.max()))
            if a.dtype.kind == "f":
                integral = np.isfinite(a) & (a == np.round(a)) & (np.abs(a) < 2.0**63)
                if not integral.all():
                    bad = a[~integral][0].item()
                    raise FinegrainError(f"{what} value {bad!r} is not an integer grade", "grades are integers (0, 1, 2, ...)")
            if a.dtype.kind == "O":
                for v in a.tolist():
                    if isinstance(v, bool) or not isinstance(v, int | np.integer):
                        raise FinegrainError(f"{what} value {v!r} is not an integer grade", "grades are integers (0, 1, 2, ...)")
                    if not _INT64.min <= int(v) <= _INT64.max:
                        raise OverflowError(v)
        return np.asarray(a, dtype=dtype)
    except OverflowError as e:
        shown = f"value {e.args[0]} is" if e.args and isinstance(e.args[0], int) else "values are"
        raise FinegrainError(
            f"{what} {shown} out of range for {np.dtype(dtype).name}",
            "grades must lie between -2^63 and 2^63-1; scores must be finite doubles",
        ) from None
    except (TypeError, ValueError) as e:
        raise FinegrainError(f"{what} values must be numbers ({e})", "give numeric grades or scores") from None



