"""MTEB result JSON: written by ``finegrain eval --format mteb``, read by ``compare`` (aggregates only).

The layout is mteb's ``TaskResult`` file (``results/<model>/<revision>/<Task>.json``)::

    {"dataset_revision": ..., "task_name": ..., "mteb_version": ...,
     "scores": {"test": [{"hf_subset": "default", "languages": ["cmn-Hans"],
                          "main_score": 0.71, "ndcg_at_10": 0.71, "recall_at_10": ...}]},
     "evaluation_time": 1.2, "kg_co2_emissions": null}

Metric keys are spelled as MTEB writes them (``ndcg@10`` -> ``ndcg_at_10``);
``main_score`` is the first metric. finegrain metrics without a cutoff or with
parameters keep their finegrain key. Values are fractions (0..1), the mean over
queries, as in MTEB.

Reading gives a :class:`~finegrain.results.saved.SavedResults` with
aggregates only: an MTEB file holds no per-query values, so a comparison that
includes one shows aggregates without confidence intervals or significance
tests (which need per-query values).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from finegrain.atomic import write_text
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.metrics.spec import parse_metric

if TYPE_CHECKING:
    from finegrain.results.saved import SavedResults

MTEB_LAYOUT_VERSION = "2.0.0"  # the TaskResult layout written (finegrain is not mteb; see "finegrain" in the file)
_LANGUAGES = {"zh": "cmn-Hans", "en": "eng-Latn"}
_AT = re.compile(r"^([a-z][a-z0-9_]*?)_at_(\d+)$")
_NOT_METRICS = {"hf_subset", "languages", "main_score"}


def mteb_key(key: str) -> str:
    """``ndcg@10`` -> ``ndcg_at_10``; a key with parameters or without a cutoff stays as it is."""
    name, at, k = key.partition("@")
    return f"{name}_at_{k}" if at and k.isdigit() else key


def finegrain_key(key: str) -> str | None:
    """``ndcg_at_10`` -> ``ndcg@10``; None for an MTEB score finegrain has no metric for (``nauc_*``, ...)."""

    m = _AT.match(key)
    text = f"{m.group(1)}@{m.group(2)}" if m else key
    try:
        return parse_metric(text).key
    except FinegrainError:
        return None


def to_mteb_json(results: SavedResults, *, split: str = "test", hf_subset: str = "default") -> dict[str, Any]:
    """The MTEB TaskResult dict of saved results (aggregates only)."""
    ds = results.provenance.get("dataset") or {}
    scores: dict[str, Any] = {}
    for k, v in results.aggregate.items():
        scores[mteb_key(k)] = v
    first = next(iter(results.metrics), None)
    lang = ds.get("lang")
    entry = {**scores, "main_score": None if first is None else results.metrics[first].value,
             "hf_subset": hf_subset, "languages": [_LANGUAGES.get(str(lang), str(lang))] if lang else []}
    return {
        "dataset_revision": ds.get("revision") or ds.get("sha256"),
        "task_name": results.dataset_name,
        "mteb_version": MTEB_LAYOUT_VERSION,
        "scores": {split: [entry]},
        "evaluation_time": results.provenance.get("retrieve_seconds"),
        "kg_co2_emissions": None,
        "finegrain": {"retriever": results.retriever_name, "main_metric": first,
                      "version": results.provenance.get("finegrain_version")},
    }


def write_mteb_json(results: SavedResults, path: str | Path) -> Path:
    """Write :func:`to_mteb_json` to ``path``, whole or not at all (:mod:`finegrain.atomic`)."""
    return write_text(Path(path), json.dumps(to_mteb_json(results), ensure_ascii=False, indent=2))


def mteb_body(data: Mapping[str, Any], *, source: str | Path, split: str | None = None,
              hf_subset: str | None = None) -> dict[str, Any]:
    """The aggregate-only results body of an MTEB result JSON (one split and subset: ``test`` /
    ``default`` when there are several, else an error naming them); read by
    :func:`finegrain.results.saved.from_mteb_json`."""
    where = Path(source)
    scores = data.get("scores")
    if not isinstance(scores, Mapping) or not scores or not all(isinstance(v, list) for v in scores.values()):
        raise DataFormatError(where, None, "MTEB 'scores' as {split: [{hf_subset, main_score, ...}]}",
                              json.dumps(scores)[:80] if scores is not None else "none")
    splits = list(scores)
    chosen = split or (splits[0] if len(splits) == 1 else "test" if "test" in scores else None)
    if chosen not in scores:
        raise DataFormatError(where, None, f"one split (or 'test'); pass split= one of {', '.join(splits)}",
                              ", ".join(splits))
    entries = [e for e in scores[chosen] if isinstance(e, Mapping)]
    subsets = [str(e.get("hf_subset", "default")) for e in entries]
    want = hf_subset or (subsets[0] if len(subsets) == 1 else "default" if "default" in subsets else None)
    entry = next((e for e, s in zip(entries, subsets) if s == want), None)
    if entry is None:
        raise DataFormatError(where, None, f"one hf_subset (or 'default') in split {chosen!r}",
                              ", ".join(subsets) or "none")
    aggregate: dict[str, Any] = {}
    for k, v in entry.items():
        if k in _NOT_METRICS or isinstance(v, bool) or not isinstance(v, int | float) or not _finite(v):
            continue
        key = finegrain_key(k)
        if key is not None and key not in aggregate:
            aggregate[key] = float(v)
    if not aggregate:
        raise DataFormatError(where, None, f"retrieval scores such as ndcg_at_10 in {chosen}/{want}",
                              ", ".join(map(str, entry)) or "none")
    found = data.get("finegrain")
    extra: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    retriever = extra.get("retriever") or _model_from_path(where)
    body = {
        "aggregate": aggregate,
        "aggregation": dict.fromkeys(aggregate, "mean"),  # MTEB reports means over queries
        "provenance": {
            "dataset": {"name": data.get("task_name"), "revision": data.get("dataset_revision"),
                        "split": chosen, "hf_subset": want, "languages": _languages(entry.get("languages"))},
            "retriever": {"name": retriever},
            "mteb": {"mteb_version": data.get("mteb_version"), "evaluation_time": data.get("evaluation_time"),
                     "main_score": entry.get("main_score")},
        },
    }
    return body


def _model_from_path(path: Path) -> str | None:
    """MTEB keeps ``results/<model>/<revision>/<Task>.json``: the model folder, past a revision folder."""
    parent = path.resolve().parent
    if re.fullmatch(r"[0-9a-f]{40}|no_revision_available|external", parent.name) and parent.parent.name:
        return parent.parent.name.replace("__", "/")
    return parent.name or None


def _finite(v: int | float) -> bool:
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def _languages(value: Any) -> list[str]:
    return [str(x) for x in value] if isinstance(value, list) else []
