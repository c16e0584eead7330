"""Encoding on Ray Data, behind finegrain's one embedding cache.

:class:`RayDataEncoder` is an :class:`~finegrain.retrieve.dense.encoders.base.Encoder`
whose ``encode`` runs a Ray Data job: the texts in blocks, mapped by a pool of
actors (one CPU each) that each build the encoder once. It is meant to sit
inside :class:`~finegrain.retrieve.dense.encoders.cache.CachedEncoder`, exactly as a
local encoder does in :class:`~finegrain.retrieve.dense.retriever.DenseRetriever`: the
driver looks every text up in the cache (``$FINEGRAIN_CACHE``, one format for
both engines), sends only the missing ones to Ray, and writes what comes back
as cache shards. A second run, on either engine, encodes nothing. The cache
lives where the driver runs, so workers on other machines need no shared
folder; vectors travel through Ray's object store.

The encoder is built in each actor by a :class:`EncoderFactory` (a copy of the
retriever's configuration, or a picklable Encoder object), so its model id
and dimension are the driver's and its vectors are cached under the same keys.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm.auto import tqdm

from finegrain.errors import FinegrainError
from finegrain.experiment.executors.ray_data import quiet_ray_data
from finegrain.retrieve.dense.encoders.cache import CachedEncoder, EmbeddingCache
from finegrain.settings import default_cache_dir

if TYPE_CHECKING:
    from finegrain.retrieve.dense.encoders.base import Encoder
    from finegrain.retrieve.dense.retriever import DenseRetriever

#: Texts per :meth:`RayDataEncoder.encode` call from the cache wrapper (its flush unit: progress kept).
CHUNK = 16_384
#: Most texts per block, hence per actor call (each actor encodes them in the encoder's own batches).
ACTOR_BATCH = 256


@dataclass(frozen=True)
class EncoderFactory:
    """Builds the encoder of ``retriever`` (a fresh copy of its configuration) in a worker."""

    retriever: DenseRetriever

    @classmethod
    def of(cls, retriever: DenseRetriever) -> EncoderFactory:
        return cls(dataclasses.replace(retriever))  # no loaded model travels: the copy builds its own

    def __call__(self) -> Encoder:
        return self.retriever.get_encoder()


def _actor_class(factory: EncoderFactory, kind: str) -> type:
    """The Ray Data actor class: holds one encoder, maps a batch ``{"i", "text"}`` to ``{"i", "vec"}``.
    The factory travels inside the class (pickled with it), not as constructor arguments in the object store."""

    class EncodeBatch:
        def __init__(self) -> None:
            self.encoder = factory()

        def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
            texts = [str(t) for t in batch["text"].tolist()]
            vecs = self.encoder.encode(texts, kind=kind)  # type: ignore[arg-type]
            return {"i": batch["i"], "vec": np.asarray(vecs, dtype=np.float32)}

    return EncodeBatch


def _no_restarts() -> dict[str, Any]:
    """A failed actor fails the job: no restarts (Ray warns about restarting from arguments in the object store)."""
    return {"max_restarts": 0}


class RayDataEncoder:
    """An Encoder whose ``encode`` is a Ray Data job over ``workers`` actors (see the module docstring)."""

    builtin_prefixes = False

    def __init__(self, ray: Any, factory: EncoderFactory, *, model_id: str, dim: int, workers: int,
                 show_progress: bool = False, config: dict[str, Any] | None = None) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise FinegrainError(f"workers={workers!r} is not a whole number >= 1", "pass workers=2, say")
        self.ray = ray
        self.factory = factory
        self.model_id = model_id
        self.dim = int(dim)
        self.workers = workers
        self.batch_size = CHUNK  # what CachedEncoder hands over per call
        self.show_progress = show_progress
        self._config = dict(config or {})
        self.n_encoded = 0

    def config(self) -> dict[str, Any]:
        return {**self._config, "engine": "ray-data", "workers": self.workers}

    def encode(self, texts: Sequence[str], *, kind: str) -> np.ndarray:
        from ray.data import ActorPoolStrategy, from_items

        quiet_ray_data()

        n = len(texts)
        out = np.empty((n, self.dim), dtype=np.float32)
        if n == 0:
            return out
        blocks = max(4 * self.workers, -(-n // ACTOR_BATCH))  # small blocks: no worker waits on another's last one
        ds = from_items([{"i": i, "text": t} for i, t in enumerate(texts)], override_num_blocks=blocks)
        with warnings.catch_warnings():  # Ray 2.60 has no other way to pass max_restarts to Ray Data's actors
            warnings.filterwarnings("ignore", message=".*ray_remote_args.* is deprecated")
            mapped = ds.map_batches(
                _actor_class(self.factory, kind), batch_size=ACTOR_BATCH, batch_format="numpy",
                compute=ActorPoolStrategy(size=min(self.workers, blocks)), num_cpus=1,
                ray_remote_args_fn=_no_restarts,
            )
        done = np.zeros(n, dtype=bool)
        with tqdm(total=n, desc=f"encode {kind}s (Ray Data, {self.workers} workers)", unit="text",
                  disable=not self.show_progress, leave=False) as bar:
            for batch in mapped.iter_batches(batch_size=None, batch_format="numpy"):
                idx = np.asarray(batch["i"], dtype=np.int64)
                vec = np.asarray(batch["vec"], dtype=np.float32)
                if vec.shape != (len(idx), self.dim):
                    raise FinegrainError(f"encoder {self.model_id!r} returned vectors of shape {vec.shape} for "
                                         f"{len(idx)} texts on a Ray worker", f"an encoder must return {self.dim}-d rows")
                out[idx] = vec
                done[idx] = True
                bar.update(len(idx))
        if not done.all():
            raise FinegrainError(f"Ray Data returned {int(done.sum())} of {n} vectors",
                                 "run again; if it persists, use --engine local")
        self.n_encoded += n
        return out


def encode_cached(ray: Any, retriever: DenseRetriever, texts: Sequence[str], *, kind: str, workers: int,
                  show_progress: bool = False) -> tuple[np.ndarray, dict[str, int]]:
    """``texts`` encoded by ``retriever``'s encoder on Ray, through its embedding cache (when it has one):
    the vectors and the cache counts (``requested``, ``hits``, ``misses``)."""

    local = retriever.get_encoder()  # model id and dim only: e5 loads its model on first encode
    remote = RayDataEncoder(ray, EncoderFactory.of(retriever), model_id=local.model_id, dim=int(local.dim),
                            workers=workers, show_progress=show_progress, config=local.config())
    cache = EmbeddingCache(cache_root(retriever)) if retriever.cache else None
    wrapped = CachedEncoder(remote, cache, show_progress=False)
    vecs = wrapped.encode(texts, kind=kind)  # type: ignore[arg-type]
    return vecs, wrapped.stats.to_dict()


def cache_root(retriever: DenseRetriever) -> str:
    """The retriever's cache folder: its ``cache_dir``, else ``$FINEGRAIN_CACHE`` (as the local path uses)."""
    if retriever.cache_dir is not None:
        return str(retriever.cache_dir)

    return str(default_cache_dir())
