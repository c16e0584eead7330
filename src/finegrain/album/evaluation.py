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
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from finegrain.album.catalog.sqlite import SqliteCatalog
from finegrain.album.engine import SearchContext, search
from finegrain.album.photobench import import_photobench
from finegrain.errors import FinegrainError
from finegrain.evaluate import evaluate
from finegrain.io.photobench import photobench_lang, read_album
from finegrain.types import Run

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
) -> dict[str, Any]:
    """Evaluate the engine on the album at ``album_dir`` in ``lang`` (``en`` or ``cn``; see the module docstring).

    ``catalog``: an SQLite file to reuse (imported when it has no photo) instead of a temporary one.
    """
    lang = photobench_lang(lang)
    album = read_album(album_dir)
    queries_map, qrels = album.queries_and_qrels(lang)
    queries = list(queries_map.values())
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
    gt = {q.id: sorted(q.ground_truth or ()) for q in album.judged_queries}
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
