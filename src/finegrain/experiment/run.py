"""Retrieve then evaluate: the job behind ``finegrain eval``.

:func:`run_experiment` loads a dataset, runs a retriever (or reads a run made elsewhere:
:mod:`finegrain.experiment.imported`), scores the run and returns everything a results folder
holds; :func:`score_run` does the scoring half for a run already in hand (``finegrain fuse``).
Either way the folder is the same: per-query values, per-type tables, error tags, the grades
and passages of the top :data:`ERRORS_K` (the report's drill-down) and provenance.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from finegrain.datasets import Dataset, load_dataset
from finegrain.diagnose.errors import analyse_errors
from finegrain.diagnose.taxonomy import analyse_taxonomy
from finegrain.errors import FinegrainError
from finegrain.evaluate.evaluate import evaluate as evaluate_locally
from finegrain.evaluate.groups import parse_split
from finegrain.evaluate.result import Evaluation
from finegrain.experiment.executors.engine import LOCAL
from finegrain.experiment.imported import check_run, import_run
from finegrain.experiment.tuning.cv import nothing_to_tune, parse_cv, part_tunables, tunables
from finegrain.experiment.tuning.grid import cross_validate
from finegrain.experiment.tuning.threshold import parse_sweep, sweep_thresholds
from finegrain.machine import run_environment
from finegrain.metrics.spec import MetricSpec, parse_metric
from finegrain.results.files import run_file_name, save_folder
from finegrain.results.passages import PASSAGE_CHARS, shorten
from finegrain.results.saved import SavedResults
from finegrain.retrieve.registry import get_retriever
from finegrain.settings import Settings
from finegrain.train.finetune import transductive_datasets
from finegrain.types import Qrels, Run

if TYPE_CHECKING:
    from finegrain.experiment.executors.engine import Engine


@dataclass(frozen=True)
class Experiment:
    """What ``finegrain eval`` does: ``retriever`` on ``dataset``, or ``run`` (a run made elsewhere: a run
    file, a results folder or a :class:`~finegrain.types.Run`) scored on it in place of a retriever."""

    dataset: str
    retriever: str | None
    metrics: tuple[str, ...]
    top_k: int | None = None
    retriever_options: Mapping[str, Any] = field(default_factory=dict)
    split_by: str | None = None  # "overlap=FILE": query groups Overlap / Others instead of the query types
    sweep: str | None = None  # "threshold=START:STOP:STEP[,norm=..,folds=..]": finegrain.experiment.tuning.threshold
    cv: str | None = None  # "K[,metric=M][,seed=S][,parts=tuned]": settings chosen by k-fold CV, experiment.tuning.cv
    run: str | Path | Run | None = None  # scored in place of a retriever: finegrain.experiment.imported
    split: str | None = None  # the qrels split of a BEIR dataset (qrels/<split>.tsv)


@dataclass(frozen=True)
class Outcome:
    """What one experiment produced: the run, its evaluation and the saved form of both (``results.json``)."""

    run: Run
    evaluation: Evaluation
    saved: SavedResults

    @cached_property
    def results(self) -> dict[str, Any]:
        """The JSON content of ``results.json`` (:meth:`SavedResults.to_json`)."""
        return self.saved.to_json()

    def save(self, folder: str | Path) -> tuple[Path, Path]:
        """Write ``folder/results.json`` and the run beside it (``run.trec``, or ``run.jsonl`` for ids a TREC
        line cannot hold); their paths."""
        return save_folder(folder, self.saved, self.run)


def run_experiment(exp: Experiment, settings: Settings, *, show_progress: bool = True,
                   engine: Engine | None = None) -> Outcome:
    """Load, retrieve (or read ``exp.run``), evaluate. ``engine`` (a :class:`finegrain.experiment.executors.Engine`;
    None: local) says where retrieval and the per-query metrics run: this process, or a Ray cluster (same saved
    numbers)."""

    specs = [parse_metric(m) for m in exp.metrics]  # fail on a bad name before any work
    split = parse_split(exp.split_by) if exp.split_by is not None else None  # and on a bad split file
    sweep = _parse_sweep(exp.sweep)  # and on a bad --sweep
    _check_source(exp)  # and on a retriever and a run, or neither
    retriever = get_retriever(exp.retriever, **dict(exp.retriever_options)) if exp.retriever is not None else None
    cv = _parse_cv(exp, engine)  # and on a bad --cv or a retriever with nothing to tune
    imported = import_run(exp.run) if exp.run is not None else None  # and on a missing or broken run file
    ds = load_dataset(exp.dataset, settings, split=exp.split)
    if split is not None and not split.members & set(ds.queries):
        raise FinegrainError(
            f"none of the {len(split.members)} query ids in {split.path!r} is a query of {ds.name}",
            f"list this dataset's query ids: finegrain overlap {exp.dataset} TRAIN -o FILE",
        )
    run_notes = check_run(imported.run, ds) if imported is not None else []

    engine = LOCAL if engine is None else engine
    with engine.open(show_progress=show_progress) as ex:  # local, or Ray up for this block
        started = time.perf_counter()
        types = ds.queries.types() if split is None else split.groups(ds.queries)
        cv_result = None
        if imported is not None:
            run = imported.run if exp.top_k is None else imported.run.cut(exp.top_k)
        elif cv is None:
            run = ex.retrieve(retriever, ds.corpus, ds.queries, lang=ds.lang, top_k=exp.top_k,
                              show_progress=show_progress)
        else:  # every grid point, then each fold's choice from the other folds: finegrain.experiment.tuning.cv

            assert exp.retriever is not None  # _parse_cv: only a retriever has a cv spec
            cv_result = cross_validate(exp.retriever, exp.retriever_options, ds.corpus, ds.queries, ds.qrels,
                                       lang=ds.lang, metrics=[s.key for s in specs], spec=cv, top_k=exp.top_k,
                                       strata=types, show_progress=show_progress)
            run = cv_result.run  # the out-of-fold run: each query at the setting chosen without it
        run.require_finite(f"retriever {exp.retriever!r}")  # before it is scored or saved
        retrieve_s = time.perf_counter() - started

        evaluation = ex.evaluate(ds.qrels, run, specs, queries=list(ds.queries), query_types=types)
        curves = metric_curves(ds.qrels, run, list(ds.queries), evaluate=ex.evaluate)
        engine_info = ex.describe() if engine.kind != "local" else None
        engine_notes = list(ex.notes)
    if imported is not None:
        source: dict[str, Any] = {"retriever": {"name": run.name, "from": "run"}, "run": dict(imported.provenance)}
    else:
        assert retriever is not None and exp.retriever is not None  # _check_source: one of the two
        source = {"retriever": {"name": exp.retriever, **retriever.config()}}
    provenance: dict[str, Any] = {
        **source,
        "top_k": exp.top_k,
        **({"query_groups": split.describe(ds.queries)} if split is not None else {}),
        **({"retrieve_seconds": round(retrieve_s, 3)} if imported is None else {}),
        **({"engine": engine_info} if engine_info is not None else {}),  # --engine ray: experiment.executors
    }
    sections: dict[str, Any] = {}
    if cv_result is not None:  # the CV means, CIs and the a-priori default: finegrain.experiment.tuning.cv
        sections["cv"] = cv_result.to_json_dict()
        provenance["cv"] = cv_result.provenance()
    if sweep is not None:  # threshold retrieval with a cross-validated threshold: experiment.tuning.threshold
        sections["threshold_sweep"] = sweep_thresholds(ds.qrels, run, [s.key for s in specs], sweep,
                                                       queries=list(ds.queries), strata=types).to_json_dict()
    notes = run_notes + _split_warnings(split, ds) + engine_notes
    return _outcome(ds, run, specs, evaluation, types=types, curves=curves, provenance=provenance,
                    sections=sections, notes=notes)


def score_run(source: Dataset | Qrels, run: Run, metrics: Sequence[str], *, provenance: Mapping[str, Any],
              evaluate: Callable[..., Evaluation] | None = None) -> Outcome:
    """The results folder of a run already in hand (a fused run), scored as :func:`run_experiment` scores a
    retrieved one; ``provenance`` says where the run came from (``retriever``, ``run``, ...).

    On a dataset the folder has everything an eval's has; on bare qrels (a qrels file) it has the per-query
    values, denominators, curves and the grades of the top :data:`ERRORS_K`, and no query types, error
    tags or passages, which need the queries and the corpus."""
    specs = [parse_metric(m) for m in metrics]
    # the outcome carries the denominators (and the CLI prints them): no excluded-queries warning on top
    evaluate = partial(evaluate_locally, warn=False) if evaluate is None else evaluate
    if isinstance(source, Dataset):
        notes = check_run(run, source)
        types = source.queries.types()
        evaluation = evaluate(source.qrels, run, specs, queries=list(source.queries), query_types=types)
        curves = metric_curves(source.qrels, run, list(source.queries), evaluate=evaluate)
        return _outcome(source, run, specs, evaluation, types=types, curves=curves, provenance=provenance,
                        sections={}, notes=notes)
    queries = list(source)
    evaluation = evaluate(source, run, specs, queries=queries)
    prov = {**provenance, "metrics": [s.key for s in specs], **run_environment(),
            "warnings": [] if run.n_entries else ["the run is empty: every ranking metric is 0"]}
    saved = SavedResults.from_evaluation(
        evaluation, provenance=prov, curves=metric_curves(source, run, queries, evaluate=evaluate),
        judged=judged_section(source, run, queries), run_file=run_file_name(run))
    return Outcome(run=run, evaluation=evaluation, saved=saved)


def _outcome(ds: Dataset, run: Run, specs: Sequence[MetricSpec], evaluation: Evaluation, *,
             types: Mapping[str, str | None], curves: Mapping[str, Any], provenance: Mapping[str, Any],
             sections: Mapping[str, Any], notes: Sequence[str]) -> Outcome:
    """The saved form of a scored run: provenance, the diagnosis sections, the drill-down's grades and
    passages, and the warnings a person should read before trusting the numbers."""
    prov: dict[str, Any] = {
        "dataset": {"name": ds.name, "lang": ds.lang, **_jsonable(ds.meta),
                    "n_queries": len(ds.queries), "n_documents": len(ds.corpus)},
        **provenance,
        "metrics": [s.key for s in specs],
        **run_environment(),  # version, Python, machine, command, time: finegrain.machine
    }
    prov.setdefault("top_k", None)
    errors = error_section(ds, run)  # error analysis: see error_section below
    body: dict[str, Any] = {
        "errors": errors,
        "taxonomy": taxonomy_section(ds, run),  # DuReader Table 9 error types: see taxonomy_section
        "judged": judged_section(ds.qrels, run, list(ds.queries),  # grades of the top k: the report's drill-down
                                 fully_judged=bool(ds.meta.get("fully_judged", False))),
        "passages": passages_section(ds, run, errors),  # the texts the drill-down lists
        **sections,
        "run_file": run_file_name(run),  # run.trec, or run.jsonl for ids TREC cannot hold: see save_run
    }
    warnings = _warnings(ds, run) + list(notes)
    retriever = prov.get("retriever") or {}
    in_sample = in_sample_warning(str(retriever.get("name")), retriever, ds.name)
    if in_sample is not None:
        warnings.append(in_sample)
    trained_on_eval = transductive_models(retriever, ds.name)
    if trained_on_eval:
        prov["transductive"] = {"dataset": ds.name, "models": trained_on_eval}
        warnings.append(
            f"TRANSDUCTIVE: {', '.join(trained_on_eval)} was trained on the passages of {ds.name} "
            "(label-free); these results are not zero-shot")
    prov["warnings"] = warnings
    saved = SavedResults.from_evaluation(
        evaluation, queries={q.id: {"text": q.text, "type": types[q.id]} for q in ds.queries.values()},
        provenance=prov, curves=curves, **body)
    return Outcome(run=run, evaluation=evaluation, saved=saved)


def _check_source(exp: Experiment) -> None:
    """A retriever or a run, not both, not neither; a run has no options to set or tune."""
    if (exp.retriever is None) == (exp.run is None):
        raise FinegrainError("an experiment scores a retriever or a run made elsewhere, "
                             + ("not both" if exp.run is not None else "and neither was given"),
                             "give -r NAME or --run FILE (one of them)")
    if exp.run is None:
        return
    if exp.retriever_options:
        raise FinegrainError("--set sets a retriever's options, and a run file has none", "leave --set out")
    if exp.cv is not None:
        raise FinegrainError("--cv chooses a retriever's options by cross-validation, and a run file has none",
                             "leave --cv out (finegrain fuse --cv chooses fusion weights of run files)")


def _parse_cv(exp: Experiment, engine: Engine | None) -> Any:
    if exp.cv is None:
        return None

    spec = parse_cv(exp.cv)
    if engine is not None and engine.kind != "local":
        raise FinegrainError("--cv runs in this process only", "drop --engine ray (or --cv)")
    assert exp.retriever is not None  # _check_source: --cv with a run file is refused there
    parts = part_tunables(exp.retriever, exp.retriever_options) if spec.tune_parts else {}
    if not tunables(exp.retriever, exp.retriever_options) and not any(parts.values()):
        raise nothing_to_tune(exp.retriever, exp.retriever_options)
    return spec


def _parse_sweep(text: str | None) -> Any:
    if text is None:
        return None

    return parse_sweep(text)


def in_sample_warning(name: str, config: Mapping[str, Any], dataset: str) -> str | None:
    """The warning for a retriever whose fixed settings were chosen on ``dataset``'s own queries
    (its config's ``tuned_on``, e.g. ``hybrid-use-k10`` on capretrieval/zh); None otherwise."""
    tuned = config.get("tuned_on") or {}
    if tuned.get("dataset") != dataset:
        return None
    return (f"IN-SAMPLE: {name}'s settings were chosen on {dataset}'s queries ({tuned.get('method', 'see tuned_on')}); "
            "its score here is optimistic: report the cross-validated figure instead")


def transductive_models(config: Any, dataset: str) -> list[str]:
    """The model folders named in a retriever's configuration (any ``"path"``) that ``finegrain train``
    trained on ``dataset``'s passages (``finegrain gen-queries --pool-from-eval-corpus``)."""

    found: list[str] = []
    stack = [config]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            path = node.get("path")
            if isinstance(path, str) and path not in found and dataset in transductive_datasets(path):
                found.append(path)
            stack.extend(v for v in node.values() if isinstance(v, (Mapping, list, tuple)))
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
    return found


def _warnings(ds: Any, run: Any) -> list[str]:
    """What a person should know before trusting the numbers (printed by ``finegrain eval``)."""
    out = []
    if len(ds.corpus) and not any(d.text.strip() or d.title.strip() for d in ds.corpus.values()):
        out.append(
            f"no document of {ds.name} has text, so a text retriever finds nothing and every ranking metric is 0; "
            "this dataset needs a retriever over its other fields (a PhotoBench album: 'finegrain album eval')"
        )
    elif run.n_entries == 0:
        out.append("the retriever returned nothing for any query: every ranking metric is 0")
    choice = ds.meta.get("qrels_choice")  # a BEIR folder with several qrels splits, none chosen
    if choice:
        out.append(str(choice))
    return out


def _split_warnings(split: Any, ds: Any) -> list[str]:
    if split is None:
        return []
    missing = len(split.members - set(ds.queries))
    if not missing:
        return []
    return [f"{missing} of the {len(split.members)} query ids in {split.path} are not queries of {ds.name}; "
            "they are in no group"]


CURVE_KS = (1, 2, 3, 5, 10, 20, 50, 100)
CURVE_FAMILIES = ("ndcg", "recall", "hit_rate")


def metric_curves(qrels: Any, run: Any, queries: list[str], *, evaluate: Any = None) -> dict[str, dict[str, float | None]]:
    """Mean of each curve family at every k of :data:`CURVE_KS` (for metric-vs-k plots); ``evaluate``:
    the function computing them (default :func:`finegrain.evaluate.evaluate`; an engine's on Ray)."""
    if evaluate is None:
        evaluate = partial(evaluate_locally, warn=False)

    specs = [f"{f}@{k}" for f in CURVE_FAMILIES for k in CURVE_KS]
    agg = evaluate(qrels, run, specs, queries=queries).aggregate()
    return {f: {str(k): agg[f"{f}@{k}"] for k in CURVE_KS} for f in CURVE_FAMILIES}


def _jsonable(meta: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in meta.items():
        if isinstance(v, (str, int, float, bool)) or v is None:
            out[k] = v
        elif isinstance(v, Sequence) and all(isinstance(x, (str, int, float)) for x in v):
            out[k] = list(v)
        else:
            out[k] = str(v)
    return out


# --------------------------------------------------------------------------- error analysis
# The error analysis (finegrain.diagnose.errors). Guarded: it never breaks an eval.

ERRORS_K = 10


def error_section(ds: Any, run: Any, k: int = ERRORS_K) -> dict[str, Any]:
    """``results["errors"]``: the tagged false negatives / positives in the top ``k``.

    Returns ``ErrorAnalysis.to_json_dict()``, or ``{"schema": ..., "skipped": reason}``
    when the run is empty or the analysis fails for any reason (an eval never fails
    because of it).
    """
    schema = "finegrain.errors/1"
    try:
        if run.n_entries == 0:
            return {"schema": schema, "skipped": "the run is empty"}

        analysis = analyse_errors(ds.corpus, ds.queries, ds.qrels, run, lang=ds.lang, k=k,
                                  fully_judged=bool(ds.meta.get("fully_judged", False)))
        return analysis.to_json_dict()
    except Exception as e:  # noqa: BLE001 - a diagnosis must never break an evaluation
        return {"schema": schema, "skipped": f"error analysis failed: {type(e).__name__}: {e}"}


def judged_section(qrels: Any, run: Any, queries: Sequence[str], *, k: int = ERRORS_K, rel: int = 1,
                   fully_judged: bool = False) -> dict[str, Any]:
    """``results["judged"]`` (:class:`~finegrain.results.saved.Judged`): the qrels grades of the run's top ``k``
    per query, and each query's number of relevant documents, so a report can show graded ranked lists."""
    grades: dict[str, dict[str, int]] = {}
    n_relevant: dict[str, int] = {}
    for qid in queries:
        judged = qrels[qid] if qid in qrels else {}
        n_relevant[qid] = sum(1 for g in judged.values() if g >= rel)
        top = run.ranked(qid, k) if qid in run else []
        grades[qid] = {d: int(judged[d]) for d in top if d in judged}
    return {"k": k, "rel": rel, "fully_judged": fully_judged, "grades": grades, "n_relevant": n_relevant}


def passages_section(ds: Dataset, run: Run, errors: Mapping[str, Any], *, k: int = ERRORS_K,
                     chars: int = PASSAGE_CHARS) -> dict[str, Any]:
    """``results["passages"]`` (:class:`~finegrain.results.passages.PassagesSection`): the text, cut to ``chars``,
    of each passage the drill-down lists: the run's top ``k`` of every query and the missed relevant passages
    the error analysis names (``errors``, the saved section). A title comes before its text."""
    wanted: dict[str, None] = {}
    for qid in ds.queries:
        if qid in run:
            wanted.update(dict.fromkeys(run.ranked(qid, k)))
    for record in (errors.get("per_query") or {}).values():
        wanted.update(dict.fromkeys(item["doc_id"] for item in record.get("false_negatives") or ()))
    text: dict[str, str] = {}
    for doc_id in wanted:
        doc = ds.corpus.get(doc_id)
        body = "" if doc is None else " — ".join(part for part in (doc.title.strip(), doc.text.strip()) if part)
        if body:
            text[doc_id] = shorten(body, chars)
    return {"chars": chars, "text": text}


# --------------------------------------------------------------------------- error taxonomy


def taxonomy_section(ds: Any, run: Any, k: int = ERRORS_K) -> dict[str, Any]:
    """``results["taxonomy"]``: each failed query tagged with a DuReader Table 9 error type.

    Returns ``Taxonomy.to_json_dict()``, or ``{"schema": ..., "skipped": reason}`` when the
    run is empty, the language has no tagger, or the analysis fails (an eval never fails
    because of it).
    """
    schema = "finegrain.taxonomy/1"
    try:
        if run.n_entries == 0:
            return {"schema": schema, "skipped": "the run is empty"}
        if ds.lang not in ("zh", "en"):
            return {"schema": schema, "skipped": f"no error-taxonomy tagger for language {ds.lang!r} (zh, en)"}

        tax = analyse_taxonomy(ds.corpus, ds.queries, ds.qrels, run, lang=ds.lang, k=k,
                               fully_judged=bool(ds.meta.get("fully_judged", False)))
        return tax.to_json_dict()
    except Exception as e:  # noqa: BLE001 - a diagnosis must never break an evaluation
        return {"schema": schema, "skipped": f"error taxonomy failed: {type(e).__name__}: {e}"}


