"""``finegrain pool``: the union of several systems' top K per query, in judging order, as a pool file."""

from __future__ import annotations

from pathlib import Path

import typer

from finegrain.cli import options as opt

POOL_FILE = "pool.jsonl"  # the file written into --out when it is a folder


def pool_command(
    results: list[Path] = typer.Argument(
        ..., metavar="RESULTS_DIR...",
        help="Folders written by 'finegrain eval -o DIR' (results.json and the run), or run files (TREC, run.jsonl)."),
    depth: int = typer.Option(..., "--depth", help="Pool each system's top K results per query."),
    out: Path = opt.out_option(f"Pool file to write (JSON lines, .gz compresses; a folder gets {POOL_FILE})."),
    qrels: Path | None = typer.Option(
        None, "--qrels", help="Qrels marking what is already judged (default: the dataset's, named in results.json)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the shuffle within ties of the judging order."),
    no_texts: bool = typer.Option(False, "--no-texts", help="Do not embed the query and passage texts."),
    grades: str | None = typer.Option(
        None, "--grades", help="Judging scale, e.g. 0,1,2 (default: 0 up to the qrels' top grade)."),
    lang: str | None = opt.lang_option("Query language when loading the dataset (PhotoBench albums).", default=None),
) -> None:
    """Pool the top K of several runs per query for judging: more systems first, then better rank.

    Marks what the qrels already judge and embeds the texts a judging page
    needs; prints queries, items, the judged share and each system's unique
    contribution.
    """
    from finegrain.build.judge.scale import Scale
    from finegrain.build.pool import pool_results, summarise
    from finegrain.build.pool_file import write_pool

    scale = None if grades is None else list(Scale.parse(grades).grades)
    pool = pool_results(results, depth=depth, qrels=qrels, seed=seed, texts=not no_texts, lang=lang, grades=scale)
    path = write_pool(pool, out / POOL_FILE if out.is_dir() else out)
    for line in summarise(pool).lines():
        typer.echo(line)
    for warning in pool.provenance.get("warnings", ()):
        typer.echo(f"warning: {warning}", err=True)
    if pool.queries or pool.texts:
        typer.echo(f"texts embedded: {len(pool.queries)} queries, {len(pool.texts)} passages")
    typer.echo(f"wrote {path}")
