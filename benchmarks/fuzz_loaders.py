"""The seeded loader fuzzer at scale: crashes / misparses / clean errors over 100,000 inputs.

Runs :mod:`finegrain.testing.fuzz` over every loader target of
:mod:`finegrain.testing.fuzz_targets` (TREC qrels and runs, plain and
gzipped, strict and ``--compat trec_eval``; BEIR; CapRetrieval; PhotoBench;
saved ``results.json``; the album's photo-file reader), the inputs split
evenly across targets, and prints one row per target: inputs, ok, clean
errors, refused (a clean error on input the reference reading accepts:
stricter, not wrong), crashes and misparses. The last two are defects: the
script exits 1 when either is non-zero and writes the first inputs of each
to ``--save`` for a reproduction. The test suite runs the same fuzzer on a
few hundred inputs per target (tests/io/test_fuzz_loaders.py).

Usage::

    .venv/bin/python benchmarks/fuzz_loaders.py --inputs 100000 --seed 0
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

from tqdm import tqdm

from finegrain.testing.fuzz import Report, run
from finegrain.testing.fuzz_targets import all_targets


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=100_000, help="inputs in all, split evenly across targets")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", action="append", help="fuzz only these targets (repeatable)")
    ap.add_argument("--save", type=Path, default=Path("out/fuzz-findings"), help="folder for defect reproductions")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")  # Pillow warns about odd EXIF in fuzzed photos; outcomes are what count

    targets = [t for t in all_targets() if not args.target or t.name in args.target]
    if not targets:
        print(f"no target named {args.target}", file=sys.stderr)
        return 2
    per = max(1, args.inputs // len(targets))
    report = Report()
    start = time.perf_counter()
    with tqdm(total=per * len(targets), unit="input", disable=None) as bar:
        run(targets, per, seed=args.seed, report=report, progress=bar.update)
    seconds = time.perf_counter() - start

    print(f"seed {args.seed}: {report.n_inputs:,} inputs over {len(targets)} targets in {seconds:.1f} s")
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
