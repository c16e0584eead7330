"""MTEB result JSON: written by ``finegrain eval --format mteb``, read by ``compare`` (aggregates only).

The file is mteb's ``TaskResult`` (``mteb.TaskResult.from_disk`` loads it)::

    {"dataset_revision": "e055902", "task_name": "CapRetrievalEn", "mteb_version": "2.26.24",
     "scores": {"test": [{"hf_subset": "default", "languages": ["eng-Latn"], "main_score": 0.70,
                          "ndcg_at_10": 0.70, "recall_at_10": ..., "finegrain_dataset": "capretrieval/en"}]},
     "evaluation_time": 1.2, "kg_co2_emissions": null, "finegrain": {...}}

- Metric keys are spelled as MTEB writes them (``ndcg@10`` -> ``ndcg_at_10``); finegrain metrics
  without a cutoff or with parameters keep their finegrain key. Values are fractions (0..1), the
  mean over queries, as in MTEB.
- ``main_score`` follows MTEB's retrieval convention, ``ndcg@10`` (:data:`MAIN_METRIC`), whatever
  the order of the metrics; a result without it takes its first metric, and the ``finegrain``
  block says which (:func:`main_metric`).
- ``task_name`` is an MTEB-style name (letters and digits: ``CapRetrievalEn``): the dataset's
  registered MTEB name, else its finegrain name in CamelCase (:func:`task_name`). The finegrain
  name stays in the score entry as ``finegrain_dataset`` (mteb keeps every key of a score entry;
  it drops unknown top-level keys such as the ``finegrain`` block).
- ``dataset_revision`` is the dataset's recorded revision (``provenance.dataset.revision``: the
  upstream commit of a registered dataset), else :data:`NO_REVISION`, MTEB's word for none.
- ``mteb_version`` is the installed mteb's version, else :data:`MTEB_LAYOUT_VERSION`.

:func:`write_mteb_layout` writes the file where mteb's result cache keeps it,
``results/<model>/<revision>/<Task>.json`` (:func:`layout_path`), so
``mteb.ResultCache(OUT).load_results(require_model_meta=False)`` reads it: the model is
``finegrain/<retriever>`` (an imported run keeps its own name) and the revision
:data:`NO_REVISION`. No ``model_meta.json`` is written: its fields (parameters, model type, ...)
describe one model, and a finegrain retriever is a pipeline; mteb then takes the model and the
revision from the folder names.

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
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from finegrain.atomic import write_text
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.metrics.spec import parse_metric

if TYPE_CHECKING:
    from finegrain.results.saved import SavedResults

MTEB_LAYOUT_VERSION = "2.0.0"
"""``mteb_version`` when mteb is not installed: the version of mteb's TaskResult layout this writer follows."""
MAIN_METRIC = "ndcg@10"
"""The main score of MTEB's retrieval tasks."""
NO_REVISION = "no_revision_available"
"""MTEB's revision for a model or dataset whose revision is not known."""
DATASET_FIELD = "finegrain_dataset"
"""The score-entry key holding the finegrain dataset name (mteb keeps every key of a score entry)."""
_LANGUAGES = {"zh": "cmn-Hans", "en": "eng-Latn"}
_UNDETERMINED = "und"  # ISO 639's "undetermined": mteb needs one language per score entry to average it
_AT = re.compile(r"^([a-z][a-z0-9_]*?)_at_(\d+)$")
_NOT_METRICS = {"hf_subset", "languages", "main_score", "mteb_version", DATASET_FIELD}


def mteb_version() -> str:
    """The installed mteb's version, else :data:`MTEB_LAYOUT_VERSION` (mteb itself is not imported)."""
    try:
        return version("mteb")
    except PackageNotFoundError:
        return MTEB_LAYOUT_VERSION


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


def main_metric(results: SavedResults) -> tuple[str | None, str | None]:
    """The metric written as ``main_score`` and, when it is not :data:`MAIN_METRIC`, why (None otherwise).

    MTEB's retrieval tasks report ``ndcg@10``; a result without it takes its first metric."""
    if MAIN_METRIC in results.metrics:
        return MAIN_METRIC, None
    first = next(iter(results.metrics), None)
    if first is None:
        return None, "no metric was computed"
    return first, f"main_score is {first}: {MAIN_METRIC}, MTEB's main retrieval score, was not computed (add -m {MAIN_METRIC})"


def task_name(results: SavedResults) -> str:
    """The MTEB task name of ``results``' dataset: its registered MTEB name (``provenance.dataset.mteb_task``),
    else its finegrain name in CamelCase, letters and digits only (``embedded/captions-en`` ->
    ``EmbeddedCaptionsEn``; a folder path gives its last folder: ``/data/scifact`` -> ``Scifact``)."""
    ds = _dataset(results)
    registered = ds.get("mteb_task")
    if isinstance(registered, str) and registered:
        return registered
    name = str(ds.get("name") or "")
    if name.startswith(("/", ".", "~")) or "\\" in name:
        name = Path(name).name
    words = [w for w in re.split(r"[^0-9A-Za-z]+", name) if w]
    return "".join(w[:1].upper() + w[1:] for w in words) or "FinegrainDataset"


def dataset_revision(results: SavedResults) -> str:
    """The dataset's recorded revision (``provenance.dataset.revision``), else :data:`NO_REVISION`."""
    revision = _dataset(results).get("revision")
    return str(revision) if revision not in (None, "") else NO_REVISION


def model_name(results: SavedResults) -> str:
    """The MTEB model name: ``finegrain/<retriever>``, or an imported run's own name (``provenance.run``)."""
    name = results.retriever_name or "unnamed"
    return name if isinstance(results.provenance.get("run"), Mapping) else f"finegrain/{name}"


def layout_path(results: SavedResults, root: str | Path) -> Path:
    """``root/results/<model>/<revision>/<Task>.json``, where mteb's result cache keeps a result
    (the model folder spelled as mteb spells it: ``/`` -> ``__``, space -> ``_``)."""
    folder = model_name(results).replace("/", "__").replace(" ", "_")
    return Path(root) / "results" / folder / NO_REVISION / f"{task_name(results)}.json"


def to_mteb_json(results: SavedResults, *, split: str = "test", hf_subset: str = "default") -> dict[str, Any]:
    """The MTEB TaskResult dict of saved results (aggregates only; see the module docstring)."""
    ds = _dataset(results)
    scores: dict[str, Any] = {mteb_key(k): v for k, v in results.aggregate.items()}
    main, note = main_metric(results)
    lang = ds.get("lang")
    entry = {**scores, "main_score": None if main is None else results.metrics[main].value,
             "hf_subset": hf_subset, "languages": [_LANGUAGES.get(str(lang), str(lang)) if lang else _UNDETERMINED],
             DATASET_FIELD: results.dataset_name}
    return {
        "dataset_revision": dataset_revision(results),
        "task_name": task_name(results),
        "mteb_version": mteb_version(),
        "scores": {split: [entry]},
        "evaluation_time": results.provenance.get("retrieve_seconds"),
        "kg_co2_emissions": None,
        "finegrain": {"dataset": results.dataset_name, "retriever": results.retriever_name, "main_metric": main,
                      **({"main_metric_note": note} if note else {}),
                      "version": results.provenance.get("finegrain_version")},
    }


def write_mteb_json(results: SavedResults, path: str | Path) -> Path:
    """Write :func:`to_mteb_json` to ``path``, whole or not at all (:mod:`finegrain.atomic`)."""
    return write_text(Path(path), json.dumps(to_mteb_json(results), ensure_ascii=False, indent=2))


def write_mteb_layout(results: SavedResults, root: str | Path) -> Path:
    """Write the MTEB file at :func:`layout_path` under ``root`` (mteb's ``results/<model>/<revision>/<Task>.json``)."""
    return write_mteb_json(results, layout_path(results, root))


def _dataset(results: SavedResults) -> Mapping[str, Any]:
    ds = results.provenance.get("dataset")
    return ds if isinstance(ds, Mapping) else {}


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
    name = entry.get(DATASET_FIELD) or extra.get("dataset") or data.get("task_name")
    body = {
        "aggregate": aggregate,
        "aggregation": dict.fromkeys(aggregate, "mean"),  # MTEB reports means over queries
        "provenance": {
            "dataset": {"name": name, "mteb_task": data.get("task_name"), "revision": data.get("dataset_revision"),
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
