"""``finegrain gen-queries POOL``: KW / SM training queries for a passage pool, as pairs for ``finegrain train``.

A thin command over :func:`finegrain.train.queries.generate_queries`: writes
the pairs and their provenance sidecar, prints how many pool passages the
leakage filter removed, the LLM fallbacks, and the statistics of CapRetrieval's
Table 6 (passages, queries per passage, units per query) as a table.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from finegrain.cli import options as opt

if TYPE_CHECKING:
    from rich.table import Table

    from finegrain.train.queries import QuerySet


def gen_queries_command(
    pool: str | None = typer.Argument(None, metavar="POOL", help="Passage pool: a JSON-lines corpus (_id/id + text), a BEIR folder "
                                      "or a dataset name (its corpus; transductive for that dataset)."),
    eval_corpus: str | None = typer.Option(None, "--pool-from-eval-corpus", help="Use this evaluation dataset's "
                                           "passages as the pool (never its queries or qrels): TRANSDUCTIVE, marked "
                                           "so in the pairs, the model and its results."),
    style: str = typer.Option("both", "--style", help="kw (salient keywords and hypernyms), sm (summaries) or "
                              "both."),
    lang: str = opt.lang_option("Language of the pool.", None),
    out: Path = opt.out_option("Write the pairs here as JSON lines (query, passage, passage_id, style, source), "
                               "with OUT.provenance.json next to it."),
    exclude: str | None = typer.Option(None, "--exclude", help="Drop pool passages too close to any passage of "
                                       "this corpus (file, folder or dataset name) before generating."),
    rouge_l: float = typer.Option(0.6, "--rougeL", help="--exclude drops passages with ROUGE-L above this "
                                  "(zh characters, en words; CapRetrieval's 0.6)."),
    per_passage: int | None = typer.Option(None, "--per-passage", min=1, help="At most N queries per passage "
                                           "and style (default: 12 kw, 7 sm, Table 6)."),
    seed: int = typer.Option(0, "--seed", help="Seed for sampling siblings and for the LLM."),
    group_by_prefix: str | None = typer.Option(None, "--group-by-prefix", help="Passages whose ids share the "
                                               "part before the last SEP are siblings (e.g. '#')."),
    siblings: str | None = typer.Option(None, "--siblings", help="flickr8k:PATH: pool texts that are captions "
                                        "of one image in Flickr8k.token.txt are siblings."),
    llm_url: str | None = typer.Option(None, "--llm-url", help="OpenAI-compatible base URL (…/v1); without "
                                       "it the rules generate offline."),
    llm_model: str | None = typer.Option(None, "--llm-model", help="Model name for --llm-url."),
    llm_retries: int = typer.Option(2, "--llm-retries", min=0, max=10, help="Retries per passage before "
                                    "falling back to the rules."),
) -> None:
    """Generate training queries (CapRetrieval's KW and SM) for every passage of POOL (or of an evaluation corpus)."""
    from finegrain.errors import FinegrainError
    from finegrain.report.console import table_console
    from finegrain.train.llm import LLMSettings
    from finegrain.train.queries import generate_queries, parse_styles

    parse_styles(style)  # fails before anything is read
    if (pool is None) == (eval_corpus is None):
        raise FinegrainError("give one pool: POOL or --pool-from-eval-corpus DATASET",
                             "e.g. finegrain gen-queries corpus.jsonl ..., or --pool-from-eval-corpus capretrieval/zh")
    if lang is None:
        raise FinegrainError("gen-queries needs the pool's language", "add --lang zh or --lang en")
    if llm_model is not None and llm_url is None:
        raise FinegrainError("--llm-model needs --llm-url", "add --llm-url http://HOST:PORT/v1, or leave both out")
    llm = LLMSettings(llm_url, llm_model or "", retries=llm_retries) if llm_url is not None else None
    result = generate_queries(pool or eval_corpus, style=style, lang=lang, per_passage=per_passage, seed=seed,
                              exclude=exclude, rouge_l=rouge_l, group_by_prefix=group_by_prefix, siblings=siblings,
                              llm=llm, transductive=eval_corpus is not None)
    if result.provenance["transductive"]:
        typer.echo(f"TRANSDUCTIVE: the pool is the passages of {result.provenance['transductive_dataset']} "
                   "(no queries, no qrels); a model trained on these pairs is not zero-shot on that dataset")
    ex = result.provenance.get("exclude")
    if ex:
        typer.echo(f"leakage filter: removed {ex['removed']} of {ex['removed'] + ex['kept']} pool passages "
                   f"({ex['rule']} to a passage of {ex['corpus']})")
    if llm is not None:
        typer.echo("llm fallbacks to rules: " + ", ".join(f"{s} {n} of {result.n_passages}"
                                                          for s, n in result.fallbacks.items()))
    table_console().print(stats_table(result))
    path = result.write(out)
    typer.echo(f"wrote {path} ({len(result.pairs)} pairs) and {path.name}.provenance.json")


def stats_table(result: QuerySet) -> Table:
    """Table 6 of CapRetrieval for this run, one row per style, within 80 columns."""
    from rich.table import Table

    unit = "chars" if result.lang == "zh" else "words"
    t = Table(title=f"training queries ({result.lang}; {unit})", title_justify="left")
    for name in ("style", "passages", unit, "queries", "q/pass", f"{unit}/q", "sources"):
        t.add_column(name, justify="left" if name in ("style", "sources") else "right")
    for s in result.stats():
        src = ", ".join(f"{k} {v:,}" for k, v in s.sources.items() if v)
        t.add_row(s.style.upper(), f"{s.passages:,}", f"{s.passage_units:,}", f"{s.queries:,}",
                  _num(s.queries_per_passage), _num(s.units_per_query), src)
    return t


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"
