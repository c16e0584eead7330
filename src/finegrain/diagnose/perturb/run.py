"""The job behind ``finegrain perturb``: perturb queries, retrieve once, score with the original qrels.

1. Build every perturbation of every requested family
   (:func:`~finegrain.diagnose.perturb.families.build_perturbations`).
2. Retrieve the original queries and all perturbed queries in **one** call of
   the retriever (perturbed ids are ``qid~family``), so the corpus is indexed
   or encoded once; a dense retriever's embedding cache makes the original
   queries and passages free after a plain ``finegrain eval``.
3. Split the run per family, renaming perturbed ids back to their original qid,
   and evaluate it with the **original** qrels: a perturbed query is judged by
   what the unperturbed query wanted.
4. Table 4 (rank of the best relevant item: lower / higher / same) and Table 5
   (metric deltas with bootstrap CIs) per family (:mod:`.stats`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from finegrain.atomic import atomic_write, write_text
from finegrain.datasets import load_dataset
from finegrain.diagnose.perturb.caption_corpus import is_caption_corpus, run_caption_perturbation
from finegrain.diagnose.perturb.colors import DEFAULT_THRESHOLD
from finegrain.diagnose.perturb.families import (
    FAMILIES,
    NEGATION_RULES,
    Perturbation,
    build_perturbations,
    make_context,
)
from finegrain.diagnose.perturb.outcome import PerturbOutcome, perturbed_ids
from finegrain.diagnose.perturb.stats import (
    best_relevant_ranks,
    metric_delta,
    rank_changes,
)
from finegrain.diagnose.perturb.tables import markdown_tables
from finegrain.errors import FinegrainError
from finegrain.evaluate.evaluate import evaluate
from finegrain.machine import run_environment
from finegrain.metrics.spec import parse_metrics
from finegrain.results.probes import (
    PERTURB_SCHEMA,
    DatasetProvenance,
    FamilyResults,
    PerturbBootstrap,
    PerturbProvenance,
    PerturbResults,
    RetrieverProvenance,
)
from finegrain.retrieve.registry import get_retriever
from finegrain.settings import Settings
from finegrain.types import Qrels, Queries, Query, Run

DEFAULT_METRICS: tuple[str, ...] = ("ndcg@10", "hit_rate@1", "hit_rate@10", "mrr@10", "mrr")


@dataclass(frozen=True)
class PerturbConfig:
    """What to perturb, with which retriever, and how to score it."""

    dataset: str
    retriever: str
    families: tuple[str, ...] = FAMILIES
    metrics: tuple[str, ...] = DEFAULT_METRICS
    retriever_options: Mapping[str, Any] = field(default_factory=dict)
    top_k: int | None = None
    seed: int = 0
    color_threshold: float = DEFAULT_THRESHOLD
    n_resamples: int = 10000
    confidence: float = 0.95


def run_perturbation(cfg: PerturbConfig, settings: Any = None, *, show_progress: bool = True,
                     dataset: Any = None, retriever: Any = None) -> PerturbOutcome:
    """Load (or take) the dataset and retriever and run the whole job; nothing is written.

    A ``caption-corpus:...`` dataset runs on the caption-corpus protocol
    (:mod:`finegrain.diagnose.perturb.caption_corpus`).
    """

    if dataset is None and retriever is None and is_caption_corpus(cfg.dataset):
        outcome: PerturbOutcome = run_caption_perturbation(cfg, settings, show_progress=show_progress)
        return outcome

    started = time.perf_counter()
    specs = parse_metrics(list(cfg.metrics))  # a bad metric fails before any work
    _check_mean_metrics(specs)
    retriever = retriever if retriever is not None else get_retriever(cfg.retriever, **dict(cfg.retriever_options))
    ds = dataset if dataset is not None else load_dataset(cfg.dataset, settings or Settings.from_env())

    ctx = make_context(ds.lang, ds.corpus.texts, seed=cfg.seed, color_threshold=cfg.color_threshold,
                       need_corpus_colors="color-in" in cfg.families, need_homophones="typo" in cfg.families)
    perturbations = tuple(build_perturbations(((q.id, q.text) for q in ds.queries.values()), cfg.families, ctx))
    pid = perturbed_ids(perturbations, set(ds.queries))
    queries = Queries([*ds.queries.values(),
                       *(Query(pid[i], p.perturbed, ds.queries[p.qid].type) for i, p in enumerate(perturbations))])

    t0 = time.perf_counter()
    run = retriever.retrieve(ds.corpus, queries, lang=ds.lang, top_k=cfg.top_k, show_progress=show_progress)
    retrieve_s = time.perf_counter() - t0

    original, families = score(ds, run, perturbations, pid, cfg, specs)
    results = PerturbResults(
        schema=PERTURB_SCHEMA, dataset=ds.name, lang=ds.lang, retriever=cfg.retriever, n_queries=len(ds.queries),
        metrics=[s.key for s in specs], confidence=cfg.confidence, original=original, families=families,
        provenance=_provenance(cfg, ds, retriever, ctx, retrieve_s, time.perf_counter() - started, len(queries)),
    )
    return PerturbOutcome(perturbations, run, results)


def score(ds: Any, run: Run, perturbations: Sequence[Perturbation], pid: Sequence[str],
          cfg: PerturbConfig, specs: Sequence[Any]) -> tuple[dict[str, float | None], dict[str, FamilyResults]]:
    """The unperturbed aggregates, and Tables 4 and 5 for every family, from one run holding originals and
    perturbed queries."""

    all_qids = list(ds.queries)
    original = evaluate(ds.qrels, select_run(run, [(q, q) for q in all_qids]), specs, queries=all_qids, warn=False)
    orig_pq = {k: dict(r.per_query) for k, r in original.results.items()}
    families: dict[str, FamilyResults] = {}
    for fam in cfg.families:
        rows = [(pid[i], p) for i, p in enumerate(perturbations) if p.family == fam]
        qids = [p.qid for _, p in rows]
        o_ranks = best_relevant_ranks(run, ds.qrels, [(q, q) for q in qids])
        p_ranks = best_relevant_ranks(run, ds.qrels, [(i, p.qid) for i, p in rows])
        if rows:
            fam_run = select_run(run, [(i, p.qid) for i, p in rows])
            pert = evaluate(ds.qrels, fam_run, specs, queries=qids, warn=False)
            pert_pq = {k: dict(r.per_query) for k, r in pert.results.items()}
        else:
            pert_pq = {s.key: {} for s in specs}
        families[fam] = FamilyResults(
            n_perturbed=len(rows), share_of_queries=len(rows) / max(len(all_qids), 1),
            rank_change=rank_changes(o_ranks, p_ranks).saved(),
            metrics={s.key: metric_delta(s.key, orig_pq[s.key], pert_pq[s.key], n_resamples=cfg.n_resamples,
                                         confidence=cfg.confidence, seed=cfg.seed).saved()
                     for s in specs},
            # per query, for drill-down (None: not retrieved / no relevant)
            best_relevant_rank={p.qid: (_rank(a), _rank(b)) for p, a, b in zip((p for _, p in rows), o_ranks, p_ranks)},
        )
    return dict(original.aggregate()), families


def select_run(run: Run, mapping: Sequence[tuple[str, str]]) -> Run:
    """A run of the queries ``src`` renamed ``dst`` for each ``(src, dst)``; a query absent from ``run`` is empty."""
    counts = run.counts()
    idx = [run.index_of(src) if src in run else -1 for src, _ in mapping]
    offsets = np.zeros(len(mapping) + 1, dtype=np.int64)
    np.cumsum([counts[i] if i >= 0 else 0 for i in idx], out=offsets[1:])
    slices = [np.arange(run.offsets[i], run.offsets[i + 1]) for i in idx if i >= 0]
    take = np.concatenate(slices) if slices else np.empty(0, dtype=np.int64)
    return Run([dst for _, dst in mapping], offsets, run.doc_codes[take], run.vocab, run.values[take],
               name=run.name, check=False)


def _rank(v: float) -> int | None:
    return None if not np.isfinite(v) else int(v)


def _check_mean_metrics(specs: Sequence[Any]) -> None:
    """Deltas with CIs are means of per-query differences: refuse metrics aggregated otherwise."""

    probe = evaluate(Qrels.from_dict({"q": {"d": 1}}), Run.from_dict({"q": {"d": 1.0}}), specs)
    bad = [k for k, r in probe.results.items() if r.outcome.rule != "mean"]
    if bad:
        raise FinegrainError(
            f"metric {bad[0]!r} is not a mean over queries, so its perturbation delta has no per-query CI",
            "use per-query mean metrics such as ndcg@10, recall@10, hit_rate@1, mrr@10, mrr",
        )


def _provenance(cfg: PerturbConfig, ds: Any, retriever: Any, ctx: Any, retrieve_s: float, total_s: float,
                n_texts: int) -> PerturbProvenance:
    return PerturbProvenance(
        dataset=DatasetProvenance(name=ds.name, lang=ds.lang, n_queries=len(ds.queries), n_documents=len(ds.corpus)),
        retriever=RetrieverProvenance.model_validate({"name": cfg.retriever, **retriever.config()}),
        families=list(cfg.families),
        seed=cfg.seed,
        color_threshold=cfg.color_threshold,
        corpus_colors=sorted(ctx.corpus_colors),
        negation_rules=list(NEGATION_RULES[ds.lang]),
        top_k=cfg.top_k,
        bootstrap=PerturbBootstrap(n_resamples=cfg.n_resamples, confidence=cfg.confidence, method="percentile",
                                   seed=cfg.seed),
        n_retrieved_queries=n_texts,
        **run_environment(),  # version, Python, machine, command, time: finegrain.machine
        retrieve_seconds=round(retrieve_s, 3),
        total_seconds=round(total_s, 3),
    )


def write_outputs(out: str | Path, outcome: PerturbOutcome) -> dict[str, Path]:
    """Write ``perturbations.jsonl``, ``results.json`` and ``tables.md`` into ``out`` (created)."""

    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise FinegrainError(f"--out {str(folder)!r} is a file", "give a folder (it is created when missing)")
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"perturbations": folder / "perturbations.jsonl", "results": folder / "results.json",
             "tables": folder / "tables.md"}
    with atomic_write(paths["perturbations"]) as f:
        for p in outcome.perturbations:
            f.write(json.dumps(p.saved().to_json(), ensure_ascii=False) + "\n")
    write_text(paths["results"], json.dumps(outcome.results.to_json(), ensure_ascii=False, indent=1) + "\n")
    write_text(paths["tables"], markdown_tables(outcome.results))
    return paths
