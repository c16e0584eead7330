"""The engine of an evaluation: ``local`` (this process) or ``ray`` (a local Ray, or a cluster).

:class:`Engine` is the choice (frozen, checked); :meth:`Engine.open` starts or
joins Ray and yields an executor with the two expensive steps of
:func:`finegrain.experiment.run.run_experiment`:

* ``retrieve(retriever, corpus, queries, lang=, top_k=, show_progress=)`` -- on
  Ray, BM25 (:mod:`.ray_bm25`) and dense retrievers (:mod:`.ray_dense`) run
  sharded, and a hybrid runs each of its parts so (fused in the driver); any
  other retriever (rerank) runs in this process, and the executor says so
  in :attr:`RayExecutor.notes` (saved as a provenance warning);
* ``evaluate(qrels, run, specs, queries=, query_types=)`` -- on Ray, per-query
  values over query shards (:mod:`.ray_metrics`).

Ray is started with ``address="local"`` when no address is given (a private
local instance, even if a cluster runs on this machine) and shut down
afterwards; with an address (``127.0.0.1:6379``, ``ray://host:10001``,
``auto``) it joins that cluster and leaves it running. When Ray is already
initialised in this process (a notebook, a test fixture), that session is used
as it is and left open.
"""

from __future__ import annotations

import logging
import re
import socket
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from tqdm.auto import tqdm

from finegrain._lazy import require
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.evaluate.evaluate import evaluate
from finegrain.experiment.executors.ray_bm25 import retrieve_bm25
from finegrain.experiment.executors.ray_data import quiet_ray_data
from finegrain.experiment.executors.ray_dense import retrieve_dense
from finegrain.experiment.executors.ray_metrics import evaluate_sharded
from finegrain.retrieve.base import FusesParts, Shardable

EngineKind = Literal["local", "ray"]
ENGINES: tuple[str, ...] = ("local", "ray")
RAY_EXTRA = "ray"


#: the sharded form of each :data:`~finegrain.retrieve.base.ShardForm` that runs on shards as itself
SHARDED: dict[str, Callable[..., Any]] = {"bm25": retrieve_bm25, "dense": retrieve_dense}


@dataclass(frozen=True)
class Engine:
    """Where :func:`~finegrain.experiment.run.run_experiment` runs retrieval and metrics.

    ``address``: a Ray cluster to join (``ray`` only; None starts a local Ray);
    ``num_cpus``: CPUs of a local Ray (None: all of this machine's);
    ``shards``: corpus and query shards (None: the cluster's CPUs, at least 2);
    ``workers``: encoding actors, one CPU each (None: the cluster's CPUs).
    """

    kind: EngineKind = "local"
    address: str | None = None
    num_cpus: int | None = None
    shards: int | None = None
    workers: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ENGINES:
            raise UnknownNameError("engine", str(self.kind), ENGINES)
        ray_only = {"address": self.address, "num_cpus": self.num_cpus, "shards": self.shards, "workers": self.workers}
        given = next((name for name, v in ray_only.items() if v is not None), None)
        if self.kind == "local" and given is not None:
            raise FinegrainError(f"{given} is an option of the ray engine; the engine is 'local'",
                                 "pass --engine ray (Engine('ray', ...)) or drop the option")
        if self.address is not None and (not isinstance(self.address, str) or not self.address.strip()):
            raise FinegrainError(f"Ray address {self.address!r} is empty",
                                 "pass the address 'ray start --head' printed, e.g. 127.0.0.1:6379, or none")
        if self.address is not None and self.num_cpus is not None:
            raise FinegrainError("num_cpus sizes a local Ray; a cluster joined by address has its own CPUs",
                                 "drop num_cpus, or drop the address to start a local Ray")
        for name in ("num_cpus", "shards", "workers"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise FinegrainError(f"{name}={v!r} is not a whole number >= 1", f"pass {name}=2, say, or None")

    def describe(self) -> dict[str, Any]:
        """JSON-able, for provenance."""
        return {"kind": self.kind, "address": self.address, "num_cpus": self.num_cpus, "shards": self.shards,
                "workers": self.workers}

    @contextmanager
    def open(self, *, show_progress: bool = True) -> Iterator[LocalExecutor | RayExecutor]:
        """The executor of this engine; for ``ray``, Ray is up while the block runs."""
        if self.kind == "local":
            yield LocalExecutor()
            return
        with ray_session(self.address, num_cpus=self.num_cpus, show_progress=show_progress) as ray:
            yield RayExecutor(ray, self, show_progress=show_progress)


LOCAL = Engine()


# --------------------------------------------------------------------------- executors


class LocalExecutor:
    """This process: the retriever's own ``retrieve`` and :func:`finegrain.evaluate.evaluate`."""

    kind = "local"
    notes: tuple[str, ...] = ()

    def retrieve(self, retriever: Any, corpus: Any, queries: Any, *, lang: str, top_k: int | None,
                 show_progress: bool = True) -> Any:
        return retriever.retrieve(corpus, queries, lang=lang, top_k=top_k, show_progress=show_progress)

    def evaluate(self, qrels: Any, run: Any, metrics: Any, *, queries: Sequence[str] | None = None,
                 query_types: Mapping[str, str | None] | None = None) -> Any:
        return evaluate(qrels, run, metrics, queries=queries, query_types=query_types, warn=False)

    def describe(self) -> dict[str, Any]:
        return {"kind": "local"}


@dataclass
class RayExecutor:
    """Runs the stages on the Ray session ``ray`` (the imported module, initialised)."""

    ray: Any
    engine: Engine
    show_progress: bool = True
    notes: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)  # what the stages report (cache hits, ...), for provenance
    kind: str = "ray"

    @property
    def n_workers(self) -> int:
        """Encoding actors: the engine's, else the cluster's CPUs."""
        if self.engine.workers is not None:
            return self.engine.workers
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    @property
    def n_shards(self) -> int:
        """Shards per stage: the engine's, else the cluster's CPUs (at least 2, so the merge always runs)."""
        if self.engine.shards is not None:
            return self.engine.shards
        cpus = int(self.ray.cluster_resources().get("CPU", 1))
        return max(2, cpus)

    def retrieve(self, retriever: Any, corpus: Any, queries: Any, *, lang: str, top_k: int | None,
                 show_progress: bool = True) -> Any:
        form = retriever.shard_form if isinstance(retriever, Shardable) else None
        if form == "parts" and isinstance(retriever, FusesParts):  # each part on Ray as itself, fused here
            runs = [self.retrieve(p, corpus, queries, lang=lang, top_k=retriever.depth, show_progress=show_progress)
                    for p in retriever.parts]
            fused = retriever.fuse_runs(runs)
            cut = top_k if top_k is not None else retriever.depth
            return fused.cut(cut) if cut is not None else fused
        if form in SHARDED:
            return SHARDED[form](self, retriever, corpus, queries, lang=lang, top_k=top_k)
        self.notes.append(f"engine ray: retriever {getattr(retriever, 'name', type(retriever).__name__)!r} has no "
                          "sharded form (BM25, dense and fusions of them have); it ran in the driver process")
        return retriever.retrieve(corpus, queries, lang=lang, top_k=top_k, show_progress=show_progress)

    def evaluate(self, qrels: Any, run: Any, metrics: Any, *, queries: Sequence[str] | None = None,
                 query_types: Mapping[str, str | None] | None = None) -> Any:
        return evaluate_sharded(self, qrels, run, metrics, queries=queries, query_types=query_types)

    def describe(self) -> dict[str, Any]:
        res = self.ray.cluster_resources()
        return {"kind": "ray", "address": self.engine.address, "shards": self.n_shards, "workers": self.n_workers,
                "cluster_cpus": res.get("CPU"), "nodes": len(self.ray.nodes()), "ray_version": self.ray.__version__,
                **self.stats}

    # -- helpers for the stages ---------------------------------------------------

    def gather(self, refs: Sequence[Any], desc: str) -> list[Any]:
        """``ray.get`` of ``refs`` in their order, with a progress bar of shards done (as they finish)."""

        ray = self.ray
        pending = list(refs)
        with tqdm(total=len(pending), desc=desc, unit="shard", disable=not self.show_progress, leave=False) as bar:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                _get(ray, done)  # raise a failed shard's error now
                bar.update(len(done))
        return list(_get(ray, list(refs)))


def _get(ray: Any, refs: Any) -> Any:
    """``ray.get``, a task's FinegrainError raised as itself and any other failure as a FinegrainError."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, FinegrainError):
            raise cause from None
        raise FinegrainError(f"a Ray task failed: {type(cause).__name__ if cause else 'error'}: {cause or e}",
                             "see the worker's log above; run again with --engine local to debug") from None


# --------------------------------------------------------------------------- the Ray session


@contextmanager
def ray_session(address: str | None, *, num_cpus: int | None = None, show_progress: bool = True) -> Iterator[Any]:
    """Ray, initialised: joined at ``address``, or a local instance started (and stopped) here."""

    ray = require("ray", RAY_EXTRA)
    if ray.is_initialized():
        quiet_ray_data()
        yield ray
        return
    if address is not None:
        _check_reachable(address)  # Ray itself retries an unreachable address for minutes
    try:
        ray.init(
            address=address if address is not None else "local",
            num_cpus=num_cpus,
            include_dashboard=False,
            logging_level=logging.WARNING,
            log_to_driver=show_progress,
        )
    except (ConnectionError, TimeoutError, RuntimeError, ValueError) as e:
        where = f"the Ray cluster at {address!r}" if address is not None else "a local Ray"
        hint = ("start one with 'ray start --head' on the head node and pass the address it prints "
                "(e.g. --address 127.0.0.1:6379), or drop --address to start a local Ray; a cluster with token "
                "authentication (Ray's default) also needs RAY_AUTH_MODE=token here and the head's "
                "~/.ray/auth_token (or RAY_AUTH_TOKEN)"
                if address is not None else "check that Ray runs on this machine: ray start --head")
        raise FinegrainError(f"cannot start or join {where}: {e}", hint) from None
    try:
        quiet_ray_data()
        yield ray
    finally:
        ray.shutdown()


_HOST_PORT = re.compile(r"^\[?([^\]/]+?)\]?:(\d{1,5})$")  # host:port or [v6]:port; not auto, ray://, ...


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """A ``host:port`` address must accept a TCP connection (the head's GCS port), else a clear error now."""
    m = _HOST_PORT.match(address.strip())
    if m is None:
        return
    host, port = m.group(1), int(m.group(2))
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as e:
        raise FinegrainError(
            f"no Ray cluster answers at {address!r} ({e.strerror or type(e).__name__})",
            "start the head with 'ray start --head --port 6379' and pass the address it prints "
            "(e.g. --address 127.0.0.1:6379), or drop --address to start a local Ray",
        ) from None
