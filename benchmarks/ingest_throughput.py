"""Ingest throughput: files and dicts to means, stage by stage, for finegrain, pytrec_eval, ranx and ir_measures.

For each size (default 3,000, 30,000 and 300,000 queries x 100 documents, the seeded data of
``metrics_throughput.py``: coarse scores with many ties, graded qrels), writes the TREC qrels and
run (and finegrain's other formats: ``run.jsonl``, BEIR ``qrels.tsv``) to a temporary folder,
then times in this one process, on the same data:

- **read** (file -> each tool's structure, each file on its own): pytrec_eval ``parse_qrel``/``parse_run``
  (dicts); finegrain ``read_qrels``/``read_run`` (its ``Qrels``/``Run``), ``read_run_jsonl``,
  ``read_qrels_tsv`` (each format against pytrec_eval's reader of the same data: qrels files against
  ``parse_qrel``, run files against ``parse_run``); ranx ``Qrels.from_file``/``Run.from_file``; ir_measures
  ``read_trec_qrels``/``read_trec_run`` (lists of records).
- **build** (dicts -> structure): pytrec_eval ``RelevanceEvaluator(qrels)``; finegrain
  ``Qrels.from_dict``/``Run.from_dict``; ranx ``Qrels(dict)``/``Run(dict)``.
- **rank**: finegrain ``Run.order`` (the one tie rule). pytrec_eval, ranx and ir_measures rank
  inside their scoring call, so their rank time is in their score time.
- **score** (structure -> per-query values and means, five metrics): pytrec_eval ``evaluate(run)``
  (its run conversion and sort included) and the means; finegrain ``evaluate`` + ``aggregate``;
  ranx ``evaluate`` (first call apart: numba compile or cache load; then warm); ir_measures
  ``calc_aggregate`` on its records.
- **end to end**: file -> means and dict -> means, each timed as one whole call (finegrain and
  pytrec_eval: read or build, rank, score and the means, on objects made in that call, so nothing
  an earlier call cached on them counts); ranx and ir_measures the sum of their stages, ranx warm
  (its first call apart).

finegrain's means must equal pytrec_eval's (1e-9) on the same queries, from files and from dicts,
so every figure is for the same work; ranx and ir_measures means are not compared (ranx breaks
ties its own way). Each timed call is the best of ``--repeats``. Peak memory: each tool's file ->
means runs again in a child process, which reports its own ``ru_maxrss`` after its imports and at
the end (``VmHWM``; ``--skip-memory`` leaves that out). Wall-clock seconds with ``os.getloadavg()`` at each
size: compare figures of one run only. Usage::

    .venv/bin/python benchmarks/ingest_throughput.py [--queries 3000 30000 300000] [--docs 100] [--seed 0]
        [--repeats 2] [--skip ranx ir_measures] [--skip-memory] [--peers-up-to 30000] [--section NAME]
        [--markdown docs/results/scale.md]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _results import Recorder, add_markdown_option
from metrics_throughput import MEASURES, PAIRS, synthesize, to_dicts

IR_MEASURES = {"ndcg@10": "nDCG@10", "recall@100": "R@100", "precision@10": "P@10", "map@100": "AP@100", "mrr": "RR"}
TOOLS = ("finegrain", "pytrec_eval", "ranx", "ir_measures")


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def best(fn, repeats: int, setup=None):
    """``(result of the last call, best seconds)`` over ``repeats`` calls; ``setup()`` (untimed) makes
    each call's argument afresh, so no call finds what an earlier one cached on its objects."""
    times = []
    out = None
    for _ in range(max(1, repeats)):
        out = None
        arg = setup() if setup is not None else None
        gc.collect()
        t = time.perf_counter()
        out = fn(arg) if setup is not None else fn()
        times.append(time.perf_counter() - t)
        del arg
    return out, min(times)


def write_files(folder: Path, data: dict[str, object]) -> dict[str, Path]:
    """The qrels and run of ``data`` as TREC files, a BEIR qrels.tsv and a run.jsonl (through finegrain's writers)."""
    from finegrain.io.beir import write_qrels_tsv
    from finegrain.io.run_jsonl import write_run_jsonl
    from finegrain.io.trec import write_qrels, write_run
    from finegrain.types import Qrels, Run

    nq = len(data["qids"])
    jn, rn = data["judged"].shape[1], data["run_docs"].shape[1]
    qrels = Qrels(data["qids"], np.arange(nq + 1) * jn, data["judged"].ravel(), data["vocab"], data["grades"].ravel())
    run = Run(data["qids"], np.arange(nq + 1) * rn, data["run_docs"].ravel(), data["vocab"], data["scores"].ravel(),
              name="bench")
    paths = {"qrels": folder / "qrels.txt", "run": folder / "run.txt", "tsv": folder / "qrels.tsv",
             "jsonl": folder / "run.jsonl"}
    write_qrels(qrels, paths["qrels"])
    write_run(run, paths["run"])
    write_qrels_tsv(qrels, paths["tsv"])
    write_run_jsonl(run, paths["jsonl"])
    return paths


# --------------------------------------------------------------------------- each tool's stages


def pytrec_means(per_query: dict[str, dict[str, float]], qids: list[str]) -> dict[str, float]:
    return {key: float(np.mean([per_query[q][tkey] for q in qids])) for key, tkey in PAIRS.items()}


def run_size(n_q: int, args: argparse.Namespace, folder: Path) -> tuple[list[tuple[str, str, str, float]], bool]:
    """Rows ``(tool, stage, what, seconds)`` for one size, and whether finegrain agreed with pytrec_eval."""
    if n_q > args.peers_up_to:
        args = argparse.Namespace(**{**vars(args), "skip": sorted({*args.skip, "ranx", "ir_measures"})})
    import pytrec_eval

    from finegrain.evaluate import evaluate
    from finegrain.io.beir import read_qrels_tsv
    from finegrain.io.run_jsonl import read_run_jsonl
    from finegrain.io.trec import read_qrels, read_run
    from finegrain.types import Qrels, Run

    data = synthesize(n_q, args.docs, args.seed)
    paths = write_files(folder, data)
    qrels_dict, run_dict = to_dicts(data)
    del data
    reps = args.repeats
    rows: list[tuple[str, str, str, float]] = []
    print(f"\n{n_q:,} queries x {args.docs} documents ({n_q * args.docs:,} run lines); load {load()}", flush=True)

    # ---- pytrec_eval
    def parsed(parse, path: Path):
        with open(path) as f:
            return parse(f)

    def pytrec_read():
        return parsed(pytrec_eval.parse_qrel, paths["qrels"]), parsed(pytrec_eval.parse_run, paths["run"])

    _, t_pq = best(lambda: parsed(pytrec_eval.parse_qrel, paths["qrels"]), reps)
    _, t_pr = best(lambda: parsed(pytrec_eval.parse_run, paths["run"]), reps)
    t_read = t_pq + t_pr
    evaluator, t_build = best(lambda: pytrec_eval.RelevanceEvaluator(qrels_dict, MEASURES), reps)
    ref, t_score = best(lambda: evaluator.evaluate(run_dict), reps)
    del evaluator
    scored_ids = list(ref)

    def pytrec_file():
        qrels, run = pytrec_read()
        return pytrec_means(pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run), scored_ids)

    def pytrec_dict():
        return pytrec_means(pytrec_eval.RelevanceEvaluator(qrels_dict, MEASURES).evaluate(run_dict), scored_ids)

    _, t_pt_file = best(pytrec_file, reps)
    _, t_pt_dict = best(pytrec_dict, reps)
    rows += [("pytrec_eval", "read", "parse_qrel", t_pq),
             ("pytrec_eval", "read", "parse_run", t_pr),
             ("pytrec_eval", "build", "RelevanceEvaluator(qrels)", t_build),
             ("pytrec_eval", "score", "evaluate(run) (converts and ranks the run)", t_score)]

    # ---- finegrain (each call on objects made afresh: nothing cached from an earlier call)
    def read_files():
        return read_qrels(paths["qrels"]), read_run(paths["run"])

    def ranked(pair):
        pair[1].order  # noqa: B018  (the rank stage, done before scoring)
        return pair

    def score(pair):
        ev = evaluate(pair[0], pair[1], list(PAIRS), warn=False)
        return ev, ev.aggregate()

    fq, t_fq = best(lambda: read_qrels(paths["qrels"]), reps)
    fr, t_fr = best(lambda: read_run(paths["run"]), reps)
    t_fread = t_fq + t_fr
    _, t_tsv = best(lambda: read_qrels_tsv(paths["tsv"]), reps)
    _, t_jsonl = best(lambda: read_run_jsonl(paths["jsonl"]), reps)
    _, t_fbuild = best(lambda: (Qrels.from_dict(qrels_dict), Run.from_dict(run_dict)), reps)
    _, t_qbuild = best(lambda: Qrels.from_dict(qrels_dict), reps)
    _, t_frank = best(lambda: Run(fr.qids, fr.offsets, fr.doc_codes, fr.vocab, fr.values, check=False).order, reps)
    (ev, agg), t_fscore = best(score, reps, setup=lambda: ranked(read_files()))
    del fq, fr
    (_, agg_f), t_e2e_file = best(lambda: score(read_files()), reps)
    (_, agg_d), t_e2e_dict = best(lambda: score((Qrels.from_dict(qrels_dict), Run.from_dict(run_dict))), reps)
    rows += [("finegrain", "read", "read_qrels (TREC)", t_fq),
             ("finegrain", "read", "read_run (TREC)", t_fr),
             ("finegrain", "read", "read_qrels_tsv (BEIR qrels)", t_tsv),
             ("finegrain", "read", "read_run_jsonl (run.jsonl)", t_jsonl),
             ("finegrain", "build", "Qrels.from_dict + Run.from_dict", t_fbuild),
             ("finegrain", "build", "  of which Qrels.from_dict", t_qbuild),
             ("finegrain", "rank", "Run.order", t_frank),
             ("finegrain", "score", "evaluate + aggregate (on ranked, unscored objects)", t_fscore)]
    scored = list(ev[next(iter(PAIRS))].per_query)
    ref_means = pytrec_means(ref, scored)
    worst = max(max(abs(ref_means[k] - agg[k]), abs(ref_means[k] - agg_f[k]), abs(ref_means[k] - agg_d[k]))
                for k in PAIRS)
    del ref

    # ---- ranx
    t_ranx_first = t_ranx_warm = float("nan")
    if "ranx" not in args.skip:
        import ranx

        (rq, rr), t_rread = best(lambda: (ranx.Qrels.from_file(str(paths["qrels"]), kind="trec"),
                                          ranx.Run.from_file(str(paths["run"]), kind="trec")), reps)
        del rq, rr
        (rq, rr), t_rbuild = best(lambda: (ranx.Qrels(qrels_dict), ranx.Run(run_dict)), reps)
        _, t_ranx_first = best(lambda: ranx.evaluate(rq, rr, list(PAIRS), save_results_in_run=False), 1)
        _, t_ranx_warm = best(lambda: ranx.evaluate(rq, rr, list(PAIRS), save_results_in_run=False), reps)
        del rq, rr
        rows += [("ranx", "read", "Qrels.from_file + Run.from_file", t_rread),
                 ("ranx", "build", "Qrels(dict) + Run(dict)", t_rbuild),
                 ("ranx", "score", "evaluate, warm (ranks inside)", t_ranx_warm),
                 ("ranx", "score", "  first call (numba compile or cache load)", t_ranx_first)]

    # ---- ir_measures
    if "ir_measures" not in args.skip:
        import ir_measures

        measures = [ir_measures.parse_measure(m) for m in IR_MEASURES.values()]
        (iq, ir), t_iread = best(lambda: (list(ir_measures.read_trec_qrels(str(paths["qrels"]))),
                                          list(ir_measures.read_trec_run(str(paths["run"])))), reps)
        _, t_iscore = best(lambda: ir_measures.calc_aggregate(measures, iq, ir), reps)
        _, t_idict = best(lambda: ir_measures.calc_aggregate(measures, qrels_dict, run_dict), reps)
        del iq, ir
        rows += [("ir_measures", "read", "read_trec_qrels + read_trec_run (lists)", t_iread),
                 ("ir_measures", "score", "calc_aggregate on records (builds inside)", t_iscore),
                 ("ir_measures", "score", "calc_aggregate on dicts (builds inside)", t_idict)]

    # ---- end to end
    e2e = {
        ("pytrec_eval", "file"): t_pt_file,
        ("pytrec_eval", "dict"): t_pt_dict,
        ("finegrain", "file"): t_e2e_file,
        ("finegrain", "dict"): t_e2e_dict,
    }
    if "ranx" not in args.skip:
        e2e[("ranx", "file")] = t_rread + t_ranx_warm
        e2e[("ranx", "dict")] = t_rbuild + t_ranx_warm
    if "ir_measures" not in args.skip:
        e2e[("ir_measures", "file")] = t_iread + t_iscore
        e2e[("ir_measures", "dict")] = t_idict
    for (tool, src), t in e2e.items():
        rows.append((tool, "end to end", f"{src} -> means" + (" (warm)" if tool == "ranx" else ""), t))

    width = 58
    print(f"{'tool':<12} {'stage':<11} {'what':<{width}} {'seconds':>9}")
    print("-" * (12 + 11 + width + 12))
    for tool, stage, what, t in rows:
        print(f"{tool:<12} {stage:<11} {what:<{width}} {t:>9.3f}")
    print("speed-ups (other / finegrain; > 1: finegrain is faster)")
    print(f"  read TREC files vs pytrec_eval parse_qrel + parse_run:  {t_read / t_fread:6.2f}x")
    print(f"  read each format vs pytrec_eval's reader of the same data: TREC qrels {t_pq / t_fq:.2f}x, "
          f"BEIR qrels.tsv {t_pq / t_tsv:.2f}x (vs parse_qrel); TREC run {t_pr / t_fr:.2f}x, "
          f"run.jsonl {t_pr / t_jsonl:.2f}x (vs parse_run)")
    print(f"  dicts -> objects vs RelevanceEvaluator(qrels):           {t_build / t_qbuild:6.2f}x (qrels only)")
    for src in ("file", "dict"):
        line = f"  {src} -> means vs pytrec_eval: {e2e[('pytrec_eval', src)] / e2e[('finegrain', src)]:6.2f}x"
        if ("ranx", src) in e2e:
            line += f"; vs ranx warm: {e2e[('ranx', src)] / e2e[('finegrain', src)]:6.2f}x"
        if ("ir_measures", src) in e2e:
            line += f"; vs ir_measures: {e2e[('ir_measures', src)] / e2e[('finegrain', src)]:6.2f}x"
        print(line)
    print(f"  scored queries {len(scored):,} of {n_q:,}; max |mean difference| vs pytrec_eval "
          f"(from files and from dicts): {worst:.2e}; load {load()}")
    if not args.skip_memory:
        del qrels_dict, run_dict, ev  # the children measure their own memory; this process lets go of its data
        gc.collect()
        memory(paths, args)
    return rows, worst < 1e-9


# --------------------------------------------------------------------------- memory, one child per tool


def child(tool: str, qrels_path: str, run_path: str) -> None:
    """File -> means with one tool; prints ``{"base": MB after imports, "peak": MB at the end}``."""
    import pytrec_eval  # every child imports the same heavy modules first, so "base" is comparable

    from finegrain.evaluate import evaluate
    from finegrain.io.trec import read_qrels, read_run

    if tool == "ranx":
        import ranx
    if tool == "ir_measures":
        import ir_measures
    base = high_water_mb()
    if tool == "finegrain":
        evaluate(read_qrels(qrels_path), read_run(run_path), list(PAIRS), warn=False).aggregate()
    elif tool == "pytrec_eval":
        ev = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(open(qrels_path)), MEASURES)
        ev.evaluate(pytrec_eval.parse_run(open(run_path)))
    elif tool == "ranx":
        ranx.evaluate(ranx.Qrels.from_file(qrels_path, kind="trec"), ranx.Run.from_file(run_path, kind="trec"),
                      list(PAIRS), save_results_in_run=False)
    else:
        measures = [ir_measures.parse_measure(m) for m in IR_MEASURES.values()]
        ir_measures.calc_aggregate(measures, ir_measures.read_trec_qrels(qrels_path),
                                   ir_measures.read_trec_run(run_path))
    print(json.dumps({"base": base, "peak": high_water_mb()}))


def high_water_mb() -> float:
    """This process's peak RSS in MB: ``VmHWM`` (``ru_maxrss`` would carry the parent's peak over exec)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory(paths: dict[str, Path], args: argparse.Namespace) -> None:
    print("peak memory, file -> means in a child process (MB: peak RSS; above the RSS after imports)")
    for tool in TOOLS:
        if tool in args.skip:
            continue
        out = subprocess.run([sys.executable, __file__, "--child", tool, str(paths["qrels"]), str(paths["run"])],
                             capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
        if out.returncode != 0:
            print(f"  {tool:<12} failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        m = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"  {tool:<12} {m['peak']:8.0f} MB   (+{m['peak'] - m['base']:.0f} MB)")


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:5])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, nargs="+", default=[3_000, 30_000, 300_000])
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=2, help="calls per timing (the best is kept)")
    ap.add_argument("--skip", nargs="*", default=[], choices=["ranx", "ir_measures"])
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--peers-up-to", type=int, default=30_000,
                    help="ranx and ir_measures run at sizes up to this many queries only (at 300,000 they take "
                         "minutes and several GB each); pytrec_eval, the anchor, runs at every size")
    ap.add_argument("--section", default=None,
                    help="name of the results section (default: the script's; another name keeps the default one, "
                         "as for a run of one size with every peer)")
    add_markdown_option(ap, "scale.md")
    args = ap.parse_args(argv)
    with Recorder(__file__, args.markdown, argv, section=args.section) as rec:
        print(f"{os.cpu_count()} CPUs; load average (1/5/15 min) {load()}")
        ok = True
        with tempfile.TemporaryDirectory(prefix="ingest-") as tmp:
            for n_q in args.queries:
                ok &= run_size(n_q, args, Path(tmp))[1]
        if not ok:
            print("finegrain's means differ from pytrec_eval's: the timings do not compare equal work")
        rec.status = 0 if ok else 1
    return rec.status


if __name__ == "__main__":
    sys.exit(main())
