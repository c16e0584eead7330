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
``by_source``, ``per_query`` (query, source, plan, predicted set, reason,
per-metric values), ``denominators`` and the run's settings.

``query_files`` adds the judged queries of query files
(:mod:`finegrain.album.query_file`, e.g. the zero-answer queries of
:mod:`finegrain.album.zero_answer`) in ``lang`` to the album's own; their
``type`` is their row of the by-source tables. ``album_queries=False`` scores the
files' queries alone.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from finegrain.album.catalog.sqlite import SqliteCatalog
from finegrain.album.engine import SearchContext, search
from finegrain.album.photobench import import_photobench
from finegrain.album.query_file import read_query_file
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.evaluate import evaluate
from finegrain.io.photobench import Album, photobench_lang, read_album
from finegrain.types import Qrels, Query, Run

CUTOFFS = (1, 5, 10, 20)
METRICS = (
    *(f"recall@{k}" for k in CUTOFFS),
    *(f"ndcg@{k}" for k in CUTOFFS),
    "set_precision", "set_recall", "set_f1",
    "reject_precision", "reject_recall", "reject_f1",
)


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
) -> dict[str, Any]:
    """Evaluate the engine on the album at ``album_dir`` in ``lang`` (``en`` or ``cn``; see the module docstring).

    ``catalog``: an SQLite file to reuse (imported when it has no photo) instead of a temporary one.
    """
    lang = photobench_lang(lang)
    album = read_album(album_dir)
    queries, gt, files = _judged_queries(album, lang, query_files, album_queries)
    qrels = Qrels.from_dict({qid: dict.fromkeys(ids, 1) for qid, ids in gt.items()})
    with tempfile.TemporaryDirectory(prefix="finegrain-album-") as tmp:
        path = Path(catalog) if catalog is not None else Path(tmp) / f"{album.name}-{lang}.sqlite"
        store = SqliteCatalog(path)
        try:
            if store.count_photos() == 0:
                import_photobench(album_dir, store, lang=lang)
            source = store.get_meta("source") or {}
            if source.get("lang") not in (None, lang):
                raise FinegrainError(
                    f"catalog {path} holds album {source.get('album')!r} imported in {source.get('lang')!r}, not {lang!r}",
                    "give a catalog imported in the same language (people's names differ), or none",
                )
            ctx = SearchContext(store, encoder=encoder)
            plan_lang = "zh" if lang == "cn" else "en"
            results = {q.id: search(store, q.text, lang=plan_lang, context=ctx, unverified_visual=unverified_visual)
                       for q in queries}
            ranked = {qid: r.ranked for qid, r in results.items()}  # built on demand, from the open catalog
        finally:
            store.close()
    run = Run.from_dict({qid: dict(ranked[qid]) for qid in results})
    types = {q.id: q.type for q in queries}
    ev = evaluate(qrels, run, list(METRICS), queries=[q.id for q in queries], query_types=types)
    body = ev.to_json_dict()
    per_metric = body["per_query"]
    per_query = []
    for q in queries:
        r = results[q.id]
        per_query.append({
            "qid": q.id,
            "query": q.text,
            "source": q.type,
            "n_ground_truth": len(gt.get(q.id, ())),
            "abstained": r.abstained,
            "reason": r.reason,
            "predicted": sorted(r.photo_ids),
            "ranked": [[pid, round(s, 6)] for pid, s in ranked[q.id][: max(CUTOFFS)]],
            "plan": r.plan.to_dict(),
            "metrics": {k: v.get(q.id) for k, v in per_metric.items()},
            "timings_ms": {k: round(v, 3) for k, v in r.timings.items()},
        })
    out = {
        "album": album.name,
        "lang": lang,
        "n_queries": len(queries),
        "n_zero_ground_truth": sum(1 for q in queries if not gt.get(q.id)),
        "n_album_queries": len(queries) - sum(f["n_queries"] for f in files),
        "query_files": files,
        "settings": {"planner": "rules", "encoder": getattr(encoder, "model_id", None),
                     "unverified_visual": unverified_visual, "metrics": list(METRICS)},
        "aggregate": body["aggregate"],
        "by_source": body.get("by_type", {}),
        "per_query": per_query,
        "denominators": body["denominators"],
    }
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        (Path(out_dir) / "results.json").write_text(json.dumps(out, ensure_ascii=False, indent=2), encoding="utf-8")
    return out


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
