"""Query perturbation on the caption-corpus protocol (explainable-ranking paper, Sec. 6.4, Tables 4-5).

``finegrain perturb --dataset caption-corpus:flickr8k/test --retriever minilm``
runs the protocol of :mod:`finegrain.diagnose.caption_corpus` exactly as
``finegrain caption-corpus`` does (same items, query caption, encoder, cached
vectors, averaged and re-normalised corpus entries, tie rule), so the
unperturbed row *is* the plain protocol's result, R@1 included. Then each
family perturbs the caption queries (antonym, colour, size, negation, typo),
the perturbed captions are encoded as queries, and the rank of each query's
own image among all corpus entries is recomputed by the same
:func:`~finegrain.diagnose.caption_corpus.relevant_ranks`. Every rank is exact
(no top-k cut): Table 4 counts lower / higher / same ranks of the ground-truth
image, Table 5 the metrics of the paper's table (Recall@1, @10, MRR@10,
MRR@all, fails %) on the perturbed queries, paired with their originals, and
on the whole query set with the perturbed ones substituted.

Dataset names: ``caption-corpus:SOURCE[/SPLIT][#qN]`` -- SOURCE ``flickr8k``
(SPLIT test, dev, train or all; default test) or ``vg100`` (all), ``N`` the
caption used as the query (default 0), as ``finegrain caption-corpus
--query-caption``. The retriever names the encoder (``minilm``, ``e5``,
``use-m3``, or ``dense`` with ``--set encoder=...``); only encoder options
apply, since the protocol encodes texts as they are.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from finegrain.diagnose.caption_corpus import (
    SOURCES,
    _encode,
    build_caption_corpus,
    describe_protocol,
    load_items,
    per_query_metrics,
    rank_metrics,
    relevant_ranks,
    run_caption_corpus,
    top_k_run,
)
from finegrain.diagnose.perturb.families import NEGATION_RULES, build_perturbations, make_context
from finegrain.diagnose.perturb.outcome import PerturbOutcome, perturbed_ids
from finegrain.diagnose.perturb.stats import metric_delta, rank_changes
from finegrain.errors import FinegrainError
from finegrain.machine import run_environment
from finegrain.results.probes import (
    PERTURB_SCHEMA,
    CaptionProtocol,
    DatasetProvenance,
    FamilyResults,
    PerturbBootstrap,
    PerturbProvenance,
    PerturbResults,
    PlainProtocol,
    RetrieverProvenance,
)
from finegrain.retrieve.dense.encoders.cache import CachedEncoder, EmbeddingCache
from finegrain.retrieve.dense.encoders.registry import encoder_options, get_encoder
from finegrain.settings import Settings

PREFIX = "caption-corpus:"
#: Table 5 of the paper: Recall@1, Recall@10, MRR@10, MRR@all, Fails %.
CAPTION_METRICS: tuple[str, ...] = ("recall@1", "recall@10", "mrr@10", "mrr", "fail_rate@1")
#: The per-query means the protocol computes from a rank (median rank is no mean: no paired CI).
RANK_METRICS: tuple[str, ...] = ("recall@1", "recall@5", "recall@10", "mrr@5", "mrr@10", "mrr", "fail_rate@1")
_ENCODER_RETRIEVERS = ("minilm", "e5", "use-m3")
_NAME = re.compile(r"^caption-corpus:(?P<source>[^/#]+)(?:/(?P<split>[^#]+))?(?:#q(?P<q>-?\d+))?$")


@dataclass(frozen=True)
class CaptionCorpusName:
    """A parsed ``caption-corpus:SOURCE/SPLIT#qN`` name."""

    source: str
    split: str
    query_index: int

    @property
    def canonical(self) -> str:
        """The name ``finegrain caption-corpus`` gives the same run."""
        return f"{PREFIX}{self.source}/{self.split}#q{self.query_index}"


def is_caption_corpus(name: str) -> bool:
    return name.startswith(PREFIX)


def parse_name(name: str) -> CaptionCorpusName:
    m = _NAME.match(name.strip())
    if m is None:
        raise FinegrainError(f"cannot read the caption-corpus dataset name {name!r}",
                             "write caption-corpus:flickr8k/test (optionally #q1 for the second caption as query)")
    source = m["source"]
    if source not in SOURCES:
        raise FinegrainError(f"unknown caption-corpus source {source!r} in {name!r}",
                             f"use one of {', '.join(SOURCES)}, e.g. caption-corpus:flickr8k/test")
    split = m["split"] or ("test" if source == "flickr8k" else "all")
    return CaptionCorpusName(source, split, int(m["q"] or 0))


def encoder_for(retriever: str, options: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The encoder spec and encoder options a retriever name and its ``--set`` options stand for here."""

    opts = dict(options)
    if retriever in _ENCODER_RETRIEVERS:
        spec = retriever
    elif retriever == "dense":
        spec = str(opts.pop("encoder", "e5"))
    else:
        raise FinegrainError(
            f"the caption-corpus protocol ranks averaged embeddings, so retriever {retriever!r} cannot run it",
            f"use --retriever {', '.join(_ENCODER_RETRIEVERS)}, or dense --set encoder=st:PATH",
        )
    allowed = set(encoder_options(spec))
    extra = sorted(k for k in opts if k not in allowed)
    if extra:
        raise FinegrainError(
            f"--set {extra[0]} does not apply on the caption-corpus protocol (texts are encoded as they are, "
            "as finegrain caption-corpus does)",
            f"encoder options of {spec!r}: {', '.join(sorted(allowed)) or 'none'}",
        )
    return spec, opts


def check_metrics(metrics: Sequence[str]) -> tuple[str, ...]:
    bad = [m for m in metrics if m not in RANK_METRICS]
    if bad:
        raise FinegrainError(f"metric {bad[0]!r} is not one the caption-corpus protocol computes from a rank",
                             f"use some of {', '.join(RANK_METRICS)} (default: {','.join(CAPTION_METRICS)})")
    return tuple(metrics)


def rank_table(
    qids: Sequence[str],
    original_ranks: np.ndarray,
    perturbed: Mapping[str, tuple[Sequence[str], np.ndarray]],
    metrics: Sequence[str],
    *,
    n_queries: int | None = None,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, FamilyResults]:
    """Tables 4 and 5 per family from exact ranks of the ground-truth item.

    ``original_ranks[i]`` is query ``qids[i]``'s rank; ``perturbed[family]``
    is ``(perturbed qids, their ranks)``. Pure: the tests feed it hand ranks.
    """

    orig = np.asarray(original_ranks, dtype=np.int64)
    pos = {q: i for i, q in enumerate(qids)}
    base = {k: dict(zip(qids, v.tolist())) for k, v in per_query_metrics(orig).items()}
    n_all = len(qids) if n_queries is None else n_queries
    families: dict[str, FamilyResults] = {}
    for fam, (pq, pr) in perturbed.items():
        p_ranks = np.asarray(pr, dtype=np.int64)
        o_ranks = orig[[pos[q] for q in pq]] if len(pq) else np.zeros(0, dtype=np.int64)
        pert = ({k: dict(zip(pq, v.tolist())) for k, v in per_query_metrics(p_ranks).items()} if len(pq)
                else {k: {} for k in base})
        families[fam] = FamilyResults(
            n_perturbed=len(pq), share_of_queries=len(pq) / max(n_all, 1),
            rank_change=rank_changes(o_ranks.astype(np.float64), p_ranks.astype(np.float64)).saved(),
            metrics={m: metric_delta(m, base[m], pert[m], n_resamples=n_resamples, confidence=confidence,
                                     seed=seed).saved() for m in metrics},
            best_relevant_rank={q: (int(a), int(b)) for q, a, b in zip(pq, o_ranks, p_ranks)},
        )
    return families


def run_caption_perturbation(cfg: Any, settings: Any = None, *, show_progress: bool = True,
                             encoder: Any = None, items: Sequence[tuple[str, Sequence[str]]] | None = None) -> Any:
    """The whole job on the caption-corpus protocol; returns a :class:`~.run.PerturbOutcome`.

    ``encoder`` and ``items`` replace the registry's encoder and the dataset's
    items (tests); otherwise both come from the name and ``settings``.
    """

    started = time.perf_counter()
    name = parse_name(cfg.dataset)
    metrics = check_metrics(cfg.metrics)
    spec, enc_opts = encoder_for(cfg.retriever, cfg.retriever_options)
    settings = settings or Settings.from_env()
    meta: dict[str, Any] = {"split": name.split}
    unit = "caption"
    if items is None:
        root = Path(settings.require_data_root()) / SOURCES[name.source]
        items, unit, meta = load_items(name.source, root, name.split)
    corpus = build_caption_corpus(items, name.query_index)
    if encoder is None:
        cache = None if settings.cache_dir is None else EmbeddingCache(settings.cache_dir)
        encoder = CachedEncoder(get_encoder(spec, **enc_opts), cache, show_progress=show_progress)

    t0 = time.perf_counter()
    base = run_caption_corpus(corpus, encoder)  # the plain protocol, unchanged
    entries, q_vecs = base.corpus_vecs, base.query_vecs
    if entries is None or q_vecs is None:
        raise FinegrainError("the caption-corpus run kept no vectors", "run it with keep_vectors=True")
    lang = "en"
    ctx = make_context(lang, corpus.sentences, seed=cfg.seed, color_threshold=cfg.color_threshold,
                       need_corpus_colors="color-in" in cfg.families, need_homophones="typo" in cfg.families)
    qids = list(corpus.item_ids)
    perturbations = tuple(build_perturbations(zip(qids, corpus.queries), cfg.families, ctx))
    pid = perturbed_ids(perturbations, set(qids))
    pos = {q: i for i, q in enumerate(qids)}
    rel = np.fromiter((pos[p.qid] for p in perturbations), dtype=np.int64, count=len(perturbations))
    if perturbations:
        pvecs = _encode(encoder, [p.perturbed for p in perturbations], "query", "encode perturbed queries")
        p_ranks = relevant_ranks(pvecs, entries, rel, corpus.item_ids)[0]
    else:
        pvecs = np.zeros((0, int(entries.shape[1])), dtype=np.float32)
        p_ranks = np.zeros(0, dtype=np.int64)
    retrieve_s = time.perf_counter() - t0

    per_family = {fam: ([p.qid for p in perturbations if p.family == fam],
                        p_ranks[[i for i, p in enumerate(perturbations) if p.family == fam]])
                  for fam in cfg.families}
    families = rank_table(qids, base.ranks, per_family, metrics, n_resamples=cfg.n_resamples,
                          confidence=cfg.confidence, seed=cfg.seed)
    plain = rank_metrics(base.ranks)
    run = top_k_run(np.vstack([q_vecs, pvecs]), entries, [*qids, *pid], k=cfg.top_k or 100, name=cfg.retriever)
    results = PerturbResults(
        schema=PERTURB_SCHEMA,
        dataset=name.canonical,
        lang=lang,
        retriever=cfg.retriever,
        n_queries=len(qids),
        metrics=list(metrics),
        confidence=cfg.confidence,
        original={m: plain[m] for m in metrics},
        families=families,
        protocol=CaptionProtocol(
            name="caption-corpus",
            description=describe_protocol(query_index=name.query_index, corpus_unit=unit),
            # what finegrain caption-corpus reports for the same name and encoder
            plain_protocol=PlainProtocol.model_validate(plain),
            ranks="exact rank of each query's own item among all corpus entries (no cut)",
            perturbed_queries="each perturbed caption encoded as a query and ranked against the unchanged "
                              "corpus entries; judged by the original item",
        ),
        provenance=PerturbProvenance(
            dataset=DatasetProvenance.model_validate(
                {"name": name.canonical, "source": name.source, "lang": lang, "n_queries": len(qids),
                 "n_documents": len(corpus), "n_corpus_sentences": len(corpus.sentences), **meta}),
            retriever=RetrieverProvenance.model_validate({"name": cfg.retriever, "encoder": spec, **dict(base.encoder)}),
            families=list(cfg.families),
            seed=cfg.seed,
            color_threshold=cfg.color_threshold,
            corpus_colors=sorted(ctx.corpus_colors),
            negation_rules=list(NEGATION_RULES[lang]),
            top_k=cfg.top_k or 100,
            bootstrap=PerturbBootstrap(n_resamples=cfg.n_resamples, confidence=cfg.confidence, method="percentile",
                                       seed=cfg.seed),
            n_retrieved_queries=len(qids) + len(perturbations),
            **run_environment(),
            retrieve_seconds=round(retrieve_s, 3),
            total_seconds=round(time.perf_counter() - started, 3),
        ),
    )
    return PerturbOutcome(perturbations, run, results)
