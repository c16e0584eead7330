"""``finegrain caption-corpus``: the explainable-ranking paper's caption-corpus retrieval protocol.

Flickr8k (captions) or Visual Genome 100 (region descriptions): each image's
query is one of its texts, its corpus entry the averaged embedding of the
others; writes DIR/results.json (metrics, protocol, per-query ranks, failures;
for vg100 the concept scores of every failure) and DIR/run.trec (top 100;
run.jsonl when an id or the encoder name has a space; -k sets the depth).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer

from finegrain.cli import options as opt

DATASETS = {"flickr8k": "flickr8k", "vg100": "visual_genome_100"}
DEFAULT_TOP_K = 100


def caption_corpus_command(
    dataset: str = typer.Option(..., "--dataset", "-d", help="flickr8k (captions) or vg100 (Visual Genome region descriptions)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for results.json and run.trec."),
    split: str = typer.Option("test", "--split", help="Flickr8k split: test, dev, train or all (vg100 has only all)."),
    encoder: str = typer.Option("minilm", "--encoder", "-e", help="Encoder: minilm, e5, use-m3 or st:PATH."),
    query_caption: int = typer.Option(0, "--query-caption",
                                      help="Which caption (region for vg100) is the query; the others form the corpus entry."),
    folder: Path | None = typer.Option(None, "--folder", help="Dataset folder (default: $FINEGRAIN_DATA/flickr8k or visual_genome_100)."),
    batch_size: int | None = typer.Option(None, "--batch-size", min=1, help="Encoder batch size (default: the encoder's)."),
    no_renormalise: bool = typer.Option(False, "--no-renormalise",
                                        help="Score by the raw mean embedding instead of its unit-length version (the paper's cosine)."),
    top_k: int | None = opt.top_k_option(f"Results per query kept in run.trec (default {DEFAULT_TOP_K})."),
    no_cache: bool = opt.no_cache_option(),
    quiet: bool = opt.quiet_option(),
    run_depth: int | None = opt.retired_option("--run-depth", "-k/--top-k", min=1),
) -> None:
    """Rank every image's corpus entry for every image's query; Recall@1/5/10, MRR@5/10/all, median rank, fails %."""

    from finegrain.diagnose.caption_corpus import (
        build_caption_corpus,
        describe_protocol,
        run_caption_corpus,
    )
    from finegrain.errors import FinegrainError
    from finegrain.machine import run_environment
    from finegrain.retrieve.dense.encoders.cache import CachedEncoder, EmbeddingCache
    from finegrain.retrieve.dense.encoders.registry import get_encoder
    from finegrain.settings import Settings

    run_depth = opt.either(top_k, run_depth, "-k/--top-k", "--run-depth") or DEFAULT_TOP_K
    if dataset not in DATASETS:
        raise FinegrainError(f"unknown caption-corpus dataset {dataset!r}", f"use one of {', '.join(DATASETS)}")
    if dataset == "vg100" and split not in ("all", "test"):
        raise FinegrainError(f"vg100 has no split {split!r}", "use --split all (its 100 images)")
    settings = Settings.from_env()
    root = folder if folder is not None else settings.require_data_root() / DATASETS[dataset]
    items, unit, meta = _load_items(dataset, root, split)
    corpus = build_caption_corpus(items, query_caption)

    enc = get_encoder(encoder, **({"batch_size": batch_size} if batch_size else {}))
    cache = None if no_cache or settings.cache_dir is None else EmbeddingCache(settings.cache_dir)
    wrapped = CachedEncoder(enc, cache, show_progress=not quiet)
    result = run_caption_corpus(corpus, wrapped, renormalise=not no_renormalise)

    failures = result.failures()
    diagnosis: dict[str, Any] | None = None
    if dataset == "vg100":
        failures, diagnosis = _concept_diagnosis(failures, root)

    ids = corpus.item_ids
    name = f"caption-corpus:{dataset}/{meta['split']}#q{query_caption}"
    n = len(ids)
    body: dict[str, Any] = {
        "kind": "caption-corpus",
        "protocol": {
            "description": describe_protocol(query_index=query_caption, corpus_unit=unit,
                                             renormalise=not no_renormalise),
            "query_index": query_caption, "corpus_unit": unit, "renormalise": not no_renormalise,
            "score": "inner product of unit query vector and corpus entry vector",
            "tie_rule": "score descending, then item id descending",
            "n_items": n, "n_corpus_sentences": len(corpus.sentences),
        },
        "aggregate": dict(result.metrics),
        "per_query": result.per_query(),
        "denominators": {k: {"n_universe": n, "n_scored": n, "n_excluded_no_relevant": 0, "n_missing_from_run": 0,
                             "n_undefined": 0, "n_ignored_run_queries": 0} for k in result.metrics},
        "queries": {q: {"text": t, "type": None} for q, t in zip(ids, corpus.queries)},
        "ranks": dict(zip(ids, result.ranks.tolist())),
        "n_failures": result.n_failures,
        "failures": failures,
        "provenance": {
            "dataset": {"name": name, "source": dataset, "folder": str(root), **meta},
            "retriever": {"name": encoder, **dict(result.encoder)},
            "metrics": list(result.metrics),
            "run_depth": run_depth,
            **run_environment(),  # version, Python, machine, command, time: finegrain.machine
            **dict(result.timings),
        },
    }
    if diagnosis is not None:
        body["concept_diagnosis"] = diagnosis
    from finegrain.results.files import run_file_name, save_folder
    from finegrain.results.saved import SavedResults

    run = result.run(k=run_depth, name=encoder)
    body["run_file"] = run_file_name(run)
    path, run_path = save_folder(out, SavedResults.coerce(body), run)
    _print_table(body, title=f"{name} · {encoder}")
    typer.echo(f"wrote {path} and {run_path}")


def _load_items(dataset: str, root: Path, split: str) -> tuple[list[tuple[str, tuple[str, ...]]], str, dict[str, Any]]:
    from finegrain.diagnose.caption_corpus import load_items

    return load_items(dataset, root, split)


def _concept_diagnosis(failures: list[dict[str, Any]], root: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Concept scores (query-agnostic and query-informed) of every failure, and their means."""
    import math

    from finegrain.diagnose.caption_corpus import diagnose_failures
    from finegrain.diagnose.concepts.visual_genome import load_vg_objects

    try:
        from finegrain.diagnose.concepts.metrics import concept_scores
    except ImportError as e:
        typer.echo(f"warning: concept scores unavailable ({e}); failures are saved without them", err=True)
        return failures, {"available": False, "reason": str(e)}
    objects = {str(k): v for k, v in load_vg_objects(root).items()}
    agnostic = diagnose_failures(failures, objects, concept_scores, query_informed=False)
    informed = diagnose_failures(failures, objects, concept_scores, query_informed=True)
    out = [{**a, "concepts_query_informed": b["concepts"]} for a, b in zip(agnostic, informed)]

    def means(rows: list[Any]) -> dict[str, Any]:
        acc: dict[str, list[float]] = {}
        for r in rows:
            if isinstance(r, Mapping):
                for k, v in r.items():
                    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                        acc.setdefault(k, []).append(float(v))
        return {k: {"mean": sum(v) / len(v), "n": len(v)} for k, v in acc.items()}

    from finegrain.diagnose.concepts.report import explain_failures

    with_objects = [f for f in failures if f["ground_truth"] in objects and f["retrieved"] in objects]
    _, agnostic_global = explain_failures((objects[f["ground_truth"]], objects[f["retrieved"]], None)
                                          for f in with_objects)
    _, informed_global = explain_failures((objects[f["ground_truth"]], objects[f["retrieved"]], f["query"])
                                          for f in with_objects)
    summary = {
        "available": True,
        "n_failures": len(out),
        "n_with_objects": sum(r["concepts"] is not None for r in out),
        "query_agnostic": means([r["concepts"] for r in out]),
        "query_informed": means([r["concepts_query_informed"] for r in out]),
        # Table 3 of the explainable-ranking paper: object hit/miss, matched synsets, enumeration disagreement
        "global_query_agnostic": agnostic_global.to_dict(),
        "global_query_informed": informed_global.to_dict(),
    }
    return out, summary


def _print_table(body: Mapping[str, Any], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    from finegrain.diagnose.caption_corpus import METRIC_KEYS, PAPER_NAMES

    agg = body["aggregate"]
    prov = body["provenance"]
    t = Table(title=title, title_justify="left")
    t.add_column("n", justify="right")
    for k in METRIC_KEYS:
        t.add_column(PAPER_NAMES[k], justify="right")
    cells = [str(body["protocol"]["n_items"])]
    for k in METRIC_KEYS:
        v = agg[k]
        cells.append(f"{v:g}" if k == "median_rank" else f"{100 * v:.2f}")
    t.add_row(*cells)
    con = Console()
    con.print(t)
    texts = (prov.get("retriever") or {}).get("texts") or {}
    con.print(f"R@k, MRR@k and fails in %; {body['n_failures']} failures; encode {prov.get('encode_seconds')} s"
              + (f" ({texts.get('misses', '?')} texts encoded, {texts.get('hits', '?')} from the cache)" if texts else "")
              + f", rank {prov.get('rank_seconds')} s")
    diag = body.get("concept_diagnosis")
    if diag and diag.get("available"):
        for mode in ("query_agnostic", "query_informed"):
            row = ", ".join(f"{k}={c['mean']:.4f} (n={c['n']})" for k, c in (diag.get(mode) or {}).items())
            con.print(f"concepts, {mode.replace('_', '-')} mean over failures: {row or 'none'}")
        glob = diag.get("global_query_agnostic")
        if glob:
            con.print(f"query-agnostic, Table 3: object hit {glob['object_hit']} / miss {glob['object_miss']}, "
                      f"matched synsets {_pct(glob['matched_synset_pct'])}, "
                      f"enumeration disagreement {_pct(glob['enum_disagreement_pct'])}")
    con.print(body["protocol"]["description"], style="dim")


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}%"
