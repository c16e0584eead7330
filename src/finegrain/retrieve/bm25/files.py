"""A BM25 index on disk: plain arrays (one ``.npy`` file each, memory-mappable) and JSON, no pickle.

``bm25.json`` (parameters, tokenizer config, sizes, format version) is written
last, so its presence marks a complete index; reading checks every size against it.

Files (version 3): ``indptr.npy``, ``indices.npy``, ``data.npy`` (the term-by-document
matrix in CSR form: each term's documents ascending, with their score weights),
``doc_lengths.npy``, ``idf.npy``, ``vocab.json`` (terms in row order) and
``doc_ids.json``. :func:`read_index` maps the arrays (``numpy.load(mmap_mode="r")``)
by default: the OS pages postings in as queries touch them, so an index larger
than memory serves queries, and loading is instant. The streaming builder
(:mod:`~finegrain.retrieve.bm25.stream`) writes the same files.

Format versions: 3 stores each array as its own ``.npy``; 2 (one ``arrays.npz``)
records the tokenizer (``"tokenizer"``: the JSON of
:meth:`finegrain.text.Tokenizer.config`, or null when the index was built from
token lists); 1 (finegrain before the text layer) has no tokenizer and is read
as version 2 with ``"tokenizer": null``. Versions 1 and 2 are read into memory.
"""

from __future__ import annotations

import json
import os
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from finegrain.atomic import atomic_write, write_text
from finegrain.errors import FinegrainError
from finegrain.retrieve.bm25.index import BM25Index, frozen_array, read_only_csr

FORMAT = "finegrain-bm25"
FORMAT_VERSION = 3
READS_VERSIONS = (1, 2, 3)
_META = "bm25.json"
_ARRAYS = "arrays.npz"  # versions 1 and 2
ARRAY_NAMES = ("indptr", "indices", "data", "doc_lengths", "idf")
_VOCAB = "vocab.json"
_DOC_IDS = "doc_ids.json"


def write_index(
    folder: str | PathLike[str], idx: BM25Index, config: dict[str, Any], *, tokenizer: dict[str, Any] | None = None
) -> Path:
    """Write ``idx`` (with the scorer's ``config`` and the ``tokenizer``'s config) into ``folder``; returns the folder."""
    path = prepare_folder(folder)
    indptr, indices, data = idx.postings
    for name, a in zip(ARRAY_NAMES, (indptr, indices, data, idx.doc_lengths, idx.idf)):
        with atomic_write(path / f"{name}.npy", "wb") as f:
            np.save(f, a, allow_pickle=False)
    terms = sorted(idx.terms, key=idx.terms.__getitem__)
    _write_json(path / _VOCAB, terms)
    _write_json(path / _DOC_IDS, list(idx.doc_ids))
    write_meta(path, config, tokenizer, n_docs=idx.n_docs, n_terms=len(terms), n_postings=len(indices), avgdl=idx.avgdl)
    return path


def prepare_folder(folder: str | PathLike[str]) -> Path:
    """``folder``, created; refused when it is a file or a non-empty folder holding no index."""
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise FinegrainError(f"{str(path)!r} is a file, not a folder", "choose a folder path for the index")
    if path.is_dir() and not (path / _META).is_file() and not all(map(_is_index_file, path.iterdir())):
        raise FinegrainError(
            f"folder {str(path)!r} is not empty and holds no finegrain BM25 index",
            "save into a new or empty folder (an existing index folder is overwritten)",
        )
    path.mkdir(parents=True, exist_ok=True)
    (path / _META).unlink(missing_ok=True)  # until rewritten, the folder holds no complete index
    (path / _ARRAYS).unlink(missing_ok=True)  # an older version's arrays
    return path


def write_meta(path: Path, config: dict[str, Any], tokenizer: dict[str, Any] | None, **sizes: Any) -> None:
    """Write ``bm25.json`` -- last: its presence marks a complete index."""
    _write_json(path / _META, {"format": FORMAT, "version": FORMAT_VERSION, **config, "tokenizer": tokenizer, **sizes})


def _is_index_file(p: Path) -> bool:
    """A file an index (or an interrupted write of one) leaves in its folder."""
    return (p.name in (_META, _ARRAYS, _VOCAB, _DOC_IDS) or p.name in {f"{n}.npy" for n in ARRAY_NAMES}
            or (p.name.startswith(".") and p.name.endswith((".tmp", ".spill"))))


def place(tmp: Path, final: Path) -> None:
    """Move a finished file into place by renaming: an index mapped from the old file keeps reading it."""
    os.replace(tmp, final)


def read_index(folder: str | PathLike[str], *, mmap: bool = True) -> tuple[dict[str, Any], BM25Index]:
    """The metadata and index in ``folder`` (written by :func:`write_index`); clear errors when damaged.

    ``mmap``: map the arrays of a version-3 index read-only instead of reading them into memory.
    """
    path = Path(folder)
    meta_path = path / _META
    if not path.is_dir():
        raise FinegrainError(f"BM25 index folder {str(path)!r} does not exist", "check the path, or build and save an index")
    if not meta_path.is_file():
        raise FinegrainError(
            f"{str(path)!r} is not a finegrain BM25 index (no {_META})",
            "point to a folder written by BM25.save()",
        )
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise FinegrainError(f"{str(meta_path)!r} is not readable JSON: {e}", "rebuild the index") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise FinegrainError(
            f"{str(path)!r} is not a finegrain BM25 index ({_META} has format {meta.get('format') if isinstance(meta, dict) else None!r})",
            "point to a folder written by BM25.save()",
        )
    if meta.get("version") not in READS_VERSIONS:
        raise FinegrainError(
            f"BM25 index {str(path)!r} has format version {meta.get('version')!r}; this finegrain reads "
            f"{', '.join(map(str, READS_VERSIONS))}",
            "rebuild the index with this version of finegrain",
        )
    meta = _migrate(meta)
    try:
        if meta["version"] >= 3:
            arrays = {name: np.load(path / f"{name}.npy", mmap_mode="r" if mmap else None, allow_pickle=False)
                      for name in ARRAY_NAMES}
        else:
            with np.load(path / _ARRAYS, allow_pickle=False) as z:
                arrays = {name: z[name] for name in ARRAY_NAMES}
        terms = json.loads((path / _VOCAB).read_text(encoding="utf-8"))
        doc_ids = json.loads((path / _DOC_IDS).read_text(encoding="utf-8"))
    except (OSError, KeyError, ValueError) as e:
        raise FinegrainError(f"BM25 index {str(path)!r} is incomplete or damaged: {e}", "rebuild the index") from None
    n_docs, n_terms = len(doc_ids), len(terms)
    if (meta.get("n_docs") != n_docs or meta.get("n_terms") != n_terms or len(arrays["indptr"]) != n_terms + 1
            or len(arrays["doc_lengths"]) != n_docs or len(arrays["idf"]) != n_terms
            or len(arrays["data"]) != len(arrays["indices"]) or int(arrays["indptr"][-1]) != len(arrays["data"])):
        raise FinegrainError(f"BM25 index {str(path)!r} has inconsistent array sizes", "rebuild the index")
    matrix = read_only_csr(sp.csr_array((arrays["data"], arrays["indices"], arrays["indptr"]), shape=(n_terms, n_docs)))
    index = BM25Index(
        doc_ids=tuple(doc_ids),
        terms={t: i for i, t in enumerate(terms)},
        matrix=matrix,
        doc_lengths=frozen_array(arrays["doc_lengths"]),
        idf=frozen_array(arrays["idf"]),
        avgdl=float(meta["avgdl"]),
    )
    return meta, index


def _migrate(meta: dict[str, Any]) -> dict[str, Any]:
    """Version 1 -> 2: the same arrays, no tokenizer recorded."""
    if meta["version"] == 1:
        meta = {**meta, "version": 2, "tokenizer": None, "migrated_from": 1}
    return meta


def _write_json(path: Path, data: object) -> None:
    write_text(path, json.dumps(data, ensure_ascii=False))
