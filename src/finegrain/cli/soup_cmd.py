"""``finegrain soup MODEL MODEL ... -o OUT``: the weighted mean of encoders fine-tuned from one base (model soups, WiSE-FT)."""

from __future__ import annotations

from pathlib import Path

import typer

from finegrain.cli import options as opt


def soup_command(
    models: list[str] = typer.Argument(
        ..., metavar="MODEL...",
        help="Two or more models as --base takes them: st:PATH (a finegrain train folder), e5, minilm; "
             "the untouched base next to a fine-tuned model is WiSE-FT."),
    out: Path = opt.out_option("New (or empty) folder for the averaged sentence-transformers model (st:OUT)."),
    mix: str | None = typer.Option(
        None, "--mix", show_default=False,
        help="One weight per model, comma-separated, normalised to sum 1 (default: equal, the uniform soup); "
             "e.g. --mix 0.3,0.7 with MODELs e5 st:TRAINED."),
) -> None:
    """Average the weights of models fine-tuned from one base into one model; evaluate it with --set encoder=st:OUT."""
    from finegrain.train.finetune import transductive_dataset
    from finegrain.train.soup import parse_mix, soup

    result = soup(models, out, parse_mix(mix, len(models)))
    mix = ", ".join(f"{m.spec} x {m.weight:.3g}" for m in result.members)
    typer.echo(f"averaged {result.averaged} of {result.tensors} tensors: {mix}")
    typer.echo(f"model: {result.out} (evaluate with --set encoder=st:{result.out}); provenance: "
               f"{result.out / 'finegrain_training.json'}")
    dataset = transductive_dataset(result.out)
    if dataset is not None:
        typer.echo(f"TRANSDUCTIVE: a member was trained on the passages of {dataset}; the soup's scores there are "
                   "transductive, never zero-shot (finegrain eval marks them)")
