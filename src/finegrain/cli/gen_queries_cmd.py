"""``finegrain gen-queries POOL``: KW / SM training queries for a passage pool, as pairs for ``finegrain train``.

A thin command over :func:`finegrain.train.queries.generate_queries`: writes
the pairs and their provenance sidecar, then prints how many pool passages the
leakage filter removed, the LLM fallbacks, the generic queries capped, and the
statistics of CapRetrieval's Table 6 (passages, queries per passage, units per
query, sources, and the share of KW that are WordNet hypernyms) as a table.
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
    out: Path = opt.out_option("Write the pairs here as JSON lines (query, passage, passage_id, style, source, "
                               "group), with OUT.provenance.json next to it."),
    exclude: str | None = typer.Option(None, "--exclude", help="Drop pool passages too close to any passage of "
                                       "this corpus (file, folder or dataset name) before generating."),
    rouge_l: float = typer.Option(0.6, "--rougeL", help="--exclude drops passages with ROUGE-L above this "
                                  "(zh characters, en words; CapRetrieval's 0.6)."),
    per_passage: int | None = typer.Option(None, "--per-passage", min=1, help="At most N queries per passage "
                                           "and style (default: 12 kw, 7 sm, Table 6)."),
    seed: int = typer.Option(0, "--seed", help="Seed for sampling siblings and for the LLM."),
    sm_source: str = typer.Option("auto", "--sm-source", help="Where rule SM queries come from: auto (sibling "
                                  "captions when a passage has any, else compressions of it), siblings (only) or "
                                  "compress (compressions of the passage itself, even with siblings)."),
    max_query_share: float | None = typer.Option(None, "--max-query-share", help="A rule query made in more "
                                                 "than max(20, SHARE x pool) sibling groups (or lone passages) is "
                                                 "kept only where it is most salient (default 0.005; 1 keeps all)."),
    group_by_prefix: str | None = typer.Option(None, "--group-by-prefix", help="Passages whose ids share the "
                                               "part before the last SEP are siblings (e.g. '#')."),
    siblings: str | None = typer.Option(None, "--siblings", help="flickr8k:PATH: pool texts that are captions "
                                        "of one image in Flickr8k.token.txt are siblings."),
    llm_url: str | None = typer.Option(None, "--llm-url", help="OpenAI-compatible base URL (…/v1); without "
                                       "it the rules generate offline."),
    llm_model: str | None = typer.Option(None, "--llm-model", help="Model name for --llm-url."),
    llm_retries: int = typer.Option(2, "--llm-retries", min=0, max=10, help="Retries per passage before "
                                    "falling back to the rules."),
    llm_workers: int = typer.Option(4, "--llm-workers", min=1, max=64, help="Requests to --llm-url at a time "
                                    "(1 for a server that answers one at a time)."),
    llm_timeout: float = typer.Option(30.0, "--llm-timeout", min=0.001, help="Seconds to wait for one reply."),
    no_cache: bool = opt.no_cache_option("cache of LLM replies"),
    quiet: bool = opt.quiet_option(),
) -> None:
    """Generate training queries (CapRetrieval's KW and SM) for every passage of POOL (or of an evaluation corpus)."""
    from finegrain.errors import FinegrainError
    from finegrain.llm import ReplyCache
    from finegrain.report.console import table_console
    from finegrain.settings import default_cache_dir
    from finegrain.train.llm import LLMSettings
    from finegrain.train.queries import (
        DEFAULT_MAX_QUERY_SHARE,
        check_query_share,
        generate_queries,
        parse_sm_source,
        parse_styles,
    )

    parse_styles(style)  # these fail before anything is read
    parse_sm_source(sm_source)
    share = check_query_share(DEFAULT_MAX_QUERY_SHARE if max_query_share is None else max_query_share)
    if (pool is None) == (eval_corpus is None):
        raise FinegrainError("give one pool: POOL or --pool-from-eval-corpus DATASET",
                             "e.g. finegrain gen-queries corpus.jsonl ..., or --pool-from-eval-corpus capretrieval/zh")
    if lang is None:
        raise FinegrainError("gen-queries needs the pool's language", "add --lang zh or --lang en")
    if llm_model is not None and llm_url is None:
        raise FinegrainError("--llm-model needs --llm-url", "add --llm-url http://HOST:PORT/v1, or leave both out")
    cache = None if llm_url is None or no_cache else ReplyCache(default_cache_dir() / "llm")
    llm = (LLMSettings(llm_url, llm_model or "", retries=llm_retries, workers=llm_workers, timeout=llm_timeout,
                       cache=cache) if llm_url is not None else None)
    result = generate_queries(pool or eval_corpus, style=style, lang=lang, per_passage=per_passage, seed=seed,
                              exclude=exclude, rouge_l=rouge_l, group_by_prefix=group_by_prefix, siblings=siblings,
                              llm=llm, transductive=eval_corpus is not None, sm_source=sm_source,
                              max_query_share=share, show_progress=not quiet)
    path = result.write(out)
    if result.provenance["transductive"]:
        typer.echo(f"TRANSDUCTIVE: the pool is the passages of {result.provenance['transductive_dataset']} "
                   "(no queries, no qrels); a model trained on these pairs is not zero-shot on that dataset")
    ex = result.provenance.get("exclude")
    if ex:
        typer.echo(f"leakage filter: removed {ex['removed']} of {ex['removed'] + ex['kept']} pool passages "
                   f"({ex['rule']} to a passage of {ex['corpus']})")
    if cache is not None:
        typer.echo(f"llm replies: {cache.hits} from the cache {cache.root}, {cache.misses} asked (--no-cache asks all)")
    if llm is not None:
        typer.echo("llm fallbacks to rules: " + ", ".join(f"{s} {n} of {result.n_passages}"
                                                          for s, n in result.fallbacks.items()))
    gen = result.provenance["generic"]
    where = "passages" if result.provenance["grouping"] == "none" else "sibling groups"
    for st in result.styles:
        g = gen[st]
        if g["capped_queries"]:
            typer.echo(f"generic {st.upper()} queries: {g['capped_queries']:,} made in more than "
                       f"{gen['max_units_per_query']:,} {where} kept only where most salient ({g['dropped']:,} "
                       f"pairs dropped; --max-query-share {gen['max_query_share']:g})")
    table_console().print(stats_table(result))
    typer.echo(f"wrote {path} ({len(result.pairs)} pairs) and {path.name}.provenance.json")


def stats_table(result: QuerySet) -> Table:
    """Table 6 of CapRetrieval for this run, one row per style, within 80 columns."""
    from rich.table import Table

    unit = "chars" if result.lang == "zh" else "words"
    t = Table(title=f"training queries ({result.lang}; {unit})", title_justify="left")
    for name in ("style", "passages", "queries", "q/pass", f"{unit}/q", "hypernyms", "sources"):
        t.add_column(name, justify="left" if name in ("style", "sources") else "right")
    for s in result.stats():
        src = ", ".join(f"{k} {v:,}" for k, v in s.sources.items() if v)
        share = "-" if s.style != "kw" or s.hypernym_share is None else f"{100 * s.hypernym_share:.1f}%"
        t.add_row(s.style.upper(), f"{s.passages:,}", f"{s.queries:,}", _num(s.queries_per_passage),
                  _num(s.units_per_query), share, src)
    t.caption = "Table 6 (in-domain): KW 12.2 q/pass, 4.0 tokens/q; SM 7.0, 11.6"
    t.caption_justify = "left"
    return t


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"
