"""The seeded input fuzzer at scale: crashes / misparses / clean errors, 100,000 inputs per target.

Runs :mod:`finegrain.testing.fuzz` over every target of
:func:`finegrain.testing.fuzz_targets.all_targets` (TREC qrels and runs, plain
and gzipped, strict and ``--compat trec_eval``; BEIR; CapRetrieval; PhotoBench;
saved ``results.json``; the album's photo-file reader; the command line's
option values and paths, ...) with ``--inputs-per-target`` inputs each
(``--inputs N``: N in all, split evenly), over ``--jobs`` processes. Each
target's inputs are cut into fixed chunks seeded by (seed, target, chunk)
(:func:`finegrain.testing.fuzz.run_chunks`), so the counts are the same for
any ``--jobs``. It prints one row per target: inputs, ok, clean errors,
refused (a clean error on input the reference reading accepts: stricter, not
wrong), crashes, misparses (wrong: accepted and different from the reference
reading) and the seconds the target took on one core. Crashes and misparses
are defects: the script exits 1 when either is non-zero and writes the first
inputs of each to ``--save`` for a reproduction. The test suite runs the same
fuzzer on a few hundred inputs per target (tests/io/test_fuzz_loaders.py).

Usage::

    .venv/bin/python benchmarks/fuzz_loaders.py --seed 0 --jobs 4
    .venv/bin/python benchmarks/fuzz_loaders.py --inputs-per-target 100000 --target cli-metric
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

from tqdm import tqdm

from finegrain.testing.fuzz import Report, run_chunks
from finegrain.testing.fuzz_targets import all_targets


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs-per-target", type=int, default=100_000, help="inputs per target")
    ap.add_argument("--inputs", type=int, default=None,
                    help="inputs in all, split evenly across the targets (in place of --inputs-per-target)")
    ap.add_argument("--jobs", type=int, default=1, help="processes (the counts do not depend on it)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", action="append", help="fuzz only these targets (repeatable)")
    ap.add_argument("--save", type=Path, default=Path("out/fuzz-findings"), help="folder for defect reproductions")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")  # Pillow warns about odd EXIF in fuzzed photos; outcomes are what count

    targets = [t for t in all_targets() if not args.target or t.name in args.target]
    if not targets:
        print(f"no target named {args.target}", file=sys.stderr)
        return 2
    per = max(1, args.inputs // len(targets)) if args.inputs is not None else args.inputs_per_target
    start = time.perf_counter()
    report = Report()
    with tqdm(total=per * len(targets), unit="input", disable=None) as bar:
        for target in targets:  # one at a time, its row printed when done: a long run shows what it has
            part = run_chunks([target], per, seed=args.seed, jobs=args.jobs, progress=bar.update)
            report.merge(part)
            bar.write(part.table().splitlines()[2])  # the target's row (header, rule, row, total)
            sys.stdout.flush()
    seconds = time.perf_counter() - start

    print(f"seed {args.seed}: {report.n_inputs:,} inputs over {len(targets)} targets in {seconds:.1f} s "
          f"with {args.jobs} job{'s' if args.jobs != 1 else ''} (seconds column: time on one core)")
    print(report.table())
    crashes, misparses = report.total("crash"), report.total("misparse")
    print(f"crashes {crashes} / misparses {misparses} / clean errors {report.total('error') + report.total('refused')}")
    if report.findings:
        args.save.mkdir(parents=True, exist_ok=True)
        for i, f in enumerate(report.findings):
            case = args.save / f"{i:03d}-{f.target}-{f.outcome}"
            case.mkdir(exist_ok=True)
            for name, data in f.files.items():
                (case / name).write_bytes(data)
            (case / "finding.txt").write_text(f.detail + "\n", encoding="utf-8")
            print(f"  {f.outcome} in {f.target}: {f.detail.splitlines()[0][:160]}  ({case})")
    return 1 if crashes or misparses else 0


if __name__ == "__main__":
    sys.exit(main())
