"""MinHash overlap at scale: ``find_overlap(A, B, by="minhash")`` on N x N short synthetic texts.

Builds two seeded sets of N short texts each (``--lang zh``: 3-8 two-character
words from a Zipf-distributed vocabulary of 6,000; ``en``: 4-10 words from
one of 6,000 made-up words), plants near-duplicates in A (``--dup-rate`` of
A's texts are a B text with one word replaced, inserted or deleted), then
times :func:`finegrain.build.overlap.find_overlap` with ``by="minhash"``.

Prints the wall time, the peak resident memory of the process (``ru_maxrss``,
which includes the texts themselves: the synthetic sets' share is printed
too), the pairs found, and the recall of the planted pairs whose exact Jaccard
is at or above the threshold (the pairs LSH had to find; every pair reported
is verified by exact Jaccard, so there are no false positives to count: pairs
beyond the planted ones are chance near-duplicates of the synthetic vocabulary).

Usage::

    .venv/bin/python benchmarks/overlap_minhash.py                 # 100,000 x 100,000, zh
    .venv/bin/python benchmarks/overlap_minhash.py --n 10000 --lang en
    .venv/bin/python benchmarks/overlap_minhash.py --tracemalloc   # Python-level peak too (slower)
"""

from __future__ import annotations

import argparse
import itertools
import platform
import random
import resource
import sys
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from finegrain.build.overlap import find_overlap, shingles  # noqa: E402

_CJK = [chr(c) for c in range(0x4E00, 0x4E00 + 2500)]
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def vocabulary(lang: str, rng: random.Random, size: int = 6000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        if lang == "zh":
            words.add(rng.choice(_CJK) + rng.choice(_CJK))
        else:
            words.add("".join(rng.choice(_LETTERS) for _ in range(rng.randint(3, 8))))
    return sorted(words)


def make_sets(n: int, lang: str, dup_rate: float, seed: int) -> tuple[list[str], list[str], list[tuple[int, int]]]:
    """``(A, B, planted)``: N texts each; ``planted`` the (a, b) index pairs of the near-duplicates."""
    rng = random.Random(seed)
    vocab = vocabulary(lang, rng)
    cum = list(itertools.accumulate(1.0 / (k + 1) ** 0.8 for k in range(len(vocab))))  # Zipf-like: common words shared
    lo, hi = (3, 8) if lang == "zh" else (4, 10)
    sep = "" if lang == "zh" else " "

    def sentence() -> list[str]:
        return rng.choices(vocab, cum_weights=cum, k=rng.randint(lo, hi))

    b_words = [sentence() for _ in range(n)]
    a_words = [sentence() for _ in range(n)]
    planted = []
    for i in rng.sample(range(n), int(n * dup_rate)):
        j = rng.randrange(n)
        words = list(b_words[j])
        edit = rng.choice(("replace", "insert", "delete")) if len(words) > 3 else "replace"
        k = rng.randrange(len(words))
        if edit == "replace":
            words[k] = rng.choice(vocab)
        elif edit == "insert":
            words.insert(k, rng.choice(vocab))
        else:
            del words[k]
        a_words[i] = words
        planted.append((i, j))
    return [sep.join(w) for w in a_words], [sep.join(w) for w in b_words], planted


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000, help="texts in A and in B (default 100,000)")
    ap.add_argument("--lang", choices=("zh", "en"), default="zh")
    ap.add_argument("--threshold", type=float, default=0.5, help="Jaccard threshold (default 0.5)")
    ap.add_argument("--dup-rate", type=float, default=0.05, help="share of A planted as near-duplicates")
    ap.add_argument("--num-perm", type=int, default=128)
    ap.add_argument("--ngram", type=int, default=2)
    ap.add_argument("--fn-weight", type=float, default=None,
                    help="LSH weight of false negatives (false positives: 1 - it); default finegrain's")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tracemalloc", action="store_true", help="also report the Python-level peak (slower)")
    args = ap.parse_args(argv)

    base = _rss_mb()
    t0 = time.perf_counter()
    a, b, planted = make_sets(args.n, args.lang, args.dup_rate, args.seed)
    gen_s = time.perf_counter() - t0
    data_mb = _rss_mb() - base
    print(f"machine: {platform.machine()} {platform.python_version()}, {args.n:,} x {args.n:,} {args.lang} texts "
          f"(mean {sum(map(len, a)) / len(a):.1f} characters), {len(planted):,} planted near-duplicates, "
          f"seed {args.seed}; built in {gen_s:.1f} s (+{data_mb:.0f} MB)")

    if args.tracemalloc:
        tracemalloc.start()
    rss_before = _rss_mb()
    t0 = time.perf_counter()
    weights = {} if args.fn_weight is None else {"lsh_weights": (1 - args.fn_weight, args.fn_weight)}
    result = find_overlap(a, b, by="minhash", threshold=args.threshold, lang=args.lang, ngram=args.ngram,
                          num_perm=args.num_perm, seed=1, **weights)
    elapsed = time.perf_counter() - t0
    rss_after = _rss_mb()
    traced = tracemalloc.get_traced_memory()[1] / 2**20 if args.tracemalloc else None
    if args.tracemalloc:
        tracemalloc.stop()

    found = {(int(p.a_id), int(p.b_id)) for p in result.pairs}
    must = []
    for i, j in planted:  # the planted pairs at or above the threshold (exact Jaccard of their shingles)
        sa, sb = shingles(a[i], args.lang, args.ngram), shingles(b[j], args.lang, args.ngram)
        if sa and sb and len(sa & sb) / len(sa | sb) >= args.threshold:
            must.append((i, j))
    hit = sum(1 for pair in must if pair in found)
    recall = hit / len(must) if must else float("nan")
    print(f"minhash (num_perm {args.num_perm}, {args.ngram}-grams, LSH weights {result.params['lsh_weights']}, "
          f"Jaccard >= {args.threshold}): "
          f"{elapsed:.1f} s; {result.summary()}; {len(result.pairs):,} pairs")
    print(f"recall of planted pairs at or above the threshold: {hit:,} / {len(must):,} = {recall:.4f} "
          f"({len(planted) - len(must):,} planted pairs fell below it; "
          f"{len(found - set(planted)):,} other pairs found, each verified by exact Jaccard)")
    peak = f"peak RSS {rss_after:.0f} MB (before the search {rss_before:.0f} MB; the texts {data_mb:.0f} MB)"
    if traced is not None:
        peak += f"; tracemalloc peak {traced:.0f} MB"
    print(peak)


if __name__ == "__main__":
    main()
