"""``finegrain distill PAIRS -r TEACHER --pool POOL -o OUT``: relabel training pairs with a teacher retriever.

A thin command over :func:`finegrain.train.distill.distill`: the teacher is any registered retriever with
its ``--set`` options (a fusion such as ``hybrid-use`` included), as on ``finegrain eval``; writes the
pairs with ``"negatives"`` (what ``finegrain train`` reads) and ``OUT.provenance.json``, and prints what
was kept, changed and dropped.
"""

from __future__ import annotations

from pathlib import Path

import typer

from finegrain.cli import options as opt
from finegrain.errors import FinegrainError
from finegrain.numbers import NumberError, parse_int


def distill_command(
    pairs: Path = typer.Argument(..., metavar="PAIRS", help="Pairs JSONL (finegrain gen-queries): the queries to "
                                 "relabel and the passages they came from."),
    retriever: str | None = opt.retriever_option("The teacher: a retriever name (finegrain list retrievers), e.g. "
                                                 "bm25-okapi or hybrid-use (BM25 + e5 + e5-sparse + USE-m3, RRF), "
                                                 "or run (--set path=RUN: a run saved elsewhere over the queries "
                                                 "--write-queries writes).", None),
    options: list[str] = opt.set_option("Teacher option KEY=VALUE (repeatable), as on finegrain eval."),
    pool: str | None = typer.Option(None, "--pool", help="The passages the teacher ranks: a JSON-lines corpus (_id/id + "
                             "text), a BEIR folder or a dataset name (its corpus; the output is then "
                             "TRANSDUCTIVE for that dataset)."),
    out: Path | None = opt.out_option("Write the relabelled pairs here as JSON lines (query, passage, passage_id, "
                                      "negatives, ...), with OUT.provenance.json next to it.", None),
    write_queries: Path | None = typer.Option(None, "--write-queries", metavar="FILE", help="Only write the "
                                              "queries the teacher ranks (BEIR queries.jsonl: ids q0, q1, ... in "
                                              "first-appearance order) and stop; a teacher run saved over them "
                                              "elsewhere then relabels with -r run --set path=RUN."),
    lang: str | None = opt.lang_option("Language of the pool (default: a dataset's own).", None),
    source_k: int = typer.Option(3, "--source-k", min=1, help="Keep the source passage as the positive when "
                                 "the teacher ranks it in its top K; else the teacher's top-1 (1: always it)."),
    unconfirmed: str = typer.Option("teacher", "--unconfirmed", help="A source outside the top --source-k: "
                                    "teacher (its top-1 is the positive) or drop (drop the pair)."),
    window: str = typer.Option("10:50", "--window", metavar="FIRST:LAST", help="Teacher ranks (1-based, "
                               "inclusive) the hard negatives are taken from, best first."),
    negatives: int = typer.Option(1, "--negatives", min=1, help="Hard negatives per pair; a pair with fewer "
                                  "left after the margin rule is dropped."),
    margin: float = typer.Option(0.05, "--margin", min=0, help="GIST false-negative margin: a candidate "
                                 "scoring above the positive's score less this is dropped."),
    margin_strategy: str = typer.Option("relative", "--margin-strategy", help="relative (the margin is a share "
                                        "of the positive's score) or absolute (in teacher score units)."),
    teacher_scores: int = typer.Option(0, "--teacher-scores", min=0, help="Also write the teacher's top N "
                                       "passages (ids, texts, scores) per pair, for finegrain train --kl-weight."),
    no_cache: bool = opt.no_cache_option(),
    quiet: bool = opt.quiet_option(),
) -> None:
    """Relabel PAIRS with a teacher: its positive and hard negatives, false negatives filtered (GIST)."""
    from finegrain.io.beir import write_queries_jsonl
    from finegrain.retrieve.registry import without_cache
    from finegrain.train.distill import DistillRule, distill, teacher_queries
    from finegrain.train.finetune_data import read_pairs

    if write_queries is not None:
        queries = teacher_queries(read_pairs(pairs).pairs)
        path = write_queries_jsonl(queries, write_queries)
        typer.echo(f"wrote {path} ({len(queries):,} queries): rank them over the pool with any teacher, save the "
                   "run, then relabel with -r run --set path=RUN")
        return
    if retriever is None or pool is None or out is None:
        missing = [name for name, given in (("-r/--retriever", retriever), ("--pool", pool), ("-o/--out", out))
                   if given is None]
        raise FinegrainError(f"missing {', '.join(missing)}",
                             "pass -r TEACHER --pool POOL -o OUT, or --write-queries FILE alone")
    checked = opt.retriever_options(retriever, options)
    if no_cache:
        checked = without_cache(retriever, checked)
    rule = DistillRule(source_k=source_k, window=_window(window), negatives=negatives, margin=margin,
                       margin_strategy=margin_strategy, unconfirmed=unconfirmed, scores_k=teacher_scores)
    result = distill(pairs, pool, retriever=retriever, retriever_options=checked, rule=rule, lang=lang,
                     show_progress=not quiet)
    prov = result.provenance
    if prov["transductive"]:
        typer.echo(f"TRANSDUCTIVE: the pairs are relabelled over the passages of {prov['transductive_dataset']} "
                   "(no queries, no qrels); a model trained on them is not zero-shot on that dataset")
    c = result.counts
    typer.echo(f"teacher {retriever}: {c.queries:,} queries over {prov['pool_passages']:,} passages in "
               f"{prov['teacher']['seconds']:.1f}s")
    typer.echo(f"queries: {c.queries:,} distinct, {c.queries_kept:,} with a pair written")
    typer.echo(f"pairs: {c.records:,} read, {c.kept:,} kept ({c.positive_source:,} source positive, "
               f"{c.positive_teacher:,} teacher's top-1), {c.records - c.kept:,} dropped ("
               + (", ".join(f"{n:,} {k.replace('_', ' ')}" for k, n in c.dropped.items() if n) or "none") + ")")
    typer.echo(f"negatives: {c.negatives:,} written; {c.false_negatives:,} of {c.candidates:,} window candidates "
               "dropped as false negatives")
    if c.source_outside_pool:
        typer.echo(f"warning: {c.source_outside_pool:,} pairs name a passage the pool does not hold; is --pool "
                   "the pool the pairs were generated from?", err=True)
    path = result.write(out)
    typer.echo(f"wrote {path} ({c.kept:,} pairs) and {path.name}.provenance.json")


def _window(value: str) -> tuple[int, int]:
    """``"10:50"`` -> ``(10, 50)``; the ranks are read by the one number grammar."""
    first, sep, last = value.partition(":")
    try:
        if not sep:
            raise NumberError(value)
        return parse_int(first.strip()), parse_int(last.strip())
    except NumberError:
        raise FinegrainError(f"--window {value!r} is not FIRST:LAST", "give teacher ranks, e.g. --window 10:50") from None
