"""The retriever boundary: what every retriever (BM25, dense, hybrid, ...) offers the evaluator."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

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
