"""Reranking a first stage's head: the retriever that reranks (:mod:`.retriever`), the scorers it takes
(:mod:`.scorers`: bi-encoders, sparse heads, term coverage (:mod:`.coverage`), a cross-encoder
(:mod:`.cross_encoder`)), mixed with the first stage by ``alpha``."""
