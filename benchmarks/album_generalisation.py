"""Does the album planner generalise? album1, generated dev albums and held-out generated test albums.

Only album1 of PhotoBench is public, and rules fitted to it can pass any copy of it. So the
holdout is made of albums unlike album1 (:mod:`finegrain.album.bench.generated`): other home
cities and provinces, trips in China and abroad, venues and landmarks, other years with
statutory holidays and birthdays, people named by name, role and kinship, a nickname two people
share, children; about 300 bilingual queries each in PhotoBench's style, labelled by
construction (Source, ground truth, and a ``Class`` list per query).

**Which set is held out.** The routing rules and the planner are developed on album1 and on the
*dev* albums (seeds 1, 2, ...) only. The *test* albums (seeds 1001, 1002, ...) are held out: they
also use the held-out third of every bank (phrasing templates, cities, names, scenes) that no dev
album uses, and nobody looks at them while writing rules. Their figure is the generalisation
figure; run it once per release, not while tuning.

For every album, in English and Chinese:

- **routing**: source-type accuracy (V, M, F, VM, VF, MF, VMF) of the rule planner over all queries;
- **set F1**: the engine's mean set F1 over the queries labelled M, F or MF that have a non-empty
  ground truth (the part of a query the metadata and faces decide);
- **zero**: the share of the zero-answer M/F/MF queries the engine answers with no photo;

and, pooled over the albums of a split, the same per ``Class`` tag (place:district, place:city,
place:province, place:abroad, place:venue, people:name, people:role, people:shared, holiday,
time, zero; album1 has no tags).

Usage::

    .venv/bin/python benchmarks/album_generalisation.py [--album ../shared/data/photobench/album1]
        [--splits dev,test] [--albums 5] [--work DIR] [--unverified-visual abstain] [--json OUT.json]
        [--markdown docs/results/album.md]

CPU only; the albums are written under ``--work`` (default: a temporary folder).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from _results import Recorder, add_markdown_option

from finegrain.album.bench.evaluation import evaluate_album
from finegrain.album.bench.generated import DEV_SEEDS, TEST_SEEDS, make_generated_album
from finegrain.album.bench.routing import evaluate_routing
from finegrain.atomic import write_text
from finegrain.io.photobench import read_album

METADATA_FACES = ("M", "F", "MF")
LANGS = (("en", "en"), ("zh", "cn"))


def query_classes(album_dir: Path) -> dict[tuple[str, str], list[str]]:
    """(Chinese text, English text) -> the query's ``Class`` tags, from the album's query files."""
    out: dict[tuple[str, str], list[str]] = {}
    for path in sorted(album_dir.glob("*_query.json")):
        for q in json.loads(path.read_text(encoding="utf-8")):
            if isinstance(q.get("Class"), list):
                out[(q["query_cn"], q["query_en"])] = list(q["Class"])
    return out


def set_f1(pred: set[str], gold: set[str]) -> float:
    if not pred and not gold:
        return 1.0
    return 2 * len(pred & gold) / (len(pred) + len(gold))


def score(name: str, split: str, album_dir: Path, lang: str, key: str, policy: str) -> dict[str, Any]:
    """Routing and set F1 of every query of one album in one language, with its classes."""
    album = read_album(album_dir)
    classes = query_classes(album_dir)
    routed = {qid: (gold, pred) for qid, _, gold, pred in evaluate_routing(album, key).per_query}
    answers = {q["qid"]: set(q["predicted"]) for q in evaluate_album(album_dir, key, unverified_visual=policy)["per_query"]}
    rows = []
    for q in album.queries:
        gold, pred = routed[q.id]
        row: dict[str, Any] = {"qid": q.id, "text": q.text(key), "source": q.source, "routed": pred,
                               "routing_ok": gold == pred, "classes": classes.get((q.text_cn, q.text_en), []),
                               "set_f1": None, "zero_ok": None}
        if q.source in METADATA_FACES and q.ground_truth is not None and q.id in answers:
            if q.ground_truth:
                row["set_f1"] = set_f1(answers[q.id], set(q.ground_truth))
            else:
                row["zero_ok"] = not answers[q.id]
        rows.append(row)
    return {"album": name, "split": split, "lang": lang, "queries": rows}


def _mean(values: Iterable[float | bool | None]) -> tuple[float | None, int]:
    vals = [float(v) for v in values if v is not None]
    return (sum(vals) / len(vals) if vals else None), len(vals)


def _cell(v: tuple[float | None, int]) -> str:
    return f"{'-' if v[0] is None else f'{v[0]:.3f}':>6} {v[1]:>5}"


def summary(queries: list[dict[str, Any]]) -> dict[str, tuple[float | None, int]]:
    return {"routing": _mean(q["routing_ok"] for q in queries), "set_f1": _mean(q["set_f1"] for q in queries),
            "zero": _mean(q["zero_ok"] for q in queries)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--album", type=Path, default=Path("../shared/data/photobench/album1"))
    ap.add_argument("--splits", default="dev,test", help="generated splits to score, comma-separated: dev, test")
    ap.add_argument("--albums", type=int, default=5, help="generated albums per split (seeds 1.. and 1001..)")
    ap.add_argument("--work", type=Path, default=None, help="folder for the generated albums (default: a temp dir)")
    ap.add_argument("--unverified-visual", default="abstain",
                    help="the engine's policy for a visual part it cannot check (see 'finegrain album eval --help')")
    ap.add_argument("--json", type=Path, default=None, help="also write every query's row here")
    add_markdown_option(ap, "album.md")
    args = ap.parse_args(argv)
    splits = [s.strip() for s in args.splits.split(",") if s.strip()]
    bad = [s for s in splits if s not in ("dev", "test")]
    if bad or args.albums < 0:
        print(f"error: --splits takes dev and/or test (got {bad[0] if bad else args.splits!r}); "
              f"--albums a count >= 0 (got {args.albums})", file=sys.stderr)
        return 2
    if not (args.album / "metadata.json").exists():
        print(f"error: no PhotoBench album at {args.album}: give --album DIR", file=sys.stderr)
        return 2
    with Recorder(__file__, args.markdown, argv):
        report(args, splits)
    return 0


def report(args: argparse.Namespace, splits: list[str]) -> None:
    work = args.work or Path(tempfile.mkdtemp(prefix="finegrain-generated-"))
    albums: list[tuple[str, str, Path]] = [(args.album.name, "album1", args.album)]
    for split in splits:
        seeds = (DEV_SEEDS if split == "dev" else TEST_SEEDS)[: args.albums]
        for seed in seeds:
            made = make_generated_album(work / f"{split}-{seed}", seed, split)
            albums.append((f"{split}-{seed}", split, made.path))
    results = [score(name, split, path, lang, key, args.unverified_visual)
               for lang, key in LANGS for name, split, path in albums]
    print(f"albums in {work}; held out: the test split (seeds {TEST_SEEDS.start}-{TEST_SEEDS.stop - 1}); "
          f"rules developed on album1 and the dev split (seeds {DEV_SEEDS.start}-{DEV_SEEDS.stop - 1}) only")
    if "test" not in splits:
        print("the held-out test split is not scored in this run (its figure is taken once, after the rules are written)")
    head = f"{'album':<10} {'split':<6} {'lang':<4} | {'routing':>6} {'n':>5} | {'set F1':>6} {'n':>5} | {'zero':>6} {'n':>5}"
    print(head)
    print("-" * len(head))
    pooled: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        s = summary(r["queries"])
        print(f"{r['album']:<10} {r['split']:<6} {r['lang']:<4} | {_cell(s['routing'])} | {_cell(s['set_f1'])} | {_cell(s['zero'])}")
        pooled[(r["split"], r["lang"])].extend(r["queries"])
    for (split, lang), qs in sorted(pooled.items()):
        if split == "album1":
            continue
        s = summary(qs)
        print(f"{'all ' + split:<10} {split:<6} {lang:<4} | {_cell(s['routing'])} | {_cell(s['set_f1'])} | {_cell(s['zero'])}")
    print("set F1: M/F/MF queries with a non-empty ground truth; zero: M/F/MF queries with an empty one, "
          "answered with no photo")
    for split in splits:
        print(f"\nper class, {split} split (pooled over its albums): routing accuracy, set F1 (M/F/MF), zero answered")
        head = f"{'class':<15} " + " ".join(f"| {lang + ' routing':>12} {'n':>5} {'set F1':>6} {'n':>5}"
                                              for lang, _ in LANGS)
        print(head)
        print("-" * len(head))
        tags = sorted({c for (sp, _), qs in pooled.items() if sp == split for q in qs for c in q["classes"]})
        for tag in tags:
            line = f"{tag:<15} "
            for lang, _ in LANGS:
                qs = [q for q in pooled[(split, lang)] if tag in q["classes"]]
                s = summary(qs)
                f1 = s["zero"] if tag == "zero" else s["set_f1"]
                line += f"| {_cell(s['routing']):>18} {_cell(f1)} "
            print(line)
        print("(zero row: the share of zero-answer M/F/MF queries answered with no photo in place of set F1)")
    if args.json:
        write_text(args.json, json.dumps(results, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    raise SystemExit(main())
