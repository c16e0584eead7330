"""Does ``finegrain train --precision bf16`` train as well as fp32? One cell trained at both, side by side.

``--compare freeze-embeddings`` asks the same of ``--freeze-embeddings`` against training every weight
(in its own section of the results).

The same base, pairs, steps, batch, lr, seed and thread count are trained once in float32 and once
with the forward pass under bfloat16 autocast (``--precision bf16``), one after the other in this
process's machine, and both models are scored on

* the Flickr8k **dev** caption-corpus split (R@1, MRR; ``finegrain caption-corpus``): the split the
  granularity table's lr pilot reads, so a decision about the precision is made there, and
* capretrieval/en (nDCG@10; ``finegrain eval``), with ``finegrain compare`` of bf16 against fp32
  (paired randomization test), reported, not chosen on.

The pairs are ``--pairs`` or, by default, the granularity table's in-domain KW+SM pairs: the
captions of a seeded sample of Flickr8k TRAIN images (``--pool-size``), ``finegrain gen-queries
--style both`` with the capretrieval/en passages excluded (``benchmarks/granularity_table.py``).
Each step writes into ``--out`` and is skipped when its output exists. The table goes to this
script's section of ``docs/results/training.md`` (``--markdown``).

Usage::

    .venv/bin/python benchmarks/train_precision.py --out /tmp/train-precision [--base e5] [--steps 200]
        [--batch 32] [--lr 1.25e-5] [--threads 2] [--pairs PAIRS.jsonl] [--compare precision|freeze-embeddings]
        [--markdown docs/results/training.md]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from _results import Recorder, add_markdown_option
from granularity_table import evaluate, finegrain, gen_pairs, in_domain_pool, significance

from finegrain.machine import has_native_bf16

#: Each comparison's two variants: (name, the model's folder suffix, the extra ``finegrain train`` flags).
VARIANTS: dict[str, tuple[tuple[str, str, tuple[str, ...]], ...]] = {
    "precision": (("fp32", "fp32", ("--precision", "fp32")), ("bf16", "bf16", ("--precision", "bf16"))),
    "freeze-embeddings": (("all weights", "all", ()), ("frozen embeddings", "frozen", ("--freeze-embeddings",))),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for everything (kept: re-runs skip finished parts)")
    ap.add_argument("--base", default="e5", help="minilm, e5 or st:DIR")
    ap.add_argument("--pairs", type=Path, default=None, help="pairs JSONL (default: the in-domain KW+SM pairs)")
    ap.add_argument("--pool-size", type=int, default=5000)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=None, help="default: the base's declared lr")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: finegrain train's)")
    ap.add_argument("--compare", choices=tuple(VARIANTS), default="precision",
                    help="precision: fp32 against bf16; freeze-embeddings: every weight trained against the token "
                         "embedding table frozen")
    add_markdown_option(ap, "training.md")
    args = ap.parse_args()
    section = None if args.compare == "precision" else "train_precision.py --compare freeze-embeddings"
    with Recorder(__file__, args.markdown, section=section) as rec:
        rec.outputs = args.out.resolve()
        rec.body = run(args).rstrip("\n").splitlines()


def train(args: argparse.Namespace, pairs: Path, out: Path, flags: tuple[str, ...]) -> dict[str, Any]:
    prov = out / "finegrain_training.json"
    if not prov.is_file():
        extra = [] if args.lr is None else ["--lr", repr(args.lr)]
        extra += [] if args.threads is None else ["--threads", str(args.threads)]
        resume = ["--resume"] if (out / "checkpoints").is_dir() else []
        finegrain("train", "--base", args.base, "--pairs", str(pairs), "-o", str(out), "--steps", str(args.steps),
                  "--batch-size", str(args.batch), "--seed", str(args.seed), *flags,
                  "--checkpoint-every", str(max(1, args.steps // 4)), "-q", *extra, *resume)
    record = json.loads(prov.read_text(encoding="utf-8"))
    hp = record["hyperparameters"]
    return {"steps": record["steps_done"], "wall_s": record["wall_time_s"], "threads": hp["threads"],
            "temperature": hp["temperature"], "lr": hp["lr"], "precision": hp["precision"],
            "last_loss": record["curve"]["train_loss"][-1],
            "val": (record["curve"]["validation"] or [{}])[-1]}


def run(args: argparse.Namespace) -> str:
    root: Path = args.out.resolve()
    root.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    pairs = args.pairs
    if pairs is None:
        pool = root / "flickr8k-train-captions.jsonl"
        if not pool.is_file():
            in_domain_pool(pool, args.pool_size, args.seed)
        pairs = root / "in-domain-both.jsonl"
        gen_pairs(pool, "both", pairs, args.seed)
    variants = VARIANTS[args.compare]
    cells = {name: train(args, pairs, root / f"model-{folder}", flags) for name, folder, flags in variants}
    scores = {name: evaluate(f"st:{root / f'model-{folder}'}", root / "eval", folder, flickr_split="dev",
                             suites=("flickr",))
              | evaluate(f"st:{root / f'model-{folder}'}", root / "eval", folder, suites=("cap",))
              for name, folder, _ in variants}
    cmp_path = root / ("compare.json" if args.compare == "precision" else f"compare-{args.compare}.json")
    if not cmp_path.is_file():
        finegrain("compare", *(str(root / "eval" / "capretrieval-en" / folder) for _, folder, _ in variants),
                  "-b", "0", "-m", "ndcg@10", "-o", str(cmp_path))
    (delta,) = significance(json.loads(cmp_path.read_text(encoding="utf-8")))
    first, second = (name for name, _, _ in variants)
    c = cells[first]
    lines = [
        f"Base {args.base}, pairs {pairs.name} ({'given' if args.pairs else 'in-domain KW+SM, Flickr8k train images'}), "
        f"{c['steps']} steps x batch {args.batch}, temperature {c['temperature']:g}, lr {c['lr']:g}, seed {args.seed}, "
        f"{c['threads']} thread(s), precision {c['precision']}; bfloat16 in hardware: {has_native_bf16()}.",
        "",
        f"| {'precision' if args.compare == 'precision' else 'weights trained'} | train s | s/step | last loss | held-out loss | Flickr8k dev R@1 | dev MRR | capretrieval/en nDCG@10 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p, _, _ in variants:
        cell, s = cells[p], scores[p]
        cap = f"{s['capretrieval/en nDCG@10']:.2f}" + (f" ({delta} vs {first})" if p == second else "")
        lines.append(f"| {p} | {cell['wall_s']:.0f} | {cell['wall_s'] / cell['steps']:.2f} | {cell['last_loss']:.4f} | "
                     f"{cell['val'].get('loss', float('nan')):.4f} | {s['flickr8k-dev R@1']:.2f} | "
                     f"{s['flickr8k-dev MRR']:.2f} | {cap} |")
    lines += ["", "train s: the run's wall time (loading, held-out checks and checkpoints included). "
              "capretrieval/en is reported, never chosen on; the dev split is where a setting would be chosen.",
              f"Wall time this call: {time.perf_counter() - t0:.0f} s"]
    md = "\n".join(lines) + "\n"
    (root / "table.md").write_text(md, encoding="utf-8")
    print(md)
    return md


if __name__ == "__main__":
    main()
