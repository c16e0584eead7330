"""``finegrain overlap A B``: the items of A (queries or passages) that are near-duplicates of B's.

A thin command over :func:`finegrain.build.overlap.find_overlap`: prints a
table of the overlapping items (best match each) and one summary line
(``7 of 8 queries in A overlap B (exact)``); ``-o FILE`` writes every pair,
``--drop OUT`` writes A without its overlapping items in A's own format.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from finegrain.cli import options as opt

if TYPE_CHECKING:
    from rich.table import Table

    from finegrain.build.overlap import OverlapResult

METHOD_HELP = (
    "exact: equal after NFKC, case and whitespace folding; rougeL: ROUGE-L F above T (zh characters, en words; "
    "default 0.6, CapRetrieval's rule); minhash: Jaccard of unit n-grams >= T via MinHash LSH (default 0.5); "
    "embedding: cosine >= T of encoder vectors (default e5, 0.95)."
)


def overlap_command(
    a: str = typer.Argument(..., help="Set A: a TSV/text file (DuReader *.train.tsv: query is column 1), "
                            "a JSON-lines file (_id/id + text), or a dataset name or folder."),
    b: str = typer.Argument(..., help="Set B, in any of the same forms."),
    by: str = typer.Option("exact", "--by", help=METHOD_HELP),
    threshold: float | None = typer.Option(None, "--threshold", help="Similarity threshold in (0, 1] "
                                           "(not for exact; default per method)."),
    field: str = typer.Option("queries", "--field", help="queries, or passages (a dataset's corpus; TSV "
                              "passage columns)."),
    column: int | None = typer.Option(None, "--column", min=1, help="TSV files: read the texts from this "
                                      "column (1-based) instead."),
    lang: str | None = opt.lang_option("Language of the texts (default: the dataset's, else detected).", None),
    out: Path | None = opt.out_option("Write every pair as JSON lines (a_id, b_id, a_text, b_text, score, "
                                      "method).", None),
    drop: Path | None = typer.Option(None, "--drop", help="Write A without its overlapping items, in A's own "
                                     "format (a file, or a folder for a dataset)."),
    encoder: str = opt.encoder_option("Encoder for --by embedding (finegrain list encoders).", "e5"),
    ngram: int = typer.Option(2, "--ngram", min=1, help="--by minhash: units per shingle (zh characters, en "
                              "words)."),
    num_perm: int = typer.Option(128, "--num-perm", min=16, help="--by minhash: MinHash permutations."),
    show: int = typer.Option(20, "--show", min=0, help="Rows of the table (the pairs file has them all)."),
    no_cache: bool = opt.no_cache_option(),
    quiet: bool = opt.quiet_option(),
) -> None:
    """Find the queries (or passages) of A that are near-duplicates of B's: train/test leakage.

    Prints the overlapping items of A with their best match in B and a line
    'N of M queries in A overlap B (method)'.
    """
    from finegrain.build.overlap import check_method, check_threshold, find_overlap, write_pairs
    from finegrain.build.textset import check_field, read_text_set, write_without
    from finegrain.report.console import table_console

    method = check_method(by)
    check_threshold(method, threshold)  # fails before anything is read
    fld = check_field(field)
    sa = read_text_set(a, fld, column=column)
    sb = read_text_set(b, fld, column=column)
    result = find_overlap(sa, sb, by=method, threshold=threshold, lang=lang, ngram=ngram, num_perm=num_perm,
                          encoder=encoder, cache=not no_cache, show_progress=not quiet)
    console = table_console()
    if result.n_overlapping and show:
        console.print(overlap_table(result, show))
    typer.echo(result.summary())
    typer.echo(f"A: {sa.source} ({len(sa)} {sa.field}); B: {sb.source} ({len(sb)} {sb.field}); "
               f"{len(result.pairs)} pairs; lang {result.lang}")
    if out is not None:
        typer.echo(f"wrote {write_pairs(result, out)} ({len(result.pairs)} pairs)")
    if drop is not None:
        path = write_without(sa, result.overlapping, drop)
        typer.echo(f"wrote {path}: A without its {result.n_overlapping} overlapping {sa.field} "
                   f"({len(sa) - result.n_overlapping} kept)")


def overlap_table(result: OverlapResult, rows: int) -> Table:
    """A rich table of the best pair of each overlapping item (at most ``rows``), 80 columns wide at most."""
    from rich.table import Table

    best = result.best_pairs()
    t = Table(title=f"overlap ({result.rule})", title_justify="left")
    t.add_column("A id", max_width=10, no_wrap=True, overflow="ellipsis")
    t.add_column("A text", max_width=20, no_wrap=True, overflow="ellipsis")
    t.add_column("B id", max_width=10, no_wrap=True, overflow="ellipsis")
    t.add_column("B text", max_width=20, no_wrap=True, overflow="ellipsis")
    t.add_column("score", justify="right", no_wrap=True)
    for p in best[:rows]:
        t.add_row(p.a_id, _one_line(p.a_text), p.b_id, _one_line(p.b_text), f"{p.score:.3f}")
    if len(best) > rows:
        t.caption = f"{len(best) - rows} more; -o FILE writes every pair"
    return t


def _one_line(text: str) -> str:
    return " ".join(text.split())
