"""How much of the metric error and of the system ranking does false-negative triage recover per judgment?

A demonstration of false-negative triage (:mod:`finegrain.build.triage`) on CapRetrieval,
which is fully judged, so its qrels are the truth:

1. hide a seeded ``--hide`` share (default 30%) of its positive labels
   (grade >= 1 removed, i.e. unjudged: :func:`finegrain.compare.relabel.hide_relevant`);
2. run ``--systems`` (default ``bm25-okapi``, ``e5``, ``hybrid``, built
   through the registry as ``finegrain eval -r`` builds them, default cuts)
   and pool their top ``--depth`` (default 10) with
   :func:`finegrain.build.pool.pool_runs` against the holed qrels;
3. order the pool's unjudged items three ways: **pool** (the pool's own
   judging order, :func:`~finegrain.build.pool.pool_runs`: query by query,
   more systems first, then better best rank: depth-k pooling without
   triage); **pool-rr** (the same order taken round-robin across queries:
   every query's first item, then every query's second, ...: a stronger
   baseline that spreads the budget, still without triage); and **triage**
   (:func:`finegrain.build.triage.triage`, its a-priori equal weights);
4. for each budget in ``--budgets``, "judge" the first B unjudged items of
   each order by reading the true qrels (a simulated annotator; unlisted =
   0), and score every system's nDCG@10 under holed + judged qrels against
   the true qrels (:func:`finegrain.compare.relabel.relabel_delta`):
   |nDCG@10 error| per system, its mean, and Kendall's tau between the
   system ordering and the true one; also how many hidden positives the
   budget found.

``all`` judges every unjudged pooled item, so all orders end in the same
qrels. The triage is only worth it if it beats the pool orders at the same
budget. Its weights were fixed before this script first ran (see
:mod:`finegrain.build.triage`); nothing here tunes them.

e5 embeddings come from the on-disk cache (``$FINEGRAIN_CACHE``) when an
earlier run filled it; a cold run encodes 3,024 captions and 404 queries per
language (a few minutes on two cores). Run times are printed.

Usage::

    .venv/bin/python benchmarks/relabel_recovery.py --lang zh --seed 0 --hide 0.3 [--plot recovery.svg|.png]
        [--markdown docs/results/judging.md]

The report goes to the ``--lang`` section of ``docs/results/judging.md`` (``--markdown``), with the
figures of earlier runs and what they show.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _results import Recorder, add_markdown_option

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BUDGETS = "0,50,100,200,500,1000,2000,all"
#: More systems, some close to each other, so that holes in the qrels can reorder them (chosen before any run).
EXTENDED = "bm25-okapi,bm25,bm25(k1=0.9;b=0.4),e5,hybrid,hybrid(fusion=convex),hybrid(parts=bm25,e5)"
METRIC = "ndcg@10"


def _data_root() -> Path:
    env = os.environ.get("FINEGRAIN_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def _budgets(text: str, n: int) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        b = n if part.strip() == "all" else int(part)
        if b < 0:
            raise SystemExit(f"--budgets: {part!r} is negative")
        out.append(min(b, n))
    return sorted(set(out))


def judged_qrels(holed: Any, truth: Any, items: Sequence[tuple[str, str]]) -> Any:
    """``holed`` plus a judgment from ``truth`` (0 when unlisted: CapRetrieval is fully judged) for each item."""
    from finegrain.types import Qrels

    out = {q: dict(holed[q]) for q in holed}
    for q, d in items:
        out.setdefault(q, {})[d] = int(truth[q].get(d, 0)) if q in truth else 0
    return Qrels.from_dict(out)


def parse_system(spec: str) -> tuple[str, dict[str, Any]]:
    """``"hybrid(fusion=convex;k=60)"`` -> ``("hybrid", {"fusion": "convex", "k": 60})``, checked by the registry
    as ``finegrain eval -r hybrid --set fusion=convex --set k=60`` checks it."""
    from finegrain.cli.options import retriever_options

    name, _, rest = spec.partition("(")
    items = [x for x in rest.rstrip(")").split(";") if x] if rest else []
    return name.strip(), retriever_options(name.strip(), items)


def split_systems(text: str) -> list[str]:
    """Comma-separated system specs; commas inside parentheses belong to the spec (``hybrid(weights=1,2)``)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [x for x in [*out, cur.strip()] if x]


def round_robin(order: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pool order taken across queries: every query's first unjudged item (queries in pool order), then every
    query's second, ... (the pool's own evidence, agreement then best rank, spread over all queries)."""
    position: dict[str, int] = {}
    qindex: dict[str, int] = {}
    keyed = []
    for q, d in order:
        qindex.setdefault(q, len(qindex))
        keyed.append((position.get(q, 0), qindex[q], q, d))
        position[q] = position.get(q, 0) + 1
    return [(q, d) for _, _, q, d in sorted(keyed)]


def run(args: argparse.Namespace) -> dict[str, Any]:
    from finegrain.build.pool import pool_runs
    from finegrain.build.triage import triage
    from finegrain.compare.relabel import hide_relevant, relabel_delta
    from finegrain.datasets import load_dataset
    from finegrain.retrieve.registry import get_retriever
    from finegrain.settings import Settings
    from finegrain.types import Run

    times: dict[str, float] = {}
    t0 = time.perf_counter()
    ds = load_dataset(f"capretrieval/{args.lang}", Settings(data_root=_data_root()))
    truth = ds.qrels
    holed, hidden = hide_relevant(truth, args.hide, seed=args.seed)
    runs = []
    for spec in args.systems:
        name, options = parse_system(spec)
        t = time.perf_counter()
        r = get_retriever(name, **options).retrieve(ds.corpus, ds.queries, lang=ds.lang, top_k=None,
                                                    show_progress=not args.quiet)
        runs.append(Run(r.qids, r.offsets, r.doc_codes, r.vocab, r.values, name=spec, check=False))
        times[f"retrieve {spec}"] = time.perf_counter() - t
    t = time.perf_counter()
    pool = pool_runs(runs, depth=args.depth, qrels=holed, seed=args.seed)
    times["pool"] = time.perf_counter() - t
    t = time.perf_counter()
    tri = triage(runs, holed, ds.corpus, ds.queries, lang=str(ds.lang), depth=args.depth, encoder=args.encoder,
                 include_judged=False, seed=args.seed, dataset=ds.name, show_progress=not args.quiet)
    times["triage"] = time.perf_counter() - t

    pool_order = [(it.qid, it.doc_id) for it in pool.items if it.grade is None]
    orders = {"pool": pool_order, "pool-rr": round_robin(pool_order), "triage": [(s.qid, s.doc_id) for s in tri.suspects]}
    if set(orders["pool"]) != set(orders["triage"]):
        raise SystemExit("the triage candidates differ from the pool's unjudged items: the comparison would be unfair")
    n = len(orders["pool"])
    budgets = _budgets(args.budgets, n)
    in_pool = sum(1 for x in orders["pool"] if x in hidden)
    rows = []
    t = time.perf_counter()
    for b in budgets:
        for method, order in orders.items():
            judged = order[:b]
            d = relabel_delta(runs, truth, judged_qrels(holed, truth, judged), [METRIC])[METRIC]
            errors = {r.system: abs(r.delta) if r.delta is not None else None for r in d.rows}
            defined = [e for e in errors.values() if e is not None]
            signed = [r.delta for r in d.rows if r.delta is not None]
            rows.append({"budget": b, "method": method, "found": sum(1 for x in judged if x in hidden),
                         "errors": errors, "mean_error": sum(defined) / len(defined) if defined else None,
                         "mean_signed_error": sum(signed) / len(signed) if signed else None,
                         "tau": d.kendall_tau, "order": d.order("new"), "true_order": d.order("old")})
    times["judge and score"] = time.perf_counter() - t
    times["total"] = time.perf_counter() - t0
    return {"lang": args.lang, "seed": args.seed, "hide": args.hide, "depth": args.depth, "systems": args.systems,
            "n_hidden": len(hidden), "n_positives": sum(1 for q in truth for g in truth[q].values() if g >= 1),
            "n_pooled": len(pool.items), "n_unjudged": n, "hidden_in_pool": in_pool, "encoder": tri.encoder,
            "notes": list(tri.notes), "rows": rows, "times": times}


def print_table(res: dict[str, Any]) -> None:
    systems = res["systems"]
    print(f"\nCapRetrieval/{res['lang']}: {res['n_hidden']} of {res['n_positives']} positive labels hidden "
          f"(seed {res['seed']}, {res['hide']:.0%}); depth-{res['depth']} pool of {', '.join(systems)}: "
          f"{res['n_pooled']} items, {res['n_unjudged']} unjudged, {res['hidden_in_pool']} of them hidden positives")
    print(f"triage encoder: {res['encoder'] or 'none'}" + "".join(f"; {n}" for n in res["notes"]))
    true_order = res["rows"][0]["true_order"]
    print(f"true {METRIC} order: {' > '.join(true_order)}")
    header = ["budget", "method", "found", *[f"|err| {s}" for s in systems], "mean |err|", "signed", "tau", "order"]
    cells = [header]
    for r in res["rows"]:
        cells.append([str(r["budget"]), r["method"], str(r["found"]),
                      *[_x100(r["errors"][s]) for s in systems], _x100(r["mean_error"]),
                      "—" if r["mean_signed_error"] is None else f"{r['mean_signed_error'] * 100:+.2f}",
                      "—" if r["tau"] is None else f"{r['tau']:+.2f}", " > ".join(r["order"])])
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    for j, c in enumerate(cells):
        print("  " + "  ".join(x.ljust(w) if i in (1, len(header) - 1) else x.rjust(w)
                               for i, (x, w) in enumerate(zip(c, widths))))
        if j == 0:
            print("  " + "  ".join("-" * w for w in widths))
    print("|err| = |nDCG@10 under holed + judged qrels - nDCG@10 under the true qrels| x 100; signed: the mean of "
          "that difference (negative: underestimated); tau: Kendall's tau-b of the system ordering against the "
          "true one")
    print("run time: " + ", ".join(f"{k} {v:.1f}s" for k, v in res["times"].items()))


def write_plot(res: dict[str, Any], path: Path) -> None:
    """Two line charts side by side, mean |error| and tau per budget: finegrain's own SVG charts, or a PNG
    (matplotlib) when ``path`` ends in ``.png``."""
    budgets = sorted({r["budget"] for r in res["rows"]})
    by = {(r["method"], r["budget"]): r for r in res["rows"]}
    methods = ["pool", "pool-rr", "triage"]
    if path.suffix.lower() == ".png":
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        for m in methods:
            axes[0].plot(budgets, [100 * (by[(m, b)]["mean_error"] or 0) for b in budgets], marker="o", label=m)
            axes[1].plot(budgets, [by[(m, b)]["tau"] for b in budgets], marker="o", label=m)
        axes[0].set(title=f"CapRetrieval/{res['lang']}: mean |nDCG@10 error| x100", xlabel="judgments")
        axes[1].set(title="Kendall's tau to the true system order", xlabel="judgments", ylim=(-1.05, 1.05))
        for ax in axes:
            ax.set_xscale("symlog", linthresh=50)
            ax.set_xlim(0, max(budgets) * 1.1)
            ax.set_xticks(budgets, [str(b) for b in budgets], rotation=45)
            ax.legend()
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        return
    from finegrain.report.charts import line_chart

    err = line_chart(budgets, [(m, [by[(m, b)]["mean_error"] for b in budgets]) for m in methods],
                     title=f"CapRetrieval/{res['lang']}: mean |nDCG@10 error|", x_label="judgments",
                     y_label="mean |error|", log_x=False)
    tau = line_chart(budgets, [(m, [by[(m, b)]["tau"] for b in budgets]) for m in methods],
                     title="Kendall's tau to the true system order", x_label="judgments", y_label="tau",
                     log_x=False, y_max=1.0, fmt=lambda v: f"{v:.2f}", tick_fmt=lambda v: f"{v:.1f}")
    body = "\n".join(f'<g transform="translate({i * 430},0)">{svg}</g>' for i, svg in enumerate((err, tau)))
    path.write_text(f'<svg xmlns="http://www.w3.org/2000/svg" width="860" height="300" viewBox="0 0 860 300">'
                    f"{body}</svg>\n", encoding="utf-8")


def _x100(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.2f}"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lang", choices=("zh", "en"), default="zh")
    p.add_argument("--seed", type=int, default=0, help="seed of the hidden labels and of the pooling")
    p.add_argument("--hide", type=float, default=0.3, help="share of the positive labels to hide")
    p.add_argument("--depth", type=int, default=10, help="pool depth")
    p.add_argument("--systems", type=split_systems, default=["bm25-okapi", "e5", "hybrid"],
                   help="retrievers, comma-separated, each NAME or NAME(KEY=VALUE;KEY=VALUE) as --set takes them "
                        f"(default bm25-okapi,e5,hybrid; the extended set of the README: {EXTENDED})")
    p.add_argument("--budgets", default=DEFAULT_BUDGETS, help="judgments spent, comma-separated; 'all' = every one")
    p.add_argument("--encoder", default="auto", help="triage encoder: auto (e5 when installed), none, or a name")
    p.add_argument("--plot", type=Path, default=None, help="also write the two curves as SVG")
    p.add_argument("--json", type=Path, default=None, help="also write the numbers as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_markdown_option(p, "judging.md")
    args = p.parse_args(argv)
    if args.encoder == "none":
        args.encoder = None
    with Recorder(__file__, args.markdown, None if argv is None else list(argv),
                  section=f"relabel_recovery.py --lang {args.lang}"):
        return report(args)


def report(args: argparse.Namespace) -> int:
    """Run the recovery, print the table (and write the plot and JSON when asked)."""
    res = run(args)
    print_table(res)
    if args.plot is not None:
        write_plot(res, args.plot)
        print(f"wrote {args.plot}")
    if args.json is not None:
        import json

        args.json.write_text(json.dumps(res, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "src"))
    raise SystemExit(main())
