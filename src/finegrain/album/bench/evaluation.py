"""Score the album engine on a PhotoBench album (the queries with public ground truth).

``evaluate_album(album_dir, lang)`` imports the album into a catalog (a
temporary one unless ``catalog`` names a file to reuse or create), runs
:func:`finegrain.album.engine.search` on every judged query, and scores the
answers with the evaluation core (:func:`finegrain.evaluate.evaluate`):

- ranking metrics (Recall@K, NDCG@K for K = 1, 5, 10, 20) over the ranked list:
  the predicted set ordered by visual score, or by capture time without one;
- set metrics (set precision / recall / F1) over the whole predicted set;
- rejection metrics (Reject-Precision / Recall / F1): an empty prediction is a
  rejection, a zero-ground-truth query should be rejected.

All are broken down by the queries' ``Source`` label. The result (and
``OUT/results.json`` when ``out_dir`` is given) holds ``aggregate``,
``by_source``, ``per_query`` (query, source, dimensions, plan, planner and
fallback reason, predicted set, typed outcome and its reason, per-metric
values), ``denominators`` and the run's settings, and PhotoBench's analyses
(:mod:`finegrain.album.bench.analysis`): ``source_rows`` (every metric per Source type
and over all, set metrics over the normal queries as the paper's Table 3), ``outcomes`` (queries per engine outcome and
Source type), ``by_dimension`` (Table 9's dimensions × fact / cognitive),
``complexity`` (Table 6), ``ablation`` (Table 5, when several tool
configurations are scored) and ``planners`` (which planner planned, why the LLM
planner fell back).

``query_files`` adds the judged queries of query files
(:mod:`finegrain.album.bench.query_file`, e.g. the zero-answer queries of
:mod:`finegrain.album.bench.zero_answer`) in ``lang`` to the album's own; their
``type`` is their row of the by-source tables. ``album_queries=False`` scores the
files' queries alone.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from finegrain.album.bench.analysis import ablation_row, complexity_table, dimension_rows, outcome_counts, source_rows
from finegrain.album.bench.classes import class_table, derive_classes
from finegrain.album.bench.query_file import read_query_file
from finegrain.album.engine.catalog import catalog_target, describe, open_catalog
from finegrain.album.engine.photobench import import_photobench
from finegrain.album.engine.plan import AlbumVocabulary, LLMConfig, Plan, plan_query_llm
from finegrain.album.engine.plan.holidays import DEFAULT_HOLIDAY_READING, check_holiday_reading
from finegrain.album.engine.search import Planner, SearchContext, SearchResult, search
from finegrain.album.engine.tools import parse_tools, tools_label
from finegrain.atomic import write_text
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.evaluate import evaluate
from finegrain.evaluate.result import Evaluation
from finegrain.io.photobench import Album, photobench_lang, read_album
from finegrain.types import Qrels, Query, Run

CUTOFFS = (1, 5, 10, 20)
METRICS = (
    *(f"recall@{k}" for k in CUTOFFS),
    *(f"ndcg@{k}" for k in CUTOFFS),
    "set_precision", "set_recall", "set_f1",
    "reject_precision", "reject_recall", "reject_f1",
)
#: The tool configurations of the paper's Table 5 (``--ablation``); set composition is always on.
TABLE5_TOOLS = ("V", "V,M", "V,F", "V,M,F")


def evaluate_album(
    album_dir: str | Path,
    lang: str,
    out_dir: str | Path | None = None,
    *,
    catalog: str | Path | None = None,
    encoder: Any = None,
    unverified_visual: str = "abstain",
    query_files: Sequence[str | Path] = (),
    album_queries: bool = True,
    tools: str | Iterable[str] | None = None,
    ablation: Sequence[str | Iterable[str]] = (),
    llm: LLMConfig | None = None,
    holiday: str = DEFAULT_HOLIDAY_READING,
) -> dict[str, Any]:
    """Evaluate the engine on the album at ``album_dir`` in ``lang`` (``en`` or ``cn``; see the module docstring).

    ``catalog``: a catalog (SQLite file or ``postgresql://`` URL) to reuse (imported when it has no photo) instead of a temporary one.
    ``tools``: the tools switched on (``"M,F"``; default all); ``ablation``: more tool configurations,
    each scored too, set F1 by Source type in ``ablation`` (Table 5). ``llm``: plan with the LLM
    planner (falling back to the rules per query; ``planners`` counts which planned and why not).
    ``holiday``: how the rule planner reads a statutory holiday with a year, ``"span"`` (its official
    days off, the default) or ``"day"`` (its own day).
    """
    check_holiday_reading(holiday)
    lang = photobench_lang(lang)
    album = read_album(album_dir)
    queries, gt, files = _judged_queries(album, lang, query_files, album_queries)
    qrels = Qrels.from_dict({qid: dict.fromkeys(ids, 1) for qid, ids in gt.items()})
    main = tools_label(parse_tools(tools))
    others = list(dict.fromkeys(tools_label(parse_tools(c)) for c in ablation))
    configs = others if main in others else [main, *others]
    planner = None if llm is None else _cached_llm_planner(llm)
    with tempfile.TemporaryDirectory(prefix="finegrain-album-") as tmp:
        path = catalog_target(catalog) if catalog is not None else Path(tmp) / f"{album.name}-{lang}.sqlite"
        store = open_catalog(path)
        try:
            if store.count_photos() == 0:
                import_photobench(album_dir, store, lang=lang)
            source = store.get_meta("source") or {}
            if source.get("lang") not in (None, lang):
                raise FinegrainError(
                    f"catalog {describe(path)} holds album {source.get('album')!r} imported in {source.get('lang')!r}, not {lang!r}",
                    "give a catalog imported in the same language (people's names differ), or none",
                )
            ctx = SearchContext(store, encoder=encoder)
            plan_lang = "zh" if lang == "cn" else "en"
            runs: dict[str, dict[str, SearchResult]] = {}
            ranks: dict[str, dict[str, tuple[tuple[str, float], ...]]] = {}
            for config in configs:
                runs[config] = {q.id: search(store, q.text, lang=plan_lang, context=ctx, planner=planner,
                                             unverified_visual=unverified_visual, tools=config, holiday=holiday)
                                for q in queries}
                # built on demand, from the open catalog
                ranks[config] = {qid: r.ranked for qid, r in runs[config].items()}
        finally:
            store.close()
    types = {q.id: q.type for q in queries}
    evs = {c: _score(qrels, ranks[c], queries, types) for c in configs}
    results, ranked, ev = runs[main], ranks[main], evs[main]
    body = ev.to_json_dict()
    per_metric = body["per_query"]
    zero = frozenset(q.id for q in queries if not gt.get(q.id))
    dims = {q.id: dict(q.meta["dimensions"]) for q in queries if isinstance(q.meta.get("dimensions"), Mapping)}
    gold_classes = {q.id: tuple(q.meta["classes"]) for q in queries if q.meta.get("classes") is not None}
    classes = {q.id: gold_classes[q.id] if q.id in gold_classes else derive_classes(results[q.id].plan, zero=q.id in zero)
               for q in queries}
    per_query = []
    for q in queries:
        r = results[q.id]
        per_query.append({
            "qid": q.id,
            "query": q.text,
            "source": q.type,
            "n_sources": len(q.type or ""),
            "dimensions": dims.get(q.id),
            "classes": list(classes[q.id]),
            "class_origin": "gold" if q.id in gold_classes else "derived",
            "n_ground_truth": len(gt.get(q.id, ())),
            "abstained": r.abstained,
            "reason": r.reason,
            "outcome": r.outcome.to_dict() if r.outcome is not None else None,
            "planner": r.plan.planner,
            "fallback_reason": r.plan.fallback_reason,
            "predicted": sorted(r.photo_ids),
            "ranked": [[pid, round(s, 6)] for pid, s in ranked[q.id][: max(CUTOFFS)]],
            "plan": r.plan.to_dict(),
            "metrics": {k: v.get(q.id) for k, v in per_metric.items()},
            "timings_ms": {k: round(v, 3) for k, v in r.timings.items()},
        })
    kinds = {qid: (r.outcome.kind.value if r.outcome is not None else "unknown") for qid, r in results.items()}
    sources = {q.id: q.type for q in queries if q.type}
    out = {
        "album": album.name,
        "lang": lang,
        "n_queries": len(queries),
        "n_zero_ground_truth": len(zero),
        "n_album_queries": len(queries) - sum(f["n_queries"] for f in files),
        "query_files": files,
        "settings": {"planner": "rules" if llm is None else "llm", "encoder": getattr(encoder, "model_id", None),
                     "unverified_visual": unverified_visual, "metrics": list(METRICS), "tools": main,
                     "holiday": holiday,
                     "llm": None if llm is None else {"url": llm.base_url, "model": llm.model, "timeout": llm.timeout}},
        "aggregate": body["aggregate"],
        "by_source": body.get("by_type", {}),
        "source_rows": [row.to_dict() for row in source_rows(ev, sources, zero)],
        "outcomes": outcome_counts(kinds, sources),
        "planners": _planner_counts(results.values()),
        "by_dimension": [row.to_dict() for row in dimension_rows(ev, dims, zero)],
        "complexity": complexity_table(ev, sources, zero).to_dict(),
        "classes": class_table(ev, classes, gold_classes, zero, types,
                               {qid: r.plan.source for qid, r in results.items()},
                               [qid for qid, r in results.items() if not r.photo_ids]).to_json(),
        "ablation": [ablation_row(c, evs[c], sources, zero).to_dict() for c in configs] if len(configs) > 1 else [],
        "per_query": per_query,
        "denominators": body["denominators"],
    }
    if out_dir is not None:
        write_text(Path(out_dir) / "results.json", json.dumps(out, ensure_ascii=False, indent=2))
    return out


def _score(qrels: Qrels, ranked: Mapping[str, Sequence[tuple[str, float]]], queries: Sequence[Query],
           types: Mapping[str, str | None]) -> Evaluation:
    run = Run.from_dict({qid: dict(r) for qid, r in ranked.items()})
    return evaluate(qrels, run, list(METRICS), queries=[q.id for q in queries], query_types=types,
                    warn=False)


def _cached_llm_planner(config: LLMConfig) -> Planner:
    """The LLM planner (rules on failure), asked once per (query, language) across tool configurations."""
    cache: dict[tuple[str, str | None], Plan] = {}

    def plan(text: str, vocab: AlbumVocabulary, lang: str | None) -> Plan:
        key = (text, lang)
        if key not in cache:
            cache[key] = plan_query_llm(text, vocab, config, lang=lang)
        return cache[key]

    return plan


def _planner_counts(results: Iterable[SearchResult]) -> dict[str, Any]:
    """Which planner planned each query, and the fallback reasons (most frequent first)."""
    planners: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for r in results:
        planners[r.plan.planner] = planners.get(r.plan.planner, 0) + 1
        if r.plan.fallback_reason:
            reasons[r.plan.fallback_reason] = reasons.get(r.plan.fallback_reason, 0) + 1
    return {"planned_by": dict(sorted(planners.items())), "n_fallbacks": sum(reasons.values()),
            "fallback_reasons": dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))}


def _judged_queries(
    album: Album, lang: str, query_files: Sequence[str | Path], album_queries: bool
) -> tuple[list[Query], dict[str, list[str]], list[dict[str, Any]]]:
    """The queries to score in ``lang`` (the album's judged ones unless ``album_queries`` is
    False, then those of each query file), their ground truth and a note per file."""
    queries: list[Query] = []
    gt: dict[str, list[str]] = {}
    if album_queries:
        queries = list(album.queries_and_qrels(lang)[0].values())
        gt = {q.id: sorted(q.ground_truth or ()) for q in album.judged_queries}
    taken = {q.id: f"album {album.name}" for q in album.queries}
    files = []
    for path in query_files:
        qf = read_query_file(path)
        mine = qf.in_lang(lang)
        if not mine:
            have = sorted({q.lang for q in qf.queries})
            want = "zh" if lang == "cn" else lang
            raise FinegrainError(f"query file {qf.path!r} has no query in {want!r} (only {', '.join(have)})",
                                 f"evaluate with --lang {have[0]}, or give the file queries in {want!r}")
        for q in mine:
            if q.id in taken:
                raise DataFormatError(qf.path, q.line, f"a query id not used by {taken[q.id]}", repr(q.id),
                                      "give the file's queries ids of their own")
            unknown = [p for p in q.ground_truth if p not in album.photos]
            if unknown:
                raise DataFormatError(qf.path, q.line, f"ground truth of photos of album {album.name}",
                                      f"{unknown[0]!r} in query {q.id!r}", "check the file was made for this album")
            taken[q.id] = qf.path
            queries.append(Query(q.id, q.text, q.type, MappingProxyType({"file": qf.path, **q.meta})))
            gt[q.id] = sorted(set(q.ground_truth))
        files.append({"path": qf.path, "n_queries": len(mine), "n_zero_ground_truth": sum(not q.ground_truth for q in mine),
                      "provenance": qf.extra.get("provenance")})
    if not queries:
        raise FinegrainError("no query to evaluate", "keep the album's own queries or pass a query file")
    return queries, gt, files
