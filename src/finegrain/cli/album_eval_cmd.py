"""``finegrain album eval``: score the album engine on a PhotoBench album, with PhotoBench's analyses.

Scores the engine on a PhotoBench album's judged queries (and on the queries of
``--queries`` files, e.g. from ``album zero-answer``) and prints, from the saved
result (:func:`finegrain.album.bench.evaluation.evaluate_album`):

- ``--by source`` (default): set P / R / F1, Reject-P / R / F1 and R@K / N@K (K = 1,
  5, 10, 20) side by side per Source type, with each denominator;
- ``--by outcome`` (default): queries per engine outcome (found, no such place, ...) and Source type;
- ``--by complexity`` (default): set F1 by number of sources and the deltas (Table 6);
- ``--by dimension``: rows per query dimension × fact / cognitive (Table 9);
- ``--by class`` (default): routing accuracy, set P / R / F1 and reject rate per query class
  (place level, people by name / role / shared nickname, holiday, time, zero), from the
  queries' ``Class`` field when the album has it (gold), else read off their plans (derived);
- ``--tools M,F`` runs the engine with only those tools (T_S is always on); more
  ``--tools`` or ``--ablation`` (Table 5's V; V,M; V,F; V,M,F) add an ablation table;
- ``--llm-url`` / ``--llm-model`` plan every query with the LLM planner (rules on
  failure), and the summary counts planners and fallback reasons;
- ``--holiday span|day``: a statutory holiday with a year is its official days off (the
  default, as PhotoBench reads it) or its own day.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import typer

from finegrain.cli.album_plan_cmd import LLM_KEY_ENV
from finegrain.cli.album_search_cmd import _POLICY_HELP, _encoder, holiday_option
from finegrain.cli.options import lang_option
from finegrain.errors import FinegrainError

VIEWS = ("source", "outcome", "complexity", "dimension", "class")
DEFAULT_VIEWS = "source,outcome,complexity,class"
SET_KEYS = ("set_precision", "set_recall", "set_f1")
REJECT_KEYS = ("reject_precision", "reject_recall", "reject_f1")
SHORT = {"set_precision": "P", "set_recall": "R", "set_f1": "F1", "reject_precision": "Rej-P",
         "reject_recall": "Rej-R", "reject_f1": "Rej-F1"}


def eval_command(
    photobench: Path = typer.Option(..., "--photobench", "-p", help="A PhotoBench album folder."),
    lang: str = lang_option("Query language:"),
    out: Path | None = typer.Option(None, "--out", "-o", help="Folder for results.json."),
    catalog: str | None = typer.Option(
        None, "--catalog", "-c",
        help="Reuse (or create) this catalog instead of a temporary one: a file, or a postgresql://USER@HOST/DB URL."),
    encoder: str | None = typer.Option(None, "--encoder", "-e", help="Text encoder of the catalog's caption embeddings."),
    unverified_visual: str = typer.Option("abstain", "--unverified-visual", help=_POLICY_HELP),
    queries: list[Path] = typer.Option(
        [], "--queries",
        help="A query file (JSON: id, text, lang, ground_truth; e.g. from 'album zero-answer') whose queries in "
             "--lang are scored with the album's own (repeatable)."),
    no_album_queries: bool = typer.Option(False, "--no-album-queries", help="Score only the --queries files' queries."),
    by: list[str] = typer.Option(
        [], "--by", help=f"Tables to print: {', '.join(VIEWS)} (comma list or repeated; default {DEFAULT_VIEWS})."),
    tools: list[str] = typer.Option(
        [], "--tools",
        help="Tools switched on, e.g. V,M or M,F (V vector search, M metadata, F faces; set composition always on). "
             "The first is the run reported; more --tools are scored for the ablation table."),
    ablation: bool = typer.Option(False, "--ablation", help="Also score the paper's Table 5 tool sets (V; V,M; V,F; V,M,F)."),
    llm_url: str | None = typer.Option(None, "--llm-url", help="OpenAI-compatible base URL (…/v1): plan every query with the LLM planner (rules on failure)."),
    llm_model: str | None = typer.Option(None, "--llm-model", help="Model name for --llm-url."),
    llm_timeout: float = typer.Option(20.0, "--llm-timeout", min=0.1, help="Seconds to wait for each LLM reply."),
    holiday: str = holiday_option(),
) -> None:
    """Score the album engine on the PhotoBench queries with ground truth, with PhotoBench's analyses."""
    from finegrain.album.bench.evaluation import TABLE5_TOOLS, evaluate_album
    from finegrain.album.engine.plan import LLMConfig

    views = _views(by)
    if (llm_url is None) != (llm_model is None):
        missing = "--llm-model" if llm_model is None else "--llm-url"
        raise FinegrainError(f"the LLM planner needs both --llm-url and --llm-model; {missing} is missing",
                             f"add {missing}, or leave both out to plan with the rules")
    llm = None if llm_url is None else LLMConfig(llm_url, llm_model or "", os.environ.get(LLM_KEY_ENV), llm_timeout)
    main = tools[0] if tools else None
    extra = [*tools[1:], *(TABLE5_TOOLS if ablation else ())]
    result = evaluate_album(photobench, lang, out, catalog=catalog, encoder=_encoder(encoder),
                            unverified_visual=unverified_visual, query_files=queries,
                            album_queries=not no_album_queries, tools=main, ablation=extra, llm=llm, holiday=holiday)
    print_report(result, views)
    if out is not None:
        typer.echo(f"wrote {out / 'results.json'}")


def _views(by: list[str]) -> list[str]:
    names = [v.strip().lower() for item in (by or [DEFAULT_VIEWS]) for v in item.split(",") if v.strip()]
    for v in names:
        if v not in VIEWS:
            raise FinegrainError(f"unknown --by table {v!r}", f"use one of {', '.join(VIEWS)}")
    return list(dict.fromkeys(names))


def _short(key: str) -> str:
    """The paper's column name of a metric key (set_f1 -> F1, recall@10 -> R@10)."""
    return SHORT.get(key) or key.replace("recall@", "R@").replace("ndcg@", "N@")


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}"


def _cell(c: dict[str, Any] | None) -> str:
    return "-" if c is None else _fmt(c.get("value"))


def print_report(result: dict[str, Any], views: list[str]) -> None:
    """The summary, then each table of ``views`` (all values in %, as in the paper)."""
    from rich.console import Console

    console = Console(width=None if sys.stdout.isatty() else 200)
    _summary(console, result)
    if "source" in views:
        _by_source(console, result)
    if "outcome" in views:
        _outcomes(console, result)
    if "complexity" in views:
        _complexity(console, result)
    if "dimension" in views:
        _dimensions(console, result)
    if "class" in views and "classes" in result:
        _classes(console, result)
    if result.get("ablation"):
        _ablation(console, result)


def _summary(console: Any, result: dict[str, Any]) -> None:
    s = result["settings"]
    n, zero = result["n_queries"], result["n_zero_ground_truth"]
    console.print(f"[bold]{result['album']}[/bold] ({result['lang']}): {n} judged queries, {zero} with zero ground "
                  f"truth; tools {s.get('tools', 'V,M,F')}; planner {s['planner']}; unverified visual: "
                  f"{s['unverified_visual']}")
    for f in result.get("query_files", []):
        console.print(f"  {f['n_queries']} queries from {f['path']} ({f['n_zero_ground_truth']} with zero ground truth)")
    per = result["per_query"]
    zq = [q for q in per if q["n_ground_truth"] == 0]
    console.print(f"zero-ground-truth queries rejected: {sum(q['abstained'] for q in zq)}/{len(zq)}; "
                  f"queries with ground truth abstained on: {sum(q['abstained'] for q in per if q['n_ground_truth'])}"
                  f"/{n - len(zq)}")
    agg = result["aggregate"]
    console.print(f"Reject-Precision {_fmt(agg.get('reject_precision'))}, Reject-Recall {_fmt(agg.get('reject_recall'))}, "
                  f"Reject-F1 {_fmt(agg.get('reject_f1'))} over {n} queries ({len(zq)} with zero ground truth)")
    planners = result.get("planners") or {}
    if s["planner"] == "llm" or planners.get("n_fallbacks"):
        used = ", ".join(f"{k} {v}" for k, v in planners.get("planned_by", {}).items())
        console.print(f"planned by: {used} (of {n}); LLM fallbacks: {planners.get('n_fallbacks', 0)}")
        for reason, k in list(planners.get("fallback_reasons", {}).items())[:5]:
            console.print(f"  {k} × {reason}")


def _by_source(console: Any, result: dict[str, Any]) -> None:
    from rich.table import Table

    rows = result["source_rows"]
    rank_keys = [k for k in rows[-1]["metrics"] if k.startswith(("recall@", "ndcg@"))]
    keys = [*SET_KEYS, *REJECT_KEYS, *rank_keys]
    table = Table("source", "queries", "zero-GT", *(_short(k) for k in keys),
                  title="set (normal queries), rejection and ranking metrics (%) by Source type (Tables 2, 3)")
    for row in rows:
        table.add_row(row["value"], str(row["n_queries"]), str(row["n_zero_ground_truth"]),
                      *(_cell(row["metrics"].get(k)) for k in keys))
    console.print(table)
    n = rows[-1]["metrics"]
    console.print(
        f"denominators (all): P over {n['set_precision']['n']} normal queries that returned photos; R, F1 over "
        f"{n['set_f1']['n']} normal queries; Rej-P over {n['reject_precision']['n']} rejected queries, Rej-R over "
        f"{n['reject_recall']['n']} zero-ground-truth queries, Rej-F1 over {n['reject_f1']['n']} (A+B+C); "
        f"R@K, N@K over {n['recall@10']['n']} queries with ground truth")


def _outcomes(console: Any, result: dict[str, Any]) -> None:
    from rich.table import Table

    counts = result.get("outcomes") or {}
    kinds = list((counts.get("all") or {}).keys())
    table = Table("source", *kinds, title="engine outcomes (queries)")
    for source, row in counts.items():
        table.add_row(source, *(str(row.get(k, 0)) for k in kinds))
    console.print(table)


def _complexity(console: Any, result: dict[str, Any]) -> None:
    from rich.table import Table

    c = result["complexity"]
    table = Table("level", "types", "queries", "normal", "set F1", *(f"F1 {t}" for lv in c["levels"] for t in lv["types"]),
                  title="set F1 (%) by number of sources (Table 6)")
    width = sum(len(lv["types"]) for lv in c["levels"])
    done = 0
    for lv in c["levels"]:
        cells = ["" for _ in range(width)]
        for i, t in enumerate(lv["types"]):
            cells[done + i] = f"{_cell(lv['by_type'][t])} (n={lv['by_type'][t]['n']})"
        done += len(lv["types"])
        table.add_row(lv["name"], "+".join(lv["types"]), str(lv["n_queries"]), str(lv["set_f1"]["n"]),
                      _cell(lv["set_f1"]), *cells)
    console.print(table)
    parts = []
    for d in c["deltas"]:
        rel = "-" if d["relative_pct"] is None else f"{d['relative_pct']:+.1f}%"
        pts = "-" if d["points"] is None else f"{100 * d['points']:+.1f} pts"
        parts.append(f"Δ{d['name']} {rel} ({pts})")
    console.print("; ".join(parts) + "  (relative, as the paper's Δ; points = F1 difference)")


def _dimensions(console: Any, result: dict[str, Any]) -> None:
    from rich.table import Table

    keys = ("set_f1", "reject_f1", "recall@10", "ndcg@10")
    table = Table("dimension", "value", "queries", "zero-GT", *(f"{_short(k)} (n)" for k in keys),
                  title="metrics (%) by query dimension: fact / cognitive (Table 9)")
    for row in result.get("by_dimension", []):
        m = row["metrics"]
        table.add_row(row["group"].lower(), row["value"], str(row["n_queries"]), str(row["n_zero_ground_truth"]),
                      *(f"{_cell(m.get(k))} ({m[k]['n']})" if k in m else "-" for k in keys))
    console.print(table)
    if not result.get("by_dimension"):
        console.print("no query carries dimension tags (Location, Time, Person, Object, Concept, Genre)")


def _ablation(console: Any, result: dict[str, Any]) -> None:
    from rich.table import Table

    rows = result["ablation"]
    sources = list(dict.fromkeys(s for r in rows for s in r["by_source"]))
    table = Table("tools", *(f"S_{s}" for s in sources), "all", "Rej-F1",
                  title="tool ablation: set F1 (%) by Source type (Table 5; set composition always on)")
    for r in rows:
        table.add_row(r["tools"], *(_cell(r["by_source"].get(s)) for s in sources),
                      f"{_cell(r['all'])} (n={r['all']['n']})", _cell(r["reject_f1"]))
    console.print(table)


def _classes(console: Any, result: dict[str, Any]) -> None:
    from rich.table import Table

    from finegrain.album.bench.classes import read_class_table

    t = read_class_table(result["classes"], "the album evaluation")
    origin = {"gold": "from the queries' Class field (gold)", "derived": "read off the plans (derived)",
              "mixed": f"gold for {t.n_gold} queries, derived for {t.n_derived}"}[t.origin]
    table = Table("class", "queries", "zero-GT", "routing (n)", "P (n)", "R (n)", "F1 (n)", "rejected (n)",
                  title=f"by query class (%): classes {origin}")
    for r in t.rows:
        table.add_row(r.tag, str(r.n_queries), str(r.n_zero_ground_truth),
                      *(f"{_fmt(c.value)} ({c.n})" for c in (r.routing, r.set_precision, r.set_recall, r.set_f1,
                                                             r.reject_rate)))
    console.print(table)
    console.print("routing over queries with a Source label; P over normal queries that returned photos, R and F1 "
                  "over normal queries; rejected over all; a query counts in each of its classes")
