"""``finegrain perturb``: perturb queries (antonym, colour, size, negation, typo), re-retrieve, report rank changes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import typer

from finegrain.cli import options as opt

DEFAULT_METRICS = ("ndcg@10", "hit_rate@1", "hit_rate@10", "mrr@10", "mrr")


def perturb_command(
    dataset: str = opt.dataset_option("Dataset name (e.g. capretrieval/en) or folder; caption-corpus:flickr8k/test "
                                      "perturbs the caption queries of the caption-corpus protocol."),
    retriever: str = opt.retriever_option(),
    family: list[str] = typer.Option(
        [], "--family", "-f",
        help="antonym, color-all, color-in, size, negation, typo (repeatable or comma-separated; default: all).",
    ),
    out: Path = opt.out_option("Folder for perturbations.jsonl, results.json and tables.md."),
    metrics: list[str] | None = opt.metrics_option(
        "Metric specs (means over queries; on caption-corpus: recall@1,recall@10,mrr@10,mrr,fail_rate@1, "
        "the paper's Table 5).", DEFAULT_METRICS),
    options: list[str] = opt.set_option(),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the word / replacement draws and of the bootstrap."),
    color_threshold: float = typer.Option(150.0, "--color-threshold",
                                          help="Minimum RGB distance (0-255 channels, max 441.7) of a colour replacement."),
    top_k: int | None = opt.top_k_option(),
    resamples: int = typer.Option(10000, "--resamples", min=1, help="Bootstrap resamples of the delta CIs."),
    no_cache: bool = opt.no_cache_option(),
    quiet: bool = opt.quiet_option(),
) -> None:
    """Rank of the best relevant item (lower/higher/same, Table 4) and metric deltas with 95% CIs (Table 5) per family."""
    from finegrain.diagnose.perturb.caption_corpus import CAPTION_METRICS, is_caption_corpus
    from finegrain.diagnose.perturb.families import parse_families
    from finegrain.diagnose.perturb.run import (
        PerturbConfig,
        run_perturbation,
        write_outputs,
    )
    from finegrain.diagnose.perturb.tables import print_tables
    from finegrain.retrieve.registry import without_cache
    from finegrain.settings import Settings

    captions = is_caption_corpus(dataset)
    checked = opt.retriever_options(retriever, options)
    settings = Settings.from_env()
    if no_cache:  # a retriever's caches are its options; the caption-corpus protocol's is the settings' folder
        settings = dataclasses.replace(settings, cache_dir=None)
        checked = checked if captions else without_cache(retriever, checked)
    cfg = PerturbConfig(
        dataset=dataset, retriever=retriever, families=parse_families(family),
        metrics=opt.metric_keys(metrics, CAPTION_METRICS if captions else DEFAULT_METRICS), retriever_options=checked,
        top_k=top_k, seed=seed, color_threshold=color_threshold, n_resamples=resamples,
    )
    outcome = run_perturbation(cfg, settings, show_progress=not quiet)
    paths = write_outputs(out, outcome)
    print_tables(outcome.results)
    typer.echo(f"wrote {paths['perturbations']}, {paths['results']} and {paths['tables']}")
