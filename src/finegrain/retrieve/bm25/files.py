"""A BM25 index on disk: plain arrays (``arrays.npz``) and JSON, no pickle.

``bm25.json`` (parameters, tokenizer config, sizes, format version) is written
last, so its presence marks a complete index; reading checks every size against it.

Format versions: 2 records the tokenizer (``"tokenizer"``: the JSON of
:meth:`finegrain.text.Tokenizer.config`, or null when the index was built from
token lists); 1 (finegrain before the text layer) has no tokenizer and is read
as version 2 with ``"tokenizer": null`` -- its arrays are the same.
"""

from __future__ import annotations

import json
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from finegrain.errors import FinegrainError
from finegrain.retrieve.bm25.index import BM25Index, frozen_array, read_only_csr

FORMAT = "finegrain-bm25"
FORMAT_VERSION = 2
READS_VERSIONS = (1, 2)
_META = "bm25.json"
_ARRAYS = "arrays.npz"
_VOCAB = "vocab.json"
_DOC_IDS = "doc_ids.json"


def write_index(
    folder: str | PathLike[str], idx: BM25Index, config: dict[str, Any], *, tokenizer: dict[str, Any] | None = None
) -> Path:
    """Write ``idx`` (with the scorer's ``config`` and the ``tokenizer``'s config) into ``folder``; returns the folder."""
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise FinegrainError(f"{str(path)!r} is a file, not a folder", "choose a folder path for the index")
    if path.is_dir() and any(path.iterdir()) and not (path / _META).is_file():
        raise FinegrainError(
            f"folder {str(path)!r} is not empty and holds no finegrain BM25 index",
            "save into a new or empty folder (an existing index folder is overwritten)",
        )
    path.mkdir(parents=True, exist_ok=True)
    m = idx.matrix
    np.savez(
        path / _ARRAYS,
        data=m.data, indices=m.indices, indptr=m.indptr,
        doc_lengths=idx.doc_lengths, idf=idx.idf,
    )
    terms = sorted(idx.terms, key=idx.terms.__getitem__)
    _write_json(path / _VOCAB, terms)
    _write_json(path / _DOC_IDS, list(idx.doc_ids))
    meta = {
        "format": FORMAT, "version": FORMAT_VERSION, **config, "tokenizer": tokenizer,
        "n_docs": idx.n_docs, "n_terms": len(terms), "n_postings": int(m.nnz), "avgdl": idx.avgdl,
    }
    _write_json(path / _META, meta)  # written last: its presence marks a complete index
    return path


def read_index(folder: str | PathLike[str]) -> tuple[dict[str, Any], BM25Index]:
    """The metadata and index in ``folder`` (written by :func:`write_index`); clear errors when damaged."""
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
        with np.load(path / _ARRAYS, allow_pickle=False) as z:
            arrays = {name: z[name] for name in ("data", "indices", "indptr", "doc_lengths", "idf")}
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
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
