"""finegrain: retrieval evaluation, diagnosis and search that gets the details right."""

from finegrain.types import Corpus, Document, Qrels, Queries, Query, Run

__version__ = "0.1.0"

__all__ = ["Corpus", "Document", "Qrels", "Queries", "Query", "Run", "__version__"]
