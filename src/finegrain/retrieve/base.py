"""The retriever boundary: what every retriever (BM25, dense, hybrid, ...) offers the evaluator."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from finegrain.types import Corpus, Queries, Run


@runtime_checkable
class Retriever(Protocol):
    """Ranks a corpus for a set of queries.

    ``name`` is the registry name. ``config()`` returns JSON-able parameters
    recorded as provenance next to the results. ``retrieve`` builds whatever
    index it needs from ``corpus`` and returns one :class:`~finegrain.types.Run`
    entry per query (possibly empty); ``lang`` is the language code of the
    texts (``"zh"``, ``"en"``) and ``top_k`` caps the results per query
    (``None``: the retriever's own cut).
    """

    name: str

    def config(self) -> dict[str, Any]: ...

    def retrieve(
        self, corpus: Corpus, queries: Queries, *, lang: str, top_k: int | None, show_progress: bool = True
    ) -> Run: ...


#: How a retriever may be spread over shards by an executor (``finegrain eval --engine ray``):
#: ``"bm25"`` -- its index splits by documents under global statistics; ``"dense"`` -- its vectors encode and
#: search by shards; ``"parts"`` -- each of its ``parts`` runs on its own and ``fuse_runs`` joins them.
#: A retriever that declares none runs whole, in one process.
ShardForm = Literal["bm25", "dense", "parts"]


@runtime_checkable
class Shardable(Protocol):
    """A retriever that says how it may be sharded (:data:`ShardForm`)."""

    shard_form: ClassVar[ShardForm | None]


@runtime_checkable
class FusesParts(Protocol):
    """A retriever that retrieves with each of ``parts`` (to ``depth``) and fuses their runs."""

    parts: Sequence[Retriever]
    depth: int | None

    def fuse_runs(self, runs: list[Run]) -> Run: ...
