"""Rerankers and retrieve-then-rerank: the second stage of DuReader-retrieval's pipeline.

DuReader-retrieval (Qiu et al., 2022, Sec. 3.1) evaluates a two-stage system:
a first-stage retriever (BM25, or a dual encoder) returns the top N passages
(N=50 there) and a cross-encoder, which reads query and passage together,
re-scores only those. Here:

* :class:`Reranker` is the typed boundary (``score(query, passages)``);
* :class:`CrossEncoderReranker` adapts any local Hugging Face sequence
  classification model (a directory written by ``save_pretrained``) to it;
  it never downloads (``local_files_only=True``); needs the ``rerank`` extra;
* :func:`rerank` is the pure pipeline step on a :class:`~finegrain.types.Run`;
* :class:`RerankRetriever` (registry name ``rerank``) is the adapter from a
  first-stage Retriever + a Reranker to a Retriever.

**What happens beyond the depth.** Only the top ``depth`` documents of each
query (by the one ranking rule) are reranked. With ``rest="append"`` (the
default) the documents below keep their first-stage order underneath all
reranked ones, so recall at cut-offs beyond ``depth`` stays that of the first
stage; they get scores strictly below the lowest reranked score ``floor`` of
the query (``floor - s, floor - 2s, ...`` in first-stage order, with
``s = max(1, |floor|)``), so the scores of the tail are placeholders that only
encode order. ``rest="drop"`` returns the reranked top ``depth`` only.
Equal reranker scores are ordered by the Run rule (document id descending).

**Interpolating with the first stage.** A scorer weaker than the first stage
(a bi-encoder reranking a fused run) can still help in combination. With
``alpha`` set, a head document's score is ``alpha * r(reranker) + (1 - alpha)
* r(first stage)``, where ``r`` is, per query over the head, either the RRF
contribution ``1 / (fuse_k + rank)`` (``fuse="rrf"``, ranks by the one ranking
rule, 1 = best) or the min-max normalised score (``fuse="minmax"``; a constant
column normalises to 0). ``alpha=1`` keeps the reranker's order and ``alpha=0``
the first stage's (ties, as always, by document id descending); ``alpha=None``
(the default) returns the raw reranker scores. ``alpha`` and ``fuse`` declare grids
(:data:`ALPHA_GRID` x :data:`FUSES`, 22 points), so ``finegrain eval -r rerank --cv 5``
chooses them by cross-validation (fix either with ``--set``); :meth:`RerankRetriever.retrieve_grid` runs the first stage
and the scorer once for every grid point.

The scorers that need no cross-encoder (e5 with an instruction, e5's sparse
head, any sentence-transformers folder) are in
:mod:`finegrain.retrieve.rerank.scorers`; ``--set scorer=...`` picks one.
A scorer may have ``prepare(query_texts, passage_texts, lang=...)``: it is
called once with every text before the per-query ``score`` calls, so
bi-encoders encode each distinct text once, in batches.
A scorer may also have ``fit_corpus(texts, lang=...)``: it is called first with
every passage of the corpus (the coverage scorer's idf).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from finegrain.errors import FinegrainError
from finegrain.ranking import rank_docs
from finegrain.retrieve.base import Retriever
from finegrain.retrieve.fusion.hybrid import split_options
from finegrain.retrieve.registry import RETRIEVERS, get_retriever
from finegrain.retrieve.rerank.cross_encoder import CrossEncoderReranker, Reranker
from finegrain.retrieve.rerank.scorers import HYBRID_USE_K10_COVERAGE, HYBRID_USE_K10_COVERAGE_TUNED_ON, make_scorer
from finegrain.types import Corpus, Queries, Run

RESTS: tuple[str, ...] = ("append", "drop")
FUSES: tuple[str, ...] = ("rrf", "minmax")
#: the interpolation weights ``--cv`` tries (the reranker's share; 0 = first stage only, 1 = reranker only)
ALPHA_GRID: tuple[float, ...] = tuple(round(0.1 * i, 10) for i in range(11))
GRID_KEYS: tuple[str, ...] = ("alpha", "fuse", "fuse_k")  # what retrieve_grid varies without re-scoring


def alpha_grid(options: Mapping[str, Any]) -> tuple[float, ...]:
    """The ``alpha`` values ``--cv`` tries (:data:`ALPHA_GRID`, whatever the other options)."""
    return ALPHA_GRID


def fuse_grid(options: Mapping[str, Any]) -> tuple[str, ...]:
    """The ``fuse`` modes ``--cv`` tries with every ``alpha``: RRF over the two stages' ranks and min-max scores."""
    return FUSES


def rerank(
    run: Run,
    queries: Queries,
    corpus: Corpus,
    reranker: Reranker,
    *,
    depth: int = 100,
    rest: str = "append",
    name: str | None = None,
    show_progress: bool = False,
    alpha: float | None = None,
    fuse: str = "rrf",
    fuse_k: float = 60.0,
    lang: str | None = None,
) -> Run:
    """Rerank the top ``depth`` of every query of ``run`` with ``reranker``.

    Queries keep their order; a query with no results stays empty. The text of
    a document is ``title + " " + text`` when it has a title (as for BM25).
    ``rest`` says what happens to the documents below ``depth``; ``alpha``,
    ``fuse`` and ``fuse_k`` interpolate with the first stage (module
    docstring). Every query of ``run`` must be in ``queries`` and every
    document in ``corpus``. ``lang`` is passed to the scorer's ``prepare``.
    """
    _check_step(depth, rest, alpha, fuse, fuse_k)
    heads = score_heads(run, queries, corpus, reranker, depth=depth, show_progress=show_progress, lang=lang)
    return assemble(run, heads, depth=depth, rest=rest, alpha=alpha, fuse=fuse, fuse_k=fuse_k,
                    name=name or f"{run.name}>>{reranker.name}")


_FUSE_K = (RETRIEVERS.params("rerank") or {})["fuse_k"]


def _check_step(depth: Any, rest: Any, alpha: Any, fuse: Any, fuse_k: Any) -> None:
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise FinegrainError(f"depth={depth!r} is not a whole number >= 1", "e.g. depth=100")
    if rest not in RESTS:
        raise FinegrainError(f"rest={rest!r} is not known", f"use one of {', '.join(map(repr, RESTS))}")
    if alpha is not None and (isinstance(alpha, bool) or not isinstance(alpha, (int, float))
                              or not 0.0 <= float(alpha) <= 1.0):
        raise FinegrainError(f"alpha={alpha!r} is not a number in [0, 1]",
                             "alpha=1 keeps the reranker's order, alpha=0 the first stage's; e.g. alpha=0.5, or none")
    if fuse not in FUSES:
        raise FinegrainError(f"fuse={fuse!r} is not known", f"use one of {', '.join(map(repr, FUSES))}")
    if isinstance(fuse_k, bool) or not isinstance(fuse_k, (int, float)) or not np.isfinite(fuse_k) or fuse_k < 0:
        raise FinegrainError(f"fuse_k={fuse_k!r} is not a finite number >= 0", "e.g. fuse_k=60")
    _FUSE_K.convert("fuse_k", fuse_k)  # its declared range


def score_heads(
    run: Run, queries: Queries, corpus: Corpus, reranker: Reranker, *, depth: int, show_progress: bool = False,
    lang: str | None = None,
) -> list[np.ndarray]:
    """The reranker's score of each of the top ``depth`` documents of every query of ``run`` (first-stage order)."""

    order, offsets, vocab, codes = run.order, run.offsets, run.vocab, run.doc_codes
    head_codes = [codes[order[offsets[i] : min(offsets[i + 1], offsets[i] + depth)]] for i in range(len(run.qids))]
    texts_of: list[list[str]] = []
    for qid, head in zip(run.qids, head_codes):
        if len(head) and qid not in queries:
            raise FinegrainError(f"query {qid!r} of run {run.name!r} is not among the queries", "rerank a run of the same dataset")
        texts_of.append([_doc_text(corpus, vocab[c], run.name) for c in head.tolist()])
    fit_corpus = getattr(reranker, "fit_corpus", None)  # e.g. coverage: idf over the searched corpus
    if callable(fit_corpus):
        fit_corpus([doc.text for doc in corpus.values()], lang=lang)
    prepare = getattr(reranker, "prepare", None)
    if callable(prepare):
        asked = [q for q, h in zip(run.qids, head_codes) if len(h)]
        prepare([queries[q].text for q in asked], sorted({t for ts in texts_of for t in ts}), lang=lang,
                show_progress=show_progress)
    out: list[np.ndarray] = []
    for qid, head, texts in zip(tqdm(run.qids, desc="rerank", unit="query", disable=not show_progress, leave=False),
                                head_codes, texts_of):
        if not len(head):
            out.append(np.empty(0, dtype=np.float64))
            continue
        scores = np.asarray(reranker.score(queries[qid].text, texts), dtype=np.float64).reshape(-1)
        if len(scores) != len(head) or not np.all(np.isfinite(scores)):
            raise FinegrainError(
                f"reranker {reranker.name!r} gave {len(scores)} scores (finite: {bool(np.all(np.isfinite(scores)))}) "
                f"for {len(head)} passages of query {qid!r}",
                "a Reranker returns one finite score per passage",
            )
        out.append(scores)
    return out


def assemble(
    run: Run, heads: list[np.ndarray], *, depth: int, rest: str = "append", alpha: float | None = None,
    fuse: str = "rrf", fuse_k: float = 60.0, name: str,
) -> Run:
    """The reranked run from ``run`` and :func:`score_heads`' scores (module docstring: tail, interpolation)."""
    _check_step(depth, rest, alpha, fuse, fuse_k)
    order, offsets, vocab, codes, values = run.order, run.offsets, run.vocab, run.doc_codes, run.values
    new_offsets = [0]
    new_codes: list[np.ndarray] = []
    new_values: list[np.ndarray] = []
    for i, scores in enumerate(heads):
        pos = order[offsets[i] : offsets[i + 1]]
        head = codes[pos[:depth]]
        if len(head) == 0:
            new_offsets.append(new_offsets[-1])
            continue
        if alpha is not None:
            ids = [vocab[c] for c in head.tolist()]
            first = values[pos[:depth]].astype(np.float64)
            if fuse == "rrf":
                # the head is in first-stage order already; the reranker's ranks follow the one rule
                ranks = {d: r for r, d in enumerate(rank_docs(dict(zip(ids, scores.tolist()))), start=1)}
                mine = 1.0 / (fuse_k + np.asarray([ranks[d] for d in ids], dtype=np.float64))
                theirs = 1.0 / (fuse_k + np.arange(1, len(head) + 1, dtype=np.float64))
            else:
                mine, theirs = _minmax(scores), _minmax(first)
            scores = alpha * mine + (1.0 - alpha) * theirs
        tail = codes[pos[depth:]] if rest == "append" else head[:0]
        new_codes += [head, tail]
        floor = float(scores.min())  # the tail goes strictly below it, in first-stage order
        new_values += [scores, floor - max(1.0, abs(floor)) * np.arange(1, len(tail) + 1, dtype=np.float64)]
        new_offsets.append(new_offsets[-1] + len(head) + len(tail))
    return Run(
        run.qids,
        np.asarray(new_offsets, dtype=np.int64),
        np.concatenate(new_codes) if new_codes else np.empty(0, dtype=np.int64),
        vocab,
        np.concatenate(new_values) if new_values else np.empty(0, dtype=np.float64),
        name=name,
        check=False,
    )


def _minmax(x: np.ndarray) -> np.ndarray:
    lo, span = float(x.min()), float(np.ptp(x))
    return (x - lo) / span if span > 0 else np.zeros_like(x)


def _doc_text(corpus: Corpus, doc_id: str, run_name: str) -> str:
    try:
        d = corpus[doc_id]
    except KeyError:
        raise FinegrainError(
            f"document {doc_id!r} of run {run_name!r} is not in the corpus", "rerank a run of the same dataset"
        ) from None
    return f"{d.title} {d.text}" if d.title else d.text


# --------------------------------------------------------------------------- the retriever adapter


@dataclass(frozen=True)
class RerankRetriever:
    """A :class:`~finegrain.retrieve.base.Retriever`: ``first_stage`` then :func:`rerank` by ``reranker``.

    The first stage retrieves its own cut (or ``top_k``, if larger than
    ``depth``) when ``rest="append"``, its top ``depth`` when ``rest="drop"``;
    the reranked run is cut to ``top_k`` when given. ``alpha``, ``fuse`` and
    ``fuse_k`` interpolate with the first stage (module docstring).
    """

    first_stage: Retriever
    reranker: Reranker
    depth: int = 100
    rest: str = "append"
    name: str = "rerank"
    alpha: float | None = None
    fuse: str = "rrf"
    fuse_k: float = 60.0
    #: how fixed settings were chosen (provenance; a score on that dataset is then in-sample)
    tuned_on: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.first_stage, Retriever):
            raise FinegrainError(f"first stage {self.first_stage!r} is not a Retriever", "pass a retriever or a name")
        if not isinstance(self.reranker, Reranker):
            raise FinegrainError(f"{self.reranker!r} is not a Reranker", "it needs name, config() and score()")
        _check_step(self.depth, self.rest, self.alpha, self.fuse, self.fuse_k)

    def config(self) -> dict[str, Any]:
        cfg: dict[str, Any] = {
            "depth": self.depth,
            "rest": self.rest,
            "first_stage": {"name": self.first_stage.name, **self.first_stage.config()},
            "reranker": {"name": self.reranker.name, **self.reranker.config()},
            "alpha": self.alpha,
        }
        if self.alpha is not None:
            cfg["fuse"] = self.fuse
            if self.fuse == "rrf":
                cfg["fuse_k"] = self.fuse_k
        inherited = cfg["first_stage"].get("tuned_on")  # a tuned first stage (hybrid-use-k10) makes the whole in-sample
        if self.tuned_on is not None:
            cfg["tuned_on"] = dict(self.tuned_on)
        elif isinstance(inherited, dict):
            cfg["tuned_on"] = {**inherited, "method": f"first stage {self.first_stage.name!r}: "
                                                      f"{inherited.get('method', 'see first_stage.tuned_on')}"}
        return cfg

    def _first(self, corpus: Corpus, queries: Queries, lang: str, top_k: int | None, show_progress: bool) -> Run:
        if self.rest == "drop":
            first_k: int | None = self.depth
        else:
            first_k = None if top_k is None else max(top_k, self.depth)
        return self.first_stage.retrieve(corpus, queries, lang=lang, top_k=first_k, show_progress=show_progress)

    def retrieve(
        self, corpus: Corpus, queries: Queries, *, lang: str, top_k: int | None, show_progress: bool = True
    ) -> Run:
        first = self._first(corpus, queries, lang, top_k, show_progress)
        out = rerank(
            first, queries, corpus, self.reranker, depth=self.depth, rest=self.rest, name=self.name,
            show_progress=show_progress, alpha=self.alpha, fuse=self.fuse, fuse_k=self.fuse_k, lang=lang,
        )
        return out.cut(top_k) if top_k is not None else out

    def retrieve_grid(
        self, settings: Sequence[Mapping[str, Any]], corpus: Corpus, queries: Queries, *, lang: str,
        top_k: int | None, show_progress: bool = True,
    ) -> list[Run]:
        """One run per setting (``alpha``, ``fuse``, ``fuse_k`` only) for cross-validation
        (:mod:`finegrain.experiment.tuning.cv`): the first stage retrieves and the reranker scores once."""
        bad = sorted({key for s in settings for key in s} - set(GRID_KEYS))
        if bad:
            raise FinegrainError(f"rerank cannot vary {bad[0]!r} without re-running its stages",
                                 f"cross-validate only {', '.join(GRID_KEYS)} (fix the others with --set)")
        first = self._first(corpus, queries, lang, top_k, show_progress)
        heads = score_heads(first, queries, corpus, self.reranker, depth=self.depth, show_progress=show_progress,
                            lang=lang)
        out = []
        for s in settings:
            r = replace(self, **s)
            run = assemble(first, heads, depth=r.depth, rest=r.rest, alpha=r.alpha, fuse=r.fuse, fuse_k=r.fuse_k,
                           name=self.name)
            out.append(run.cut(top_k) if top_k is not None else run)
        return out


def rerank_retriever(
    model: str | None = None,
    first_stage: str = "bm25-okapi",
    depth: int = 100,
    **opts: Any,
) -> RerankRetriever:
    """``rerank``: ``first_stage=bm25-okapi``, ``depth=100``, ``rest=append``, ``scorer=cross-encoder``.

    ``scorer`` is ``cross-encoder`` (needs ``--set model=PATH``; options
    ``max_length=512``, ``batch_size=32``, ``device=cpu``), or one of
    :mod:`finegrain.retrieve.rerank.scorers` (``e5-instruct``, ``e5``,
    ``e5-sparse``, ``st:PATH``). ``alpha`` (grid, tuned by ``--cv``),
    ``fuse=rrf`` and ``fuse_k=60`` interpolate with the first stage.
    ``FIRST_STAGE.KEY=VALUE`` passes an option to the first stage, e.g.
    ``--set bm25-okapi.k1=1.2`` or, with ``first_stage=hybrid``, ``--set hybrid.fusion=convex``.
    """

    given = {"first_stage": first_stage, "depth": depth, **opts, **({"model": model} if model is not None else {})}
    checked = RETRIEVERS.check("rerank", given)
    first_stage, depth, model = checked.pop("first_stage"), checked.pop("depth"), checked.pop("model", None)
    own, nested = split_options(checked)
    stray = sorted(set(nested) - {first_stage})
    if stray:
        raise FinegrainError(
            f"option {stray[0]}.{next(iter(nested[stray[0]]))} names no stage of this reranker",
            f"the first stage is {first_stage!r}: write {first_stage}.KEY=VALUE",
        )
    if first_stage == "rerank":
        raise FinegrainError("first_stage='rerank' would rerank a reranking", "use a first-stage retriever such as bm25-okapi")
    step = {k: own.pop(k) for k in ("rest", "alpha", "fuse", "fuse_k") if k in own}
    scorer = own.pop("scorer", "cross-encoder")
    reranker = make_scorer(scorer, model=model, **own)
    return RerankRetriever(
        first_stage=get_retriever(str(first_stage), **nested.get(first_stage, {})),
        reranker=reranker,
        depth=depth,
        **step,
    )


def hybrid_use_k10_coverage_retriever(**options: Any) -> Any:
    """``hybrid-use-k10-coverage``: ``hybrid-use-k10``'s top 100 re-scored by term coverage, mixed 0.8 / 0.2 over min-max scores.

    The scorer, ``alpha`` and ``fuse`` are the consensus of 5-fold CV on capretrieval/zh with ``hybrid-use-k10`` as
    the first stage (:data:`~finegrain.retrieve.rerank.scorers.HYBRID_USE_K10_COVERAGE_TUNED_ON` records how); since
    hybrid-use-k10 itself was tuned on those queries, a score on capretrieval/zh is in-sample (its provenance says
    so). Figures: ``docs/results/retrieval.md``.
    """
    checked = RETRIEVERS.check("hybrid-use-k10-coverage", options)
    built = rerank_retriever(**{**HYBRID_USE_K10_COVERAGE, **checked})
    changed = any(k in checked for k in (*HYBRID_USE_K10_COVERAGE, "terms"))
    return replace(built, name="hybrid-use-k10-coverage",
                               tuned_on=None if changed else dict(HYBRID_USE_K10_COVERAGE_TUNED_ON))


__all__ = [
    "ALPHA_GRID",
    "alpha_grid",
    "fuse_grid",
    "CrossEncoderReranker",
    "Reranker",
    "RerankRetriever",
    "assemble",
    "rerank",
    "rerank_retriever",
    "score_heads",
]
