"""Where the expensive stages of an evaluation run: in this process, or on a Ray cluster.

``finegrain eval ... --engine ray [--address ADDR]`` (and
``run_experiment(..., engine=Engine("ray"))``) runs on Ray:

* :mod:`.ray_bm25` -- sharded BM25: per-shard tokenizing and statistics, merged
  global statistics, per-shard indexes that score as the single index bit for
  bit, an exact top-k merge under the retriever's tie rule;
* :mod:`.ray_encode` -- passage and query encoding with Ray Data, behind the one
  embedding cache (:mod:`finegrain.retrieve.dense.encoders.cache`), so a second run
  encodes nothing;
* :mod:`.ray_dense` -- dense search over document shards with an exact top-k merge;
* :mod:`.ray_metrics` -- per-query metric values over query shards, aggregated
  once from the concatenated values;
* :mod:`.engine` -- :class:`~finegrain.experiment.executors.engine.Engine` (``local`` or
  ``ray``), starting a local Ray or joining a cluster, progress over shards.

Nothing here imports Ray until a Ray engine is opened; without it the error
says ``pip install 'finegrain[ray]'``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from finegrain._lazy import lazy_exports

if TYPE_CHECKING:
    from finegrain.experiment.executors.engine import ENGINES, Engine

__getattr__, __dir__ = lazy_exports(__name__, {".engine": "ENGINES Engine"})

__all__ = ["ENGINES", "Engine"]
