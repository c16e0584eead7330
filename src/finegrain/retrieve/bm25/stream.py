"""Building a BM25 index on disk in bounded memory: stream documents in chunks, spill postings, merge.

:meth:`BM25.index_on_disk <finegrain.retrieve.bm25.BM25.index_on_disk>` (token
lists) and :meth:`~finegrain.retrieve.bm25.BM25.index_texts_on_disk` (texts,
tokenized a chunk at a time) call :func:`build_on_disk`, which writes the files
of :mod:`~finegrain.retrieve.bm25.files` (format version 3) in two passes:

1. **Spill.** Documents are read ``chunk_size`` at a time (any iterable of
   ``(doc_id, tokens)`` pairs, e.g. a generator over a file). Each chunk becomes
   its (term, document, tf) postings, sorted by term, with term ids from one
   growing vocabulary (first occurrence order, as :func:`~finegrain.retrieve.bm25.index.build_index`);
   they are written to a run file under ``folder/.spill`` and dropped. Kept in
   memory: the vocabulary, one document frequency per term, one length and one
   id per document (the ids to refuse duplicates).
2. **Merge.** With N, the lengths and every df known, idf and avgdl are fixed,
   so every posting's final weight can be computed. The output arrays are
   memory-mapped files of their final size; each run is read back in document
   order and its postings scattered to their term's next free slots (a run is
   sorted by term, so its writes move forward through the file). No two runs are
   in memory at once.

Peak memory is one chunk's postings plus the vocabulary and the per-document
arrays, not the corpus, so it stays bounded as the corpus grows (``benchmarks/scale.py``
measures it; figures in ``docs/results/scale.md``). The result equals the in-memory build
bit for bit (same vocabulary order, same arrays; tests check it), and is read
back memory-mapped. With ``stats`` (:mod:`~finegrain.retrieve.bm25.shard`) the
folder is one shard of a larger corpus, scored as in that corpus' index.

The two passes are also separate steps, so that a sharded build tokenizes once:
:func:`spill_on_disk` (pass 1) returns a :class:`Spill` carrying the shard's own
statistics; once every shard has spilled, their statistics are merged and each
shard is finished with them (:meth:`BM25.index_spilled
<finegrain.retrieve.bm25.BM25.index_spilled>`, pass 2)::

    spills = [spill_on_disk(folder_i, pairs_i) for each shard]      # on each worker
    stats = merge_stats(s.stats for s in spills)                      # in the driver
    shard_i = BM25("okapi").index_spilled(spills[i], stats=stats)     # on each worker
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from finegrain.errors import DuplicateIdError, FinegrainError
from finegrain.retrieve.bm25.files import place, prepare_folder, write_meta
from finegrain.retrieve.bm25.index import check_corpus, postings
from finegrain.retrieve.bm25.scoring import BM25Params
from finegrain.retrieve.bm25.scoring import idf as _idf
from finegrain.retrieve.bm25.scoring import tfc as _tfc
from finegrain.retrieve.bm25.shard import CorpusStats

if TYPE_CHECKING:
    from finegrain.retrieve.bm25.shard import CorpusStats

DEFAULT_CHUNK = 100_000
_SPILL = ".spill"
_MANIFEST = "spill.json"


@dataclass(frozen=True, eq=False)
class Spill:
    """A folder whose documents are read and spilled (pass 1) but not yet weighted (pass 2).

    ``stats`` are this folder's own corpus statistics: a sharded build spills every
    shard, merges their ``stats`` (:func:`~finegrain.retrieve.bm25.shard.merge_stats`),
    then finishes each shard with the merged statistics -- tokenizing once. Small and
    picklable (the spilled postings stay in ``folder/.spill``), so the two passes may
    run in different processes on the machine that holds the folder.
    """

    folder: Path
    stats: CorpusStats


def build_on_disk(
    folder: str | PathLike[str],
    p: BM25Params,
    docs: Iterable[tuple[str, Any]],
    config: dict[str, Any],
    *,
    tokenize: Callable[[list[str]], list[list[str]]] | None = None,
    tokenizer: dict[str, Any] | None = None,
    chunk_size: int = DEFAULT_CHUNK,
    stats: CorpusStats | None = None,
) -> Path:
    """Write the index of ``docs`` (``(doc_id, tokens)`` pairs, or ``(doc_id, text)`` with ``tokenize``)
    into ``folder``; returns the folder. ``config`` and ``tokenizer`` are recorded as by ``BM25.save``."""
    spilled = spill_on_disk(folder, docs, tokenize=tokenize, chunk_size=chunk_size)
    return finish_on_disk(spilled, p, config, tokenizer=tokenizer, stats=stats)


def spill_on_disk(
    folder: str | PathLike[str],
    docs: Iterable[tuple[str, Any]],
    *,
    tokenize: Callable[[list[str]], list[list[str]]] | None = None,
    chunk_size: int = DEFAULT_CHUNK,
) -> Spill:
    """Pass 1 into ``folder``: read ``docs`` a chunk at a time and spill their postings; the folder's statistics."""

    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise FinegrainError(f"chunk_size={chunk_size!r} is not a whole number >= 1", "pass chunk_size=100_000, say")
    if isinstance(docs, (str, bytes)):
        raise FinegrainError("expected (doc_id, tokens) pairs, got a string", "pass an iterable of pairs")
    path = prepare_folder(folder)
    spill = path / _SPILL
    shutil.rmtree(spill, ignore_errors=True)
    spill.mkdir()
    try:
        runs, terms, df, lengths = _spill(spill, docs, tokenize, chunk_size)
        if len(lengths) == 0:
            raise FinegrainError("cannot index an empty corpus", "pass at least one document")
        np.save(spill / "df.npy", df, allow_pickle=False)
        np.save(spill / "lengths.npy", lengths, allow_pickle=False)
        (spill / "vocab.json").write_text(json.dumps(list(terms), ensure_ascii=False), encoding="utf-8")
        (spill / _MANIFEST).write_text(json.dumps({"runs": [[r.name, n] for r, n in runs]}), encoding="utf-8")
    except BaseException:
        shutil.rmtree(spill, ignore_errors=True)
        raise
    return Spill(path, CorpusStats(len(lengths), int(lengths.sum()), tuple(terms), df))


def finish_on_disk(
    spilled: Spill, p: BM25Params, config: dict[str, Any], *, tokenizer: dict[str, Any] | None = None,
    stats: CorpusStats | None = None,
) -> Path:
    """Pass 2: weigh the spilled postings (with ``stats``, default the folder's own) into the index files."""
    path = spilled.folder
    spill = path / _SPILL
    try:
        manifest = json.loads((spill / _MANIFEST).read_text(encoding="utf-8"))
        df = np.load(spill / "df.npy")
        lengths = np.load(spill / "lengths.npy")
        terms = json.loads((spill / "vocab.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise FinegrainError(f"no complete spill in {str(path)!r} ({e})",
                             "spill again (spill_on_disk); a spill is finished once") from None
    runs = [(spill / name, int(size)) for name, size in manifest["runs"]]
    try:
        n = len(lengths)
        if stats is None:
            avgdl = int(lengths.sum()) / n
            idf = _idf(p, df.astype(np.float64), n)
        else:
            avgdl = stats.total_length / stats.n_docs
            idf = stats.idf(p)[stats.positions(terms, df)]
        nnz = sum(size for _, size in runs)
        index_dtype = np.int32 if max(nnz, n) < 2**31 - 1 else np.int64
        indptr = np.zeros(len(terms) + 1, dtype=index_dtype)
        np.cumsum(df, out=indptr[1:])
        _merge(spill, runs, p, idf, lengths, avgdl, indptr, index_dtype)
        for name, a in (("indptr", indptr), ("doc_lengths", lengths), ("idf", idf)):
            tmp = spill / f"{name}.npy"
            np.save(tmp, a, allow_pickle=False)
            place(tmp, path / f"{name}.npy")
        for name in ("indices.npy", "data.npy", "vocab.json", "doc_ids.json"):
            place(spill / name, path / name)
        write_meta(path, config, tokenizer, n_docs=n, n_terms=len(terms), n_postings=nnz, avgdl=avgdl)
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    return path


def _chunks(docs: Iterable[tuple[str, Any]], size: int) -> Iterator[list[tuple[str, Any]]]:
    it = iter(docs)
    while chunk := list(islice(it, size)):
        yield chunk


def _spill(
    spill: Path, docs: Iterable[tuple[str, Any]], tokenize: Callable[[list[str]], list[list[str]]] | None,
    chunk_size: int,
) -> tuple[list[tuple[Path, int]], dict[str, int], np.ndarray, np.ndarray]:
    """Pass 1: run files ``(path, n postings)``, the vocabulary, df, document lengths (ids: ``doc_ids.json``)."""
    terms: dict[str, int] = {}
    df = np.zeros(1024, dtype=np.int64)
    lengths: list[np.ndarray] = []
    seen: set[str] = set()
    runs: list[tuple[Path, int]] = []
    n = 0
    ids_path = spill / "doc_ids.json"
    with ids_path.open("w", encoding="utf-8") as ids_out:
        ids_out.write("[")
        for chunk in _chunks(docs, chunk_size):
            ids, toks = _unpack(chunk, n)
            if tokenize is not None:
                toks = tokenize(toks)
            check_corpus(toks, ids)
            for d in ids:
                if d in seen:
                    raise DuplicateIdError(f"document id {d!r} appears twice", "list every document id once")
                seen.add(d)
            post = postings(toks)
            local = list(post.terms)
            gid = np.fromiter((terms.setdefault(t, len(terms)) for t in local), dtype=np.int64, count=len(local))
            if len(terms) > len(df):
                df = np.concatenate([df, np.zeros(max(len(terms), 2 * len(df)) - len(df), dtype=np.int64)])
            df[gid] += post.df
            row = gid[post.row]
            order = np.argsort(row, kind="stable")  # by global term; documents stay ascending within a term
            run = spill / f"run{len(runs):05d}.npz"
            np.savez(run, row=row[order].astype(np.int32 if len(terms) < 2**31 else np.int64),
                     col=(post.col[order] + n), tf=post.tf[order].astype(np.int32))
            runs.append((run, len(row)))
            lengths.append(post.lengths)
            ids_out.write((", " if n else "") + ", ".join(json.dumps(d, ensure_ascii=False) for d in ids))
            n += len(ids)
            del post, row, order, gid, toks
        ids_out.write("]")
    return runs, terms, df[: len(terms)].copy(), (np.concatenate(lengths) if lengths else np.zeros(0, np.int64))


def _unpack(chunk: list[tuple[str, Any]], offset: int) -> tuple[list[str], list[Any]]:
    ids: list[str] = []
    toks: list[Any] = []
    for i, pair in enumerate(chunk):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise FinegrainError(f"document {offset + i} is {str(pair)[:60]!r}, not a (doc_id, tokens) pair",
                                 "pass pairs, e.g. zip(doc_ids, token_lists)")
        ids.append(pair[0])
        toks.append(pair[1])
    return ids, toks


def _merge(
    spill: Path, runs: list[tuple[Path, int]], p: BM25Params, idf: np.ndarray, lengths: np.ndarray, avgdl: float,
    indptr: np.ndarray, index_dtype: type,
) -> None:
    """Pass 2: scatter each run's weighted postings into the memory-mapped output arrays."""
    nnz = int(indptr[-1])
    indices = np.lib.format.open_memmap(spill / "indices.npy", mode="w+", dtype=index_dtype, shape=(nnz,))
    data = np.lib.format.open_memmap(spill / "data.npy", mode="w+", dtype=np.float64, shape=(nnz,))
    n_terms = len(indptr) - 1
    free = indptr[:-1].astype(np.int64)  # each term's next free slot
    for run, size in runs:
        with np.load(run) as z:
            row, col, tf = z["row"], z["col"], z["tf"]
        if len(row) != size:
            raise FinegrainError(f"spill file {run} holds {len(row)} postings, expected {size}", "build again")
        counts = np.bincount(row, minlength=n_terms)
        first = np.cumsum(counts) - counts  # where each term's postings start in this run
        dest = free[row] + (np.arange(len(row), dtype=np.int64) - first[row])
        indices[dest] = col
        # The in-memory builder's expression, element for element: idf[term] * tfc(tf, |d|, avgdl).
        w = idf[row]
        w *= _tfc(p, tf.astype(np.float64), lengths[col].astype(np.float64), avgdl)
        data[dest] = w
        free += counts
        run.unlink()
        del row, col, tf, dest, w
    indices.flush()
    data.flush()
    del indices, data

